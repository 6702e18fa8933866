"""revec simulate: SIMD utilization of the schedules over uniform random trees."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from revec.cli.common import print_json, write_atomic
from revec.errors import RevecError

STRATEGY_CHOICES = ("bfs", "blocked", "reexp", "all")


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from revec.treegen.defaults import DEFAULT_BLOCK_SIZE, DEFAULT_SIMD_WIDTH, DEFAULT_TRIALS

    p = sub.add_parser(
        "simulate", help="simulate the schedules' SIMD utilization on uniform random (N, H) "
                         "trees (paper Sec. 7-8)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Draw T full binary trees uniformly among all trees of N nodes and "
                    "height exactly H,\nrun each schedule (bfs, blocked, reexp) over them "
                    "with SIMD width P, block size B\nand re-expansion threshold R, and "
                    "print per schedule, over the trials:",
        epilog="""columns:
  mean        mean SIMD utilization: the share of tasks run in full vectors, i.e. the
              sum over executed blocks of floor(b/P)*P, divided by the tasks (N)
  std         its standard deviation over the trials
  occupancy   busy lanes among the lanes of issued vectors: sum(b) / sum(ceil(b/P)*P)
  wide share  the share of tasks run in blocks of at least P threads

N must be odd (a full binary tree has 2k+1 nodes) and H between the least height of N
nodes and (N+1)/2.  Example: revec simulate --nodes 10001 --height 20 --trials 1000""")
    p.add_argument("--nodes", type=_int, required=True, metavar="N",
                   help="nodes per tree (odd: full binary trees)")
    p.add_argument("--height", type=_int, required=True, metavar="H",
                   help="exact tree height (a single node has height 1)")
    p.add_argument("--trials", type=_int, default=DEFAULT_TRIALS, metavar="T")
    p.add_argument("--strategy", choices=STRATEGY_CHOICES, default="all")
    p.add_argument("--simd-width", type=_int, default=DEFAULT_SIMD_WIDTH, metavar="P")
    p.add_argument("--block-size", type=_int, default=DEFAULT_BLOCK_SIZE, metavar="B")
    p.add_argument("--reexp-threshold", type=_int, default=None, metavar="R",
                   help="re-expansion threshold (default: P, as Sec. 7.2)")
    p.add_argument("--switch", choices=("whole", "split"), default="whole",
                   help="reading of the bfs -> blocked switch: 'whole' (DESIGN.md: the "
                        "next block of >= B threads runs in blocked mode) or 'split' (its "
                        "spawn-index groups run as child blocks; an alternative reading, not the runtime's)")
    p.add_argument("--seed", type=_int, default=0, metavar="S")
    p.add_argument("--workers", type=_int, default=None,
                   help="threads (default: one per core); results do not depend on it")
    p.add_argument("--sweep", action="append", default=[], metavar="KEY=VALUES",
                   help="sweep a parameter on Dask, e.g. height=14,20,28 or "
                        "block-size=64:512:64 (repeatable: cartesian product)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask scheduler of an existing cluster (default: a local cluster)")
    p.add_argument("--output", "-o", default=None, metavar="FILE",
                   help="also write the JSON result to FILE (its directory must exist)")
    p.add_argument("--mkdir", action="store_true",
                   help="create the missing parent directories of --output")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _strategies(name: str) -> list[str]:
    return ["bfs", "blocked", "reexp"] if name == "all" else [name]


def run(args: argparse.Namespace) -> int:
    if args.output:  # checked before the (long) simulation, not after
        from revec.cli.common import output_file

        output_file(args.output, "--output", mkdir=args.mkdir)
    if args.sweep:
        return run_sweep_cmd(args)
    from revec.treegen.simulator import named_settings, simulate

    if args.workers is not None and args.workers < 1:
        raise RevecError(f"--workers must be at least 1, got {args.workers}")
    settings = named_settings(_strategies(args.strategy), args.simd_width, args.block_size,
                              args.reexp_threshold, args.switch)
    progress = not args.no_progress and sys.stderr.isatty()
    from revec.treegen.sampler import tables_for

    t_tables = time.perf_counter()
    tables_for(args.nodes, args.height)  # validates (n, h); exact counts, cached
    table_seconds = time.perf_counter() - t_tables
    t0 = time.perf_counter()
    result = simulate(args.nodes, args.height, settings, trials=args.trials, seed=args.seed,
                      workers=args.workers, progress=progress)
    seconds = time.perf_counter() - t0
    doc: dict[str, Any] = {
        "trials": result.trials, "nodes": result.nodes, "height": result.height,
        "seed": result.seed, "simd_width": args.simd_width, "block_size": args.block_size,
        "reexp_threshold": settings[0].reexp_threshold, "switch": args.switch,
        "seconds": seconds, "table_seconds": table_seconds,
        "trials_per_second": result.trials / seconds if seconds > 0 else None,
        "strategies": result.summary(),
    }
    if args.output:
        import json

        write_atomic(args.output, json.dumps(doc, indent=2) + "\n")
    if args.json:
        print_json(doc)
        return 0
    print(f"{result.trials} trials of uniform trees with {result.nodes} nodes and height "
          f"{result.height} (seed {result.seed}); P={args.simd_width} B={args.block_size} "
          f"R={settings[0].reexp_threshold}")
    print(f"{'strategy':<10}{'mean':>10}{'std':>10}{'occupancy':>12}{'wide share':>12}")
    for name, s in doc["strategies"].items():
        print(f"{name:<10}{s['mean']:>10.4f}{s['std']:>10.4f}{s['occupancy_mean']:>12.4f}"
              f"{s['wide_share_mean']:>12.4f}")
    print(f"{seconds:.2f} s ({result.trials / seconds:.0f} trials/s), "
          f"tables {table_seconds:.2f} s")
    return 0


def run_sweep_cmd(args: argparse.Namespace) -> int:
    from revec.treegen.sweep import grid_points, parse_sweep, run_sweep

    sweep = parse_sweep(args.sweep)
    base = {"nodes": args.nodes, "height": args.height, "simd-width": args.simd_width,
            "block-size": args.block_size, "reexp-threshold": args.reexp_threshold}
    points = grid_points(base, sweep, _strategies(args.strategy), args.trials, args.seed,
                         switch=args.switch)
    t0 = time.perf_counter()
    results = run_sweep(points, scheduler=args.scheduler, workers=args.workers,
                        progress=not args.no_progress and sys.stderr.isatty())
    seconds = time.perf_counter() - t0
    rows: list[dict[str, Any]] = []
    for r in results:
        p = r.point
        rows.append({
            "nodes": p.nodes, "height": p.height, "trials": p.trials, "seed": p.seed,
            "strategies": {s.strategy: {"mean": r.mean(k), "std": r.std(k),
                                        "block_size": s.block_size,
                                        "reexp_threshold": s.reexp_threshold,
                                        "simd_width": s.simd_width,
                                        "occupancy_mean": float(r.occupancy[:, k].mean()),
                                        "wide_share_mean": float(r.wide_share[:, k].mean())}
                           for k, s in enumerate(p.settings)},
        })
    doc = {"sweep": {k: v for k, v in sweep.items()}, "seconds": seconds, "points": rows}
    if args.output:
        import json

        write_atomic(args.output, json.dumps(doc, indent=2) + "\n")
    if args.json:
        print_json(doc)
        return 0
    for row, r in zip(rows, results):
        s0 = r.point.settings[0]
        head = (f"n={row['nodes']} h={row['height']} P={s0.simd_width} B={s0.block_size} "
                f"R={s0.reexp_threshold}:")
        body = "  ".join(f"{k} {v['mean']:.4f}±{v['std']:.4f}"
                         for k, v in row["strategies"].items())
        print(f"{head} {body}")
    total = sum(p.trials for p in points)
    print(f"{seconds:.2f} s ({total / seconds:.0f} trials/s)")
    return 0

"""revec bench [NAMES...]: the benchmark suite (the paper's eight programs) and the other
registered benchmarks (e.g. ``compaction``); writes reports under reports/bench/."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from revec import bench
from revec.cli.common import print_json
from revec.errors import RevecError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from revec.bench.presets import BENCHMARKS, SIZES

    p = sub.add_parser(
        "bench", help="run the benchmark suite and write reports/bench/",
        description="Run the paper's benchmarks (default: all eight) against their "
                    "baselines, sweep block sizes and write reports/bench/ (see "
                    "docs/benchmarks.md).  Other benchmarks: "
                    + ", ".join(n for n in bench.names() if n not in BENCHMARKS) + ".")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"benchmarks to run (default: the suite, {', '.join(BENCHMARKS)})")
    p.add_argument("--size", default=None,
                   help=f"suite: one of {'|'.join(SIZES)} (default: default); compaction: "
                        "comma-separated element counts, e.g. 16K,1M")
    p.add_argument("--repeats", type=int, default=None,
                   help="timed runs per measured configuration (medians are reported; "
                        "suite default 5)")
    p.add_argument("--max-memory", default=None, metavar="BYTES",
                   help="memory budget of a run's thread frames, e.g. 8G (default: half of "
                        "the machine's memory); runs over it are recorded as stopped")
    p.add_argument("--block-sizes", default=None, metavar="LIST",
                   help="suite: block sizes to sweep on both back ends, e.g. 16,256,4096 "
                        "(default: the sweep of docs/benchmarks.md)")
    p.add_argument("--backends", default="c,numba", metavar="LIST",
                   help="suite: back ends to run (default: c,numba)")
    p.add_argument("--workers", default=None, metavar="LIST",
                   help="suite: measure these worker counts (e.g. 1,2) against plain C and "
                        "its OpenMP-tasks peer instead of the one-core sweep; writes "
                        "workers.md (default: one worker, the one-core sweep)")
    p.add_argument("--reports-dir", default="reports", help="where reports go (default: reports)")
    p.add_argument("--no-report", action="store_true", help="measure only, write no files")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--list", action="store_true",
                   help="list the registered benchmarks besides the suite and exit")
    p.set_defaults(func=run)


def _int_list(text: str, what: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise RevecError(f"{what}: expected comma-separated integers, got {text!r}") from None
    if not vals or any(v < 1 for v in vals):
        raise RevecError(f"{what}: expected positive integers, got {text!r}")
    return vals


def run(args: argparse.Namespace) -> int:
    from revec.bench.presets import BENCHMARKS, SIZES

    if args.list:                 # the registered benchmarks besides the suite
        for name in bench.names():
            print(name)
        return 0
    if args.repeats is not None and args.repeats < 1:
        raise RevecError("--repeats must be at least 1")
    names = args.names or list(BENCHMARKS)
    suite_names = [n for n in names if n in BENCHMARKS]
    others = {n: bench.get_runner(n) for n in names if n not in BENCHMARKS}  # unknown: fail
    if args.workers is not None:
        return _run_workers(args, suite_names)
    records = _run_suite(args, suite_names, SIZES) if suite_names else []
    results: dict[str, object] = {}
    if others:
        size = None if args.size in SIZES else args.size
        options = bench.BenchOptions(size=size, reports_dir=Path(args.reports_dir),
                                     repeats=args.repeats, progress=not args.no_progress,
                                     write_report=not args.no_report)
        results = {name: runner(options) for name, runner in others.items()}
    if args.json:
        # the suite: a list with one record per benchmark; other benchmarks: {name: results}
        if results and records:
            print_json({"suite": records, **results})
        else:
            print_json(records if records else results)
    return 0


def _run_workers(args: argparse.Namespace, names: list[str]) -> int:
    from revec.bench.suite import suite_dir
    from revec.bench.workers_table import run_workers_table
    from revec.runtime.memory import default_budget, parse_size

    workers = _int_list(args.workers, "--workers")
    size = args.size or "default"
    budget = default_budget() if args.max_memory is None else parse_size(args.max_memory)
    out_dir = None if args.no_report else suite_dir(Path(args.reports_dir), size)
    recs = run_workers_table(names, size, workers, args.repeats or 5, budget, out_dir,
                             progress=not args.no_progress)
    if args.json:
        print_json(recs)
    elif out_dir is not None:
        print(out_dir / "workers.md")
    return 0


def _run_suite(args: argparse.Namespace, names: list[str], sizes: tuple[str, ...]
               ) -> list[dict[str, object]]:
    from dataclasses import replace

    from revec.bench.suite import run_suite, suite_dir
    from revec.bench.sweep import SweepPlan
    from revec.runtime.memory import default_budget, parse_size

    size = args.size or "default"
    if size not in sizes:
        raise RevecError(f"unknown size {size!r} for the benchmark suite; expected one of "
                         f"{', '.join(sizes)}")
    if len(set(names)) != len(names):
        raise RevecError("a benchmark is named twice")
    plan = SweepPlan()
    if args.repeats is not None:
        plan = replace(plan, repeats=args.repeats)
    if args.block_sizes is not None:
        bs = _int_list(args.block_sizes, "--block-sizes")
        plan = replace(plan, c_sizes=bs, numba_sizes=bs, scalar_sizes=bs)
    backends = tuple(b.strip() for b in args.backends.split(",") if b.strip())
    if not backends or any(b not in ("c", "numba") for b in backends) or \
            len(set(backends)) != len(backends):
        raise RevecError(f"--backends: expected c and/or numba, got {args.backends!r}")
    plan = replace(plan, backends=backends)
    budget = default_budget() if args.max_memory is None else parse_size(args.max_memory)
    out_dir = suite_dir(Path(args.reports_dir), size)
    recs = run_suite(names, size, plan, out_dir, budget, progress=not args.no_progress,
                     write=not args.no_report)
    if not args.no_report and not args.json:
        print(out_dir / "README.md")
    return json.loads(json.dumps(recs, default=_plain))


def _plain(obj: object) -> object:
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(type(obj).__name__)

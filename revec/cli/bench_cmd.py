"""revec bench [NAMES...]: the benchmark suite (the paper's eight programs) and the other
registered benchmarks (e.g. ``compaction``); writes results and reports under ``--out``
(default ./reports), never replacing stored results without ``--overwrite``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from revec import bench
from revec.cli.common import add_plan_options, plan_options, print_json
from revec.errors import RevecError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from revec.bench.presets import BENCHMARKS, SIZES

    p = sub.add_parser(
        "bench", help="run the benchmark suite and write reports/bench/",
        description="Run the paper's benchmarks (default: all eleven: the paper's eight and three with data in tasks) against their "
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
                        "suite default 5; --workers default 9)")
    p.add_argument("--max-memory", default=None, metavar="BYTES",
                   help="memory budget of a run (thread frames, record stacks, per-level statistics and per-worker state), e.g. 8G (default: half of "
                        "the machine's memory); runs over it are recorded as stopped")
    p.add_argument("--block-sizes", default=None, metavar="LIST",
                   help="suite: block sizes to sweep on both back ends, e.g. 16,256,4096 "
                        "(default: the sweep of docs/benchmarks.md)")
    p.add_argument("--backends", default="c,numba", metavar="LIST",
                   help="suite: back ends to run, comma-separated: the compiled ones the "
                        "report's tables show, c and/or numba (default: c,numba)")
    p.add_argument("--workers", default=None, metavar="LIST",
                   help="suite: measure these worker counts (e.g. 1,2) against plain C and "
                        "its OpenMP-tasks peer instead of the one-core sweep; writes "
                        "workers.md (default: one worker, the one-core sweep)")
    p.add_argument("--ablation", action="store_true",
                   help="suite: after each benchmark's sweep, run its best reexp "
                        "configuration (C, and numba if in --backends) with each kernel "
                        "plan technique switched in turn (off where on, on where off), "
                        "interleaved with the techniques as they are; writes ablation.md")
    add_plan_options(p)
    p.add_argument("--out", "--reports-dir", dest="out", default="reports", metavar="DIR",
                   help="where results and reports go: the suite's under DIR/bench (the "
                        "default size) or DIR/bench/SIZE, compaction's in DIR (default: "
                        "./reports, relative to the current directory)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace results already stored under --out (without it, a run "
                        "that would replace stored results, e.g. the committed reports "
                        "of a checkout, stops before measuring)")
    p.add_argument("--no-report", action="store_true", help="measure only, write no files")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--list", action="store_true",
                   help="list every benchmark (the suite's, then the others) and exit")
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
    with plan_options(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from revec.bench.presets import BENCHMARKS, SIZES

    if args.list:                 # the suite's benchmarks, then the others
        for name in BENCHMARKS:
            print(f"{name}  (suite)")
        for name in bench.names():
            if name not in BENCHMARKS:
                print(name)
        return 0
    if args.repeats is not None and args.repeats < 1:
        raise RevecError("--repeats must be at least 1")
    if any(n.endswith(".c") for n in args.names):
        if args.ablation:
            raise RevecError("--ablation measures the suite's benchmarks, not Cilk programs")
        return _run_cilk(args)
    names = args.names or list(BENCHMARKS)
    suite_names = [n for n in names if n in BENCHMARKS]
    others = {n: bench.get_runner(n) for n in names if n not in BENCHMARKS}  # unknown: fail
    if args.ablation and (others or args.workers is not None):
        raise RevecError("--ablation measures the suite's one-core sweep: not with "
                         + ("--workers" if args.workers is not None else
                            f"other benchmarks ({', '.join(others)})"))
    if args.workers is not None:
        return _run_workers(args, suite_names)
    if not args.no_report:
        _refuse_overwrite(args, suite_names, list(others), SIZES)
    records = _run_suite(args, suite_names, SIZES) if suite_names else []
    results: dict[str, object] = {}
    if others:
        size = None if args.size in SIZES else args.size
        options = bench.BenchOptions(size=size, reports_dir=Path(args.out),
                                     repeats=args.repeats, progress=not args.no_progress,
                                     write_report=not args.no_report)
        results = {name: runner(options) for name, runner in others.items()}
        if not args.no_report and not args.json:
            for name in others:
                print(f"{name}: report in {Path(args.out) / f'{name}.md'}")
    if args.json:
        # the suite: a list with one record per benchmark; other benchmarks: {name: results}
        if results and records:
            print_json({"suite": records, **results})
        else:
            print_json(records if records else results)
    return 0


def _run_cilk(args: argparse.Namespace) -> int:
    """``revec bench PROG.c ...``: Cilk C programs against their serial elision and the
    Python spawn/reduce programs (revec.bench.cilk_bench); report OUT/cilk.md."""
    from revec.bench.cilk_bench import DEFAULT_SIZES, corpus_name, measure, render
    from revec.cli.common import output_dir, write_atomic

    if not all(n.endswith(".c") for n in args.names):
        raise RevecError("give either Cilk C programs (.c files) or benchmark names, not both")
    paths = [Path(n) for n in args.names]
    for p in paths:
        if not p.is_file():
            raise RevecError(f"no such file: {p}")
        corpus_name(p)
    size = args.size or "default"
    repeats = args.repeats or 5
    sizes = (_int_list(args.block_sizes, "--block-sizes") if args.block_sizes
             else DEFAULT_SIZES)
    target = None
    if not args.no_report:
        target = output_dir(args.out, "--out", mkdir=True) / "cilk.md"
        if target.exists() and not args.overwrite:
            raise RevecError(f"results are already stored there ({target}); pass --out DIR "
                             "to put this run's results elsewhere, or --overwrite to "
                             "replace them")
    records = [measure(p, size, repeats, sizes) for p in paths]
    if args.json:
        print_json(records)
    if target is not None:
        write_atomic(target, render(records, repeats))
        if not args.json:
            print(f"report: {target}")
    elif not args.json:
        sys.stdout.write(render(records, repeats))
    return 0


def _refuse_overwrite(args: argparse.Namespace, suite_names: list[str], others: list[str],
                      sizes: tuple[str, ...]) -> None:
    """Stop before measuring if the run would replace stored results without --overwrite."""
    from revec.bench.records import RESULTS_DIR, suite_dir

    if args.overwrite:
        return
    out = Path(args.out)
    found: list[Path] = []
    if suite_names:
        size = args.size or "default"
        if size in sizes:
            d = suite_dir(out, size) / RESULTS_DIR
            found += [d / f"{n}.json" for n in suite_names if (d / f"{n}.json").exists()]
    found += [out / f"{n}.md" for n in others if (out / f"{n}.md").exists()]
    if found:
        shown = ", ".join(str(f) for f in found[:3]) + (" ..." if len(found) > 3 else "")
        raise RevecError(f"results are already stored there ({shown}); pass --out DIR to "
                         "put this run's results elsewhere, or --overwrite to replace them")


WORKERS_REPEATS = 9


def _run_workers(args: argparse.Namespace, names: list[str]) -> int:
    from revec.bench.records import suite_dir
    from revec.bench.workers_table import run_workers_table
    from revec.runtime.memory import default_budget, parse_size
    from revec.runtime.workers import check_workers

    workers = _int_list(args.workers, "--workers")
    for n in workers:
        check_workers(n, "--workers")
    size = args.size or "default"
    budget = default_budget() if args.max_memory is None else parse_size(args.max_memory)
    out_dir = None if args.no_report else suite_dir(Path(args.out), size)
    # 9 rounds: on a shared 2-core VM single runs of 0.05-0.2 s spread by 20-30% within one
    # bench run (every run is kept in workers.json), and the table reports ratios of
    # medians
    recs = run_workers_table(names, size, workers, args.repeats or WORKERS_REPEATS, budget,
                             out_dir, progress=not args.no_progress, show=not args.json)
    if args.json:
        print_json(recs)
    elif out_dir is not None:
        print(out_dir / "workers.md")
    return 0


def _run_suite(args: argparse.Namespace, names: list[str], sizes: tuple[str, ...]
               ) -> list[dict[str, object]]:
    from dataclasses import replace

    from revec.bench.records import suite_dir
    from revec.bench.suite import run_suite
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
    from revec.backends import registry
    from revec.bench.suite_report import BACKENDS as REPORTED

    # the compiled back ends the suite's tables show (the numpy back end is the plan's
    # reference interpreter, orders of magnitude slower: not a benchmark subject)
    known = [b for b in registry.names() if b in REPORTED]
    backends = tuple(b.strip() for b in args.backends.split(",") if b.strip())
    if not backends or any(b not in known for b in backends) or \
            len(set(backends)) != len(backends):
        listed = ", ".join(known[:-1]) + " and/or " + known[-1] if len(known) > 1 \
            else known[0]
        raise RevecError(f"--backends: expected {listed}, got {args.backends!r}")
    plan = replace(plan, backends=backends, ablation=args.ablation)
    budget = default_budget() if args.max_memory is None else parse_size(args.max_memory)
    out_dir = suite_dir(Path(args.out), size)
    recs = run_suite(names, size, plan, out_dir, budget, progress=not args.no_progress,
                     write=not args.no_report)
    plain = json.loads(json.dumps(recs, default=_plain))
    if not args.no_report and not args.json:
        print(f"suite: results in {out_dir / 'results'}, report {out_dir / 'README.md'}")
    elif not args.json and plain:
        # measured only (--no-report): Table 2 of this run on standard output
        from revec.bench.suite_report import table2

        print("\n".join(table2(plain)))
        if args.ablation:
            from revec.bench.ablation_report import ablated, render_text

            if ablated(plain):
                print("\n" + render_text(plain), end="")
    return plain


def _plain(obj: object) -> object:
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(type(obj).__name__)

"""revec bench [NAMES...]: run benchmarks and write their reports (default: all)."""

from __future__ import annotations

import argparse
from pathlib import Path

from revec import bench
from revec.cli.common import print_json
from revec.errors import RevecError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("bench", help="run benchmarks and write their reports under reports/")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"benchmarks to run (default: all of {', '.join(bench.names())})")
    p.add_argument("--size", default=None,
                   help="problem size, interpreted by each benchmark "
                        "(compaction: comma-separated element counts, e.g. 16K,1M)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timed repetitions per measurement (medians are reported)")
    p.add_argument("--reports-dir", default="reports", help="where reports go (default: reports)")
    p.add_argument("--no-report", action="store_true", help="measure only, write no files")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.list:
        for name in bench.names():
            print(name)
        return 0
    if args.repeats is not None and args.repeats < 1:
        raise RevecError("--repeats must be at least 1")
    names = args.names or bench.names()
    runners = {name: bench.get_runner(name) for name in names}   # unknown names fail first
    options = bench.BenchOptions(size=args.size, reports_dir=Path(args.reports_dir),
                                 repeats=args.repeats, progress=True,
                                 write_report=not args.no_report)
    results = {name: runner(options) for name, runner in runners.items()}
    if args.json:
        print_json(results)
    return 0

"""revec report [TARGET]: tables and figures under reports/.

Each target knows how to build its results (run the experiments) and how to render
them.  ``revec report TARGET`` builds and renders that target; ``revec report`` alone
re-renders every target whose stored results exist.  Other targets (e.g. ``bench``)
are added to :data:`TARGETS`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from revec.errors import RevecError


@dataclass(frozen=True)
class ReportTarget:
    build: Callable[[argparse.Namespace, Path], list[Path]]  # run + render
    render_stored: Callable[[Path], list[Path]]  # render from stored results
    stored: Callable[[Path], bool]  # do stored results exist?


def _treegen_build(args: argparse.Namespace, out: Path) -> list[Path]:
    from revec.treegen.report import build

    trials = args.trials if args.trials is not None else 100_000
    if trials < 10:
        raise RevecError(f"--trials must be at least 10, got {trials}")
    return build(out, trials, scheduler=args.scheduler,
                 progress=sys.stderr.isatty() and not args.no_progress)


def _treegen_render(out: Path) -> list[Path]:
    from revec.treegen.report import render_stored

    return render_stored(out)


def _treegen_stored(out: Path) -> bool:
    from revec.treegen.report import RESULTS

    return (out / RESULTS).is_file()


def _bench_build(args: argparse.Namespace, out: Path) -> list[Path]:
    # the suite is measured by `revec bench`; the report target only re-renders it
    if not _bench_stored(out):
        raise RevecError(f"no stored benchmark results under {out}; run 'revec bench' "
                         "(e.g. 'revec bench fib --size quick') first")
    return _bench_render(out)


def _bench_render(out: Path) -> list[Path]:
    from revec.bench.records import stored_dirs
    from revec.bench.suite_report import render

    return [f for d in stored_dirs(out) for f in render(d)]


def _bench_stored(out: Path) -> bool:
    from revec.bench.records import stored_dirs

    return bool(stored_dirs(out))


TARGETS: dict[str, ReportTarget] = {
    "treegen": ReportTarget(_treegen_build, _treegen_render, _treegen_stored),
    "bench": ReportTarget(_bench_build, _bench_render, _bench_stored),
}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("report", help="tables and figures in reports/")
    p.add_argument("target", nargs="?", default=None,
                   help=f"one of {', '.join(TARGETS)} (default: re-render every target "
                        "whose stored results exist)")
    p.add_argument("--trials", type=int, default=None,
                   help="treegen: largest trial count (Fig. 18; depth sweeps use 1/20 of "
                        "it); default 100000, use e.g. 2000 for a quick version")
    p.add_argument("--reports-dir", default="reports")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask scheduler for the simulations (default: a local cluster)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = Path(args.reports_dir)
    if args.target is not None:
        if args.target not in TARGETS:
            raise RevecError(f"unknown report target {args.target!r}; expected one of "
                             f"{', '.join(TARGETS)}")
        files = TARGETS[args.target].build(args, root / args.target)
    else:
        files = []
        for name, t in TARGETS.items():
            if t.stored(root / name):
                files += t.render_stored(root / name)
        if not files:
            raise RevecError("no stored results to report; run e.g. "
                             "'revec report treegen --trials 2000' first")
    for f in files:
        print(f)
    return 0

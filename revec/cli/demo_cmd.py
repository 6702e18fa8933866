"""revec demo: a few task programs through every variant, with results and statistics."""

from __future__ import annotations

import argparse
from importlib import resources

from revec.api import run_program
from revec.backends import registry

DEMOS = (("fib.py", "fib", (24,)), ("nqueens.py", "nqueens", (9,)),
         ("pathsum.py", "pathsum", (10,)))


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("demo", help="run small programs through every variant")
    p.add_argument("--block-size", type=int, default=256, metavar="B")
    p.add_argument("--backend", choices=registry.choices(), default="numba",
                   help="back end of the compiled variants (default: numba); seq is the "
                        "plain Python program")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = resources.files("revec.demos")
    print(f"seq: the plain recursive Python program; bfs, blocked, reexp: compiled by the "
          f"{args.backend} back end (B={args.block_size})")
    header = (f"{'program':<22} {'variant':<8} {'back end':<9} {'tasks':>9} {'util':>6} "
              f"{'reexp':>6} {'peak':>7} {'seconds':>9}  result")
    print(header)
    print("-" * (len(header) + 20))
    for fname, task, targs in DEMOS:
        path = str(root / fname)
        reference = None
        for variant in ("seq", "bfs", "blocked", "reexp"):
            backend = "python" if variant == "seq" else args.backend
            r = run_program(path, task, targs, variant=variant, block_size=args.block_size,
                            backend="numba" if variant == "seq" else args.backend)
            shown = ", ".join(f"{k}={_fmt(v)}" for k, v in r.reducers.items())
            if reference is None:
                reference = r.reducers
            ok = _same(reference, r.reducers)
            s = r.stats
            stats = ("" if variant == "seq" else
                     f"{s.tasks:>9} {s.utilization:>6.3f} {s.reexpansions:>6} {s.peak_live:>7}")
            print(f"{task + str(targs):<22} {variant:<8} {backend:<9} {stats:>31} "
                  f"{s.seconds:>9.4f}  {shown}{'  MISMATCH' if not ok else ''}")
            if not ok:
                return 1
    print("\nAll variants agree with the sequential reference (floats: rel. 1e-9).")
    return 0


def _fmt(v: object) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _same(a: dict[str, object], b: dict[str, object]) -> bool:
    import math

    for k, x in a.items():
        y = b[k]
        if isinstance(x, float) and isinstance(y, float):
            if not math.isclose(x, y, rel_tol=1e-9, abs_tol=0.0) and x != y:
                return False
        elif x != y:
            return False
    return True

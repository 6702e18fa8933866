"""The Cilk C corpus (``benchmarks/cilk/``): the suite's programs as a Cilk programmer
writes them (return values, ``cilk_sync``), with the same inputs and answers as the
Python spawn/reduce programs of ``benchmarks/``.

A C task has no parameter defaults: its root arguments are the preset's (the leading
parameters of the Python task) followed by zeros, which are the Python defaults of
every remaining parameter (row, masks, running weight and value, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from revec.bench.presets import BENCH_DIR, preset
from revec.errors import RevecError

CILK_DIR = BENCH_DIR / "cilk"
# name -> (number of parameters of the C task, the Python reducer its result equals)
CORPUS: dict[str, tuple[int, str]] = {
    "fib": (1, "count"),
    "nqueens": (5, "solutions"),
    "knapsack": (5, "best"),
    "parentheses": (3, "count"),
    "binomial": (2, "count"),
    "uts": (13, "nodes"),
}


def cilk_path(name: str) -> Path:
    if name not in CORPUS:
        raise RevecError(f"no Cilk C program named {name!r}; expected one of "
                         f"{', '.join(CORPUS)}")
    return CILK_DIR / f"{name}.c"


def cilk_args(name: str, size: str) -> tuple[Any, ...]:
    """The C task's root arguments for preset ``size`` of benchmark ``name``."""
    count = CORPUS[name][0]
    args = tuple(preset(name, size).args.values())
    return args + (0,) * (count - len(args))

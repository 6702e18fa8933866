"""Benchmark sizes: the root arguments of every benchmark under each preset.

``PRESETS[name][size]`` is a :class:`Preset`: the root arguments by parameter name, in the
task's parameter order (leading parameters only; the rest take their defaults), and the
reducers that carry the answer.

* ``quick``: seconds under CPython recursion (the sequential reference), for the tests;
* ``default``: about 0.2-0.6 s for the plain recursive C baseline on this project's
  machine (AMD EPYC Zen 3, 2 cores), sized so that ``revec bench --size default`` (every
  strategy, both back ends, a block-size sweep, medians of 5) fits in 30 minutes; see
  docs/benchmarks.md for the measured times.  (A first target of 1-3 s: fib(44),
  nqueens(15), graphcol(24), knapsack(28), parentheses(18), C(35, 13), minmax after 4
  moves; at those sizes one numba-back-end run took 4-40 s and the suite could not fit);
* ``paper``: the sizes of the paper's Table 1 (Ren et al., TOPC 2019).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from revec.errors import RevecError
from revec.lib.uts_root import uts_root_state

BENCHMARKS: tuple[str, ...] = (
    "fib", "nqueens", "uts", "graphcol", "knapsack", "parentheses", "binomial", "minmax",
    # the paper's original forms of nqueens (a board array) and knapsack (Cilk-5's
    # pruning), and a reduction over a runtime array (Cowichan's shape): data in tasks
    "nqueens_board", "knapsack_bb", "findmax",
)
SIZES: tuple[str, ...] = ("quick", "default", "paper")
BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"

# The reducers whose final values are the benchmark's answer (all of each program's).
ANSWER_REDUCERS: dict[str, tuple[str, ...]] = {
    "fib": ("count",),
    "nqueens": ("solutions",),
    "uts": ("nodes", "leaves", "depth"),
    "graphcol": ("colourings",),
    "knapsack": ("best",),
    "parentheses": ("count",),
    "binomial": ("count",),
    "minmax": ("xwins", "owins", "draws"),
    "nqueens_board": ("solutions",),
    "knapsack_bb": ("best",),
    "findmax": ("largest",),
}


@dataclass(frozen=True)
class Preset:
    name: str                      # benchmark
    size: str                      # quick / default / paper
    args: dict[str, Any]           # root arguments by parameter name, in parameter order
    note: str = ""                 # what the size is (e.g. "UTS sample tree T3")
    reducers: tuple[str, ...] = field(default=())

    @property
    def path(self) -> Path:
        return program_path(self.name)

    @property
    def task(self) -> str:
        return self.name

    @property
    def root_args(self) -> tuple[Any, ...]:
        return tuple(self.args.values())


# UTS trees (UTS 2.1 sample_trees.sh; see revec.bench.answers.UTS_TREES for the source).
def _uts(t: int, a: int, d: int, b: float, r: int, q: float = 15.0 / 64.0, m: int = 4
         ) -> dict[str, Any]:
    h = uts_root_state(r)
    return {"tree_type": t, "b0": b, "gen_mx": d, "shape": a, "q": q, "m": m,
            "shift_depth": 0.5, "height": 0,
            "h0": h[0], "h1": h[1], "h2": h[2], "h3": h[3], "h4": h[4]}


def _minmax(x_cells: list[tuple[int, int]], o_cells: list[tuple[int, int]]) -> dict[str, Any]:
    x = sum(1 << (4 * r + c) for r, c in x_cells)
    o = sum(1 << (4 * r + c) for r, c in o_cells)
    return {"x": x, "o": o, "x_moves": len(x_cells) == len(o_cells)}


@dataclass(frozen=True)
class RandomArray:
    """A benchmark's input array, drawn on first use (not when the presets load: every
    ``revec`` command reads this module): ``n`` int32 values in ``[low, high)`` from
    NumPy's default generator seeded with ``seed``.  NumPy converts it
    (``np.asarray``), so a run binds it like any array argument."""

    seed: int
    n: int
    low: int = -(2 ** 31)
    high: int = 2 ** 31 - 1

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = _random_array(self.seed, self.n, self.low, self.high)
        return a if dtype is None else a.astype(dtype)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: Any) -> Any:  # (a plain Python run indexes it)
        return np.asarray(self)[index]

    def __str__(self) -> str:
        return f"{self.n} random int32 values (seed {self.seed})"


@functools.lru_cache(maxsize=4)
def _random_array(seed: int, n: int, low: int, high: int) -> np.ndarray:
    a = np.random.default_rng(seed).integers(low, high, n, dtype=np.int32)
    a.setflags(write=False)
    return a


def _knapsack_bb(example: int) -> dict[str, Any]:
    """A Cilk-5 knapsack input's items sorted best value per weight first (as Cilk-5's
    main sorts them), and its capacity."""
    from revec.bench.answers import DATA_DIR, read_knapsack

    cap, items = read_knapsack(DATA_DIR / f"cilk5-example{example}.input")
    items = sorted(items, key=lambda vw: -vw[0] / vw[1])
    return {"values": [v for v, _ in items], "weights": [w for _, w in items], "c": cap}


# Opening moves of the minmax presets, alternately X and O; a preset plays the first k.
MINMAX_OPENING: tuple[tuple[int, int], ...] = (
    (1, 1), (2, 2), (1, 2), (2, 1), (0, 0), (3, 3), (0, 3), (3, 0),
)


def _opening(k: int) -> dict[str, Any]:
    moves = list(MINMAX_OPENING[:k])
    return _minmax(moves[0::2], moves[1::2])


_TABLE: dict[str, dict[str, tuple[dict[str, Any], str]]] = {
    "fib": {
        "quick": ({"n": 18}, "fib(18)"),
        "default": ({"n": 40}, "fib(40)"),
        "paper": ({"n": 45}, "fib(45), Table 1"),
    },
    "nqueens": {
        "quick": ({"n": 8}, "8 queens"),
        "default": ({"n": 14}, "14 queens"),
        "paper": ({"n": 13}, "13 queens, Table 1"),
    },
    "uts": {
        "quick": (_uts(t=1, a=0, d=6, b=4.0, r=0), "UTS default tree (1732 nodes)"),
        "default": (_uts(t=0, a=0, d=6, b=2000.0, r=42, q=0.124875, m=8),
                    "UTS sample tree T3 (binomial, 4.1M nodes)"),
        "paper": (_uts(t=0, a=0, d=6, b=2000.0, r=42, q=0.124875, m=8),
                  "UTS sample tree T3, Table 1"),
    },
    "graphcol": {
        "quick": ({"n": 11}, "first 11 vertices of the 38-vertex graph"),
        "default": ({"n": 20}, "first 20 vertices of the 38-vertex graph"),
        "paper": ({"n": 38}, "38 vertices, 64 edges, Table 1"),
    },
    "knapsack": {
        "quick": ({"example": 3, "n": 13}, "first 13 items of Cilk-5 example 3"),
        "default": ({"example": 3, "n": 26}, "first 26 items of Cilk-5 example 3"),
        "paper": ({"example": 3, "n": 30}, "Cilk-5 example 3 (\"long\"), no pruning, Table 1"),
    },
    "parentheses": {
        "quick": ({"n": 10}, "10 pairs"),
        "default": ({"n": 16}, "16 pairs"),
        "paper": ({"n": 19}, "19 pairs, Table 1"),
    },
    "binomial": {
        "quick": ({"n": 16, "k": 7}, "C(16, 7)"),
        "default": ({"n": 30, "k": 13}, "C(30, 13)"),
        "paper": ({"n": 36, "k": 13}, "C(36, 13), Table 1"),
    },
    "minmax": {
        "quick": (_opening(8), "4x4 tic-tac-toe after 8 opening moves (8 empty cells)"),
        "default": (_opening(5), "4x4 tic-tac-toe after 5 opening moves (11 empty cells)"),
        "paper": (_opening(4), "4x4 tic-tac-toe after 4 opening moves (12 empty cells); "
                               "the full game (~10^13 games) is out of reach"),
    },
    "nqueens_board": {
        "quick": ({"n": 7}, "7 queens, board array"),
        "default": ({"n": 12}, "12 queens, board array"),
        "paper": ({"n": 13}, "13 queens, board array (the paper's nqueens), Table 1"),
    },
    "knapsack_bb": {
        "quick": (_knapsack_bb(1), "Cilk-5 example 1 (3 items), branch and bound"),
        "default": (_knapsack_bb(3), "Cilk-5 example 3 (30 items), branch and bound"),
        "paper": (_knapsack_bb(3), "Cilk-5 example 3 (30 items) with Cilk-5's pruning"),
    },
    "findmax": {
        "quick": ({"a": RandomArray(2026, 1 << 12), "lo": 0, "hi": 1 << 12},
                  "largest of 4096 random int32 values"),
        "default": ({"a": RandomArray(2026, 1 << 23), "lo": 0, "hi": 1 << 23},
                    "largest of 2^23 random int32 values"),
        "paper": ({"a": RandomArray(2026, 1 << 23), "lo": 0, "hi": 1 << 23},
                  "largest of 2^23 random int32 values (not in the paper)"),
    },
}

PRESETS: dict[str, dict[str, Preset]] = {
    name: {size: Preset(name, size, dict(args), note, ANSWER_REDUCERS[name])
           for size, (args, note) in sizes.items()}
    for name, sizes in _TABLE.items()
}


def program_path(name: str) -> Path:
    """The task program of benchmark ``name`` (``benchmarks/NAME.py``)."""
    check_name(name)
    return BENCH_DIR / f"{name}.py"


def check_name(name: str) -> None:
    if name not in BENCHMARKS:
        raise RevecError(f"no benchmark named {name!r}; expected one of {', '.join(BENCHMARKS)}")


def preset(name: str, size: str) -> Preset:
    """The preset ``size`` of benchmark ``name``."""
    check_name(name)
    if size not in SIZES:
        raise RevecError(f"unknown size {size!r}; expected one of {', '.join(SIZES)}")
    return PRESETS[name][size]

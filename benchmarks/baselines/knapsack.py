"""knapsack baselines: exhaustive "don't take / take" recursion over the first n items of
a Cilk-5 input (no pruning, capacity checked at the leaves: a complete tree)."""

from typing import Any

import numpy as np
from numba import njit

from revec.bench.answers import DATA_DIR, read_knapsack


def load(example: int) -> tuple[int, list[int], list[int]]:
    cap, items = read_knapsack(DATA_DIR / f"cilk5-example{example}.input")
    return cap, [v for v, _ in items], [w for _, w in items]


def knapsack_py(cap: int, values: list[int], weights: list[int], n: int) -> int:
    def rec(i: int, w: int, v: int) -> int:
        if i == n:
            return v if w <= cap else -1
        without = rec(i + 1, w, v)
        with_ = rec(i + 1, w + weights[i], v + values[i])
        return with_ if with_ > without else without

    return rec(0, 0, 0)


@njit(cache=True)
def knapsack_nb(cap: int, values: np.ndarray, weights: np.ndarray, n: int, i: int, w: int,
                v: int) -> int:
    if i == n:
        return v if w <= cap else -1
    without = knapsack_nb(cap, values, weights, n, i + 1, w, v)
    with_ = knapsack_nb(cap, values, weights, n, i + 1, w + weights[i], v + values[i])
    return with_ if with_ > without else without


def python_run(args: dict[str, Any]) -> dict[str, int]:
    cap, values, weights = load(int(args["example"]))
    return {"best": knapsack_py(cap, values, weights, int(args["n"]))}


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    cap, values, weights = load(int(args["example"]))
    best = knapsack_nb(cap, np.array(values, dtype=np.int64), np.array(weights, dtype=np.int64),
                       int(args["n"]), 0, 0, 0)
    return {"best": int(best)}


# Built with -fno-semantic-interposition: the faster of the two builds of knapsack.c
# (see README.md; interleaved medians of 9, 2-core AMD EPYC, gcc 12: 0.543 s -> 0.188 s).
C_FLAGS = ["-fno-semantic-interposition"]

CDEF = """
void knapsack_setup(int capacity, const int *values, const int *weights, int count);
int64_t knapsack(int n, int i, int weight, int value);
"""


def c_setup(ffi: Any, lib: Any, args: dict[str, Any]) -> None:
    cap, values, weights = load(int(args["example"]))
    lib.knapsack_setup(cap, ffi.new("int[]", values), ffi.new("int[]", weights), len(values))


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    return {"best": int(lib.knapsack(int(args["n"]), 0, 0, 0))}

"""knapsack_bb baselines: branch and bound over items sorted by value per unit of weight
(Cilk-5's knapsack algorithm, the best value so far raised at the leaves)."""

from typing import Any

import numpy as np
from numba import njit

from revec.bench.answers import DATA_DIR, read_knapsack


def load(example: int) -> tuple[int, list[int], list[int]]:
    """Capacity, values and weights of a Cilk-5 input, sorted best ratio first."""
    cap, items = read_knapsack(DATA_DIR / f"cilk5-example{example}.input")
    items = sorted(items, key=lambda vw: -vw[0] / vw[1])
    return cap, [v for v, _ in items], [w for _, w in items]


def knapsack_py(values: list[int], weights: list[int], cap: int) -> int:
    best = [-(1 << 62)]
    n = len(values)

    def rec(c: int, i: int, v: int) -> None:
        if c < 0 or c == 0 or i == n:
            if c >= 0 and v > best[0]:
                best[0] = v
            return
        if v + c * values[i] / weights[i] < best[0]:
            return
        rec(c, i + 1, v)
        rec(c - weights[i], i + 1, v + values[i])

    rec(cap, 0, 0)
    return best[0]


@njit(cache=True)
def knapsack_nb(values: np.ndarray, weights: np.ndarray, c: int, i: int, v: int,
                best: np.ndarray) -> None:
    if c < 0 or c == 0 or i == len(values):
        if c >= 0 and v > best[0]:
            best[0] = v
        return
    if v + c * values[i] / weights[i] < best[0]:
        return
    knapsack_nb(values, weights, c, i + 1, v, best)
    knapsack_nb(values, weights, c - weights[i], i + 1, v + values[i], best)


def python_run(args: dict[str, Any]) -> dict[str, int]:
    return {"best": knapsack_py(list(args["values"]), list(args["weights"]), int(args["c"]))}


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    best = np.array([-(1 << 62)], np.int64)
    knapsack_nb(np.asarray(args["values"], np.int64), np.asarray(args["weights"], np.int64),
                int(args["c"]), 0, 0, best)
    return {"best": int(best[0])}


C_FLAGS = ["-fno-semantic-interposition"]

CDEF = """
int64_t knapsack_bb(const int *values, const int *weights, int n, int c);
"""


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    values, weights = list(args["values"]), list(args["weights"])
    return {"best": int(lib.knapsack_bb(ffi.new("int[]", values), ffi.new("int[]", weights),
                                        len(values), int(args["c"])))}

"""nqueens baselines: bitmask backtracking, one call per partial placement."""

from typing import Any

from numba import njit


def nqueens_py(n: int, row: int, cols: int, d1: int, d2: int) -> int:
    if row == n:
        return 1
    total = 0
    free = ~(cols | d1 | d2) & ((1 << n) - 1)
    while free:
        bit = free & -free
        free ^= bit
        total += nqueens_py(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1)
    return total


@njit(cache=True)
def nqueens_nb(n: int, row: int, cols: int, d1: int, d2: int) -> int:
    if row == n:
        return 1
    total = 0
    free = ~(cols | d1 | d2) & ((1 << n) - 1)
    while free:
        bit = free & -free
        free ^= bit
        total += nqueens_nb(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1)
    return total


def python_run(args: dict[str, Any]) -> dict[str, int]:
    return {"solutions": nqueens_py(int(args["n"]), 0, 0, 0, 0)}


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    return {"solutions": int(nqueens_nb(int(args["n"]), 0, 0, 0, 0))}


CDEF = "int64_t nqueens(int n, int row, uint32_t cols, uint32_t d1, uint32_t d2);"


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    return {"solutions": int(lib.nqueens(int(args["n"]), 0, 0, 0, 0))}

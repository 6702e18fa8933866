"""nqueens_board baselines: the Cilk-5 algorithm (a board array copied per child, the
whole board checked by ok()) as plain recursion."""

from typing import Any

import numpy as np
from numba import njit


def ok_py(n: int, a: list[int]) -> bool:
    for i in range(n):
        p = a[i]
        for j in range(i + 1, n):
            q = a[j]
            if q == p or q == p - (j - i) or q == p + (j - i):
                return False
    return True


def nqueens_py(n: int, board: list[int]) -> int:
    if len(board) == n:
        return 1
    total = 0
    for col in range(n):
        child = board + [col]
        if ok_py(len(child), child):
            total += nqueens_py(n, child)
    return total


@njit(cache=True)
def ok_nb(n: int, a: np.ndarray) -> bool:
    for i in range(n):
        p = a[i]
        for j in range(i + 1, n):
            q = a[j]
            if q == p or q == p - (j - i) or q == p + (j - i):
                return False
    return True


@njit(cache=True)
def nqueens_nb(n: int, j: int, a: np.ndarray) -> int:
    if j == n:
        return 1
    total = 0
    b = np.empty(n, np.int8)  # the child's board (Cilk-5: alloca + memcpy)
    for col in range(n):
        b[:j] = a[:j]
        b[j] = col
        if ok_nb(j + 1, b):
            total += nqueens_nb(n, j + 1, b)
    return total


def python_run(args: dict[str, Any]) -> dict[str, int]:
    return {"solutions": nqueens_py(int(args["n"]), [])}


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    n = int(args["n"])
    return {"solutions": int(nqueens_nb(n, 0, np.zeros(n, np.int8)))}


CDEF = "int64_t nqueens_board(int n, int j, const char *a);"


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    n = int(args["n"])
    return {"solutions": int(lib.nqueens_board(n, 0, ffi.new("char[]", max(n, 1))))}

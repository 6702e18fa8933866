"""parentheses baselines: count the completions of a prefix of parentheses."""

from typing import Any

from numba import njit


def parentheses_py(n: int, opened: int, closed: int) -> int:
    if closed == n:
        return 1
    total = 0
    if opened < n:
        total += parentheses_py(n, opened + 1, closed)
    if closed < opened:
        total += parentheses_py(n, opened, closed + 1)
    return total


@njit(cache=True)
def parentheses_nb(n: int, opened: int, closed: int) -> int:
    if closed == n:
        return 1
    total = 0
    if opened < n:
        total += parentheses_nb(n, opened + 1, closed)
    if closed < opened:
        total += parentheses_nb(n, opened, closed + 1)
    return total


def python_run(args: dict[str, Any]) -> dict[str, int]:
    return {"count": parentheses_py(int(args["n"]), 0, 0)}


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    return {"count": int(parentheses_nb(int(args["n"]), 0, 0))}


CDEF = "int64_t parentheses(int n, int opened, int closed);"


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    return {"count": int(lib.parentheses(int(args["n"]), 0, 0))}

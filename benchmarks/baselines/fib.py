"""fib baselines: fib(n) by the doubly recursive definition."""

from typing import Any

from numba import njit


def fib_py(n: int) -> int:
    return n if n < 2 else fib_py(n - 1) + fib_py(n - 2)


@njit(cache=True)
def fib_nb(n: int) -> int:
    if n < 2:
        return n
    return fib_nb(n - 1) + fib_nb(n - 2)


def python_run(args: dict[str, Any]) -> dict[str, int]:
    return {"count": fib_py(int(args["n"]))}


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    return {"count": int(fib_nb(int(args["n"])))}


CDEF = "int64_t fib(int n);"


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    return {"count": int(lib.fib(int(args["n"])))}

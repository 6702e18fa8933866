"""binomial baselines: C(n, k) by Pascal's rule, counting leaves."""

from typing import Any

from numba import njit


def binomial_py(n: int, k: int) -> int:
    if k == 0 or k == n:
        return 1
    return binomial_py(n - 1, k - 1) + binomial_py(n - 1, k)


@njit(cache=True)
def binomial_nb(n: int, k: int) -> int:
    if k == 0 or k == n:
        return 1
    return binomial_nb(n - 1, k - 1) + binomial_nb(n - 1, k)


def python_run(args: dict[str, Any]) -> dict[str, int]:
    return {"count": binomial_py(int(args["n"]), int(args["k"]))}


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    return {"count": int(binomial_nb(int(args["n"]), int(args["k"])))}


CDEF = "int64_t binomial(int n, int k);"


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    return {"count": int(lib.binomial(int(args["n"]), int(args["k"])))}

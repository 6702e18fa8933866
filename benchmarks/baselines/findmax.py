"""findmax baselines: the largest element of an array by recursive halving."""

from typing import Any

import numpy as np
from numba import njit


def findmax_py(a: list[int], lo: int, hi: int) -> int:
    if hi - lo == 1:
        return a[lo]
    mid = lo + (hi - lo) // 2
    left = findmax_py(a, lo, mid)
    right = findmax_py(a, mid, hi)
    return left if left > right else right


@njit(cache=True)
def findmax_nb(a: np.ndarray, lo: int, hi: int) -> int:
    if hi - lo == 1:
        return a[lo]
    mid = lo + (hi - lo) // 2
    left = findmax_nb(a, lo, mid)
    right = findmax_nb(a, mid, hi)
    return left if left > right else right


def python_run(args: dict[str, Any]) -> dict[str, int]:
    return {"largest": int(findmax_py(np.asarray(args["a"]).tolist(), int(args["lo"]),
                                      int(args["hi"])))}


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    return {"largest": int(findmax_nb(np.asarray(args["a"], np.int32), int(args["lo"]),
                                      int(args["hi"])))}


CDEF = "int64_t findmax(const int32_t *a, int64_t lo, int64_t hi);"


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    a = np.ascontiguousarray(args["a"], np.int32)
    ptr = ffi.cast("const int32_t *", ffi.from_buffer(a))
    return {"largest": int(lib.findmax(ptr, int(args["lo"]), int(args["hi"])))}

"""graphcol baselines: backtracking 3-colouring in vertex order, colour classes as
bitmasks, counting the complete colourings of the first n vertices."""

from typing import Any

import numpy as np
from numba import njit

from revec.bench.answers import read_graph


def earlier_masks() -> list[int]:
    """Bitmask of the lower-numbered neighbours of each vertex."""
    nv, edges = read_graph()
    masks = [0] * nv
    for u, v in edges:
        masks[max(u, v)] |= 1 << min(u, v)
    return masks


def graphcol_py(earlier: list[int], n: int) -> int:
    def rec(v: int, red: int, green: int, blue: int) -> int:
        if v == n:
            return 1
        nb = earlier[v]
        bit = 1 << v
        total = 0
        if not red & nb:
            total += rec(v + 1, red | bit, green, blue)
        if not green & nb:
            total += rec(v + 1, red, green | bit, blue)
        if not blue & nb:
            total += rec(v + 1, red, green, blue | bit)
        return total

    return rec(0, 0, 0, 0)


@njit(cache=True)
def graphcol_nb(earlier: np.ndarray, n: int, v: int, red: np.uint64, green: np.uint64,
                blue: np.uint64) -> int:
    if v == n:
        return 1
    nb = earlier[v]
    bit = np.uint64(1) << np.uint64(v)
    total = 0
    if red & nb == 0:
        total += graphcol_nb(earlier, n, v + 1, red | bit, green, blue)
    if green & nb == 0:
        total += graphcol_nb(earlier, n, v + 1, red, green | bit, blue)
    if blue & nb == 0:
        total += graphcol_nb(earlier, n, v + 1, red, green, blue | bit)
    return total


def python_run(args: dict[str, Any]) -> dict[str, int]:
    return {"colourings": graphcol_py(earlier_masks(), int(args["n"]))}


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    earlier = np.array(earlier_masks(), dtype=np.uint64)
    z = np.uint64(0)
    return {"colourings": int(graphcol_nb(earlier, int(args["n"]), 0, z, z, z))}


CDEF = """
void graphcol_setup(const uint64_t *earlier, int count);
int64_t graphcol(int n, int v, uint64_t red, uint64_t green, uint64_t blue);
"""


def c_setup(ffi: Any, lib: Any, args: dict[str, Any]) -> None:
    masks = earlier_masks()
    lib.graphcol_setup(ffi.new("uint64_t[]", masks), len(masks))


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    return {"colourings": int(lib.graphcol(int(args["n"]), 0, 0, 0, 0))}

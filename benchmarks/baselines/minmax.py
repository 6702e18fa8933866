"""minmax baselines: walk the 4 x 4 tic-tac-toe game tree from a position, counting the
final positions won by X, won by O and drawn."""

from typing import Any

import numpy as np
from numba import njit

FULL = 0xFFFF
LINES = [0x000F << (4 * r) for r in range(4)] + [0x1111 << c for c in range(4)] + [0x8421, 0x1248]


def minmax_py(x: int, o: int, x_moves: bool) -> tuple[int, int, int]:
    acc = [0, 0, 0]

    def rec(x: int, o: int, x_moves: bool) -> None:
        last = o if x_moves else x
        for line in LINES:
            if last & line == line:
                acc[1 if x_moves else 0] += 1
                return
        empty = ~(x | o) & FULL
        if not empty:
            acc[2] += 1
            return
        while empty:
            bit = empty & -empty
            empty ^= bit
            if x_moves:
                rec(x | bit, o, False)
            else:
                rec(x, o | bit, True)

    rec(x, o, x_moves)
    return acc[0], acc[1], acc[2]


LINES_NP = np.array(LINES, dtype=np.int64)


@njit(cache=True)
def minmax_nb(x: int, o: int, x_moves: bool, lines: np.ndarray, acc: np.ndarray) -> None:
    last = o if x_moves else x
    for k in range(lines.shape[0]):
        if last & lines[k] == lines[k]:
            acc[1 if x_moves else 0] += 1
            return
    empty = ~(x | o) & 0xFFFF
    if empty == 0:
        acc[2] += 1
        return
    other = not x_moves  # a bool variable, not a literal: one compiled signature
    while empty:
        bit = empty & -empty
        empty ^= bit
        if x_moves:
            minmax_nb(x | bit, o, other, lines, acc)
        else:
            minmax_nb(x, o | bit, other, lines, acc)


def _result(xw: int, ow: int, dr: int) -> dict[str, int]:
    return {"xwins": int(xw), "owins": int(ow), "draws": int(dr)}


def python_run(args: dict[str, Any]) -> dict[str, int]:
    return _result(*minmax_py(int(args["x"]), int(args["o"]), bool(args["x_moves"])))


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    acc = np.zeros(3, dtype=np.int64)
    minmax_nb(int(args["x"]), int(args["o"]), bool(args["x_moves"]), LINES_NP, acc)
    return _result(*acc)


CDEF = """
void minmax_reset(void);
void minmax(uint32_t x, uint32_t o, int x_moves);
int64_t minmax_count(int outcome);
"""


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    lib.minmax_reset()
    lib.minmax(int(args["x"]), int(args["o"]), int(bool(args["x_moves"])))
    return _result(lib.minmax_count(0), lib.minmax_count(1), lib.minmax_count(2))

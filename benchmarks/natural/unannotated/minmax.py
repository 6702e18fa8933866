"""Unannotated twin of ``benchmarks/natural/minmax.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

minmax as people write it: the number of games X wins from a position, with the
other outcomes still counted by reducers (twin of ``benchmarks/minmax.py``: the same
4x4 tic-tac-toe tree)."""

import numpy as np

from revec import Reducer, reduce, task

FULL = 0xFFFF
# The ten winning lines: four rows, four columns, two diagonals.
LINES = np.array(
    [0x000F << (4 * r) for r in range(4)] + [0x1111 << c for c in range(4)]
    + [0x8421, 0x1248],
    dtype=np.uint16,
)

owins = Reducer(np.int64, "sum")
draws = Reducer(np.int64, "sum")


def has_line(b: np.uint16) -> np.bool_:
    found = False
    for k in range(10):
        if (b & LINES[k]) == LINES[k]:
            found = True
    return found


@task
def minmax(x=0x60, o=0x600, x_moves=True):
    if has_line(o if x_moves else x) or (x | o) == FULL:
        if has_line(o if x_moves else x):
            if x_moves:
                reduce(owins, 1)
                return 0
            return 1
        reduce(draws, 1)
        return 0
    wins = 0
    empty = ~(x | o) & np.uint16(FULL)
    while empty != 0:
        bit = empty & (~empty + np.uint16(1))  # lowest empty cell
        empty = empty ^ bit
        if x_moves:
            wins += minmax(x | bit, o, False)
        else:
            wins += minmax(x, o | bit, True)
    return wins

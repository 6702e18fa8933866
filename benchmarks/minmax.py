"""minmax: the game tree of 4 x 4 tic-tac-toe (four in a row, column or diagonal wins).

Cell (r, c) is bit 4r + c of the bitmasks ``x`` and ``o``; ``x_moves`` says whose turn it
is.  A task is a position: it is a leaf when the player who just moved has a line or the
board is full, and counts the outcome (``xwins``, ``owins``, ``draws``); otherwise it
spawns one child per empty cell, lowest cell first.  The full game (about 10^13 games)
is too large to run, so the presets start from positions after a few opening moves
(see revec/bench/presets.py); the default is the position after four moves, X at
(1, 1), (1, 2) and O at (2, 1), (2, 2), with 12 empty cells.
"""

import numpy as np

from revec import Reducer, reduce, spawn, task

FULL = 0xFFFF
# The ten winning lines: four rows, four columns, two diagonals.
LINES = np.array(
    [0x000F << (4 * r) for r in range(4)] + [0x1111 << c for c in range(4)]
    + [0x8421, 0x1248],
    dtype=np.uint16,
)

xwins = Reducer(np.int64, "sum")
owins = Reducer(np.int64, "sum")
draws = Reducer(np.int64, "sum")


def has_line(b: np.uint16) -> np.bool_:
    found = False
    for k in range(10):
        if (b & LINES[k]) == LINES[k]:
            found = True
    return found


@task
def minmax(x: np.uint16 = 0x60, o: np.uint16 = 0x600, x_moves: np.bool_ = True):
    if has_line(o if x_moves else x) or (x | o) == FULL:
        if has_line(o if x_moves else x):
            if x_moves:
                reduce(owins, 1)
            else:
                reduce(xwins, 1)
        else:
            reduce(draws, 1)
    else:
        empty = ~(x | o) & np.uint16(FULL)
        while empty != 0:
            bit = empty & (~empty + np.uint16(1))  # lowest empty cell
            empty = empty ^ bit
            if x_moves:
                spawn(minmax, x | bit, o, False)
            else:
                spawn(minmax, x, o | bit, True)

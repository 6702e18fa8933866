"""nqueens: count the placements of n non-attacking queens on an n x n board.

One task per partial placement of the first ``row`` rows; the attacked columns and
diagonals are bitmasks (``cols``, ``d1`` shifts left, ``d2`` right each row).  A task
spawns one child per free square of its row, lowest bit first.  The frame is as narrow
as the values allow (the paper's SoA blocks use 8-bit lanes where they can): ``row`` is
int8 and the masks uint16, so boards of up to 16 x 16 (``n`` itself is passed unchanged
to every child and held once for the whole tree).
"""

import numpy as np

from revec import Reducer, reduce, spawn, task

solutions = Reducer(np.int64, "sum")


@task
def nqueens(n: np.int32 = 8, row: np.int8 = 0, cols: np.uint16 = 0, d1: np.uint16 = 0,
            d2: np.uint16 = 0):
    if row == n:
        reduce(solutions, 1)
    else:
        free = ~(cols | d1 | d2) & np.uint16((1 << n) - 1)
        while free != 0:
            bit = free & (~free + np.uint16(1))  # lowest free square
            free = free ^ bit
            spawn(nqueens, n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1)

"""nqueens: count the placements of n non-attacking queens on an n x n board.

One task per partial placement of the first ``row`` rows; the attacked columns and
diagonals are bitmasks (``cols``, ``d1`` shifts left, ``d2`` right each row).  A task
spawns one child per free square of its row, lowest bit first.
"""

import numpy as np

from revec import Reducer, reduce, spawn, task

solutions = Reducer(np.int64, "sum")


@task
def nqueens(n: np.int32 = 8, row: np.int32 = 0, cols: np.uint32 = 0, d1: np.uint32 = 0,
            d2: np.uint32 = 0):
    if row == n:
        reduce(solutions, 1)
    else:
        free = ~(cols | d1 | d2) & np.uint32((1 << n) - 1)
        while free != 0:
            bit = free & (~free + np.uint32(1))  # lowest free square
            free = free ^ bit
            spawn(nqueens, n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1)

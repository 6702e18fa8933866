"""nqueens_board: n-queens with a board array, the algorithm of Cilk-5's nqueens (and
of the paper's own nqueens benchmark) written in Python.

A task holds the board of its first ``len(board)`` rows (``board[r]``: the column of row
r's queen).  For every column of the next row it builds the child's board
(``board + (col,)``), checks the whole board with ``ok()`` (every pair of queens, as
Cilk-5 does) and spawns the child if it is safe.  The board is a task-private tuple:
revec stores it in the thread blocks with the task, ``n`` int8 fields (its capacity is
bounded by the is-base test ``len(board) == n``) and a length.  ``benchmarks/nqueens.py``
is the bit-mask form of the same search (the form revec needed before task-private
arrays existed); both count the same placements (OEIS A000170).
"""

import numpy as np

from revec import Reducer, reduce, spawn, task

solutions = Reducer(np.int64, "sum")


def ok(n, a):
    """No two of the queens in rows 0 .. n-1 of ``a`` attack each other."""
    for i in range(n):
        p = a[i]
        for j in range(i + 1, n):
            q = a[j]
            if q == p or q == p - (j - i) or q == p + (j - i):
                return False
    return True


@task
def nqueens_board(n: np.int8 = 8, board: tuple[np.int8, ...] = ()):
    if len(board) == n:
        reduce(solutions, 1)
    else:
        for col in range(n):
            child = board + (col,)
            if ok(len(child), child):
                spawn(nqueens_board, n, child)

"""nqueens_board as people write it: the board recursion returning its count."""

import numpy as np

from revec import task


def ok(n, a):
    for i in range(n):
        p = a[i]
        for j in range(i + 1, n):
            q = a[j]
            if q == p or q == p - (j - i) or q == p + (j - i):
                return False
    return True


@task
def nqueens_board(n: np.int8 = 8, board: tuple[np.int8, ...] = ()) -> np.int64:
    if len(board) == n:
        return 1
    total = 0
    for col in range(n):
        child = board + (col,)
        if ok(len(child), child):
            total += nqueens_board(n, child)
    return total

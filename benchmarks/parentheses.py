"""parentheses: count the well-formed strings of n pairs of parentheses.

A task is a prefix with ``opened`` "(" and ``closed`` ")"; it may add "(" while fewer
than n are open and ")" while ``closed < opened``.  The leaves are the Catalan number
C(n) = C(2n, n) / (n + 1).
"""

import numpy as np

from revec import Reducer, reduce, spawn, task

count = Reducer(np.int64, "sum")


@task
def parentheses(n: np.int8 = 12, opened: np.int8 = 0, closed: np.int8 = 0):
    if closed == n:
        reduce(count, 1)
    else:
        if opened < n:
            spawn(parentheses, n, opened + 1, closed)
        if closed < opened:
            spawn(parentheses, n, opened, closed + 1)

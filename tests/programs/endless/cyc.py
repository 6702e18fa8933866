"""A recursion that never reaches its base case: cyc(3) and cyc(4) spawn each other
forever, each with a leaf cyc(-n) beside it (two frames a level, one more level each
time).  tests/test_memory_depth.py runs it against the memory budget."""

import numpy as np

from revec import Reducer, reduce, spawn, task

leaves = Reducer(np.int64, "sum")


@task
def cyc(n: np.int64 = 3):
    if n <= 0:
        reduce(leaves, 1)
    else:
        spawn(cyc, 4 if n == 3 else 3)
        spawn(cyc, -n)

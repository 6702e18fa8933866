"""findmax: the largest element of an array by recursive halving (the shape of
Cowichan's reductions over a matrix read from a file, and of every divide-and-conquer
pass over runtime data).

The array is a read-only input the root call supplies (``revec run benchmarks/findmax.py
findmax data.npy 0 N``); a task halves its range ``[lo, hi)`` until one element is left,
which it offers to the ``largest`` max reducer.  The array is stored once for the whole
tree: a task's frame is its two indices.
"""

import numpy as np
from numpy.typing import NDArray

from revec import Reducer, reduce, spawn, task

largest = Reducer(np.int64, "max")


@task
def findmax(a: NDArray[np.int32], lo: np.int64 = 0, hi: np.int64 = 1):
    if hi - lo == 1:
        reduce(largest, a[lo])
    else:
        mid = lo + (hi - lo) // 2
        spawn(findmax, a, lo, mid)
        spawn(findmax, a, mid, hi)

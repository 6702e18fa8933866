"""Conditional spawns for the numba kernels' lane-spawns step (revec/backends/numba_lanes.py):
three spawn sites, each under its own data-dependent condition, so every subset of them
fires somewhere in the tree (a thread's k-th spawn may come from any site that can make
it); an assignment and reductions under conditions; a field passed on unchanged by some
sites and changed by others."""

import numpy as np

from revec import Reducer, reduce, spawn, task

total = Reducer(np.int64, "sum")
low = Reducer(np.int32, "min")
childless = Reducer(np.int64, "sum")


@task
def subsets(d: np.int8 = 14, x: np.int32 = 5, y: np.int16 = 0):
    if d == 0:
        reduce(total, x * 3 + y)
        reduce(low, x - y)
    else:
        h = (x * 7 + d) % 8
        z = y
        if h == 0:
            reduce(childless, x)
        if h & 1:
            z = z + 1
            spawn(subsets, d - 1, (x * 3 + 1) % 1000, y)
        if h & 2:
            spawn(subsets, d - 1, (x * 5 + 2) % 1000, z)
        if h & 4:
            if x > 500:
                reduce(low, y)
            spawn(subsets, d - 1, x, y - z)

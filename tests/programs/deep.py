"""A task tree 100,000 levels deep: a spine with a leaf hanging off every third node."""

import numpy as np

from revec import Reducer, reduce, spawn, task

nodes = Reducer(np.int64, "sum")
weight = Reducer(np.int64, "sum")
deepest = Reducer(np.int64, "max")


@task
def spine(n: np.int64 = 100000, level: np.int64 = 0):
    if n <= 0:
        reduce(nodes, 1)
        reduce(deepest, level)
    else:
        reduce(nodes, 1)
        reduce(weight, n)
        spawn(spine, n - 1, level + 1)
        if n % 3 == 0:
            spawn(spine, 0, level + 1)

import numpy as np

from revec import Reducer, reduce, spawn, task

count = Reducer(np.int64, "sum")
deepest = Reducer(np.int64, "max")
least = Reducer(np.int32, "min")


@task
def skew(n: np.int32, d: np.int32):
    if n < 2:
        reduce(count, n + d)
        reduce(deepest, d)
        reduce(least, n - d)
    else:
        spawn(skew, n - 1, d + 1)
        spawn(skew, n - 3, d + 1)

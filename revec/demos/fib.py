import numpy as np

from revec import Reducer, reduce, spawn, task

count = Reducer(np.int64, "sum")

@task
def fib(n: np.int32 = 20):
    if n < 2:
        reduce(count, n)
    else:
        spawn(fib, n - 1)
        spawn(fib, n - 2)

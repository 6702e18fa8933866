"""fib: the Fibonacci numbers by doubly recursive spawns (fib(0) = 0, fib(1) = 1).

The reducer ``count`` sums the leaves' n, so it ends at fib(n); the tree has
2 fib(n + 1) - 1 tasks.
"""

import numpy as np

from revec import Reducer, reduce, spawn, task

count = Reducer(np.int64, "sum")


@task
def fib(n: np.int8 = 25):
    if n < 2:
        reduce(count, n)
    else:
        spawn(fib, n - 1)
        spawn(fib, n - 2)

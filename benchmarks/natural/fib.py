"""fib as people write it: the twin of ``benchmarks/fib.py`` with a return value.

revec derives the spawn/reduce form (a sum reducer receiving each leaf's n), the
same tree and work as the original.
"""

import numpy as np

from revec import task


@task
def fib(n: np.int8 = 25) -> np.int64:
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)

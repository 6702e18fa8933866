"""binomial: C(n, k) by Pascal's rule C(n, k) = C(n-1, k-1) + C(n-1, k).

Leaves are C(n, 0) and C(n, n), each counting 1, so ``count`` ends at C(n, k); the tree
has 2 C(n, k) - 1 tasks.
"""

import numpy as np

from revec import Reducer, reduce, spawn, task

count = Reducer(np.int64, "sum")


@task
def binomial(n: np.int8 = 22, k: np.int8 = 9):
    if k == 0 or k == n:
        reduce(count, 1)
    else:
        spawn(binomial, n - 1, k - 1)
        spawn(binomial, n - 1, k)

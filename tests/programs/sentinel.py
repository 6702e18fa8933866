"""leaf_level's min / max partials without per-lane flags (technique sentinel_partials):
a partial that ends at its identity is ambiguous (no child reduced, or one reduced
exactly that value) and the kernel runs the threads' loop again with the flags.  Here
int32 values go to int64 reducers, so the two cases give different results: ``edge``
receives the int32 identity itself (``lo``) from a few leaves, ``never`` nothing (its
value stays the int64 identity), ``low`` the int32 maximum (``hi``) from a few leaves."""

import numpy as np

from revec import Reducer, reduce, spawn, task

edge = Reducer(np.int64, "max")
never = Reducer(np.int64, "max")
low = Reducer(np.int64, "min")



@task
def sentinel(d: np.int8 = 0, depth: np.int8 = 9, x: np.int32 = 0,
             lo: np.int32 = -2147483648, hi: np.int32 = 2147483647):
    if d == depth:
        if x == 12:
            reduce(edge, lo)
        if x > 1000000:
            reduce(never, x)
        if x == 14:
            reduce(low, hi)
    else:
        spawn(sentinel, d + 1, depth, x + 1, lo, hi)
        spawn(sentinel, d + 1, depth, x + 2, lo, hi)

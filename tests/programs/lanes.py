"""Inductive cases for the C back end's lock-step paths (revec/backends/c_lanes.py):
conditional spawns without loops, and loops making one spawn per iteration.  Each task
builds a wide tree (blocks of thousands of threads, so the 32-thread chunks run)."""

import numpy as np

from revec import Reducer, reduce, spawn, task

total = Reducer(np.int64, "sum")
low = Reducer(np.int32, "min")
high = Reducer(np.uint16, "max")
fsum = Reducer(np.float64, "sum")

SCALE = np.array([3, 1, 4, 1, 5, 9, 2, 6], dtype=np.int16)


@task
def branches(d: np.int8 = 12, x: np.uint16 = 1, y: np.int32 = 0):
    """if / else / nested if spawns, a reduction under a condition."""
    if d == 0:
        reduce(total, x)
        reduce(low, y)
        reduce(high, x)
    else:
        s = SCALE[d & 7]  # an array read outside the conditions
        if x % 3 != 0:
            spawn(branches, d - 1, x * 2 + 1, y - s)
            if y > -20:
                spawn(branches, d - 1, x + 7, y + 1)
        else:
            reduce(fsum, 0.5 * d)
            spawn(branches, d - 1, x // 2 + 3, y)
        if x & 4:
            spawn(branches, d - 1, x ^ 5, -y)


@task
def whiles(d: np.int8 = 9, mask: np.uint16 = 0x7B5, acc: np.int32 = 1):
    """while loop, one spawn per iteration under if / else, a carried local."""
    if d == 0 or mask == 0:
        reduce(total, acc)
        reduce(high, mask)
    else:
        m = mask
        step = np.int32(1)
        while m != 0:
            bit = m & (~m + np.uint16(1))
            m = m ^ bit
            if bit & 0x0F0:
                spawn(whiles, d - 1, (mask ^ bit) >> 1, acc + step)
            else:
                spawn(whiles, d - 1, mask ^ bit, acc * 3 - step)
            step = step + 2
            reduce(low, acc - step)


@task
def fors(d: np.int8 = 9, w: np.int32 = 5, v: np.float64 = 1.0):
    """for loop with a data-dependent trip count, reductions in the body."""
    if d == 0:
        reduce(fsum, v)
        reduce(total, w)
    else:
        k = (w % 4) + 2
        for i in range(1, k):
            reduce(total, i)
            spawn(fors, d - 1, w + i * 3, v * 0.5 + i)

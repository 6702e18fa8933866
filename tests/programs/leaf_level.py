"""Whole child levels inlined as leaves (technique leaf_level, revec/transforms/
kernel_plan.py ``level_decision``; the C kernel's revec/backends/c_leaves.py
``leaf_level``): the is-base test reads only a level-uniform field and an invariant one,
so a block's children are all leaves or none; the base cases read arrays indexed by the
child's fields (what lane-code leaf inlining cannot speculate)."""

import numpy as np

from revec import Reducer, reduce, spawn, task

total = Reducer(np.int64, "sum")
low = Reducer(np.int32, "min")
high = Reducer(np.int64, "max")

LIMIT = np.array([40, 90, 7], dtype=np.int32)
GAIN = np.array([3, -1, 4, 1, -5, 9, 2, -6], dtype=np.int32)
WIDE = ((np.arange(8000, dtype=np.int32) * 7919) % 1009 - 500).astype(np.int32)


@task
def folded(k: np.int32 = 1, d: np.int8 = 0, depth: np.int8 = 11, w: np.int32 = 0,
           v: np.int32 = 0):
    """Reductions under conditions (base_fold's masked partials), an array read at the
    top level of the base case."""
    if d == depth:
        if w <= LIMIT[k]:
            reduce(high, v)
            reduce(total, w)
        else:
            reduce(low, v - w)
    else:
        spawn(folded, k, d + 1, depth, w + GAIN[d & 7], v + d)
        spawn(folded, k, d + 1, depth, w - 1, v * 2 - GAIN[(d + 3) & 7])


@task
def assigned(d: np.int8 = 0, depth: np.int8 = 8, x: np.int32 = 1):
    """A base case that assigns a local from an array read (inlined as it is, not
    folded), three spawn sites."""
    if d >= depth:
        y = GAIN[x & 7] * x
        reduce(total, y)
        if y > 20:
            reduce(low, y - GAIN[(x >> 3) & 7])
    else:
        spawn(assigned, d + 1, depth, x * 3 + 1)
        spawn(assigned, d + 1, depth, x ^ 0x55)
        spawn(assigned, d + 1, depth, x + 7)


@task
def guarded(v: np.int32 = 60000):
    """Not level-uniform (lane-code leaf inlining): the base case reads an array at an
    index valid only for a leaf (a child that is not one would read ~10^8 elements past
    its end), so the inlined reads are guarded (kernel_plan.guard_reads)."""
    if v < 8:
        reduce(total, WIDE[v * 1000])
        if WIDE[v * 1000 + 1] > v:
            reduce(low, WIDE[v * 1000 + 2] - v)
    else:
        spawn(guarded, v // 2)
        spawn(guarded, v // 3 + 1)


"""Leaves at the extremes of narrow types, for the C kernel's leaf-inlining sums
(revec/backends/c_leaves.py): every leaf reduces its int8 field (a byte sum), its int16
field (a 16/32-bit lane sum) and a constant (counted once per block).  Every inductive
thread spawns two children, each either a leaf or not (``d`` parity and the values
decide), so blocks mix kept and inlined children and hold thousands of threads."""

import numpy as np

from revec import Reducer, reduce, spawn, task

bytes_ = Reducer(np.int64, "sum")
shorts = Reducer(np.int64, "sum")
ones = Reducer(np.int64, "sum")


@task
def extremes(d: np.int8 = 21, b: np.int8 = 0, s: np.int16 = 0):
    if d <= 0 or (b == -128 and d < 4):
        reduce(bytes_, b)
        reduce(shorts, s)
        reduce(ones, 3)
    else:
        spawn(extremes, d - 1, np.int8(-128) if d % 2 == 0 else np.int8(127),
              np.int16(-32768) if b < 0 else np.int16(32767))
        spawn(extremes, d - 2, np.int8(127) if s < 0 else np.int8(-128), s)

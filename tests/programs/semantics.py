"""Corner cases of NumPy 2 value semantics that every variant must reproduce."""

import numpy as np

from revec import Reducer, reduce, spawn, task

U = np.array([7, 200, 65535], dtype=np.uint16)
SCALE = 0.1  # a weak (Python) float: float32 operands stay float32

wraps = Reducer(np.int64, "sum")
weak_cmp = Reducer(np.int64, "sum")
f32 = Reducer(np.float32, "sum")
lowest = Reducer(np.int8, "min")
floors = Reducer(np.int64, "sum")


@task
def sem(d: np.int8 = 6, a: np.uint8 = 250, x: np.float32 = 1.5):
    if d == 0:
        reduce(wraps, a + 10)                     # uint8 wraps: (a + 10) % 256
        reduce(weak_cmp, (39 - 44) >= U[d % 3])   # Python int vs uint16: by value
        reduce(f32, x * SCALE)                    # float32 * weak float -> float32
        reduce(lowest, np.int8(a) * 3)            # int8 wraps
        reduce(floors, (np.int16(a) - 300) // 7 + (np.int16(a) - 300) % 7)
    else:
        spawn(sem, d - 1, a + 37, x * np.float32(1.25))
        spawn(sem, d - 1, a - 91, -x)

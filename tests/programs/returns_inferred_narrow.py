# Found by the return-value generator: the base case returns int16 (mix) or int32, so
# the inferred result type is int32; plain numpy would carry int16 up a path and wrap.

import numpy as np

from revec import task


def mix(x, y):
    t = x * 3 + y
    if t > 20:
        return t - 20
    return t


@task
def f(d: np.int16, a: np.uint8, s: np.int32):
    if d <= 1:
        if (a & 1) == 0:
            return mix(d, a % 9)
        return np.int32(a & 5)
    total = 0
    j = 0
    while j < 1:
        total = total + 3 * f(d - 1, a - d, s)
        j += 1
    return total + mix(d, a % 9)

import numpy as np

from revec import task


def mix(x, y):
    t = x * 3 + y
    if t > 20:
        return t - 20
    return t


@task
def f(d: np.int16, a: np.int64, s: np.int32):
    m = np.int64(d) * 2  # noqa: F841 - a prologue, as the generator wrote it
    if d <= 1:
        return np.int32(a & 5)
    total = 0
    j = 0
    while j < 2:
        total = total + s * f(d - 1, a ^ d, s)
        j += 1
    return total + (a % 7)

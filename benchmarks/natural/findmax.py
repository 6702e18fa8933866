"""findmax as people write it: the larger of the two halves' largest elements."""

import numpy as np
from numpy.typing import NDArray

from revec import task


@task
def findmax(a: NDArray[np.int32], lo: np.int64 = 0, hi: np.int64 = 1) -> np.int64:
    if hi - lo == 1:
        return a[lo]
    mid = lo + (hi - lo) // 2
    return max(findmax(a, lo, mid), findmax(a, mid, hi))

"""nqueens as people write it: the placements completing the first ``row`` rows, summed
over the free squares of the next row (twin of ``benchmarks/nqueens.py``, same frame)."""

import numpy as np

from revec import task


@task
def nqueens(n: np.int32 = 8, row: np.int8 = 0, cols: np.uint16 = 0, d1: np.uint16 = 0,
            d2: np.uint16 = 0) -> np.int64:
    if row == n:
        return 1
    total = 0
    free = ~(cols | d1 | d2) & np.uint16((1 << n) - 1)
    while free != 0:
        bit = free & (~free + np.uint16(1))  # lowest free square
        free = free ^ bit
        total += nqueens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1)
    return total

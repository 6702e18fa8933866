"""Unannotated twin of ``benchmarks/natural/nqueens.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

nqueens as people write it: the placements completing the first ``row`` rows, summed
over the free squares of the next row (twin of ``benchmarks/nqueens.py``, same frame)."""

import numpy as np

from revec import task


@task
def nqueens(n=8, row=0, cols=0, d1=0,
            d2=0):
    if row == n:
        return 1
    total = 0
    free = ~(cols | d1 | d2) & np.uint16((1 << n) - 1)
    while free != 0:
        bit = free & (~free + np.uint16(1))  # lowest free square
        free = free ^ bit
        total += nqueens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1)
    return total

"""parentheses as people write it: the number of well-formed strings completing a prefix
with ``opened`` and ``closed`` parentheses (twin of ``benchmarks/parentheses.py``)."""

import numpy as np

from revec import task


@task
def parentheses(n: np.int8 = 12, opened: np.int8 = 0, closed: np.int8 = 0) -> np.int64:
    if closed == n:
        return 1
    total = 0
    if opened < n:
        total += parentheses(n, opened + 1, closed)
    if closed < opened:
        total += parentheses(n, opened, closed + 1)
    return total

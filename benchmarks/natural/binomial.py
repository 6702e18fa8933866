"""binomial as people write it: C(n, k) = C(n - 1, k - 1) + C(n - 1, k), the twin of
``benchmarks/binomial.py``."""

import numpy as np

from revec import task


@task
def binomial(n: np.int8 = 22, k: np.int8 = 9) -> np.int64:
    if k == 0 or k == n:
        return 1
    return binomial(n - 1, k - 1) + binomial(n - 1, k)

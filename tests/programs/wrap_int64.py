"""int64 arithmetic that wraps, read by sign tests a compiler could fold if it assumed
signed overflow impossible: x > 0 makes x + BIG, -BIG - x and x * BIG look one-signed.

With n = 3 the 8 leaves have x = 1 + 500 j for j = 0, 1, 2, 3 right turns (1, 3, 3
and 1 leaves): x + BIG and -BIG - x wrap for x > 807 (x = 1001, 1501: 4 leaves); x * 2**61
wraps to a negative value when x mod 8 is 4 to 7 (x = 501, 1501: 4 leaves).
"""

import numpy as np

from revec import Reducer, reduce, spawn, task

add_wraps = Reducer(np.int64, "sum")
sub_wraps = Reducer(np.int64, "sum")
mul_wraps = Reducer(np.int64, "sum")

BIG = 9223372036854775000


@task
def f(n: np.int64, x: np.int64):
    if n == 0:
        if x > 0:
            s = x + BIG
            if s < 0:
                reduce(add_wraps, 1)
            d = -BIG - x
            if d > 0:
                reduce(sub_wraps, 1)
            p = x * 2305843009213693952
            if p < 0:
                reduce(mul_wraps, 1)
    else:
        spawn(f, n - 1, x)
        spawn(f, n - 1, x + 500)

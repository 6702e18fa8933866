"""knapsack_bb as people write it: the best packing returned as the larger of the two
choices.  (The branch-and-bound pruning is left out: in a value-returning task a pruned
branch would return a value, and a bound only prunes a branch that ends without one.)"""

import numpy as np

from revec import task


@task
def knapsack_bb(values: list[np.int32], weights: list[np.int32], c: np.int32 = 0,
                i: np.int8 = 0, v: np.int32 = 0) -> np.int64:
    if c < 0:
        return -1
    if c == 0 or i == len(values):
        return v
    return max(knapsack_bb(values, weights, c, i + 1, v),
               knapsack_bb(values, weights, c - weights[i], i + 1, v + values[i]))

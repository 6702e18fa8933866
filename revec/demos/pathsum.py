"""A float program: sum and extremes of weighted root-to-leaf paths of a ternary tree."""

import numpy as np

from revec import Reducer, reduce, spawn, task

WEIGHTS = np.array([0.5, 0.25, 0.125], dtype=np.float64)

total = Reducer(np.float64, "sum")
longest = Reducer(np.float64, "max")
shortest = Reducer(np.float64, "min")


def damp(x: np.float64, depth: np.int32) -> np.float64:
    return x / (1.0 + 0.1 * depth)


@task
def pathsum(depth: np.int32 = 9, acc: np.float64 = 1.0):
    if depth == 0:
        reduce(total, acc)
        reduce(longest, acc)
        reduce(shortest, acc)
    else:
        for k in range(3):
            if k < 2 or depth % 2 == 0:
                spawn(pathsum, depth - 1, acc + damp(WEIGHTS[k], depth))

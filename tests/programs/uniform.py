"""Parameters that are equal in every thread of a level (``depth``: every spawn passes
``depth + 1``; ``left``: not uniform, the spawns pass different offsets), read by the
is-base test, the base case, a helper array and a loop of spawns."""
import numpy as np

from revec import Reducer, reduce, spawn, task

total = Reducer(np.int64, "sum")
leaves = Reducer(np.int64, "sum")
WEIGHT = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4],
                  dtype=np.int64)


@task
def walk(depth: np.int32 = 0, left: np.int32 = 7, seed: np.uint32 = 1):
    if depth >= 11 or left <= 0:
        reduce(total, WEIGHT[depth] * np.int64(seed % np.uint32(7)) + np.int64(left))
        reduce(leaves, 1)
    else:
        kids = np.int32(seed % np.uint32(3)) + 1
        for i in range(kids):
            spawn(walk, depth + 1, left - 1 - i, seed * np.uint32(1103515245) + np.uint32(i))


@task
def pairs(level: np.int8 = 0, a: np.int32 = 0):
    if level == 12:
        reduce(total, a * np.int32(level))
    else:
        spawn(pairs, level + 1, a + np.int32(level))
        if a % 3 != 1:
            spawn(pairs, level + 1, a - 1)

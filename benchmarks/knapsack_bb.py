"""knapsack_bb: 0/1 knapsack by branch and bound, the algorithm of Cilk-5's knapsack
(its ``best_so_far`` pruning, which ``benchmarks/knapsack.py`` leaves out as the paper
did) written in Python.

The items come sorted by value per unit of weight, best first (Cilk-5's ``main`` sorts
them so).  A task has decided items ``0 .. i-1``, has ``c`` capacity left and value ``v``
so far.  Its upper bound fills the remaining capacity at item i's ratio (no later item is
better); a task whose bound cannot beat the best value found so far is pruned.  The
best value so far is a ``Bound``: a max that tasks raise at the leaves and read to prune,
as the block they are in starts (revec shares it between workers).  The pruning is sound
(a pruned subtree never holds a better packing), so the answer is the exhaustive one.

``values`` and ``weights`` are read-only input lists (``revec run ... values.txt
weights.txt``; the benchmark presets pass a Cilk-5 input file's items).
"""

import numpy as np

from revec import Bound, Reducer, reduce, spawn, task

best = Reducer(np.int64, "max")
best_so_far = Bound(np.int64, "max")


@task
def knapsack_bb(values: list[np.int32], weights: list[np.int32], c: np.int32 = 0,
                i: np.int8 = 0, v: np.int32 = 0):
    if c < 0 or c == 0 or i == len(values):
        if c >= 0:
            reduce(best, v)
            best_so_far.raise_to(v)
    else:
        ub = v + c * values[i] / weights[i]
        if ub < best_so_far.value:
            return
        spawn(knapsack_bb, values, weights, c, i + 1, v)
        spawn(knapsack_bb, values, weights, c - weights[i], i + 1, v + values[i])

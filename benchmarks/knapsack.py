"""knapsack: 0/1 knapsack by exhaustive "don't take / take" recursion (no pruning).

The inputs are the Cilk-5 knapsack examples in ``data/`` (``#items capacity`` then
``value weight`` per item).  A task has decided items ``0 .. i-1`` (total ``weight`` and
``value``); it spawns "without item i" and then "with item i" (the order of Cilk-5's
``knapsack``), and a leaf (all ``n`` items decided) offers its value to the ``best`` max
reducer if it fits the capacity.  Capacity is checked at the leaves only, so every tree
is complete: 2^(n+1) - 1 tasks (Table 1's "long" input: example 3, n = 30, 2^31 - 1
tasks).  Cilk-5's branch-and-bound pruning (``best_so_far``) is omitted, as in the paper.

``example`` picks the input file (1, 2 or 3) and ``n`` its first n items (file order).
"""

from pathlib import Path

import numpy as np

from revec import Reducer, reduce, spawn, task


def _read(path: Path) -> tuple[int, np.ndarray]:
    words = [int(w) for w in path.read_text().split()]
    count, capacity = words[0], words[1]
    return capacity, np.array(words[2:2 + 2 * count], dtype=np.int32).reshape(count, 2)


_INPUTS = [_read(Path(__file__).parent / "data" / f"cilk5-example{k}.input") for k in (1, 2, 3)]
_MAX_ITEMS = max(len(items) for _, items in _INPUTS)

CAPACITY = np.array([cap for cap, _ in _INPUTS], dtype=np.int32)
NITEMS = np.array([len(items) for _, items in _INPUTS], dtype=np.int32)
VALUE = np.zeros((3, _MAX_ITEMS), dtype=np.int32)
WEIGHT = np.zeros((3, _MAX_ITEMS), dtype=np.int32)
for _k, (_cap, _items) in enumerate(_INPUTS):
    VALUE[_k, :len(_items)] = _items[:, 0]
    WEIGHT[_k, :len(_items)] = _items[:, 1]

best = Reducer(np.int64, "max")


@task
def knapsack(example: np.int32 = 3, n: np.int32 = 16, i: np.int8 = 0, weight: np.int32 = 0,
             value: np.int32 = 0):
    if i == n:
        if weight <= CAPACITY[example - 1]:
            reduce(best, value)
    else:
        spawn(knapsack, example, n, i + 1, weight, value)
        spawn(knapsack, example, n, i + 1, weight + WEIGHT[example - 1, i],
              value + VALUE[example - 1, i])

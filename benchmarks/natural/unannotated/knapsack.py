"""Unannotated twin of ``benchmarks/natural/knapsack.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

knapsack as people write it: the best value reachable from item ``i`` on (twin of
``benchmarks/knapsack.py``: the same Cilk-5 inputs, frame and tree, no pruning).
An overweight selection is worth -1 (the empty one, worth 0, always fits)."""

from pathlib import Path

import numpy as np

from revec import task


def _read(path: Path) -> tuple[int, np.ndarray]:
    words = [int(w) for w in path.read_text().split()]
    count, capacity = words[0], words[1]
    return capacity, np.array(words[2:2 + 2 * count], dtype=np.int32).reshape(count, 2)


_DATA = Path(__file__).parents[2] / "data"
_INPUTS = [_read(_DATA / f"cilk5-example{k}.input") for k in (1, 2, 3)]
_MAX_ITEMS = max(len(items) for _, items in _INPUTS)

CAPACITY = np.array([cap for cap, _ in _INPUTS], dtype=np.int32)
NITEMS = np.array([len(items) for _, items in _INPUTS], dtype=np.int32)
VALUE = np.zeros((3, _MAX_ITEMS), dtype=np.int32)
WEIGHT = np.zeros((3, _MAX_ITEMS), dtype=np.int32)
for _k, (_cap, _items) in enumerate(_INPUTS):
    VALUE[_k, :len(_items)] = _items[:, 0]
    WEIGHT[_k, :len(_items)] = _items[:, 1]

@task
def knapsack(example=3, n=16, i=0, weight=0,
             value=0):
    if i == n:
        if weight <= CAPACITY[example - 1]:
            return value
        return -1
    return max(knapsack(example, n, i + 1, weight, value),
               knapsack(example, n, i + 1, weight + WEIGHT[example - 1, i],
                        value + VALUE[example - 1, i]))

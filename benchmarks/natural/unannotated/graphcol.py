"""Unannotated twin of ``benchmarks/natural/graphcol.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

graphcol as people write it: the proper 3-colourings extending a colouring of the
first ``v`` vertices (twin of ``benchmarks/graphcol.py``: same graph, same frame)."""

from pathlib import Path

import numpy as np

from revec import task


def _read(path: Path) -> tuple[int, list[tuple[int, int]]]:
    rows = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            rows.append(tuple(int(w) for w in line.split()))
    return rows[0][0], [(u, v) for u, v in rows[1:]]


_NV, _EDGES = _read(Path(__file__).parents[2] / "data" / "graph38.edges")

# EARLIER[v]: bitmask of v's neighbours with a smaller index; BIT[v] = 1 << v.
# (int64 masks, as Python ints hold them: 38 vertices fit)
EARLIER = np.zeros(_NV, dtype=np.int64)
for _u, _v in _EDGES:
    _lo, _hi = min(_u, _v), max(_u, _v)
    EARLIER[_hi] |= np.int64(1 << _lo)
BIT = np.array([1 << _k for _k in range(_NV)], dtype=np.int64)

@task
def graphcol(n=24, v=0, red=0, green=0,
             blue=0):
    if v == n:
        return 1
    nb = EARLIER[v]
    b = BIT[v]
    total = 0
    if (red & nb) == 0:
        total += graphcol(n, v + 1, red | b, green, blue)
    if (green & nb) == 0:
        total += graphcol(n, v + 1, red, green | b, blue)
    if (blue & nb) == 0:
        total += graphcol(n, v + 1, red, green, blue | b)
    return total

"""graphcol: count the proper 3-colourings of a fixed graph (38 vertices, 64 edges).

The graph is ``data/graph38.edges``.  Vertices are coloured in index order; a task has
coloured vertices ``0 .. v-1`` and holds each colour's vertex set as a bitmask (``red``,
``green``, ``blue``).  It spawns one child per colour that no already-coloured neighbour
of vertex v has.  ``n`` < 38 colours the subgraph induced by vertices ``0 .. n-1``
(smaller presets).
"""

from pathlib import Path

import numpy as np

from revec import Reducer, reduce, spawn, task


def _read(path: Path) -> tuple[int, list[tuple[int, int]]]:
    rows = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            rows.append(tuple(int(w) for w in line.split()))
    return rows[0][0], [(u, v) for u, v in rows[1:]]


_NV, _EDGES = _read(Path(__file__).parent / "data" / "graph38.edges")

# EARLIER[v]: bitmask of v's neighbours with a smaller index; BIT[v] = 1 << v.
EARLIER = np.zeros(_NV, dtype=np.uint64)
for _u, _v in _EDGES:
    _lo, _hi = min(_u, _v), max(_u, _v)
    EARLIER[_hi] |= np.uint64(1 << _lo)
BIT = np.array([1 << _k for _k in range(_NV)], dtype=np.uint64)

colourings = Reducer(np.int64, "sum")


@task
def graphcol(n: np.int32 = 24, v: np.int8 = 0, red: np.uint64 = 0, green: np.uint64 = 0,
             blue: np.uint64 = 0):
    if v == n:
        reduce(colourings, 1)
    else:
        nb = EARLIER[v]
        b = BIT[v]
        if (red & nb) == 0:
            spawn(graphcol, n, v + 1, red | b, green, blue)
        if (green & nb) == 0:
            spawn(graphcol, n, v + 1, red, green | b, blue)
        if (blue & nb) == 0:
            spawn(graphcol, n, v + 1, red, green, blue | b)

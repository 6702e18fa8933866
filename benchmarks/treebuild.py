"""treebuild: the tree builder of the paper's Fig. 17 as a task program, with uniform
(n, h) splits (revec.treegen's sampler, DESIGN.md section 6).

A task builds one node: ``m`` interior nodes in its subtree, height budget ``h``,
``green`` = 1 when the subtree must have height exactly h (the green path), else at most
h.  ``state`` is the node's splittable random state (splitmix64, revec.treegen.rng): the
node's uniform number is ``uniform(state)`` and child k's state is ``child(state, k)``.
The split is chosen by scanning the recorded cumulative split probabilities
``CUM`` / ``OPT`` / ``POS`` (module-level tables built by revec.treegen.sampler): step t
of the scan is the first with ``u < CUM[row, t]``, position ``s = POS[row, t]`` is the
smaller side's interior count, and the option is the first o with
``u < OPT[row, 4 t + o]``: for an at-most node, o = 0 puts the smaller side left and
o = 1 right; for a green node, o = 0 / 1 make the left child s interior nodes, green or
not, and o = 2 / 3 the right child.  So for the same root state this program builds
exactly the tree the simulator samples.

Reducers: ``nodes``, ``leaves`` and ``fingerprint`` (the sum over nodes of 30 bits of
the mixed state: equal fingerprints mean equal trees, with overwhelming probability).
The root call for a tree of N nodes and height H is ``treebuild((N - 1) // 2, H, 1, S)``
with ``S = revec.treegen.rng.root_state(seed, trial)``.
"""

import numpy as np

from revec import Reducer, reduce, spawn, task
from revec.treegen.sampler import task_tables

MAX_NODES = 257
MAX_HEIGHT = 24
CUM, OPT, POS, HEIGHTS, SIZES = task_tables(MAX_NODES, MAX_HEIGHT)

GAMMA = np.uint64(0x9E3779B97F4A7C15)
MUL1 = np.uint64(0xBF58476D1CE4E5B9)
MUL2 = np.uint64(0x94D049BB133111EB)
UNIFORM_SALT = np.uint64(0xD1B54A32D192ED03)

nodes = Reducer(np.int64, "sum")
leaves = Reducer(np.int64, "sum")
fingerprint = Reducer(np.int64, "sum")


def mix64(z: np.uint64) -> np.uint64:
    z = (z ^ (z >> np.uint64(30))) * MUL1
    z = (z ^ (z >> np.uint64(27))) * MUL2
    return z ^ (z >> np.uint64(31))


def child(s: np.uint64, k: np.uint64) -> np.uint64:
    return mix64(s + (k + np.uint64(1)) * GAMMA)


def uniform(s: np.uint64) -> np.float64:
    return np.float64(mix64(s ^ UNIFORM_SALT) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def node_print(s: np.uint64) -> np.int64:
    return np.int64(mix64(s) >> np.uint64(34))


@task
def treebuild(m: np.int32 = 50, h: np.int32 = 10, green: np.int32 = 1,
              state: np.uint64 = 12345):
    if m == 0:
        reduce(nodes, 1)
        reduce(leaves, 1)
        reduce(fingerprint, node_print(state))
    else:
        reduce(nodes, 1)
        reduce(fingerprint, node_print(state))
        u = uniform(state)
        hr = min(h, m + 1)
        if green == 1:
            hr = min(h, m + 2)
        row = (green * HEIGHTS + hr) * SIZES + m
        t = 0
        while u >= CUM[row, t]:
            t += 1
        s = POS[row, t]
        o = 0
        while u >= OPT[row, 4 * t + o]:
            o += 1
        i = s
        if o == 2 or (green == 0 and o == 1) or (green == 1 and o == 3):
            i = m - 1 - s
        j = m - 1 - i
        left = child(state, np.uint64(0))
        right = child(state, np.uint64(1))
        if green == 0:
            spawn(treebuild, i, h - 1, 0, left)
            spawn(treebuild, j, h - 1, 0, right)
        elif o == 0 or o == 2:
            spawn(treebuild, i, h - 1, 1, left)
            spawn(treebuild, j, h - 1, 0, right)
        else:
            spawn(treebuild, i, h - 2, 0, left)
            spawn(treebuild, j, h - 1, 1, right)

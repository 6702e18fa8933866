"""The splittable per-node random numbers shared by the sampler and the task program
``benchmarks/treebuild.py``.

Every node of a sampled tree has a 64-bit state.  Its uniform number in [0, 1) and its
children's states are functions of that state alone (splitmix64 mixing, Steele et al.,
OOPSLA 2014), so a tree is a function of its root state, whatever order (or schedule)
builds it:

* ``mix64(z)``: the splitmix64 finaliser;
* ``child_state(s, k) = mix64(s + (k + 1) * GAMMA)`` for spawn index k;
* ``node_uniform(s) = (mix64(s ^ UNIFORM_SALT) >> 11) * 2**-53``;
* ``root_state(seed, trial) = child_state(mix64(seed ^ SEED_SALT), trial)``: trial t's
  tree depends only on (seed, t), never on how trials are split among workers.

All arithmetic is on uint64 and wraps.
"""

from __future__ import annotations

import numpy as np
from numba import njit

GAMMA = np.uint64(0x9E3779B97F4A7C15)
MUL1 = np.uint64(0xBF58476D1CE4E5B9)
MUL2 = np.uint64(0x94D049BB133111EB)
UNIFORM_SALT = np.uint64(0xD1B54A32D192ED03)
SEED_SALT = np.uint64(0x5851F42D4C957F2D)
INV_2_53 = 1.0 / 9007199254740992.0


@njit(cache=True, nogil=True)
def mix64(z: np.uint64) -> np.uint64:
    z = (z ^ (z >> np.uint64(30))) * MUL1
    z = (z ^ (z >> np.uint64(27))) * MUL2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def child_state(s: np.uint64, k: int) -> np.uint64:
    return mix64(s + np.uint64(k + 1) * GAMMA)


@njit(cache=True, nogil=True)
def node_uniform(s: np.uint64) -> float:
    return np.float64(mix64(s ^ UNIFORM_SALT) >> np.uint64(11)) * INV_2_53


@njit(cache=True, nogil=True)
def root_state(seed: np.uint64, trial: int) -> np.uint64:
    return child_state(mix64(np.uint64(seed) ^ SEED_SALT), trial)


@njit(cache=True, nogil=True)
def fingerprint(s: np.uint64) -> np.int64:
    """30 bits of a node's state: summed over a tree's nodes it identifies the tree
    (the set of root-to-node paths) with overwhelming probability."""
    return np.int64(mix64(s) >> np.uint64(34))


def seed_value(seed: int) -> np.uint64:
    """A user's seed as the uint64 the kernels take (any Python int, reduced mod 2^64)."""
    return np.uint64(int(seed) % (1 << 64))

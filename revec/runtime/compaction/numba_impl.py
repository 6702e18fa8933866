"""Compaction in numba with explicit table lookups.

LLVM does not vectorise ``if m[i]: out[j] = x[i]; j += 1`` (DESIGN.md Sec. 5), so the loops
here work in groups of 8 lanes: the 8 mask bytes become an 8-bit mask ``b``; then either

* ``shuffle``: ``out[j + k] = x[i + shuf8[b, k]]`` for k < 8 (a gather by the shuffle entry;
  padded lanes repeat lane 0 and are overwritten by the next group), ``j += adv8[b]``;
* ``prefix``: ``out[j + prefix8[b, k]] = x[i + k]`` for k < 8 (every lane stored at its
  prefix-sum position, in lane order: unselected lanes are overwritten), ``j += adv8[b]``.

Both write at most up to ``out[i + 7]`` for a group starting at ``i`` (j <= i), so ``out``
needs only n elements and may be ``x`` itself.  The functions take unsigned-integer views of
any 1/2/4/8-byte dtype (bits are moved, not values), and the mask as uint8.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from revec.runtime.compaction.tables import advance_table, prefix_table, shuffle_table

SHUF8 = np.ascontiguousarray(shuffle_table(8, pad=0))
PREFIX8 = np.ascontiguousarray(prefix_table(8))
ADV8 = np.ascontiguousarray(advance_table(8))


@njit(cache=True, nogil=True, inline="always")
def _bits8(m, i):
    b = 0
    for k in range(8):
        b |= np.int64(m[i + k] != 0) << k
    return b


@njit(cache=True, nogil=True)
def compact_shuffle(x, m, out):
    n = x.size
    j = 0
    i = 0
    while i + 8 <= n:
        b = _bits8(m, i)
        for k in range(8):
            out[j + k] = x[i + SHUF8[b, k]]
        j += ADV8[b]
        i += 8
    while i < n:
        v = x[i]
        out[j] = v
        j += np.int64(m[i] != 0)
        i += 1
    return j


@njit(cache=True, nogil=True)
def compact_prefix(x, m, out):
    n = x.size
    j = 0
    i = 0
    while i + 8 <= n:
        b = _bits8(m, i)
        for k in range(8):
            out[j + PREFIX8[b, k]] = x[i + k]
        j += ADV8[b]
        i += 8
    while i < n:
        v = x[i]
        out[j] = v
        j += np.int64(m[i] != 0)
        i += 1
    return j


@njit(cache=True, nogil=True)
def split_shuffle(x, m, t, f):
    n = x.size
    a = 0
    c = 0
    i = 0
    while i + 8 <= n:
        b = _bits8(m, i)
        nb = b ^ 0xFF
        for k in range(8):
            t[a + k] = x[i + SHUF8[b, k]]
        for k in range(8):
            f[c + k] = x[i + SHUF8[nb, k]]
        a += ADV8[b]
        c += ADV8[nb]
        i += 8
    while i < n:
        v = x[i]
        s = np.int64(m[i] != 0)
        t[a] = v
        f[c] = v
        a += s
        c += 1 - s
        i += 1
    return a


@njit(cache=True, nogil=True)
def split_prefix(x, m, t, f):
    n = x.size
    a = 0
    c = 0
    i = 0
    while i + 8 <= n:
        b = _bits8(m, i)
        nb = b ^ 0xFF
        for k in range(8):
            t[a + PREFIX8[b, k]] = x[i + k]
            f[c + PREFIX8[nb, k]] = x[i + k]
        a += ADV8[b]
        c += ADV8[nb]
        i += 8
    while i < n:
        v = x[i]
        s = np.int64(m[i] != 0)
        t[a] = v
        f[c] = v
        a += s
        c += 1 - s
        i += 1
    return a


@njit(cache=True, nogil=True)
def bench_compact(x, m, out, reps, prefix):
    """Run a compaction ``reps`` times inside compiled code (for timing)."""
    acc = 0
    for _ in range(reps):
        if prefix:
            acc += compact_prefix(x, m, out)
        else:
            acc += compact_shuffle(x, m, out)
    return acc


COMPACT = {"numba": compact_shuffle, "numba-prefix": compact_prefix}
SPLIT = {"numba": split_shuffle, "numba-prefix": split_prefix}

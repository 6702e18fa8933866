"""The split of one node of a uniform (n, h) tree: weights, scan order, and the
recorded scan tables (see :mod:`revec.treegen.sampler` for the method)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

AT_MOST = 0
GREEN = 1
OPTIONS = 4


@njit(cache=True, nogil=True)
def _cap(h: int) -> int:
    """Largest interior count of a tree of height at most h (2^(h-1) - 1)."""
    if h <= 0:
        return -1
    if h >= 40:
        return 1 << 40
    return (1 << (h - 1)) - 1


@njit(cache=True, nogil=True)
def position_range(m: int, h: int, kind: int) -> tuple[int, int]:
    """Inclusive range of positions (smaller side) of node (m, h, kind), m >= 1."""
    return max(0, m - 1 - _cap(h - 1)), (m - 1) // 2


@njit(cache=True, nogil=True)
def position_weights(la: np.ndarray, le: np.ndarray, m: int, h: int, kind: int,
                     s: int) -> tuple[float, float, float, float]:
    """The four option weights of position s."""
    j = m - 1 - s
    if kind == AT_MOST:
        w = np.exp(la[h - 1, s] + la[h - 1, j] - la[h, m])
        return w, (0.0 if s == j else w), 0.0, 0.0
    total = le[h, m]
    a0 = np.exp(le[h - 1, s] + la[h - 1, j] - total)
    b0 = np.exp(la[h - 2, s] + le[h - 1, j] - total)
    if s == j:
        return a0, b0, 0.0, 0.0
    a1 = np.exp(le[h - 1, j] + la[h - 1, s] - total)
    b1 = np.exp(la[h - 2, j] + le[h - 1, s] - total)
    return a0, b0, a1, b1


@njit(cache=True, nogil=True)
def position_log_weight(la: np.ndarray, le: np.ndarray, m: int, h: int, kind: int,
                        s: int) -> float:
    """Log of the largest option weight of position s (unnormalised)."""
    j = m - 1 - s
    if kind == AT_MOST:
        return la[h - 1, s] + la[h - 1, j]
    return max(max(le[h - 1, s] + la[h - 1, j], la[h - 2, s] + le[h - 1, j]),
               max(le[h - 1, j] + la[h - 1, s], la[h - 2, j] + le[h - 1, s]))


@njit(cache=True, nogil=True)
def _mode(la: np.ndarray, le: np.ndarray, m: int, h: int, kind: int) -> int:
    lo, hi = position_range(m, h, kind)
    if hi <= lo:
        return lo
    stride = max(1, (hi - lo) // 64)
    best = lo
    best_w = -np.inf
    for p in range(lo, hi + 1, stride):
        w = position_log_weight(la, le, m, h, kind, p)
        if w > best_w:
            best_w = w
            best = p
    a = max(lo, best - stride)
    b = min(hi, best + stride)
    for p in range(a, b + 1):
        w = position_log_weight(la, le, m, h, kind, p)
        if w > best_w:
            best_w = w
            best = p
    return best


@njit(cache=True, nogil=True, parallel=True)
def mode_table(la: np.ndarray, le: np.ndarray, kind: int) -> np.ndarray:
    """Start position of the scan for every (h, m): an approximate mode (only the
    speed of sampling depends on it, never the distribution)."""
    hs, ms = la.shape
    out = np.zeros((hs, ms), np.int32)
    for idx in prange(hs * ms):
        h = idx // ms
        m = idx - h * ms
        if h >= 2 and m >= 1:
            if kind == AT_MOST and la[h, m] > -np.inf:
                out[h, m] = _mode(la, le, m, h, kind)
            elif kind == GREEN and le[h, m] > -np.inf:
                out[h, m] = _mode(la, le, m, h, kind)
    return out


@njit(cache=True, nogil=True)
def _next_position(up: int, down: int, lo: int, hi: int, turn: int
                   ) -> tuple[int, int, int, int]:
    """(position, up, down, turn): the scan order, outwards from the start."""
    if up > hi:
        return down, up, down - 1, turn
    if down < lo:
        return up, up + 1, down, turn
    if turn == 0:
        return up, up + 1, down, 1
    return down, up, down - 1, 0


@njit(cache=True, nogil=True)
def choose_split(la: np.ndarray, le: np.ndarray, start: np.ndarray, m: int, h: int,
                 kind: int, u: float) -> tuple[int, int]:
    """(position, option) for a node (m >= 1) with uniform number u."""
    lo, hi = position_range(m, h, kind)
    up = start[h, m]
    down = up - 1
    turn = 0
    acc = 0.0
    last_pos = -1
    last_opt = 0
    while up <= hi or down >= lo:
        pos, up, down, turn = _next_position(up, down, lo, hi, turn)
        w0, w1, w2, w3 = position_weights(la, le, m, h, kind, pos)
        s1 = w0 + w1
        s2 = s1 + w2
        s3 = s2 + w3
        if s3 > 0.0:
            if u < acc + s3:
                if w0 > 0.0 and u < acc + w0:
                    return pos, 0
                if w1 > 0.0 and u < acc + s1:
                    return pos, 1
                if w2 > 0.0 and u < acc + s2:
                    return pos, 2
                if w3 > 0.0:
                    return pos, 3
                return pos, 2 if w2 > 0.0 else (1 if w1 > 0.0 else 0)
            last_pos = pos
            last_opt = 3 if w3 > 0.0 else (2 if w2 > 0.0 else (1 if w1 > 0.0 else 0))
        acc += s3
    return last_pos, last_opt


@njit(cache=True, nogil=True)
def children_of(m: int, h: int, kind: int, pos: int, opt: int
                ) -> tuple[int, int, int, int, int, int]:
    """(left m, left h, left kind, right m, right h, right kind)."""
    i = pos if opt == 0 or (kind == GREEN and opt == 1) else m - 1 - pos
    j = m - 1 - i
    if kind == AT_MOST:
        return i, h - 1, AT_MOST, j, h - 1, AT_MOST
    if opt == 0 or opt == 2:
        return i, h - 1, GREEN, j, h - 1, AT_MOST
    return i, h - 2, AT_MOST, j, h - 1, GREEN


SMALL = 128  # nodes with at most this many interior nodes sample from tables


@njit(cache=True, nogil=True)
def table_height(m: int, h: int, kind: int) -> int:
    """Height row of the split tables for node (m, h, kind): a budget beyond m + 1
    does not constrain m interior nodes (identical weights), so it is clipped."""
    return min(h, m + 1) if kind == AT_MOST else min(h, m + 2)


@njit(cache=True, nogil=True)
def build_split_tables(la: np.ndarray, le: np.ndarray, start_a: np.ndarray,
                       start_e: np.ndarray, small: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The scan of :func:`choose_split` recorded for every node with m <= small:
    for kind k, table row h = table_height(m, h, k) and scan step t,
    ``cum[k, h, m, t]`` (the running sum after the step; +inf at the last step of
    positive weight), ``opt[k, h, m, t, o]`` (the threshold of option o: the sum before
    the step plus the option weights up to o; -inf for an option of zero weight, +inf
    for the last option of positive weight) and ``pos[k, h, m, t]``; steps of zero
    weight are left out and ``length[k, h, m]`` counts the steps."""
    hs = min(la.shape[0], small + 3)
    steps = small // 2 + 1  # positions are the smaller side: at most (m + 1) // 2 of them
    cum = np.full((2, hs, small + 1, steps), np.inf)
    opt = np.full((2, hs, small + 1, steps, OPTIONS), -np.inf)
    pos_t = np.zeros((2, hs, small + 1, steps), np.int32)
    length = np.zeros((2, hs, small + 1), np.int32)
    for kind in range(2):
        start = start_a if kind == AT_MOST else start_e
        for h in range(2, hs):
            for m in range(1, min(small, la.shape[1] - 1) + 1):
                if table_height(m, h, kind) != h:
                    continue
                if kind == AT_MOST and la[h, m] == -np.inf:
                    continue
                if kind == GREEN and le[h, m] == -np.inf:
                    continue
                lo, hi = position_range(m, h, kind)
                up = start[h, m]
                down = up - 1
                turn = 0
                acc = 0.0
                t = 0
                while up <= hi or down >= lo:
                    p, up, down, turn = _next_position(up, down, lo, hi, turn)
                    w0, w1, w2, w3 = position_weights(la, le, m, h, kind, p)
                    s1 = w0 + w1
                    s2 = s1 + w2
                    s3 = s2 + w3
                    if s3 > 0.0:
                        cum[kind, h, m, t] = acc + s3
                        last = 0
                        if w0 > 0.0:
                            opt[kind, h, m, t, 0] = acc + w0
                        if w1 > 0.0:
                            opt[kind, h, m, t, 1] = acc + s1
                            last = 1
                        if w2 > 0.0:
                            opt[kind, h, m, t, 2] = acc + s2
                            last = 2
                        if w3 > 0.0:
                            last = 3
                        opt[kind, h, m, t, last] = np.inf
                        pos_t[kind, h, m, t] = p
                        t += 1
                    acc += s3
                cum[kind, h, m, t - 1] = np.inf
                length[kind, h, m] = t
    return cum, opt, pos_t, length


@njit(cache=True, nogil=True)
def choose_split_small(cum: np.ndarray, opt: np.ndarray, pos_t: np.ndarray, m: int,
                       h: int, kind: int, u: float) -> tuple[int, int]:
    """:func:`choose_split` by the recorded tables (same result, no exp)."""
    hr = table_height(m, h, kind)
    t = 0
    while u >= cum[kind, hr, m, t]:
        t += 1
    o = 0
    while not u < opt[kind, hr, m, t, o]:
        o += 1
    return pos_t[kind, hr, m, t], o

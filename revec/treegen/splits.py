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
def choose_split_large(la: np.ndarray, le: np.ndarray, start: np.ndarray, m: int, h: int,
                       kind: int, u: float) -> tuple[int, int]:
    """:func:`choose_split` with the option arithmetic written out for each kind: the
    same floating-point operations in the same order (adding a zero weight changes no
    sum), so the same result; fewer operations and branches per step."""
    lo, hi = position_range(m, h, kind)
    up = start[h, m]
    down = up - 1
    turn = 0
    acc = 0.0
    last_pos = -1
    last_opt = 0
    if kind == AT_MOST:
        total = la[h, m]
        while up <= hi or down >= lo:
            pos, up, down, turn = _next_position(up, down, lo, hi, turn)
            j = m - 1 - pos
            w = np.exp(la[h - 1, pos] + la[h - 1, j] - total)
            if w > 0.0:
                if pos == j:  # one option
                    if u < acc + w:
                        return pos, 0
                    last_pos = pos
                    last_opt = 0
                    acc += w
                else:  # two options of weight w
                    s1 = w + w
                    if u < acc + s1:
                        return pos, 0 if u < acc + w else 1
                    last_pos = pos
                    last_opt = 1
                    acc += s1
        return last_pos, last_opt
    total = le[h, m]
    while up <= hi or down >= lo:
        pos, up, down, turn = _next_position(up, down, lo, hi, turn)
        j = m - 1 - pos
        w0 = np.exp(le[h - 1, pos] + la[h - 1, j] - total)
        w1 = np.exp(la[h - 2, pos] + le[h - 1, j] - total)
        if pos == j:
            w2 = 0.0
            w3 = 0.0
        else:
            w2 = np.exp(le[h - 1, j] + la[h - 1, pos] - total)
            w3 = np.exp(la[h - 2, j] + le[h - 1, pos] - total)
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


LOG4 = float(np.log(4.0))
SCALED_DELTA = 1e-7  # margin of the scaled scan (see choose_split_scaled)
SCALED_MAX_LOG = 1e6  # larger log counts (trees of over ~10^6 nodes): exact scan only


@njit(cache=True, nogil=True)
def scaled_tables(la: np.ndarray, le: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sc[0, h, s] = exp(la[h, s] - s log 4 - sd[0, h])`` and ``sc[1]`` the same for
    ``le``, with ``sd[k, h]`` the row's maximum of ``log count - s log 4`` (so every
    entry is at most 1).  A weight is then a product: for a node (m, h) at most h,
    ``w(s) = sc[0, h-1, s] sc[0, h-1, j] exp((m-1) log 4 + 2 sd[0, h-1] - la[h, m])``.
    ``sd`` is NaN (scaled scan disabled) when a log count exceeds SCALED_MAX_LOG."""
    hs, ms = la.shape
    sc = np.zeros((2, hs, ms))
    sd = np.full((2, hs), -np.inf)
    big = False
    for k in range(2):
        t = la if k == 0 else le
        for h in range(hs):
            d = -np.inf
            for x in range(ms):
                v = t[h, x]
                if v > -np.inf:
                    if v > SCALED_MAX_LOG:
                        big = True
                    d = max(d, v - LOG4 * x)
            sd[k, h] = d
            if d > -np.inf:
                for x in range(ms):
                    sc[k, h, x] = np.exp(t[h, x] - LOG4 * x - d)
    if big:
        sd[:, :] = np.nan
    return sc, sd


@njit(cache=True, nogil=True)
def choose_split_scaled(la: np.ndarray, le: np.ndarray, sc: np.ndarray, sd: np.ndarray,
                        start: np.ndarray, m: int, h: int, kind: int, u: float
                        ) -> tuple[int, int, bool]:
    """:func:`choose_split` from products of :func:`scaled_tables` instead of an exp per
    weight: ``(position, option, True)``, or ``(-1, -1, False)`` when u lies within
    SCALED_DELTA of a running sum this scan compares it with (the caller then runs the
    exact scan).

    Why the result is the exact scan's whenever it is given: both scans visit the same
    positions in the same order; a scaled weight differs from the exact one by a
    relative error of a few units in the last place of the log counts' magnitude
    (|log count| <= SCALED_MAX_LOG: below 1e-9) plus underflow (below 1e-280 per
    weight), and a running sum over at most m/2 steps adds at most m ulp(1); so every
    running sum and option threshold of the two scans differs by far less than
    SCALED_DELTA / 2.  With u more than SCALED_DELTA away from each sum compared, u falls
    on the same side of every exact sum as of the scaled one: the same step, and the
    same option (an option of weight below 2 SCALED_DELTA, possibly zero in one scan and
    not in the other, has its two thresholds within SCALED_DELTA of u or both on the
    same side of it).  tests/test_treegen_sampler.py checks the agreement on random and
    on boundary values of u."""
    lo, hi = position_range(m, h, kind)
    up = start[h, m]
    down = up - 1
    turn = 0
    acc = 0.0
    delta = SCALED_DELTA
    if kind == AT_MOST:
        k = np.exp(LOG4 * (m - 1) + 2.0 * sd[0, h - 1] - la[h, m])
        if not k < 1e280:  # overflow, or NaN (disabled)
            return -1, -1, False
        while up <= hi or down >= lo:
            pos, up, down, turn = _next_position(up, down, lo, hi, turn)
            j = m - 1 - pos
            w = sc[0, h - 1, pos] * sc[0, h - 1, j] * k
            s3 = w if pos == j else w + w
            if u < acc + s3 + delta:
                if u - acc <= delta or acc + s3 - u <= delta:
                    return -1, -1, False
                if pos == j:
                    return pos, 0, True
                if abs(u - (acc + w)) <= delta:
                    return -1, -1, False
                return pos, 0 if u < acc + w else 1, True
            acc += s3
        return -1, -1, False
    ka = np.exp(LOG4 * (m - 1) + sd[1, h - 1] + sd[0, h - 1] - le[h, m])
    kb = np.exp(LOG4 * (m - 1) + sd[0, h - 2] + sd[1, h - 1] - le[h, m])
    if not (ka < 1e280 and kb < 1e280):
        return -1, -1, False
    while up <= hi or down >= lo:
        pos, up, down, turn = _next_position(up, down, lo, hi, turn)
        j = m - 1 - pos
        w0 = sc[1, h - 1, pos] * sc[0, h - 1, j] * ka
        w1 = sc[0, h - 2, pos] * sc[1, h - 1, j] * kb
        if pos == j:
            w2 = 0.0
            w3 = 0.0
        else:
            w2 = sc[1, h - 1, j] * sc[0, h - 1, pos] * ka
            w3 = sc[0, h - 2, j] * sc[1, h - 1, pos] * kb
        s1 = w0 + w1
        s2 = s1 + w2
        s3 = s2 + w3
        if u < acc + s3 + delta:
            if (u - acc <= delta or abs(u - (acc + w0)) <= delta
                    or abs(u - (acc + s1)) <= delta or abs(u - (acc + s2)) <= delta
                    or acc + s3 - u <= delta):
                return -1, -1, False
            if w0 > 0.0 and u < acc + w0:
                return pos, 0, True
            if w1 > 0.0 and u < acc + s1:
                return pos, 1, True
            if w2 > 0.0 and u < acc + s2:
                return pos, 2, True
            if w3 > 0.0:
                return pos, 3, True
            return -1, -1, False
        acc += s3
    return -1, -1, False


@njit(cache=True, nogil=True)
def children_of(m: int, h: int, kind: int, pos: int, opt: int
                ) -> tuple[int, int, int, int, int, int]:
    """(left m, left h, left kind, right m, right h, right kind), without branches:

    * at most h: option 0 puts the smaller side (pos) left, option 1 right; both
      children (at most h - 1);
    * green: options 0 / 1 make the left child pos interior nodes, 2 / 3 the right one;
      options 0 / 2 make the left child green (h - 1) and the right one at most h - 1,
      options 1 / 3 the left one at most h - 2 and the right one green (h - 1)."""
    swap = opt >> kind  # AT_MOST = 0, GREEN = 1
    b = opt & kind  # green, options 1 / 3: the right child is the green one
    i = pos + swap * (m - 1 - 2 * pos)
    return i, h - 1 - b, kind - b, m - 1 - i, h - 1, b


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
def compact_split_tables(cum: np.ndarray, opt: np.ndarray, pos_t: np.ndarray,
                         length: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The recorded scans of :func:`build_split_tables` packed for the sampler:
    ``off[k, h, m]`` is the first row of node (m, h, kind k) in ``rec`` and ``pos``;
    row i holds a step's ``(cum, t_0, t_1, t_2)`` (one step in 32 bytes) and ``pos[i]``
    its position.  Steps of one node are consecutive.

    The option thresholds are made non-decreasing: an option of zero weight (``-inf``
    in ``opt``) gets the threshold before it (the step's starting sum for option 0).
    Such an option is then never the first with ``u < t_o`` (an earlier one would be
    first), and u is never below the step's starting sum, so the first option with
    ``u < t_o`` is still the option of :func:`choose_split`, and it equals the number
    of thresholds ``<= u`` (option 3's threshold, +inf when it has weight, is
    implicit)."""
    kinds, hs, ms, _ = cum.shape
    off = np.zeros((kinds, hs, ms), np.int32)
    total = 0
    for k in range(kinds):
        for h in range(hs):
            for m in range(ms):
                off[k, h, m] = total
                total += length[k, h, m]
    rec = np.empty((total, 4))
    pos = np.empty(total, np.int32)
    for k in range(kinds):
        for h in range(hs):
            for m in range(ms):
                i = off[k, h, m]
                for t in range(length[k, h, m]):
                    rec[i + t, 0] = cum[k, h, m, t]
                    before = 0.0 if t == 0 else cum[k, h, m, t - 1]  # exact running sum
                    for o in range(3):
                        th = opt[k, h, m, t, o]
                        if th == -np.inf:
                            th = before
                        rec[i + t, 1 + o] = th
                        before = th
                    pos[i + t] = pos_t[k, h, m, t]
    return off, rec, pos


@njit(cache=True, nogil=True)
def choose_split_small(off: np.ndarray, rec: np.ndarray, pos: np.ndarray, m: int, h: int,
                       kind: int, u: float) -> tuple[int, int]:
    """:func:`choose_split` by the recorded tables (:func:`compact_split_tables`; same
    result, no exp): the first step with ``u < cum``, then the number of its option
    thresholds ``<= u`` (no branch)."""
    i = off[kind, table_height(m, h, kind), m]
    while u >= rec[i, 0]:
        i += 1
    return pos[i], (u >= rec[i, 1]) + (u >= rec[i, 2]) + (u >= rec[i, 3])

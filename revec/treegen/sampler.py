"""Uniform sampling of full binary trees with n nodes and height exactly h.

A node to be built is (m, h, green): ``m`` interior nodes below and including it, and
a height budget ``h``.  A *green* node must have height exactly h (the root, and one
child of every green node: the green path); any other node has height at most h.

* at most h, m >= 1: the smaller side ``s = min(i, m - 1 - i)`` (i = left interior
  count) has weight ``T(i, h-1) T(m-1-i, h-1) / T(m, h)``, doubled when the two
  sides differ; then the left side is the small one with probability 1/2.
* exactly h, m >= 1: left interior count ``i`` has weight ``A_i + B_i`` with
  ``A_i = E(i, h-1) T(m-1-i, h-1) / E(m, h)`` (green left child, right child of height
  at most h - 1) and ``B_i = T(i, h-2) E(m-1-i, h-1) / E(m, h)`` (green right child).

So every tree of (n, h) is equally likely.  Weights are computed in log space from the
exact counts (:func:`revec.treegen.counts.log_tables`), never overflow, and the split is
the inverse CDF of the node's uniform number over the positions scanned in a fixed
order: from a precomputed (approximate) mode outwards, alternately up and down, so the
expected scan is short whether the distribution is peaked at the ends (tall budgets) or
in the middle (tight budgets).  Within a position the first option (small side left;
green left) is taken when ``u < acc + w_first``.  If rounding leaves ``u`` beyond the
total, the last position with positive weight is taken (second option if it has
weight).  :func:`split_tables` records exactly these cumulative sums for the task
program ``benchmarks/treebuild.py``, which therefore builds the same trees.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import njit, prange

from revec.treegen.counts import check_size_height, log_tables
from revec.treegen.rng import child_state, node_uniform, root_state

AT_MOST = 0
GREEN = 1


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
    """Inclusive range of positions of node (m, h, kind), m >= 1."""
    if kind == AT_MOST:
        return max(0, m - 1 - _cap(h - 1)), (m - 1) // 2
    return max(0, m - 1 - _cap(h - 1)), min(m - 1, _cap(h - 1))


@njit(cache=True, nogil=True)
def position_weights(la: np.ndarray, le: np.ndarray, m: int, h: int, kind: int,
                     pos: int) -> tuple[float, float]:
    """(first option, second option) weights of one position."""
    j = m - 1 - pos
    if kind == AT_MOST:
        w = np.exp(la[h - 1, pos] + la[h - 1, j] - la[h, m])
        if pos == j:
            return w, 0.0
        return w, w
    total = le[h, m]
    a = np.exp(le[h - 1, pos] + la[h - 1, j] - total)
    b = 0.0
    if h >= 2:
        b = np.exp(la[h - 2, pos] + le[h - 1, j] - total)
    return a, b


@njit(cache=True, nogil=True)
def position_log_weight(la: np.ndarray, le: np.ndarray, m: int, h: int, kind: int,
                        pos: int) -> float:
    j = m - 1 - pos
    if kind == AT_MOST:
        return la[h - 1, pos] + la[h - 1, j]
    a = le[h - 1, pos] + la[h - 1, j]
    b = la[h - 2, pos] + le[h - 1, j] if h >= 2 else -np.inf
    return max(a, b)


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
def choose_split(la: np.ndarray, le: np.ndarray, start: np.ndarray, m: int, h: int,
                 kind: int, u: float) -> tuple[int, int]:
    """(position, option) for a node (m >= 1) with uniform number u."""
    lo, hi = position_range(m, h, kind)
    p0 = start[h, m]
    up = p0
    down = p0 - 1
    acc = 0.0
    last_pos = -1
    last_opt = 0
    turn = 0
    while up <= hi or down >= lo:
        if up > hi:
            pos = down
            down -= 1
        elif down < lo:
            pos = up
            up += 1
        elif turn == 0:
            pos = up
            up += 1
            turn = 1
        else:
            pos = down
            down -= 1
            turn = 0
        w1, w2 = position_weights(la, le, m, h, kind, pos)
        w = w1 + w2
        if w > 0.0:
            if u < acc + w:
                if w2 == 0.0 or u < acc + w1:
                    return pos, 0
                return pos, 1
            last_pos = pos
            last_opt = 0 if w2 == 0.0 else 1
        acc += w
    return last_pos, last_opt


@njit(cache=True, nogil=True)
def children_of(m: int, h: int, kind: int, pos: int, opt: int
                ) -> tuple[int, int, int, int, int, int]:
    """(left m, left h, left kind, right m, right h, right kind)."""
    j = m - 1 - pos
    if kind == AT_MOST:
        if opt == 0:
            return pos, h - 1, AT_MOST, j, h - 1, AT_MOST
        return j, h - 1, AT_MOST, pos, h - 1, AT_MOST
    if opt == 0:
        return pos, h - 1, GREEN, j, h - 1, AT_MOST
    return pos, h - 2, AT_MOST, j, h - 1, GREEN


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
    ``cum[k, h, m, t]`` (the running sum after the step; +inf at the last step with
    positive weight), ``mid[k, h, m, t]`` (sum before the step plus the first option's
    weight; +inf if the second option has no weight), ``pos[k, h, m, t]``; steps of
    zero weight are left out and ``length[k, h, m]`` counts the steps."""
    hs = min(la.shape[0], small + 3)
    cum = np.full((2, hs, small + 1, small), np.inf)
    mid = np.full((2, hs, small + 1, small), np.inf)
    pos_t = np.zeros((2, hs, small + 1, small), np.int32)
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
                p0 = start[h, m]
                up = p0
                down = p0 - 1
                acc = 0.0
                turn = 0
                t = 0
                while up <= hi or down >= lo:
                    if up > hi:
                        p = down
                        down -= 1
                    elif down < lo:
                        p = up
                        up += 1
                    elif turn == 0:
                        p = up
                        up += 1
                        turn = 1
                    else:
                        p = down
                        down -= 1
                        turn = 0
                    w1, w2 = position_weights(la, le, m, h, kind, p)
                    w = w1 + w2
                    if w > 0.0:
                        cum[kind, h, m, t] = acc + w
                        mid[kind, h, m, t] = np.inf if w2 == 0.0 else acc + w1
                        pos_t[kind, h, m, t] = p
                        t += 1
                    acc += w
                cum[kind, h, m, t - 1] = np.inf
                length[kind, h, m] = t
    return cum, mid, pos_t, length


@njit(cache=True, nogil=True)
def choose_split_small(cum: np.ndarray, mid: np.ndarray, pos_t: np.ndarray, m: int,
                       h: int, kind: int, u: float) -> tuple[int, int]:
    """:func:`choose_split` by the recorded tables (same result, no exp)."""
    hr = table_height(m, h, kind)
    t = 0
    while u >= cum[kind, hr, m, t]:
        t += 1
    return pos_t[kind, hr, m, t], 0 if u < mid[kind, hr, m, t] else 1


@njit(cache=True, nogil=True)
def sample_tree(la: np.ndarray, le: np.ndarray, start_a: np.ndarray, start_e: np.ndarray,
                cum: np.ndarray, mid: np.ndarray, pos_t: np.ndarray, m_root: int, h_root: int, state: np.uint64, first_child: np.ndarray,
                node_m: np.ndarray, node_h: np.ndarray, node_kind: np.ndarray,
                node_state: np.ndarray, level_start: np.ndarray) -> int:
    """Build one tree breadth first into the node arrays (capacity 2 m_root + 1).

    Node 0 is the root; the children of the interior nodes of one level are stored
    in the next level in their parents' order, left child first, so node x's children
    are ``first_child[x]`` and ``first_child[x] + 1`` (-1: a leaf).  ``level_start[d]``
    is the first node of level d; returns the number of levels."""
    node_m[0] = m_root
    node_h[0] = h_root
    node_kind[0] = GREEN
    node_state[0] = state
    begin = 0
    end = 1
    levels = 0
    while begin < end:
        level_start[levels] = begin
        levels += 1
        top = end
        for x in range(begin, end):
            m = node_m[x]
            if m == 0:
                first_child[x] = -1
                continue
            h = node_h[x]
            kind = node_kind[x]
            s = node_state[x]
            u = node_uniform(s)
            if m < cum.shape[2]:
                pos, opt = choose_split_small(cum, mid, pos_t, m, h, kind, u)
            elif kind == AT_MOST:
                pos, opt = choose_split(la, le, start_a, m, h, kind, u)
            else:
                pos, opt = choose_split(la, le, start_e, m, h, kind, u)
            lm, lh, lk, rm, rh, rk = children_of(m, h, kind, pos, opt)
            first_child[x] = top
            node_m[top] = lm
            node_h[top] = lh
            node_kind[top] = lk
            node_state[top] = child_state(s, 0)
            node_m[top + 1] = rm
            node_h[top + 1] = rh
            node_kind[top + 1] = rk
            node_state[top + 1] = child_state(s, 1)
            top += 2
        begin = end
        end = top
    level_start[levels] = end
    return levels


@dataclass(frozen=True)
class Tables:
    """Everything the kernels read for trees of up to ``max_nodes`` nodes and height
    up to ``max_height``."""

    max_nodes: int
    max_height: int
    la: np.ndarray
    le: np.ndarray
    start_a: np.ndarray
    start_e: np.ndarray
    cum: np.ndarray
    mid: np.ndarray
    pos: np.ndarray
    length: np.ndarray

    def kernel_args(self) -> tuple[np.ndarray, ...]:
        return (self.la, self.le, self.start_a, self.start_e, self.cum, self.mid, self.pos)


@lru_cache(maxsize=4)
def _tables(max_interior: int, max_height: int) -> Tables:
    la, le = log_tables(max_interior, max_height)
    start_a = mode_table(la, le, AT_MOST)
    start_e = mode_table(la, le, GREEN)
    cum, mid, pos, length = build_split_tables(la, le, start_a, start_e, SMALL)
    return Tables(2 * max_interior + 1, max_height, la, le, start_a, start_e, cum, mid, pos,
                  length)


def tables_for(n: int, h: int) -> Tables:
    """Sampling tables for trees of n nodes and height h (validated)."""
    check_size_height(n, h)
    return _tables((n - 1) // 2, h)


class TreeBuffers:
    """Reusable node arrays for one tree of up to n nodes."""

    def __init__(self, n: int, h: int) -> None:
        self.first_child = np.empty(n, np.int32)
        self.node_m = np.empty(n, np.int32)
        self.node_h = np.empty(n, np.int32)
        self.node_kind = np.empty(n, np.int8)
        self.node_state = np.empty(n, np.uint64)
        self.level_start = np.empty(h + 2, np.int32)


@njit(cache=True, nogil=True)
def preorder(first_child: np.ndarray) -> str:
    out = np.empty(first_child.shape[0], np.uint8)
    stack = np.empty(first_child.shape[0] + 1, np.int32)
    sp = 0
    stack[0] = 0
    k = 0
    while sp >= 0:
        x = stack[sp]
        sp -= 1
        f = first_child[x]
        if f < 0:
            out[k] = 48
        else:
            out[k] = 49
            sp += 1
            stack[sp] = f + 1
            sp += 1
            stack[sp] = f
        k += 1
    return "".join([chr(c) for c in out[:k]])


def sample_preorders(n: int, h: int, count: int, seed: int) -> list[str]:
    """``count`` uniform trees of (n, h) as preorder strings (1 interior, 0 leaf); tree
    t is the simulator's trial t for this seed."""
    from revec.treegen.rng import seed_value

    t = tables_for(n, h)
    buf = TreeBuffers(n, h)
    out = []
    s = seed_value(seed)
    for trial in range(count):
        sample_tree(*t.kernel_args(), (n - 1) // 2, h, np.uint64(root_state(s, trial)),
                    buf.first_child, buf.node_m, buf.node_h, buf.node_kind, buf.node_state,
                    buf.level_start)
        out.append(preorder(buf.first_child[:n]))
    return out


def task_tables(max_nodes: int, max_height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                          int, int]:
    """The split tables as the 2-D arrays the task program ``benchmarks/treebuild.py``
    reads: ``(cum, mid, pos, heights, sizes)``, row ``(kind * heights + table_height(m,
    h, kind)) * sizes + m`` holding the scan steps of node (m, h, kind); trees of up to
    ``max_nodes`` nodes (at most ``2 * SMALL + 1``) and height ``max_height``."""
    if max_nodes > 2 * SMALL + 1:
        raise ValueError(f"task tables cover at most {2 * SMALL + 1} nodes")
    t = _tables((max_nodes - 1) // 2, max_height)
    k, hs, ms, steps = t.cum.shape
    return (np.ascontiguousarray(t.cum.reshape(k * hs * ms, steps)),
            np.ascontiguousarray(t.mid.reshape(k * hs * ms, steps)),
            np.ascontiguousarray(t.pos.reshape(k * hs * ms, steps)), hs, ms)


@dataclass(frozen=True)
class TreeSummary:
    nodes: int
    leaves: int
    levels: int
    fingerprint: int  # sum over nodes of rng.fingerprint(state)
    preorder: str


def tree_summary(n: int, h: int, state: int) -> TreeSummary:
    """The sampler's tree for a given root state, summarised as treebuild reports it."""
    from revec.treegen.rng import fingerprint

    t = tables_for(n, h)
    buf = TreeBuffers(n, h)
    levels = sample_tree(*t.kernel_args(), (n - 1) // 2, h, np.uint64(state), buf.first_child,
                         buf.node_m, buf.node_h, buf.node_kind, buf.node_state,
                         buf.level_start)
    fp = sum(int(fingerprint(s)) for s in buf.node_state[:n])
    leaves = int((buf.first_child[:n] < 0).sum())
    return TreeSummary(n, leaves, levels, fp, preorder(buf.first_child[:n]))

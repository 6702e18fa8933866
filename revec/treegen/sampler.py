"""Uniform sampling of full binary trees with n nodes and height exactly h.

A node to be built is (m, h, green): ``m`` interior nodes below and including it, and
a height budget ``h``.  A *green* node must have height exactly h (the root, and one
child of every green node: the green path); any other node has height at most h.

The split is the left child's interior count ``i`` (the right one has ``j = m-1-i``).
Positions are the smaller side ``s = min(i, j)``; a position has up to four options:

* at most h: (0) ``i = s``, (1) ``i = m-1-s``, each of weight
  ``T(s, h-1) T(m-1-s, h-1) / T(m, h)`` (one option when ``s = m-1-s``);
* exactly h: with ``A(i) = E(i, h-1) T(j, h-1) / E(m, h)`` (green left child, right
  child of height at most h - 1) and ``B(i) = T(i, h-2) E(j, h-1) / E(m, h)`` (green
  right child): (0) A(s), (1) B(s), (2) A(m-1-s), (3) B(m-1-s).

So every tree of (n, h) is equally likely.  Weights come in log space from the exact
counts (:func:`revec.treegen.counts.log_tables`) and never overflow.  The choice is the
inverse CDF of the node's uniform number ``u`` over the positions scanned in a fixed
order, from a precomputed (approximate) mode outwards, alternately up and down (the
expected scan is short whether the mass sits at the ends, for tall budgets, or in the
middle, for tight ones), then over the options in order: the first option k of positive
weight with ``u < acc + (w_0 + ... + w_k)`` is taken, ``acc`` being the sum of the
positions before.  If rounding leaves ``u`` beyond the total, the last option of
positive weight of the last position of positive weight is taken.
:func:`build_split_tables` records exactly these sums for small nodes (the sampler then
reads them instead of computing exps; the result is the same bit for bit), and the task
program ``benchmarks/treebuild.py`` reads them too, so it builds the same trees.
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


@njit(cache=True, nogil=True)
def sample_tree(la: np.ndarray, le: np.ndarray, start_a: np.ndarray, start_e: np.ndarray,
                cum: np.ndarray, opt_t: np.ndarray, pos_t: np.ndarray, m_root: int, h_root: int, state: np.uint64, first_child: np.ndarray,
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
                pos, opt = choose_split_small(cum, opt_t, pos_t, m, h, kind, u)
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
    opt: np.ndarray
    pos: np.ndarray
    length: np.ndarray

    def kernel_args(self) -> tuple[np.ndarray, ...]:
        return (self.la, self.le, self.start_a, self.start_e, self.cum, self.opt, self.pos)


@lru_cache(maxsize=4)
def _tables(max_interior: int, max_height: int) -> Tables:
    la, le = log_tables(max_interior, max_height)
    start_a = mode_table(la, le, AT_MOST)
    start_e = mode_table(la, le, GREEN)
    cum, opt, pos, length = build_split_tables(la, le, start_a, start_e, SMALL)
    return Tables(2 * max_interior + 1, max_height, la, le, start_a, start_e, cum, opt, pos,
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
    reads: ``(cum, opt, pos, heights, sizes)``, row ``(kind * heights + table_height(m,
    h, kind)) * sizes + m`` holding the scan steps of node (m, h, kind) (``opt[row,
    4 t + o]`` for option o of step t); trees of up to ``max_nodes`` nodes (at most
    ``2 * SMALL + 1``) and height ``max_height``."""
    if max_nodes > 2 * SMALL + 1:
        raise ValueError(f"task tables cover at most {2 * SMALL + 1} nodes")
    t = _tables((max_nodes - 1) // 2, max_height)
    k, hs, ms, steps = t.cum.shape
    return (np.ascontiguousarray(t.cum.reshape(k * hs * ms, steps)),
            np.ascontiguousarray(t.opt.reshape(k * hs * ms, steps * OPTIONS)),
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

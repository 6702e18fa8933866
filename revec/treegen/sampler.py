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
from numba import njit

from revec.treegen.counts import check_size_height, log_tables
from revec.treegen.rng import child_state, node_uniform, root_state
from revec.treegen.splits import (
    AT_MOST,
    GREEN,
    OPTIONS,
    SMALL,
    build_split_tables,
    children_of,
    choose_split_large,
    choose_split_scaled,
    choose_split_small,
    compact_split_tables,
    mode_table,
    scaled_tables,
)

__all__ = ["AT_MOST", "GREEN", "SMALL", "Tables", "TreeBuffers", "sample_preorders",
           "sample_tree", "tables_for", "task_tables", "tree_summary"]


@njit(cache=True, nogil=True)
def sample_tree(la: np.ndarray, le: np.ndarray, start_a: np.ndarray, start_e: np.ndarray,
                off: np.ndarray, rec: np.ndarray, pos_t: np.ndarray, sc: np.ndarray,
                sd: np.ndarray, m_root: int, h_root: int,
                state: np.uint64, first_child: np.ndarray, node_m: np.ndarray,
                node_h: np.ndarray, node_kind: np.ndarray, node_state: np.ndarray,
                level_start: np.ndarray, queue: np.ndarray) -> int:
    """Build one tree breadth first into the node arrays (capacity 2 m_root + 1;
    ``queue``, a work array, too).

    Node 0 is the root; the children of the interior nodes of one level are stored
    in the next level in their parents' order, left child first, so node x's children
    are ``first_child[x]`` and ``first_child[x] + 1`` (-1: a leaf).  ``level_start[d]``
    is the first node of level d; returns the number of levels.  ``node_m[x]`` is the
    number of interior nodes in x's subtree, ``node_state[x]`` its random state.

    Only interior nodes are visited (``queue`` lists them level by level, appended
    without a branch), and the option and the children's parameters are computed
    without branches: leaves and interior nodes, and the options, follow each other
    unpredictably."""
    node_m[0] = m_root
    node_h[0] = h_root
    node_kind[0] = GREEN
    node_state[0] = state
    first_child[0] = -1
    level_start[0] = 0
    levels = 1
    queue[0] = 0
    head = 0
    end = 1 if m_root > 0 else 0  # the interior nodes of the current level: queue[head:end]
    tail = end
    top = 1  # the next node id
    small = off.shape[2]
    while head < end:
        level_start[levels] = top
        levels += 1
        for q in range(head, end):
            x = queue[q]
            m = node_m[x]
            h = node_h[x]
            kind = node_kind[x]
            s = node_state[x]
            if m == 1:
                pos, opt = 0, 0  # two leaves: the only split, whatever u (tested)
            elif m < small:
                pos, opt = choose_split_small(off, rec, pos_t, m, h, kind, node_uniform(s))
            else:
                # larger nodes: the scaled scan, or the exact one where it cannot decide
                start = start_a if kind == AT_MOST else start_e
                u = node_uniform(s)
                pos, opt, ok = choose_split_scaled(la, le, sc, sd, start, m, h, kind, u)
                if not ok:
                    pos, opt = choose_split_large(la, le, start, m, h, kind, u)
            lm, lh, lk, rm, rh, rk = children_of(m, h, kind, pos, opt)
            first_child[x] = top
            first_child[top] = -1
            node_m[top] = lm
            node_h[top] = lh
            node_kind[top] = lk
            node_state[top] = child_state(s, 0)
            queue[tail] = top
            tail += lm > 0
            top += 1
            first_child[top] = -1
            node_m[top] = rm
            node_h[top] = rh
            node_kind[top] = rk
            node_state[top] = child_state(s, 1)
            queue[tail] = top
            tail += rm > 0
            top += 1
        head = end
        end = tail
    level_start[levels] = top
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
    off: np.ndarray  # the recorded scans of small nodes (splits.compact_split_tables)
    rec: np.ndarray
    pos: np.ndarray
    sc: np.ndarray  # scaled counts for larger nodes (splits.scaled_tables)
    sd: np.ndarray

    def kernel_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                   np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The tables the kernels take first (``la`` .. ``sd``, in their order)."""
        return (self.la, self.le, self.start_a, self.start_e, self.off, self.rec, self.pos,
                self.sc, self.sd)


@lru_cache(maxsize=4)
def _tables(max_interior: int, max_height: int) -> Tables:
    la, le = log_tables(max_interior, max_height)
    start_a = mode_table(la, le, AT_MOST)
    start_e = mode_table(la, le, GREEN)
    off, rec, pos = compact_split_tables(*build_split_tables(la, le, start_a, start_e, SMALL))
    sc, sd = scaled_tables(la, le)
    for a in (start_a, start_e, off, rec, pos, sc, sd):
        a.setflags(write=False)
    return Tables(2 * max_interior + 1, max_height, la, le, start_a, start_e, off, rec, pos,
                  sc, sd)


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
        self.queue = np.empty(n, np.int32)


@njit(cache=True, nogil=True)
def _preorder_codes(first_child: np.ndarray) -> np.ndarray:
    """The preorder as ASCII codes (49 interior, 48 leaf).  Codes, not a ``str``:
    building the string in numba compiled its unicode machinery (``chr``, ``join``),
    about 3 s of a fresh process's 19 s first sample (2-core AMD EPYC, numba 0.68)."""
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
    return out[:k]


def preorder(first_child: np.ndarray) -> str:
    """The tree as its preorder string ("1" interior, "0" leaf)."""
    return _preorder_codes(first_child).tobytes().decode("ascii")


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
                    buf.level_start, buf.queue)
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
    cum, opt, pos, _ = build_split_tables(t.la, t.le, t.start_a, t.start_e, SMALL)
    k, hs, ms, steps = cum.shape
    return (np.ascontiguousarray(cum.reshape(k * hs * ms, steps)),
            np.ascontiguousarray(opt.reshape(k * hs * ms, steps * OPTIONS)),
            np.ascontiguousarray(pos.reshape(k * hs * ms, steps)), hs, ms)


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
                         buf.level_start, buf.queue)
    fp = sum(int(fingerprint(s)) for s in buf.node_state[:n])
    leaves = int((buf.first_child[:n] < 0).sum())
    return TreeSummary(n, leaves, levels, fp, preorder(buf.first_child[:n]))

"""The three schedules of DESIGN.md section 3 executed over a sampled tree, counting
the SIMD utilization of section 4 (and two alternative readings of it).

A block is a list of node ids of one level.  Executing a block of b threads counts
``floor(b / P) * P`` vectorized threads; its interior nodes' children form

* in bfs mode, one next block (all left children, then all right children), executed
  in bfs mode while it holds fewer than B threads and in blocked mode once it holds B
  or more;
* in blocked mode, one child block per child index, executed depth first in index
  order; a child block of fewer than R threads is executed in bfs mode (re-expansion).

Named strategies: ``bfs`` (B infinite), ``blocked`` (R = 0), ``reexp``.  Empty blocks
are skipped; execution starts with the root's block in bfs mode.  An explicit stack of
blocks replaces recursion, so deep trees need no host stack.  The threshold tests are
those of :mod:`revec.transforms.schedule` (``next_size < B`` stays bfs,
``child_size < R`` re-expands).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from revec.transforms.schedule import UNBOUNDED

STRATEGY_NAMES = ("bfs", "blocked", "reexp")

# columns of a schedule's result row
VEC = 0  # sum of floor(b / P) * P
LANES = 1  # sum of ceil(b / P) * P: lanes issued, full or not
WIDE = 2  # threads in blocks of at least P threads
BLOCKS = 3  # executed blocks
REEXP = 4  # child blocks re-expanded (run in bfs mode from blocked mode)
MAXBLOCK = 5  # largest executed block (for bfs: the widest level)
RESULT_COLS = 6


SWITCH_READINGS = ("whole", "split")
"""How a bfs-mode block whose children number B or more continues.  ``whole``
(DESIGN.md section 3 as written): the children form the next block, executed in
blocked mode.  ``split``: the children are grouped by spawn index at once, and each
group is executed as a blocked-mode child block (in bfs mode if it holds fewer than R
threads); the next block is never executed as one block.  The numba runtime
(revec/runtime/numba_scheduler.py) currently follows ``split``."""


def thresholds(strategy: str, block_size: int, reexp_threshold: int) -> tuple[int, int]:
    """(B, R) that make the one scheduler behave as the named strategy."""
    if strategy == "bfs":
        return UNBOUNDED, 0
    if strategy == "blocked":
        return block_size, 0
    if strategy == "reexp":
        return block_size, reexp_threshold
    raise ValueError(strategy)


@njit(cache=True, nogil=True)
def run_schedule(first_child: np.ndarray, level_start: np.ndarray, levels: int, n: int,
                 B: int, R: int, P: int, split_switch: int, arena: np.ndarray, tmp0: np.ndarray, tmp1: np.ndarray,
                 stk_off: np.ndarray, stk_len: np.ndarray, stk_mode: np.ndarray,
                 out: np.ndarray) -> None:
    """Execute the schedule (B, R) over the tree; ``out`` gets a result row.
    Work arrays: ``arena``, ``tmp0``, ``tmp1``, the three stack arrays, each of
    length >= n + 1; ``level_start`` as :func:`revec.treegen.sampler.sample_tree`
    fills it (with ``levels`` levels).  ``split_switch`` selects the variant reading
    of the bfs -> blocked switch (see :data:`SWITCH_READINGS`)."""
    vec = 0
    lanes = 0
    wide = 0
    blocks = 0
    reexp = 0
    maxb = 0
    if B > n:
        # never leaves bfs mode: the blocks are the levels
        for d in range(levels):
            b = level_start[d + 1] - level_start[d]
            vec += b // P * P
            lanes += (b + P - 1) // P * P
            if b >= P:
                wide += b
            blocks += 1
            maxb = max(maxb, b)
        out[VEC] = vec
        out[LANES] = lanes
        out[WIDE] = wide
        out[BLOCKS] = blocks
        out[REEXP] = 0
        out[MAXBLOCK] = maxb
        return
    arena[0] = 0
    sp = 0
    stk_off[0] = 0
    stk_len[0] = 1
    stk_mode[0] = 0
    while sp >= 0:
        off = stk_off[sp]
        b = stk_len[sp]
        mode = stk_mode[sp]
        sp -= 1
        vec += b // P * P
        lanes += (b + P - 1) // P * P
        if b >= P:
            wide += b
        blocks += 1
        maxb = max(maxb, b)
        c = 0
        for t in range(off, off + b):
            f = first_child[arena[t]]
            if f >= 0:
                tmp0[c] = f
                tmp1[c] = f + 1
                c += 1
        if c == 0:
            continue
        top = off
        if mode == 0 and split_switch != 0 and 2 * c >= B:
            # the variant reading (the runtime's, see docs/treegen.md): a next block of
            # B or more threads is not executed whole; its child blocks by spawn index
            # are, each in bfs mode if it holds fewer than R threads
            mode = 1
        if mode == 0:
            for k in range(c):
                arena[top + k] = tmp0[k]
                arena[top + c + k] = tmp1[k]
            sp += 1
            stk_off[sp] = top
            stk_len[sp] = 2 * c
            stk_mode[sp] = 0 if 2 * c < B else 1
        else:
            # child block 1 is pushed first so that block 0 (and its subtree) runs first
            for k in range(c):
                arena[top + k] = tmp1[k]
                arena[top + c + k] = tmp0[k]
            sp += 1
            stk_off[sp] = top
            stk_len[sp] = c
            stk_mode[sp] = 0 if c < R else 1
            sp += 1
            stk_off[sp] = top + c
            stk_len[sp] = c
            stk_mode[sp] = 0 if c < R else 1
            if c < R:
                reexp += 2
    out[VEC] = vec
    out[LANES] = lanes
    out[WIDE] = wide
    out[BLOCKS] = blocks
    out[REEXP] = reexp
    out[MAXBLOCK] = maxb

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
blocks replaces recursion, so deep trees need no host stack.

The policy is :mod:`revec.transforms.schedule`'s: the kernel takes both decisions and the
utilization share through that module's own functions, compiled into it by numba (and
inlined there, so the kernel is the one the expressions written out made), and the
thresholds of a named strategy from :meth:`~revec.transforms.schedule.Schedule.make`.
``tests/test_simulate.py`` compares the kernel tree by tree with the policy's
:func:`~revec.transforms.schedule.trace` (through :mod:`revec.treegen.reference`).
numba caches the kernel keyed by this file and simulator.py only: after editing the
policy, delete ``revec/treegen/__pycache__/*.nb[ci]`` (or touch simulator.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from revec.transforms import schedule as policy

STRATEGY_NAMES = policy.STRATEGIES

# the policy's functions as numba compiles them into the kernel (the same Python code)
next_block_stays_bfs = njit(inline="always")(policy.next_block_stays_bfs)
child_block_reexpands = njit(inline="always")(policy.child_block_reexpands)
utilization_share = njit(inline="always")(policy.utilization_share)

# columns of a schedule's result row
VEC = 0  # sum of floor(b / P) * P
ISSUED = 1  # sum of ceil(b / P) * P: lanes issued, full or not
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
threads); the next block is never executed as one block.  Both runtime drivers follow
``whole``, the policy of :mod:`revec.transforms.schedule` (they followed ``split`` until
2026-11-22, docs/treegen.md)."""


def thresholds(strategy: str, block_size: int, reexp_threshold: int) -> tuple[int, int]:
    """(B, R) that make the one scheduler behave as the named strategy (the policy's
    :meth:`~revec.transforms.schedule.Schedule.make`)."""
    s = policy.Schedule.make(strategy, block_size, reexp_threshold)
    return s.block_size, s.reexp_threshold


@njit(cache=True, nogil=True)
def interior_counts(first_child: np.ndarray, n: int, interior: np.ndarray) -> None:
    """``interior[x]`` = number of interior nodes in x's subtree (children have larger
    ids than their parent, as :func:`revec.treegen.sampler.sample_tree` numbers them;
    the sampler's ``node_m`` holds the same counts)."""
    for x in range(n - 1, -1, -1):
        f = first_child[x]
        interior[x] = 0 if f < 0 else 1 + interior[f] + interior[f + 1]


@njit(cache=True, nogil=True)
def run_schedule(first_child: np.ndarray, level_start: np.ndarray, levels: int, n: int,
                 B: int, R: int, P: int, split_switch: int, interior: np.ndarray,
                 arena: np.ndarray, stk_off: np.ndarray, stk_len: np.ndarray,
                 stk_mode: np.ndarray, out: np.ndarray) -> None:
    """Execute the schedule (B, R) over the tree; ``out`` gets a result row.
    Work arrays: ``arena`` and the three stack arrays, each of length >= n + 1;
    ``level_start`` as :func:`revec.treegen.sampler.sample_tree` fills it (with
    ``levels`` levels).  ``split_switch`` selects the variant reading of the
    bfs -> blocked switch (see :data:`SWITCH_READINGS`).  ``interior[x]`` is the number
    of interior nodes in x's subtree (the sampler's ``node_m``, or
    :func:`interior_counts`), read only when a blocked-mode block of one thread never
    re-expands (``R <= 1``), so every block below it holds one thread (at most one
    child per spawn index), and its subtree of s = 2 interior + 1 nodes is counted at
    once as s blocks of one thread.

    A block's children are written over the block itself in ``arena`` (its first
    children compacted in place, then the second ones after them), so the blocks below
    it on the stack, which lie below it in ``arena``, are never touched (the blocks on
    the stack are packed from ``arena[0]`` and hold distinct nodes, so n slots suffice)."""
    vec = 0
    lanes = 0
    wide = 0
    blocks = 0
    reexp = 0
    maxb = 0
    if next_block_stays_bfs(n, B):
        # no next block (fewer than n threads) reaches B, so the schedule never leaves
        # bfs mode: the blocks are the levels
        for d in range(levels):
            b = level_start[d + 1] - level_start[d]
            vec += utilization_share(b, P)
            lanes += (b + P - 1) // P * P
            if b >= P:
                wide += b
            blocks += 1
            maxb = max(maxb, b)
        out[VEC] = vec
        out[ISSUED] = lanes
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
        if b == 1 and mode == 1 and not child_block_reexpands(1, R):
            # a chain of one-thread blocks over the thread's subtree (see above)
            sz = 2 * interior[arena[off]] + 1
            blocks += sz
            lanes += sz * P
            vec += sz * utilization_share(1, P)
            if P <= 1:
                wide += sz
            if maxb < 1:
                maxb = 1
            continue
        blocks += 1
        # blocks are never empty: b >= 1
        if b < P:
            lanes += P
        else:
            full = utilization_share(b, P)
            vec += full
            lanes += full if full == b else full + P
            wide += b
        if b > maxb:
            maxb = b
        # first children, compacted in place (write index <= read index), without a
        # branch per thread (leaves and interior nodes alternate unpredictably)
        c = 0
        for t in range(off, off + b):
            f = first_child[arena[t]]
            arena[off + c] = f
            c += f >= 0
        if c == 0:
            continue
        if mode == 0 and split_switch != 0 and not next_block_stays_bfs(2 * c, B):
            # the variant reading (the runtime's, see docs/treegen.md): a next block of
            # B or more threads is not executed whole; its child blocks by spawn index
            # are, each in bfs mode if it holds fewer than R threads
            mode = 1
        if mode == 0:
            # one next block: the first children, then the second ones
            for k in range(c):
                arena[off + c + k] = arena[off + k] + 1
            sp += 1
            stk_off[sp] = off
            stk_len[sp] = 2 * c
            stk_mode[sp] = 0 if next_block_stays_bfs(2 * c, B) else 1
        else:
            # child block 1 (second children) is pushed first, at [off, off + c), so
            # that block 0 (first children, at [off + c, off + 2c)) and its subtree run
            # first
            for k in range(c):
                f = arena[off + k]
                arena[off + c + k] = f
                arena[off + k] = f + 1
            reexpands = child_block_reexpands(c, R)
            cm = 0 if reexpands else 1
            sp += 1
            stk_off[sp] = off
            stk_len[sp] = c
            stk_mode[sp] = cm
            sp += 1
            stk_off[sp] = off + c
            stk_len[sp] = c
            stk_mode[sp] = cm
            if reexpands:
                reexp += 2
    out[VEC] = vec
    out[ISSUED] = lanes
    out[WIDE] = wide
    out[BLOCKS] = blocks
    out[REEXP] = reexp
    out[MAXBLOCK] = maxb

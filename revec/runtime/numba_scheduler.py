"""The block scheduler's bookkeeping, compiled once and shared by every program.

A generated ``run`` (see :mod:`revec.backends.numba_codegen`) keeps its frame
columns and its kernel; everything that does not depend on the program lives
here, so each program compiles only its own code.

State (all int64 unless noted):

* ``rec[sp]``: the record stack.  Kind 0 = a bfs block ``[OFF, OFF + N)`` whose
  children are compacted to ``BASE``; kind 1 = a blocked level: ``NSEG`` child
  blocks in ``seg[SB:SB + NSEG]`` run depth first from ``CUR``; ``END`` is the top
  of the arena range the record owns.
* ``seg[s] = (offset, count, leaves)`` of child blocks, allocated as a stack; leaves
  (leaf inlining): children that ran as base cases in their parents' lanes, never
  written, counted as threads of the child block (``rec[PH]`` the same for a bfs
  block), so every decision and statistic is the one without inlining.
* ``st``: scalars (stack pointer, statistics, and the block :func:`pick` chose).
* ``lv[depth]`` (float64): per-level tasks, leaves, re-expansions started there,
  summed growth factor of re-expanded blocks returning to blocked mode there, and
  the number of such returns.

The schedule policy (which block runs in which mode, the thresholds B and R, the
utilization share) is defined once, in ``revec/transforms/schedule.py``; :func:`pick`,
:func:`finish` and :func:`account` restate its comparisons in compiled code, and
``tests/test_schedule_policy.py`` checks every statistic of this driver against the
policy's trace over each program's task tree.
"""

from __future__ import annotations

import numpy as np
from numba import types

from revec.runtime.numba_access import column_ptr, column_size, ld
from revec.runtime.numba_access import st as store  # ``st`` is the driver's state here
from revec.runtime.numba_pipeline import njit
from revec.runtime.numba_support import (
    BYTES,
    INTS,
    K_LEVELS,
    K_RECORDS,
    KERNEL_TYPE,
    M_SLACK,
    charge,
    ensure_bytes_at,
    grow_children,
    grow_counted,
    held,
    interrupted,
    over_budget_borrowed,
)

# rec columns
KIND, OFF, N, BASE, END, DEPTH, CUR, NSEG, SB, INIT, PH = range(11)
REC_COLS = 11
SEG_COLS = 3
# st entries
SP, SEGTOP, MAXDEPTH, VEC, BLOCKS, LIVE, PEAK = range(7)
INLINED = 7  # leaves inlined (the C driver's and revec.runtime.workers' index too)
P_OFF, P_N, P_DEPTH, P_MODE, P_OUT, P_PH = range(8, 14)
ST_SIZE = 16  # (P_NS = 14, P_KUSED = 15, below)
# lv columns
L_TASKS, L_LEAVES, L_REEXP, L_GROWTH, L_RETURNS = range(5)
LV_COLS = 5


@njit(cache=True, nogil=True)
def new_state():
    rec = np.zeros((64, REC_COLS), np.int64)
    seg = np.zeros((64, SEG_COLS), np.int64)
    lv = np.zeros((64, LV_COLS), np.float64)
    st = np.zeros(ST_SIZE, np.int64)
    # the root: a bfs record holding one thread at arena position 0
    rec[0, KIND] = 0
    rec[0, OFF] = 0
    rec[0, N] = 1
    rec[0, BASE] = 1
    rec[0, END] = 1
    st[SP] = 0
    st[LIVE] = 1
    st[PEAK] = 1
    return rec, seg, lv, st


@njit(cache=True, nogil=True)
def charge_state(ints, rec, seg, lv):
    """Count a worker's new record stack, segments and statistics against the budget
    (False, and the budget flag set, if over)."""
    return (charge(ints, K_RECORDS, rec.size * 8 + seg.size * 8)
            and charge(ints, K_LEVELS, lv.size * 8))


@njit(cache=True, nogil=True)
def level_rows(lv, st, ints):
    """The statistics of the levels reached, for the caller: none after a stop (over
    the budget, out of memory, Ctrl-C), whose copy would need as much memory again; the
    copy is counted against the budget as well."""
    rows = st[MAXDEPTH] + 1
    if ld(column_ptr(ints, 1, np.int64), 1) != 0 or not charge(
            ints, K_LEVELS, held(ints, K_LEVELS) + rows * lv.shape[1] * 8):
        return lv[:0].copy()
    return lv[:rows].copy()


# pick, account and finish run once per block and only read and write elements of the
# arrays they are given (no allocation, no array returned): compiled without numba's
# reference counting (``_nrt=False``), whose increments and decrements of every array
# argument on entry and exit are atomic operations.  Measured on the AMD EPYC Zen 4
# (sampled, fib at B = 4096, with them and the driver's borrowed ``ints`` items, see
# numba_support.ensure_bytes_at / _within / over_budget): the reference counting was
# 30-32 % of the compiled code's time before, 23-24 % after, and the compiled code's
# samples 30 % fewer.
@njit(cache=True, nogil=True, _nrt=False)
def pick(rec, st, seg, lv, R):
    """Choose the next block to execute.  Returns -1 when the schedule is done, 0
    when a record was popped or a re-expansion pushed (call again), 1 when a block
    was chosen (its offset, size, depth, mode and output base are in ``st``).
    ``rec`` must have a spare row (the caller grows it)."""
    sp = st[SP]
    if sp < 0:
        return -1
    if rec[sp, KIND] == 1:
        cur = rec[sp, CUR]
        if cur == rec[sp, NSEG]:
            st[SEGTOP] = rec[sp, SB]
            st[SP] = sp - 1
            return 0
        s = rec[sp, SB] + cur
        rec[sp, CUR] = cur + 1
        n = seg[s, 1]
        ph = seg[s, 2]
        if n + ph == 0:
            return 0
        off = seg[s, 0]
        depth = rec[sp, DEPTH]
        if n + ph < R:
            # re-expansion: this child block runs in bfs mode (the policy's
            # child_block_reexpands, revec/transforms/schedule.py)
            top = rec[sp, END]
            sp += 1
            rec[sp, KIND] = 0
            rec[sp, OFF] = off
            rec[sp, N] = n
            rec[sp, BASE] = top
            rec[sp, END] = top
            rec[sp, DEPTH] = depth
            rec[sp, INIT] = n + ph
            rec[sp, PH] = ph
            st[SP] = sp
            lv[depth, L_REEXP] += 1
            return 0
        st[P_OFF] = off
        st[P_N] = n
        st[P_DEPTH] = depth
        st[P_MODE] = 1
        st[P_OUT] = rec[sp, END]
        st[P_PH] = ph
        return 1
    off = rec[sp, OFF]
    n = rec[sp, N]
    st[P_OFF] = off
    st[P_N] = n
    st[P_DEPTH] = rec[sp, DEPTH]
    st[P_PH] = rec[sp, PH]
    if rec[sp, KIND] == 2:
        # the bfs -> blocked switch: this block of B or more threads runs as one block
        # in blocked mode; the record stays as an empty blocked record (popped after
        # the block's children have run)
        st[P_MODE] = 1
        st[P_OUT] = rec[sp, END]
        rec[sp, KIND] = 1
        rec[sp, CUR] = 0
        rec[sp, NSEG] = 0
        rec[sp, SB] = st[SEGTOP]
        return 1
    st[P_MODE] = 0
    st[P_OUT] = max(rec[sp, BASE], off + n)
    return 1


@njit(cache=True, nogil=True, _nrt=False)
def account(lv, st, n, nb, P):
    """Statistics of one executed block of ``n`` threads, ``nb`` of them leaves."""
    depth = st[P_DEPTH]
    lv[depth, L_TASKS] += n
    lv[depth, L_LEAVES] += nb
    st[BLOCKS] += 1
    st[VEC] += n // P * P  # the policy's utilization_share (revec/transforms/schedule.py)
    if depth > st[MAXDEPTH]:
        st[MAXDEPTH] = depth


@njit(cache=True, nogil=True, _nrt=False)
def finish(rec, st, seg, lv, kcnt, kused, ns, B, lk):
    """After a block ran: update the record stack from its children's counts (child
    block k at ``out_base + k * ns``; its inlined leaves at ``kcnt[lk + k]`` when ``lk``
    > 0).  For a bfs block the caller has already compacted the children to the record's
    base in spawn-index order.  ``rec`` needs a spare row and ``seg`` room for ``kused``
    more rows (the caller grows them)."""
    n = st[P_N] + st[P_PH]
    depth = st[P_DEPTH]
    m = 0  # children written
    mph = 0  # children inlined as leaves
    for k in range(kused):
        m += ld(kcnt, k)
        if lk > 0:
            mph += ld(kcnt, lk + k)
    mf = m + mph
    live = st[LIVE] + mf
    if live > st[PEAK]:
        st[PEAK] = live
    st[LIVE] = live - n
    sp = st[SP]
    segtop = st[SEGTOP]
    if st[P_MODE] == 1:
        # blocked: the child blocks (one per spawn index) run depth first
        if mf == 0:
            return
        out = st[P_OUT]
        sp += 1
        rec[sp, KIND] = 1
        rec[sp, CUR] = 0
        rec[sp, NSEG] = kused
        rec[sp, SB] = segtop
        rec[sp, END] = out + kused * ns
        rec[sp, DEPTH] = depth + 1
        rec[sp, INIT] = 0
        for k in range(kused):
            seg[segtop + k, 0] = out + k * ns
            seg[segtop + k, 1] = ld(kcnt, k)
            seg[segtop + k, 2] = ld(kcnt, lk + k) if lk > 0 else 0
        st[SEGTOP] = segtop + kused
        st[SP] = sp
        return
    if mf == 0:
        st[SP] = sp - 1
        return
    base = rec[sp, BASE]
    rec[sp, PH] = mph
    if mf < B:
        # still bfs: the next block replaces this one (the policy's next_block_stays_bfs,
        # revec/transforms/schedule.py)
        rec[sp, OFF] = base
        rec[sp, N] = m
        rec[sp, END] = base + m
        rec[sp, DEPTH] = depth + 1
        return
    # B or more threads (DESIGN.md section 3): the next block runs in blocked mode, as
    # one block; its children are then grouped by spawn index
    if rec[sp, INIT] > 0:
        lv[depth + 1, L_GROWTH] += mf / rec[sp, INIT]
        lv[depth + 1, L_RETURNS] += 1
    rec[sp, KIND] = 2
    rec[sp, OFF] = base
    rec[sp, N] = m
    rec[sp, END] = base + m
    rec[sp, DEPTH] = depth + 1


# --------------------------------------------------------------------------- the driver
DRIVER_SIG = types.Tuple((types.float64[:, ::1], INTS))(
    KERNEL_TYPE, types.ListType(BYTES), INTS, types.ListType(BYTES), BYTES,
    types.ListType(INTS), types.int64, types.int64, types.int64, types.int64)


# A block's work runs in two steps compiled without numba's reference counting
# (``_nrt=False``, as pick / account / finish): :func:`block_run` (the scratch columns,
# the child blocks' room, the kernel, the statistics, the bfs compaction) and
# :func:`block_end` (the record stack, the child counts cleared); between them the caller
# grows the segment rows (an allocation, so in code with reference counting).  Their
# array and list arguments are borrowed: no reference is taken or dropped per block.
# Before, the whole block ran in ``run_block`` inlined into the caller, whose rebinding
# of its ten array and list arguments and calls of reference-counted helpers per column
# (``ensure_bytes_at``, ``_move_down``, ``grow_children``, ``interrupted``) took and
# dropped references, atomic operations, on every block (knapsack reexp B = 4096,
# sampled: NRT_incref / NRT_decref 15 % of the compiled code's samples).
# block_run's status: the child blocks used (>= 0: call block_end next), or
BLOCK_STOP = -1  # the columns could not grow or the run is over its budget: stop
BLOCK_DONE = -2  # a block of inlined leaves alone: done, no block_end
P_NS = 14  # st: the children's stride of the block block_run ran (for block_end)
P_KUSED = 15  # st: the child blocks it used (drive, between block_run and block_end)


@njit(cache=True, nogil=True, _nrt=False, no_cpython_wrapper=True)
def _move_down(cols, c, w, dst, src, count):
    """Copy ``count`` elements of width ``w`` bytes of column ``cols[c]`` from ``src``
    down to ``dst`` < ``src`` (a forward copy), in the column's own element width so the
    loop is word-wide; the column is borrowed (no list item taken)."""
    if w == 8:
        v8 = column_ptr(cols, c, np.int64)
        for t in range(count):
            store(v8, dst + t, ld(v8, src + t))
    elif w == 4:
        v4 = column_ptr(cols, c, np.int32)
        for t in range(count):
            store(v4, dst + t, ld(v4, src + t))
    elif w == 2:
        v2 = column_ptr(cols, c, np.int16)
        for t in range(count):
            store(v2, dst + t, ld(v2, src + t))
    else:
        v1 = column_ptr(cols, c, np.uint8)
        for t in range(count * w):
            store(v1, dst * w + t, ld(v1, src * w + t))


@njit(cache=True, nogil=True, _nrt=False, no_cpython_wrapper=True)
def _columns_hold(cols, itemsizes, frames):
    """Do the frame columns all have room for ``frames`` frames (grow_children's common
    case: nothing to grow)?"""
    for c in range(itemsizes.size):
        if frames * itemsizes[c] > column_size(cols, c):
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False, no_cpython_wrapper=True)
def block_run(kernel, cols, itemsizes, consts, accs, ints, static_k, B, P, rec, seg, lv,
              st, scratch):
    """Execute the block :func:`pick` chose (its offset, size, depth, mode and output
    base are in ``st``; ``lv`` has a row for its children's level): the kernel, growing
    the child blocks when a thread needs more, the statistics and the bfs compaction of
    the children.  ``scratch``: ``ints`` holds the module's scratch sizes (``ints[5]``).
    Returns the child blocks used (then the caller makes room in ``seg`` and calls
    :func:`block_end`), BLOCK_DONE, or BLOCK_STOP: the columns could not grow or the run
    is over the memory budget (``ints[1][1]``), and the caller stops."""
    ncols = itemsizes.size
    off = st[P_OFF]
    n = st[P_N]
    out_base = st[P_OUT]
    kcnt = column_ptr(ints, 0, np.int64)
    if n == 0:
        # a block of inlined leaves alone (leaf inlining: a child block whose children
        # all ran in their parents' threads) runs no kernel and makes no child: only its
        # statistics and the record stack (finish with no child block).  Measured
        # (knapsack reexp, leaf_level: half the blocks are such, B = 2^10: 131,081
        # blocks): the full path cost ~150 ns per block against ~27 ns for the C driver
        ph = st[P_PH]
        account(lv, st, ph, ph, P)
        st[INLINED] += ph
        finish(rec, st, seg, lv, kcnt, 0, 0, B, 0)
        return BLOCK_DONE
    for c in range(ncols):  # the kernel's base / inductive scratch columns
        ensure_bytes_at(cols, ncols + c, n * itemsizes[c])
        ensure_bytes_at(cols, 2 * ncols + c, n * itemsizes[c])
    if scratch:  # the module's own scratch columns (its SCRATCH_BYTES)
        need = column_ptr(ints, 5, np.int64)
        for c in range(column_size(ints, 5) // 2):
            ensure_bytes_at(cols, 3 * ncols + c, n * ld(need, 2 * c) + ld(need, 2 * c + 1))
    # ints' arrays through borrowed pointers (no list item taken: see numba_access);
    # taken again after anything that may replace them (grow_children).  The child
    # counts (ints[0]) are all zero here: a run starts with zeros and every block
    # clears the ones it used (block_end)
    # child block k starts at out_base + k * (ni + slack), ni <= n (the kernel plan)
    slack = ld(column_ptr(ints, 3, np.int64), M_SLACK)
    if static_k >= 0:
        frames = out_base + static_k * (n + slack)
        if _columns_hold(cols, itemsizes, frames):  # grow_children with nothing to grow
            if over_budget_borrowed(ints, cols, itemsizes, frames):
                return BLOCK_STOP
        elif not grow_children(cols, ints, itemsizes, frames, 0):
            return BLOCK_STOP
    # (a kernel that needs more child blocks grows them itself, budget checked)
    nb, kused = kernel(cols, consts, accs, ints, off, n, out_base)
    if ld(column_ptr(ints, 1, np.int64), 1) != 0:
        return BLOCK_STOP
    ph = st[P_PH]  # the block's inlined leaves: tasks and leaves of its level
    account(lv, st, n + ph, nb + ph, P)
    st[INLINED] += ph
    kcnt = column_ptr(ints, 0, np.int64)
    ns = n - nb + slack  # the children's stride
    st[P_NS] = ns
    if st[P_MODE] == 0:
        # bfs: the next block is all children in spawn-index order, compacted
        # down to the record's base (it replaces the block that made them)
        base = rec[st[SP], BASE]
        for c in range(ncols):
            w = itemsizes[c]
            dst = base
            for k in range(kused):
                src = out_base + k * ns
                if src != dst:
                    _move_down(cols, c, w, dst, src, ld(kcnt, k))
                dst += ld(kcnt, k)
    return kused


@njit(cache=True, nogil=True, _nrt=False, no_cpython_wrapper=True)
def block_end(rec, st, seg, lv, ints, static_k, B, kused):
    """After :func:`block_run` ran a block that used ``kused`` child blocks (``seg`` has
    room for them): :func:`finish`, and the child counts it used cleared."""
    kcnt = column_ptr(ints, 0, np.int64)
    # a static kernel's inlined leaves per child block follow its counts (the runner
    # keeps 2 x static_k counts; zero where the plan inlines none)
    lk = static_k if static_k > 0 else 0
    finish(rec, st, seg, lv, kcnt, kused, st[P_NS], B, lk)
    # only the counts this block used, not the whole array: uts's root spawns 2,000
    # children, so the array holds thousands of counts, and clearing all of them cost
    # every later block a loop over all of them
    for k in range(kused):
        store(kcnt, k, 0)
        if lk > 0:
            store(kcnt, lk + k, 0)


# inlined into the workers' loop by numba's IR inliner (revec.runtime.numba_workers); the
# one-worker driver run_schedule writes the same steps out in its loop
@njit(cache=True, nogil=True, inline="always")
def run_block(kernel, cols, itemsizes, consts, accs, ints, static_k, B, P, rec, seg, lv, st):
    """Execute the block :func:`pick` chose (its offset, size, depth, mode and output
    base are in ``st``): :func:`block_run`, the segment rows grown, :func:`block_end`.
    Shared by every worker of :mod:`revec.runtime.numba_workers`.  Returns ``(ok, lv,
    seg)`` (both may have been grown); not ok: the columns could not grow or the run is
    over the memory budget (``ints[1][1]``), and the caller stops."""
    if st[P_DEPTH] + 2 > lv.shape[0]:  # the per-level statistics grow with the depth
        lv = grow_counted(lv, st[P_DEPTH] + 2, ints, K_LEVELS)
        if ld(column_ptr(ints, 1, np.int64), 1) != 0:
            return False, lv, seg
    kused = block_run(kernel, cols, itemsizes, consts, accs, ints, static_k, B, P, rec, seg,
                      lv, st, len(ints) > 5)
    if kused == BLOCK_STOP:
        return False, lv, seg
    if kused == BLOCK_DONE:
        return True, lv, seg
    if st[SEGTOP] + kused + 1 > seg.shape[0]:
        seg = grow_counted(seg, st[SEGTOP] + kused + 1, ints, K_RECORDS)
        if ld(column_ptr(ints, 1, np.int64), 1) != 0:
            return False, lv, seg
    block_end(rec, st, seg, lv, ints, static_k, B, kused)
    return True, lv, seg


# drive's status: the schedule is done, or it stopped (Ctrl-C, out of memory, over the
# budget: the caller raises), or an array needs to grow (the caller grows it and calls
# drive again, resuming where it returned: RESUME_*)
RUN_DONE, RUN_STOP, NEED_REC, NEED_LV, NEED_SEG = range(5)
RESUME_PICK, RESUME_BLOCK, RESUME_END = range(3)


@njit(cache=True, nogil=True, _nrt=False, no_cpython_wrapper=True)
def drive(kernel, cols, itemsizes, consts, accs, ints, static_k, B, R, P, rec, seg, lv, st,
          scratch, resume):
    """The one-worker driver's loop over blocks (pick, block_run, block_end), compiled
    without reference counting: its arrays are borrowed, nothing is allocated.  Returns
    when the schedule is done or stopped, or when ``rec`` (NEED_REC), ``lv`` (NEED_LV) or
    ``seg`` (NEED_SEG) must grow first, an allocation its caller makes before calling
    again with ``resume`` RESUME_PICK (the next block), RESUME_BLOCK (run the block
    picked) or RESUME_END (block_end of the block run).  The loop as run_schedule's own
    code took and dropped references to its growable arrays on every block (knapsack
    reexp B = 4096, sampled: NRT_incref / NRT_decref 3-4 % of the compiled code)."""
    while True:
        if resume == RESUME_PICK:
            # Ctrl-C, checked once per block record; the caller raises
            if interrupted(ints):
                return RUN_STOP
            if st[SP] + 2 > rec.shape[0]:  # the record stack grows with the depth
                return NEED_REC
            status = pick(rec, st, seg, lv, R)
            if status < 0:
                return RUN_DONE
            if status == 0:
                continue
            resume = RESUME_BLOCK
        if resume == RESUME_BLOCK:
            if st[P_DEPTH] + 2 > lv.shape[0]:  # the per-level statistics grow with depth
                return NEED_LV
            kused = block_run(kernel, cols, itemsizes, consts, accs, ints, static_k, B, P,
                              rec, seg, lv, st, scratch)
            resume = RESUME_PICK
            if kused == BLOCK_DONE:
                continue
            if kused == BLOCK_STOP:
                return RUN_STOP  # out of memory or over the budget: the caller raises
            st[P_KUSED] = kused
        if st[SEGTOP] + st[P_KUSED] + 1 > seg.shape[0]:
            return NEED_SEG
        block_end(rec, st, seg, lv, ints, static_k, B, st[P_KUSED])
        resume = RESUME_PICK


@njit(DRIVER_SIG, cache=True, nogil=True)
def run_schedule(kernel, cols, itemsizes, consts, accs, ints, static_k, B, R, P):
    """Run the whole schedule of DESIGN.md section 3 from the root frame at 0."""
    rec, seg, lv, st = new_state()
    if not charge_state(ints, rec, seg, lv):
        return lv[:0].copy(), st
    scratch = len(ints) > 5  # the module's scratch sizes (block_run)
    resume = RESUME_PICK
    while True:
        why = drive(kernel, cols, itemsizes, consts, accs, ints, static_k, B, R, P, rec, seg,
                    lv, st, scratch, resume)
        # the growth drive asked for (counted against the budget; over it, the budget
        # flag is set and the caller raises)
        if why == NEED_REC:
            rec = grow_counted(rec, st[SP] + 2, ints, K_RECORDS)
            resume = RESUME_PICK
        elif why == NEED_LV:
            lv = grow_counted(lv, st[P_DEPTH] + 2, ints, K_LEVELS)
            resume = RESUME_BLOCK
        elif why == NEED_SEG:
            seg = grow_counted(seg, st[SEGTOP] + st[P_KUSED] + 1, ints, K_RECORDS)
            resume = RESUME_END
        else:
            break
        if ld(column_ptr(ints, 1, np.int64), 1) != 0:
            break
    return level_rows(lv, st, ints), st

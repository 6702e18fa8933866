"""Several workers for the numba back end: the schedule of
:mod:`revec.runtime.numba_scheduler` on each worker's own record stack, the compiled
driver running ``nogil`` on one Python thread per worker, balanced by the stealing
protocol of the C driver (docs/backends.md, "Workers"; revec/backends/c_driver.py).

A thief posts ``id + 1`` in the victim's ``req`` slot (compare-and-swap) and waits on
its own ``resp`` slot; the victim answers between two blocks, packing at most
``PKG_CAP`` frames of its oldest pending child blocks (or half of its top bfs block)
into the thief's package columns.  ``ctl[BUSY]`` counts workers holding work; a victim
increments it for the thief before answering, so all work is done once it reads 0.
Atomic loads, stores, adds and compare-and-swaps on int64 array slots are LLVM atomics
(:func:`atomic_load` and friends); idle time is counted in cycles of the time-stamp
counter and converted by the caller.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir as llir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from revec.runtime.numba_pipeline import njit
from revec.runtime.numba_scheduler import (
    BASE,
    BLOCKS,
    CUR,
    DEPTH,
    END,
    INIT,
    INLINED,
    KIND,
    L_LEAVES,
    L_TASKS,
    LIVE,
    MAXDEPTH,
    NSEG,
    OFF,
    PEAK,
    SB,
    SEGTOP,
    SP,
    N,
    charge_state,
    level_rows,
    new_state,
    pick,
    run_block,
)
from revec.runtime.numba_support import (
    BYTES,
    INTS,
    K_OTHER,
    K_RECORDS,
    KERNEL_TYPE,
    charge,
    grow_children,
    grow_counted,
    held,
    interrupted,
)

# ctl slots
BUSY, STOP = 0, 1
# resp values
RQ_WAIT, RQ_WORK, RQ_EMPTY = 1, 2, 3
# package meta columns: kind, depth, frames, segments, then the segments' sizes
PK_KIND, PK_DEPTH, PK_N, PK_NSEG, PK_COUNTS = range(5)
PKG_SEGS = 64
PKG_CAP = 1 << 15  # frames per package
MIN_SPLIT = 64
# per-worker statistics (the columns of revec.runtime.workers)
W_TASKS, W_STEALS, W_ATTEMPTS, W_IDLE, W_GIVEN, W_PEAK, W_BLOCKS, W_CPU = range(8)
W_COLS = 8


def _slot(context: Any, builder: llir.IRBuilder, aryty: Any, ary: Any, idx: Any) -> Any:
    a = context.make_array(aryty)(context, builder, ary)
    return cgutils.get_item_pointer(context, builder, aryty, a, [idx])


@intrinsic
def atomic_load(typingctx: Any, ary: Any, idx: Any) -> Any:
    def codegen(context: Any, builder: llir.IRBuilder, sig: Any, args: Any) -> Any:
        ptr = _slot(context, builder, sig.args[0], args[0], args[1])
        return builder.load_atomic(ptr, "seq_cst", 8)
    return types.int64(ary, idx), codegen


@intrinsic
def atomic_store(typingctx: Any, ary: Any, idx: Any, val: Any) -> Any:
    def codegen(context: Any, builder: llir.IRBuilder, sig: Any, args: Any) -> Any:
        ptr = _slot(context, builder, sig.args[0], args[0], args[1])
        builder.store_atomic(args[2], ptr, "seq_cst", 8)
        return context.get_dummy_value()
    return types.void(ary, idx, types.int64), codegen


@intrinsic
def atomic_add(typingctx: Any, ary: Any, idx: Any, val: Any) -> Any:
    def codegen(context: Any, builder: llir.IRBuilder, sig: Any, args: Any) -> Any:
        ptr = _slot(context, builder, sig.args[0], args[0], args[1])
        return builder.atomic_rmw("add", ptr, args[2], "seq_cst")
    return types.int64(ary, idx, types.int64), codegen


@intrinsic
def atomic_cas(typingctx: Any, ary: Any, idx: Any, old: Any, new: Any) -> Any:
    def codegen(context: Any, builder: llir.IRBuilder, sig: Any, args: Any) -> Any:
        ptr = _slot(context, builder, sig.args[0], args[0], args[1])
        res = builder.cmpxchg(ptr, args[2], args[3], "seq_cst", "seq_cst")
        return builder.extract_value(res, 1)
    return types.boolean(ary, idx, types.int64, types.int64), codegen


@intrinsic
def cycles(typingctx: Any) -> Any:
    def codegen(context: Any, builder: llir.IRBuilder, sig: Any, args: Any) -> Any:
        fn = cgutils.get_or_insert_function(
            builder.module, llir.FunctionType(llir.IntType(64), []), "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


@intrinsic
def yield_cpu(typingctx: Any) -> Any:
    def codegen(context: Any, builder: llir.IRBuilder, sig: Any, args: Any) -> Any:
        fn = cgutils.get_or_insert_function(
            builder.module, llir.FunctionType(llir.IntType(32), []), "sched_yield")
        builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen


@intrinsic
def thread_cpu_ns(typingctx: Any) -> Any:
    """This thread's CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID)) in ns."""
    def codegen(context: Any, builder: llir.IRBuilder, sig: Any, args: Any) -> Any:
        i64 = llir.IntType(64)
        ts = cgutils.alloca_once(builder, llir.ArrayType(i64, 2))
        fn = cgutils.get_or_insert_function(
            builder.module, llir.FunctionType(llir.IntType(32), [llir.IntType(32),
                                                                 ts.type]), "clock_gettime")
        builder.call(fn, [llir.Constant(llir.IntType(32), 3), ts])
        sec = builder.load(builder.gep(ts, [llir.Constant(llir.IntType(32), 0),
                                            llir.Constant(llir.IntType(32), 0)]))
        nsec = builder.load(builder.gep(ts, [llir.Constant(llir.IntType(32), 0),
                                             llir.Constant(llir.IntType(32), 1)]))
        return builder.add(builder.mul(sec, llir.Constant(i64, 1000000000)), nsec)
    return types.int64(), codegen


@njit(cache=True, nogil=True)
def _copy_frames(src, s0, dst, d0, count, w):
    for b in range(count * w):
        dst[d0 * w + b] = src[s0 * w + b]


@njit(cache=True, nogil=True)
def _give(rec, seg, st, lv, cols, itemsizes, pk_cols, pk_meta, t):
    """Victim side, between blocks: pack work for thief ``t``; False if none.  The
    inlined leaves of child blocks it gives are counted here (tasks and leaves of their
    level): the package holds written frames only."""
    ncols = itemsizes.size
    sp = st[SP]
    for s in range(sp + 1):
        if rec[s, KIND] != 1:
            continue
        cur = rec[s, CUR]
        nseg = rec[s, NSEG]
        sb = rec[s, SB]
        while nseg > cur and seg[sb + nseg - 1, 1] == 0 and seg[sb + nseg - 1, 2] == 0:
            nseg -= 1
        rec[s, NSEG] = nseg
        if nseg <= cur:
            continue
        give = (nseg - cur) // 2 if s == sp else (nseg - cur + 1) // 2
        give = min(give, PKG_SEGS)
        if give == 0:
            continue
        # the last `give` child blocks, as far as they fit in the package
        total = 0
        first = nseg
        while first > nseg - give and total + seg[sb + first - 1, 1] <= PKG_CAP:
            first -= 1
            total += seg[sb + first, 1]
        part = 0
        if first == nseg:  # a child block larger than a package: its last PKG_CAP frames
            part = PKG_CAP
        at = 0
        k = 0
        if part > 0:
            off = seg[sb + nseg - 1, 0] + seg[sb + nseg - 1, 1] - part
            for c in range(ncols):
                w = itemsizes[c]
                if w > 0:
                    _copy_frames(cols[c], off, pk_cols[t * ncols + c], 0, part, w)
            seg[sb + nseg - 1, 1] -= part
            pk_meta[t, PK_COUNTS] = part
            at = part
            k = 1
        else:
            for j in range(first, nseg):
                cnt = seg[sb + j, 1]
                lv[rec[s, DEPTH], L_TASKS] += seg[sb + j, 2]
                lv[rec[s, DEPTH], L_LEAVES] += seg[sb + j, 2]
                st[LIVE] -= seg[sb + j, 2]
                st[INLINED] += seg[sb + j, 2]
                for c in range(ncols):
                    w = itemsizes[c]
                    if w > 0:
                        _copy_frames(cols[c], seg[sb + j, 0], pk_cols[t * ncols + c], at, cnt, w)
                pk_meta[t, PK_COUNTS + k] = cnt
                at += cnt
                k += 1
            rec[s, NSEG] = first
        pk_meta[t, PK_KIND] = 1
        pk_meta[t, PK_DEPTH] = rec[s, DEPTH]
        pk_meta[t, PK_N] = at
        pk_meta[t, PK_NSEG] = k
        st[LIVE] -= at
        return True
    if sp < 0 or rec[sp, KIND] == 1 or rec[sp, N] < MIN_SPLIT:
        return False
    h = min(rec[sp, N] // 2, PKG_CAP)
    off = rec[sp, OFF] + rec[sp, N] - h
    for c in range(ncols):
        w = itemsizes[c]
        if w > 0:
            _copy_frames(cols[c], off, pk_cols[t * ncols + c], 0, h, w)
    rec[sp, N] -= h
    pk_meta[t, PK_KIND] = rec[sp, KIND]
    pk_meta[t, PK_DEPTH] = rec[sp, DEPTH]
    pk_meta[t, PK_N] = h
    pk_meta[t, PK_NSEG] = 0
    st[LIVE] -= h
    return True


@njit(cache=True, nogil=True)
def _serve(w, has_work, rec, seg, st, lv, cols, itemsizes, pk_cols, pk_meta, ctl, req, resp,
           wst):
    q = atomic_load(req, w)
    if q == 0:
        return
    t = q - 1
    if has_work and _give(rec, seg, st, lv, cols, itemsizes, pk_cols, pk_meta, t):
        atomic_add(ctl, BUSY, 1)  # before the answer: the count never reads 0
        wst[w, W_GIVEN] += 1
        atomic_store(resp, t, RQ_WORK)
    else:
        atomic_store(resp, t, RQ_EMPTY)
    atomic_store(req, w, 0)


DONE, ASKED = 0, 1


@njit(cache=True, nogil=True)
def _own_work(kernel, cols, itemsizes, consts, accs, ints, static_k, B, R, P, rec, seg, lv,
              st, w, ctl, req):
    """Run this worker's blocks until its stack is empty or the run stops (DONE), or
    until a thief has posted a request (ASKED: the caller answers it and calls again).
    A loop of its own, as lean as the one-worker driver's: with the answering code in
    the same loop the kernel's blocks ran 10-30% slower (binomial: 370 ns per block).
    Its pick / run_block lines repeat run_schedule's on purpose: one shared njit step
    function called by both loops made one-worker binomial 0.058-0.066 s -> 0.089-0.105 s
    (interleaved medians of 7, 2-core AMD EPYC)."""
    while st[SP] >= 0:
        if atomic_load(ctl, STOP) != 0:
            break
        # Ctrl-C, checked by every worker once per block record; the first to see it
        # stops the others
        if interrupted(ints):
            atomic_store(ctl, STOP, 1)
            break
        if atomic_load(req, w) != 0:
            return ASKED, rec, seg, lv
        if st[SP] + 2 > rec.shape[0]:  # the record stack grows with the depth: counted
            rec = grow_counted(rec, st[SP] + 2, ints, K_RECORDS)
            if ints[1][1] != 0:
                atomic_store(ctl, STOP, 1)
                break
        status = pick(rec, st, seg, lv, R)
        if status < 0:
            break
        if status == 0:
            continue
        ok, lv, seg = run_block(kernel, cols, itemsizes, consts, accs, ints, static_k,
                                B, P, rec, seg, lv, st)
        if not ok:
            atomic_store(ctl, STOP, 1)
            break
    return DONE, rec, seg, lv


I64 = types.int64
WORKER_SIG = types.Tuple((types.float64[:, ::1], INTS))(
    KERNEL_TYPE, types.ListType(BYTES), INTS, types.ListType(BYTES), BYTES,
    types.ListType(INTS), I64, I64, I64, I64, I64, I64, INTS, INTS, INTS,
    types.ListType(BYTES), types.int64[:, ::1], types.int64[:, ::1])


@njit(WORKER_SIG, cache=True, nogil=True)
def run_worker(kernel, cols, itemsizes, consts, accs, ints, static_k, B, R, P,
               w, nworkers, ctl, req, resp, pk_cols, pk_meta, wst):
    """Worker ``w``: the schedule on its own stack (worker 0 starts with the root),
    stealing when idle, until all work is done.  Returns its per-level statistics and
    driver statistics."""
    cpu0 = thread_cpu_ns()
    rec, seg, lv, st = new_state()
    if w != 0:
        st[SP] = -1
        st[LIVE] = 0
        st[PEAK] = 0
    ncols = itemsizes.size
    # this worker's state: its stack, statistics and package columns (the caller set
    # the package's bytes) count against the budget from the start
    if not (charge_state(ints, rec, seg, lv) and charge(ints, K_OTHER, held(ints, K_OTHER))):
        atomic_store(ctl, STOP, 1)
    rng = np.uint64(0x9E3779B97F4A7C15) * np.uint64(w + 1) | np.uint64(1)
    while True:
        # ------------------------------------------------------------ own work
        had_work = st[SP] >= 0
        while True:
            why, rec, seg, lv = _own_work(kernel, cols, itemsizes, consts, accs, ints,
                                          static_k, B, R, P, rec, seg, lv, st, w, ctl, req)
            if why != ASKED:
                break
            _serve(w, True, rec, seg, st, lv, cols, itemsizes, pk_cols, pk_meta, ctl, req, resp,
                   wst)
        if atomic_load(ctl, STOP) != 0:
            break
        if had_work:
            atomic_add(ctl, BUSY, -1)
        if nworkers < 2:
            break
        # ------------------------------------------------------------ steal
        t0 = cycles()
        got = False
        spins = 0
        while atomic_load(ctl, STOP) == 0 and atomic_load(ctl, BUSY) > 0:
            _serve(w, False, rec, seg, st, lv, cols, itemsizes, pk_cols, pk_meta, ctl, req, resp,
                   wst)
            rng ^= rng << np.uint64(13)
            rng ^= rng >> np.uint64(7)
            rng ^= rng << np.uint64(17)
            v = np.int64(rng % np.uint64(nworkers - 1))
            if v >= w:
                v += 1
            spins += 1
            if spins > 64:
                yield_cpu()
            if atomic_load(req, v) != 0:
                continue
            atomic_store(resp, w, RQ_WAIT)
            if not atomic_cas(req, v, 0, w + 1):
                continue
            wst[w, W_ATTEMPTS] += 1
            quit = False
            waits = 0
            r = atomic_load(resp, w)
            while r == RQ_WAIT:
                _serve(w, False, rec, seg, st, lv, cols, itemsizes, pk_cols, pk_meta, ctl, req,
                       resp, wst)
                if atomic_load(ctl, STOP) != 0 or atomic_load(ctl, BUSY) == 0:
                    quit = True
                    break
                waits += 1
                if waits > 64:
                    yield_cpu()
                r = atomic_load(resp, w)
            if quit:
                break
            if r == RQ_WORK:
                got = True
                break
        wst[w, W_IDLE] += cycles() - t0
        if not got:
            break
        # ------------------------------------------------------------ take
        wst[w, W_STEALS] += 1
        n = pk_meta[w, PK_N]
        nseg = pk_meta[w, PK_NSEG]
        if not grow_children(cols, ints, itemsizes, n + 1, 0):
            atomic_store(ctl, STOP, 1)
            break
        for c in range(ncols):
            wd = itemsizes[c]
            if wd > 0:
                _copy_frames(pk_cols[w * ncols + c], 0, cols[c], 0, n, wd)
        if nseg + 1 > seg.shape[0]:
            seg = grow_counted(seg, nseg + 1, ints, K_RECORDS)
            if ints[1][1] != 0:
                atomic_store(ctl, STOP, 1)
                break
        rec[0, :] = 0
        rec[0, KIND] = pk_meta[w, PK_KIND]
        rec[0, DEPTH] = pk_meta[w, PK_DEPTH]
        rec[0, END] = n
        if rec[0, KIND] == 1:
            at = 0
            for k in range(nseg):
                seg[k, 0] = at
                seg[k, 1] = pk_meta[w, PK_COUNTS + k]
                seg[k, 2] = 0
                at += seg[k, 1]
            rec[0, CUR] = 0
            rec[0, NSEG] = nseg
            rec[0, SB] = 0
            st[SEGTOP] = nseg
        else:
            rec[0, OFF] = 0
            rec[0, N] = n
            rec[0, BASE] = n
            rec[0, INIT] = 0
            st[SEGTOP] = 0
        st[SP] = 0
        st[LIVE] += n
        if st[LIVE] > st[PEAK]:
            st[PEAK] = st[LIVE]
    tasks = 0
    for d in range(st[MAXDEPTH] + 1):
        tasks += np.int64(lv[d, L_TASKS])
    wst[w, W_TASKS] = tasks
    wst[w, W_PEAK] = st[PEAK]
    wst[w, W_BLOCKS] = st[BLOCKS]
    wst[w, W_CPU] = thread_cpu_ns() - cpu0
    return level_rows(lv, st, ints), st


@njit(cache=True, nogil=True)
def read_cycles():
    return cycles()


_HZ: list[float] = []


def cycles_per_second() -> float:
    """The time-stamp counter's rate, measured once (for idle time)."""
    if not _HZ:
        import time

        read_cycles()
        t0, c0 = time.perf_counter(), read_cycles()
        time.sleep(0.02)
        t1, c1 = time.perf_counter(), read_cycles()
        _HZ.append(max((c1 - c0) / (t1 - t0), 1.0))
    return _HZ[0]

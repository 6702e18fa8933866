"""Small compiled helpers the generated numba modules import."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numba import typed, types

from revec.runtime.numba_access import column_ptr, column_size, ld
from revec.runtime.numba_access import st as store
from revec.runtime.numba_pipeline import njit


@njit(cache=True, nogil=True)
def grow(a, need):
    """``a`` with room for at least ``need`` elements (contents kept)."""
    if need <= a.size:
        return a
    b = np.empty(max(need, 2 * a.size), a.dtype)
    # a loop, not a slice copy: no shape check, whose error-message code (string
    # concatenation) every kernel calling this would link in and compile again
    for k in range(a.size):
        b[k] = a[k]
    return b


@njit(cache=True, nogil=True)
def grow2(a, need):
    """Like :func:`grow`, zero-filling the new part."""
    if need <= a.size:
        return a
    b = np.zeros(max(need, 2 * a.size), a.dtype)
    for k in range(a.size):  # (a loop: see grow)
        b[k] = a[k]
    return b


# one compiled version for every caller: without the signature numba compiles (and
# links into every kernel) one version per literal column index a kernel passes
# (``ensure_bytes(cols, 19, n + 32)``), which was a fifth of a kernel's compile time
@njit(types.none(types.ListType(types.uint8[::1]), types.int64, types.int64),
      cache=True, nogil=True, _nrt=True)
def ensure_bytes(cols, c, nbytes):
    """Grow byte column ``cols[c]`` to at least ``nbytes`` (contents kept)."""
    if nbytes <= column_size(cols, c):  # the common case: no list item taken
        return
    col = cols[c]
    new = np.empty(max(nbytes, 2 * col.size), np.uint8)
    for k in range(col.size):  # (a loop: see grow)
        new[k] = col[k]
    cols[c] = new


@njit(cache=True, nogil=True, inline="always")
def ensure_bytes_at(cols, c, nbytes):
    """:func:`ensure_bytes` with its common case (room enough) checked in the caller's
    own code (numba's IR inliner): a call to ``ensure_bytes`` takes and drops a reference
    to ``cols`` (two atomic operations), and the driver asks for every scratch column of
    every block."""
    if nbytes > column_size(cols, c):
        ensure_bytes(cols, c, nbytes)


@njit(cache=True, nogil=True)
def frames_held(cols, itemsizes):
    """The frames every frame column has room for (columns of width 0, the invariant
    parameters', are not counted; none: ``1 << 62``)."""
    cap = 1 << 62
    for c in range(itemsizes.size):
        if itemsizes[c] > 0:
            cap = min(cap, column_size(cols, c) // itemsizes[c])
    return cap


# (interrupted, over_budget_borrowed: every block asks them; compiled without reference
# counting, their arguments borrowed, as the driver's block steps,
# revec.runtime.numba_scheduler; no CPython wrapper: one unboxes a typed list through the
# reference-counted runtime)
@njit(cache=True, nogil=True, _nrt=False, no_cpython_wrapper=True)
def interrupted(ints):
    """Ctrl-C: ``ints[4]`` (when present) is the interrupt flag of
    revec.runtime.interrupt, set by Python's SIGINT handler; read borrowed."""
    return len(ints) > 4 and ld(column_ptr(ints, 4, np.int64), 0) != 0


# The driver's flags (``ints[1]``): the budget in bytes (0: none), the over-budget flag
# (1 + the kind whose growth crossed it), the worker's index, then the bytes this worker
# holds of each kind (revec.runtime.memory.KINDS: thread frames and scratch, records and
# child-block segments, per-level statistics, other per-worker state).  A driver of 3
# flags counts frames only.
F_BUDGET, F_OVER, F_WORKER, F_HELD = range(4)
K_FRAMES, K_RECORDS, K_LEVELS, K_OTHER = range(4)
N_FLAGS = F_HELD + 4


# (_nrt=True, as ensure_bytes and grow_children: called from code compiled without
# reference counting, whose flag a callee would otherwise inherit)
@njit(cache=True, nogil=True, _nrt=True)
def _within(ints, mine, kind):
    """This worker now holds ``mine`` bytes: within the budget together with the other
    workers' (then published in ``ints[2]``)?  Else flag ``kind`` in ``ints[1]``."""
    # (borrowed pointers: a list item taken is a reference taken and dropped, two
    # atomic operations, and the driver checks every block)
    flags = column_ptr(ints, 1, np.int64)
    used = column_ptr(ints, 2, np.int64)
    me = ld(flags, F_WORKER)
    others = 0
    for j in range(column_size(ints, 2)):
        if j != me:
            others += ld(used, j)
    if mine + others > ld(flags, F_BUDGET):
        store(flags, F_OVER, 1 + kind)
        return False
    store(used, me, mine)
    return True


@njit(cache=True, nogil=True)
def over_budget(ints, cols, itemsizes, frames):
    """:func:`over_budget_borrowed` (callable from Python)."""
    return over_budget_borrowed(ints, cols, itemsizes, frames)


@njit(cache=True, nogil=True, _nrt=False, no_cpython_wrapper=True)
def over_budget_borrowed(ints, cols, itemsizes, frames):
    """Would ``frames`` frames in the frame columns (plus every scratch column, plus what
    else this worker holds) exceed the budget ``ints[1][0]`` bytes (0: none)?  Then flag
    it in ``ints[1][1]``."""
    budget = ld(column_ptr(ints, 1, np.int64), 0)
    if budget <= 0:
        return False
    scratch = 0
    for c in range(itemsizes.size, len(cols)):
        scratch += column_size(cols, c)
    held = frames * itemsizes.sum() + scratch
    # ints[1] and ints[2] through borrowed pointers: ``ints[1]`` takes a list item, a
    # reference taken and dropped (two atomic operations) on every block
    flags = column_ptr(ints, 1, np.int64)
    mine = held
    if column_size(ints, 1) >= N_FLAGS:
        store(flags, F_HELD + K_FRAMES, held)
        for k in range(1, 4):
            mine += ld(flags, F_HELD + k)
    # several workers share the budget: ints[2][j] holds worker j's bytes, ints[1][2]
    # is this worker's j (one worker: ints[2] = [0])
    if mine == ld(column_ptr(ints, 2, np.int64), ld(flags, F_WORKER)):
        # nothing grew since this worker's last check (the common case, every block):
        # no write to the slots the workers share, whose cache line would otherwise
        # move between their cores on every block
        return False
    return not _within(ints, mine, K_FRAMES)


@njit(cache=True, nogil=True)
def charge(ints, kind, nbytes):
    """This worker now holds ``nbytes`` bytes of ``kind`` (records, levels, other):
    False (and the budget flag set) if that is over the budget."""
    flags = ints[1]
    if flags.size < N_FLAGS:
        return True
    flags[F_HELD + kind] = nbytes
    if flags[F_BUDGET] <= 0:
        return True
    mine = 0
    for k in range(4):
        mine += flags[F_HELD + k]
    return _within(ints, mine, kind)


@njit(cache=True, nogil=True)
def held(ints, kind):
    """The bytes of ``kind`` this worker holds (0 for a driver that counts frames only)."""
    flags = ints[1]
    return flags[F_HELD + kind] if flags.size >= N_FLAGS else 0


@njit(cache=True, nogil=True)
def grow_counted(a, need, ints, kind):
    """``a`` (2-D, int64 or float64 rows) with at least ``need`` rows, new rows zeroed,
    the growth counted as ``kind``; ``a`` unchanged (and the budget flag set) if the
    growth is over the budget."""
    if need <= a.shape[0]:
        return a
    rows = max(need, 2 * a.shape[0])
    flags = ints[1]
    if flags.size >= N_FLAGS:
        if not charge(ints, kind, flags[F_HELD + kind] + (rows - a.shape[0]) * a.shape[1] * 8):
            return a
    b = np.zeros((rows, a.shape[1]), a.dtype)
    # element by element: numba compiles an array slice assignment with its shape-
    # mismatch error message and that message's string formatting.  Measured on a cold
    # process (numba 0.68, fib on the numba back end, 2-core AMD EPYC): the runtime's
    # compilation took 18.7 -> 11.9 s with 1 worker, 28.4 -> 19.1 s with 2
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            b[i, j] = a[i, j]
    return b


@njit(cache=True, nogil=True, _nrt=True)
def grow_children(cols, ints, itemsizes, frames, nk):
    """Room for ``frames`` frames in every frame column and ``nk`` child-block counters
    (``ints[0]``, zero-filled); False (and the budget flag set) if over the budget."""
    if over_budget(ints, cols, itemsizes, frames):
        return False
    if nk > column_size(ints, 0):
        ints[0] = grow2(ints[0], nk)
    for c in range(itemsizes.size):
        ensure_bytes_at(cols, c, frames * itemsizes[c])
    return True


# meta slots (ints[3]) of a kernel call; M_SLACK is the kernel plan's child-block slack,
# set once by the runner: child block k of a block with ni inductive threads starts at
# out_base + k * (ni + slack) (the plan's stride, the same in the C back end)
M_SLACK = 0

# A program's kernel executes one block; it has this uniform signature so the shared
# driver (revec.runtime.numba_scheduler.run_schedule) is compiled once for every
# program (a numba first-class function type), and a program compiles only its kernel:
#   kernel(cols, consts, accs, ints, off, n, out_base) -> (leaves, kused)
# cols:   the SoA frame columns as bytes, then the base and the inductive scratch columns
#         (one per parameter each), then the module's SCRATCH_COLUMNS scratch columns (the
#         threads' index lists, the lock-step loop's active lists); the kernel grows them
# consts: the module-level arrays the program reads, as bytes
# accs:   one 8-byte slot per reducer
# ints:   [kcnt (children per spawn index), [memory budget in bytes (0: none), over-budget
#         flag, worker index] (the driver's), bytes held by each worker (shared), meta,
#         the interrupt flag, the module's SCRATCH_BYTES (the driver grows those columns)]
# A kernel that needs more child blocks than there is room for grows them itself
# (grow_children, with the memory-budget check), as the C kernels do; over the budget it
# returns and the driver raises.
BYTES = types.uint8[::1]
INTS = types.int64[::1]
KERNEL_SIG = types.UniTuple(types.int64, 2)(
    types.ListType(BYTES), types.ListType(BYTES), BYTES, types.ListType(INTS),
    types.int64, types.int64, types.int64)
KERNEL_TYPE = types.FunctionType(KERNEL_SIG)


# Typed lists built by compiled, cached functions.  numba compiles the methods of a
# ``numba.typed.List`` used from the interpreter (its constructor, ``append``,
# ``__getitem__``, ``len``) in every process and caches none of them: building a run's
# lists that way cost a fresh process about 3 s of compiling before its first numba run
# (2-core AMD EPYC, numba 0.68: ``revec run fib.py fib 5 --backend numba`` 5.5 s, the
# same with the C back end 1.2 s).  These are compiled once per machine; a run's lists
# are only built here and then read through the numpy arrays they were built from.
@njit(types.ListType(BYTES)(), cache=True)
def _new_bytes_list():
    return typed.List.empty_list(BYTES)


@njit(types.none(types.ListType(BYTES), BYTES), cache=True)
def _push_bytes(lst, a):
    lst.append(a)


@njit(types.ListType(INTS)(), cache=True)
def _new_ints_list():
    return typed.List.empty_list(INTS)


@njit(types.none(types.ListType(INTS), INTS), cache=True)
def _push_ints(lst, a):
    lst.append(a)


def _filled(lst: Any, push: Any, arrays: Iterable[np.ndarray]) -> Any:
    for a in arrays:
        push(lst, a)
    return lst


def bytes_list(arrays: Iterable[np.ndarray]) -> Any:
    """A typed list of the given ``uint8`` arrays (the arrays themselves, not copies)."""
    return _filled(_new_bytes_list(), _push_bytes, arrays)


def ints_list(arrays: Iterable[np.ndarray]) -> Any:
    """A typed list of the given ``int64`` arrays (the arrays themselves, not copies)."""
    return _filled(_new_ints_list(), _push_ints, arrays)

"""Small compiled helpers the generated numba modules import."""

from __future__ import annotations

import numpy as np
from numba import njit, types


@njit(cache=True, nogil=True)
def grow(a, need):  # type: ignore[no-untyped-def]
    """``a`` with room for at least ``need`` elements (contents kept)."""
    if need <= a.size:
        return a
    b = np.empty(max(need, 2 * a.size), a.dtype)
    b[: a.size] = a
    return b


@njit(cache=True, nogil=True)
def grow2(a, need):  # type: ignore[no-untyped-def]
    """Like :func:`grow`, zero-filling the new part."""
    if need <= a.size:
        return a
    b = np.zeros(max(need, 2 * a.size), a.dtype)
    b[: a.size] = a
    return b


# meta slots (ints[3]) of a kernel call
M_NB, M_NI, M_KUSED, M_STATUS, M_RESUME, M_NEED = range(6)

# A program's kernel executes one block; it has this uniform signature so the shared
# driver (revec.runtime.numba_scheduler.run_schedule) is compiled once for every
# program (a numba first-class function type), and a program compiles only its kernel:
#   kernel(cols, consts, accs, ints, off, n, out_base, start) -> (leaves, kused)
# cols:   the SoA frame columns as bytes (the kernel replaces one to grow it)
# consts: the module-level arrays the program reads, as bytes
# accs:   one 8-byte slot per reducer
# ints:   [kcnt (children per spawn index), [memory budget in bytes (0: none), over-budget
#         flag] (the driver's), unused, meta]
# start:  0 for a new block; j + 1 to resume the inductive threads at j after the driver
#         made room for more child blocks (meta: nb, ni, kused, status, resume, need)
BYTES = types.uint8[::1]
INTS = types.int64[::1]
KERNEL_SIG = types.UniTuple(types.int64, 2)(
    types.ListType(BYTES), types.ListType(BYTES), BYTES, types.ListType(INTS),
    types.int64, types.int64, types.int64, types.int64)
KERNEL_TYPE = types.FunctionType(KERNEL_SIG)

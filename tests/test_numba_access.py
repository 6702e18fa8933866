"""The column-access intrinsics of the numba kernels against plain NumPy indexing."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numba import njit, typed, types
from numba.extending import intrinsic

from revec.runtime.numba_access import (
    as_column,
    column_ptr,
    column_size,
    lane_buf,
    ld,
    ld_at,
    st,
    st_at,
    zero32,
)

DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float32, np.float64, np.bool_]


@njit
def _roundtrip_ptr(cols, k, dt, src, out_idx):  # type: ignore[no-untyped-def]
    """Read every element of column k through a pointer, write them reversed at
    out_idx (unsigned and signed indices), return their sum as float64."""
    p = column_ptr(cols, k, dt)
    n = src.size
    total = 0.0
    for i in range(n):
        x = ld(p, np.uint64(i))
        total += np.float64(x)
        st(p, out_idx[i], src[n - 1 - i])
    return total


@pytest.mark.parametrize("dt", DTYPES)
def test_column_ptr_load_store(dt) -> None:
    rng = np.random.default_rng(7)
    n = 37
    vals = (rng.integers(0, 2, n) if dt is np.bool_ else rng.integers(-100, 100, n)).astype(dt)
    raw = np.zeros(n * np.dtype(dt).itemsize + 3, np.uint8)  # a partial element at the end
    raw[: vals.nbytes] = vals.view(np.uint8)
    cols = typed.List([np.zeros(8, np.uint8), raw])
    out_idx = np.arange(n, dtype=np.int64)
    total = _roundtrip_ptr(cols, 1, dt, vals, out_idx)
    assert total == pytest.approx(vals.astype(np.float64).sum())
    # the list's column itself was written (a borrowed pointer, no copy)
    assert np.array_equal(cols[1][: vals.nbytes].view(dt), vals[::-1])
    assert np.array_equal(cols[0], np.zeros(8, np.uint8))


@njit
def _store_converted(a, v):  # type: ignore[no-untyped-def]
    st(a, 0, v)
    st(a, np.uint16(1), v + 1)
    return ld(a, 1)


def test_store_converts_like_setitem() -> None:
    # int64 values into int16 / uint8 / float32 / bool arrays: as numba's a[i] = v
    for dt, v in ((np.int16, 70000), (np.uint8, -1), (np.float32, 3), (np.bool_, 2)):
        a = np.zeros(4, dt)
        ref = np.zeros(4, dt)
        got = _store_converted(a, v)

        @njit
        def plain(b, w):  # type: ignore[no-untyped-def]
            b[0] = w
            b[1] = w + 1
            return b[1]

        assert plain(ref, v) == got
        assert np.array_equal(a, ref), (dt, a, ref)


@njit
def _slots(accs):  # type: ignore[no-untyped-def]
    a = ld_at(accs, 0, np.int64)
    b = ld_at(accs, 8, np.float32)
    c = ld_at(accs, 16, np.uint8)
    st_at(accs, 0, np.int64, a * 3)
    st_at(accs, 8, np.float32, np.float64(b) * 0.5)
    st_at(accs, 16, np.uint8, c + 1)
    return a, b, c


def test_reducer_slots() -> None:
    accs = np.zeros(24, np.uint8)
    accs[0:8].view(np.int64)[0] = -5
    accs[8:12].view(np.float32)[0] = 1.5
    accs[16] = 255
    a, b, c = _slots(accs)
    assert (a, b, c) == (-5, np.float32(1.5), 255)
    assert accs[0:8].view(np.int64)[0] == -15
    assert accs[8:12].view(np.float32)[0] == np.float32(0.75)
    assert accs[16] == 0  # uint8 wraps


@njit
def _zero(cols, j):  # type: ignore[no-untyped-def]
    zero32(column_ptr(cols, 0, np.uint8), j)


@pytest.mark.parametrize("j", [0, 1, 5, 31, 32])
def test_zero32(j) -> None:
    m = np.full(80, 7, np.uint8)
    cols = typed.List([m])
    _zero(cols, j)
    ref = np.full(80, 7, np.uint8)
    ref[j:j + 32] = 0
    assert np.array_equal(cols[0], ref)


@njit
def _view(raw, dt):  # type: ignore[no-untyped-def]
    a = as_column(raw, dt)
    return a.size, a.copy()


@pytest.mark.parametrize("dt", [np.int16, np.uint32, np.float64])
def test_as_column(dt) -> None:
    raw = np.arange(27, dtype=np.uint8)
    size, got = _view(raw, dt)
    k = raw.size // np.dtype(dt).itemsize
    assert size == k
    assert np.array_equal(got, raw[: k * np.dtype(dt).itemsize].view(dt))


@njit
def _sizes(cols):  # type: ignore[no-untyped-def]
    out = np.empty(len(cols), np.int64)
    for k in range(len(cols)):
        out[k] = column_size(cols, k)
    return out


@functools.cache
def _grow_then_size():  # type: ignore[no-untyped-def]
    """A compiled ``ensure_bytes`` then ``column_size``; numba_support is imported here,
    not while pytest collects this module: it compiles part of revec's numba runtime at
    import (under the cache check and lock of revec.backends.numba_runner when a run
    loads it)."""
    from revec.runtime.numba_support import ensure_bytes

    @njit
    def grow_then_size(cols, k, nbytes):  # type: ignore[no-untyped-def]
        ensure_bytes(cols, k, nbytes)
        return column_size(cols, k)

    return grow_then_size


def test_column_size_follows_the_list() -> None:
    """column_size reads each column's element count, also after ensure_bytes (whose
    fast path trusts it) replaced a column; the contents survive the growth."""
    cols = typed.List([np.arange(n, dtype=np.uint8) for n in (0, 1, 7, 64, 1000)])
    assert list(_sizes(cols)) == [0, 1, 7, 64, 1000]
    ints = typed.List([np.zeros(n, np.int64) for n in (4, 9)])
    assert list(_sizes(ints)) == [4, 9]
    assert _grow_then_size()(cols, 2, 7) == 7  # enough room: nothing replaced
    grown = _grow_then_size()(cols, 2, 8)
    assert grown >= 8 and cols[2].size == grown
    assert np.array_equal(cols[2][:7], np.arange(7, dtype=np.uint8))
    assert list(_sizes(cols))[3:] == [64, 1000]


@intrinsic
def _address(typingctx, p):  # type: ignore[no-untyped-def]
    """A column pointer's address as an integer (for the alignment test)."""
    if not isinstance(p, types.CPointer):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        return builder.ptrtoint(args[0], context.get_value_type(types.intp))

    return types.intp(p), codegen


@njit
def _lane_buf_offsets():  # type: ignore[no-untyped-def]
    """Each lane buffer's address modulo a cache line (64 bytes)."""
    a = lane_buf(np.uint8)
    b = lane_buf(np.uint64)
    c = lane_buf(np.uint32)
    st(a, 0, 1)
    st(b, 0, 2)
    st(c, 0, 3)
    return (_address(a) % 64, _address(b) % 64, _address(c) % 64,
            ld(a, 0) + ld(b, 0) + ld(c, 0))


def test_lane_buffers_on_cache_lines() -> None:
    """lane_buf's stack arrays start on a cache line whatever the stack pointer's offset
    (ASLR moves it by multiples of 16 bytes from process to process; 256-bit accesses of
    a lane buffer 16 bytes off a 32-byte boundary split cache lines).  Called at several
    C-stack depths (each ``map`` level moves the stack pointer)."""

    def nest(n: int) -> tuple[int, int, int, int]:
        if n == 0:
            return _lane_buf_offsets()  # type: ignore[no-any-return]
        return list(map(lambda _: nest(n - 1), [0]))[0]

    for depth in range(6):
        assert nest(depth) == (0, 0, 0, 6)

"""Stream compaction equals x[mask] for every 8- and 16-bit mask, every dtype and every
implementation; tables; split; in-place use; errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revec.errors import RevecError
from revec.runtime import compaction as cp
from revec.runtime.compaction import tables

DTYPES = [np.int8, np.uint8, np.bool_, np.int16, np.uint16, np.float16, np.int32, np.uint32,
          np.float32, np.int64, np.uint64, np.float64]
IMPLS = [i for i in cp.available()]
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def test_every_variant_is_available_here() -> None:
    # this project's machine has AVX2: the SIMD variants must be among those tested
    feats = cp.cpu_features()
    expected = {"numpy", "numba", "numba-prefix", "c", "c-branchy", "c-scalar", "c-prefix"}
    if "ssse3" in feats:
        expected.add("c-ssse3")
    if "avx2" in feats:
        expected.add("c-avx2")
    if {"avx512", "avx512vbmi2"} <= feats:
        expected.add("c-avx512")
    assert expected <= set(IMPLS)


def _values(n: int, dtype: type) -> np.ndarray:
    """Distinct bit patterns within every 256 consecutive positions (order is checked)."""
    size = np.dtype(dtype).itemsize
    raw = (np.arange(n, dtype=np.uint64) * 0x9E3779B97F4A7C15 >> np.uint64(17))
    u = raw.astype(_UINT[size])
    if size == 1:
        u = np.arange(n).astype(np.uint8)
    x = u.view(dtype) if dtype is not np.bool_ else (u & 1).astype(np.bool_)
    return x


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    u = _UINT[a.dtype.itemsize]
    return a.shape == b.shape and np.array_equal(a.view(u), b.view(u))


def _all_masks(w: int) -> np.ndarray:
    m = np.arange(1 << w, dtype=np.int64)
    return ((m[:, None] >> np.arange(w)) & 1).astype(np.bool_).ravel()


MASKS8 = _all_masks(8)
MASKS16 = _all_masks(16)


# ---------------------------------------------------------------- tables

@pytest.mark.parametrize("w", [4, 8])
def test_tables_exhaustive(w: int) -> None:
    shuf, adv, pre = tables.shuffle_table(w), tables.advance_table(w), tables.prefix_table(w)
    for m in range(1 << w):
        lanes = [i for i in range(w) if m >> i & 1]
        assert adv[m] == len(lanes)
        assert list(shuf[m, : len(lanes)]) == lanes
        assert all(v == tables.PAD for v in shuf[m, len(lanes):])
        for i in lanes:
            assert shuf[m, pre[m, i]] == i


def test_combine_table_joins_two_entries() -> None:
    comb, shuf, adv = tables.combine_table(), tables.shuffle_table(8), tables.advance_table(8)
    for lo in range(256):
        for hi in range(0, 256, 7):
            reg = np.concatenate([shuf[lo], np.where(shuf[hi] == tables.PAD, tables.PAD,
                                                     shuf[hi] + 8)])
            sel = comb[adv[lo]]
            ctrl = np.where(sel & 0x80, tables.PAD, reg[sel & 0x0F])   # pshufb
            want = [i for i in range(16) if (lo | hi << 8) >> i & 1]
            assert list(ctrl[: len(want)]) == want


def test_packed_permute_table() -> None:
    packed = tables.packed_permute_table()
    shuf = tables.shuffle_table(8, pad=0)
    for m in range(256):
        assert [(int(packed[m]) >> (3 * k)) & 7 for k in range(8)] == list(shuf[m])


def test_c_source_is_self_contained_text() -> None:
    src = cp.c_source()
    assert "revec_cmp_shuf8" in src and "revec_get_compact" in src and "static" in src


# ---------------------------------------------------------------- exhaustive masks

@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_8_and_16_bit_mask(impl: str, dtype: type) -> None:
    for masks in (MASKS8, MASKS16):
        x = _values(masks.size, dtype)
        want = x[masks]
        got = cp.compact(x, masks, impl=impl)
        assert _same(got, want)
        t, f = cp.split(x, masks, impl=impl)
        assert _same(t, want) and _same(f, x[~masks])


@pytest.mark.parametrize("impl", IMPLS)
def test_random_32_lane_masks(impl: str) -> None:
    rng = np.random.default_rng(32)
    for dtype in DTYPES:
        for density in (0.1, 0.5, 0.9):
            masks = rng.random(32 * 2048) < density
            x = _values(masks.size, dtype)
            assert _same(cp.compact(x, masks, impl=impl), x[masks])
            t, f = cp.split(x, masks, impl=impl)
            assert _same(t, x[masks]) and _same(f, x[~masks])


# ---------------------------------------------------------------- lengths, offsets, in place

@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 300), start=st.integers(0, 7), seed=st.integers(0, 2**32 - 1),
       density=st.sampled_from([0.0, 0.3, 0.5, 0.97, 1.0]),
       dtype=st.sampled_from(DTYPES))
def test_lengths_offsets_in_place(n: int, start: int, seed: int, density: float,
                                  dtype: type) -> None:
    rng = np.random.default_rng(seed)
    base = _values(n + start, dtype)
    x = base[start:]                      # misaligned data
    mask = rng.random(n) < density
    if rng.random() < 0.5:
        mask = (mask * rng.integers(1, 255, n)).astype(np.uint8)   # nonzero bytes, not 1
    want = x[mask != 0]
    for impl in IMPLS:
        assert _same(cp.compact(x, mask, impl=impl), want), impl
        t, f = cp.split(x, mask, impl=impl)
        assert _same(t, want) and _same(f, x[mask == 0]), impl
        buf = x.copy()
        k = cp.compact_into(buf, mask, buf, impl=impl)          # in place
        assert _same(buf[:k], want), impl
        # out exactly len(x) long, followed by a guard that must stay untouched
        guarded = np.zeros(n + 64, x.dtype)
        guard = guarded[n:].copy()
        k = cp.compact_into(x, mask, guarded[:n], impl=impl)
        assert _same(guarded[:k], want) and _same(guarded[n:], guard), impl


# ---------------------------------------------------------------- errors

def test_errors() -> None:
    x = np.arange(10, dtype=np.int32)
    with pytest.raises(RevecError, match="unknown compaction implementation"):
        cp.compact(x, x > 3, impl="gpu")
    with pytest.raises(RevecError, match="shape"):
        cp.compact(x, np.ones(9, bool))
    with pytest.raises(RevecError, match="1-D"):
        cp.compact(x.reshape(2, 5), np.ones((2, 5), bool))
    with pytest.raises(RevecError, match="room"):
        cp.compact_into(x, x > 3, np.empty(5, np.int32))
    with pytest.raises(RevecError, match="int32"):
        cp.compact_into(x, x > 3, np.empty(10, np.int64))
    with pytest.raises(RevecError, match="overlap"):
        cp.split_into(x, x > 3, x, np.empty(10, np.int32))
    with pytest.raises(RevecError, match="byte elements"):
        cp.compact(np.zeros(4, np.complex128), np.ones(4, bool))


def test_non_bool_mask_and_partial_overlap() -> None:
    x = np.arange(100, dtype=np.int64)
    m = (x % 3).astype(np.int32)                 # nonzero = selected
    assert _same(cp.compact(x, m), x[m != 0])
    buf = x.copy()
    k = cp.compact_into(buf[10:], m[10:], buf[5:95])   # overlapping, not identical
    assert _same(buf[5:5 + k], x[10:][m[10:] != 0])


def test_c_text_dispatches_without_march_native() -> None:
    """The kernels carry their own target attributes: built with plain -O2 (no
    -march=native) the SIMD variants still exist and agree with x[mask]."""
    from revec.runtime.compaction import c_impl
    from revec.toolchain.cbuild import load_c_module

    ffi, lib = load_c_module("compaction_portable", c_impl.CDEF,
                             c_impl.c_source() + c_impl._text("module.c"), cflags=["-O2"])
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, 1000, dtype=np.uint32)
    m = (rng.random(1000) < 0.5).astype(np.uint8)
    out = np.zeros_like(x)
    for name, code in c_impl.VARIANTS.items():
        if not lib.revec_cmp_usable(32, code) and code >= 0:
            continue
        k = lib.revec_cmp_compact(32, code, ffi.from_buffer(x), ffi.from_buffer(m), x.size,
                                  ffi.from_buffer(out))
        assert k == m.sum() and np.array_equal(out[:k], x[m != 0]), name

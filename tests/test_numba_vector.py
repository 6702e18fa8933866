"""The numba vector primitives (revec.runtime.compaction.numba_vector) against x[mask]:
every 16-bit mask in both halves of the 32-lane step (so every 8-bit group mask too) and
random 32-bit masks, for every lane width, dtype and variant; the AVX-512 variant's
lowering to vpcompress; the ISA choice and its environment override."""

from __future__ import annotations

import re

import numpy as np
import pytest
from llvmlite import binding
from numba import njit

from revec.errors import RevecError
from revec.runtime.compaction import numba_vector as nv

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
DTYPES = [np.int8, np.uint8, np.bool_, np.int16, np.uint16, np.int32, np.float32,
          np.int64, np.uint64, np.float64]
I_OFF, J_OFF = 5, 3  # unaligned source and destination positions


def _lanes(dtype: type, seed: int) -> np.ndarray:
    """Lane values with distinct bit patterns (bool: alternating, the order still shows
    through the count and positions of the True values)."""
    size = np.dtype(dtype).itemsize
    n = I_OFF + nv.LANES
    u = ((np.arange(n, dtype=np.uint64) + np.uint64(seed)) * np.uint64(0x9E3779B97F4A7C15)
         >> np.uint64(11)).astype(_UINT[size])
    if dtype is np.bool_:
        return (np.arange(n) % 3 == seed % 3)
    if size == 1:
        u = (np.arange(n) * 7 + seed).astype(np.uint8)
    return u.view(dtype)


@njit(cache=False)
def _reference(xu, i, bits, out):  # type: ignore[no-untyped-def]
    c = 0
    for k in range(32):
        if (bits >> k) & 1:
            out[c] = xu[i + k]
            c += 1
    return c


def _sweeper(compress):  # type: ignore[no-untyped-def]
    @njit(cache=False)
    def sweep(x, xu, masks, out, outu, ref):  # type: ignore[no-untyped-def]
        """Failures over ``masks``: count, selected lanes, and nothing written past
        ``out[J + 32]``."""
        bad = 0
        sentinel = outu[J_OFF + 32]
        for b in masks:
            bits = np.uint32(b)
            k = compress(x, I_OFF, bits, out, J_OFF)
            c = _reference(xu, I_OFF, bits, ref)
            if k != c or outu[J_OFF + 32] != sentinel:
                bad += 1
                continue
            for q in range(c):
                if outu[J_OFF + q] != ref[q]:
                    bad += 1
                    break
        return bad

    return sweep


SWEEPERS = {isa: _sweeper(nv.COMPRESS[isa]) for isa in nv.ISAS}


def _masks_exhaustive() -> np.ndarray:
    m = np.arange(1 << 16, dtype=np.uint64)
    return np.concatenate([m, m << np.uint64(16), m | ((m ^ np.uint64(0xFFFF)) << np.uint64(16)),
                           m | (m << np.uint64(16))]).astype(np.uint32)


def _run(isa: str, dtype: type, masks: np.ndarray, seed: int = 1) -> int:
    x = _lanes(dtype, seed)
    size = np.dtype(dtype).itemsize
    out: np.ndarray = np.zeros(J_OFF + 40, dtype)
    outu = out.view(_UINT[size])
    outu[J_OFF + 32:] = 0xA5
    ref = np.zeros(32, _UINT[size])
    return int(SWEEPERS[isa](x, x.view(_UINT[size]), masks, out, outu, ref))


@pytest.mark.parametrize("isa", nv.ISAS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_16bit_mask(isa: str, dtype: type) -> None:
    if isa == "avx2" and nv.native_isa(8 * np.dtype(dtype).itemsize) == "scalar":
        pytest.skip("the target CPU lacks SSSE3/AVX2")
    assert _run(isa, dtype, _masks_exhaustive()) == 0


@pytest.mark.parametrize("isa", nv.ISAS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.int64, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_random_32bit_masks(isa: str, dtype: type) -> None:
    if isa == "avx2" and nv.native_isa(8 * np.dtype(dtype).itemsize) == "scalar":
        pytest.skip("the target CPU lacks SSSE3/AVX2")
    rng = np.random.default_rng(7)
    masks = np.concatenate([rng.integers(0, 1 << 32, 20000, dtype=np.uint64),
                            [0, 0xFFFFFFFF, 1, 1 << 31]]).astype(np.uint32)
    for seed in (1, 2):
        assert _run(isa, dtype, masks, seed) == 0


def _iota_checker(compress):  # type: ignore[no-untyped-def]
    @njit(cache=False)
    def check(start, masks, out):  # type: ignore[no-untyped-def]
        bad = 0
        for b in masks:
            bits = np.uint32(b)
            k = compress(start, bits, out, J_OFF)
            c = 0
            for q in range(32):
                if (bits >> q) & 1:
                    if out[J_OFF + c] != start + q:
                        bad += 1
                    c += 1
            bad += k != c
        return bad

    return check


@pytest.mark.parametrize("isa", nv.ISAS)
def test_compress_iota(isa: str) -> None:
    rng = np.random.default_rng(3)
    masks = np.concatenate([np.arange(1 << 16), rng.integers(0, 1 << 32, 5000)]
                           ).astype(np.uint32)
    out = np.zeros(J_OFF + 32, np.int64)
    assert _iota_checker(nv.COMPRESS_IOTA[isa])(np.int64(1) << 40, masks, out) == 0


def test_movemask_copy_iota() -> None:
    @njit(cache=False)
    def run(m, src, dst, idx):  # type: ignore[no-untyped-def]
        nv.copy32(src, 2, dst, 1)
        nv.iota32(np.int64(100), idx, 3)
        return nv.movemask32(m, 4)

    rng = np.random.default_rng(5)
    for _ in range(50):
        m = rng.integers(0, 3, 40).astype(np.uint8)
        src = rng.integers(-(1 << 60), 1 << 60, 40)
        dst = np.zeros(40, np.int64)
        idx = np.full(40, -1, np.int64)
        bits = int(run(m, src, dst, idx))
        assert bits == sum(1 << k for k in range(32) if m[4 + k])
        assert (dst[1:33] == src[2:34]).all() and dst[0] == 0 and (dst[33:] == 0).all()
        assert (idx[3:35] == 100 + np.arange(32)).all() and (idx[:3] == -1).all()


COMPACT_COLS = {"avx512": nv.compact_cols_avx512, "avx2": nv.compact_cols_avx2,
                "scalar": nv.compact_cols_scalar}


@pytest.mark.parametrize("isa", nv.ISAS)
def test_compact_cols_is_a_stable_split(isa: str) -> None:
    """compact_cols_<isa>: kept and dropped threads of several columns (1 to 8 bytes, and
    thread indices) against numpy's boolean indexing, for block sizes around the
    32-thread step, uniform and mixed masks, a source offset, and mask bytes > 1; the
    mask bytes past n are garbage and must not count."""
    compact = COMPACT_COLS[isa]

    @njit(cache=False)
    def split(mb, off, n, a, b, c, ka, kb, kc, ki, da, dc, di):  # type: ignore[no-untyped-def]
        return compact(mb, off, n, ((a, ka), (b, kb), (c, kc), (None, ki)),
                       ((a, da), (c, dc), (None, di)))

    @njit(cache=False)
    def keep_only(mb, n, c, kc):  # type: ignore[no-untyped-def]
        return compact(mb, 0, n, ((c, kc),), ())

    rng = np.random.default_rng(11)
    for n in [0, 1, 31, 32, 33, 64, 95, 200, *rng.integers(0, 300, 40).tolist()]:
        for p in (0.0, 1.0, 0.5, 0.05):
            off = int(rng.integers(0, 40))
            mb = ((rng.random(n + 32) < p) * rng.integers(1, 4, n + 32)).astype(np.uint8)
            mb[n:] = rng.integers(0, 256, 32)
            a = rng.integers(-128, 128, off + n + 32).astype(np.int8)
            b = rng.integers(0, 1 << 40, off + n + 32).astype(np.uint64)
            c = rng.random(off + n + 32).astype(np.float32)
            outs = [np.zeros(n + 32, x.dtype) for x in (a, b, c)] + [np.zeros(n + 32, np.int64)]
            drops = [np.zeros(n + 32, x.dtype) for x in (a, c)] + [np.zeros(n + 32, np.int64)]
            kept = split(mb, off, n, a, b, c, *outs, *drops)
            sel = mb[:n] != 0
            assert kept == sel.sum(), (n, p)
            idx = np.arange(off, off + n)
            for got, src in zip(outs, (a, b, c, idx)):
                want = (src if src is idx else src[off:off + n])[sel]
                assert (got[:kept] == want).all(), (n, p, src.dtype)
            for got, src in zip(drops, (a, c, idx)):
                want = (src if src is idx else src[off:off + n])[~sel]
                assert (got[:n - kept] == want).all(), (n, p, src.dtype)
            kc = np.zeros(n + 32, np.float32)
            assert keep_only(mb, n, c, kc) == sel.sum()
            assert (kc[:sel.sum()] == c[:n][sel]).all()


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_avx512_variant_lowers_to_vpcompress(dtype: type) -> None:
    """The avx512 IR, compiled for AVX-512 VBMI2 CPUs (Intel and AMD; here only
    compiled, not run), uses vpcompress into a register: no scalar expansion, no
    memory-destination compress."""
    @njit(cache=False)
    def f(x, bits, out):  # type: ignore[no-untyped-def]
        return nv.compress_avx512(x, 0, bits, out, 0)

    x: np.ndarray = np.zeros(32, dtype)
    f(x, np.uint32(3), x.copy())
    llvm_ir = f.inspect_llvm(f.signatures[0])
    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    target = binding.Target.from_triple(binding.get_process_triple())
    for cpu in ("icelake-server", "znver4"):
        tm = target.create_target_machine(cpu=cpu, features="", opt=3)
        asm = tm.emit_assembly(binding.parse_assembly(llvm_ir))
        # (instructions only: the test's own name, in the symbols, says vpcompress too)
        steps = [ins for ins in map(str.split, asm.splitlines())
                 if ins and ins[0].startswith("vpcompress")]
        assert steps, cpu
        # register destination (then a plain store): the memory-destination form is
        # microcoded on Zen 4, ten times slower in the kernels (docs/compaction.md)
        for ins in steps:
            assert re.fullmatch(r"%[xyz]mm\d+", ins[2]), (cpu, ins)


def test_isa_choice_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(nv.ENV, raising=False)
    feats = nv.target_features()
    for w in (8, 16, 32, 64):
        assert nv.isa_for(w) == nv.native_isa(w)
        if "avx512vl" not in feats and "avx2" in feats:
            assert nv.isa_for(w) == "avx2"
    monkeypatch.setenv(nv.ENV, "scalar")
    assert {nv.isa_for(w) for w in (8, 16, 32, 64)} == {"scalar"}
    monkeypatch.setenv(nv.ENV, "avx512")
    assert nv.isa_for(32) == "avx512"
    monkeypatch.setenv(nv.ENV, "sse9")
    with pytest.raises(RevecError, match="REVEC_NUMBA_VECTOR"):
        nv.isa_for(8)

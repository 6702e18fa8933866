"""Vector primitives for numba kernels: LLVM vector IR emitted through numba intrinsics.

numba's loops do not vectorize a stream compaction (``out[j] = x[i]; j += m``: LLVM
cannot vectorize the data-dependent store address), so the generated kernels call these
primitives, which emit the vector code themselves (``numba.extending.intrinsic`` with
llvmlite IR).  A *step* handles the 32 threads of one kernel step (:data:`LANES`):

* ``movemask32(m, i) -> uint32``: bit k = ``m[i + k] != 0`` (one 32-byte load, a vector
  compare and a bitcast of the ``<32 x i1>`` result: ``vpcmpeqb`` + ``vpmovmskb``);
* ``popcount32(bits) -> int64``;
* ``copy32(src, i, dst, j)``: ``dst[j:j + 32] = src[i:i + 32]`` as one vector load/store;
* ``iota32(start, dst, j)``: ``dst[j + k] = start + k`` (int64 ``dst``);
* ``compress_<isa>(src, i, bits, dst, j) -> int64``: the lanes ``src[i + k]`` whose bit
  ``k`` is set, in order, to ``dst[j:]``; returns their count.  Elements of 1, 2, 4 or 8
  bytes of any dtype (bits are moved);
* ``compress_iota_<isa>(start, bits, dst, j) -> int64``: the same for the values
  ``start + k`` (a thread's arena index) into an int64 ``dst``.

A step may write anything into ``dst[j:j + 32]`` past the count (like the C steps), so
``dst`` needs room for ``j + 32`` elements; in a block split ``j <= i`` holds, so columns
of the block's size suffice.

``<isa>`` (one intrinsic each, so the name in a generated module keys numba's cache):

* ``avx512``: ``llvm.experimental.vector.compress`` of each 512-bit group of the 32
  lanes (one group for 8- and 16-bit lanes, two for 32-bit, four for 64-bit) into a
  register, which LLVM lowers to register-destination ``vpcompressb/w`` (AVX-512 VBMI2)
  or ``vpcompressd/q`` (AVX-512 F), then one unaligned store of the whole group at the
  running count (the next group's store starts at its ``popcount``); the IR is generic,
  so on a CPU without AVX-512 it still runs correctly, as LLVM's expansion;
* ``avx2``: the shuffle/advance tables of :mod:`revec.runtime.compaction.tables` as LLVM
  constants: 32-bit lanes ``vpermd`` by the packed 3-bit entry (broadcast + variable
  shift), 64-bit lanes ``vpermd`` of dword pairs (4-lane entries), 8- and 16-bit lanes
  SSSE3 ``pshufb`` by 8-lane byte controls; one unaligned vector store per group, the
  next group's store starts at the advance (``popcount`` of the group's bits);
* ``scalar``: a branch-free store of every lane at the running count (unrolled).

:func:`isa_for` chooses the variant for a lane width from the CPU numba compiles for
(``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES`` or the host), or as forced by the environment
variable ``REVEC_NUMBA_VECTOR`` = ``avx512`` | ``avx2`` | ``scalar`` (``auto``: default),
so the fallbacks are tested on any machine.

Why register-destination compress (measured on an AMD EPYC Zen 4, AVX-512 VBMI2, numba
0.68.1 / LLVM 22, 2026-11-28): the ``avx512`` variant used to be one
``llvm.masked.compressstore`` of the 32 lanes, which LLVM lowers to the
*memory*-destination ``vpcompress`` -- microcoded on Zen 4 (tens of cycles per
instruction instead of two uops).  numba reexp at the default bench size, B = 16384,
interleaved in one process, median of 5 (seconds; load average 1.1-1.5):

=========  ====================  =====================  ======
bench      avx512 (memory dst)   avx512 (register dst)  avx2
=========  ====================  =====================  ======
fib        0.543                 0.049                  0.074
nqueens    0.229                 0.043                  0.052
binomial   0.181                 0.026                  0.033
knapsack   0.089                 0.094                  0.089
graphcol   0.196                 0.177                  0.175
=========  ====================  =====================  ======

With the register form ``avx512`` is the fastest variant or within noise of ``avx2``
(knapsack's and graphcol's blocks are mostly uniform: copies, few compress steps), so
:func:`native_isa` keeps choosing it wherever the CPU has it; no CPU model list is needed
(Intel's memory-destination form is fast, its register form as well).
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from revec.errors import RevecError
from revec.runtime.compaction.tables import (
    byte_shuffle_table,
    dword_permute_table,
    packed_permute_table,
    shuffle_table,
)
from revec.runtime.numba_access import array_field

LANES = 32
ISAS = ("avx512", "avx2", "scalar")
ENV = "REVEC_NUMBA_VECTOR"

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


# ---------------------------------------------------------------- ISA choice
@cache
def target_features() -> frozenset[str]:
    """The x86 features of the CPU numba compiles for (``+feature`` names, no ``+``)."""
    from numba.core import config

    # numba's config sets its settings as module globals at import time (no stub: mypy
    # sees none of them); read from the module's namespace
    cpu_features: str | None = vars(config)["CPU_FEATURES"]
    if cpu_features:
        return frozenset(f[1:] for f in str(cpu_features).split(",")
                         if f.startswith("+"))
    from llvmlite import binding

    try:
        feats = binding.get_host_cpu_features()
    except RuntimeError:  # not x86 / unknown: scalar only
        return frozenset()
    return frozenset(k for k, v in feats.items() if v)


def native_isa(width: int) -> str:
    """The best variant for ``width``-bit lanes on the target CPU."""
    f = target_features()
    if "avx512vl" in f and ("avx512vbmi2" in f if width <= 16 else "avx512f" in f):
        return "avx512"
    if ("ssse3" in f) if width <= 16 else ("avx2" in f):
        return "avx2"
    return "scalar"


def isa_for(width: int) -> str:
    """The variant the generated kernels use for ``width``-bit lanes (``REVEC_NUMBA_VECTOR``
    forces one: ``avx512`` compiles anywhere; ``avx2`` needs the CPU's AVX2/SSSE3)."""
    want = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if want == "auto":
        return native_isa(width)
    if want not in ISAS:
        raise RevecError(f"{ENV}={want!r}: expected auto, {', '.join(ISAS)}")
    if want == "avx2" and native_isa(width) == "scalar":
        raise RevecError(f"{ENV}=avx2: the target CPU lacks "
                         f"{'SSSE3' if width <= 16 else 'AVX2'}")
    return want


@cache
def source_digest() -> str:
    """A digest of this module's text and of the other compiled code a generated kernel
    calls: the column-access intrinsics and helpers (revec/runtime/numba_access.py,
    numba_support.py) and the runtime library (revec/lib/*.py).  Generated modules carry
    it, so a change of any of them changes their name and numba's on-disk cache of them
    (numba's cache of a function does not notice a change of the functions it calls: a
    kernel cached before the library's SHA-1 became an intrinsic named a module that no
    longer existed, and failed to load)."""
    runtime = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(Path(__file__).read_bytes())
    for f in (runtime / "numba_access.py", runtime / "numba_support.py",
              *sorted((runtime.parent / "lib").glob("*.py"))):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


# ---------------------------------------------------------------- IR helpers
def _bitwidth(t: types.Type) -> int:
    """The bits of integer or float type ``t``."""
    # numba's stubs declare ``bitwidth`` on Float only, Integer has it as well
    return t.bitwidth  # type: ignore[attr-defined,no-any-return]


def _itemsize(arrty: types.Array | types.CPointer) -> int:
    return 1 if arrty.dtype == types.boolean else _bitwidth(arrty.dtype) // 8


def _elem_ptr(context: Any, builder: ir.IRBuilder, arrty: types.Array | types.CPointer,
              val: Any, idx: ir.Value, lane: ir.IntType) -> ir.Value:
    """Pointer to element ``idx`` of a 1-D contiguous array (or of a column pointer,
    revec.runtime.numba_access.column_ptr), as ``lane*``."""
    if isinstance(arrty, types.CPointer):
        return builder.gep(builder.bitcast(val, lane.as_pointer()), [idx])
    base = builder.bitcast(array_field(context, builder, arrty, val, "data"),
                           lane.as_pointer())
    return builder.gep(base, [idx])


def _vec_ptr(builder: ir.IRBuilder, ptr: ir.Value, vty: ir.VectorType) -> ir.Value:
    return builder.bitcast(ptr, vty.as_pointer())


def _const_vec(ty: ir.IntType, vals: list[int]) -> ir.Constant:
    return ir.Constant(ir.VectorType(ty, len(vals)), [ir.Constant(ty, int(v)) for v in vals])


def _table(builder: ir.IRBuilder, name: str, rows: np.ndarray, ty: ir.IntType) -> ir.Value:
    """A module-level constant ``[len(rows) x <w x ty>]`` (or ``[len x ty]`` for 1-D)."""
    mod = builder.module
    if name in mod.globals:
        return mod.globals[name]
    if rows.ndim == 1:
        init = ir.Constant(ir.ArrayType(ty, rows.size), [ir.Constant(ty, int(v)) for v in rows])
    else:
        vt = ir.VectorType(ty, rows.shape[1])
        init = ir.Constant(ir.ArrayType(vt, rows.shape[0]),
                           [_const_vec(ty, [int(v) for v in r]) for r in rows])
    g = cgutils.global_constant(mod, name, init)
    g.align = 64
    return g


def _table_entry(builder: ir.IRBuilder, table: ir.Value, idx: ir.Value) -> ir.Value:
    p = builder.gep(table, [ir.Constant(_I32, 0), idx], inbounds=True)
    return builder.load(p, align=4)


def _ctpop(builder: ir.IRBuilder, v: ir.Value) -> ir.Value:
    fn = builder.module.declare_intrinsic("llvm.ctpop", [v.type])
    return builder.call(fn, [v])


def _x86(builder: ir.IRBuilder, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
    fnty = ir.FunctionType(ret, [a.type for a in args])
    fn = cgutils.get_or_insert_function(builder.module, fnty, name)
    return builder.call(fn, args)


def _group(builder: ir.IRBuilder, vec: ir.Value, g: int, w: int) -> ir.Value:
    """Lanes ``g*w .. g*w + w - 1`` of ``vec`` as a ``w``-lane vector."""
    return builder.shuffle_vector(vec, vec, _const_vec(_I32, list(range(g * w, g * w + w))))


# ---------------------------------------------------------------- compaction IR
def _compress_ir(builder: ir.IRBuilder, isa: str, vec: ir.Value, bits: ir.Value,
                 dst: ir.Value) -> ir.Value:
    """Store the lanes of ``vec`` (``<32 x iN>``) whose bit in ``bits`` (i32) is set, in
    order, from ``dst`` (``iN*``) on; return their count (i64)."""
    lane: ir.IntType = vec.type.element
    width = lane.width
    count = builder.zext(_ctpop(builder, bits), _I64)
    if isa == "avx512":
        # register-destination compress of one 512-bit group (256 for bytes) at a time,
        # then a plain unaligned store of the whole group at the running count: never
        # ``llvm.masked.compressstore``, whose memory-destination vpcompress is microcoded
        # on Zen 4 (see "ISA choice" below)
        glanes = min(LANES, 512 // width)
        ity = ir.IntType(glanes)
        gty = ir.VectorType(lane, glanes)
        mty = ir.VectorType(ir.IntType(1), glanes)
        fnty = ir.FunctionType(gty, [gty, mty, gty])
        fn = cgutils.get_or_insert_function(
            builder.module, fnty, f"llvm.experimental.vector.compress.v{glanes}i{width}")
        j = ir.Constant(_I64, 0)
        for g in range(LANES // glanes):
            b = builder.lshr(bits, ir.Constant(_I32, glanes * g)) if g else bits
            b = builder.trunc(b, ity) if glanes < LANES else b
            sub = _group(builder, vec, g, glanes) if glanes < LANES else vec
            packed = builder.call(fn, [sub, builder.bitcast(b, mty), ir.Constant(gty, None)])
            builder.store(packed, _vec_ptr(builder, builder.gep(dst, [j]), gty), align=1)
            if g + 1 < LANES // glanes:
                j = builder.add(j, builder.zext(_ctpop(builder, b), _I64))
        return count
    if isa == "scalar":
        j = ir.Constant(_I64, 0)
        for k in range(LANES):
            builder.store(builder.extract_element(vec, ir.Constant(_I32, k)),
                          builder.gep(dst, [j]), align=1)
            bit = builder.and_(builder.lshr(bits, ir.Constant(_I32, k)), ir.Constant(_I32, 1))
            j = builder.add(j, builder.zext(bit, _I64))
        return count
    assert isa == "avx2", isa
    j = ir.Constant(_I64, 0)
    if width == 32:  # vpermd by the packed 3-bit entry, 8 lanes per group
        table = _table(builder, "revec_nv_perm8x32", packed_permute_table(), _I32)
        shifts = _const_vec(_I32, [3 * k for k in range(8)])
        vty = ir.VectorType(_I32, 8)
        for g in range(LANES // 8):
            b = builder.and_(builder.lshr(bits, ir.Constant(_I32, 8 * g)), ir.Constant(_I32, 255))
            packed = _table_entry(builder, table, b)
            splat = builder.shuffle_vector(
                builder.insert_element(ir.Constant(vty, None), packed, ir.Constant(_I32, 0)),
                ir.Constant(vty, None), _const_vec(_I32, [0] * 8))
            idx = builder.lshr(splat, shifts)
            sub = _group(builder, vec, g, 8)
            perm = _x86(builder, "llvm.x86.avx2.permd", vty, [sub, idx])
            builder.store(perm, _vec_ptr(builder, builder.gep(dst, [j]), vty), align=1)
            j = builder.add(j, builder.zext(_ctpop(builder, b), _I64))
        return count
    if width == 64:  # vpermd of dword pairs, 4 lanes per group
        table = _table(builder, "revec_nv_perm4x64", dword_permute_table(4, 2), _I32)
        vty = ir.VectorType(_I32, 8)
        qty = ir.VectorType(_I64, 4)
        for g in range(LANES // 4):
            b = builder.and_(builder.lshr(bits, ir.Constant(_I32, 4 * g)), ir.Constant(_I32, 15))
            idx = _table_entry(builder, table, b)
            sub = builder.bitcast(_group(builder, vec, g, 4), vty)
            perm = builder.bitcast(_x86(builder, "llvm.x86.avx2.permd", vty, [sub, idx]), qty)
            builder.store(perm, _vec_ptr(builder, builder.gep(dst, [j]), qty), align=1)
            j = builder.add(j, builder.zext(_ctpop(builder, b), _I64))
        return count
    # 8- and 16-bit lanes: pshufb by an 8-lane byte control, 8 lanes per group
    bty = ir.VectorType(_I8, 16)
    if width == 16:
        table = _table(builder, "revec_nv_shuf8x16", byte_shuffle_table(8, 2), _I8)
    else:
        ctrl = np.full((256, 16), 0x80, np.uint8)
        ctrl[:, :8] = shuffle_table(8)
        table = _table(builder, "revec_nv_shuf8x8", ctrl, _I8)
    gty = ir.VectorType(lane, 8)
    for g in range(LANES // 8):
        b = builder.and_(builder.lshr(bits, ir.Constant(_I32, 8 * g)), ir.Constant(_I32, 255))
        ctl = _table_entry(builder, table, b)
        sub = _group(builder, vec, g, 8)
        if width == 16:
            src = builder.bitcast(sub, bty)
        else:  # 8 bytes in the low half of a 16-byte register
            src = builder.shuffle_vector(sub, ir.Constant(gty, None),
                                         _const_vec(_I32, list(range(16))))
        sh = _x86(builder, "llvm.x86.ssse3.pshuf.b.128", bty, [src, ctl])
        if width == 16:
            out = builder.bitcast(sh, gty)
        else:
            out = builder.shuffle_vector(sh, sh, _const_vec(_I32, list(range(8))))
        builder.store(out, _vec_ptr(builder, builder.gep(dst, [j]), gty), align=1)
        j = builder.add(j, builder.zext(_ctpop(builder, b), _I64))
    return count


def _is_vec_array(a: Any) -> bool:
    """A 1-D contiguous array or a column pointer of 1, 2, 4 or 8-byte elements."""
    return ((isinstance(a, types.CPointer)
             or (isinstance(a, types.Array) and a.ndim == 1 and a.layout in "C"))
            and (a.dtype == types.boolean
                 or (isinstance(a.dtype, (types.Integer, types.Float))
                     and _bitwidth(a.dtype) in (8, 16, 32, 64))))


def _load_vec(context: Any, builder: ir.IRBuilder, arrty: types.Array, val: Any,
              idx: ir.Value) -> ir.Value:
    lane = ir.IntType(8 * _itemsize(arrty))
    vty = ir.VectorType(lane, LANES)
    return builder.load(_vec_ptr(builder, _elem_ptr(context, builder, arrty, val, idx, lane),
                                 vty), align=1)


def _make_compress(isa: str) -> Any:
    def compress(typingctx: Any, src: Any, i: Any, bits: Any, dst: Any, j: Any) -> Any:
        if not (_is_vec_array(src) and _is_vec_array(dst)
                and _itemsize(src) == _itemsize(dst)):
            return None
        sig = types.int64(src, types.intp, types.uint32, dst, types.intp)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            vec = _load_vec(context, builder, sig.args[0], args[0], args[1])
            lane = vec.type.element
            dptr = _elem_ptr(context, builder, sig.args[3], args[3], args[4], lane)
            return _compress_ir(builder, isa, vec, args[2], dptr)

        return sig, codegen

    compress.__name__ = f"compress_{isa}"
    return intrinsic(compress)


def _make_compress_iota(isa: str) -> Any:
    def compress_iota(typingctx: Any, start: Any, bits: Any, dst: Any, j: Any) -> Any:
        if not (_is_vec_array(dst) and dst.dtype == types.int64):
            return None
        sig = types.int64(types.int64, types.uint32, dst, types.intp)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            vec = _iota_vec(builder, args[0])
            dptr = _elem_ptr(context, builder, sig.args[2], args[2], args[3], _I64)
            return _compress_ir(builder, isa, vec, args[1], dptr)

        return sig, codegen

    compress_iota.__name__ = f"compress_iota_{isa}"
    return intrinsic(compress_iota)


def _iota_vec(builder: ir.IRBuilder, start: ir.Value) -> ir.Value:
    vty = ir.VectorType(_I64, LANES)
    splat = builder.shuffle_vector(
        builder.insert_element(ir.Constant(vty, None), start, ir.Constant(_I32, 0)),
        ir.Constant(vty, None), _const_vec(_I32, [0] * LANES))
    return builder.add(splat, _const_vec(_I64, list(range(LANES))))


# ---------------------------------------------------------------- the primitives
@intrinsic
def movemask32(typingctx: Any, m: Any, i: Any) -> Any:
    """Bit k of the result: ``m[i + k] != 0`` (``m`` of bytes)."""
    if not (_is_vec_array(m) and _itemsize(m) == 1):
        return None
    sig = types.uint32(m, types.intp)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        v = _load_vec(context, builder, sig.args[0], args[0], args[1])
        nz = builder.icmp_unsigned("!=", v, ir.Constant(v.type, None))
        return builder.bitcast(nz, _I32)

    return sig, codegen


@intrinsic
def popcount32(typingctx: Any, bits: Any) -> Any:
    """The number of set bits of a 32-bit mask (``popcnt``), as int64."""
    sig = types.int64(types.uint32)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        return builder.zext(_ctpop(builder, args[0]), _I64)

    return sig, codegen


@intrinsic
def copy32(typingctx: Any, src: Any, i: Any, dst: Any, j: Any) -> Any:
    """``dst[j:j + 32] = src[i:i + 32]`` (same element size), one vector load and store."""
    if not (_is_vec_array(src) and _is_vec_array(dst) and _itemsize(src) == _itemsize(dst)):
        return None
    sig = types.none(src, types.intp, dst, types.intp)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        v = _load_vec(context, builder, sig.args[0], args[0], args[1])
        d = _elem_ptr(context, builder, sig.args[2], args[2], args[3], v.type.element)
        builder.store(v, _vec_ptr(builder, d, v.type), align=1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def iota32(typingctx: Any, start: Any, dst: Any, j: Any) -> Any:
    """``dst[j + k] = start + k`` for k < 32 (int64 ``dst``)."""
    if not (_is_vec_array(dst) and dst.dtype == types.int64):
        return None
    sig = types.none(types.int64, dst, types.intp)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        v = _iota_vec(builder, args[0])
        d = _elem_ptr(context, builder, sig.args[1], args[1], args[2], _I64)
        builder.store(v, _vec_ptr(builder, d, v.type), align=1)
        return context.get_dummy_value()

    return sig, codegen


compress_avx512 = _make_compress("avx512")
compress_avx2 = _make_compress("avx2")
compress_scalar = _make_compress("scalar")
compress_iota_avx512 = _make_compress_iota("avx512")
compress_iota_avx2 = _make_compress_iota("avx2")
compress_iota_scalar = _make_compress_iota("scalar")

# ---------------------------------------------------------------- column sets
def _element_types(t: types.BaseTuple) -> tuple[Any, ...]:
    """The element types of tuple type ``t``."""
    # every concrete numba tuple type has ``types`` (an attribute or a property); their
    # base class, which numba has no stub for, does not declare it
    return t.types  # type: ignore[attr-defined,no-any-return]


def _pairs(t: Any) -> list[tuple[Any, Any]] | None:
    """The (source, destination) pairs of a ``compact_cols`` argument, or None if it is
    not a tuple of pairs of columns of one element size (a ``None`` source: int64
    destination, the thread's index)."""
    if not isinstance(t, types.BaseTuple):
        return None
    out = []
    for pair in _element_types(t):
        if not (isinstance(pair, types.BaseTuple) and len(pair) == 2):
            return None
        src, dst = _element_types(pair)
        if not _is_vec_array(dst):
            return None
        if isinstance(src, types.NoneType):
            if dst.dtype != types.int64:
                return None
        elif not (_is_vec_array(src) and _itemsize(src) == _itemsize(dst)):
            return None
        out.append((src, dst))
    return out


def _make_compact_cols(isa: str) -> Any:
    """``compact_cols_<isa>(mb, off, n, keep, drop) -> int64``: a whole block split.

    For the threads ``t < n`` (mask bytes ``mb[t]``, frames at ``off + t``): each pair
    ``(src, dst)`` of ``keep`` gets the elements ``src[off + t]`` of the threads whose
    byte is set, each pair of ``drop`` those of the others, dense from ``dst[0]`` on and
    in order; the result is the number of set threads.  A ``None`` source stands for the
    thread's index ``off + t`` (int64 destination).  32 threads per step (their bytes ->
    a 32-bit mask, one :func:`_compress_ir` step per pair; a step whose threads all agree
    is a plain vector copy for one side), the rest thread by thread, branch-free;
    destinations need room for 32 elements past their count (like ``compress_<isa>``).

    One intrinsic for the whole loop, where a generated kernel used to spell it out with
    ``movemask32`` / ``copy32`` / ``compress_<isa>`` calls: numba's own passes (type
    inference, SSA, lowering) cost about 3 ms per typed statement, and that loop was a
    fifth of a generated kernel's compile time; here llvmlite writes the same IR directly
    (measured: see docs/backends.md, "The numba back end")."""

    def compact_cols(typingctx: Any, mb: Any, off: Any, n: Any, keep: Any, drop: Any) -> Any:
        if not (_is_vec_array(mb) and _itemsize(mb) == 1):
            return None
        kp, dp = _pairs(keep), _pairs(drop)
        if kp is None or dp is None:
            return None
        sig = types.int64(mb, types.intp, types.intp, keep, drop)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            mbty, m, start, count = sig.args[0], args[0], args[1], args[2]

            def unpack(tv: Any, pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any, Any, Any]]:
                out = []
                for k, (sty, dty) in enumerate(pairs):
                    pv = builder.extract_value(tv, k)
                    out.append((sty, builder.extract_value(pv, 0), dty,
                                builder.extract_value(pv, 1)))
                return out

            sides = (unpack(args[3], kp), unpack(args[4], dp))
            zero = ir.Constant(_I64, 0)
            t_ = cgutils.alloca_once_value(builder, zero)
            js = (cgutils.alloca_once_value(builder, zero),
                  cgutils.alloca_once_value(builder, zero))
            full = builder.and_(count, ir.Constant(_I64, ~(LANES - 1)))

            def source_vec(sty: Any, sv: Any, at: ir.Value) -> ir.Value:
                if isinstance(sty, types.NoneType):
                    return _iota_vec(builder, at)
                return _load_vec(context, builder, sty, sv, at)

            def dest(dty: Any, dv: Any, j: ir.Value, lane: ir.Type) -> ir.Value:
                return _elem_ptr(context, builder, dty, dv, j, lane)

            def loop_test(head: Any, bound: ir.Value, body: Any, out: Any
                          ) -> tuple[ir.Value, ir.Value]:
                """``head``: on to ``body`` while ``t < bound``; there, ``t`` and the
                source position ``off + t``."""
                builder.position_at_end(head)
                t = builder.load(t_)
                builder.cbranch(builder.icmp_signed("<", t, bound), body, out)
                builder.position_at_end(body)
                return t, builder.add(start, t)

            def advance(t: ir.Value, kept: ir.Value, step: int) -> None:
                """Past ``step`` threads, ``kept`` of them set: the counts and ``t``."""
                size = ir.Constant(_I64, step)
                builder.store(builder.add(builder.load(js[0]), kept), js[0])
                builder.store(builder.add(builder.load(js[1]), builder.sub(size, kept)), js[1])
                builder.store(builder.add(t, size), t_)

            def copies(side: int, at: ir.Value) -> None:
                j = builder.load(js[side])
                for sty, sv, dty, dv in sides[side]:
                    v = source_vec(sty, sv, at)
                    d = dest(dty, dv, j, v.type.element)
                    builder.store(v, _vec_ptr(builder, d, v.type), align=1)

            # vector steps: while t + 32 <= n
            head = builder.append_basic_block("cc.head")
            body = builder.append_basic_block("cc.step")
            none_ = builder.append_basic_block("cc.none")
            all_ = builder.append_basic_block("cc.all")
            mixed = builder.append_basic_block("cc.mixed")
            nxt = builder.append_basic_block("cc.next")
            rhead = builder.append_basic_block("cc.rest")
            rbody = builder.append_basic_block("cc.rest.step")
            done = builder.append_basic_block("cc.done")
            builder.branch(head)
            t, at = loop_test(head, full, body, rhead)
            mv = _load_vec(context, builder, mbty, m, t)
            bits = builder.bitcast(builder.icmp_unsigned("!=", mv, ir.Constant(mv.type, None)),
                                   _I32)
            sw = builder.switch(bits, mixed)
            sw.add_case(ir.Constant(_I32, 0), none_)
            sw.add_case(ir.Constant(_I32, (1 << LANES) - 1), all_)
            builder.position_at_end(none_)
            copies(1, at)
            builder.branch(nxt)
            builder.position_at_end(all_)
            copies(0, at)
            builder.branch(nxt)
            builder.position_at_end(mixed)
            for side, b in ((0, bits), (1, builder.not_(bits))):
                j = builder.load(js[side])
                for sty, sv, dty, dv in sides[side]:
                    v = source_vec(sty, sv, at)
                    _compress_ir(builder, isa, v, b, dest(dty, dv, j, v.type.element))
            builder.branch(nxt)
            builder.position_at_end(nxt)
            advance(t, builder.zext(_ctpop(builder, bits), _I64), LANES)
            builder.branch(head)
            # the rest, thread by thread: both sides written, the counts advance by
            # the mask byte (branch-free)
            t, at = loop_test(rhead, count, rbody, done)
            mbyte = builder.load(_elem_ptr(context, builder, mbty, m, t, _I8))
            isk = builder.zext(builder.icmp_unsigned("!=", mbyte, ir.Constant(_I8, 0)), _I64)
            for side in (0, 1):
                j = builder.load(js[side])
                for sty, sv, dty, dv in sides[side]:
                    if isinstance(sty, types.NoneType):
                        val = at
                    else:
                        lane = ir.IntType(8 * _itemsize(sty))
                        val = builder.load(_elem_ptr(context, builder, sty, sv, at, lane))
                    builder.store(val, dest(dty, dv, j, val.type))
            advance(t, isk, 1)
            builder.branch(rhead)
            builder.position_at_end(done)
            return builder.load(js[0])

        return sig, codegen

    compact_cols.__name__ = f"compact_cols_{isa}"
    return intrinsic(compact_cols)


compact_cols_avx512 = _make_compact_cols("avx512")
compact_cols_avx2 = _make_compact_cols("avx2")
compact_cols_scalar = _make_compact_cols("scalar")


COMPRESS = {"avx512": compress_avx512, "avx2": compress_avx2, "scalar": compress_scalar}
COMPRESS_IOTA = {"avx512": compress_iota_avx512, "avx2": compress_iota_avx2,
                 "scalar": compress_iota_scalar}


# ---------------------------------------------------------------- whole arrays
@cache
def compact_function(isa: str) -> Any:
    """A compiled ``compact(x, m, out, reps) -> count``: ``out[:count] = x[m != 0]`` by the
    ``isa`` steps, 32 lanes at a time (all-selected steps copy, none-selected skip), the
    rest lane by lane; repeated ``reps`` times (for timing inside one compiled call)."""
    from numba import njit

    step = COMPRESS[isa]

    @njit(nogil=True)
    def compact(x, m, out, reps):
        n = x.size
        j = 0
        for _ in range(reps):
            j = 0
            i = 0
            while i + LANES <= n:
                bits = movemask32(m, i)
                if bits == 0xFFFFFFFF:
                    copy32(x, i, out, j)
                    j += LANES
                elif bits != 0:
                    j += step(x, i, bits, out, j)
                i += LANES
            while i < n:
                out[j] = x[i]
                j += m[i] != 0
                i += 1
        return j

    return compact

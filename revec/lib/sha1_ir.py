"""UTS's SHA-1 child-state function as a numba intrinsic: the compression in LLVM IR.

The numba back end calls runtime-library functions from inside its kernels' thread loops.
Written as an ``@njit`` function, the 80-round compression is a call LLVM does not inline
(it is far over the inliner's size threshold), so the loop stays scalar; written as Python
for numba to inline, every kernel would type the 80 rounds again (seconds of compile
time).  As an intrinsic it costs numba one call to type, and its IR is emitted straight
into the caller: LLVM sees a loop of plain 32-bit operations and vectorizes it across
threads (8 SHA-1s per AVX2 instruction), as gcc does with the C version's
``always_inline``.  Arithmetic is ``i32`` with wraparound (no ``nsw``/``nuw`` flags),
rotations are the shift-or pattern LLVM turns into rotates.

The message is the parent's 20-byte state (``h0 .. h4``, big-endian words) followed by
the child index ``i`` as a 4-byte big-endian integer: 24 bytes, one padded 64-byte block.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec

from llvmlite import ir
from numba import types

if TYPE_CHECKING:
    _P = ParamSpec("_P")

    def intrinsic(fn: Callable[Concatenate[Any, _P], object], /) -> Callable[_P, Any]:
        """``numba.extending.intrinsic`` as compiled code calls its result: with the
        arguments after the typing context, giving what the codegen makes (numba's stub
        types the call as ``fn``'s own, typing context included, returning nothing)."""
else:
    from numba.extending import intrinsic

H_INIT = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0)
ROUND_K = (0x5A827999, 0x6ED9EBA1, 0x8F1BBCDC, 0xCA62C1D6)
I32 = ir.IntType(32)


def _const(v: int) -> ir.Constant:
    return ir.Constant(I32, v & 0xFFFFFFFF)


def compress_ir(builder: ir.IRBuilder, state: list[Any], index: Any) -> list[Any]:
    """The five output words of one SHA-1 compression of the padded 24-byte message
    (``state`` words, then ``index``), from SHA-1's initial hash values; ``i32`` values."""
    def rotl(x: Any, n: int) -> Any:
        return builder.or_(builder.shl(x, _const(n)), builder.lshr(x, _const(32 - n)))

    # the 16 message words: state, index, the 0x80 padding byte, zeros, the bit length
    w: list[Any] = [*state, index, _const(0x80000000)] + [_const(0)] * 8 + [_const(192)]
    for t in range(16, 80):
        x = builder.xor(builder.xor(w[t - 3], w[t - 8]), builder.xor(w[t - 14], w[t - 16]))
        w.append(rotl(x, 1))
    a, b, c, d, e = (_const(h) for h in H_INIT)
    for t in range(80):
        if t < 20:
            f = builder.xor(d, builder.and_(b, builder.xor(c, d)))
        elif t < 40 or t >= 60:
            f = builder.xor(builder.xor(b, c), d)
        else:
            f = builder.or_(builder.or_(builder.and_(b, c), builder.and_(b, d)),
                            builder.and_(c, d))
        tmp = builder.add(builder.add(builder.add(rotl(a, 5), f), builder.add(e, w[t])),
                          _const(ROUND_K[t // 20]))
        a, b, c, d, e = tmp, a, rotl(b, 30), c, d
    return [builder.add(_const(h), v) for h, v in zip(H_INIT, (a, b, c, d, e))]


@intrinsic
def sha1_spawn_ir(typingctx: Any, h0: Any, h1: Any, h2: Any, h3: Any, h4: Any,
                  i: Any) -> Any:
    """Child ``i``'s state (five ``uint32``) of the node with state ``h0 .. h4``.  Any
    integer arguments are taken modulo 2**32 (``i``: its 32-bit pattern, big-endian in
    the message, as UTS's ``int`` spawn index)."""
    args = (h0, h1, h2, h3, h4, i)
    if not all(isinstance(a, types.Integer) for a in args):
        return None
    sig = types.UniTuple(types.uint32, 5)(*args)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, llargs: Any) -> Any:
        words = []
        for ty, v in zip(sig.args, llargs):
            width = ty.bitwidth
            if width > 32:
                v = builder.trunc(v, I32)
            elif width < 32:
                v = builder.sext(v, I32) if ty.signed else builder.zext(v, I32)
            words.append(v)
        out = compress_ir(builder, words[:5], words[5])
        return context.make_tuple(builder, sig.return_type, out)

    return sig, codegen

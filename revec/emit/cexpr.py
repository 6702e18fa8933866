"""Emission of IR expressions and statements as C (the C back end).

Semantics follow the numba back end exactly: integer arithmetic wraps (signed
operations are carried out in the unsigned type of the same width), ``//`` and
``%`` floor like Python and NumPy, float32 stays float32 (built with
``-ffp-contract=off``), negative array indices count from the end.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from revec import ir
from revec.emit.chains import binop_chain, boolop_chain, ifexp_chain
from revec.ir import speculable
from revec.transforms.show import expr as show_expr

CTYPES = {
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float32": "float", "float64": "double",
    # bool values are always 0 or 1 here (comparisons, `!= 0` conversions, 0/1 literals),
    # so a byte holds them; C's _Bool would make GCC 12 refuse to vectorize every loop
    # converting one ("type conversion to/from bit-precision unsupported")
    "bool": "uint8_t",
}


def ctype(ty: ir.Ty) -> str:
    return CTYPES[ty.dtype.name]


def utype(ty: ir.Ty) -> str:
    return "u" + CTYPES[ty.dtype.name] if ty.kind == "i" else CTYPES[ty.dtype.name]


def literal(value: int | float | bool, ty: ir.Ty) -> str:
    if ty.kind == "b":
        return "1" if value else "0"
    if ty.kind == "f":
        v = float(value)
        if math.isnan(v):
            text = "NAN"
        elif math.isinf(v):
            text = "INFINITY" if v > 0 else "(-INFINITY)"
        else:
            text = repr(v)
            if "e" not in text and "." not in text:
                text += ".0"
        return f"((float){text})" if ty.dtype == np.float32 else f"((double){text})"
    v = int(value)
    if ty.dtype == np.uint64:
        return f"UINT64_C({v})"
    if ty.dtype == np.int64 or ty.weak:
        return f"INT64_C({v})" if v != -(1 << 63) else "INT64_MIN"
    return f"(({ctype(ty)}){v})"


def cast(text: str, src: ir.Ty, dst: ir.Ty) -> str:
    if dst.kind == "b":
        return text if src.kind == "b" else f"(({text}) != 0)"
    return f"(({ctype(dst)})({text}))"


class CExprEmitter:
    def __init__(self, var: Callable[[str], str], array_ref: Callable[[str, list[str]], str],
                 helper_call: Callable[[str, list[str]], str],
                 lib_call: Callable[[str, list[str]], str]) -> None:
        self.var = var
        self.array_ref = array_ref
        self.helper_call = helper_call
        self.lib_call = lib_call
        # a bound's value at block start (ir.BoundRead): the kernel's bd_<r>; the plain
        # recursive C reads the worker's accumulator acc_<r>
        self.bound_prefix = "bd_"
        # boards held in a named C array (a helper's board parameters, copied once at
        # its entry): the elements' names -> the array
        self.picks: dict[tuple[str, ...], str] = {}

    def __call__(self, e: ir.Expr) -> str:
        flat = self.flat(e)
        if flat is not None:
            return flat
        match e:
            case ir.BoundRead(reducer=r):
                return f"{self.bound_prefix}{r}"
            case ir.Const(value=v, ty=ty):
                return literal(v, ty)
            case ir.Var(name=name):
                return self.var(name)
            case ir.Cast(operand=op, ty=ty):
                return cast(self(op), op.ty, ty)
            case ir.BinOp(op=op, left=a, right=b, ty=ty):
                return self.binop(op, self(a), self(b), ty)
            case ir.UnaryOp(op="not", operand=a):
                return f"(!{self(a)})"
            case ir.UnaryOp(op="~", operand=a, ty=ty) if ty.kind == "b":
                return f"(!{self(a)})"
            case ir.UnaryOp(op="+", operand=a):
                return self(a)
            case ir.UnaryOp(op="-", operand=a, ty=ty):
                if ty.kind == "f":
                    return f"(-{self(a)})"
                return f"(({ctype(ty)})(-({utype(ty)}){self(a)}))"
            case ir.UnaryOp(op="~", operand=a, ty=ty):
                return f"(({ctype(ty)})(~{self(a)}))"
            case ir.Compare(op=op, left=a, right=b):
                left, right = self(a), self(b)
                known = decided(op, a, b, left, right)
                if known is not None:  # (gcc warns of such a comparison: its value)
                    return self.known("1" if known else "0", (a, left), (b, right))
                return f"({left} {op} {right})"
            case ir.BoolOp(op=op, left=a, right=b):
                if speculable(b):
                    # nothing to skip: both sides always, so the lane loops if-convert
                    return f"({self(a)} {'&' if op == 'and' else '|'} {self(b)})"
                return f"({self(a)} {'&&' if op == 'and' else '||'} {self(b)})"
            case ir.IfExp(cond=c, then=ir.Var() | ir.Const() as a, orelse=ir.Var() | ir.Const() as b,
                          ty=ty) if ty.kind in "iu" or (ty.kind == "b" and speculable(c)):
                return blend(truth(self(c), c.ty), self(a), self(b), ty)
            case ir.IfExp(cond=c, then=a, orelse=b):
                return f"({self(c)} ? {self(a)} : {self(b)})"
            case ir.ArrayRef(array=name, indices=idx):
                return self.array_ref(name, [self(i) for i in idx])
            case ir.Pick(index=i, elements=els, ty=ty):
                named = self.picks.get(tuple(x.name for x in els))
                if named is not None:
                    return f"{named}[{self(i)}]"
                # an indexed load from the elements (a compound literal: no select chain)
                return (f"(({ctype(ty)}[{len(els)}]){{{', '.join(self(x) for x in els)}}})"
                        f"[{self(i)}]")
            case ir.Call(func=f, args=args):
                return self.helper_call(f, [self(a) for a in args])
            case ir.LibCall(func=f, args=args):
                return self.lib_call(f, [self(a) for a in args])
            case ir.MathCall(func="minimum" | "maximum" as f, args=(a, b), ty=ty):
                # b < a ? b : a (minimum), b > a ? b : a (maximum)
                left, right = self(a), self(b)
                known = decided("<" if f == "minimum" else ">", b, a, right, left)
                if known is not None:  # (gcc warns of such a comparison: its value)
                    return self.known(right if known else left, (a, left), (b, right))
                return self.math(f, [left, right], ty)
            case ir.MathCall(func=f, args=args, ty=ty):
                return self.math(f, [self(a) for a in args], ty)
        raise AssertionError(f"unhandled IR expression {type(e).__name__}")

    def flat(self, e: ir.Expr) -> str | None:
        """A long chain of one operator written flat (:mod:`revec.emit.chains`), else
        None."""
        if isinstance(e, ir.BinOp) and (chain := binop_chain(e)) is not None:
            first, rest = chain
            if e.ty.kind == "f":
                text = self(first) + "".join(f" {op} {self(x)}" for op, x in rest)
            else:  # unsigned arithmetic wraps (no int promotion of narrow operands)
                u = "uint64_t" if e.ty.dtype.itemsize == 8 else "uint32_t"
                text = f"({u}){self(first)}" + "".join(f" {op} ({u}){self(x)}"
                                                       for op, x in rest)
            return f"(({ctype(e.ty)})({text}))"
        if isinstance(e, ir.BoolOp) and (operands := boolop_chain(e)) is not None:
            if all(speculable(x) for x in operands[1:]):  # nothing to skip (see __call__)
                sym = "&" if e.op == "and" else "|"
            else:
                sym = "&&" if e.op == "and" else "||"
            return "(" + f" {sym} ".join(self(x) for x in operands) + ")"
        if isinstance(e, ir.IfExp) and (arms := ifexp_chain(e)) is not None:
            pairs, last = arms
            return "(" + "".join(f"{self(c)} ? {self(v)} : " for c, v in pairs) + \
                f"{self(last)})"
        return None

    @staticmethod
    def known(value: str, *operands: tuple[ir.Expr, str]) -> str:
        """``value``, where it replaces an expression over ``operands`` (IR, C text)
        whose outcome their form decides: operands that call a helper or a library
        function are still evaluated (and discarded), as the program would."""
        calls = [text for e, text in operands if text != value and any(
            isinstance(n, ir.Call | ir.LibCall) for n in ir.walk_nodes(e))]
        if not calls:
            return value
        return "(" + "".join(f"(void)({c}), " for c in calls) + f"{value})"

    def binop(self, op: str, a: str, b: str, ty: ir.Ty) -> str:
        t = ctype(ty)
        if ty.kind == "f":
            if op == "//":
                return f"rv_fdivf_{t}({a}, {b})"
            if op == "%":
                return f"rv_fmod_{t}({a}, {b})"
            if op == "**":
                return f"(({t})pow({a}, {b}))" if t == "double" else f"powf({a}, {b})"
            return f"(({t})({a} {op} {b}))"
        if ty.kind == "b":
            sym = {"+": "|", "*": "&", "&": "&", "|": "|", "^": "^"}.get(op, op)
            return f"((uint8_t)({a} {sym} {b}))"
        u = utype(ty)
        if op in ("+", "-", "*"):
            return f"(({t})(({u}){a} {op} ({u}){b}))"
        if op == "<<":
            return f"(({t})(({u}){a} << ({b})))"
        if op == ">>":
            return f"(({t})({a} >> ({b})))"
        if op in ("&", "|", "^"):
            return f"(({t})({a} {op} {b}))"
        if op == "//":
            return f"rv_floordiv_{t}({a}, {b})"
        if op == "%":
            return f"rv_mod_{t}({a}, {b})"
        if op == "**":
            return f"rv_ipow_{t}({a}, {b})"
        raise AssertionError(op)

    def math(self, f: str, args: list[str], ty: ir.Ty) -> str:
        t = ctype(ty)
        if f == "minimum":
            return f"(({args[1]}) < ({args[0]}) ? ({args[1]}) : ({args[0]}))"
        if f == "maximum":
            return f"(({args[1]}) > ({args[0]}) ? ({args[1]}) : ({args[0]}))"
        if f in ("abs", "fabs"):
            if ty.kind == "f":
                return f"fabs{'f' if t == 'float' else ''}({args[0]})"
            if ty.kind == "u" or ty.kind == "b":
                return args[0]
            return f"(({t})(({args[0]}) < 0 ? -({utype(ty)})({args[0]}) : ({args[0]})))"
        suffix = "f" if t == "float" else ""
        return f"{f}{suffix}({args[0]})"


C_PRELUDE = r"""
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

/* Python / NumPy floor division and modulo (the quotient rounds toward -inf); unsigned
   types are C's own (no sign to correct).  Division by zero gives 0, like NumPy. */
#define RV_IPOW(T) \
static inline T rv_ipow_##T(T a, T b) { \
    T r = 1; while (b > 0) { if (b & 1) r = (T)(r * a); a = (T)(a * a); b = (T)(b >> 1); } \
    return r; }
#define RV_INT_DIVMOD(T) \
static inline T rv_floordiv_##T(T a, T b) { \
    if (b == 0) return 0; \
    T q = (T)(a / b); T r = (T)(a % b); \
    if (r != 0 && ((r < 0) != (b < 0))) q = (T)(q - 1); \
    return q; } \
static inline T rv_mod_##T(T a, T b) { \
    if (b == 0) return 0; \
    T r = (T)(a % b); \
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b); \
    return r; } \
RV_IPOW(T)
#define RV_UINT_DIVMOD(T) \
static inline T rv_floordiv_##T(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \
static inline T rv_mod_##T(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); } \
RV_IPOW(T)
RV_INT_DIVMOD(int8_t) RV_INT_DIVMOD(int16_t) RV_INT_DIVMOD(int32_t) RV_INT_DIVMOD(int64_t)
RV_UINT_DIVMOD(uint8_t) RV_UINT_DIVMOD(uint16_t) RV_UINT_DIVMOD(uint32_t)
RV_UINT_DIVMOD(uint64_t)

/* NumPy's float divmod (npy_divmod): the floor quotient and the Python modulo. */
#define RV_FLOAT_DIVMOD(T, FMOD, FLOOR, COPYSIGN) \
static inline T rv_fmod_##T(T a, T b) { \
    T mod = FMOD(a, b); \
    if (!b) return mod; \
    if (mod) { if ((b < 0) != (mod < 0)) mod += b; } else { mod = COPYSIGN((T)0, b); } \
    return mod; } \
static inline T rv_fdivf_##T(T a, T b) { \
    if (!b) return a / b; \
    T mod = FMOD(a, b); T div = (a - mod) / b; \
    if (mod) { if ((b < 0) != (mod < 0)) { mod += b; div -= (T)1; } } \
    T fl; \
    if (div) { fl = FLOOR(div); if (div - fl > (T)0.5) fl += (T)1; } \
    else { fl = COPYSIGN((T)0, a / b); } \
    return fl; }
RV_FLOAT_DIVMOD(double, fmod, floor, copysign)
RV_FLOAT_DIVMOD(float, fmodf, floorf, copysignf)
"""


def decided(op: str, a: ir.Expr, b: ir.Expr, left: str, right: str) -> bool | None:
    """The value of the comparison ``a op b`` (C texts ``left``, ``right``) of integer or
    bool operands when the operands' form decides it, else None:

    * the same expression on both sides (``x < x``);
    * the operands' possible values (:func:`value_ranges`: their types', narrowed
      through conversions, constants and bitwise operations) agree on the outcome
      (``u8 < 0``, ``(int32)u8 ^ 5 < 0``, ``21 > (uint32)(x > y)``);
    * ``(x | C) == D`` with a bit of C not in D, and ``a == D`` with a bit of D that ``a``
      cannot have (:func:`maybe_ones`: ``(x & C) == D`` with a bit of D not in C,
      ``(2 * x & 3) == 3``) (and ``!=``).

    gcc warns of such comparisons in user code (-Wtautological-compare, -Wtype-limits,
    -Wbool-compare), so the emitter writes their value instead (:meth:`CExprEmitter.known`).
    Exact for any operand values."""
    if a.ty.kind == "f" or b.ty.kind == "f":
        return None
    if left == right:
        return op in ("==", "<=", ">=")
    if a.ty.dtype != b.ty.dtype:
        return None
    outcomes = {_compare(op, x, y) for x in value_ranges(a) for y in value_ranges(b)}
    if len(outcomes) == 1 and None not in outcomes:
        return outcomes.pop()
    if op in ("==", "!="):
        for x, d in ((a, b), (b, a)):
            if not isinstance(d, ir.Const) or d.ty.kind == "b":
                continue
            dv = int(d.value) & _bits(d.ty)
            if dv & ~maybe_ones(x):  # d has a bit x never has: never equal
                return op == "!="
            if not (isinstance(x, ir.BinOp) and x.op == "|"):
                continue
            for c in (x.left, x.right):
                if isinstance(c, ir.Const) and c.ty.dtype == d.ty.dtype:
                    if int(c.value) & _bits(c.ty) & ~dv:  # x has a bit d has not
                        return op == "!="
    return None


def _bits(ty: ir.Ty) -> int:
    """The mask of an integer type's bits (its values as unsigned bit patterns)."""
    return (1 << (8 * ty.dtype.itemsize)) - 1


def maybe_ones(e: ir.Expr) -> int:
    """The bits of the integer expression ``e``'s two's-complement pattern (its type's
    width) that may be 1, as far as its form tells: a constant's own; ``&`` of both
    operands', ``|`` and ``^`` of either's; a product with a constant ``c`` has as many
    low zero bits as ``c``; a left shift by a constant moves them up; a zero-extending
    conversion keeps them.  Else every bit."""
    full = _bits(e.ty)
    match e:
        case ir.Const(value=v):
            return int(v) & full
        case ir.BinOp(op="&", left=x, right=y):
            return maybe_ones(x) & maybe_ones(y)
        case ir.BinOp(op="|" | "^", left=x, right=y):
            return (maybe_ones(x) | maybe_ones(y)) & full
        case ir.BinOp(op="*", left=x, right=y):
            consts = [int(c.value) & full for c in (x, y) if isinstance(c, ir.Const)]
            if consts and consts[0]:
                low = (consts[0] & -consts[0]).bit_length() - 1  # trailing zero bits
                return full & ~((1 << low) - 1)
        case ir.BinOp(op="<<", left=x, right=ir.Const(value=k)) if 0 <= int(k) < 64:
            return (maybe_ones(x) << int(k)) & full
        case ir.Cast(operand=x) if x.ty.kind in "ub" and \
                e.ty.kind in "iu" and e.ty.dtype.itemsize >= x.ty.dtype.itemsize:
            return maybe_ones(x) if x.ty.kind == "u" else 1
    return full


def _compare(op: str, x: tuple[int, int], y: tuple[int, int]) -> bool | None:
    """``a op b`` for every ``a`` in the interval ``x`` and ``b`` in ``y``: True, False,
    or None when it depends on the values."""
    (xl, xh), (yl, yh) = x, y
    lt = True if xh < yl else False if xl >= yh else None
    gt = True if xl > yh else False if xh <= yl else None
    eq = False if xh < yl or yh < xl else True if xl == xh == yl == yh else None
    match op:
        case "<":
            return lt
        case ">":
            return gt
        case "<=":
            return None if gt is None else not gt
        case ">=":
            return None if lt is None else not lt
        case "==":
            return eq
        case "!=":
            return None if eq is None else not eq
    raise AssertionError(op)


def value_ranges(e: ir.Expr) -> list[tuple[int, int]]:
    """Intervals holding every value the integer or bool expression ``e`` can have, as
    far as its form tells (what a C compiler sees in the emitted text): a constant's
    value; a conversion's operand's values where they survive it (a widening, or a
    signed value into a wider unsigned type: two intervals); a comparison's, a
    negation's or a bool's 0 and 1; ``&``, ``|``, ``^`` of non-negative operands and a
    non-negative value shifted right by a constant; else the type's range."""
    lo, hi = _type_range(e.ty)
    if e.ty.kind == "b":
        return [(0, 1)]
    match e:
        case ir.Const(value=v):
            return [(int(v), int(v))]
        case ir.BinOp(op="^" | "-", left=x, right=y) if _same(x, y):
            return [(0, 0)]  # x ^ x, x - x (gcc folds them too)
        case ir.Cast(operand=x) if x.ty.kind in "iub":
            inner = value_ranges(x)
            if all(lo <= a and b <= hi for a, b in inner):
                return inner
            if e.ty.kind == "u" and x.ty.kind == "i" and \
                    e.ty.dtype.itemsize >= x.ty.dtype.itemsize:
                wrap = hi + 1  # negative values wrap around to the top of the range
                out = [(max(a, 0), b) for a, b in inner if b >= 0]
                out += [(a + wrap, min(b, -1) + wrap) for a, b in inner if a < 0]
                return sorted(out)
        case ir.BinOp(op="&" | "|" | "^" as o, left=x, right=y):
            rx, ry = value_ranges(x), value_ranges(y)
            tops = [max(r[1] for r in rr) for rr in (rx, ry) if min(r[0] for r in rr) >= 0]
            if o == "&" and tops:  # (two's complement: x & m lies in [0, m] for m >= 0)
                return [(0, min(tops))]
            if len(tops) == 2:
                mx, my = tops
                top = (1 << max(mx, my).bit_length()) - 1
                bottom = max(min(r[0] for r in rx), min(r[0] for r in ry)) if o == "|" else 0
                return [(bottom, min(top, hi))]
        case ir.BinOp(op=">>", left=x, right=ir.Const(value=c)) if 0 <= int(c) < 64:
            rx = value_ranges(x)
            if min(r[0] for r in rx) >= 0:
                return [(a >> int(c), b >> int(c)) for a, b in rx]
        case ir.BinOp(op=">>", left=x):  # by any amount: a non-negative x only shrinks
            rx = value_ranges(x)
            if min(r[0] for r in rx) >= 0:
                return [(0, max(r[1] for r in rx))]
        case ir.IfExp(then=x, orelse=y):
            return sorted(value_ranges(x) + value_ranges(y))
        case ir.MathCall(func="maximum" | "minimum" as f, args=(x, y)) if \
                x.ty.kind in "iu" and y.ty.kind in "iu":
            rx, ry = value_ranges(x), value_ranges(y)
            lows, highs = (min(r[0] for r in rx), min(r[0] for r in ry)), \
                (max(r[1] for r in rx), max(r[1] for r in ry))
            pick = max if f == "maximum" else min
            return [(pick(lows), pick(highs))]
    return [(lo, hi)]


def _same(x: ir.Expr, y: ir.Expr) -> bool:
    """The same expression on both sides (positions aside), without memory reads or
    calls (each side computes the same value)."""
    return x.ty == y.ty and speculable(x) and show_expr(x) == show_expr(y)


def _type_range(ty: ir.Ty) -> tuple[int, int]:
    if ty.kind == "b":
        return 0, 1
    info = np.iinfo(ty.dtype)
    return int(info.min), int(info.max)


def truth(text: str, ty: ir.Ty) -> str:
    """A condition as 0 or 1."""
    return text if ty.kind == "b" else f"(({text}) != 0)"


def blend(c: str, a: str, b: str, ty: ir.Ty) -> str:
    """``c ? a : b`` without a branch, for an integer or bool ``ty`` and a 0/1 ``c``
    (``a``, ``b`` and, for bool, ``c`` are evaluated twice, so they must be cheap and
    speculable).  GCC 12 does not vectorize a conditional expression whose condition is
    narrower than its value (a bool choosing between uint16 values), nor an if-converted
    bool store (nor this xor form for bool); the lane loops of the C kernel depend on
    both vectorizing."""
    if ty.kind == "b":
        # a constant side (``if hit: found = True``) leaves an OR / AND: gcc keeps the
        # general form's two compares and a blend per use in a vectorized loop (minmax's
        # has_line: ten per board)
        if _unparen(a) == "1":
            return f"((uint8_t)(({b}) | {c}))"
        if _unparen(a) == "0":
            return f"((uint8_t)(({b}) & !{c}))"
        if _unparen(b) == "1":
            return f"((uint8_t)(({a}) | !{c}))"
        if _unparen(b) == "0":
            return f"((uint8_t)(({a}) & {c}))"
        return f"((uint8_t)((({a}) & {c}) | (({b}) & !{c})))"
    u = utype(ty)
    return (f"(({ctype(ty)})(({u})({b}) ^ ((({u})({a}) ^ ({u})({b})) & "
            f"({u})(0 - ({u})({c})))))")


def _unparen(text: str) -> str:
    """``text`` without parentheses around all of it (``((1))`` -> ``1``)."""
    t = text.strip()
    while t.startswith("(") and t.endswith(")") and _balanced(t[1:-1]):
        t = t[1:-1].strip()
    return t


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def select_one(conds: list[str], values: list[str], ty: ir.Ty) -> str:
    """The value whose 0/1 condition holds, for integer or bool ``ty``, where at most one
    condition holds (0 if none): an OR of masked values, which GCC vectorizes at any
    element width (a chain of conditional expressions with byte conditions and 64-bit
    values it does not)."""
    terms = [masked(v, c, ty) for c, v in zip(conds, values)]
    return f"(({ctype(ty)})({' | '.join(terms)}))"


def masked(v: str, c: str, ty: ir.Ty) -> str:
    """``v`` where the 0/1 ``c`` holds, else 0, in the unsigned type of ``ty``'s width."""
    u = "uint8_t" if ty.kind == "b" else utype(ty)
    return f"(({u})({v}) & ({u})(0 - ({u})({c})))"

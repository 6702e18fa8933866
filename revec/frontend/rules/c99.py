"""C's type rules for the Cilk C front end (x86-64 LP64, as gcc).

Every IR expression the C front end builds carries its C type as a *strong* numpy
type: ``char`` is int8 (signed on x86-64), ``int`` int32, ``long`` int64, ``_Bool``
bool; a comparison's ``int`` result is kept as a bool (it only ever holds 0 or 1, and
integer promotion turns it into ``int`` wherever C would).  The rules below are C99's
integer promotions (6.3.1.1) and usual arithmetic conversions (6.3.1.8); the front end
inserts the casts they imply, so the back ends compute exactly what gcc computes.
Constant operations are folded with C's values (wraparound, truncating division).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from revec import ir
from revec.errors import SourceLoc
from revec.frontend.rules import TypeRuleError
from revec.ir import BOOL, Ty

I8, I16, I32, I64 = (Ty(np.dtype(t)) for t in (np.int8, np.int16, np.int32, np.int64))
U8, U16, U32, U64 = (Ty(np.dtype(t)) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
F32, F64 = Ty(np.dtype(np.float32)), Ty(np.dtype(np.float64))
CBOOL = Ty(np.dtype(np.bool_))


def promote(ty: Ty) -> Ty:
    """C's integer promotion: types narrower than int (and _Bool) become int."""
    if ty.kind == "b" or (ty.kind in "iu" and ty.dtype.itemsize < 4):
        return I32
    return ty


def usual(a: Ty, b: Ty) -> Ty:
    """C's usual arithmetic conversions: the common type of a binary operation."""
    if a.kind == "f" or b.kind == "f":
        if F64 in (a, b):
            return F64
        return F32
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.kind == b.kind:
        return a if a.dtype.itemsize >= b.dtype.itemsize else b
    u, s = (a, b) if a.kind == "u" else (b, a)
    if u.dtype.itemsize >= s.dtype.itemsize:
        return u
    return s  # the signed type is wider, so it holds every value of the unsigned one


def wrap(value: int, ty: Ty) -> int:
    """``value`` converted to the integer type ``ty`` (modulo 2**bits)."""
    bits = 8 * ty.dtype.itemsize
    v = value % (1 << bits)
    if ty.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


class CRules:
    """C99's typing of the IR's operations (:class:`revec.frontend.rules.TypeRules`)."""

    def convert(self, e: ir.Expr, ty: Ty) -> ir.Expr:
        """``e`` converted to ``ty`` as C converts (constants folded)."""
        if e.ty == ty:
            return e
        if isinstance(e, ir.Const):
            v = e.value
            if ty.kind == "b":
                return ir.Const(e.loc, ty, bool(v))
            if ty.kind == "f":
                return ir.Const(e.loc, ty, float(ty.dtype.type(float(v))))
            if e.ty.kind == "f":
                fv = float(v)
                if fv != fv or abs(fv) >= 2.0 ** 64:
                    return ir.Cast(e.loc, ty, e)
                return ir.Const(e.loc, ty, wrap(int(fv), ty))
            return ir.Const(e.loc, ty, wrap(int(v), ty))
        if (e.ty.kind in "iu" and ty.kind in "iu"
                and ty.dtype.itemsize < e.ty.dtype.itemsize):
            narrow = _narrowed(e, ty)
            if narrow is not None:
                return narrow
        return ir.Cast(e.loc, ty, e)

    def truth(self, e: ir.Expr) -> ir.Expr:
        if e.ty.kind == "b":
            return e
        if isinstance(e, ir.Const):
            return ir.Const(e.loc, BOOL, bool(e.value))
        return ir.Compare(e.loc, BOOL, "!=", e, ir.Const(e.loc, e.ty, 0 if e.ty.kind in "iu"
                                                          else 0.0))

    def join(self, a: Ty, b: Ty) -> Ty:
        return usual(a, b)

    def arith(self, op: str, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        floats = a.ty.kind == "f" or b.ty.kind == "f"
        if op in ("<<", ">>", "&", "|", "^", "%") and floats:
            raise TypeRuleError(f"'{op}' needs integer operands")
        t = promote(a.ty) if op in ("<<", ">>") else usual(a.ty, b.ty)
        A, B = self.convert(a, t), self.convert(b, t)
        if isinstance(A, ir.Const) and isinstance(B, ir.Const):
            folded = _fold(op, A.value, B.value, t)
            if folded is not None:
                return ir.Const(loc, t, folded)
        if op == "/" and t.kind == "f":
            return ir.BinOp(loc, t, "/", A, B)
        if op in ("/", "%") and t.kind == "u":
            return ir.BinOp(loc, t, "//" if op == "/" else "%", A, B)
        if op in ("/", "%"):
            return _trunc_divmod(op, A, B, t, loc)
        return ir.BinOp(loc, t, op, A, B)

    def compare(self, op: str, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        t = usual(a.ty, b.ty)
        A, B = _unwidened(self.convert(a, t), self.convert(b, t))
        return ir.Compare(loc, BOOL, op, A, B)

    def unary(self, op: str, a: ir.Expr, loc: SourceLoc) -> ir.Expr:
        if op == "not":
            a = self.truth(a)
            if isinstance(a, ir.Const):
                return ir.Const(loc, BOOL, not a.value)
            return ir.UnaryOp(loc, BOOL, "not", a)
        if op == "~" and a.ty.kind == "f":
            raise TypeRuleError("~ needs an integer operand")
        t = promote(a.ty)
        a = self.convert(a, t)
        if isinstance(a, ir.Const):
            if t.kind == "f":
                return ir.Const(loc, t, -a.value if op == "-" else a.value)
            v = int(a.value)  # an integer constant of t
            return ir.Const(loc, t, wrap(-v if op == "-" else (~v if op == "~" else v), t))
        if op == "+":
            return a
        return ir.UnaryOp(loc, t, op, a)

    def logical(self, op: str, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        a, b = self.truth(a), self.truth(b)
        if isinstance(a, ir.Const) and isinstance(b, ir.Const):
            return ir.Const(loc, BOOL, bool((a.value and b.value) if op == "and"
                                            else (a.value or b.value)))
        return ir.BoolOp(loc, BOOL, op, a, b)

    def select(self, cond: ir.Expr, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        t = usual(a.ty, b.ty)
        cond = self.truth(cond)
        if isinstance(cond, ir.Const):
            return self.convert(a if cond.value else b, t)
        return ir.IfExp(loc, t, cond, self.convert(a, t), self.convert(b, t))

    def index(self, e: ir.Expr) -> ir.Expr:
        if e.ty.kind not in "iub":  # _Bool is an integer type
            raise TypeRuleError("an array index must be an integer")
        return self.convert(e, I64)


C99 = CRules()

# operations whose result's low bits depend only on the operands' low bits (so do
# those of - and ~)
_LOW_BITS_OPS = ("+", "-", "*", "&", "|", "^")


def _narrowed(e: ir.Expr, ty: Ty) -> ir.Expr | None:
    """The integer expression ``e`` truncated to the narrower integer type ``ty``,
    computed in ``ty`` where that needs no conversion (None otherwise): ``(int8_t)(n -
    1)`` on an ``int8_t n`` is ``n - 1`` in int8 arithmetic, which wraps alike.  The
    program is then what the Python front end makes of ``n - 1`` (one conversion less
    for numba to type; a spawn's ``n - 1`` is recognized as a level-uniform step)."""
    if e.ty.kind not in "iu" or e.ty.dtype.itemsize < ty.dtype.itemsize:
        return None
    match e:
        case ir.Const(value=v):
            return ir.Const(e.loc, ty, wrap(int(v), ty))
        case ir.Cast(operand=x) if x.ty == ty:
            return x
        case ir.BinOp(op=op, left=a, right=b) if op in _LOW_BITS_OPS:
            na, nb = _narrowed(a, ty), _narrowed(b, ty)
            if na is not None and nb is not None:
                return ir.BinOp(e.loc, ty, op, na, nb)
        case ir.UnaryOp(op="-" | "~" as op, operand=x):
            nx = _narrowed(x, ty)
            if nx is not None:
                return ir.UnaryOp(e.loc, ty, op, nx)
    return None


def _keeps_values(src: Ty, dst: Ty) -> bool:
    """Every value of the integer type ``src`` is a value of ``dst``."""
    if src.weak or src.kind not in "iu" or dst.kind not in "iu":
        return False
    if src.kind == dst.kind:
        return src.dtype.itemsize <= dst.dtype.itemsize
    return src.kind == "u" and src.dtype.itemsize < dst.dtype.itemsize


def _unwidened(a: ir.Expr, b: ir.Expr) -> tuple[ir.Expr, ir.Expr]:
    """The operands of a comparison without the value-preserving widening both got
    (``(int)k == 0`` on an ``int8_t k`` compares ``k`` with an int8 0): widening keeps
    the order and equality of values.  Unchanged unless both narrow to one type."""
    def inner(e: ir.Expr) -> ir.Expr | None:
        if isinstance(e, ir.Cast) and _keeps_values(e.operand.ty, e.ty):
            return e.operand
        return None

    na, nb = inner(a), inner(b)
    if na is not None and nb is not None and na.ty == nb.ty:
        return na, nb
    if na is not None and isinstance(b, ir.Const) and _fits(b, na.ty):
        return na, ir.Const(b.loc, na.ty, int(b.value))
    if nb is not None and isinstance(a, ir.Const) and _fits(a, nb.ty):
        return ir.Const(a.loc, nb.ty, int(a.value)), nb
    return a, b


def _fits(c: ir.Const, ty: Ty) -> bool:
    info = np.iinfo(ty.dtype)
    return c.ty.kind in "iu" and info.min <= int(c.value) <= info.max


def _fold(op: str, a: Any, b: Any, t: Ty) -> Any:
    """C's value of a constant operation (None: leave it to run time)."""
    if t.kind == "f":
        if op in ("+", "-", "*") or (op == "/" and b != 0):
            x = {"+": a + b, "-": a - b, "*": a * b}.get(op, a / b if b else 0.0)
            return float(t.dtype.type(x))
        return None
    a, b = int(a), int(b)
    bits = 8 * t.dtype.itemsize
    if op in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return wrap(q if op == "/" else a - b * q, t)
    if op in ("<<", ">>"):
        if not 0 <= b < bits:
            return None
        return wrap(a << b if op == "<<" else a >> b, t)
    table: dict[str, Callable[[int, int], int]] = {
        "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
        "&": lambda x, y: x & y, "|": lambda x, y: x | y, "^": lambda x, y: x ^ y}
    return wrap(table[op](a, b), t)


def _trunc_divmod(op: str, a: ir.Expr, b: ir.Expr, t: Ty, loc: SourceLoc) -> ir.Expr:
    """C's signed ``a / b`` and ``a % b`` (truncating toward zero) from the IR's floor
    division: where the remainder is not zero and the signs differ, the floor quotient
    is one less than C's and the floor remainder exceeds C's by ``b``."""
    zero = ir.Const(loc, t, 0)
    rem = ir.BinOp(loc, t, "%", a, b)
    differ = ir.BoolOp(loc, BOOL, "and", ir.Compare(loc, BOOL, "!=", rem, zero),
                       ir.Compare(loc, BOOL, "<", ir.BinOp(loc, t, "^", a, b), zero))
    fix = ir.Cast(loc, t, differ)
    if op == "/":
        return ir.BinOp(loc, t, "+", ir.BinOp(loc, t, "//", a, b), fix)
    return ir.BinOp(loc, t, "-", rem, ir.BinOp(loc, t, "*", fix, b))

"""The Python front end's type rules: NumPy 2's, decided by NumPy itself.

The sequential reference runs the program as plain Python on numpy scalars, so the
compiled variants must compute in exactly the types NumPy 2 picks (NEP 50: Python
scalars are "weak").  Rather than re-implement NumPy's promotion tables, each rule
below evaluates the operation once on sample values of the operand types and reads
the type of the result; answers are cached.  :class:`NumpyRules` builds the typed IR
of each operation from them (:class:`revec.frontend.rules.TypeRules`).
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.frontend.rules import TypeRuleError
from revec.ir import BOOL, SUPPORTED_DTYPES, Ty

BINARY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
    "<<": operator.lshift, ">>": operator.rshift,
    "&": operator.and_, "|": operator.or_, "^": operator.xor,
}
UNARY_OPS: dict[str, Callable[[Any], Any]] = {
    "-": operator.neg, "+": operator.pos, "~": operator.invert,
}
MATH_FUNCS: dict[str, Callable[..., Any]] = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil, "abs": np.abs, "minimum": np.minimum,
    "maximum": np.maximum, "fabs": np.fabs,
}
MATH_ARITY = {"minimum": 2, "maximum": 2}


def _sample(ty: Ty) -> Any:
    if ty.weak:
        return {"b": True, "f": 1.0}.get(ty.kind, 1)
    return ty.dtype.type(1)


def _ty_of(value: Any, what: str) -> Ty:
    if isinstance(value, bool):
        return Ty(np.dtype(np.bool_), weak=True)
    if isinstance(value, int):
        return Ty(np.dtype(np.int64), weak=True)
    if isinstance(value, float):
        return Ty(np.dtype(np.float64), weak=True)
    if isinstance(value, np.generic):
        dt = value.dtype
        if dt not in SUPPORTED_DTYPES:
            raise TypeRuleError(
                f"{what} gives {dt.name}, which revec does not support; "
                "convert the operands to float32 or float64 first"
            )
        return Ty(dt)
    raise TypeRuleError(f"{what} does not give a scalar")


def _evaluate(fn: Callable[..., Any], args: tuple[Any, ...], what: str) -> Ty:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            result = fn(*args)
        except (TypeError, ValueError, OverflowError) as err:
            raise TypeRuleError(f"{what} is not defined: {err}") from None
    return _ty_of(result, what)


@functools.cache
def binary_result(op: str, left: Ty, right: Ty) -> Ty:
    """Type of ``left op right`` under NumPy 2 rules."""
    what = f"'{left} {op} {right}'"
    return _evaluate(BINARY_OPS[op], (_sample(left), _sample(right)), what)


@functools.cache
def unary_result(op: str, operand: Ty) -> Ty:
    what = f"'{op}{operand}'"
    return _evaluate(UNARY_OPS[op], (_sample(operand),), what)


@functools.cache
def math_result(func: str, args: tuple[Ty, ...]) -> Ty:
    what = f"np.{func}({', '.join(str(a) for a in args)})"
    return _evaluate(MATH_FUNCS[func], tuple(_sample(a) for a in args), what)


@functools.cache
def builtin_result(func: str, args: tuple[Ty, ...]) -> Ty:
    fns: dict[str, Callable[..., Any]] = {"abs": abs, "min": min, "max": max, "int": int,
                                          "float": float, "bool": bool}
    fn = fns[func]
    what = f"{func}({', '.join(str(a) for a in args)})"
    if func in ("min", "max"):
        # The value returned is one of the operands; its static type is their promotion.
        return join(args[0], args[1]) if len(args) == 2 else args[0]
    return _evaluate(fn, tuple(_sample(a) for a in args), what)


def compare_type(left: Ty, right: Ty) -> Ty:
    """The common type a comparison is carried out in (exact for mixed signedness)."""
    if left.weak and right.weak:
        return binary_result("+", left, right) if left.kind != right.kind else left
    if left.weak or right.weak:
        # NumPy compares a Python int with a typed integer by value: do it in int64
        # (exact unless the typed side is a uint64 above 2**63, documented)
        weak, strong = (left, right) if left.weak else (right, left)
        if weak.kind in "iub" and strong.kind in "iu":
            return strong if strong.dtype == np.uint64 else Ty(np.dtype(np.int64))
        if weak.kind == "f" and strong.kind != "f":
            return Ty(np.dtype(np.float64))
        return strong
    dt = np.result_type(left.dtype, right.dtype)
    return Ty(dt)


def join(a: Ty, b: Ty) -> Ty:
    """Type of a value that may be either ``a`` or ``b`` (weak adopts strong)."""
    if a == b:
        return a
    if a.weak and not b.weak:
        return b if not (a.kind == "f" and b.kind in "iub") else Ty(np.dtype(np.float64))
    if b.weak and not a.weak:
        return a if not (b.kind == "f" and a.kind in "iub") else Ty(np.dtype(np.float64))
    if a.weak and b.weak:
        order = "bif"
        return a if order.index(a.kind if a.kind != "u" else "i") >= order.index(
            b.kind if b.kind != "u" else "i") else b
    return Ty(np.result_type(a.dtype, b.dtype))


def literal_fits(value: int, ty: Ty) -> bool:
    if ty.weak or ty.kind not in "iu":
        return True
    info = np.iinfo(ty.dtype)
    return info.min <= value <= info.max


class NumpyRules:
    """NumPy 2's typing of the IR's operations (:class:`revec.frontend.rules.TypeRules`):
    Python scalars (weak) fold exactly as Python computes them."""

    def convert(self, e: ir.Expr, ty: Ty) -> ir.Expr:
        """``e`` as a value of type ``ty`` (C-cast semantics)."""
        if e.ty.dtype == ty.dtype:
            if e.ty.weak == ty.weak or isinstance(e, ir.Const):
                return e if e.ty == ty else _retype(e, ty)
            return e
        if isinstance(e, ir.Const):
            value = e.value
            if ty.kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
                if not literal_fits(value, ty):
                    raise RevecError(f"integer literal {value} is out of range for {ty}", e.loc)
                return ir.Const(e.loc, ty, value)
            if ty.kind == "f":
                return ir.Const(e.loc, ty, float(value))
            if ty.kind == "b":
                return ir.Const(e.loc, ty, bool(value))
        return ir.Cast(e.loc, ty, e)

    def truth(self, e: ir.Expr) -> ir.Expr:
        if e.ty.kind == "b":
            return e
        zero = ir.Const(e.loc, e.ty, 0.0 if e.ty.kind == "f" else 0)
        return ir.Compare(e.loc, BOOL, "!=", e, zero)

    def join(self, a: Ty, b: Ty) -> Ty:
        return join(a, b)

    def arith(self, op: str, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        res = binary_result(op, a.ty, b.ty)
        if isinstance(a, ir.Const) and isinstance(b, ir.Const) and res.weak:
            # Python scalars: fold exactly as Python computes them
            try:
                value = BINARY_OPS[op](a.value, b.value)
            except (ArithmeticError, ValueError):
                return ir.BinOp(loc, res, op, a, b)
            if isinstance(value, int) and not -(1 << 63) <= value < (1 << 63):
                return ir.BinOp(loc, res, op, a, b)
            return ir.Const(loc, res, value)
        return ir.BinOp(loc, res, op, self.convert(a, res), self.convert(b, res))

    def compare(self, op: str, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        ct = compare_type(a.ty, b.ty)
        for side, other in ((a, b), (b, a)):
            # a Python int literal that fits the typed side compares exactly in its type
            if (isinstance(side, ir.Const) and side.ty.weak and side.ty.kind in "iu"
                    and not other.ty.weak and other.ty.kind in "iu"
                    and literal_fits(int(side.value), other.ty)):
                ct = other.ty
        for side in (a, b):
            if (isinstance(side, ir.Const) and ct.kind in "iu"
                    and isinstance(side.value, int) and not literal_fits(int(side.value), ct)):
                ct = Ty(np.dtype(np.float64)) if ct.dtype == np.uint64 else Ty(
                    np.dtype(np.int64))
        return ir.Compare(loc, BOOL, op, self.convert(a, ct), self.convert(b, ct))

    def unary(self, op: str, a: ir.Expr, loc: SourceLoc) -> ir.Expr:
        if op == "not":
            return ir.UnaryOp(loc, BOOL, "not", self.truth(a))
        if isinstance(a, ir.Const) and a.ty.weak and op in ("-", "+"):
            return ir.Const(loc, a.ty, -a.value if op == "-" else a.value)
        res = unary_result(op, a.ty)
        return ir.UnaryOp(loc, res, op, self.convert(a, res))

    def logical(self, op: str, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        return ir.BoolOp(loc, BOOL, op, self.truth(a), self.truth(b))

    def select(self, cond: ir.Expr, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        ty = join(a.ty, b.ty)
        return ir.IfExp(loc, ty, self.truth(cond), self.convert(a, ty), self.convert(b, ty))

    def index(self, e: ir.Expr) -> ir.Expr:
        if e.ty.kind not in "iu":
            raise TypeRuleError(f"array index must be an integer, not {e.ty}")
        return self.convert(e, Ty(np.dtype(np.int64)))


NEP50 = NumpyRules()


def _retype(e: ir.Expr, ty: Ty) -> ir.Expr:
    import dataclasses

    return dataclasses.replace(e, ty=ty)

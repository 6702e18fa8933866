"""Result types of operations, decided by NumPy itself.

The sequential reference runs the program as plain Python on numpy scalars, so the
compiled variants must compute in exactly the types NumPy 2 picks (NEP 50: Python
scalars are "weak").  Rather than re-implement NumPy's promotion tables, each rule
below evaluates the operation once on sample values of the operand types and reads
the type of the result; answers are cached.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from revec.ir import SUPPORTED_DTYPES, Ty

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


class TypeRuleError(Exception):
    """The operation is not defined for these types (message is user-facing)."""


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
    fn: Callable[..., Any] = {"abs": abs, "min": min, "max": max, "int": int,
                              "float": float, "bool": bool}[func]
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

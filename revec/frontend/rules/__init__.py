"""The type rules of a source language: what type an operation computes in and which
conversions it implies, as IR.

The front-end core builds every expression through one :class:`TypeRules`, so a
language's arithmetic is decided in one place: Python programs follow NumPy 2 and
NEP 50 (:mod:`revec.frontend.rules.nep50`), Cilk C programs C99's integer promotions
and usual arithmetic conversions (:mod:`revec.frontend.rules.c99`).  A rule either
returns typed IR, with every implicit conversion spelled out as a cast, or raises
:class:`TypeRuleError`, whose message the builder locates at the operation.
"""

from __future__ import annotations

from typing import Protocol

from revec import ir
from revec.errors import SourceLoc
from revec.ir import Ty


class TypeRuleError(Exception):
    """The operation is not defined for these types (message is user-facing)."""


class TypeRules(Protocol):
    """One language's typing of the IR's operations."""

    def convert(self, e: ir.Expr, ty: Ty) -> ir.Expr:
        """``e`` as a value of ``ty`` (an explicit conversion; constants folded)."""
        ...

    def truth(self, e: ir.Expr) -> ir.Expr:
        """``e`` as a condition (a bool)."""
        ...

    def join(self, a: Ty, b: Ty) -> Ty:
        """The type of a value that is either an ``a`` or a ``b``."""
        ...

    def arith(self, op: str, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        """``a op b`` for an arithmetic or bitwise operator."""
        ...

    def compare(self, op: str, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        """``a op b`` for ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``."""
        ...

    def unary(self, op: str, a: ir.Expr, loc: SourceLoc) -> ir.Expr:
        """``-a``, ``+a``, ``~a`` or ``not a``."""
        ...

    def logical(self, op: str, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        """``a and b`` / ``a or b`` of two conditions."""
        ...

    def select(self, cond: ir.Expr, a: ir.Expr, b: ir.Expr, loc: SourceLoc) -> ir.Expr:
        """``a if cond else b`` (``cond ? a : b``)."""
        ...

    def index(self, e: ir.Expr) -> ir.Expr:
        """``e`` as an array index (an integer; computed in int64)."""
        ...

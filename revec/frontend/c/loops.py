"""C loops in the IR: which ``for`` loops are Python ranges, and the ``continue`` of a
``for`` lowered to ``while`` (which must run the loop's step first)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from pycparser import c_ast

from revec import ir
from revec.frontend.c.syntax import assigned_names, is_spawn, walk
from revec.ir import Ty


@dataclasses.dataclass(frozen=True)
class Range:
    """``for (T i = start; i < stop; i += step)``, a loop the IR runs as a range."""

    index: str  # its C name
    ty: Ty
    start: c_ast.Node
    step: int
    stop: c_ast.Node
    op: str  # the comparison: <, <=, > or >=


def as_range(node: c_ast.For, type_of: Callable[[c_ast.Node, str], Ty | None],
             const_of: Callable[[c_ast.Node], Any]) -> Range | None:
    """The range of ``for (T i = a; i < b; i++)`` loops that are Python ranges: the
    index is declared by the loop and only the loop's step changes it; the bound does
    not change in the loop (None: any other loop).  ``type_of`` reads a declared type,
    ``const_of`` a constant's value (None: not a constant)."""
    init, cond, nxt = node.init, node.cond, node.next
    if not (isinstance(init, c_ast.DeclList) and len(init.decls) == 1):
        return None
    d = init.decls[0]
    if d.init is None or not isinstance(d.type, c_ast.TypeDecl):
        return None
    ty = type_of(d.type, f"'{d.name}'")
    if ty is None or ty.kind not in "iu" or ty.dtype.itemsize < 4:
        return None
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=")
            and isinstance(cond.left, c_ast.ID) and cond.left.name == d.name):
        return None
    step = None
    if isinstance(nxt, c_ast.UnaryOp) and isinstance(nxt.expr, c_ast.ID) and \
            nxt.expr.name == d.name and nxt.op in ("p++", "++", "p--", "--"):
        step = 1 if "+" in nxt.op else -1
    elif isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID) and \
            nxt.lvalue.name == d.name and nxt.op in ("+=", "-=") and \
            isinstance(nxt.rvalue, c_ast.Constant):
        v = const_of(nxt.rvalue)
        if v is None or v <= 0:
            return None
        step = v if nxt.op == "+=" else -v
    if step is None:
        return None
    if (step > 0) != (cond.op in ("<", "<=")):
        return None
    if step < 0 and ty.kind == "u":
        return None
    changed = assigned_names(node.stmt)
    if d.name in changed:
        return None
    bound_names = {n.name for n in walk(cond.right) if isinstance(n, c_ast.ID)}
    if bound_names & changed or any(isinstance(n, c_ast.FuncCall) or is_spawn(n)
                                    for n in walk(cond.right)):
        return None
    return Range(d.name, ty, d.init, step, cond.right, cond.op)


def has_continue(body: tuple[ir.Stmt, ...]) -> bool:
    for s in body:
        if isinstance(s, ir.Continue):
            return True
        if isinstance(s, ir.If) and (has_continue(s.then) or has_continue(s.orelse)):
            return True
    return False


def continue_with(body: tuple[ir.Stmt, ...], step: tuple[ir.Stmt, ...]
                  ) -> tuple[ir.Stmt, ...]:
    """``continue`` in a for loop lowered to ``while`` runs the loop's step first."""
    if not step:
        return body
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Continue):
            out += [*step, s]
        elif isinstance(s, ir.If):
            out.append(dataclasses.replace(s, then=continue_with(s.then, step),
                                           orelse=continue_with(s.orelse, step)))
        else:
            out.append(s)
    return tuple(out)

"""The C syntax the adapter recognises in pycparser trees: blocks, the spawn form the
preprocessor leaves (a cast to the prelude's ``__SPAWN_`` type), walks, and the
names a statement assigns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pycparser import c_ast

from revec.frontend.shape import IfParts

# a spawn is a cast of its call to one of these types, a sync one of these identifiers
# (the Cilk keywords rewritten by revec.frontend.c.preprocess: OpenCilk's, Cilk-5's)
SPAWN_TYPES = ("__SPAWN_", "_S5")
SYNC_NAMES = ("cilk_sync", "_SY_")


def key(node: Any) -> Any:
    """A position-free key of a pycparser expression (for ``a > b ? a : b``)."""
    if isinstance(node, c_ast.Node):
        return (type(node).__name__,
                tuple((n, key(getattr(node, n))) for n in node.attr_names if n != "coord"),
                tuple(key(c) for _, c in node.children()))
    if isinstance(node, list):
        return tuple(key(x) for x in node)
    return node


def body_items(node: c_ast.Node | None) -> list[c_ast.Node]:
    """The statements of a block (a compound statement or a single statement)."""
    if node is None:
        return []
    if isinstance(node, c_ast.Compound):
        return list(node.block_items or [])
    return [node]


def ends_with_return(items: Sequence[c_ast.Node]) -> bool:
    """Every path through the block's last statement returns."""
    if not items:
        return False
    last = items[-1]
    if isinstance(last, c_ast.Return):
        return True
    if isinstance(last, c_ast.Compound):
        return ends_with_return(body_items(last))
    if isinstance(last, c_ast.If) and last.iffalse is not None:
        return (ends_with_return(body_items(last.iftrue))
                and ends_with_return(body_items(last.iffalse)))
    return False


def as_if(node: c_ast.Node) -> IfParts[c_ast.Node, c_ast.Node] | None:
    """An ``if`` statement's parts for the task-shape splitter."""
    if not isinstance(node, c_ast.If):
        return None
    orelse = body_items(node.iffalse) if node.iffalse is not None else None
    return IfParts(node.cond, body_items(node.iftrue), orelse)


def is_spawn(node: Any) -> bool:
    return (isinstance(node, c_ast.Cast) and isinstance(node.to_type.type, c_ast.TypeDecl)
            and isinstance(node.to_type.type.type, c_ast.IdentifierType)
            and node.to_type.type.type.names in ([t] for t in SPAWN_TYPES))


def spawn_of(call: c_ast.Node) -> c_ast.Cast:
    """``call`` spawned: the form ``cilk_spawn call`` is read as."""
    spawn = c_ast.TypeDecl(None, [], None, c_ast.IdentifierType([SPAWN_TYPES[0]]),
                           call.coord)
    return c_ast.Cast(c_ast.Typename(None, [], None, spawn, call.coord), call, call.coord)


def is_sync(node: Any) -> bool:
    return isinstance(node, c_ast.ID) and node.name in SYNC_NAMES


def walk(node: c_ast.Node) -> list[c_ast.Node]:
    """``node`` and every node under it (preorder)."""
    out = [node]
    for _, c in node.children():
        out += walk(c)
    return out


def assigned_names(node: c_ast.Node | None) -> set[str]:
    """The names ``node`` assigns, increments or takes the address of."""
    out: set[str] = set()
    if node is None:
        return out
    for n in walk(node):
        if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
            out.add(n.lvalue.name)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("p++", "++", "p--", "--") and \
                isinstance(n.expr, c_ast.ID):
            out.add(n.expr.name)
        elif isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID):
            out.add(n.expr.name)
    return out

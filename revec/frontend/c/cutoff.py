"""The serial-cutoff idiom: ``if (n < CUTOFF) return fib_seq(n);`` in the task ``fib``.

Below a cutoff, Cilk programs call a serial copy of the task, its *serial elision*
(the same body with ``cilk_spawn`` and ``cilk_sync`` left out), to save the cost of
spawning small tasks.  Such a call computes exactly what the task computes, so revec,
which schedules the tasks itself, leaves the statement out: the task recurses down to
its own base case.  That is sound only when the serial function *is* the elision, which
is checked on the syntax tree, node by node; the first difference is a located error at
the cutoff's call naming it (``'fib_seq' differs from fib's serial elision at line 3:
...``).  The test of the cutoff must have no effect (it is not evaluated): a comparison
of parameters with constants or file-scope variables, typically.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NoReturn

from pycparser import c_ast, c_generator

from revec.frontend.c.source import SPAWN_TYPES, SYNC_NAMES
from revec.frontend.c.syntax import body_items, is_spawn, walk

Error = Callable[[str, Any], NoReturn]


def strip_cutoffs(fdef: c_ast.FuncDef, functions: dict[str, c_ast.FuncDef],
                  items: list[c_ast.Node], error: Error) -> list[c_ast.Node]:
    """The top-level statements ``items`` of the task ``fdef`` without its serial
    cutoffs (each checked)."""
    out: list[c_ast.Node] = []
    for node in items:
        call = _cutoff_call(node, fdef.decl.name, functions)
        if call is None:
            out.append(node)
            continue
        _check(fdef, functions[call.name.name], node, call, error)
    return out


def cutoff_nodes(fdef: c_ast.FuncDef, functions: dict[str, c_ast.FuncDef]) -> set[int]:
    """The ids of the task's cutoff statements (left out of its elision)."""
    items = list(fdef.body.block_items or [])
    return {id(n) for n in items if _cutoff_call(n, fdef.decl.name, functions) is not None}


def _cutoff_call(node: c_ast.Node, task: str, functions: dict[str, c_ast.FuncDef]
                 ) -> c_ast.FuncCall | None:
    """``call`` of ``if (...) return call;`` (no else) when it calls a function other
    than the task that calls itself (a serial copy), else None."""
    if not (isinstance(node, c_ast.If) and node.iffalse is None):
        return None
    then = body_items(node.iftrue)
    if len(then) != 1 or not isinstance(then[0], c_ast.Return):
        return None
    call = then[0].expr
    if not (isinstance(call, c_ast.FuncCall) and isinstance(call.name, c_ast.ID)):
        return None
    name = call.name.name
    g = functions.get(name)
    if name == task or g is None:
        return None
    if not any(isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)
               and n.name.name == name for n in walk(g.body)):
        return None  # a helper (not recursive): an ordinary base case
    return call


def _params(fdef: c_ast.FuncDef) -> list[str | None]:
    args = fdef.decl.type.args
    return [getattr(p, "name", None) for p in (args.params if args is not None else [])
            if not isinstance(p, c_ast.Typename)]


def _check(fdef: c_ast.FuncDef, serial: c_ast.FuncDef, node: c_ast.If,
           call: c_ast.FuncCall, error: Error) -> None:
    task, name = fdef.decl.name, serial.decl.name
    params = _params(fdef)
    args = call.args.exprs if call.args is not None else []
    if [a.name if isinstance(a, c_ast.ID) else None for a in args] != params:
        error(f"the serial cutoff calls '{name}' with the task's own parameters, in order: "
              f"{name}({', '.join(p or '?' for p in params)})", call)
    for n in walk(node.cond):
        if isinstance(n, (c_ast.Assignment, c_ast.FuncCall)) or is_spawn(n) or (
                isinstance(n, c_ast.UnaryOp) and n.op in ("p++", "++", "p--", "--")):
            error("the test of a serial cutoff has an effect; compare the task's "
                  "parameters with a constant or a read-only global", n)
    skip = {id(n) for n in (fdef.body.block_items or [])
            if _cutoff_call(n, task, {name: serial}) is not None}
    found = _Elision(task, name, skip).diff(fdef.decl.type, serial.decl.type)
    if found is None:
        found = _Elision(task, name, skip).diff(fdef.body, serial.body)
    if found is not None:
        mine, theirs, where = found
        line = where.coord.line if where is not None and where.coord else "?"
        error(f"'{name}' differs from {task}'s serial elision at line {line}: {theirs} "
              f"where the elision has {mine}; a serial cutoff calls the task's elision "
              f"(the same body without cilk_spawn and cilk_sync, calling '{name}')", call)


def _show(node: c_ast.Node | None, rename: tuple[str, str] | None = None) -> str:
    """A node as C text (shortened); ``rename``: (task, serial), the node is the task's,
    shown as its elision."""
    if node is None:
        return "nothing"
    text = c_generator.CGenerator().visit(node).strip().replace("\n", " ")
    text = " ".join(text.split())
    if rename is not None:
        for t in SPAWN_TYPES:
            text = text.replace(f"({t}) ", "")
        text = re.sub(rf"\b{re.escape(rename[0])}\(", f"{rename[1]}(", text)
        text = " ".join(w for w in text.split() if w.rstrip(";") not in SYNC_NAMES)
    return f"'{text[:60]}{'...' if len(text) > 60 else ''}'"


class _Elision:
    """Compares the task's tree, read as its serial elision calling ``serial``, with
    the serial function's tree."""

    def __init__(self, task: str, serial: str, skip: set[int]) -> None:
        self.task, self.serial, self.skip = task, serial, skip

    def show(self, node: c_ast.Node | None) -> str:
        return _show(node, (self.task, self.serial))

    def unwrap(self, node: c_ast.Node) -> c_ast.Node:
        while is_spawn(node):
            node = node.expr
        return node

    def kept(self, node: c_ast.Node) -> bool:
        """A statement of the elision (sync statements and cutoffs go)."""
        return not (id(node) in self.skip or (
            isinstance(node, c_ast.ID) and node.name in SYNC_NAMES))

    def diff(self, a: c_ast.Node, b: c_ast.Node
             ) -> tuple[str, str, c_ast.Node | None] | None:
        """The first difference: (the elision's part, the serial function's part, the
        serial function's node where it is), or None."""
        a = self.unwrap(a)
        if type(a) is not type(b):
            return self.show(a), _show(b), b
        for attr in a.attr_names:
            va, vb = getattr(a, attr), getattr(b, attr)
            if va == self.task and vb == self.serial:
                continue
            if va != vb:
                return self.show(a), _show(b), b
        if isinstance(a, c_ast.Compound):
            ca = [n for n in body_items(a) if self.kept(n)]
            cb = list(body_items(b))
            for x, y in zip(ca, cb):
                found = self.diff(x, y)
                if found is not None:
                    return found
            if len(ca) != len(cb):
                extra = ca[len(cb)] if len(ca) > len(cb) else None
                other = cb[len(ca)] if len(cb) > len(ca) else None
                return self.show(extra), _show(other), other if other is not None else b
            return None
        na, nb = a.children(), b.children()
        if [k for k, _ in na] != [k for k, _ in nb]:
            return self.show(a), _show(b), b
        for (_, x), (_, y) in zip(na, nb):
            found = self.diff(x, y)
            if found is not None:
                return found
        return None

"""Statistics counters in Cilk C: a non-const file-scope scalar that the tasks and
helpers only count with (``number_of_tasks++;``, ``calls += 1;`` as statements) and
never read, as BOTS's knapsack counts its tasks for ``main`` to print, in functions whose
answer is something else (a return value, or an out-parameter a call of the function
passes ``&x`` for).  The task's answer does not depend on it (nothing it runs reads it),
so revec leaves those statements out.  A ``void`` function without an out-parameter
counting into a global (whose count may well be the program's answer), and any other
use of the variable in a task (a read, ``= v``, a count in an expression), are the
located error of a global write or read as before."""

from __future__ import annotations

from pycparser import c_ast

from revec.frontend.c.context import CProgramContext
from revec.frontend.c.syntax import walk

COUNT_OPS = ("p++", "++", "p--", "--")


def _statements(body: c_ast.Node) -> list[c_ast.Node]:
    """The statements of a function body (items of blocks, branches and loop bodies)."""
    out: list[c_ast.Node] = []
    for n in walk(body):
        if isinstance(n, c_ast.Compound):
            out += n.block_items or []
        elif isinstance(n, c_ast.If):
            out += [s for s in (n.iftrue, n.iffalse) if s is not None]
        elif isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile)) and n.stmt is not None:
            out.append(n.stmt)
    return out


def _counted(stmt: c_ast.Node) -> str | None:
    """The name ``stmt`` counts with (``g++;``, ``g -= e;`` with ``e`` free of calls and
    assignments), or None."""
    if isinstance(stmt, c_ast.UnaryOp) and stmt.op in COUNT_OPS and \
            isinstance(stmt.expr, c_ast.ID):
        return stmt.expr.name
    if isinstance(stmt, c_ast.Assignment) and stmt.op in ("+=", "-=") and \
            isinstance(stmt.lvalue, c_ast.ID) and not any(
                isinstance(n, (c_ast.FuncCall, c_ast.Assignment)) or
                (isinstance(n, c_ast.UnaryOp) and n.op in COUNT_OPS)
                for n in walk(stmt.rvalue)):
        return stmt.lvalue.name
    return None


def has_result(fdef: c_ast.FuncDef) -> bool:
    """``fdef`` returns a value, or a call of it passes an address (``&x``, an
    out-parameter) for one of its parameters."""
    ret = fdef.decl.type.type
    if not (isinstance(ret, c_ast.TypeDecl) and isinstance(ret.type, c_ast.IdentifierType)
            and ret.type.names == ["void"]):
        return True
    name = fdef.decl.name
    return any(isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and
               n.name.name == name and n.args is not None and
               any(isinstance(a, c_ast.UnaryOp) and a.op == "&" for a in n.args.exprs)
               for n in walk(fdef.body))


def find_counters(ctx: CProgramContext) -> None:
    """Fill ``ctx.counter_stmts`` with the ids of the counting statements of every
    global the reachable functions only count with."""
    uses: dict[str, int] = {}
    counts: dict[str, list[c_ast.Node]] = {}
    shadowed: set[str] = set()
    for name, fdef in ctx.functions.items():
        if name not in ctx.reachable:  # main, printing: code the tasks never run
            continue
        params = fdef.decl.type.args.params if fdef.decl.type.args is not None else []
        shadowed |= {p.name for p in params if isinstance(p, c_ast.Decl)}
        for n in walk(fdef.body):
            if isinstance(n, c_ast.ID):
                uses[n.name] = uses.get(n.name, 0) + 1
            elif isinstance(n, c_ast.Decl):
                shadowed.add(n.name)
        result = has_result(fdef)
        for s in _statements(fdef.body):
            g = _counted(s)
            if g is not None:
                counts.setdefault(g, []).append(s)
                if not result:
                    shadowed.add(g)  # the count may be this function's answer
    for g, stmts in counts.items():
        glob = ctx.globals.get(g)
        if glob is None or glob.const or glob.array is not None or glob.ty is None or \
                glob.input is not None or glob.unusable or g in ctx.bounds or g in shadowed:
            continue
        ids = sum(1 for s in stmts for n in walk(s) if isinstance(n, c_ast.ID) and n.name == g)
        if ids == uses.get(g, 0):  # every use of g is one of its counting statements
            ctx.counter_stmts |= {id(s) for s in stmts}

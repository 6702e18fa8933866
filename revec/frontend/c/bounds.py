"""Bounds in Cilk C: a non-const file-scope scalar that tasks only raise
(``if (v > best_so_far) best_so_far = v;``) or only lower (``if (v < G) G = v;``) and
read to prune (Cilk-5 knapsack's ``best_so_far``).  Found here before the functions are
lowered; each becomes a max (min) reducer flagged as a bound, starting at the global's
initializer (0 without one, as C's static storage).  The updates lower to reductions,
the reads to :class:`revec.ir.BoundRead`; :mod:`revec.transforms.bounds` checks that
the reads only prune."""

from __future__ import annotations

from pycparser import c_ast, c_generator

from revec import ir
from revec.frontend.c.context import CProgramContext
from revec.frontend.c.syntax import walk

RAISE = ("if (v > G) G = v;", "raised")
LOWER = ("if (v < G) G = v;", "lowered")


def update_of(node: c_ast.If) -> tuple[str, str, c_ast.Node] | None:
    """(global, "max" / "min", the value's node) of ``if (v > G) G = v;`` (also ``>=``
    and ``G < v``: a raise) or ``if (v < G) G = v;`` (a lower); None for any other
    ``if``."""
    if node.iffalse is not None:
        return None
    body = node.iftrue
    if isinstance(body, c_ast.Compound):
        items = body.block_items or []
        if len(items) != 1:
            return None
        body = items[0]
    if not (isinstance(body, c_ast.Assignment) and body.op == "="
            and isinstance(body.lvalue, c_ast.ID)):
        return None
    g = body.lvalue.name
    c = node.cond
    if not isinstance(c, c_ast.BinaryOp) or c.op not in ("<", "<=", ">", ">="):
        return None
    gen = c_generator.CGenerator()
    v = gen.visit(body.rvalue)
    if isinstance(c.right, c_ast.ID) and c.right.name == g and gen.visit(c.left) == v:
        op = "max" if c.op in (">", ">=") else "min"
    elif isinstance(c.left, c_ast.ID) and c.left.name == g and gen.visit(c.right) == v:
        op = "max" if c.op in ("<", "<=") else "min"
    else:
        return None
    return g, op, body.rvalue


def find_bounds(ctx: CProgramContext) -> None:
    """Fill ``ctx.bounds`` (name -> reducer) and ``ctx.bound_updates`` (the ``if``
    statements that update one).  A global both raised and lowered is an error."""
    seen: dict[str, tuple[str, c_ast.Node]] = {}
    for name, fdef in ctx.functions.items():
        if name not in ctx.reachable:  # main, printing: code the tasks never run
            continue
        for node in walk(fdef.body):
            if not isinstance(node, c_ast.If):
                continue
            upd = update_of(node)
            if upd is None:
                continue
            g, op, _ = upd
            glob = ctx.globals.get(g)
            if glob is None or glob.const or glob.array is not None:
                continue
            if g in seen and seen[g][0] != op:
                first = ctx.src.loc(seen[g][1])
                was, now = ("raised", "lowered") if op == "min" else ("lowered", "raised")
                ctx.error(f"'{g}' is {was} at line {first.line} and {now} here: a bound is "
                          f"either raised ({RAISE[0]}) or lowered ({LOWER[0]}), never both",
                          node)
            seen.setdefault(g, (op, node))
            ctx.bound_updates.add(id(node))
    for g, (op, node) in seen.items():
        glob = ctx.globals[g]
        assert glob.ty is not None  # a scalar global (updated as one)
        if glob.ty.kind == "b":
            ctx.error(f"the bound '{g}' is a bool; a bound holds an integer or a float", node)
        ctx.bounds[g] = ir.ReducerDecl(g, glob.ty.dtype, op, glob.loc, hidden=True,
                                       bound=True, start=glob.value)

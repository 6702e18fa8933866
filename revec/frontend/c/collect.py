"""The Cilk idiom of a local array collecting spawned results, found in the syntax:

    long part[8];  int k = 0;
    for (...) part[k++] = cilk_spawn f(...);
    cilk_sync;
    for (int i = 0; i < k; i++) total += part[i];

or filled by the index of one loop (BOTS style), every iteration writing its element
once (or at most once where the array is declared ``= {0}``):

    int part[N];
    for (i = 0; i < n; i++) {
        if (ok(i)) part[i] = cilk_spawn f(...); else part[i] = 0;
    }
    cilk_sync;
    total = 0;
    for (i = 0; i < n; i++) total += part[i];

The C lowering (:mod:`revec.frontend.c.lower`) adds each element where it is written:
into the sum's accumulator (``k++`` form), or into a hidden sum of the array that the
summing loop adds to the accumulator (loop-index form); the summing loop itself goes.
This module finds the summing loops and checks that the counter only counts the
writes and how often a loop's iteration writes the array.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NoReturn

from pycparser import c_ast

from revec.frontend.c.syntax import body_items, is_spawn, walk
from revec.ir import Ty


@dataclasses.dataclass
class Collect:
    """A local array collecting spawned results, summed after cilk_sync into ``acc``."""

    name: str
    elem: Ty
    size: int
    acc: str  # C name of the local the summing loop adds into
    zeroed: bool  # declared ``= {0}``
    loop: c_ast.For
    counter: str | None = None  # C name of k in ``arr[k++] = ...``
    fill: c_ast.For | None = None  # the one loop filling the array by its index
    fill_bound: c_ast.Node | None = None  # B in that loop's ``i < B``
    sum_ir: str | None = None  # IR name of the hidden sum of the loop-index form
    # an alloca'd array (``int *a = alloca(n * sizeof(int));``): its size is not known
    # (``size`` is -1), and ``memset(a, 0, E)`` (its byte count ``E``) zeroes it
    alloca: bool = False
    zero_bytes: c_ast.Node | None = None
    written: bool = False  # an element was written (a later memset would clear it)


def collects_into(body: c_ast.Node, name: str) -> bool:
    """A spawned result is assigned to an element of ``name`` (``name[...] =
    cilk_spawn f(...)``)."""
    return any(isinstance(n, c_ast.Assignment) and is_spawn(n.rvalue)
               and isinstance(n.lvalue, c_ast.ArrayRef) and isinstance(n.lvalue.name, c_ast.ID)
               and n.lvalue.name.name == name for n in walk(body))


def memset_calls(body: c_ast.Node, name: str) -> list[c_ast.FuncCall]:
    """The ``memset(name, ...)`` calls of a function body (casts of ``name`` allowed)."""
    out = []
    for n in walk(body):
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and \
                n.name.name in ("memset", "__builtin_memset") and n.args is not None and \
                n.args.exprs:
            dst = n.args.exprs[0]
            while isinstance(dst, c_ast.Cast):
                dst = dst.expr
            if isinstance(dst, c_ast.ID) and dst.name == name:
                out.append(n)
    return out


def indexed(body: c_ast.Node, name: str) -> bool:
    """The array ``name`` is written at a plain index (``name[i] = ...``), not
    ``name[k++]``."""
    return any(isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ArrayRef)
               and isinstance(n.lvalue.name, c_ast.ID) and n.lvalue.name.name == name
               and isinstance(n.lvalue.subscript, c_ast.ID) for n in walk(body))


def set_after(body: c_ast.Node, acc: str, decl: c_ast.Node) -> bool:
    """``acc`` is set (``acc = ...``) after the declaration ``decl``."""
    nodes = walk(body)
    start = next(i for i, n in enumerate(nodes) if n is decl)
    return any(isinstance(n, c_ast.Assignment) and n.op == "=" and
               isinstance(n.lvalue, c_ast.ID) and n.lvalue.name == acc
               for n in nodes[start:])


def counting_loop(node: c_ast.For) -> tuple[str, c_ast.Node] | None:
    """``for ([T] i = 0; i < B; i++)``: (i, B), or None."""
    init, cond, nxt = node.init, node.cond, node.next
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        index, start = init.decls[0].name, init.decls[0].init
    elif isinstance(init, c_ast.Assignment) and init.op == "=" and \
            isinstance(init.lvalue, c_ast.ID):
        index, start = init.lvalue.name, init.rvalue
    else:
        return None
    if not (isinstance(start, c_ast.Constant) and start.value == "0"):
        return None
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op == "<" and
            isinstance(cond.left, c_ast.ID) and cond.left.name == index):
        return None
    step = (isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("p++", "++")) or (
        isinstance(nxt, c_ast.Assignment) and nxt.op == "+=" and
        isinstance(nxt.rvalue, c_ast.Constant) and nxt.rvalue.value == "1")
    target = nxt.expr if isinstance(nxt, c_ast.UnaryOp) else getattr(nxt, "lvalue", None)
    if not (step and isinstance(target, c_ast.ID) and target.name == index):
        return None
    return index, cond.right


def write_counts(node: c_ast.Node | None, name: str) -> tuple[int, int]:
    """The fewest and the most statements ``name[...] = ...`` a path through ``node``
    runs (2: two or more; a ``break``, ``continue`` or ``return`` may end a path
    before its writes, a loop may run its writes any number of times)."""
    if node is None:
        return 0, 0
    if isinstance(node, c_ast.Compound):
        lo = hi = 0
        may_end = False  # a path may have left the block before this statement
        for s in body_items(node):
            a, b = write_counts(s, name)
            lo, hi = lo if may_end else min(lo + a, 2), min(hi + b, 2)
            may_end = may_end or any(
                isinstance(n, (c_ast.Break, c_ast.Continue, c_ast.Return)) for n in walk(s))
        return lo, hi
    if isinstance(node, c_ast.If):
        then = write_counts(node.iftrue, name)
        other = write_counts(node.iffalse, name)
        return min(then[0], other[0]), max(then[1], other[1])
    if isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)):
        _, hi = write_counts(node.stmt, name)
        return 0, 2 if hi else 0
    if isinstance(node, (c_ast.Break, c_ast.Continue, c_ast.Return)):
        return 0, 0
    writes = sum(isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ArrayRef)
                 and isinstance(n.lvalue.name, c_ast.ID) and n.lvalue.name.name == name
                 for n in walk(node))
    return min(writes, 2), min(writes, 2)


def sum_loops(body: c_ast.Node, error: Callable[[str, Any], NoReturn]
              ) -> dict[str, tuple[str, c_ast.For]]:
    """``for (...; i < B; i++) acc += arr[i];`` loops in a function body: array name ->
    (the C name of ``acc``, the loop).  An array summed by two loops is an error."""
    out: dict[str, tuple[str, c_ast.For]] = {}
    for node in walk(body):
        if not isinstance(node, c_ast.For):
            continue
        items = body_items(node.stmt)
        if len(items) != 1 or not isinstance(items[0], c_ast.Assignment):
            continue
        a = items[0]
        if not isinstance(a.lvalue, c_ast.ID):
            continue
        rhs = a.rvalue
        if a.op == "=" and isinstance(rhs, c_ast.BinaryOp) and rhs.op == "+" and \
                isinstance(rhs.left, c_ast.ID) and rhs.left.name == a.lvalue.name:
            rhs = rhs.right
        elif a.op != "+=":
            continue
        if isinstance(rhs, c_ast.ArrayRef) and isinstance(rhs.name, c_ast.ID):
            arr = rhs.name.name
            if arr in out:
                error(f"'{arr}' is summed twice", node)
            out[arr] = (a.lvalue.name, node)
    return out


def counter_only_counts(body: c_ast.Node, c: Collect) -> bool:
    """``k`` starts at 0 and changes only by the ``arr[k++]`` writes."""
    in_index: set[int] = set()
    for n in walk(body):
        if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and \
                n.name.name == c.name:
            in_index.add(id(n.subscript))
    for n in walk(body):
        if isinstance(n, c_ast.Decl) and n.name == c.counter:
            init = n.init
            if not (isinstance(init, c_ast.Constant) and init.value == "0"):
                return False
        elif isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID) and \
                n.lvalue.name == c.counter:
            return False
        elif isinstance(n, c_ast.UnaryOp) and isinstance(n.expr, c_ast.ID) and \
                n.expr.name == c.counter and n.op in ("p++", "++", "p--", "--") and \
                id(n) not in in_index:
            return False
    return True

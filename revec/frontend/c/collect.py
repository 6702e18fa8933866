"""The Cilk idiom of a local array collecting spawned results, found in the syntax:

    long part[8];  int k = 0;
    for (...) part[k++] = cilk_spawn f(...);
    cilk_sync;
    for (int i = 0; i < k; i++) total += part[i];

The C lowering (:mod:`revec.frontend.c.lower`) adds each element into the sum's
accumulator where it is written and drops the summing loop; this module finds the
summing loops and checks that the counter only counts the writes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NoReturn

from pycparser import c_ast

from revec.frontend.c.syntax import body_items, walk
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
    writer: int | None = None  # the one statement filling a ``= {0}`` array by loop index


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

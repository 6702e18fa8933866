"""Task bodies as C programmers write them, read as the task shape
(:mod:`revec.frontend.shape`):

- a shared ``return`` after ``if``/``else``: ``if (n < 2) { x = n; } else { ...; x = a
  + b; } return x;`` is ``if (n < 2) { x = n; return x; } else { ...; x = a + b;
  return x; }`` (the statements after the ``if`` end both branches);
- the recursive branch first: ``if (n >= 2) { ...spawns...; return x + y; } else
  return n;`` (or the base case after the ``if`` without ``else``) is ``if (!(n >= 2))
  return n; else { ... }``.

Both rewrite the syntax tree the lowering reads (the nodes keep their positions, so
errors are located in the source as written).
"""

from __future__ import annotations

from collections.abc import Sequence

from pycparser import c_ast

from revec.frontend.c.syntax import as_if, body_items, ends_with_return, is_spawn, walk
from revec.frontend.shape import TaskShape, split_task


def shared_tail(items: list[c_ast.Node]) -> list[c_ast.Node]:
    """``items`` with the statements after the is-base ``if``/``else`` moved into both
    of its branches, when the body has no task shape otherwise and those statements
    end with ``return`` (the last such ``if``: earlier ones compute the prologue)."""
    if split_task(items, as_if, ends_with_return) is not None:
        return items
    for i in range(len(items) - 2, -1, -1):
        node = items[i]
        rest = items[i + 1:]
        if isinstance(node, c_ast.If) and node.iffalse is not None and \
                ends_with_return(rest):
            then = c_ast.Compound([*body_items(node.iftrue), *rest], node.iftrue.coord)
            other = c_ast.Compound([*body_items(node.iffalse), *rest], node.iffalse.coord)
            return [*items[:i], c_ast.If(node.cond, then, other, node.coord)]
    return items


def recurses(nodes: Sequence[c_ast.Node], task: str) -> bool:
    """The statements spawn or call the task ``task``."""
    return any(is_spawn(n) or (isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)
                               and n.name.name == task)
               for node in nodes for n in walk(node))


def recursive_first(shape: TaskShape[c_ast.Node, c_ast.Node], task: str
                    ) -> TaskShape[c_ast.Node, c_ast.Node]:
    """The shape with its cases swapped (and the test negated) when the ``if``'s
    branch recurses and the other does not."""
    if not recurses(shape.base, task) or recurses(shape.inductive, task):
        return shape
    test = c_ast.UnaryOp("!", shape.test, shape.test.coord)
    # the swapped inductive case is a branch: a block of its own, as an else is
    return TaskShape(shape.prologue, test, shape.inductive, shape.base, True)


"""Long chains of one operator, written flat by both expression emitters.

``a + b + c + ...`` is a left-nested tree of binary operations, as deep as it is long:
a 1,000-term sum, which the checker accepts, would be emitted by recursion 1,000 calls
deep (past Python's recursion limit) as 1,000 nested parentheses (past the 200 Python's
parser takes, for the numba back end's source).  A chain of :data:`FLAT_MIN` operands or
more is collected here without recursion and emitted as one flat operator chain, which C
and Python both evaluate left to right, as the tree does:

* integer ``+ -`` / ``*`` / ``&`` / ``|`` / ``^`` chains of one type: every operand in an
  unsigned type at least as wide, converted back once (wraparound is arithmetic modulo
  2**width, so the operations' intermediate conversions change nothing);
* float ``+ -`` / ``* /`` chains whose operands all have the chain's float type (each
  intermediate result already has it, so nothing is rounded differently; a Python
  ``float`` chain over float64 values is one);
* ``and`` / ``or`` chains (either nesting: the operands in order);
* conditional expressions nested in their ``else`` branch
  (``a if c else b if d else e``).

Shorter chains keep their nested form (the code the goldens hold).
"""

from __future__ import annotations

from revec import ir

FLAT_MIN = 16

# operators written flat together: those of one precedence level, associating left
_GROUP = {"+": "add", "-": "add", "*": "mul", "/": "mul", "&": "&", "|": "|", "^": "^"}


def binop_chain(e: ir.BinOp) -> tuple[ir.Expr, list[tuple[str, ir.Expr]]] | None:
    """``e``'s left-nested chain of one operator group and type, as the first operand and
    the (operator, operand) pairs after it in order; None for a chain of fewer than
    :data:`FLAT_MIN` operands or one not written flat (see the module docstring)."""
    group = _GROUP.get(e.op)
    kind = e.ty.kind
    if group is None or kind == "b" or (kind in "iu" and e.op == "/"):
        return None
    rest: list[tuple[str, ir.Expr]] = []
    x: ir.Expr = e
    while isinstance(x, ir.BinOp) and _GROUP.get(x.op) == group and x.ty == e.ty:
        if kind == "f" and x.right.ty.dtype != e.ty.dtype:
            return None
        rest.append((x.op, x.right))
        x = x.left
    if len(rest) + 1 < FLAT_MIN or (kind == "f" and x.ty.dtype != e.ty.dtype):
        return None
    rest.reverse()
    return x, rest


def boolop_chain(e: ir.BoolOp) -> list[ir.Expr] | None:
    """The operands, in order, of the ``and`` (``or``) chain ``e`` heads, however it
    nests; None for fewer than :data:`FLAT_MIN`."""
    out: list[ir.Expr] = []
    stack: list[ir.Expr] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.BoolOp) and x.op == e.op:
            stack += [x.right, x.left]
        else:
            out.append(x)
    return out if len(out) >= FLAT_MIN else None


def ifexp_chain(e: ir.IfExp) -> tuple[list[tuple[ir.Expr, ir.Expr]], ir.Expr] | None:
    """``a if c else b if d else ...``: the (condition, value) pairs in order and the
    last ``else`` value; None for fewer than :data:`FLAT_MIN` conditions."""
    arms: list[tuple[ir.Expr, ir.Expr]] = []
    x: ir.Expr = e
    while isinstance(x, ir.IfExp):
        arms.append((x.cond, x.then))
        x = x.orelse
    return (arms, x) if len(arms) >= FLAT_MIN else None

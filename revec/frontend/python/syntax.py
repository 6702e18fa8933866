"""The Python syntax the adapter recognises: operator tables, statements a task may
not contain, and the block structure libcst gives a function body."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from revec.frontend.shape import IfParts

BIN_OPS: dict[type, str] = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/",
    cst.FloorDivide: "//", cst.Modulo: "%", cst.Power: "**", cst.LeftShift: "<<",
    cst.RightShift: ">>", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^",
}
AUG_OPS: dict[type, str] = {
    cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*",
    cst.DivideAssign: "/", cst.FloorDivideAssign: "//", cst.ModuloAssign: "%",
    cst.PowerAssign: "**", cst.LeftShiftAssign: "<<", cst.RightShiftAssign: ">>",
    cst.BitAndAssign: "&", cst.BitOrAssign: "|", cst.BitXorAssign: "^",
}
CMP_OPS: dict[type, str] = {
    cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=", cst.Equal: "==", cst.NotEqual: "!=",
}
UNARY_OPS: dict[type, str] = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~"}
BUILTINS = ("abs", "min", "max", "int", "float", "bool")
FORBIDDEN_STMTS: dict[type, str] = {
    cst.Try: "try statements are not allowed in a task",
    cst.With: "with statements are not allowed in a task",
    cst.FunctionDef: "nested functions are not allowed in a task",
    cst.ClassDef: "class definitions are not allowed in a task",
    cst.Global: "writing a module-level global is not allowed (module globals are read-only)",
    cst.Nonlocal: "nonlocal is not allowed in a task",
    cst.Raise: "raise is not allowed in a task",
    cst.Del: "del is not allowed in a task",
    cst.Import: "imports belong at module level",
    cst.ImportFrom: "imports belong at module level",
    cst.Assert: "assert is not allowed in a task",
}


def forbidden(node: cst.CSTNode) -> str | None:
    """Why the statement ``node`` cannot be in a task (None: it may be)."""
    for kind, message in FORBIDDEN_STMTS.items():
        if isinstance(node, kind):
            return message
    return None


def block_body(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.IndentedBlock):
        return body.body
    assert isinstance(body, cst.SimpleStatementSuite)
    return [cst.SimpleStatementLine(body=body.body)] if body.body else []


def body_statements(fdef: cst.FunctionDef) -> list[cst.CSTNode]:
    """A function's statements, without its docstring."""
    if not isinstance(fdef.body, cst.IndentedBlock):
        return list(fdef.body.body)
    stmts: list[cst.CSTNode] = list(fdef.body.body)
    if stmts and is_docstring(stmts[0]):
        stmts = stmts[1:]
    return stmts


def is_docstring(node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1
            and isinstance(node.body[0], cst.Expr)
            and isinstance(node.body[0].value, cst.SimpleString | cst.ConcatenatedString))


def as_if(node: cst.CSTNode) -> IfParts[cst.CSTNode, cst.BaseExpression] | None:
    """An ``if`` statement's parts for the task-shape splitter (an ``elif`` is the
    one statement of the ``else``)."""
    if not isinstance(node, cst.If):
        return None
    orelse: Sequence[cst.CSTNode] | None = None
    if isinstance(node.orelse, cst.If):
        orelse = [node.orelse]
    elif node.orelse is not None:
        orelse = list(block_body(node.orelse.body))
    return IfParts(node.test, list(block_body(node.body)), orelse)


def ends_with_return(stmts: Sequence[cst.CSTNode]) -> bool:
    """The block's last statement line ends with ``return``."""
    if not stmts:
        return False
    last = stmts[-1]
    return (isinstance(last, cst.SimpleStatementLine) and bool(last.body)
            and isinstance(last.body[-1], cst.Return))


class _ValueReturns(cst.CSTVisitor):
    """Finds a ``return <value>`` anywhere under a node (a visitor, not
    ``libcst.matchers``, whose import alone costs about 0.25 s of every command)."""

    def __init__(self) -> None:
        self.found = False

    def visit_Return(self, node: cst.Return) -> bool:
        if node.value is not None:
            self.found = True
        return False


def returns_a_value(node: cst.CSTNode) -> bool:
    finder = _ValueReturns()
    node.visit(finder)
    return finder.found


def shared_return(stmts: list[cst.CSTNode]) -> list[cst.CSTNode]:
    """A task body ending ``if ...: A else: B`` then ``return X`` (each branch sets what
    the shared return reads): the return copied into every branch that does not end
    with one already, so the body has the task shape (``if <is-base>: A; return X``
    ``else: B; return X``).  Other bodies are returned unchanged."""
    if len(stmts) < 2 or not ends_with_return(stmts[-1:]):
        return stmts
    last = stmts[-1]
    assert isinstance(last, cst.SimpleStatementLine)
    if len(last.body) != 1:
        return stmts
    branch = stmts[-2]
    if not isinstance(branch, cst.If) or not _has_else(branch):
        return stmts
    return [*stmts[:-2], _with_return(branch, last)]


def _has_else(node: cst.If) -> bool:
    if node.orelse is None:
        return False
    return _has_else(node.orelse) if isinstance(node.orelse, cst.If) else True


def _append(body: cst.BaseSuite, ret: cst.SimpleStatementLine) -> cst.BaseSuite:
    stmts = list(block_body(body))
    if ends_with_return(stmts):
        return body
    return cst.IndentedBlock(body=[*stmts, ret])  # type: ignore[list-item]


def _with_return(node: cst.If, ret: cst.SimpleStatementLine) -> cst.If:
    orelse: cst.If | cst.Else | None = node.orelse
    if isinstance(orelse, cst.If):
        orelse = _with_return(orelse, ret)
    elif isinstance(orelse, cst.Else):
        orelse = orelse.with_changes(body=_append(orelse.body, ret))
    return node.with_changes(body=_append(node.body, ret), orelse=orelse)


def literal_items(it: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The items of a literal tuple or list of numbers (``(1, 2, 3)``, ``[-1, 0.5]``),
    or None."""
    if not isinstance(it, cst.Tuple | cst.List) or not it.elements:
        return None
    out = []
    for el in it.elements:
        if not isinstance(el, cst.Element):
            return None
        v = el.value
        inner = v.expression if isinstance(v, cst.UnaryOperation) and isinstance(
            v.operator, cst.Minus | cst.Plus) else v
        if not isinstance(inner, cst.Integer | cst.Float):
            return None
        out.append(v)
    return out


def max_ifexp(node: cst.IfExp) -> tuple[str, cst.Name, cst.Name] | None:
    """``a if a > b else b`` (``>=``; ``<``/``<=``: min; either order of the branches):
    ("max" or "min", a, b) for two plain names, else None."""
    test, body, orelse = node.test, node.body, node.orelse
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.left, cst.Name) and isinstance(body, cst.Name)
            and isinstance(orelse, cst.Name)):
        return None
    comp = test.comparisons[0]
    right = comp.comparator
    if not isinstance(right, cst.Name):
        return None
    a, b = test.left.value, right.value
    if a == b or {body.value, orelse.value} != {a, b}:
        return None
    greater = isinstance(comp.operator, cst.GreaterThan | cst.GreaterThanEqual)
    if not greater and not isinstance(comp.operator, cst.LessThan | cst.LessThanEqual):
        return None
    picks_left = body.value == a  # the branch taken when the test holds is a
    return ("max" if greater == picks_left else "min"), body, orelse


def split_returning_elifs(stmts: list[cst.CSTNode]) -> list[cst.CSTNode]:
    """Base cases written as one chain, ``if n == 1: return 1`` ``elif n == 2: return 2``
    (no ``else``), followed by the inductive case: every branch of the chain returns,
    so it is the sequence ``if n == 1: return 1`` ``if n == 2: return 2``, the task
    shape's base case then the inductive case's own early returns.  Other statements
    are kept as they are."""
    out: list[cst.CSTNode] = []
    for i, node in enumerate(stmts):
        if (i + 1 < len(stmts) and isinstance(node, cst.If)
                and isinstance(node.orelse, cst.If) and _every_branch_returns(node)):
            out += _chain(node)
        else:
            out.append(node)
    return out


def _every_branch_returns(node: cst.If) -> bool:
    """No ``else``, and every branch ends with ``return``."""
    branch: cst.If | cst.Else | None = node
    while isinstance(branch, cst.If):
        if not ends_with_return(list(block_body(branch.body))):
            return False
        branch = branch.orelse
    return branch is None


def _chain(node: cst.If) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    branch: cst.If | cst.Else | None = node
    while isinstance(branch, cst.If):
        out.append(branch.with_changes(orelse=None))
        branch = branch.orelse
    return out


def parallel_pairs(target: cst.BaseExpression, value: cst.BaseExpression
                   ) -> list[tuple[cst.Name, cst.BaseExpression]] | None:
    """``a, b = b, a % b`` (a tuple or list of plain names, a tuple or list of as many
    values, nothing starred): its (name, value) pairs; None otherwise."""
    if not isinstance(target, cst.Tuple | cst.List) or not isinstance(
            value, cst.Tuple | cst.List):
        return None
    if len(target.elements) != len(value.elements) or len(target.elements) < 2:
        return None
    pairs = []
    for t, v in zip(target.elements, value.elements):
        if not isinstance(t, cst.Element) or not isinstance(v, cst.Element) \
                or not isinstance(t.value, cst.Name):
            return None
        pairs.append((t.value, v.value))
    names = [n.value for n, _ in pairs]
    return pairs if len(set(names)) == len(names) else None

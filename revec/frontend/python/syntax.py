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

"""Front end: a Python source file -> checked :class:`revec.ir.Program`.

``load_program(path)`` parses with libcst, checks the module-level declarations,
executes the module level once (for constants, reducers and task objects), then
lowers every ``@task`` function (and the helpers they call) to the typed IR.
"""

from __future__ import annotations

import types
from pathlib import Path

import libcst as cst
import numpy as np

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.frontend.python.lower import FunctionLowerer, ProgramContext, scalar_type_of
from revec.frontend.python.source import ParsedSource, load_module, parse_source, read_source
from revec.lang import REDUCER_OPS, Reducer, Task
from revec.transforms.prologue import inline_prologues
from revec.transforms.returns import convert_returns

__all__ = ["load_program", "load_program_source"]


def _is_reducer_call(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and (
        (isinstance(node.func, cst.Name) and node.func.value == "Reducer")
        or (isinstance(node.func, cst.Attribute) and node.func.attr.value == "Reducer"))


def _static_reducer_checks(src: ParsedSource) -> None:
    """Check reducer declarations before running the module (their errors are located)."""
    for stmt in src.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for part in stmt.body:
            if isinstance(part, cst.Assign) and _is_reducer_call(part.value):
                call = part.value
                assert isinstance(call, cst.Call)
                if len(call.args) != 2:
                    raise RevecError("Reducer takes a dtype and an operation: "
                                     "Reducer(np.int64, \"sum\")", src.loc(call))
                op = call.args[1].value
                if isinstance(op, cst.SimpleString) and op.evaluated_value not in REDUCER_OPS:
                    raise RevecError(
                        f"unknown reducer operation {op.evaluated_value!r}; the operations "
                        f"are {', '.join(repr(o) for o in REDUCER_OPS)}", src.loc(op))


# The checker recurses over the program's nesting (expressions, helper calls): deep
# programs (a 1,000-term sum, a chain of 2,000 helpers) need more than Python's default
# 1,000 frames; beyond this limit they are a located error, never a traceback.
RECURSION_LIMIT = 12_000


def load_program(path: str | Path) -> ir.Program:
    """Check a program file: its module level is executed once (a fresh module).  A
    ``.c`` file is a Cilk C program (:mod:`revec.frontend.c`)."""
    import sys

    if str(path).endswith(".c"):
        from revec.frontend.c import load_c_program

        return load_c_program(path)

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, RECURSION_LIMIT))
    try:
        return _load_program(path)
    except RecursionError:
        raise RevecError("the program nests too deeply for the checker (expressions or "
                         "chains of helper calls thousands of levels deep); split long "
                         "expressions into statements", SourceLoc(str(path), 1, 1)) from None
    finally:
        sys.setrecursionlimit(old)


def _load_program(path: str | Path) -> ir.Program:
    src = read_source(path)
    _static_reducer_checks(src)
    return _load(src, None)


def load_program_source(name: str, text: str, namespace: types.ModuleType) -> ir.Program:
    """Check a program whose module is already live (a task imported from a package,
    defined in a script or in a notebook cell): ``text`` is its source (from
    ``inspect``/``linecache``), ``namespace`` its globals; nothing is executed."""
    src = parse_source(name, text)
    _static_reducer_checks(src)
    return _load(src, namespace)


def _load(src: ParsedSource, live: types.ModuleType | None) -> ir.Program:
    functions: dict[str, cst.FunctionDef] = {}
    reducer_nodes: dict[str, cst.CSTNode] = {}
    for stmt in src.module.body:
        if isinstance(stmt, cst.FunctionDef):
            functions[stmt.name.value] = stmt
        elif isinstance(stmt, cst.SimpleStatementLine):
            for part in stmt.body:
                if (isinstance(part, cst.Assign) and _is_reducer_call(part.value)
                        and len(part.targets) == 1
                        and isinstance(part.targets[0].target, cst.Name)):
                    reducer_nodes[part.targets[0].target.value] = part
    module = load_module(src) if live is None else live
    g = module.__dict__
    reducers: dict[str, ir.ReducerDecl] = {}
    _reject_reducer_aliases(src, g, reducer_nodes)
    for name, value in g.items():
        if isinstance(value, Reducer):
            node = reducer_nodes.get(name)
            loc = src.loc(node) if node is not None else src.at(1, 1)
            reducers[name] = ir.ReducerDecl(name, value.dtype, value.op, loc)
    ctx = ProgramContext(src, module, functions, reducers)
    tasks: dict[str, ir.TaskDef] = {}
    for name, fdef in functions.items():
        if isinstance(g.get(name), Task):
            tasks[name] = FunctionLowerer(ctx, fdef, kind="task").lower_task()
        elif fdef.decorators and any(
                isinstance(d.decorator, cst.Name) and d.decorator.value == "task"
                for d in fdef.decorators):
            raise RevecError("'task' here is not revec's task decorator: "
                             "use 'from revec import task'", src.loc(fdef))
    if not tasks:
        raise RevecError("no @task function in this file", src.at(1, 1))
    program = ir.Program(str(src.path), src.text, tasks, _used_helpers(tasks, ctx.helpers),
                         reducers, ctx.arrays, tuple(sorted(ctx.libs)), module)
    # the forms people write -> the plain task form (shared with every front end)
    return inline_prologues(convert_returns(program))


def _used_helpers(tasks: dict[str, ir.TaskDef], helpers: dict[str, ir.HelperDef]
                  ) -> dict[str, ir.HelperDef]:
    """The helpers (specializations) the final IR calls; lowering may have made others
    while the local types were still settling."""
    used: set[str] = set()
    todo: list[ir.Stmt] = []
    for t in tasks.values():
        todo += [*t.prologue, *t.base, *t.inductive, ir.ExprStmt(t.loc, t.is_base)]
    while todo:
        s = todo.pop()
        for e in _exprs_of(s):
            for x in ir.walk_exprs(e):
                if isinstance(x, ir.Call) and x.func not in used and x.func in helpers:
                    used.add(x.func)
                    todo += list(helpers[x.func].body)
        for attr in ("then", "orelse", "body"):
            todo += list(getattr(s, attr, ()))
    return {k: h for k, h in helpers.items() if k in used}


def _exprs_of(s: ir.Stmt) -> list[ir.Expr]:
    out: list[ir.Expr] = []
    for v in vars(s).values():
        if isinstance(v, ir.Expr):
            out.append(v)
        elif isinstance(v, tuple):
            out += [x for x in v if isinstance(x, ir.Expr)]
    return out


def _reject_reducer_aliases(src: ParsedSource, g: dict[str, object],
                            reducer_nodes: dict[str, cst.CSTNode]) -> None:
    """A second module-level name of one Reducer (``alias = count``) would be a second
    reducer to the compiled code but the same object to plain Python: an error."""
    first: dict[int, str] = {}
    for name, value in g.items():
        if not isinstance(value, Reducer):
            continue
        if id(value) not in first:
            first[id(value)] = name
            continue
        owner = first[id(value)]
        if name in reducer_nodes and owner not in reducer_nodes:
            owner, name = name, owner
        loc = src.at(1, 1)
        for stmt in src.module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for part in stmt.body:
                    if isinstance(part, cst.Assign) and any(
                            isinstance(t.target, cst.Name) and t.target.value == name
                            for t in part.targets):
                        loc = src.loc(part)
        raise RevecError(f"'{name}' is another name for the reducer '{owner}'; a reducer has "
                         f"one name: use '{owner}'", loc)


def arg_value(param: ir.Param, text: str) -> object:
    """Parse a command-line root argument for ``param`` (range-checked)."""
    dt = param.ty.dtype
    try:
        if dt.kind == "b":
            low = text.strip().lower()
            if low not in ("true", "false", "0", "1"):
                raise ValueError(text)
            return np.bool_(low in ("true", "1"))
        if dt.kind == "f":
            return dt.type(float(text))
        value = int(text, 0)
    except ValueError:
        raise RevecError(f"argument '{param.name}': {text!r} is not a valid "
                         f"{dt.name} value") from None
    info = np.iinfo(dt)
    if not info.min <= value <= info.max:
        raise RevecError(f"argument '{param.name}': {value} is out of range for {dt.name} "
                         f"[{info.min}, {info.max}]")
    return dt.type(value)


_ = scalar_type_of  # re-exported for the back ends

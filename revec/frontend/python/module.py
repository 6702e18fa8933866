"""A Python task program's module level: reducer declarations (checked before the
module runs, so their errors are located), the executed module, and its ``@task``
functions lowered and assembled into the checked program."""

from __future__ import annotations

import types
from typing import Any

import libcst as cst

from revec import ir
from revec.errors import RevecError
from revec.frontend.assemble import assemble, used_helpers
from revec.frontend.python.context import ProgramContext
from revec.frontend.python.implicit import implicit_tasks, no_task_error
from revec.frontend.python.lower import PyFunction
from revec.frontend.python.source import ParsedSource, load_module
from revec.lang import BOUND_OPS, REDUCER_OPS, Bound, Reducer, Task


def _is_reducer_call(node: cst.BaseExpression, names: tuple[str, ...] = ("Reducer", "Bound")
                     ) -> bool:
    return isinstance(node, cst.Call) and (
        (isinstance(node.func, cst.Name) and node.func.value in names)
        or (isinstance(node.func, cst.Attribute) and node.func.attr.value in names))


def static_reducer_checks(src: ParsedSource) -> None:
    """Check reducer declarations before running the module (their errors are located)."""
    for stmt in src.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for part in stmt.body:
            if isinstance(part, cst.Assign) and _is_reducer_call(part.value, ("Bound",)):
                call = part.value
                assert isinstance(call, cst.Call)
                if len(call.args) not in (2, 3):
                    raise RevecError("Bound takes a dtype, \"max\" or \"min\" and optionally "
                                     "a start value: Bound(np.int64, \"max\")", src.loc(call))
                op = call.args[1].value
                if isinstance(op, cst.SimpleString) and op.evaluated_value not in BOUND_OPS:
                    raise RevecError(
                        f"a Bound is raised (\"max\") or lowered (\"min\"), not "
                        f"{op.evaluated_value!r}", src.loc(op))
            elif isinstance(part, cst.Assign) and _is_reducer_call(part.value):
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


def check_module(src: ParsedSource, live: types.ModuleType | None,
                 sizes: dict[tuple[str, str], int] | None = None,
                 param_types: dict[tuple[str, str], Any] | None = None) -> ir.Program:
    """The checked program of the parsed module ``src``: executed once here (a fresh
    module), or already live (``live``: its globals, nothing executed)."""
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
            if isinstance(value, Bound):
                # a bound: a hidden max/min reducer that tasks read to prune
                start = None if value.start is None else value.start.item()
                reducers[name] = ir.ReducerDecl(name, value.dtype, value.op, loc, hidden=True,
                                                bound=True, start=start)
            else:
                reducers[name] = ir.ReducerDecl(name, value.dtype, value.op, loc)
    ctx = ProgramContext(src, module, functions, reducers)
    ctx.sizes = dict(sizes or {})
    ctx.types = dict(param_types or {})
    if live is None:
        implicit_tasks(src, functions, g)
    tasks: dict[str, ir.TaskDef] = {}
    for name, fdef in functions.items():
        if isinstance(g.get(name), Task):
            tasks[name] = PyFunction(ctx, fdef, kind="task").lower_task()
        elif fdef.decorators and any(
                isinstance(d.decorator, cst.Name) and d.decorator.value == "task"
                for d in fdef.decorators):
            raise RevecError("'task' here is not revec's task decorator: "
                             "use 'from revec import task'", src.loc(fdef))
    if not tasks:
        no_task_error(src)
    program = assemble(str(src.path), src.text, tasks, used_helpers(tasks, ctx.helpers),
                       reducers, ctx.arrays, ctx.libs, module, inputs=ctx.inputs)
    program.untyped = {t: dict(ps) for t, ps in ctx.untyped.items() if t in tasks}
    return program


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

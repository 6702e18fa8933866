"""Programs as published: a file without ``@task`` whose module-level functions call
themselves.  Each such function is taken as a task, as if it were decorated with
``@task`` (also over ``functools.lru_cache`` / ``cache`` / ``wraps`` wrappers): the
loaded module's name is rebound to the task object, so the plain-Python reference run
recurses through it exactly as through a written ``@task``.  Files with a ``@task``
are left alone (their other recursive functions stay helpers, and are errors)."""

from __future__ import annotations

import inspect
import types
from typing import Any

import libcst as cst

from revec.errors import RevecError
from revec.frontend.python.source import ParsedSource
from revec.lang import Task


class _Calls(cst.CSTVisitor):
    """The names a function body calls directly (``f(...)``)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.names.add(node.func.value)


def calls_itself(fdef: cst.FunctionDef) -> bool:
    v = _Calls()
    fdef.body.visit(v)
    return fdef.name.value in v.names


def _has_task_decorator(fdef: cst.FunctionDef) -> bool:
    for d in fdef.decorators:
        e = d.decorator
        if isinstance(e, cst.Call):
            e = e.func
        name = e.attr.value if isinstance(e, cst.Attribute) else getattr(e, "value", None)
        if name == "task":
            return True
    return False


def implicit_tasks(src: ParsedSource, functions: dict[str, cst.FunctionDef],
                   g: dict[str, Any]) -> list[str]:
    """Rebind each self-recursive module-level function of a file without ``@task`` to
    a task (in the loaded module ``g``); the names taken."""
    if any(isinstance(g.get(n), Task) or _has_task_decorator(f) for n, f in functions.items()):
        return []

    taken = []
    for name, fdef in functions.items():
        value = g.get(name)
        if not calls_itself(fdef) or not callable(value):
            continue
        fn = inspect.unwrap(value)
        if not isinstance(fn, types.FunctionType) or fn.__name__ != name:
            continue  # the name holds something else at run time
        g[name] = Task(value)  # as ``@task`` would (the loader runs it through the program)
        taken.append(name)
    return taken


def no_task_error(src: ParsedSource) -> None:
    """A file with no task: say why, at the recursive function revec cannot take (a
    method, or a function nested in another), or that there is none."""
    for stmt in src.module.body:
        if isinstance(stmt, cst.ClassDef):
            for item in stmt.body.body:
                if isinstance(item, cst.FunctionDef) and _calls_method(item):
                    raise RevecError(
                        f"'{item.name.value}' is a method of class '{stmt.name.value}': revec "
                        "runs recursive functions defined at the module level (a method, "
                        "and state kept on 'self', is not supported); define it as a plain "
                        "function", src.loc(item))
        if isinstance(stmt, cst.FunctionDef):
            for inner in _nested_defs(stmt):
                if calls_itself(inner):
                    raise RevecError(
                        f"the recursive function '{inner.name.value}' is nested in "
                        f"'{stmt.name.value}': revec runs recursive functions defined at the "
                        "module level; move it out of "
                        f"'{stmt.name.value}' (passing what it reads as parameters)",
                        src.loc(inner))
    raise RevecError("no task in this file: no @task function, and no module-level "
                     "function that calls itself", src.at(1, 1))


def _calls_method(fdef: cst.FunctionDef) -> bool:
    """A method calling itself through ``self.name(...)`` (or by its plain name)."""
    name = fdef.name.value
    found = False

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            f = node.func
            if (isinstance(f, cst.Attribute) and f.attr.value == name) or (
                    isinstance(f, cst.Name) and f.value == name):
                found = True

    fdef.body.visit(V())
    return found


def _nested_defs(fdef: cst.FunctionDef) -> list[cst.FunctionDef]:
    out: list[cst.FunctionDef] = []

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if node is not fdef:
                out.append(node)

    fdef.visit(V())
    return out

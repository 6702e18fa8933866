"""Program assembly, shared by every front end: the checked parts become one
:class:`revec.ir.Program`, the forms people write are rewritten into the plain task
form by the IR passes, and the whole check runs under one depth guard.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.transforms.bounds import check_bounds
from revec.transforms.prologue import inline_prologues
from revec.transforms.returns import convert_returns

# The checker recurses over the program's nesting (expressions, helper calls): deep
# programs (a 1,000-term sum, a chain of 2,000 helpers) need more than Python's default
# 1,000 frames; beyond this limit they are a located error, never a traceback.
RECURSION_LIMIT = 12_000


@contextmanager
def depth_guard(path: str | Path, message: str) -> Iterator[None]:
    """Run a check with the recursion limit raised to :data:`RECURSION_LIMIT` (and
    restored after); a program nesting deeper still is the error ``message`` at the
    file's first line."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, RECURSION_LIMIT))
    try:
        yield
    except RecursionError:
        raise RevecError(message, SourceLoc(str(path), 1, 1)) from None
    finally:
        sys.setrecursionlimit(old)


def assemble(path: str, source: str, tasks: dict[str, ir.TaskDef],
             helpers: dict[str, ir.HelperDef], reducers: dict[str, ir.ReducerDecl],
             arrays: dict[str, np.ndarray], libs: set[str],
             module: types.ModuleType | None = None,
             reference: Callable[[ir.Program], types.ModuleType] | None = None,
             inputs: dict[str, ir.InputDecl] | None = None) -> ir.Program:
    """The checked program, after the passes every front end shares: return values
    become spawns and reducers (:func:`revec.transforms.returns.convert_returns`),
    prologues are inlined (:func:`revec.transforms.prologue.inline_prologues`).

    ``inputs``: the arrays the root call supplies (their placeholders are in
    ``arrays``).  ``module`` runs the program as plain Python (the sequential reference); a front end
    whose programs are not Python builds it with ``reference`` from the program as
    written, before the passes (so the reference checks them)."""
    program = ir.Program(path, source, tasks, helpers, reducers, arrays,
                         tuple(sorted(libs)), module, dict(inputs or {}))
    if reference is not None:
        module = reference(program)
    program = inline_prologues(convert_returns(check_bounds(program)))
    program.module = module
    return program


def used_helpers(tasks: dict[str, ir.TaskDef], helpers: dict[str, ir.HelperDef]
                 ) -> dict[str, ir.HelperDef]:
    """The helpers (specializations) the tasks call, directly or through other helpers,
    in their order in ``helpers``: a front end that lowers helpers while the local types
    are still settling may have made others."""
    used: set[str] = set()
    todo: list[ir.Expr | ir.Stmt] = []
    for t in tasks.values():
        todo += [*t.prologue, *t.base, *t.inductive, t.is_base]
    while todo:
        for node in ir.walk_nodes(todo.pop()):
            if isinstance(node, ir.Call) and node.func not in used and node.func in helpers:
                used.add(node.func)
                todo += helpers[node.func].body
    return {k: h for k, h in helpers.items() if k in used}

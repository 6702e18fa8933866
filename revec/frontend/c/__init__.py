"""Front end for Cilk C: a ``.c`` file -> checked :class:`revec.ir.Program`.

The file is read by :mod:`revec.frontend.c.source` (preprocessing, pycparser) and its
functions lowered by :mod:`revec.frontend.c.lower`; return values and prologues then go
through the same IR passes as Python programs.  See docs/cilk.md for the subset.
"""

from __future__ import annotations

from pathlib import Path

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.frontend.c.lower import CProgramContext, FunctionLowerer
from revec.frontend.c.reference import sequential_module
from revec.frontend.c.source import read_c
from revec.transforms.prologue import inline_prologues
from revec.transforms.returns import convert_returns

RECURSION_LIMIT = 12_000


def load_c_program(path: str | Path) -> ir.Program:
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, RECURSION_LIMIT))
    try:
        return _load(path)
    except RecursionError:
        raise RevecError("the program nests too deeply for the checker",
                         SourceLoc(str(path), 1, 1)) from None
    finally:
        sys.setrecursionlimit(old)


def _load(path: str | Path) -> ir.Program:
    src = read_c(path)
    ctx = CProgramContext(src)
    ctx.collect()
    if not ctx.tasks:
        raise RevecError("no task in this file: a task is a function that uses cilk_spawn "
                         "or calls itself", src.at(1, 1))
    tasks: dict[str, ir.TaskDef] = {}
    for name in ctx.functions:
        if name in ctx.tasks:
            tasks[name] = FunctionLowerer(ctx, ctx.functions[name], "task").lower_task()
    program = ir.Program(src.path, src.text, tasks, dict(ctx.helpers), {}, ctx.arrays,
                         tuple(sorted(ctx.libs)), None)
    module = sequential_module(program)
    program = inline_prologues(convert_returns(program))
    program.module = module
    return program

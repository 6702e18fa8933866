"""The Cilk C front end: a pycparser syntax adapter on the front-end core.

The file is read by :mod:`.source` (the system preprocessor, then pycparser),
its top level by :mod:`.file_scope`, and its tasks and helpers lowered by :mod:`.lower`
and :mod:`.expressions`, which call the core's IR builder
(:mod:`revec.frontend.builder`) with C's type rules (:mod:`revec.frontend.rules.c99`).
Return values and prologues then go through the same IR passes as Python programs; the
sequential reference is :mod:`.reference`.  See docs/cilk.md for the subset.
"""

from __future__ import annotations

from pathlib import Path

from revec import ir
from revec.errors import RevecError
from revec.frontend.assemble import assemble, depth_guard
from revec.frontend.c.bounds import find_bounds
from revec.frontend.c.context import CProgramContext
from revec.frontend.c.counters import find_counters
from revec.frontend.c.file_scope import calls, read_file_scope
from revec.frontend.c.lower import CFunction
from revec.frontend.c.outparams import rewrite_out_params
from revec.frontend.c.reference import sequential_module
from revec.frontend.c.source import read_c
from revec.frontend.c.syntax import walk


def load_c_program(path: str | Path, sizes: dict[tuple[str, str], int] | None = None
                   ) -> ir.Program:
    """Check a Cilk C program file.  ``sizes``: the root values of the parameters that
    bound task-private boards (the program specialised for a root call)."""
    program = _load(path, sizes)
    program.specialize = lambda new: load_c_program(path, new)
    return program


def _load(path: str | Path, sizes: dict[tuple[str, str], int] | None) -> ir.Program:
    with depth_guard(path, "the program nests too deeply for the checker"):
        src = read_c(path)
        ctx = CProgramContext(src)
        ctx.sizes = dict(sizes or {})
        read_file_scope(ctx)
        find_bounds(ctx)
        find_counters(ctx)
        if not ctx.tasks:
            raise RevecError("no task in this file: a task is a function that uses "
                             "cilk_spawn or calls itself", src.at(1, 1))
        tasks: dict[str, ir.TaskDef] = {}
        left_out: list[RevecError] = []
        for name, fdef in ctx.functions.items():
            if name not in ctx.tasks:
                continue
            if name in ctx.roots:
                rewrite_out_params(fdef, ctx.error)
                tasks[name] = CFunction(ctx, fdef, "task").lower_task()
                continue
            # a serial variant or a root caller: a task if it is in the subset
            saved = ctx.snapshot()
            try:
                rewrite_out_params(fdef, ctx.error)
                tasks[name] = CFunction(ctx, fdef, "task").lower_task()
            except RevecError as err:
                ctx.restore(saved)
                left_out.append(err)
        if not tasks and left_out:
            raise left_out[0]
        while True:
            try:
                return assemble(src.path, src.text, tasks, dict(ctx.helpers),
                                dict(ctx.bounds), ctx.arrays, ctx.libs,
                                reference=sequential_module, inputs=ctx.inputs)
            except RevecError as err:
                # a serial variant or root caller the shared passes reject (BOTS's
                # fib_seq summing long long results in int locals) is left out as well,
                # when no other task calls it
                dropped = _optional_task_at(ctx, tasks, err)
                if dropped is None:
                    raise
                del tasks[dropped]


def _optional_task_at(ctx: CProgramContext, tasks: dict[str, ir.TaskDef],
                      err: RevecError) -> str | None:
    """The task that ``err`` is located in, if it need not be in the subset (not a root
    task, called by no other task, not the last task)."""
    if err.loc is None or len(tasks) < 2:
        return None
    at = (err.loc.file, err.loc.line)
    for name in tasks:
        if name in ctx.roots:
            continue
        fdef = ctx.functions[name]
        lines = {(loc.file, loc.line) for loc in map(ctx.src.loc, walk(fdef))}
        called = any(name in calls(ctx.functions[other]) for other in tasks if other != name)
        if at in lines and not called:
            return name
    return None

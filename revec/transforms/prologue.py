"""The prologue (statements before the is-base test) -> the plain task form.

A task may compute locals before ``if <is-base>:`` and use them in the test and in
both cases.  The schedules evaluate the is-base test over a whole block before
either case runs, so the pass moves the prologue into both cases (every thread runs
exactly one of them) and, when the test reads a prologue local, evaluates the test
through a generated helper that runs the prologue first (helpers have no effects,
so running the prologue twice changes nothing but time).
"""

from __future__ import annotations

import dataclasses

from revec import ir
from revec.ir import BOOL
from revec.transforms.returns import _assigned, _fresh


def inline_prologues(program: ir.Program) -> ir.Program:
    if all(not t.prologue for t in program.tasks.values()):
        return program
    tasks: dict[str, ir.TaskDef] = {}
    helpers = dict(program.helpers)
    for name, t in program.tasks.items():
        if not t.prologue:
            tasks[name] = t
            continue
        defined = _assigned(t.prologue)
        is_base = t.is_base
        if any(isinstance(x, ir.Var) and x.name in defined for x in ir.walk_exprs(is_base)):
            hname = _fresh(f"{name}_is_base", set(helpers) | set(program.reducers)
                           | set(program.tasks))
            body = (*t.prologue, ir.Return(t.is_base.loc, (t.is_base,)))
            used = _assigned(body)
            helpers[hname] = ir.HelperDef(
                hname, tuple(dataclasses.replace(p, hidden=False, has_default=False,
                                                 default=None) for p in t.params),
                {k: v for k, v in t.locals.items() if k in used}, body, (BOOL,), t.loc)
            is_base = ir.Call(t.is_base.loc, BOOL, hname,
                              tuple(ir.Var(p.loc, p.ty, p.name) for p in t.params))
        inductive = (*t.prologue, *t.inductive)
        tasks[name] = dataclasses.replace(
            t, is_base=is_base, base=(*t.prologue, *t.base), inductive=inductive,
            prologue=(), max_spawns=ir.spawn_bound(inductive))
    return ir.Program(program.path, program.source, tasks, helpers, program.reducers,
                      program.arrays, program.libs, program.module)

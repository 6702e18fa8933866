"""The prologue (statements before the is-base test) -> the plain task form.

A task may compute locals before ``if <is-base>:`` and use them in the test and in
both cases.  The schedules evaluate the is-base test over a whole block before
either case runs, so the pass moves the prologue into both cases (every thread runs
exactly one of them; assignments a case does not read are left out of it) and, when
the test reads a prologue local, substitutes the local's expression into the test
(a prologue of plain assignments) or else evaluates the test through a generated
helper that runs the prologue first (helpers have no effects, so running the
prologue twice changes nothing but time).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from revec import ir
from revec.ir import BOOL
from revec.transforms.blocking import assigned_names


def inline_prologues(program: ir.Program) -> ir.Program:
    if all(not t.prologue for t in program.tasks.values()):
        return program
    tasks: dict[str, ir.TaskDef] = {}
    helpers = dict(program.helpers)
    for name, t in program.tasks.items():
        if not t.prologue:
            tasks[name] = t
            continue
        defined = assigned_names(t.prologue)
        is_base = t.is_base
        reads_prologue = any(isinstance(x, ir.Var) and x.name in defined
                             for x in ir.walk_exprs(is_base))
        if reads_prologue and all(isinstance(s, ir.Assign) for s in t.prologue):
            env: dict[str, ir.Expr] = {}
            for s in t.prologue:
                assert isinstance(s, ir.Assign)
                env[s.target] = substitute(s.value, env)
            is_base = substitute(is_base, env)
        elif reads_prologue:
            hname = ir.fresh_name(f"{name}_is_base", set(helpers) | set(program.reducers)
                           | set(program.tasks))
            body = (*t.prologue, ir.Return(t.is_base.loc, (t.is_base,)))
            used = assigned_names(body)
            helpers[hname] = ir.HelperDef(
                hname, tuple(dataclasses.replace(p, hidden=False, has_default=False,
                                                 default=None) for p in t.params),
                {k: v for k, v in t.locals.items() if k in used}, body, (BOOL,), t.loc)
            is_base = ir.Call(t.is_base.loc, BOOL, hname,
                              tuple(ir.Var(p.loc, p.ty, p.name) for p in t.params))
        inductive = (*needed(t.prologue, t.inductive), *t.inductive)
        base = (*needed(t.prologue, t.base), *t.base)
        tasks[name] = dataclasses.replace(
            t, is_base=is_base, base=base, inductive=inductive,
            prologue=(), max_spawns=ir.spawn_bound(inductive))
    return dataclasses.replace(program, tasks=tasks, helpers=helpers)


def substitute(e: ir.Expr, env: dict[str, ir.Expr]) -> ir.Expr:
    """``e`` with the locals of ``env`` replaced by their expressions."""
    if isinstance(e, ir.Var):
        return env.get(e.name, e)
    changes: dict[str, Any] = {}  # field name -> new value (an Expr or a tuple of them)
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, ir.Expr):
            changes[f.name] = substitute(v, env)
        elif isinstance(v, tuple) and v and all(isinstance(x, ir.Expr) for x in v):
            changes[f.name] = tuple(substitute(x, env) for x in v)
    return dataclasses.replace(e, **changes) if changes else e


def _reads(stmts: tuple[ir.Stmt, ...] | list[ir.Stmt]) -> set[str]:
    out: set[str] = set()
    for s in stmts:
        for v in vars(s).values():
            items = v if isinstance(v, tuple) else (v,)
            for x in items:
                if isinstance(x, ir.Expr):
                    out |= {y.name for y in ir.walk_exprs(x) if isinstance(y, ir.Var)}
                elif isinstance(x, ir.Stmt):
                    out |= _reads([x])
    return out


def needed(prologue: tuple[ir.Stmt, ...], section: tuple[ir.Stmt, ...]) -> list[ir.Stmt]:
    """The prologue statements ``section`` needs: assignments of locals nobody after
    them reads are left out (other statements are kept)."""
    live = _reads(section)
    kept: list[ir.Stmt] = []
    for s in reversed(prologue):
        if isinstance(s, ir.Assign) and s.target not in live:
            continue
        kept.append(s)
        live |= _reads([s])
    return kept[::-1]

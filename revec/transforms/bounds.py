"""Bounds for branch-and-bound: the checks both front ends share, and the pruning count.

A *bound* (``ir.ReducerDecl.bound``) is a global that tasks only raise (a max reducer)
or only lower (a min reducer) and read to prune: Cilk-5 knapsack's ``best_so_far``, a
Python ``Bound``.  The front ends lower its updates to ordinary reductions and its reads
to :class:`revec.ir.BoundRead`.  This pass, run on the program as written (before return
values become reductions), checks that every read only prunes:

* a read (or a local assigned from one, transitively) appears only in the condition of
  an ``if`` whose branches neither reduce nor assign a local read after the ``if``;
* one branch of that ``if`` is the *pruned* branch: it makes no spawn and ends the task
  (``return``), or it makes no spawn while the other one does (an ``if`` that only
  guards spawns);
* no read in the is-base test, in a helper, a loop's range or condition, a spawn's
  arguments, a reduced or returned value.

Anything else is a located error.  Then each pruned branch gets a reduction of 1 into
the hidden sum reducer :data:`PRUNED` (every back end counts prunes through the
reducer machinery; ``revec run`` prints it).  Sound pruning -- a pruned subtree can
never beat the final answer -- is the program's responsibility: then every variant
and back end gives the serial program's answer (docs/design.md, "Bounds").
"""

from __future__ import annotations

import dataclasses
from typing import NoReturn

import numpy as np

from revec import ir
from revec.errors import RevecError

PRUNED = "__pruned"  # the hidden sum reducer counting the prunes
_I64 = ir.Ty(np.dtype(np.int64))


def bounds_of(program: ir.Program) -> tuple[str, ...]:
    return tuple(n for n, r in program.reducers.items() if r.bound)


def check_bounds(program: ir.Program) -> ir.Program:
    """The program with its bounds checked and its prunes counted (unchanged without
    bounds)."""
    bounds = bounds_of(program)
    for h in program.helpers.values():
        for node in ir.walk_nodes(h.body):
            if isinstance(node, ir.BoundRead):
                raise RevecError(f"the bound '{node.reducer}' is read in the helper "
                                 f"'{h.name}': read it in the task, in a pruning condition",
                                 node.loc)
    if not bounds:
        return program
    checked = {name: _Task(t) for name, t in program.tasks.items()}
    tasks = {name: c.check() for name, c in checked.items()}
    if not any(c.prunes for c in checked.values()):
        return program  # bounds raised (lowered) but never read: nothing to count
    reducers = dict(program.reducers)
    reducers[PRUNED] = ir.ReducerDecl(PRUNED, np.dtype(np.int64), "sum",
                                      next(iter(program.tasks.values())).loc, hidden=True)
    return dataclasses.replace(program, tasks=tasks, reducers=reducers)


def _what(node: ir.Expr | ir.Stmt) -> str:
    match node:
        case ir.Spawn():
            return "passed to a spawn"
        case ir.Reduce(reducer=r):
            return f"folded into the reducer '{r}'"
        case ir.Return():
            return "returned"
        case ir.For():
            return "used in a loop's range"
        case ir.While():
            return "used in a loop's condition"
        case ir.Assign() | ir.Unpack():
            return "assigned"
    return "used"


class _Task:
    def __init__(self, t: ir.TaskDef) -> None:
        self.t = t
        self.tainted: dict[str, str] = {}  # local -> the bound its value comes from
        self.prunes = 0  # the pruning ifs

    # ------------------------------------------------------------------ reads
    def bound_in(self, e: ir.Expr) -> ir.Expr | None:
        """The first bound read in ``e`` (a BoundRead or a local holding one)."""
        for n in ir.walk_exprs(e):
            if isinstance(n, ir.BoundRead):
                return n
            if isinstance(n, ir.Var) and n.name in self.tainted:
                return n
        return None

    def bound_name(self, e: ir.Expr) -> str:
        if isinstance(e, ir.BoundRead):
            return e.reducer
        assert isinstance(e, ir.Var)
        return self.tainted[e.name]

    def fail(self, read: ir.Expr, what: str) -> NoReturn:
        name = self.bound_name(read)
        via = f" ('{read.name}' holds its value)" if isinstance(read, ir.Var) else ""
        raise RevecError(f"the bound '{name}'{via} is {what}: a bound may only be read to "
                         "prune, in the condition of an 'if' that ends the task without "
                         "spawning or reducing (if (... <= bound) return;) or that only "
                         "guards spawns", read.loc)

    # ------------------------------------------------------------------ the check
    def sections(self) -> list[tuple[ir.Stmt, ...]]:
        t = self.t
        return [t.prologue, t.base, t.inductive]

    def check(self) -> ir.TaskDef:
        t = self.t
        stmts = [s for sec in self.sections() for s in sec]
        # locals holding a bound's value, to a fixpoint
        changed = True
        while changed:
            changed = False
            for node in ir.walk_nodes(stmts):
                if isinstance(node, ir.Assign) and node.target not in self.tainted:
                    read = self.bound_in(node.value)
                    if read is not None:
                        self.tainted[node.target] = self.bound_name(read)
                        changed = True
        for node in ir.walk_nodes(stmts):
            if isinstance(node, ir.Recur):
                for arg in node.args:
                    read = self.bound_in(arg)
                    if read is not None:
                        self.fail(read, "passed to a spawn")
        read = self.bound_in(t.is_base)
        if read is not None:
            self.fail(read, "read in the is-base test (prune after it, in the inductive "
                      "case)")
        return dataclasses.replace(t, prologue=self.block(t.prologue),
                                   base=self.block(t.base),
                                   inductive=self.block(t.inductive))

    def block(self, stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        return tuple(self.stmt(s) for s in stmts)

    def stmt(self, s: ir.Stmt) -> ir.Stmt:
        match s:
            case ir.If(cond=c, then=a, orelse=b):
                read = self.bound_in(c)
                if read is None:
                    return dataclasses.replace(s, then=self.block(a), orelse=self.block(b))
                return self.prune_if(s, read)
            case ir.For(body=body) as f:
                for e in (f.start, f.stop, f.step):
                    self.no_read(e, s)
                return dataclasses.replace(s, body=self.block(body))
            case ir.While(cond=c, body=body):
                self.no_read(c, s)
                return dataclasses.replace(s, body=self.block(body))
            case ir.Assign(target=name) if name in self.tainted:
                return s  # a local holding the bound's value: checked where it is read
        for e in _exprs(s):
            self.no_read(e, s)
        return s

    def no_read(self, e: ir.Expr, s: ir.Stmt) -> None:
        read = self.bound_in(e)
        if read is not None:
            self.fail(read, _what(s))

    def prune_if(self, s: ir.If, read: ir.Expr) -> ir.Stmt:
        """An ``if`` whose condition reads a bound: a pruning ``if``."""
        for branch in (s.then, s.orelse):
            for node in ir.walk_nodes(branch):
                if isinstance(node, ir.Reduce):
                    self.fail(read, f"read in the condition of an 'if' whose branch reduces "
                              f"(line {node.loc.line}): the reduced values would depend on "
                              "the bound")
        assigned = {n.target for n in ir.walk_nodes([s.then, s.orelse])
                    if isinstance(n, ir.Assign)}
        assigned |= {x for n in ir.walk_nodes([s.then, s.orelse]) if isinstance(n, ir.Unpack)
                     for x in n.targets}
        inside = {id(n) for n in ir.walk_nodes([s.then, s.orelse])}
        for node in ir.walk_nodes([sec for sec in self.sections()] + [self.t.is_base]):
            if isinstance(node, ir.Var) and node.name in assigned and id(node) not in inside \
                    and node.name not in self.tainted:
                self.fail(read, f"read in the condition of an 'if' that assigns '{node.name}', "
                          f"which is read after it (line {node.loc.line})")
        spawns = [any(isinstance(n, ir.Spawn | ir.Recur) for n in ir.walk_nodes(b))
                  for b in (s.then, s.orelse)]
        ends = [bool(b) and isinstance(b[-1], ir.Return) for b in (s.then, s.orelse)]
        if not spawns[0] and ends[0]:
            pruned = 0
        elif not spawns[1] and ends[1]:
            pruned = 1
        elif spawns[0] != spawns[1]:
            pruned = 0 if spawns[1] else 1
        else:
            self.fail(read, "read in the condition of an 'if' that neither ends the task "
                      "nor guards spawns")
        self.prunes += 1
        count = ir.Reduce(s.loc, PRUNED, ir.Const(s.loc, _I64, 1))
        then, orelse = self.block(s.then), self.block(s.orelse)
        if pruned == 0:
            then = (count, *then)
        else:
            orelse = (count, *orelse)
        return dataclasses.replace(s, then=then, orelse=orelse)


def _exprs(s: ir.Stmt) -> list[ir.Expr]:
    """The expressions of a statement without nested statements."""
    out: list[ir.Expr] = []
    for v in vars(s).values():
        if isinstance(v, ir.Expr):
            out.append(v)
        elif isinstance(v, tuple):
            out += [x for x in v if isinstance(x, ir.Expr)]
    return out

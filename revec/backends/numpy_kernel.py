"""The kernel plan's steps interpreted with NumPy whole-block operations.

This is the plan's executable reference: :class:`Kernel` runs one block by walking
``plan.steps`` (:mod:`revec.transforms.kernel_plan`) in order, one ``case`` per step
class, and takes every decision from the step (which columns it reads, what each side of
the split keeps, the spawn sites and child blocks, the loop's state columns ...).  It
never looks at the task again to re-derive what the plan states; a plan step whose
meaning the interpreter does not know is an ``AssertionError`` naming it, and a step that
reads a variable the plan does not give it fails the same way (:class:`~.numpy_eval.Lanes`).

Data.  A :class:`Block` holds one 1-D array per varying column (``plan.columns`` without
the level-uniform ones) and one value per level-uniform field (``plan.uniform``: every
thread of a block is at the same tree level, so they agree); the invariant fields
(``plan.invariant``) are one value per tree, the root's.  The statements inside a step
are IR, run over the step's threads with lane masks (:mod:`.numpy_eval`).

Spawns.  A thread's k-th spawn goes to child block k (DESIGN.md section 3), and a child
block lists its children in the order of the threads that made them.  Child blocks are
collected by :class:`ChildBlocks`.

What the interpreter leaves out: the plan's vector widths (``lanes``), fast paths and the
narrow sum are how the compiled kernels go fast; they do not change what a step computes,
so here every step runs over all its threads at once.  The child blocks' slack, the
arena layout and run-time growth are the compiled back ends' memory management.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from revec import ir
from revec.backends.numpy_eval import (
    Evaluator,
    Lanes,
    Mask,
    Threads,
    Values,
    cast,
    exact,
    lanes_of,
    zero_locals,
)
from revec.backends.numpy_lanes import run_lane_body
from revec.transforms import kernel_plan as kp
from revec.transforms.lanes import SpawnSite


@dataclass
class Block:
    """The threads of one block: ``n`` of them, a column (array of ``n``) per varying
    field and one value per level-uniform field."""

    n: int
    columns: dict[str, Values]
    uniform: dict[str, np.generic]

    def column(self, name: str) -> Values:
        if name not in self.columns:
            raise AssertionError(f"{name!r} is not a column of the block (its columns: "
                                 f"{', '.join(self.columns) or '-'})")
        return self.columns[name]


@dataclass
class SideThreads:
    """One side of the split (the base or the inductive threads), as the plan's
    :class:`~revec.transforms.kernel_plan.Side` says: copies of the columns the side
    reads (``keep == "copy"``) or the threads' indices in the block (``"index"``),
    through which the side's steps read the block's columns."""

    side: kp.Side
    n: int
    copies: dict[str, Values]
    index: Values | None  # the threads' positions in the block (keep == "index")
    block: Block

    def column(self, name: str) -> Values:
        """Column ``name`` of the side's threads, in thread order: one of the columns the
        plan says the side reads."""
        if name not in {c.name for c in self.side.columns}:
            raise AssertionError(
                f"the {self.side.side} side does not read {name!r} (the plan's split "
                f"gives it {', '.join(c.name for c in self.side.columns) or 'nothing'})")
        if self.index is not None:
            return self.block.column(name)[self.index]
        return self.copies[name]


class ChildBlocks:
    """The children a block makes: child block k holds every thread's k-th spawn, in the
    order of the threads (``thread`` numbers them within the step that spawns)."""

    def __init__(self, frames: tuple[kp.Column, ...], uniform: tuple[kp.Column, ...]) -> None:
        self.frames = frames  # the child's columns (varying fields)
        self.uniform = uniform  # the child's level-uniform fields
        self.pieces: dict[int, list[tuple[Values, dict[str, Values]]]] = {}
        self.count = 0  # child blocks made (some may be empty)

    def reserve(self, blocks: int) -> None:
        """Child blocks ``0 .. blocks - 1`` exist even if they stay empty."""
        self.count = max(self.count, blocks)

    def add(self, k: Values, thread: Values, values: dict[str, Values]) -> None:
        """Children: the i-th goes to child block ``k[i]``, made by thread ``thread[i]``,
        with field values ``values[name][i]``."""
        if len(k) and (k == k[0]).all():  # (one child block: no selection)
            self.pieces.setdefault(int(k[0]), []).append((thread, values))
            self.count = max(self.count, int(k[0]) + 1)
            return
        for kk in np.unique(k):
            sel = k == kk
            self.pieces.setdefault(int(kk), []).append(
                (thread[sel], {name: v[sel] for name, v in values.items()}))
            self.count = max(self.count, int(kk) + 1)

    def blocks(self) -> list[Block]:
        """Child blocks ``0 .. count - 1``, each in thread order."""
        return [self.block(k) for k in range(self.count)]

    def block(self, k: int) -> Block:
        pieces = self.pieces.get(k, [])
        if not pieces:
            return Block(0, {c.name: np.zeros(0, c.ty.dtype) for c in self.frames}, {})
        threads = np.concatenate([t for t, _ in pieces])
        assert len(np.unique(threads)) == len(threads), \
            f"a thread made two spawns with index {k}"
        order = np.argsort(threads, kind="stable")
        values = {name: np.concatenate([v[name] for _, v in pieces])[order]
                  for name in pieces[0][1]}
        uniform = {}
        for c in self.uniform:
            vals = values[c.name]
            # the plan's claim: a level-uniform field is equal in every thread of a level
            assert (vals == vals[0]).all(), \
                f"level-uniform field {c.name!r} differs within child block {k}"
            uniform[c.name] = vals[0]
        return Block(len(threads), {c.name: values[c.name] for c in self.frames}, uniform)


@dataclass
class BlockRun:
    """One block's kernel call while its steps run."""

    block: Block
    scalars: dict[str, np.generic]  # the invariant fields, then the uniform ones loaded
    accs: dict[str, np.generic]  # the reducers' accumulators of this call
    children: ChildBlocks
    base: SideThreads | None = None
    inductive: SideThreads | None = None
    # the lock-step loop's active list: its state columns, one value per active thread
    active: dict[str, Values] = field(default_factory=dict)
    active_count: int = 0
    leaves: int = 0


@dataclass
class BlockResult:
    leaves: int  # base-case threads
    children: list[Block]  # child block k at index k, in spawn-index order


class Kernel:
    """Runs blocks of one task by interpreting its kernel plan."""

    def __init__(self, program: ir.Program, plan: kp.KernelPlan,
                 invariant: dict[str, np.generic]) -> None:
        # leaf inlining needs the compiled drivers' count of inlined leaves per child
        # block: the interpreter runs plans without it (NumpyTask builds them so)
        assert plan.leaf_inline is None, "the numpy back end interprets plans without " \
            "leaf inlining (kernel_plan.build_plan(..., off={'leaf_inline'}))"
        self.program = program
        self.plan = plan
        self.ev = Evaluator(program)
        self.invariant = invariant  # one value per tree (the root's)
        self.uniform_names = {c.name for c in plan.uniform}
        self.varying = tuple(c for c in plan.columns if c.name not in self.uniform_names)
        self.fields = plan.bp.fields  # the spawn's arguments, in order
        self.locals = plan.bp.task.locals
        self.reducers = program.reducers

    # ------------------------------------------------------------------ one block
    def run(self, block: Block, accs: dict[str, np.generic]) -> BlockResult:
        """Run the plan's steps over ``block``; the accumulators ``accs`` get what the
        store-reducers step stores."""
        run = BlockRun(block, dict(self.invariant), dict(accs),
                       ChildBlocks(self.varying, self.plan.uniform))
        # a bound reads its value at block start (one worker: the accumulator)
        self.ev.bounds = {name: accs[name] for name in self.plan.bounds}
        for step in self.plan.steps:
            self.step(step, run, accs)
        return BlockResult(run.leaves, run.children.blocks())

    def step(self, step: kp.Step, run: BlockRun, accs: dict[str, np.generic]) -> None:
        match step:
            case kp.UniformLoad():
                self.uniform_load(step, run)
            case kp.Split():
                self.split(step, run)
            case kp.BaseCase():
                self.base_case(step, run)
            case kp.StraightSpawns():
                self.straight_spawns(step, run)
            case kp.LaneSpawns():
                self.lane_spawns(step, run)
            case kp.ThreadSpawns():
                self.thread_spawns(step, run)
            case kp.LoopPrefix():
                self.loop_prefix(step, run)
            case kp.LoopIterate():
                self.loop_iterate(step, run)
            case kp.StoreReducers():
                self.store_reducers(step, run, accs)
            case _:
                raise AssertionError(f"unknown kernel plan step {step.id!r} "
                                     f"({type(step).__name__}): the numpy back end does not "
                                     "know what it means")

    # ------------------------------------------------------------------ the steps
    def uniform_load(self, step: kp.UniformLoad, run: BlockRun) -> None:
        """Level-uniform fields: one value for the whole block (its threads agree)."""
        for c in step.columns:
            run.scalars[c.name] = run.block.uniform[c.name]

    def split(self, step: kp.Split, run: BlockRun) -> None:
        """The is-base mask over every thread (reading only ``step.reads`` and the block's
        scalars), then the block split into its base and its inductive threads, each in
        block order, each side keeping what the plan says (copies or indices)."""
        block = run.block
        env = self.env({c.name: block.column(c.name) for c in step.reads}, run, block.n,
                       with_locals=False)
        with exact():
            mask = self.ev.expr(step.mask, lanes_of(env, np.ones(block.n, np.bool_)))
        run.base = self.side(step.base, block, np.flatnonzero(mask))
        run.inductive = self.side(step.inductive, block, np.flatnonzero(~mask))

    def side(self, side: kp.Side, block: Block, index: Values) -> SideThreads:
        if side.keep == "index":
            return SideThreads(side, len(index), {}, index, block)
        assert side.keep == "copy", f"split side keeps {side.keep!r}"
        return SideThreads(side, len(index), {c.name: block.column(c.name)[index]
                                              for c in side.columns}, None, block)

    def base_case(self, step: kp.BaseCase, run: BlockRun) -> None:
        """The base case over the base threads (reading ``step.reads``); they are the
        block's leaves.  A ``return`` ends its lane; a spawn here is an error."""
        base = run.base
        assert base is not None, "base step before the split"
        env = self.env({c.name: base.column(c.name) for c in step.reads}, run, base.n)
        Threads(self.ev, env, base.n, on_reduce=self.reducer(run)).run(step.stmts)
        run.leaves = base.n

    def straight_spawns(self, step: kp.StraightSpawns, run: BlockRun) -> None:
        """Every inductive thread makes every spawn: the s-th spawn statement writes
        child block s, the child of thread j at slot j.  Checked: every thread reaches
        every spawn, and there are ``step.spawns`` of them."""
        ind, env = self.inductive_env(step.reads, run)
        made = 0
        threads = np.arange(ind.n)

        def on_spawn(s: ir.Spawn, live: Mask, lanes: Lanes) -> None:
            nonlocal made
            assert live.all(), "straight-spawns: a thread skipped a spawn"
            run.children.add(np.full(ind.n, made), threads, self.child_frames(s, lanes))
            made += 1

        Threads(self.ev, env, ind.n, on_spawn, self.reducer(run)).run(step.stmts)
        assert made == step.spawns or ind.n == 0, (made, step.spawns)
        run.children.reserve(step.spawns)

    def lane_spawns(self, step: kp.LaneSpawns, run: BlockRun) -> None:
        """Conditional spawns: the plan's if-converted lane code (``step.body``) over
        every inductive thread at once (:mod:`.numpy_lanes`).  A lane's k-th spawn goes to
        child block k, whichever site makes it; child blocks list their children in
        thread order.  Checked: only the plan's child blocks receive children.

        A plan with lane passes (the numba target) also says where each child column's
        values come from (``step.sources``): the inductive thread's own copy of the
        field (``q_<column>``: a field every site passes on unchanged), a fill (a value
        the same in every lane, computed once per block) or the lane's argument at the
        site making its spawn (a value pass).  The children take their values from
        there, as that kernel does."""
        ind, env = self.inductive_env(step.reads, run)
        fills = {f.name: self.block_value(f.value, f.ty, run) for f in step.fills}

        def on_spawn(site: SpawnSite, made: Mask, k: Values, values: dict[str, Values]
                     ) -> None:
            threads = np.flatnonzero(made)
            if not step.sources:
                run.children.add(k, threads, values)
                return
            for kk in np.unique(k):
                sel = k == kk
                run.children.add(k[sel], threads[sel], {
                    name: self.sourced(step, int(kk), name, v[sel], threads[sel], ind, fills)
                    for name, v in values.items()})

        run_lane_body(self.ev, step.body, env, ind.n, on_spawn, self.reducer(run))
        assert set(run.children.pieces) <= set(step.child_blocks), \
            "lane-spawns: a child block the plan does not list"
        run.children.reserve(max(step.child_blocks, default=-1) + 1)

    def sourced(self, step: kp.LaneSpawns, k: int, column: str, lane_values: Values,
                threads: Values, ind: SideThreads, fills: dict[str, np.generic]) -> Values:
        """Child block ``k``'s values of ``column`` for the children of ``threads``, from
        where the plan's ``sources`` say (see :meth:`lane_spawns`)."""
        src = step.source(k, column)
        if src == f"q_{column}":
            return ind.column(column)[threads]
        if src in fills:
            return np.full(len(threads), fills[src])
        assert any(p.kind == "value" and p.name == src for p in step.passes), \
            f"lane-spawns: unknown source {src!r} of child block {k}'s {column!r}"
        return lane_values

    def thread_spawns(self, step: kp.ThreadSpawns, run: BlockRun) -> None:
        """The general inductive case: each thread's k-th spawn goes to child block k
        (as many child blocks as the threads need); ``return`` ends a lane."""
        ind, env = self.inductive_env(step.reads, run)
        k = np.zeros(ind.n, np.int64)

        def on_spawn(s: ir.Spawn, live: Mask, lanes: Lanes) -> None:
            run.children.add(k[live], np.flatnonzero(live), self.child_frames(s, lanes))
            k[live] += 1

        Threads(self.ev, env, ind.n, on_spawn, self.reducer(run)).run(step.stmts)

    def loop_prefix(self, step: kp.LoopPrefix, run: BlockRun) -> None:
        """Phase A of a loop making one spawn per iteration: the statements before the
        loop over every inductive thread (the plan's lane code ``step.body`` where it
        has one, else the statements), then the loop's entry (``for``: the loop
        variable at its start and ``_stop``, the range's end evaluated once; ``_idx``,
        the thread's index, for the fields the plan reads through it).  The threads
        whose loop runs at least once form the active list: their ``step.state``
        columns, in thread order."""
        ind, env = self.inductive_env(step.reads, run)
        loop = step.shape.loop
        if step.body is not None:
            run_lane_body(self.ev, step.body, env, ind.n, None, self.reducer(run))
        else:
            Threads(self.ev, env, ind.n, None, self.reducer(run)).run(step.shape.prefix)
        every = lanes_of(env, np.ones(ind.n, np.bool_))
        with exact():
            if isinstance(loop, ir.For):
                env[loop.var] = cast(self.ev.expr(loop.start, every), env[loop.var].dtype)
                env["_stop"] = cast(self.ev.expr(loop.stop, every), np.dtype(np.int64))
            # into the block when the inductive side keeps indices, else the thread's
            # place on the inductive side
            env["_idx"] = ind.index if ind.index is not None else np.arange(ind.n)
            enters = self.loop_goes_on(loop, env, ind.n)
        run.active = {c.name: env[c.name][enters] for c in step.state}
        run.active_count = int(enters.sum())

    def loop_iterate(self, step: kp.LoopIterate, run: BlockRun) -> None:
        """Phase B: one iteration of every active thread per pass.  Pass ``it`` runs the
        body (the plan's lane code ``step.body`` where it has one) over the active list:
        its ``step.state`` columns, and the fields in ``step.by_index`` read from the
        inductive threads through ``_idx``.  Each active thread makes exactly one
        spawn, into child block ``it``, in active-list order.  The state columns the
        plan stores back (``step.updated``) are written, and the threads whose loop
        goes on form the next active list."""
        assert run.inductive is not None, "loop-iterate before the split"
        active = run.active
        assert set(active) == {c.name for c in step.state}, "loop state differs between phases"
        it = 0
        na = run.active_count
        while na > 0:
            goes_on = self.iteration(step, run, active, na, it)
            active = {name: v[goes_on] for name, v in active.items()}
            na = int(goes_on.sum())
            it += 1
        run.children.reserve(it)

    def iteration(self, step: kp.LoopIterate, run: BlockRun, active: dict[str, Values],
                  na: int, it: int) -> Mask:
        """Pass ``it`` of phase B over the ``na`` active threads: their children go to
        child block ``it``; the state the plan stores back is written into ``active``.
        Returns which active threads' loops go on."""
        ind = run.inductive
        assert ind is not None
        loop = step.shape.loop
        columns = dict(active)
        if step.by_index:
            idx = active["_idx"]
            columns.update({name: self.by_index(ind, name, idx) for name in step.by_index})
        # no locals: an iteration assigns those it does not carry before reading them
        env = self.env(columns, run, na, with_locals=False)
        spawned = np.zeros(na, np.int64)

        def child(made: Mask, values: dict[str, Values]) -> None:
            run.children.add(np.full(int(made.sum()), it), np.flatnonzero(made), values)
            spawned[made] += 1

        if step.body is not None:
            run_lane_body(self.ev, step.body, env, na,
                          lambda site, made, k, values: child(made, values),
                          self.reducer(run))
        else:
            Threads(self.ev, env, na, lambda s, made, lanes: child(
                made, self.child_frames(s, lanes)), self.reducer(run)).run(loop.body)
        assert (spawned == 1).all(), "loop-iterate: an iteration without exactly one spawn"
        with exact():
            if isinstance(loop, ir.For):
                every = lanes_of(env, np.ones(na, np.bool_))
                env[loop.var] = env[loop.var] + cast(self.ev.expr(loop.step, every),
                                                     env[loop.var].dtype)
            for name in step.updated:
                active[name] = env[name]
            return self.loop_goes_on(loop, env, na)

    def store_reducers(self, step: kp.StoreReducers, run: BlockRun,
                       accs: dict[str, np.generic]) -> None:
        """The accumulators of the reducers the plan lists are stored back."""
        for name in step.reducers:
            accs[name] = run.accs[name]

    # ------------------------------------------------------------------ helpers
    def env(self, columns: dict[str, Values], run: BlockRun, n: int,
            with_locals: bool = True) -> dict[str, Values]:
        """A step's variables over ``n`` threads: the given columns, the block's scalars
        (invariant and loaded level-uniform fields) in every lane, the locals at zero."""
        env = dict(columns)
        for name, value in run.scalars.items():
            env.setdefault(name, np.full(n, value))
        if with_locals:
            env.update(zero_locals(self.locals, n, skip=env))
        return env

    def block_value(self, e: ir.Expr, ty: ir.Ty, run: BlockRun) -> np.generic:
        """An expression of the block's scalars (invariant and level-uniform fields)."""
        env = self.env({}, run, 1, with_locals=False)
        with exact():
            value: np.generic = cast(self.ev.expr(e, lanes_of(env, np.ones(1, np.bool_))),
                                     ty.dtype)[0]
        return value

    def inductive_env(self, reads: tuple[kp.Column, ...], run: BlockRun
                      ) -> tuple[SideThreads, dict[str, Values]]:
        ind = run.inductive
        assert ind is not None, "inductive step before the split"
        return ind, self.env({c.name: ind.column(c.name) for c in reads}, run, ind.n)

    def by_index(self, ind: SideThreads, name: str, idx: Values) -> Values:
        """Field ``name`` of the threads ``idx`` (block positions when the inductive side
        keeps indices, else places on the inductive side)."""
        if ind.index is not None:
            return ind.block.column(name)[idx]
        return ind.column(name)[idx]

    def loop_goes_on(self, loop: ir.While | ir.For, env: dict[str, Values], n: int) -> Mask:
        """Whether each thread's loop runs (again), from its loop state."""
        every = lanes_of(env, np.ones(n, np.bool_))
        if isinstance(loop, ir.While):
            return self.ev.expr(loop.cond, every)
        assert isinstance(loop.step, ir.Const), "a lock-step for loop with a varying step"
        var, stop = env[loop.var], env["_stop"]
        return var < stop if loop.step.value > 0 else var > stop

    def child_frames(self, s: ir.Spawn, lanes: Lanes) -> dict[str, Values]:
        """A spawn's children on ``lanes``: the values of the child's columns and
        level-uniform fields (an invariant field is the root's: not evaluated)."""
        out = {}
        for p, arg in zip(self.fields, s.args):
            if p.name not in self.invariant:
                out[p.name] = self.ev.expr(arg, lanes)
        return out

    def reducer(self, run: BlockRun) -> Any:
        """The reduce hook of a step: fold the lanes' values into the call's accumulator."""
        def on_reduce(name: str, values: Values) -> None:
            run.accs[name] = fold(self.reducers[name], run.accs[name], values)
        return on_reduce


def fold(decl: ir.ReducerDecl, acc: np.generic, values: Values) -> np.generic:
    """``acc`` with ``values`` folded in (in lane order).  Integer sums wrap; a float sum
    adds one value at a time in lane order; a bool sum is an ``or``; min and max ignore
    NaN like the reference's ``v if v < acc else acc``."""
    assert values.dtype == decl.dtype, (decl.name, values.dtype, decl.dtype)
    if len(values) == 0:
        return acc
    if decl.op == "sum":
        if decl.dtype.kind == "b":
            return np.bool_(bool(acc) or bool(values.any()))
        with exact():
            running = np.cumsum(np.concatenate((np.array([acc], decl.dtype), values)),
                                dtype=decl.dtype)
        return running[-1]  # type: ignore[no-any-return]
    if decl.dtype.kind == "f":
        best = np.fmin.reduce(values) if decl.op == "min" else np.fmax.reduce(values)
    else:
        best = values.min() if decl.op == "min" else values.max()
    if decl.op == "min":
        return best if best < acc else acc  # type: ignore[no-any-return]
    return best if best > acc else acc  # type: ignore[no-any-return]

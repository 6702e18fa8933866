"""Fig. 7's rewrite: a task over one frame -> a block program over SoA blocks.

Before (one thread, paper Fig. 2)::

    def fib(n):
        if n < 2: reduce(count, n)
        else:
            spawn(fib, n - 1)
            spawn(fib, n - 2)

After (one block of threads; ``k`` is the running spawn index of the thread)::

    def fib_block(block, next_blocks):
        mask = [is_base(t) for t in block]            # vector is-base test
        base, inductive = split(block, mask)          # stream compaction
        for t in base: reduce(count, t.n)             # base case over base threads
        for t in inductive:                           # inductive case
            k = 0
            next_blocks[k].push(t.n - 1); k += 1      # spawn -> push into child block k
            next_blocks[k].push(t.n - 2); k += 1

The bfs variant executes ``next_blocks`` concatenated in spawn-index order as one
block; the blocked variant executes them one by one, depth first; re-expansion
chooses between the two per block by the thresholds in :mod:`.schedule`.  The
back ends generate exactly this structure; this module records the rewrite as
data they share.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from revec import ir


@dataclass(frozen=True)
class BlockProgram:
    """A task rewritten for block execution."""

    task: ir.TaskDef
    fields: tuple[ir.Param, ...]  # one SoA column per task parameter
    is_base: ir.Expr  # evaluated over every thread of a block: the split mask
    base: tuple[ir.Stmt, ...]  # run for the base threads
    inductive: tuple[ir.Stmt, ...]  # run for the inductive threads; Spawn = push child
    max_spawns: int | None  # static bound of child blocks, None = grown at run time
    reducers: tuple[ir.ReducerDecl, ...]
    # parameters every spawn passes on unchanged: equal to the root's value in every
    # thread of the tree, so a back end may hold them once instead of one per thread
    invariant: frozenset[str] = frozenset()
    # parameters every spawn passes as ``p + c`` with one constant ``c``: equal in every
    # thread of a level, so equal in every thread of a block (a block never mixes
    # levels); a kernel may read them once per block (see uniform_params)
    uniform: frozenset[str] = frozenset()

    @property
    def columns(self) -> tuple[ir.Param, ...]:
        """The fields that vary between threads (the SoA columns a back end stores)."""
        return tuple(p for p in self.fields if p.name not in self.invariant)


def to_block_program(program: ir.Program, task: str) -> BlockProgram:
    t = program.tasks[task]
    return BlockProgram(t, t.params, t.is_base, t.base, t.inductive, t.max_spawns,
                        tuple(program.reducers.values()), invariant_params(t),
                        uniform_params(t))


def invariant_params(t: ir.TaskDef) -> frozenset[str]:
    """Parameters that no statement assigns and that every spawn passes as themselves
    (``spawn(f, n, row + 1)``: ``n``).  By induction from the root, every thread of the
    tree holds the root's value in them."""
    assigned = assigned_names(t.base) | assigned_names(t.inductive)
    spawns = list(spawn_stmts(t.inductive))
    out = set()
    for i, p in enumerate(t.params):
        if p.name in assigned:
            continue
        if all(_is_var(s.args[i], p.name) for s in spawns):
            out.add(p.name)
    return frozenset(out)


def _is_var(e: ir.Expr, name: str) -> bool:
    return isinstance(e, ir.Var) and e.name == name


def uniform_params(t: ir.TaskDef) -> frozenset[str]:
    """Parameters that no statement assigns and that every spawn passes as ``p + c`` or
    ``p - c`` with the same constant (graphcol's ``v + 1``, binomial's ``n - 1``).  By
    induction from the root, a thread at depth d holds root + d * c: every thread of a
    level, hence of a block, holds the same value."""
    assigned = assigned_names(t.base) | assigned_names(t.inductive)
    spawns = list(spawn_stmts(t.inductive))
    out = set()
    for i, p in enumerate(t.params):
        if p.name in assigned or not spawns:
            continue
        steps: set[tuple[str, int | float | bool] | None] = set()
        for s in spawns:
            match s.args[i]:
                case ir.BinOp(op="+" | "-" as op, left=ir.Var(name=n), right=ir.Const(value=c)) \
                        if n == p.name:
                    steps.add((op, c))
                case _:
                    steps.add(None)
        if len(steps) == 1 and None not in steps:
            out.add(p.name)
    return frozenset(out)


def spawn_stmts(stmts: tuple[ir.Stmt, ...]) -> Iterator[ir.Spawn]:
    """Every ``spawn`` statement, however deeply nested."""
    for s in stmts:
        match s:
            case ir.Spawn():
                yield s
            case ir.If(then=a, orelse=b):
                yield from spawn_stmts(a)
                yield from spawn_stmts(b)
            case ir.For(body=body) | ir.While(body=body):
                yield from spawn_stmts(body)


def assigned_names(stmts: tuple[ir.Stmt, ...]) -> set[str]:
    """Names any statement (however nested) assigns: targets, unpack targets, loop vars."""
    out: set[str] = set()
    for s in stmts:
        match s:
            case ir.Assign(target=name):
                out.add(name)
            case ir.Unpack(targets=names):
                out.update(names)
            case ir.If(then=a, orelse=b):
                out |= assigned_names(a) | assigned_names(b)
            case ir.For(var=v, body=body):
                out.add(v)
                out |= assigned_names(body)
            case ir.While(body=body):
                out |= assigned_names(body)
    return out


# ---------------------------------------------------------------- IR analyses the back ends share
def contains_spawn(stmts: tuple[ir.Stmt, ...]) -> bool:
    for s in stmts:
        match s:
            case ir.Spawn():
                return True
            case ir.If(then=a, orelse=b):
                if contains_spawn(a) or contains_spawn(b):
                    return True
            case ir.For(body=body) | ir.While(body=body):
                if contains_spawn(body):
                    return True
    return False


def contains_return(stmts: tuple[ir.Stmt, ...]) -> bool:
    for s in stmts:
        match s:
            case ir.Return():
                return True
            case ir.If(then=a, orelse=b):
                if contains_return(a) or contains_return(b):
                    return True
            case ir.For(body=body) | ir.While(body=body):
                if contains_return(body):
                    return True
    return False


def straight_spawns(stmts: tuple[ir.Stmt, ...]) -> bool:
    """True when every inductive thread executes every spawn: spawns only at the top
    level and no thread ``return``.  Then spawn k of inductive thread j goes to the fixed
    slot ``j`` of child block ``k`` and no per-index counters are needed."""
    for st in stmts:
        match st:
            case ir.Spawn():
                pass
            case ir.Return():
                return False
            case ir.If(then=a, orelse=b):
                if contains_spawn(a) or contains_spawn(b) or contains_return(a) or contains_return(b):
                    return False
            case ir.For(body=body) | ir.While(body=body):
                if contains_spawn(body) or contains_return(body):
                    return False
    return True


def written_arrays(stmts: tuple[ir.Stmt, ...] | ir.Stmt) -> tuple[str, ...]:
    """The output arrays the statements store into (:class:`revec.ir.Store`), sorted: a
    step's writes, its effects besides spawns and reductions."""
    return tuple(sorted({n.array for n in ir.walk_nodes(stmts) if isinstance(n, ir.Store)}))


def strip_final_return(stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
    while stmts and isinstance(stmts[-1], ir.Return):
        stmts = stmts[:-1]
    return stmts


def used_vars(node: ir.Expr | ir.Stmt | tuple[ir.Stmt, ...]) -> set[str]:
    """Names of the variables an expression or statements read (or write)."""
    out: set[str] = set()
    for n in ir.walk_nodes(node):
        if isinstance(n, ir.Var):
            out.add(n.name)
        elif isinstance(n, ir.Assign):
            out.add(n.target)
    return out

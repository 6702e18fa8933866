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


def to_block_program(program: ir.Program, task: str) -> BlockProgram:
    t = program.tasks[task]
    return BlockProgram(t, t.params, t.is_base, t.base, t.inductive, t.max_spawns,
                        tuple(program.reducers.values()))

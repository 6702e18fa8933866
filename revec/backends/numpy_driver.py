"""The schedule of DESIGN.md section 3 over :class:`~.numpy_kernel.Block` objects.

A stack of records replaces the host stack (no Python recursion per tree level, so trees
100,000 levels deep run):

* a :class:`BfsRecord` holds one block run in bfs mode; its children, all child blocks
  concatenated in spawn-index order, form the next block, which replaces it while
  :func:`~revec.transforms.schedule.next_block_stays_bfs`;
* a next block of B or more threads becomes a :class:`SwitchRecord`: it runs once, as one
  block, in blocked mode;
* a :class:`BlockedRecord` holds the child blocks of a block run in blocked mode, one per
  spawn index, and runs them one at a time, depth first in spawn-index order: an empty
  one is skipped, one that :func:`~revec.transforms.schedule.child_block_reexpands` is
  pushed as a bfs record (a re-expansion), any other runs in blocked mode.

Every decision is one of :mod:`revec.transforms.schedule`'s functions.

Statistics (:class:`Tally`) are counted as the numba driver counts them
(``revec/runtime/numba_scheduler.py``: ``account``, ``finish``, ``pick``), so that
tasks, leaves, levels, blocks, utilization, re-expansions (per level too), their growth
factors and ``peak_live`` equal the compiled back ends' for the same run:

* a block counts when it runs (``blocks``, its tasks and leaves at its depth, its
  :func:`~revec.transforms.schedule.utilization_share`);
* ``peak_live``: the frames held right after a block ran, its children included and the
  block itself not yet released (``live + children``), the most over the run; the root's
  frame is live from the start;
* a re-expansion counts at the child block's depth when it is pushed as a bfs record; when
  that record's next block has B or more threads (back to blocked mode), the growth
  factor next block / re-expanded block counts at the next block's depth.

``seconds`` is this interpreter's own time (orders of magnitude above the compiled
back ends').  The memory budget is checked against the frames held (live frames times
the bytes of a frame's columns), not against allocated arrays as the compiled drivers
do, so a run near its budget may stop at a different point than theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from revec.backends.numpy_kernel import Block, Kernel
from revec.runtime.memory import BudgetUse, MemoryBudgetError
from revec.runtime.stats import RunStats
from revec.transforms.schedule import (
    Schedule,
    child_block_reexpands,
    next_block_stays_bfs,
    utilization_share,
)


@dataclass
class BfsRecord:
    """A block run in bfs mode.  ``reexpanded`` is the size of the child block this
    record re-expanded (0 for the root's record)."""

    block: Block
    depth: int
    reexpanded: int = 0


@dataclass
class SwitchRecord:
    """A next block of B or more threads made in bfs mode: runs once, in blocked mode."""

    block: Block
    depth: int


@dataclass
class BlockedRecord:
    """The child blocks (one per spawn index) of a block run in blocked mode, at
    ``depth``; ``next`` is the next one to run."""

    blocks: list[Block]
    depth: int
    next: int = 0


Record = BfsRecord | SwitchRecord | BlockedRecord


@dataclass
class Tally:
    """The run's statistics as the compiled drivers count them (see the module
    docstring)."""

    simd_width: int
    tasks: list[int] = field(default_factory=list)
    leaves: list[int] = field(default_factory=list)
    reexpansions: list[int] = field(default_factory=list)
    growth: list[float] = field(default_factory=list)  # summed growth factors
    returns: list[int] = field(default_factory=list)  # re-expanded blocks back to blocked
    blocks: int = 0
    vectorized: int = 0
    live: int = 1  # the root's frame
    peak_live: int = 1

    def level(self, depth: int) -> None:
        while len(self.tasks) <= depth:
            for per_level in (self.tasks, self.leaves, self.reexpansions, self.returns):
                per_level.append(0)
            self.growth.append(0.0)

    def ran(self, depth: int, threads: int, leaves: int, children: int) -> None:
        """A block of ``threads`` at ``depth`` ran: ``leaves`` base cases, ``children``
        new frames."""
        self.level(depth)
        self.tasks[depth] += threads
        self.leaves[depth] += leaves
        self.blocks += 1
        self.vectorized += utilization_share(threads, self.simd_width)
        self.peak_live = max(self.peak_live, self.live + children)
        self.live += children - threads

    def reexpansion(self, depth: int) -> None:
        self.level(depth)
        self.reexpansions[depth] += 1

    def back_to_blocked(self, depth: int, factor: float) -> None:
        self.level(depth)
        self.growth[depth] += factor
        self.returns[depth] += 1

    def stats(self, seconds: float) -> RunStats:
        levels = len(self.tasks)
        while levels > 0 and self.tasks[levels - 1] == 0:
            levels -= 1  # (a level only ever pushed, never run, does not count)
        total = sum(self.tasks)
        return RunStats(
            tasks=total, leaves=sum(self.leaves), levels=levels,
            utilization=self.vectorized / total if total else 0.0,
            reexpansions=sum(self.reexpansions), peak_live=self.peak_live,
            seconds=seconds, blocks=self.blocks, simd_width=self.simd_width,
            tasks_per_level=self.tasks[:levels], leaves_per_level=self.leaves[:levels],
            reexpansions_per_level=self.reexpansions[:levels],
            reexp_growth_per_level=[g / r if r else 0.0 for g, r in
                                    zip(self.growth[:levels], self.returns[:levels])])


def concatenate(blocks: list[Block]) -> Block:
    """The child blocks one after the other (bfs: the next block, in spawn-index order)."""
    full = [b for b in blocks if b.n > 0]
    if not full:
        return Block(0, {}, {})
    uniform = full[0].uniform
    for b in full[1:]:
        for name, value in uniform.items():
            # the plan's claim: a level-uniform field is equal in every thread of a level
            assert b.uniform[name] == value, \
                f"level-uniform field {name!r} differs between the child blocks of a level"
    return Block(sum(b.n for b in full),
                 {name: np.concatenate([b.columns[name] for b in full])
                  for name in full[0].columns}, dict(uniform))


def run_schedule(kernel: Kernel, root: Block, schedule: Schedule,
                 accs: dict[str, np.generic], frame_bytes: int = 0, max_memory: int = 0
                 ) -> Tally:
    """Run the whole schedule from the root block (depth 0, bfs mode)."""
    B, R = schedule.block_size, schedule.reexp_threshold
    tally = Tally(schedule.simd_width)
    stack: list[Record] = [BfsRecord(root, 0)]

    def execute(block: Block, depth: int) -> list[Block]:
        result = kernel.run(block, accs)
        made = sum(c.n for c in result.children)
        tally.ran(depth, block.n, result.leaves, made)
        if max_memory and tally.live * frame_bytes > max_memory:
            raise MemoryBudgetError(max_memory, BudgetUse(
                (tally.live * frame_bytes, 0, 0, 0), "frames", depth, schedule.strategy))
        return result.children

    while stack:
        rec = stack[-1]
        match rec:
            case BfsRecord(block=block, depth=depth):
                nxt = concatenate(execute(block, depth))
                if nxt.n == 0:
                    stack.pop()
                elif next_block_stays_bfs(nxt.n, B):
                    rec.block, rec.depth = nxt, depth + 1  # replaces this block
                else:
                    if rec.reexpanded:
                        tally.back_to_blocked(depth + 1, nxt.n / rec.reexpanded)
                    stack[-1] = SwitchRecord(nxt, depth + 1)
            case SwitchRecord(block=block, depth=depth):
                children = execute(block, depth)
                stack.pop()
                if any(c.n for c in children):
                    stack.append(BlockedRecord(children, depth + 1))
            case BlockedRecord(blocks=blocks, depth=depth):
                if rec.next == len(blocks):
                    stack.pop()
                    continue
                child = blocks[rec.next]
                rec.next += 1
                if child.n == 0:
                    continue  # empty blocks are skipped
                if child_block_reexpands(child.n, R):
                    tally.reexpansion(depth)
                    stack.append(BfsRecord(child, depth, reexpanded=child.n))
                    continue
                children = execute(child, depth)
                if any(c.n for c in children):
                    stack.append(BlockedRecord(children, depth + 1))
    return tally

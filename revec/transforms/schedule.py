"""The schedule policy of DESIGN.md section 3 and the utilization of section 4, defined once.

One scheduler serves the three named strategies; they differ only in the two
thresholds it reads (:meth:`Schedule.make`):

* ``bfs``: never leave bfs mode (B is infinite, R unused);
* ``blocked`` (paper Fig. 4): bfs until the first block of B or more threads,
  then blocked forever (R = 0: never re-expand);
* ``reexp`` (paper Fig. 6): blocked, re-expanding a child block of fewer than R
  threads in bfs mode until it holds B or more again.

The two decisions are :func:`next_block_stays_bfs` and :func:`child_block_reexpands`,
the statistic is :func:`utilization_share`, and :func:`trace` runs the whole schedule
over a given task tree in plain Python: the executable statement of section 3 (which
block runs in which mode, in which order, which child blocks re-expand) together with
the statistics of section 4 that follow from it.

How the three schedulers relate to this module:

* the utilization simulator (``revec/treegen/schedules.py``) compiles these same
  functions into its numba kernel, and ``tests/test_simulate.py`` compares the kernel
  tree by tree with :func:`trace` (through ``revec.treegen.reference``);
* the numba driver (``revec/runtime/numba_scheduler.py``: ``pick``, ``finish``,
  ``account``) and the C driver (``revec/backends/csrc/driver.c``: ``rv_schedule``)
  restate the comparisons in their compiled loops, where no Python runs;
  ``tests/test_schedule_policy.py`` runs programs through both drivers and compares
  every statistic they report with :func:`trace` over the program's task tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from revec.errors import RevecError

STRATEGIES = ("bfs", "blocked", "reexp")
UNBOUNDED = 1 << 62
DEFAULT_BLOCK_SIZE = 4096
DEFAULT_SIMD_WIDTH = 16


@dataclass(frozen=True)
class Schedule:
    """A named strategy with the thresholds that make the one scheduler follow it."""

    strategy: str
    block_size: int  # B: bfs-mode blocks of B or more threads switch to blocked mode
    reexp_threshold: int  # R: blocked-mode child blocks of fewer than R threads re-expand
    simd_width: int  # P: lanes, for the utilization statistic

    @classmethod
    def make(cls, strategy: str, block_size: int | None = None,
             reexp_threshold: int | None = None,
             simd_width: int | None = None) -> Schedule:
        """The thresholds of a named strategy (user errors raise :class:`RevecError`);
        the defaults are the runtime's (Sec. 4.3: R = B)."""
        if strategy not in STRATEGIES:
            raise RevecError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
        b = DEFAULT_BLOCK_SIZE if block_size is None else block_size
        p = DEFAULT_SIMD_WIDTH if simd_width is None else simd_width
        if b < 1:
            raise RevecError(f"block size must be at least 1, got {b}")
        if p < 1:
            raise RevecError(f"SIMD width must be at least 1, got {p}")
        if reexp_threshold is not None and reexp_threshold < 0:
            raise RevecError(f"re-expansion threshold must be >= 0, got {reexp_threshold}")
        if strategy == "bfs":
            return cls(strategy, UNBOUNDED, 0, p)
        if strategy == "blocked":
            return cls(strategy, b, 0, p)
        r = b if reexp_threshold is None else reexp_threshold  # Sec. 4.3: R = B
        return cls(strategy, b, r, p)


# The decisions and the statistic.  Plain integer expressions, so that numba compiles
# these very functions into the simulator's kernel (revec/treegen/schedules.py).


def next_block_stays_bfs(next_size: int, block_size: int) -> bool:
    """In bfs mode: the next block runs in bfs mode while it holds fewer than B threads
    (and in blocked mode, as one block, once it holds B or more)."""
    return next_size < block_size


def child_block_reexpands(child_size: int, reexp_threshold: int) -> bool:
    """In blocked mode: a child block of fewer than R threads is executed in bfs mode."""
    return child_size < reexp_threshold


def utilization_share(block_threads: int, simd_width: int) -> int:
    """Threads of one block that run in full SIMD vectors: floor(b / P) * P."""
    return block_threads // simd_width * simd_width


# The reference trace.

BFS, BLOCKED, CHILD = "bfs", "blocked", "child"


@dataclass(frozen=True)
class Block:
    """One executed block: its tree level, its threads and the mode it ran in."""

    depth: int
    threads: int
    mode: str  # BFS or BLOCKED


@dataclass
class Trace:
    """What the schedule does over one tree (one worker), and its statistics under the
    names of :class:`revec.runtime.stats.RunStats`."""

    blocks: list[Block] = field(default_factory=list)  # in execution order
    reexpanded: list[Block] = field(default_factory=list)  # child blocks run in bfs mode
    tasks_per_level: list[int] = field(default_factory=list)
    leaves_per_level: list[int] = field(default_factory=list)
    reexpansions_per_level: list[int] = field(default_factory=list)
    # per level: summed growth factor (threads / threads at re-expansion) of re-expanded
    # blocks returning to blocked mode there, and the number of such returns
    growth_sum_per_level: list[float] = field(default_factory=list)
    returns_per_level: list[int] = field(default_factory=list)
    vectorized: int = 0  # sum of utilization_share over the blocks
    peak_live: int = 0  # most frames produced and not yet executed (incl. the block run)

    def statistics(self) -> dict[str, Any]:
        """The statistics the drivers report (``RunStats`` field -> value)."""
        tasks = sum(self.tasks_per_level)
        return {
            "tasks": tasks, "leaves": sum(self.leaves_per_level),
            "levels": len(self.tasks_per_level), "blocks": len(self.blocks),
            "utilization": self.vectorized / tasks if tasks else 0.0,
            "reexpansions": len(self.reexpanded), "peak_live": self.peak_live,
            "tasks_per_level": self.tasks_per_level,
            "leaves_per_level": self.leaves_per_level,
            "reexpansions_per_level": self.reexpansions_per_level,
            "reexp_growth_per_level": [g / r if r else 0.0 for g, r in
                                       zip(self.growth_sum_per_level,
                                           self.returns_per_level)],
        }


def trace(schedule: Schedule, children: Sequence[Sequence[int]],
          leaves: Sequence[bool] | None = None) -> Trace:
    """Run ``schedule`` over a task tree: node 0 is the root, ``children[x]`` are the
    tasks x spawns, in spawn order (its k-th spawn goes to child block k whatever site
    made it); ``leaves[x]`` says x ran its base case (default: x spawns nothing).

    DESIGN.md section 3: execution starts with one block holding the root, in bfs mode.
    A block's children are grouped by spawn index.  In bfs mode they form one next
    block (group 0, then group 1, ...), run in bfs mode while
    :func:`next_block_stays_bfs`, else in blocked mode as one block.  In blocked mode the
    groups are child blocks run depth first in spawn-index order, each in bfs mode if
    :func:`child_block_reexpands` (a re-expansion), else in blocked mode.  Empty blocks
    are skipped.  A list is the stack of pending blocks (no recursion per level)."""
    b_max, r_min, p = schedule.block_size, schedule.reexp_threshold, schedule.simd_width
    out = Trace(peak_live=1)
    live = 1  # frames produced and not yet executed: the root's
    # pending blocks: (threads, depth, mode, size when re-expanded or 0); mode CHILD is
    # a blocked-mode child block, whose mode is decided when it is reached
    stack: list[tuple[list[int], int, str, int]] = [([0], 0, BFS, 0)]
    while stack:
        block, depth, mode, grown_from = stack.pop()
        _add_level(out, depth)
        if mode == CHILD:
            if child_block_reexpands(len(block), r_min):
                mode, grown_from = BFS, len(block)
                out.reexpanded.append(Block(depth, len(block), BFS))
                out.reexpansions_per_level[depth] += 1
            else:
                mode = BLOCKED
        out.blocks.append(Block(depth, len(block), mode))
        out.tasks_per_level[depth] += len(block)
        out.leaves_per_level[depth] += sum(
            (not children[x]) if leaves is None else bool(leaves[x]) for x in block)
        out.vectorized += utilization_share(len(block), p)
        groups: list[list[int]] = []  # the children by spawn index
        for x in block:
            for k, c in enumerate(children[x]):
                if k == len(groups):
                    groups.append([])
                groups[k].append(c)
        made = sum(len(g) for g in groups)
        out.peak_live = max(out.peak_live, live + made)  # the block is still held
        live += made - len(block)
        if mode == BLOCKED:
            # child block 0 on top of the stack: it (and its subtree) runs first
            stack.extend((g, depth + 1, CHILD, 0) for g in reversed(groups) if g)
            continue
        nxt = [c for g in groups for c in g]
        if not nxt:
            continue
        if next_block_stays_bfs(len(nxt), b_max):
            stack.append((nxt, depth + 1, BFS, grown_from))
            continue
        if grown_from:  # a re-expanded block returns to blocked mode
            _add_level(out, depth + 1)
            out.growth_sum_per_level[depth + 1] += len(nxt) / grown_from
            out.returns_per_level[depth + 1] += 1
        stack.append((nxt, depth + 1, BLOCKED, 0))
    return out


def _add_level(out: Trace, depth: int) -> None:
    """Extend the per-level lists of ``out`` to hold ``depth``."""
    while len(out.tasks_per_level) <= depth:
        for per_level in (out.tasks_per_level, out.leaves_per_level,
                          out.reexpansions_per_level, out.returns_per_level):
            per_level.append(0)
        out.growth_sum_per_level.append(0.0)

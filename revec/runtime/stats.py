"""Run statistics of DESIGN.md section 4."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class RunStats:
    tasks: int = 0
    leaves: int = 0
    levels: int = 0
    utilization: float = 0.0  # sum over blocks of floor(b / P) * P, over all tasks
    reexpansions: int = 0
    peak_live: int = 0  # peak number of thread frames held at once
    seconds: float = 0.0
    blocks: int = 0
    simd_width: int = 16
    tasks_per_level: list[int] = field(default_factory=list)
    leaves_per_level: list[int] = field(default_factory=list)
    reexpansions_per_level: list[int] = field(default_factory=list)
    # mean factor by which a re-expanded block grew before returning to blocked mode,
    # per level where it returned (0 where none returned)
    reexp_growth_per_level: list[float] = field(default_factory=list)
    # workers that ran the schedule; with more than one: their own statistics (tasks,
    # steals, steal requests, idle seconds, ...) and peak_live is the sum of their peaks
    workers: int = 1
    per_worker: list[dict[str, Any]] = field(default_factory=list)
    # a program with bounds (branch-and-bound): how many times a pruning condition held
    # (a task's prune; revec.transforms.bounds), in total; None without bounds (and in
    # the plain-Python run, which does not count)
    pruned: int | None = None
    # bytes of one thread frame in the blocks (its fields that are not invariant: a
    # task-private board counts every element) and so the peak in bytes
    frame_bytes: int = 0
    # leaf inlining (revec/transforms/kernel_plan.py): the leaves that ran their base
    # case in their parent's lane and were never written as frames.  They are counted in
    # tasks, leaves and their level's lists, and as threads of the block they belong to
    # (utilization, B and R), exactly as if they had run there
    inlined: int = 0

    @property
    def peak_live_bytes(self) -> int:
        return self.peak_live * self.frame_bytes

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["peak_live_bytes"] = self.peak_live_bytes
        return out

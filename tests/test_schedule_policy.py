"""One schedule policy (DESIGN.md section 3): the numba driver and the C driver restate
its comparisons in compiled loops, so they are checked against its Python statement,
:func:`revec.transforms.schedule.trace`, here: each program's task tree is recorded
from its plain-Python run, the trace runs the schedule over that tree, and every
statistic each driver reports (blocks, utilization, tasks, leaves and re-expansions per
level, growth factors, peak live frames) must be the trace's, over a grid of strategies
and thresholds with B = 1, R = 0, R = 1, R < B, R = B and R > B.  (The simulator compiles
the policy's own functions and is compared with the trace in tests/test_simulate.py.)"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from revec import api
from revec.lang import Task
from revec.transforms import schedule as policy
from revec.transforms.schedule import BFS, BLOCKED, Block, Schedule, trace

HERE = Path(__file__).parent
ROOT = HERE.parent

# (program, task, root arguments): a balanced-ish tree, Pascal's triangle, a skewed
# tree, a random unbalanced tree (the simulator's sampler, as a task program), and
# conditional spawns / loops of spawns (1 to 3 children per inductive task, so child
# blocks of one spawn index hold only some of the block's threads).  In all of them a
# task runs its base case exactly when it spawns nothing (the trace's default leaves).
PROGRAMS = [
    (HERE / "programs" / "fib.py", "fib", (11,)),
    (ROOT / "benchmarks" / "binomial.py", "binomial", (11, 5)),
    (HERE / "programs" / "skew.py", "skew", (14, 0)),
    (ROOT / "benchmarks" / "treebuild.py", "treebuild", (60, 14, 1, 987654321)),
    (HERE / "programs" / "lanes.py", "branches", (7, 1, 0)),
    (HERE / "programs" / "lanes.py", "fors", (5, 5, 1.0)),
]

# (strategy, B, R, P): B = 1 (every block but the root's switches to blocked mode),
# R = 0 and R = 1 (never re-expand), R < B, R = B (the runtime's default), R > B (a
# re-expanded block may switch back at once), and widths P that leave partial vectors
GRID = [
    ("bfs", None, None, 4),
    ("blocked", 1, None, 4),
    ("blocked", 8, None, 4),
    ("reexp", 1, 0, 4),
    ("reexp", 1, 1, 2),
    ("reexp", 1, 2, 4),
    ("reexp", 8, 1, 4),
    ("reexp", 8, 4, 4),
    ("reexp", 8, 8, 8),
    ("reexp", 8, 20, 4),
    ("reexp", 32, 32, 16),
    ("reexp", 3, 7, 3),
]

BACKENDS = ["numba", pytest.param("c", marks=pytest.mark.skipif(
    shutil.which("gcc") is None, reason="the C back end needs gcc"))]


@contextmanager
def _recording(task_class: type, kids: list[list[int]]) -> Iterator[None]:
    """Record every task call of the plain-Python run as a node: ``kids[x]`` gets the
    nodes x spawns, in spawn order (``spawn`` calls the child task at once)."""
    plain = task_class.__call__
    open_calls: list[int] = []

    def call(self: Task, *args: Any) -> Any:
        x = len(kids)
        kids.append([])
        if open_calls:
            kids[open_calls[-1]].append(x)
        open_calls.append(x)
        try:
            return plain(self, *args)
        finally:
            open_calls.pop()

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(task_class, "__call__", call)
        yield


def task_tree(path: Path, task: str, args: tuple[Any, ...]) -> list[list[int]]:
    """The task tree of a program's run (node 0 the root), from its plain-Python run."""
    program = api.get_program(path)
    task_class = type(program.module.__dict__[task])
    assert issubclass(task_class, Task)
    kids: list[list[int]] = []
    with _recording(task_class, kids):
        result = api.run_loaded(program, task, args, variant="seq")
    assert len(kids) > 1 and result.variant == "seq"
    return kids


@pytest.fixture(scope="module")
def trees() -> dict[str, list[list[int]]]:
    return {task: task_tree(path, task, args) for path, task, args in PROGRAMS}


def driver_statistics(backend: str, path: Path, task: str, args: tuple[Any, ...],
                      sched: Schedule) -> dict[str, Any]:
    res = api.run_program(path, task, args, variant=sched.strategy, backend=backend,
                          block_size=sched.block_size, reexp_threshold=sched.reexp_threshold,
                          simd_width=sched.simd_width, workers=1)
    want = policy.Trace().statistics()
    return {k: getattr(res.stats, k) for k in want}


@pytest.mark.parametrize("backend", BACKENDS)
def test_drivers_follow_the_policy(backend: str, trees: dict[str, list[list[int]]]) -> None:
    checked = 0
    for path, task, args in PROGRAMS:
        for strategy, b, r, p in GRID:
            sched = Schedule.make(strategy, b, r, p)
            want = trace(sched, trees[task]).statistics()
            got = driver_statistics(backend, path, task, args, sched)
            assert got == want, (backend, task, sched, {
                k: (got[k], want[k]) for k in want if got[k] != want[k]})
            checked += 1
    assert checked == len(PROGRAMS) * len(GRID)


def test_the_grid_exercises_every_decision(trees: dict[str, list[list[int]]]) -> None:
    """The comparison above is only as strong as the situations it meets: across the
    grid there are bfs -> blocked switches, re-expansions, re-expanded blocks that
    switch back (growth factors), child blocks at exactly R threads that do not
    re-expand, and next blocks at exactly B threads that switch."""
    seen = {"switch": 0, "reexp": 0, "return": 0, "at_r": 0, "at_b": 0}
    for _, task, _ in PROGRAMS:
        for strategy, b, r, p in GRID:
            sched = Schedule.make(strategy, b, r, p)
            t = trace(sched, trees[task])
            prev: Block | None = None
            for blk in t.blocks:
                if prev is not None and prev.mode == BFS and blk.mode == BLOCKED \
                        and blk.depth == prev.depth + 1:
                    seen["switch"] += 1
                    seen["at_b"] += blk.threads == sched.block_size
                if blk.mode == BLOCKED and blk.threads == sched.reexp_threshold:
                    seen["at_r"] += 1
                prev = blk
            seen["reexp"] += len(t.reexpanded)
            seen["return"] += sum(t.returns_per_level)
    assert all(seen.values()), seen


def test_trace_by_hand() -> None:
    """The policy on a tree small enough to follow by hand: a root with children 1 and
    2; 1 has children 3, 4, 5; 2 has child 6; 3 has child 7."""
    kids = [[1, 2], [3, 4, 5], [6], [7], [], [], [], []]
    # B = 2: the root's next block {1, 2} holds 2 threads -> blocked mode, as one block;
    # its child blocks by spawn index: {3, 6}, {4}, {5}.  R = 2: {3, 6} stays blocked and
    # its child block {7} re-expands, then {4} and {5} re-expand (bfs, no children)
    t = trace(Schedule.make("reexp", 2, 2, 2), kids)
    assert t.blocks == [Block(0, 1, BFS), Block(1, 2, BLOCKED), Block(2, 2, BLOCKED),
                        Block(3, 1, BFS), Block(2, 1, BFS), Block(2, 1, BFS)]
    assert t.reexpanded == [Block(3, 1, BFS), Block(2, 1, BFS), Block(2, 1, BFS)]
    s = t.statistics()
    assert s["tasks_per_level"] == [1, 2, 4, 1] and s["leaves_per_level"] == [0, 0, 3, 1]
    assert s["reexpansions_per_level"] == [0, 0, 2, 1] and s["reexpansions"] == 3
    assert s["utilization"] == 4 / 8  # the two blocks of 2 fill vectors of 2
    # live frames: 1; the root makes 2 (peak 3); {1, 2} makes 4 while held: 2 + 4 = 6
    assert s["peak_live"] == 6 and s["blocks"] == 6 and s["levels"] == 4
    # bfs: one block per level
    assert [b.threads for b in trace(Schedule.make("bfs"), kids).blocks] == [1, 2, 4, 1]
    # R = 3 > B: {3, 6} re-expands too; its next block {7} stays bfs
    t = trace(Schedule.make("reexp", 2, 3, 2), kids)
    assert [(b.depth, b.threads, b.mode) for b in t.blocks] == [
        (0, 1, BFS), (1, 2, BLOCKED), (2, 2, BFS), (3, 1, BFS), (2, 1, BFS), (2, 1, BFS)]
    # a re-expanded block that grows back to B returns to blocked mode (growth 2 / 1)
    kids = [[1, 2], [3, 4], [], [5, 6], [], [], []]
    t = trace(Schedule.make("reexp", 2, 2, 1), kids)
    assert t.blocks == [Block(0, 1, BFS), Block(1, 2, BLOCKED), Block(2, 1, BFS),
                        Block(3, 2, BLOCKED), Block(2, 1, BFS)]
    assert t.reexpanded == [Block(2, 1, BFS), Block(2, 1, BFS)]
    assert t.statistics()["reexp_growth_per_level"] == [0.0, 0.0, 0.0, 2.0]


def test_decisions_are_the_documented_comparisons() -> None:
    """DESIGN.md section 3's words: fewer than B stays bfs, fewer than R re-expands."""
    assert policy.next_block_stays_bfs(7, 8) and not policy.next_block_stays_bfs(8, 8)
    assert policy.child_block_reexpands(3, 4) and not policy.child_block_reexpands(4, 4)
    assert not policy.child_block_reexpands(1, 0)
    assert policy.utilization_share(37, 16) == 32 and policy.utilization_share(5, 16) == 0

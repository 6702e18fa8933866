"""Two kernel techniques of the C back end whose kernels must give the same results and
statistics on and off.

Children by spawn site (technique ``site_blocks``, revec/transforms/kernel_plan.py
``site_decision``; on by default on the C back end, REVEC_PLAN_OFF=site_blocks off): a
lane-spawns kernel appends, per (spawn site, spawn index), the lanes that make that site
as their k-th spawn to child block k, straight from the input columns.  Every child
block holds the same children as with one select per child block (only their order
inside the block differs), so results and every statistic are the same on and off.

Staged steps (technique ``staged_steps``, ``staged_decision``): the compaction steps over
16- and 32-bit lane arrays a lane loop has just stored (a spawn loop's state: nqueens'
16-bit masks) load 256 bits at a time.

The oracle is the plain-Python run: its task tree (tests/test_schedule_policy.py) gives
the tasks and leaves of every level and the policy's trace every other statistic."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from revec import api
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule, trace
from tests.test_leaf_inlining import STATS, per_level
from tests.test_schedule_policy import task_tree

HERE = Path(__file__).parent
ROOT = HERE.parent
NONE: frozenset[str] = frozenset()
HAS_GCC = shutil.which("gcc") is not None

# tests/programs/lanes.py's branches without its float reducer: conditional spawns under
# if / else and a nested if, lanes making 0 to 3 spawns, spawn sites whose lanes go to
# two and three child blocks, a varying argument computed in the lane
INTS = '''
import numpy as np
from revec import Reducer, reduce, spawn, task

SCALE = np.array([3, 1, 4, 1, 5, 9, 2, 6], dtype=np.int32)
total = Reducer(np.int64, "sum")
low = Reducer(np.int32, "min")
high = Reducer(np.uint16, "max")


@task
def ints(d: np.int8 = 12, x: np.uint16 = 1, y: np.int32 = 0):
    if d == 0:
        reduce(total, x)
        reduce(low, y)
        reduce(high, x)
    else:
        s = SCALE[d & 7]
        if x % 3 != 0:
            spawn(ints, d - 1, x * 2 + 1, y - s)
            if y > -20:
                spawn(ints, d - 1, x + 7, y + 1)
        else:
            spawn(ints, d - 1, x // 2 + 3, y)
        if x & 4:
            spawn(ints, d - 1, x ^ 5, -y)
'''

# blocks of 32 inductive threads and more (the by-site chunks), blocks that re-expand or
# switch back; P = 4 leaves partial vectors
SCHEDULES = [("bfs", None, None, 4), ("blocked", 64, None, 4), ("reexp", 64, 64, 4)]


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str,
                                                                        tuple[Any, ...]]]:
    path = tmp_path_factory.mktemp("sites") / "ints.py"
    path.write_text(INTS)
    return {"graphcol": (ROOT / "benchmarks" / "graphcol.py", "graphcol", (9,)),
            "ints": (path, "ints", (9, 1, 0)),
            "nqueens": (ROOT / "benchmarks" / "nqueens.py", "nqueens", (8,))}


def test_the_plan_decides_and_says_why() -> None:
    graphcol = api.get_program(ROOT / "benchmarks" / "graphcol.py")
    on = kp.build_plan(graphcol, "graphcol", off=NONE)
    lane = on.step(kp.LaneSpawns)
    assert isinstance(lane, kp.LaneSpawns) and lane.by_site is not None
    # site s makes spawn index 0 .. s; the colour a site sets is computed in the lane,
    # the other two come from the input, the level v + 1 is one value for the block
    assert lane.by_site.pairs == ((0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2))
    assert [lane.by_site.source(s, c) for s in range(3) for c in ("v", "red")] == [
        "fill", "lane", "fill", "input", "fill", "input"]
    assert "site blocks: on:" in on.render()
    off = kp.build_plan(graphcol, "graphcol", off=frozenset({"site_blocks"}))
    lane = off.step(kp.LaneSpawns)
    assert isinstance(lane, kp.LaneSpawns) and lane.by_site is None
    assert "site blocks: switched off (REVEC_PLAN_OFF=site_blocks)" in off.render()
    assert "not on the numba back end" in kp.build_plan(
        graphcol, "graphcol", target="numba", off=NONE).render()
    # a float reducer: the children's order would change its rounding
    branches = kp.build_plan(api.get_program(HERE / "programs" / "lanes.py"), "branches",
                             off=NONE)
    assert "site blocks: not applied: float reducers (fsum)" in branches.render()


def test_staged_steps_decision() -> None:
    nqueens = api.get_program(ROOT / "benchmarks" / "nqueens.py")
    assert kp.build_plan(nqueens, "nqueens", off=NONE).staged_steps
    assert "staged steps: on:" in kp.build_plan(nqueens, "nqueens", off=NONE).render()
    off = kp.build_plan(nqueens, "nqueens", off=frozenset({"staged_steps"}))
    assert not off.staged_steps and "staged steps: switched off" in off.render()
    assert not kp.build_plan(nqueens, "nqueens", target="numba", off=NONE).staged_steps
    # graphcol stages 64-bit arguments only: nothing to change
    graphcol = api.get_program(ROOT / "benchmarks" / "graphcol.py")
    assert not kp.build_plan(graphcol, "graphcol", off=NONE).staged_steps


def built_pair(monkeypatch: pytest.MonkeyPatch, program: Any, task: str, technique: str
               ) -> dict[str, Any]:
    """The compiled task with every technique at its default ("") and ``technique``
    switched off."""
    built = {}
    for off in ("", technique):
        monkeypatch.setenv(kp.PLAN_OFF_ENV, off)
        monkeypatch.setenv(kp.PLAN_ON_ENV, "")
        built[off] = api.compiled_task(program, task, "c")
    assert built[""].source != built[technique].source
    return built


@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
def test_staged_steps_identical_on_and_off(
        monkeypatch: pytest.MonkeyPatch,
        programs: dict[str, tuple[Path, str, tuple[Any, ...]]]) -> None:
    path, task, args = programs["nqueens"]
    kids = task_tree(path, task, args)
    want_reducers = api.run_program(path, task, args, variant="seq").reducers
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    built = built_pair(monkeypatch, program, task, "staged_steps")
    assert "RV_LSTEP16(" in built[""].source and "RV_LSTEP16(" not in built["staged_steps"].source
    want_tasks, _ = per_level(kids)
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        got = {}
        for off, ct in built.items():
            reducers, stats = ct.run(rargs, sched)
            assert reducers == want_reducers, (sched, off)
            # (nqueens' leaves are its base cases, not the tree's childless tasks)
            assert stats.tasks_per_level == want_tasks, (sched, off)
            got[off] = {k: getattr(stats, k) for k in STATS}
        assert got[""] == got["staged_steps"], sched


@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
# (ints builds two more modules: with -m slow)
@pytest.mark.parametrize("name", ["graphcol", pytest.param("ints", marks=pytest.mark.slow)])
def test_identical_on_and_off(name: str, monkeypatch: pytest.MonkeyPatch,
                              programs: dict[str, tuple[Path, str, tuple[Any, ...]]]
                              ) -> None:
    path, task, args = programs[name]
    kids = task_tree(path, task, args)
    want_reducers = api.run_program(path, task, args, variant="seq").reducers
    want_tasks, want_leaves = per_level(kids)
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    built = built_pair(monkeypatch, program, task, "site_blocks")
    lane = built[""].plan.step(kp.LaneSpawns)
    assert isinstance(lane, kp.LaneSpawns) and lane.by_site is not None
    assert built["site_blocks"].plan.step(kp.LaneSpawns).by_site is None  # type: ignore
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        want = trace(sched, kids).statistics()
        for workers in (1, 2):
            got = {}
            for off, ct in built.items():
                reducers, stats = ct.run(rargs, sched, workers=workers)
                where = (name, sched, off or "on", workers)
                assert reducers == want_reducers, where
                assert stats.tasks_per_level == want_tasks, where
                assert stats.leaves_per_level == want_leaves, where
                got[off] = {k: getattr(stats, k) for k in STATS}
                if workers == 1:
                    assert got[off] == want, where

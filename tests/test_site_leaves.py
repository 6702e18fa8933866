"""Leaf inlining through the site blocks (technique ``site_leaves``,
revec/transforms/kernel_plan.py ``site_leaf_decision``; C and numba): where leaf inlining as
one pass is off because several spawn sites fill a child block and the children's is-base
test reads only values every site sets alike per block (graphcol: ``v + 1 == n``), the
test is decided once per block: every child a leaf (counted per site and child block as
that block's inlined leaves, its base case run in the lane, nothing written) or none (the
site blocks without leaf code).

The oracle is the plain-Python run's task tree (tests/test_schedule_policy.py) and the
policy's trace over it, as in tests/test_leaf_inlining.py: a leaf counted twice, at
another child block or not at all changes a level's counts or the schedule."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from revec import api
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule, trace
from tests.test_leaf_inlining import SCHEDULES, STATS, per_level
from tests.test_schedule_policy import task_tree

HERE = Path(__file__).parent
ROOT = HERE.parent
GRAPHCOL = ROOT / "benchmarks" / "graphcol.py"
NONE: frozenset[str] = frozenset()
ON = NONE
OFF = frozenset({"site_leaves"})

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")


def test_the_plan_decides_and_says_why() -> None:
    prog = api.get_program(GRAPHCOL)
    plan = kp.build_plan(prog, "graphcol", off=NONE, on=NONE)
    lane = plan.step(kp.LaneSpawns)
    assert isinstance(lane, kp.LaneSpawns) and lane.by_site is not None
    sl = lane.site_leaves
    assert sl is not None and sl.test is not None and sl.plain is not None
    assert plan.leaf_inline is not None and not lane.fused and plan.step(kp.CountBase) is None
    assert "leaf inlining through site blocks (site_leaves): on:" in plan.render()
    assert "decided once per block" in plan.render()
    # switched off: the site blocks without leaves (as before the technique)
    off = kp.build_plan(prog, "graphcol", off=OFF, on=NONE)
    lane = off.step(kp.LaneSpawns)
    assert isinstance(lane, kp.LaneSpawns) and lane.site_leaves is None
    assert off.leaf_inline is None and "switched off (REVEC_PLAN_OFF=site_leaves)" in off.render()
    # leaf inlining switched off switches it off too; switched on, as one pass
    assert kp.build_plan(prog, "graphcol", off=frozenset({"leaf_inline"}),
                         on=NONE).leaf_inline is None
    fused = kp.build_plan(prog, "graphcol", off=NONE, on=frozenset({"leaf_inline"}))
    lane = fused.step(kp.LaneSpawns)
    assert isinstance(lane, kp.LaneSpawns) and lane.fused and lane.site_leaves is None
    # parentheses: the children's is-base reads a field that varies between the lanes
    par = kp.build_plan(api.get_program(ROOT / "benchmarks" / "parentheses.py"),
                        "parentheses", off=NONE, on=NONE)
    assert par.leaf_inline is None
    assert "site_leaves): not applied: the children's is-base test reads values that " \
           "vary" in par.render()
    # one site per child block (fib): leaf inlining as one pass, no note
    fib = kp.build_plan(api.get_program(ROOT / "benchmarks" / "fib.py"), "fib",
                        off=NONE, on=NONE)
    assert fib.step(kp.CountBase) is not None and fib.site_leaves_note == ""


def test_the_kernel_branches_once_per_block() -> None:
    from revec.backends.c_codegen import generate_c_module

    prog = api.get_program(GRAPHCOL)
    with kp.plan_switches("", ""):
        src = generate_c_module(prog, "graphcol")
    with kp.plan_switches("site_leaves", ""):
        before = generate_c_module(prog, "graphcol")
    assert "const int cb_ = " in src and "klf[2] += nl2;" in src
    assert "cb_" not in before and "klf" not in before


# three sites (one unconditional) whose children's level-uniform d + 1 decides the test;
# base cases that read the children's varying fields (int32 and int8, from every
# site's own arguments) under a condition, into sum, min and max reducers
WALK = """
import numpy as np
from revec import Reducer, reduce, spawn, task

total = Reducer(np.int64, "sum")
low = Reducer(np.int32, "min")
high = Reducer(np.int16, "max")


@task
def walk(n: np.int32 = 6, d: np.int16 = 0, x: np.int32 = 1, y: np.int8 = 0):
    if d == n:
        reduce(total, np.int64(x) * 3 + np.int64(y))
        if x % 5 == 1:
            reduce(low, x)
        reduce(high, np.int16(y))
    else:
        if x % 3 != 0:
            spawn(walk, n, d + 1, x * 2 + 1, y + 1)
        if x % 4 != 1:
            spawn(walk, n, d + 1, x + 7, y - 1)
        spawn(walk, n, d + 1, x // 2 + np.int32(d), y)
"""


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str, tuple[int]]]:
    walk = tmp_path_factory.mktemp("site_leaves") / "walk.py"
    walk.write_text(WALK)
    return {"graphcol": (GRAPHCOL, "graphcol", (9,)), "walk": (walk, "walk", (7,))}


def test_numba_plan_and_kernel() -> None:
    """numba (no site blocks): the leaves counted per child block where all leaves, else
    the lane spawns by child block without leaf code (the passes of the plain body)."""
    from revec.backends.numba_codegen import generate_numba_module

    prog = api.get_program(GRAPHCOL)
    plan = kp.build_plan(prog, "graphcol", "vector", "numba", off=NONE, on=NONE)
    lane = plan.step(kp.LaneSpawns)
    assert isinstance(lane, kp.LaneSpawns) and lane.by_site is None
    sl = lane.site_leaves
    assert sl is not None and sl.test is not None and not sl.by_site
    assert not any(p.kind == "leaf" for p in lane.passes)
    assert "none -> by child block without leaf code" in plan.render()
    off = kp.build_plan(prog, "graphcol", "vector", "numba", off=OFF, on=NONE)
    lane = off.step(kp.LaneSpawns)
    assert isinstance(lane, kp.LaneSpawns) and lane.site_leaves is None
    assert off.leaf_inline is None
    with kp.plan_switches("", ""):
        src = generate_numba_module(prog, "graphcol")
    with kp.plan_switches("site_leaves", ""):
        before = generate_numba_module(prog, "graphcol")
    assert "cb_ = " in src and "kcnt[5] += nl2" in src and "not cb_" in src
    assert "cb_" not in before and "nl2" not in before


@pytest.mark.parametrize(("name", "backend"), [
    ("graphcol", "c"), ("walk", "c"), ("graphcol", "numba"),
    # (two numba compiles of a second program: the full set under -m slow)
    pytest.param("walk", "numba", marks=pytest.mark.slow)])
def test_counts_are_the_sequential_references(
        name: str, backend: str, monkeypatch: pytest.MonkeyPatch,
        programs: dict[str, tuple[Path, str, tuple[int]]]) -> None:
    path, task, args = programs[name]
    kids = task_tree(path, task, args)
    want_reducers = api.run_program(path, task, args, variant="seq").reducers
    want_tasks, want_leaves = per_level(kids)
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    built = {}
    # (walk: on only, the kernel without site_leaves is the site blocks' own)
    # (numba: off too, its lane spawns by child block)
    both = name == "graphcol" or backend == "numba"
    for state, off in (("on", ""), ("off", "site_leaves"))[:2 if both else 1]:
        monkeypatch.setenv(kp.PLAN_OFF_ENV, off)
        monkeypatch.setenv(kp.PLAN_ON_ENV, "")
        built[state] = api.compiled_task(program, task, backend)
    on_lane = built["on"].plan.step(kp.LaneSpawns)
    assert on_lane.site_leaves is not None and on_lane.site_leaves.test is not None, \
        "the plan inlines the leaves by site, decided once per block"
    if "off" in built:
        assert built["off"].plan.step(kp.LaneSpawns).site_leaves is None
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        want = trace(sched, kids).statistics()
        for state, ct in built.items():
            for workers in (1, 2, 3) if strategy == "reexp" and p == 4 else (1,):
                reducers, stats = ct.run(rargs, sched, workers=workers)
                where = (name, state, sched, workers)
                assert reducers == want_reducers, where
                # every leaf counted once, as a task and a leaf of its level
                assert stats.tasks_per_level == want_tasks, where
                assert stats.leaves_per_level == want_leaves, where
                if workers == 1:  # the schedule itself is the one without inlining
                    assert {k: getattr(stats, k) for k in STATS} == want, where
                if state == "off":
                    assert stats.inlined == 0, where
                elif strategy == "bfs":  # the last level's parents
                    assert stats.inlined == want_leaves[-1], where
                assert stats.inlined <= stats.leaves, where

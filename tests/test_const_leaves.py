"""const_leaves (revec/transforms/kernel_plan.py, ``const_leaves_decision``; numba): with
lane buffers, an integer sum of a constant by every inlined leaf of a spawn site every
lane makes, alone in its child block (binomial's ``reduce(count, 1)``), leaves the lane
loop: once per block the kernel adds the constant times the inlined leaves the lane steps
count for that child block.  Results and statistics are those with it off: the oracle is
the plain-Python run (reducers) and the policy's trace over the task tree (statistics)."""

from __future__ import annotations

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
OFF = frozenset({"const_leaves"})
# every leaf reduces its int8 field, its int16 field and the constant 3 (only that one is
# a constant sum); binomial: reduce(count, 1) by the leaves of both spawn sites
LEAF_SUMS = (HERE / "programs" / "leaf_sums.py", "extremes", (14,))
BINOMIAL = (ROOT / "benchmarks" / "binomial.py", "binomial", (16, 7))
# blocks of 32 inductive threads or more (only full 32-lane steps inline), blocks that
# re-expand or switch back; P = 3 leaves partial vectors
SCHEDULES = [("bfs", None, None, 4), ("blocked", 64, None, 4), ("reexp", 64, 64, 4),
             ("reexp", 40, 20, 3)]


def lane_step(path: Path, task: str, target: str = "numba",
              off: frozenset[str] = NONE) -> tuple[kp.KernelPlan, kp.LaneSpawns]:
    plan = kp.build_plan(api.get_program(path), task, target=target, off=off, on=NONE)
    step = plan.step(kp.LaneSpawns)
    assert isinstance(step, kp.LaneSpawns)
    return plan, step


def test_the_plan_decides_and_says_why() -> None:
    plan, step = lane_step(*BINOMIAL[:2])
    assert step.buffers and step.leaves
    assert [(c.reducer, c.value, c.site, c.block) for c in step.const_leaves] == [
        ("count", 1, 0, 0), ("count", 1, 1, 1)]
    text = plan.render()
    assert "constant leaf sums (const_leaves): on: count += 1 per leaf of site #0" in text
    assert "reduce(count, 1) by each inlined leaf of site #1: once per block" in text
    # only the constant: the leaves' int8 and int16 fields stay per-lane partials
    _, step = lane_step(*LEAF_SUMS[:2])
    assert [(c.reducer, c.value) for c in step.const_leaves] == [("ones", 3)] * 2
    # switched off: none, and the plan says so
    plan, step = lane_step(*BINOMIAL[:2], off=OFF)
    assert step.const_leaves == ()
    assert plan.const_leaves_note.startswith("switched off (REVEC_PLAN_OFF=const_leaves)")
    # fib's leaves reduce their n, not a constant
    plan, step = lane_step(ROOT / "benchmarks" / "fib.py", "fib")
    assert step.const_leaves == () and plan.const_leaves_note.startswith("not applied")
    # without lane buffers there is no lane loop to take it out of
    plan, step = lane_step(*BINOMIAL[:2], off=frozenset({"lane_buffers"}))
    assert step.const_leaves == () and "lane_buffers" in plan.const_leaves_note
    # C sums them in its fused pass: no const_leaves step field, no note
    plan, step = lane_step(*BINOMIAL[:2], target="c")
    assert step.const_leaves == () and plan.const_leaves_note == ""


def check_runs(built: dict[str, Any], path: Path, task: str, args: tuple[int, ...],
               workers_of: tuple[int, ...]) -> None:
    kids = task_tree(path, task, args)
    want_tasks, want_leaves = per_level(kids)
    want_reducers = api.run_program(path, task, args, variant="seq").reducers
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        want = trace(sched, kids).statistics()
        for name, ct in built.items():
            for workers in workers_of if strategy == "reexp" and p == 4 else (1,):
                reducers, stats = ct.run(rargs, sched, workers=workers)
                where = (task, name, sched, workers)
                assert reducers == want_reducers, where
                assert stats.tasks_per_level == want_tasks, where
                assert stats.leaves_per_level == want_leaves, where
                if workers == 1:
                    assert {k: getattr(stats, k) for k in STATS} == want, where
                if strategy == "bfs":  # blocks of 32 inductive threads and more
                    assert stats.inlined > 0, where


def build(monkeypatch: pytest.MonkeyPatch, path: Path, task: str, off: str) -> Any:
    monkeypatch.setenv(kp.PLAN_OFF_ENV, off)
    monkeypatch.setenv(kp.PLAN_ON_ENV, "")
    return api.compiled_task(api.get_program(path), task, "numba")


def test_constant_sums_are_the_sequential_references(monkeypatch: pytest.MonkeyPatch) -> None:
    # (one numba build: the kernel with const_leaves on, against the oracle)
    path, task, args = LEAF_SUMS
    ct = build(monkeypatch, path, task, "")
    assert "its constant, once per inlined leaf" in ct.source
    assert "_lp_ones" not in ct.source and "_lp_bytes_" in ct.source
    check_runs({"on": ct}, path, task, args, (1, 2))


@pytest.mark.slow
@pytest.mark.parametrize("program", [LEAF_SUMS, BINOMIAL], ids=["leaf_sums", "binomial"])
def test_on_and_off_agree(monkeypatch: pytest.MonkeyPatch,
                          program: tuple[Path, str, tuple[int, ...]]) -> None:
    path, task, args = program
    built = {off or "on": build(monkeypatch, path, task, off) for off in ("", "const_leaves")}
    assert "once per inlined leaf" in built["on"].source
    assert "once per inlined leaf" not in built["const_leaves"].source
    check_runs(built, path, task, args, (1, 2, 3))

"""column_loops (revec/transforms/kernel_plan.py ``column_loops_decision``, the numba
kernel's ``column_loops``): a straight inductive case whose body is its spawns alone is
written as one loop per frame column.  The children, their order, the results and every
statistic are those of the one loop over every column (switched off)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from revec import api
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule

HERE = Path(__file__).parent
ROOT = HERE.parent
STATS = ("tasks", "leaves", "levels", "blocks", "utilization", "reexpansions", "peak_live",
         "tasks_per_level", "leaves_per_level", "reexpansions_per_level",
         "reexp_growth_per_level")


def test_plan_decides_where_it_applies() -> None:
    """On for numba where the inductive case is its spawns alone (knapsack), off by the
    switch, and not applied to a body with more than spawns or on C."""
    prog = api.get_program(ROOT / "benchmarks" / "knapsack.py")
    none: frozenset[str] = frozenset()
    on = kp.build_plan(prog, "knapsack", target="numba", off=none, on=none)
    step = on.step(kp.StraightSpawns)
    assert isinstance(step, kp.StraightSpawns) and step.column_loops
    assert "one loop per column (column_loops)" in on.render()
    off = kp.build_plan(prog, "knapsack", target="numba", off=frozenset({"column_loops"}),
                        on=none)
    step = off.step(kp.StraightSpawns)
    assert isinstance(step, kp.StraightSpawns) and not step.column_loops
    assert off.column_loops_note.startswith("switched off")
    c = kp.build_plan(prog, "knapsack", target="c", off=none, on=none)
    step = c.step(kp.StraightSpawns)
    assert isinstance(step, kp.StraightSpawns) and not step.column_loops
    find = api.get_program(ROOT / "benchmarks" / "findmax.py")
    plan = kp.build_plan(find, "findmax", target="numba", off=none, on=none)
    assert not any(isinstance(s, kp.StraightSpawns) and s.column_loops for s in plan.steps)


def _built(monkeypatch: pytest.MonkeyPatch, off: str) -> Any:
    monkeypatch.setenv(kp.PLAN_OFF_ENV, off)
    monkeypatch.delenv(kp.PLAN_ON_ENV, raising=False)
    return api.compiled_task(api.get_program(HERE / "programs" / "leaf_level.py"), "folded",
                             "numba")


# two numba builds (several seconds): under -m slow; by default test_leaf_inlining's numba
# ``level_folded`` case runs this kernel (column_loops on) against the sequential
# reference's counts
@pytest.mark.slow
def test_results_and_statistics_identical_on_and_off(monkeypatch: pytest.MonkeyPatch
                                                    ) -> None:
    """numba, a five-field task with spawns alone (leaf_level's ``folded``): every
    schedule, 1 and 2 workers, the same reducers and statistics with the loops per column
    and without; the kernel with them has one loop per column."""
    built = {off: _built(monkeypatch, off) for off in ("", "column_loops")}
    assert "(column_loops)" in built[""].source
    assert "(column_loops)" not in built["column_loops"].source
    program = api.get_program(HERE / "programs" / "leaf_level.py")
    rargs = api.root_args(program, "folded", ())
    for strategy, b, r, p in [("bfs", None, None, 4), ("blocked", 64, None, 4),
                              ("reexp", 64, 64, 4), ("reexp", 40, 20, 3)]:
        sched = Schedule.make(strategy, b, r, p)
        for workers in (1, 2) if strategy == "reexp" and p == 4 else (1,):
            got = [ct.run(rargs, sched, workers=workers) for ct in built.values()]
            (red_on, st_on), (red_off, st_off) = got
            assert red_on == red_off, (sched, workers)
            # (with 2 workers the blocks depend on the stealing: the counts per level)
            for s in STATS if workers == 1 else ("tasks_per_level", "leaves_per_level"):
                assert getattr(st_on, s) == getattr(st_off, s), (sched, workers, s)

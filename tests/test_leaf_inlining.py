"""Leaf inlining (revec/transforms/kernel_plan.py, ``leaf_decision``; on by default on C
where ``leaf_unprofitable`` finds nothing against it, off on numba, REVEC_PLAN_ON=leaf_inline
on, REVEC_PLAN_OFF=leaf_inline off): at every spawn the
child's is-base test runs on the child's arguments, and a child that is a base case runs
its base case in the parent's lane and is never written.  Both drivers count such a leaf
as a task and a leaf of the child's level and as a thread of the child block it belongs
to, so results and every statistic are those without inlining.

The oracle is the plain-Python run of each program: its task tree, recorded call by
call (tests/test_schedule_policy.py), gives the tasks and leaves of every level, and the
policy's trace over that tree (revec.transforms.schedule.trace) every other statistic.
A leaf counted twice or not at all changes a level's counts."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from revec import api, ir
from revec.cli import main
from revec.errors import RevecError
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule, trace
from tests.test_schedule_policy import task_tree

HERE = Path(__file__).parent
ROOT = HERE.parent
OFF = ON = frozenset({"leaf_inline"})
NONE: frozenset[str] = frozenset()

# fib; a return-value task (its results summed by a hidden reducer); conditional spawns
# under if / else with several reducers (sum, min, max, a float sum); two conditional
# spawn sites with a level-uniform and an invariant field; two sites whose leaves go
# to both child blocks with a uniform field
PROGRAMS = {
    "fib": (HERE / "programs" / "fib.py", "fib", (14,)),
    "returns": (ROOT / "benchmarks" / "natural" / "fib.py", "fib", (14,)),
    "branches": (HERE / "programs" / "lanes.py", "branches", (8, 1, 0)),
    "parentheses": (ROOT / "benchmarks" / "parentheses.py", "parentheses", (8,)),
    "binomial": (ROOT / "benchmarks" / "binomial.py", "binomial", (13, 6)),
    # leaf_level (C): whole child levels inlined; base cases reading arrays
    "knapsack": (ROOT / "benchmarks" / "knapsack.py", "knapsack", (3, 11)),
    "level_folded": (HERE / "programs" / "leaf_level.py", "folded", ()),
    "level_assigned": (HERE / "programs" / "leaf_level.py", "assigned", ()),
    # lane-code inlining of a base case reading arrays: its reads guarded in every lane
    "guarded": (HERE / "programs" / "leaf_level.py", "guarded", ()),
}
LEVEL = ("knapsack", "level_folded", "level_assigned")  # leaf_level (C and numba)
# blocks of 32 inductive threads or more (only full 32-lane steps inline), and blocks
# that re-expand or switch back; P = 4 and 3 leave partial vectors
SCHEDULES = [("bfs", None, None, 4), ("blocked", 64, None, 4), ("reexp", 64, 64, 4),
             ("reexp", 40, 20, 3)]
STATS = ("tasks", "leaves", "levels", "blocks", "utilization", "reexpansions", "peak_live",
         "tasks_per_level", "leaves_per_level", "reexpansions_per_level",
         "reexp_growth_per_level")

HAS_GCC = shutil.which("gcc") is not None
# every program on C (builds in about a second); on numba (builds take longer) three by
# default (one of them leaf_level's), the others with -m slow
CASES = [pytest.param("c", name, marks=pytest.mark.skipif(not HAS_GCC, reason="no gcc"))
         for name in PROGRAMS]
CASES += [pytest.param("numba", name, marks=() if name in ("fib", "branches", "level_folded")
                       else pytest.mark.slow) for name in PROGRAMS]


def per_level(kids: list[list[int]]) -> tuple[list[int], list[int]]:
    """Tasks and leaves (tasks that spawn nothing) of every level of a task tree."""
    tasks: list[int] = []
    leaves: list[int] = []
    level = [0]
    while level:
        tasks.append(len(level))
        leaves.append(sum(not kids[x] for x in level))
        level = [c for x in level for c in kids[x]]
    return tasks, leaves


@pytest.fixture(scope="module")
def references() -> dict[str, tuple[list[list[int]], dict[str, Any]]]:
    """Per program: its task tree and reducers, from the plain-Python run."""
    out = {}
    for name, (path, task, args) in PROGRAMS.items():
        kids = task_tree(path, task, args)
        seq = api.run_program(path, task, args, variant="seq")
        out[name] = (kids, seq.reducers)
    return out


def build(monkeypatch: pytest.MonkeyPatch, backend: str, name: str, off: str) -> Any:
    """The compiled task with leaf inlining switched off (``off``) or on (whatever the
    target's default)."""
    path, task, _ = PROGRAMS[name]
    monkeypatch.setenv(kp.PLAN_OFF_ENV, off)
    monkeypatch.setenv(kp.PLAN_ON_ENV, "" if off else "leaf_inline")
    return api.compiled_task(api.get_program(path), task, backend)


@pytest.mark.parametrize(("backend", "name"), CASES)
def test_counts_are_the_sequential_references(
        backend: str, name: str, monkeypatch: pytest.MonkeyPatch,
        references: dict[str, tuple[list[list[int]], dict[str, Any]]]) -> None:
    path, task, args = PROGRAMS[name]
    kids, want_reducers = references[name]
    want_tasks, want_leaves = per_level(kids)
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    built = {off: build(monkeypatch, backend, name, off) for off in ("", "leaf_inline")}
    assert built[""].plan.leaf_inline is not None, "the plan inlines this program's leaves"
    assert built["leaf_inline"].plan.leaf_inline is None
    straight = built[""].plan.step(kp.StraightSpawns)
    if name in LEVEL:  # the whole child level inlined, no child block written
        assert isinstance(straight, kp.StraightSpawns) and straight.leaf_level, name
        # (C: child block k's inlined leaves klf[k]; numba: kcnt[K + k], K child blocks)
        assert ("klf[k] = ni;" if backend == "c" else
                f"kcnt[{straight.spawns} + k] = ni") in built[""].source
    else:
        assert not isinstance(straight, kp.StraightSpawns) or not straight.leaf_level
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        want = trace(sched, kids).statistics()
        for off, ct in built.items():
            for workers in (1, 2) if strategy == "reexp" and p == 4 else (1,):
                reducers, stats = ct.run(rargs, sched, workers=workers)
                where = (backend, name, sched, off or "inlining on", workers)
                hidden = {k: v for k, v in reducers.items() if k in want_reducers}
                assert hidden == want_reducers, where
                # every leaf counted once, as a task and a leaf of its level
                assert stats.tasks_per_level == want_tasks, where
                assert stats.leaves_per_level == want_leaves, where
                if workers == 1:  # the schedule itself is the one without inlining
                    assert {k: getattr(stats, k) for k in STATS} == want, where
                if off:
                    assert stats.inlined == 0, where
                elif strategy == "bfs" or name in LEVEL:  # (bfs: blocks of 32 threads+)
                    assert stats.inlined > 0, where
                assert stats.inlined <= stats.leaves, where


def test_the_plan_decides_and_says_why() -> None:
    fib = api.get_program(ROOT / "benchmarks" / "fib.py")
    # on by default on numba too (with its lane buffers), not as one pass: lane spawns
    # whose last partial step writes every child; off where leaf_unprofitable says so
    default = kp.build_plan(fib, "fib", target="numba", off=NONE, on=NONE)
    lane = default.step(kp.LaneSpawns)
    assert default.leaf_inline is not None and isinstance(lane, kp.LaneSpawns)
    assert lane.leaves and lane.buffers and not lane.fused
    assert default.step(kp.CountBase) is None and default.slack == kp.LANES
    assert "leaf inlining: on:" in default.render()
    paren = api.get_program(ROOT / "benchmarks" / "parentheses.py")
    nb_paren = kp.build_plan(paren, "parentheses", target="numba", off=NONE, on=NONE)
    assert nb_paren.leaf_inline is None
    assert ("leaf inlining: off by default for this program on the numba back end: child "
            "block 0 can be filled by several spawn sites") in nb_paren.render()
    assert kp.build_plan(paren, "parentheses", target="numba", off=NONE,
                         on=ON).leaf_inline
    # on by default on C, as one pass: the base threads counted first, no slack
    for on_ in (NONE, ON):
        on = kp.build_plan(fib, "fib", off=NONE, on=on_)
        lane = on.step(kp.LaneSpawns)
        assert on.leaf_inline is not None and isinstance(lane, kp.LaneSpawns) and lane.leaves
        assert lane.fused and isinstance(on.step(kp.CountBase), kp.CountBase)
        assert on.slack == 0 and on.step_ids[0] == "1.count"
        assert "leaf inlining: on:" in on.render()
    # on C, off by default where a child block can be filled by several spawn sites
    # (a select per lane: measured slower); switched on, it applies
    # (graphcol: as one pass; by default its leaves are inlined through the site blocks,
    # technique site_leaves, switched off here: tests/test_site_leaves.py)
    for name in ("parentheses", "graphcol"):
        prog = api.get_program(ROOT / "benchmarks" / f"{name}.py")
        default = kp.build_plan(prog, name, off=frozenset({"site_leaves"}), on=NONE)
        assert default.leaf_inline is None and default.step(kp.CountBase) is None, name
        assert ("leaf inlining: off by default for this program on the c back end: child "
                "block 0 can be filled by several spawn sites") in default.render(), name
        assert kp.build_plan(prog, name, off=NONE, on=ON).leaf_inline is not None, name
    # switched off: the fixed slots of every-thread spawns, as before
    off = kp.build_plan(fib, "fib", off=OFF, on=ON)  # (off wins)
    assert off.leaf_inline is None and isinstance(off.step(kp.StraightSpawns),
                                                  kp.StraightSpawns)
    assert "leaf inlining: switched off" in off.render()
    # where it does not apply, the plan says why
    why = {
        "nqueens": "the number of child blocks grows at run time",
        "treebuild": "the inductive case is not lane code",
        "knapsack_bb": "the inductive case is not lane code",
    }
    for name, reason in why.items():
        plan = kp.build_plan(api.get_program(ROOT / "benchmarks" / f"{name}.py"), name,
                             off=NONE, on=ON)
        assert plan.leaf_inline is None and f"leaf inlining: not applied: {reason}" \
            in plan.render(), name
    # knapsack's base case reads an array (CAPACITY[example - 1]): not speculable in lane
    # code, but its is-base test is level-uniform: whole child levels inlined (C), where
    # nothing is speculated (C and numba); with leaf_level off, not applied
    knap = api.get_program(ROOT / "benchmarks" / "knapsack.py")
    for target in ("c", "numba"):
        plan = kp.build_plan(knap, "knapsack", target=target, off=NONE, on=NONE)
        straight = plan.step(kp.StraightSpawns)
        assert plan.leaf_inline is not None and isinstance(straight, kp.StraightSpawns)
        assert straight.leaf_level is not None and straight.leaf_level.fold is not None
        assert plan.step(kp.CountBase) is None and plan.step(kp.LaneSpawns) is None
        assert "leaf inlining: on, per level (leaf_level)" in plan.render(), target
    # lane code (leaf_level off): its reads guarded in every lane (an index out
    # of range where the child is not a leaf reads element 0), off by default on C
    # (measured slower), switched on where asked
    for name, prog in (("knapsack", knap),
                       ("findmax", api.get_program(ROOT / "benchmarks" / "findmax.py"))):
        default = kp.build_plan(prog, name, off=frozenset({"leaf_level"}), on=NONE)
        assert default.leaf_inline is None and ("the base case reads arrays (guarded reads "
                                                "in every lane: measured slower") \
            in default.render(), name
        for p_ in (kp.build_plan(prog, name, off=frozenset({"leaf_level"}), on=ON),
                   kp.build_plan(prog, name, target="numba", off=frozenset({"leaf_level"}),
                                 on=ON)):
            assert p_.leaf_inline is not None and "leaf inlining: on:" in p_.render(), name
            reads = [x for x in ir.walk_nodes(p_.leaf_inline.base)
                     if isinstance(x, ir.ArrayRef)]
            assert reads and all(isinstance(i, ir.IfExp) for r in reads for i in r.indices)
    # the numba plan's passes: one mask of inlined leaves per site
    nb = kp.build_plan(fib, "fib", target="numba", off=NONE, on=ON)
    lane = nb.step(kp.LaneSpawns)
    assert isinstance(lane, kp.LaneSpawns)
    assert [p.name for p in lane.passes if p.kind == "leaf"] == ["ml0", "ml1"]


def test_the_switch(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
                    ) -> None:
    path = ROOT / "benchmarks" / "fib.py"
    monkeypatch.setenv(kp.PLAN_OFF_ENV, " leaf_inline, ")
    assert kp.plan_off() == OFF
    assert main(["transform", str(path), "--plan", "--backend", "c"]) == 0
    assert "leaf inlining: switched off" in capsys.readouterr().out
    monkeypatch.setenv(kp.PLAN_OFF_ENV, "")
    monkeypatch.setenv(kp.PLAN_ON_ENV, "")
    for backend in ("c", "numba"):
        assert main(["transform", str(path), "--plan", "--backend", backend]) == 0
        assert "leaf inlining: on:" in capsys.readouterr().out
    paren = ROOT / "benchmarks" / "parentheses.py"
    assert main(["transform", str(paren), "--plan", "--backend", "numba"]) == 0
    assert "leaf inlining: off by default for this program on the numba back end" in \
        capsys.readouterr().out
    monkeypatch.setenv(kp.PLAN_ON_ENV, "leaf_inline")
    assert kp.plan_on() == ON
    for backend in ("c", "numba"):
        assert main(["transform", str(path), "--plan", "--backend", backend]) == 0
        assert "leaf inlining: on:" in capsys.readouterr().out
    monkeypatch.setenv(kp.PLAN_OFF_ENV, "leaf_inline,unrolling")
    with pytest.raises(RevecError, match="unknown plan technique 'unrolling'"):
        kp.plan_off()
    assert main(["transform", str(path), "--plan"]) == 2
    assert "unknown plan technique 'unrolling'" in capsys.readouterr().err
    monkeypatch.setenv(kp.PLAN_OFF_ENV, "")
    monkeypatch.setenv(kp.PLAN_ON_ENV, "leaf")
    with pytest.raises(RevecError, match="REVEC_PLAN_ON: unknown plan technique 'leaf'"):
        kp.plan_on()


@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
def test_the_switch_is_part_of_the_cache_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's compiled tasks are keyed by the switch, and the generated source
    (the key of the module caches on disk) differs."""
    on = build(monkeypatch, "c", "fib", "")
    off = build(monkeypatch, "c", "fib", "leaf_inline")
    assert on is not off and on.source != off.source
    assert "klf[" in on.source and "klf[" not in off.source
    assert build(monkeypatch, "c", "fib", "") is on


@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
def test_long_chains_in_an_inlined_base_case(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A base case of 1,000-term chains (tests/test_deep_expressions.py) inlined into the
    parent's lane: the plan renames its variables without recursion (deeper than
    Python's limit), and the run agrees with the plain Python run."""
    from tests.test_deep_expressions import program

    path = tmp_path / "deep_chains.py"
    path.write_text(program())
    want = api.run_program(path, "walk", (12,), variant="seq").reducers
    monkeypatch.setenv(kp.PLAN_OFF_ENV, "")
    monkeypatch.setenv(kp.PLAN_ON_ENV, "leaf_inline")
    assert api.compiled_task(api.get_program(path), "walk", "c").plan.leaf_inline
    got = api.run_program(path, "walk", (12,), variant="bfs", backend="c")
    assert got.reducers == want
    assert got.stats.inlined > 0


@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
def test_narrow_sums_of_inlined_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-pass C kernel's sums of inlined leaves (revec/backends/c_leaves.py): int8
    values at -128 and 127 (a byte sum, biased), int16 values at -32768 and 32767 (32-bit
    lane sums) and a constant (once per block, times the leaves), in blocks mixing kept
    and inlined children: the plain-Python run's reducers, every schedule, 1-2 workers."""
    path = HERE / "programs" / "leaf_sums.py"
    want = api.run_program(path, "extremes", (), variant="seq").reducers
    monkeypatch.setenv(kp.PLAN_OFF_ENV, "")
    monkeypatch.setenv(kp.PLAN_ON_ENV, "")
    ct = api.compiled_task(api.get_program(path), "extremes", "c")
    lane = ct.plan.step(kp.LaneSpawns)
    assert ct.plan.leaf_inline is not None and isinstance(lane, kp.LaneSpawns) and lane.fused
    assert "RV_SAD_ADDS(sa_bytes_" in ct.source and "ps_shorts[u]" in ct.source
    assert "la_ones + (uint64_t)(INT64_C(3)) * (uint64_t)(ni - nk0)" in ct.source
    rargs = api.root_args(api.get_program(path), "extremes", ())
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        for workers in (1, 2):
            reducers, stats = ct.run(rargs, sched, workers=workers)
            assert reducers == want, (sched, workers)
            assert stats.inlined > 0, (sched, workers)


# technique leaf_two_levels (C): in a blocked block whose child blocks would run blocked,
# every inductive child runs in its parent's lane too; the driver counts each child block
# when it reaches it.  fib and its return-value form take it; a grandchild inlined as a
# leaf is a task and leaf of level + 2, an expanded child a task of level + 1
TWO_LEVELS = ("fib", "returns")


@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
@pytest.mark.parametrize("name", TWO_LEVELS)
def test_two_levels_per_call_counts_every_level_once(
        name: str, monkeypatch: pytest.MonkeyPatch,
        references: dict[str, tuple[list[list[int]], dict[str, Any]]]) -> None:
    path, task, args = PROGRAMS[name]
    kids, want_reducers = references[name]
    want_tasks, want_leaves = per_level(kids)
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    built = {}
    for off in ("", "leaf_two_levels"):
        monkeypatch.setenv(kp.PLAN_OFF_ENV, off)
        monkeypatch.setenv(kp.PLAN_ON_ENV, "")
        built[off] = api.compiled_task(program, task, "c")
    on, off_ = built[""], built["leaf_two_levels"]
    assert on.plan.step(kp.LaneSpawns).two_levels, on.plan.leaf_two_levels_note
    assert not off_.plan.step(kp.LaneSpawns).two_levels
    assert "rv_two_min >= 0" in on.source and "rv_two_min >= 0" not in off_.source
    for strategy, b, r, p in SCHEDULES + [("blocked", 32, None, 16), ("reexp", 48, 33, 8)]:
        sched = Schedule.make(strategy, b, r, p)
        want = trace(sched, kids).statistics()
        for ct in (on, off_):
            for workers in (1, 2, 3) if strategy != "bfs" else (1,):
                reducers, stats = ct.run(rargs, sched, workers=workers)
                where = (name, sched, ct is on, workers)
                hidden = {k: v for k, v in reducers.items() if k in want_reducers}
                assert hidden == want_reducers, where
                assert stats.tasks_per_level == want_tasks, where
                assert stats.leaves_per_level == want_leaves, where
                if workers == 1:
                    assert {k: getattr(stats, k) for k in STATS} == want, where

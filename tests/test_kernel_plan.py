"""The kernel plan (revec/transforms/kernel_plan.py): one typed plan per task, walked by
both back ends' emitters.  Every benchmark's plan is printed, and both emitters (C, and
numba with the vector and with the scalar steps) must consume every step of it, in
order; tests/test_goldens.py pins the plans of fib, nqueens and graphcol."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from revec.api import get_program
from revec.backends.c_codegen import CModuleGen
from revec.backends.numba_codegen import NumbaModuleGen
from revec.cli import main
from revec.transforms import kernel_plan as kp

HERE = Path(__file__).parent
ROOT = HERE.parent
BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))


def plans(path: Path) -> list[tuple[str, kp.KernelPlan]]:
    program = get_program(path)
    return [(t, kp.build_plan(program, t)) for t in program.tasks]


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_both_emitters_consume_every_step(path: Path) -> None:
    program = get_program(path)
    for task in program.tasks:
        plan = kp.build_plan(program, task)
        text = plan.render()
        print(text)
        assert len(set(plan.step_ids)) == len(plan.step_ids)
        for s in plan.steps:
            assert f"  {s.id} {s.kind}\n" in text
        c = CModuleGen(program, task)
        c.generate()
        assert c.plan == plan
        assert tuple(c.consumed) == plan.step_ids, "the C emitter skipped a plan step"
        for mode in ("table", "scalar"):
            nb = NumbaModuleGen(program, task, mode)
            nb.generate()
            assert nb.plan == kp.build_plan(program, task,
                                            "scalar" if mode == "scalar" else "vector", "numba")
            assert tuple(nb.consumed) == nb.plan.step_ids, \
                f"the numba emitter ({mode}) skipped a plan step"


# the inductive shape of each benchmark, as the kernels' docstrings describe them (with
# every plan technique off; leaf inlining turns fib's and binomial's fixed
# slots into lane code: LEAF_INLINED)
SHAPES = {
    "binomial": kp.StraightSpawns, "fib": kp.StraightSpawns, "knapsack": kp.StraightSpawns,
    "treebuild": kp.ThreadSpawns,  # while loops before its spawns
    "graphcol": kp.LaneSpawns, "parentheses": kp.LaneSpawns,
    "minmax": kp.LoopIterate, "nqueens": kp.LoopIterate, "uts": kp.LoopIterate,
}


# the benchmarks whose kernels inline leaves (kernel_plan.leaf_decision)
LEAF_INLINED = {"binomial", "fib", "graphcol", "parentheses", "knapsack"}
# ... of those, the ones that inline whole child levels (kernel_plan.level_decision)
LEAF_LEVEL = {"knapsack"}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_benchmark_shapes(name: str) -> None:
    program = get_program(ROOT / "benchmarks" / f"{name}.py")
    plan = kp.build_plan(program, name, off=frozenset(kp.TECHNIQUES))
    kinds = [type(s) for s in plan.steps]
    assert SHAPES[name] in kinds
    on = kp.build_plan(program, name, off=frozenset(), on=frozenset(kp.TECHNIQUES))
    lane = on.step(kp.LaneSpawns)
    assert (on.leaf_inline is not None) == (name in LEAF_INLINED)
    assert (isinstance(lane, kp.LaneSpawns) and lane.leaves) == (
        name in LEAF_INLINED - LEAF_LEVEL)
    straight = on.step(kp.StraightSpawns)
    assert (isinstance(straight, kp.StraightSpawns) and straight.leaf_level is not None) \
        == (name in LEAF_LEVEL)
    assert kinds[-1] is kp.StoreReducers
    assert kp.Split in kinds and kp.BaseCase in kinds
    if SHAPES[name] is kp.LoopIterate:
        assert kinds[-3:-1] == [kp.LoopPrefix, kp.LoopIterate]
        assert plan.slack == kp.LANES
    if SHAPES[name] is kp.StraightSpawns:
        assert plan.slack == 0


def test_loop_state_of_a_for_and_a_while() -> None:
    ((_, uts),) = plans(ROOT / "benchmarks" / "uts.py")
    ((_, nq),) = plans(ROOT / "benchmarks" / "nqueens.py")
    # a loop's trip count is data-dependent: the child blocks grow at run time
    assert uts.loop is not None and uts.loop[1].dynamic
    assert nq.loop is not None and nq.loop[1].dynamic
    # uts' ``for i in range(kids)`` carries i and its stop; nqueens' while carries free
    assert {c.name for c in uts.loop[0].state} >= {"i", "_stop", "h0", "h4"}
    assert {c.name for c in nq.loop[0].state} == {"free", "cols", "d1", "d2"}
    # an iteration changes only these: the numba target updates the lists in place and
    # writes back nothing else; the C target stages every lane's whole state
    program = get_program(ROOT / "benchmarks" / "nqueens.py")
    nq_numba = kp.build_plan(program, "nqueens", target="numba").loop
    program = get_program(ROOT / "benchmarks" / "uts.py")
    uts_numba = kp.build_plan(program, "uts", target="numba").loop
    assert nq_numba is not None and uts_numba is not None
    assert nq_numba[1].updated == ("free",)
    assert "i" in uts_numba[1].updated and "_stop" not in uts_numba[1].updated
    assert nq.loop[1].updated == tuple(c.name for c in nq.loop[1].state)
    # the C target runs prefix and iterations as lane code, numba thread by thread
    assert nq.loop[0].lanes == nq.loop[1].lanes == kp.LANES
    assert nq_numba[0].lanes == nq_numba[1].lanes == 1 and nq_numba[1].body is None
    # nqueens' n is passed on unchanged (one value per tree), row is level-uniform
    assert [c.name for c in nq.invariant] == ["n"]
    assert [c.name for c in nq.uniform] == ["row"]


def test_scalar_mode_keeps_index_lists() -> None:
    """With the scalar steps, a side reading three or more columns keeps arena indices
    and a lock-step loop reads its read-only fields through the thread's index."""
    program = get_program(ROOT / "benchmarks" / "nqueens.py")
    vec = kp.build_plan(program, "nqueens", "vector")
    sca = kp.build_plan(program, "nqueens", "scalar")
    split_v, split_s = vec.step(kp.Split), sca.step(kp.Split)
    assert isinstance(split_v, kp.Split) and isinstance(split_s, kp.Split)
    assert split_v.inductive.keep == "copy" and split_s.inductive.keep == "index"
    assert vec.loop is not None and sca.loop is not None
    assert vec.loop[1].by_index == ()
    assert set(sca.loop[1].by_index) >= {"cols", "d1", "d2"}
    assert sca.loop[0].state[0].name == "_idx"
    with pytest.raises(ValueError):
        kp.build_plan(program, "nqueens", "simd")


def test_lane_sites_of_conditional_spawns() -> None:
    ((_, plan),) = plans(ROOT / "benchmarks" / "graphcol.py")
    step = plan.step(kp.LaneSpawns)
    assert isinstance(step, kp.LaneSpawns)
    # three conditional spawns: the i-th can be a lane's spawn 0 .. i
    assert [sorted(s.kset) for s in step.sites] == [[0], [0, 1], [0, 1, 2]]
    assert all(s.conditional for s in step.sites)
    assert step.child_blocks == (0, 1, 2)
    assert [c.name for c in plan.uniform] == ["v"]


def test_narrow_sum_only_for_a_narrow_column() -> None:
    ((_, fib),) = plans(ROOT / "benchmarks" / "fib.py")
    ((_, knap),) = plans(ROOT / "benchmarks" / "knapsack.py")
    base = fib.step(kp.BaseCase)
    assert isinstance(base, kp.BaseCase) and base.narrow_sum == kp.NarrowSum("n", "count")
    base = knap.step(kp.BaseCase)
    assert isinstance(base, kp.BaseCase) and base.narrow_sum is None


def test_transform_plan_cli(capsys: pytest.CaptureFixture[str]) -> None:
    """``revec transform --plan`` prints the plan of the --backend's target (numba, the
    command's default back end, or C), then each plan technique's state there."""
    from revec.backends.techniques import render_states, technique_states

    program = get_program(ROOT / "benchmarks" / "nqueens.py")
    assert main(["transform", str(ROOT / "benchmarks" / "nqueens.py"), "--plan"]) == 0
    assert capsys.readouterr().out == kp.build_plan(program, "nqueens",
                                                    target="numba").render() + \
        render_states(technique_states(program, "nqueens", "numba"))
    assert main(["transform", str(ROOT / "benchmarks" / "nqueens.py"), "--plan",
                 "--backend", "c"]) == 0
    ((_, plan),) = plans(ROOT / "benchmarks" / "nqueens.py")
    assert capsys.readouterr().out == plan.render() + \
        render_states(technique_states(program, "nqueens", "c"))
    assert main(["transform", str(ROOT / "benchmarks" / "nqueens.py"), "--plan",
                 "--spawn-form"]) == 2
    assert "pick one" in capsys.readouterr().err


def _without_read(plan: kp.KernelPlan, kind: type[kp.Step]) -> kp.KernelPlan:
    """``plan`` with the last column removed from the reads of its step of ``kind``."""
    step = plan.step(kind)
    assert step is not None and getattr(step, "reads", ())
    cut = dataclasses.replace(step, reads=step.reads[:-1])  # type: ignore[attr-defined]
    return dataclasses.replace(plan, steps=tuple(cut if s is step else s for s in plan.steps))


@pytest.mark.parametrize("name, kind", [("knapsack", kp.BaseCase),
                                        ("knapsack", kp.StraightSpawns),
                                        ("graphcol", kp.LaneSpawns),
                                        ("nqueens", kp.LoopPrefix)])
def test_emitters_follow_a_steps_reads(name: str, kind: type[kp.Step]) -> None:
    """Both emitters load what the plan says a step reads, not what they would derive:
    a column removed from the step's reads in the plan disappears from both modules."""
    program = get_program(ROOT / "benchmarks" / f"{name}.py")
    for backend in ("c", "numba"):
        plan = kp.build_plan(program, name, target=backend)
        cut = _without_read(plan, kind)
        gen = CModuleGen if backend == "c" else NumbaModuleGen
        same, changed = gen(program, name, plan=plan), gen(program, name, plan=cut)
        assert gen(program, name).generate() == same.generate()
        assert changed.generate() != same.generate(), \
            f"the {backend} emitter ignored the reads of the plan's {kind.__name__} step"


@pytest.mark.parametrize("name", ["fib", "graphcol", "nqueens"])
def test_emitters_follow_the_child_block_stride(name: str) -> None:
    """Child block k of a block with ni inductive threads starts at out_base + k * (ni +
    slack) in both back ends (their drivers read the same slack): a different slack in
    the plan changes both modules."""
    program = get_program(ROOT / "benchmarks" / f"{name}.py")
    for backend in ("c", "numba"):
        plan = kp.build_plan(program, name, target=backend)
        wider = dataclasses.replace(plan, slack=plan.slack + 8)
        gen = CModuleGen if backend == "c" else NumbaModuleGen
        a, b = gen(program, name, plan=plan).generate(), gen(program, name, plan=wider).generate()
        assert a != b, f"the {backend} emitter ignored the plan's child-block slack"

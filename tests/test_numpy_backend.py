"""The numpy back end (revec/backends/numpy_backend.py): the kernel plan interpreted with
NumPy whole-block operations, the plan's executable reference.

Every benchmark at a small size, every program of tests/programs and Cilk C programs run
in bfs, blocked and reexp with block sizes 1, 3 and 64 and several thresholds: the
reducers must be the sequential reference's and the statistics those of the numba back
end for the same schedule.  The C back end's plan (the default: lane code in the
lock-step loops) and the numba back end's plan are both interpreted, with the vector
split and with the scalar one (sides keeping arena indices, loop fields read through
the thread's index).  A plan the interpreter does not understand fails loudly.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from revec import ir
from revec.api import get_program, root_args, run_loaded
from revec.backends import numpy_backend
from revec.backends.numpy_backend import BACKEND, NumpyTask
from revec.errors import RevecError
from revec.runtime.memory import MemoryBudgetError
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule
from tests.support.compare import close, same

HERE = Path(__file__).parent
ROOT = HERE.parent

# (variant, B, R): B = 1, 3 and 64; R below, at and above B, and 0
SCHEDULES = [("bfs", None, None), ("blocked", 1, None), ("blocked", 3, None),
             ("blocked", 64, None), ("reexp", 1, 1), ("reexp", 3, 5), ("reexp", 3, 0),
             ("reexp", 64, 64), ("reexp", 64, 200)]
# the other plans (the numba back end's, and the scalar split) on fewer schedules
OTHER_PLANS = [("numba", None), ("c", "scalar"), ("numba", "scalar")]
SHORT = [("bfs", None, None), ("blocked", 3, None), ("reexp", 3, 5)]
STATS = ("tasks", "leaves", "levels", "blocks", "utilization", "reexpansions", "peak_live",
         "tasks_per_level", "leaves_per_level", "reexpansions_per_level",
         "reexp_growth_per_level")

BENCH = ROOT / "benchmarks"
BENCHMARKS = [  # small sizes: a few hundred to a few thousand tasks
    ("fib", (12,)), ("nqueens", (6,)), ("uts", (1, 4.0, 4)), ("graphcol", (7,)),
    ("knapsack", (3, 9)), ("parentheses", (6,)), ("binomial", (10, 4)),
    ("minmax", (107, 38404, True)), ("treebuild", (40, 9)),
]
PROGRAMS = [
    ("fib.py", "fib", (10,)), ("lane_subsets.py", "subsets", (8,)),
    ("lanes.py", "branches", (7,)), ("lanes.py", "whiles", (4,)), ("lanes.py", "fors", (5,)),
    ("returns_inferred_narrow.py", "f", (9, 47, 3)), ("returns_widen.py", "f", (7, 61, 1)),
    ("semantics.py", "sem", ()), ("skew.py", "skew", (10, 0)), ("uniform.py", "walk", ()),
    ("uniform.py", "pairs", ()), ("wrap_int64.py", "f", (3, 1)), ("deep.py", "spine", (200,)),
]
UTS_ROOT = (0.234375, 4, 0.5, 0, 1734869822, 560228388, 2077241760, 2732164973, 2038534031)
CILK = [
    ("fib.c", "fib", (9,)), ("nqueens.c", "nqueens", (6, 0, 0, 0, 0)),
    ("parentheses.c", "parentheses", (5, 0, 0)), ("knapsack.c", "knapsack", (3, 8, 0, 0, 0)),
    ("uts.c", "uts", (1, 4.0, 3, 0, *UTS_ROOT)),
]


def check(program: ir.Program, task: str, args: tuple[Any, ...]) -> None:
    """The default plan through the API on every schedule, the other plans directly on
    a few: reducers (and a returned value) as the sequential reference's, statistics as
    the numba back end's (whose statistics do not depend on its split mode)."""
    ref = run_loaded(program, task, args, variant="seq")
    expected = {}
    for variant, b, r in SCHEDULES:
        where = (task, variant, b, r)
        got = run_loaded(program, task, args, variant=variant, block_size=b,
                         reexp_threshold=r, backend="numpy")
        assert got.backend == "numpy"
        assert ref.reducers.keys() == got.reducers.keys()
        assert same(ref.reducers, got.reducers), (*where, got.reducers, ref.reducers)
        if ref.has_result:
            assert close(ref.result, got.result), (*where, got.result)
        numba = run_loaded(program, task, args, variant=variant, block_size=b,
                           reexp_threshold=r, backend="numba").stats
        for k in STATS:
            assert getattr(got.stats, k) == getattr(numba, k), (*where, k)
        expected[variant, b, r] = numba
    rargs = root_args(program, task, args)
    t = program.tasks[task]
    for target, compaction in OTHER_PLANS:
        built = NumpyTask(program, task, compaction, target)
        assert built.plan.target.name == target
        assert built.plan.split_mode == ("scalar" if compaction else "vector")
        for variant, b, r in SHORT:
            at = (task, target, compaction, variant, b, r)
            values, stats = built.run(rargs, Schedule.make(variant, b, r))
            assert same(ref.reducers, {k: values[k] for k in ref.reducers}), at
            if t.result is not None:
                assert close(ref.result, values[t.result]), at
            for k in STATS:
                assert getattr(stats, k) == getattr(expected[variant, b, r], k), (*at, k)


@pytest.mark.parametrize("name,args", BENCHMARKS, ids=[b[0] for b in BENCHMARKS])
def test_benchmarks(name: str, args: tuple[Any, ...]) -> None:
    check(get_program(BENCH / f"{name}.py"), name, args)


@pytest.mark.parametrize("file,task,args", PROGRAMS, ids=[f"{p[0]}:{p[1]}" for p in PROGRAMS])
def test_programs(file: str, task: str, args: tuple[Any, ...]) -> None:
    check(get_program(HERE / "programs" / file), task, args)


@pytest.mark.parametrize("file,task,args", CILK, ids=[c[0] for c in CILK])
def test_cilk_programs(file: str, task: str, args: tuple[Any, ...]) -> None:
    check(get_program(BENCH / "cilk" / file), task, args)


# A program through the corners of the statement and expression interpretation: helper
# calls with loops (a negative step), continue, break and early returns, unpacking, a
# short circuit guarding an out-of-bounds index, negative indices, floor division and
# modulo of negative values, float32 math, unsigned wraparound, bool / min / max
# reducers, a while loop with continue and break around conditional spawns (thread by
# thread, a data-dependent number of child blocks) and an early task return.
CORNERS = """
import numpy as np

from revec import Reducer, reduce, spawn, task

T = np.array([3, -1, 4, 1, -5, 9, 2, -6], dtype=np.int16)
M = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.uint8)

total = Reducer(np.int64, "sum")
low = Reducer(np.int32, "min")
high = Reducer(np.float64, "max")
fsum = Reducer(np.float64, "sum")
anyodd = Reducer(np.bool_, "sum")
wraps = Reducer(np.uint8, "sum")


def pick(a: np.int32, b: np.int32):
    s = np.int32(0)
    for i in range(a, -1, -1):
        if i % 3 == 0:
            continue
        s = s + np.int32(i)
        if s > b:
            break
    if s > 10:
        return s, np.int32(1)
    return s - b, np.int32(0)


@task
def corners(d: np.int8 = 8, x: np.int32 = 4, y: np.uint8 = 250, z: np.float32 = 1.5):
    if d <= 0:
        i = x % 8
        if i < 0 and T[i + 8] > 0:
            reduce(total, 1000)
        reduce(total, T[-1 - i] if i != 0 else np.int16(x // (i + 1)))
        reduce(low, x // -3)
        reduce(high, np.float64(z) * 0.5 - x % -4)
        reduce(fsum, np.float64(np.sqrt(np.abs(z)) + np.float32(0.25)))
        reduce(anyodd, (x & 1) == 1)
        reduce(wraps, y + np.uint8(7))
    else:
        a, b = pick(x, np.int32(d) * 2)
        k = 0
        while k < 3:
            k += 1
            if (x + k) % 4 == 0:
                continue
            if b == 1 and k == 2:
                break
            if M[d % 2, k % 3] > 2:
                spawn(corners, d - 1, a + x * k, y + np.uint8(k), z * np.float32(1.5))
        if x % 5 == 0:
            return
        spawn(corners, d - 2, x - 1, y ^ np.uint8(255), -z)
"""


def test_statement_and_expression_corners(write_program: Any) -> None:
    program = get_program(write_program(CORNERS, "corners.py"))
    plan = BACKEND.build(program, "corners").plan
    assert isinstance(plan.step(kp.ThreadSpawns), kp.ThreadSpawns)
    for args in ((), (8, 1), (6, 3)):
        check(program, "corners", args)


def test_a_tree_deeper_than_the_recursion_limit() -> None:
    """No host recursion per tree level: 15,000 levels (above the interpreter's own
    recursion limit of 12,000) in blocked mode, one or two threads per block."""
    program = get_program(HERE / "programs" / "deep.py")
    got = run_loaded(program, "spine", (15_000,), variant="reexp", block_size=4,
                     backend="numpy")
    assert numpy_backend.RECURSION_LIMIT < 15_000
    assert got.reducers == {"nodes": 20_001, "weight": 15_000 * 15_001 // 2,
                            "deepest": 15_000}
    assert got.stats.levels == 15_001


@pytest.mark.slow
def test_a_tree_100000_levels_deep() -> None:
    """DESIGN.md section 3: trees 100,000 levels deep run (about 30 s per schedule)."""
    program = get_program(HERE / "programs" / "deep.py")
    for variant in ("bfs", "blocked", "reexp"):
        got = run_loaded(program, "spine", (100_000,), variant=variant, block_size=4,
                         backend="numpy")
        assert got.reducers == {"nodes": 133_334, "weight": 5_000_050_000,
                                "deepest": 100_000}
        numba = run_loaded(program, "spine", (100_000,), variant=variant, block_size=4,
                           backend="numba")
        for k in STATS:
            assert getattr(got.stats, k) == getattr(numba.stats, k), (variant, k)


# ------------------------------------------------------------------ the back end's face
def test_registry_protocol() -> None:
    program = get_program(BENCH / "nqueens.py")
    assert (BACKEND.name, BACKEND.suffix, BACKEND.unavailable()) == ("numpy", ".txt", None)
    text = BACKEND.generate(program, "nqueens")
    assert kp.build_plan(program, "nqueens", "vector", numpy_backend.DEFAULT_TARGET
                         ).render() in text
    assert "split mode: scalar" in BACKEND.generate(program, "nqueens", "scalar")
    with pytest.raises(RevecError, match="unknown compaction"):
        BACKEND.build(program, "nqueens", "fancy")


def test_workers_run_as_one() -> None:
    program = get_program(BENCH / "fib.py")
    one = run_loaded(program, "fib", (10,), variant="reexp", block_size=3, backend="numpy")
    two = run_loaded(program, "fib", (10,), variant="reexp", block_size=3, backend="numpy",
                     workers=2)
    assert two.reducers == one.reducers == {"count": 55}
    assert two.stats.workers == 1 and two.stats.blocks == one.stats.blocks


def test_memory_budget() -> None:
    program = get_program(BENCH / "fib.py")
    with pytest.raises(MemoryBudgetError):
        run_loaded(program, "fib", (16,), variant="bfs", backend="numpy", max_memory=100)
    got = run_loaded(program, "fib", (16,), variant="bfs", backend="numpy",
                     max_memory=10_000)
    assert got.reducers == {"count": 987}


# ------------------------------------------------------------------ a plan it does not know
def run_plan(plan: kp.KernelPlan, program: ir.Program, args: tuple[Any, ...]
             ) -> dict[str, Any]:
    built = BACKEND.build(program, plan.task)
    built.plan = plan
    values, _ = built.run(root_args(program, plan.task, args), Schedule.make("reexp", 3))
    return values


def test_an_unknown_step_is_named() -> None:
    @dataclasses.dataclass(frozen=True)
    class Prefetch(kp.Step):
        pass

    program = get_program(BENCH / "fib.py")
    plan = BACKEND.build(program, "fib").plan
    odd = dataclasses.replace(plan, steps=(Prefetch("0.prefetch"), *plan.steps))
    with pytest.raises(AssertionError, match="unknown kernel plan step '0.prefetch'"):
        run_plan(odd, program, (5,))


def test_a_step_reads_only_what_the_plan_gives_it() -> None:
    """The split's mask reads ``n``: a plan whose split claims to read nothing fails
    (the interpreter takes the columns from the plan, not from the IR)."""
    program = get_program(BENCH / "fib.py")
    plan = BACKEND.build(program, "fib").plan
    assert run_plan(plan, program, (10,)) == {"count": 55}
    split = plan.step(kp.Split)
    assert isinstance(split, kp.Split)
    blind = dataclasses.replace(split, reads=())
    odd = dataclasses.replace(plan, steps=tuple(blind if s is split else s
                                                for s in plan.steps))
    with pytest.raises(AssertionError, match="variable 'n' is read but the plan does not"):
        run_plan(odd, program, (10,))


def test_the_plan_decides_what_is_stored() -> None:
    """A store-reducers step that stores nothing leaves the reducers at their
    identities."""
    program = get_program(BENCH / "fib.py")
    plan = BACKEND.build(program, "fib").plan
    odd = dataclasses.replace(plan, steps=tuple(
        dataclasses.replace(s, reducers=()) if isinstance(s, kp.StoreReducers) else s
        for s in plan.steps))
    assert run_plan(odd, program, (10,)) == {"count": 0}


def test_a_loop_carries_only_its_state_columns() -> None:
    """Phase B of a lock-step loop sees the active list's state columns, nothing else:
    a plan whose state leaves out ``free`` fails where the body reads it."""
    program = get_program(BENCH / "nqueens.py")
    plan = BACKEND.build(program, "nqueens").plan
    assert run_plan(plan, program, (5,)) == {"solutions": 10}

    def without_free(s: kp.Step) -> kp.Step:
        state = tuple(c for c in getattr(s, "state", ()) if c.name != "free")
        if isinstance(s, kp.LoopPrefix):
            return dataclasses.replace(s, state=state)
        if isinstance(s, kp.LoopIterate):
            return dataclasses.replace(s, state=state,
                                       updated=tuple(u for u in s.updated if u != "free"))
        return s

    odd = dataclasses.replace(plan, steps=tuple(without_free(s) for s in plan.steps))
    with pytest.raises(AssertionError, match="variable 'free' is read but the plan does not"):
        run_plan(odd, program, (5,))


def test_a_wrong_uniform_claim_is_caught() -> None:
    """A plan that calls a varying field level-uniform (binomial's ``k``: its spawns pass
    ``k - 1`` and ``k``): the interpreter checks the claim on the blocks it makes."""
    program = get_program(BENCH / "binomial.py")
    plan = BACKEND.build(program, "binomial").plan
    k = next(c for c in plan.columns if c.name == "k")

    def drop(cols: tuple[kp.Column, ...]) -> tuple[kp.Column, ...]:
        return tuple(c for c in cols if c is not k)

    def claim(s: kp.Step) -> kp.Step:
        match s:
            case kp.UniformLoad():
                return dataclasses.replace(s, columns=(*s.columns, k))
            case kp.Split():
                return dataclasses.replace(
                    s, reads=drop(s.reads),
                    base=dataclasses.replace(s.base, columns=drop(s.base.columns)),
                    inductive=dataclasses.replace(s.inductive,
                                                  columns=drop(s.inductive.columns)))
            case kp.BaseCase() | kp.StraightSpawns():
                return dataclasses.replace(s, reads=drop(s.reads))
        return s

    odd = dataclasses.replace(plan, uniform=(*plan.uniform, k),
                              steps=tuple(claim(s) for s in plan.steps))
    with pytest.raises(AssertionError, match="level-uniform field 'k' differs"):
        run_plan(odd, program, (8, 3))


def test_exact_types() -> None:
    """Each expression's values have the IR's dtype; a wrapping sum stays in its type."""
    from revec.backends.numpy_eval import Evaluator, Lanes
    from revec.errors import SourceLoc

    loc = SourceLoc("x", 1, 1)
    u8 = ir.Ty(np.dtype(np.uint8))
    e = ir.BinOp(loc, u8, "+", ir.Var(loc, u8, "a"), ir.Const(loc, u8, 10))
    env = {"a": np.array([250, 5], np.uint8)}
    got = Evaluator(get_program(BENCH / "fib.py")).expr(e, Lanes(env, np.arange(2)))
    assert got.dtype == np.uint8 and got.tolist() == [4, 15]
    bad = ir.BinOp(loc, ir.Ty(np.dtype(np.int16)), "+", ir.Var(loc, u8, "a"),
                   ir.Const(loc, u8, 1))
    with pytest.raises(AssertionError, match="the IR says int16"):
        Evaluator(get_program(BENCH / "fib.py")).expr(bad, Lanes(env, np.arange(2)))

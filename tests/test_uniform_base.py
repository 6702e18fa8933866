"""uniform_base and base_fold (revec/transforms/kernel_plan.py, ``uniform_decision`` and
``fold_decision``; on by default on the C back end, REVEC_PLAN_OFF turns each off): an
is-base test that reads only level-uniform and invariant fields (knapsack's ``i == n``) is
decided once per block and the block's columns are read in place (a copy only in bfs
mode, where the children overwrite the block, or where the kernel grows its columns);
a base case of reductions under conditions runs as one branch-free loop of masked
partials.  Neither may change a result or a statistic: every schedule below runs with
each technique on and off and must agree with the plain-Python run and with itself."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from revec import api
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule

ROOT = Path(__file__).parent.parent
BENCH = ROOT / "benchmarks"
STATS = ("tasks", "leaves", "levels", "blocks", "utilization", "reexpansions", "peak_live",
         "tasks_per_level", "leaves_per_level", "reexpansions_per_level",
         "reexp_growth_per_level")
# bfs (the children overwrite the block: the inductive side reads a copy), blocked and
# re-expansion (in place), blocks of 32 threads and more and partial ones
SCHEDULES = [("bfs", None, None, 4), ("blocked", 64, None, 4), ("reexp", 64, 64, 4),
             ("reexp", 40, 20, 3)]
HAS_GCC = shutil.which("gcc") is not None


def test_chosen_for_knapsack_not_fib() -> None:
    knap = kp.build_plan(api.get_program(BENCH / "knapsack.py"), "knapsack", off=frozenset())
    split, base = knap.step(kp.Split), knap.step(kp.BaseCase)
    assert isinstance(split, kp.Split) and isinstance(base, kp.BaseCase)
    assert split.once and split.in_place and split.inductive_copy == "bfs"
    assert not any(x.name.startswith("b_") for x in knap.scratch), "base read in place"
    assert base.fold is not None
    # knapsack's int64 max of an int32 column: the partial stays 32-bit
    assert [(p.reducer, p.op, p.ty.dtype.name) for p in base.fold.partials] == \
        [("best", "max", "int32")]
    assert "uniform_base" in knap.render() and "base_fold" in knap.render()
    fib = kp.build_plan(api.get_program(BENCH / "fib.py"), "fib", off=frozenset())
    split, base = fib.step(kp.Split), fib.step(kp.BaseCase)
    assert isinstance(split, kp.Split) and isinstance(base, kp.BaseCase)
    assert not split.once and not split.in_place and base.fold is None
    copies = {}
    for name, path, task in (("nqueens", BENCH / "nqueens.py", "nqueens"),
                             ("returns_widen", ROOT / "tests" / "programs" /
                              "returns_widen.py", "f")):
        split = kp.build_plan(api.get_program(path), task, off=frozenset()).step(kp.Split)
        assert isinstance(split, kp.Split) and split.once
        copies[name] = split.inductive_copy
    assert copies == {"nqueens": "never", "returns_widen": "always"}
    # switched off
    off = kp.build_plan(api.get_program(BENCH / "knapsack.py"), "knapsack",
                        off=frozenset({"uniform_base", "base_fold"}))
    split, base = off.step(kp.Split), off.step(kp.BaseCase)
    assert isinstance(split, kp.Split) and isinstance(base, kp.BaseCase)
    assert not split.once and base.fold is None
    assert "switched off" in off.uniform_note and "switched off" in off.fold_note
    # the numba target: the same decisions (its kernels follow them, numba_codegen.py)
    nb = kp.build_plan(api.get_program(BENCH / "knapsack.py"), "knapsack", target="numba",
                       off=frozenset())
    split, base = nb.step(kp.Split), nb.step(kp.BaseCase)
    assert isinstance(split, kp.Split) and split.once and split.inductive_copy == "bfs"
    assert isinstance(base, kp.BaseCase) and base.fold is not None
    assert nb.uniform_note.startswith("on") and nb.fold_note.startswith("on")


# knapsack: once, in place (a copy in bfs), folded max; graphcol: the same with lane
# spawns; nqueens: once, a lock-step spawn loop that reads its columns before it writes a
# child and grows them (in place in every mode); returns_widen: once, thread-by-thread
# spawns into child blocks grown at run time (the inductive side always a copy); minmax:
# folded sums under conditions
PROGRAMS = {
    "knapsack": (BENCH / "knapsack.py", "knapsack", (3, 9)),
    "graphcol": (BENCH / "graphcol.py", "graphcol", (8,)),
    "returns_widen": (ROOT / "tests" / "programs" / "returns_widen.py", "f", (7, 61, 1)),
    "nqueens": (BENCH / "nqueens.py", "nqueens", (6,)),
    "minmax": (BENCH / "minmax.py", "minmax", (0x8063, 0x1608, False)),
}


@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_results_and_stats_identical_on_and_off(name: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path, task, args = PROGRAMS[name]
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    want = api.run_program(path, task, args, variant="seq").reducers
    built: dict[str, Any] = {}
    for off in ("", "uniform_base,base_fold"):
        monkeypatch.setenv(kp.PLAN_OFF_ENV, off)
        built[off] = api.compiled_task(program, task, "c")
    assert built["uniform_base,base_fold"].plan.step(kp.BaseCase).fold is None
    on = built[""].plan
    assert on.step(kp.Split).once or on.step(kp.BaseCase).fold is not None
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        for workers in (1, 2):
            got = {}
            for off, ct in built.items():
                reducers, stats = ct.run(rargs, sched, workers=workers)
                where = (name, sched, off or "on", workers)
                assert {k: v for k, v in reducers.items() if k in want} == want, where
                got[off] = {k: getattr(stats, k) for k in STATS}
            if workers == 1:
                assert got[""] == got["uniform_base,base_fold"], (name, sched)
            else:  # two workers: the counts of every level (the blocks may differ)
                for k in ("tasks", "leaves", "tasks_per_level", "leaves_per_level"):
                    assert got[""][k] == got["uniform_base,base_fold"][k], (name, sched, k)


# the numba kernels (numba_codegen.split_once / base_fold): knapsack (once, a copy in bfs,
# folded max); slow: nqueens (once, a lock-step loop read in place), minmax (folded sums
# under conditions), graphcol (once with lane spawns), returns_widen (the inductive side
# always a copy)
NUMBA_PROGRAMS = ["knapsack"] + [pytest.param(x, marks=pytest.mark.slow) for x in (
    "nqueens", "minmax", "graphcol", "returns_widen")]


@pytest.mark.parametrize("name", NUMBA_PROGRAMS)
def test_numba_results_and_stats_identical_on_and_off(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path, task, args = PROGRAMS[name]
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    want = api.run_program(path, task, args, variant="seq").reducers
    built: dict[str, Any] = {}
    for off in ("", "uniform_base,base_fold"):
        monkeypatch.setenv(kp.PLAN_OFF_ENV, off)
        built[off] = api.compiled_task(program, task, "numba")
    on = built[""].plan
    assert on.step(kp.Split).once or on.step(kp.BaseCase).fold is not None
    assert not built["uniform_base,base_fold"].plan.step(kp.Split).once
    assert built[""].source != built["uniform_base,base_fold"].source
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        for workers in (1, 2):
            got = {}
            for off, ct in built.items():
                reducers, stats = ct.run(rargs, sched, workers=workers)
                where = (name, sched, off or "on", workers)
                assert {k: v for k, v in reducers.items() if k in want} == want, where
                got[off] = {k: getattr(stats, k) for k in STATS}
            if workers == 1:
                assert got[""] == got["uniform_base,base_fold"], (name, sched)
            else:
                for k in ("tasks", "leaves", "tasks_per_level", "leaves_per_level"):
                    assert got[""][k] == got["uniform_base,base_fold"][k], (name, sched, k)

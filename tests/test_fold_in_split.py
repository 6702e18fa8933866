"""narrow_partials and fold_in_split (revec/transforms/kernel_plan.py,
``narrow_partials_decision`` and ``fold_in_split_decision``; on by default on the C and
numba back ends, REVEC_PLAN_OFF turns each off), and the bool blend with a constant side
(revec/emit/cexpr.py ``blend``).

A folded base case's sums of small values are kept per run of threads in 16-bit partials
(minmax's three leaf counts beside its 16-bit boards), and the fold is evaluated in the
split's lane loop for every thread, masked by the is-base test, so the split copies no
base thread and no base loop runs.  Neither may change a result or a statistic: every
schedule below runs with each switched on and off, with the vector and the scalar split,
and must agree with the plain-Python run and with itself."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from revec import api, ir
from revec.emit.cexpr import blend
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule

ROOT = Path(__file__).parent.parent
BENCH = ROOT / "benchmarks"
HAS_GCC = shutil.which("gcc") is not None
STATS = ("tasks", "leaves", "levels", "blocks", "utilization", "reexpansions", "peak_live",
         "tasks_per_level", "leaves_per_level", "reexpansions_per_level",
         "reexp_growth_per_level")
SCHEDULES = [("bfs", None, None, 4), ("blocked", 64, None, 4), ("reexp", 64, 64, 4),
             ("reexp", 40, 20, 3)]

# sums of +500 and -7 under conditions: 16-bit runs of 32767 // 500 = 65 steps of 32
# threads; in bfs the widest levels of tree(22) hold 7,000-13,000 threads, so the runs
# are widened inside one block (a flush at the wrong step would overflow the partial)
RUNS = '''
import numpy as np
from revec import Reducer, reduce, spawn, task

big = Reducer(np.int64, "sum")
small = Reducer(np.int64, "sum")


@task
def tree(n: np.int16, k: np.int16):
    if n < 2:
        if k % 8 != 0:
            reduce(big, 500)
        else:
            reduce(small, -7)
    else:
        spawn(tree, n - 1, k + 1)
        spawn(tree, n - 2, k + 3)
'''

# the base case's condition calls a helper the is-base test does not evaluate
CALLS = '''
import numpy as np
from revec import Reducer, reduce, spawn, task

hits = Reducer(np.int64, "sum")


def odd(v: np.int16) -> np.bool_:
    return v % 2 == 1


@task
def tree(n: np.int16, k: np.int16):
    if n < 2:
        if odd(k):
            reduce(hits, 1)
    else:
        spawn(tree, n - 1, k + 1)
        spawn(tree, n - 2, k + 3)
'''


def _program(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prog.py"
    path.write_text(text)
    return path


def _fold(plan: kp.KernelPlan) -> kp.BaseFold | None:
    base = plan.step(kp.BaseCase)
    assert isinstance(base, kp.BaseCase)
    return base.fold


def test_minmax_plan() -> None:
    program = api.get_program(BENCH / "minmax.py")
    plan = kp.build_plan(program, "minmax", off=frozenset())
    fold = _fold(plan)
    assert fold is not None and fold.in_split and fold.run == 32767
    assert {p.reducer: p.run_ty for p in fold.partials} == {
        r: ir.Ty(np.dtype("int16")) for r in ("owins", "xwins", "draws")}
    split = plan.step(kp.Split)
    assert isinstance(split, kp.Split) and split.base.columns == ()
    assert not any(x.name.startswith("b_") for x in plan.scratch), "no base copies"
    text = plan.render()
    assert "narrow partials (narrow_partials): on" in text
    assert "base case in the split (fold_in_split): on" in text
    # narrow_partials off: no runs, and no fold in the split (64-bit lane partials)
    plan = kp.build_plan(program, "minmax", off=frozenset({"narrow_partials"}))
    no_runs = _fold(plan)
    assert no_runs is not None and not no_runs.in_split and no_runs.run == 0
    assert all(p.run_ty is None for p in no_runs.partials)
    assert "no narrow run type" in plan.fold_in_split_note
    no_split = kp.build_plan(program, "minmax", off=frozenset({"fold_in_split"}))
    fold = _fold(no_split)
    assert fold is not None and not fold.in_split and fold.run == 32767
    assert "switched off" in no_split.fold_in_split_note
    assert any(x.name.startswith("b_") for x in no_split.scratch)
    # the numba target: both (numba_codegen.base_fold's runs, split_fold), each switched
    # off by REVEC_PLAN_OFF as on C; with the scalar split (index lists) runs only
    nb = _fold(kp.build_plan(program, "minmax", target="numba", off=frozenset()))
    assert nb is not None and nb.in_split and nb.run == 32767
    nb = _fold(kp.build_plan(program, "minmax", target="numba",
                             off=frozenset({"fold_in_split"})))
    assert nb is not None and not nb.in_split and nb.run == 32767
    nb = _fold(kp.build_plan(program, "minmax", "scalar", target="numba", off=frozenset()))
    assert nb is not None and not nb.in_split and nb.run == 32767
    # the numpy back end interprets narrow partials (its sums are 64-bit anyway) but not
    # the fold in the split
    from revec.backends.numpy_backend import NOT_INTERPRETED
    assert "fold_in_split" in NOT_INTERPRETED


def test_where_not_applied(tmp_path: Path) -> None:
    # knapsack's fold is a max: no runs, not in the split
    knap = kp.build_plan(api.get_program(BENCH / "knapsack.py"), "knapsack", off=frozenset())
    fold = _fold(knap)
    assert fold is not None and not fold.in_split and fold.run == 0
    assert knap.narrow_partials_note.startswith("not applied")
    # a condition calling a helper the is-base test does not evaluate: runs, not in split
    calls = kp.build_plan(api.get_program(_program(tmp_path, CALLS)), "tree",
                          off=frozenset())
    fold = _fold(calls)
    assert fold is not None and not fold.in_split and fold.run == 32767
    assert "reads memory or calls" in calls.fold_in_split_note


def test_run_length_from_the_values(tmp_path: Path) -> None:
    # (leaf inlining, on by default for this fib-like tree, counts the base threads
    # instead of the vector split: only the root block could have any)
    plan = kp.build_plan(api.get_program(_program(tmp_path, RUNS)), "tree",
                         off=frozenset({"leaf_inline"}))
    fold = _fold(plan)
    assert fold is not None and fold.in_split and fold.run == 32767 // 500


def test_bool_blend_with_a_constant_side() -> None:
    b = ir.Ty(np.dtype("bool"))
    # (then, else) -> the emitted form, and that form over 0/1 values in Python
    forms = {("1", "v"): ("((uint8_t)((v) | c))", lambda c, v: v | c),
             ("0", "v"): ("((uint8_t)((v) & !c))", lambda c, v: v & (1 - c)),
             ("v", "(1)"): ("((uint8_t)((v) | !c))", lambda c, v: v | (1 - c)),
             ("v", "0"): ("((uint8_t)((v) & c))", lambda c, v: v & c)}
    for (then, other), (text, form) in forms.items():
        assert blend("c", then, other, b) == text
        for c in (0, 1):  # the same truth table as c ? then : else
            for v in (0, 1):
                value = {"v": v, "1": 1, "(1)": 1, "0": 0}
                assert form(c, v) == (value[then] if c else value[other]), (then, other, c, v)
    assert blend("c", "x", "y", b) == "((uint8_t)(((x) & c) | ((y) & !c)))"


CASES = {
    "minmax": (BENCH / "minmax.py", "minmax", (0x8063, 0x1608, False), ""),
    "runs": (None, "tree", (22, 0), "leaf_inline"),
}


@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
def test_runs_widened_within_a_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default suite's check (two builds): both on against both off."""
    _identical("runs", tmp_path, monkeypatch, ("", "narrow_partials,fold_in_split"),
               ("table",), SCHEDULES[::3], (1,))


def test_numba_runs_widened_within_a_block(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The numba back end (numba_codegen.split_fold, and base_fold's runs with
    fold_in_split off) against both off, in bfs (runs widened inside one block) and
    reexp."""
    _identical("runs", tmp_path, monkeypatch,
               ("", "fold_in_split", "narrow_partials,fold_in_split"),
               ("table",), SCHEDULES[::3], (1,), backend="numba")


@pytest.mark.slow
@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
@pytest.mark.parametrize("name", sorted(CASES))
def test_results_and_stats_identical_on_and_off(name: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _identical(name, tmp_path, monkeypatch, ("", "fold_in_split", "narrow_partials",
                                             "narrow_partials,fold_in_split"),
               ("table", "scalar"), SCHEDULES, (1, 2))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_numba_results_and_stats_identical_on_and_off(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _identical(name, tmp_path, monkeypatch, ("", "fold_in_split", "narrow_partials",
                                             "narrow_partials,fold_in_split"),
               ("table", "scalar"), SCHEDULES, (1, 2), backend="numba")


def _identical(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               offs: tuple[str, ...], compactions: tuple[str, ...],
               schedules: list[tuple[str, int | None, int | None, int]],
               workers_: tuple[int, ...], backend: str = "c") -> None:
    path, task, args, always_off = CASES[name]
    path = path or _program(tmp_path, RUNS)
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    want = api.run_program(path, task, args, variant="seq").reducers
    built: dict[tuple[str, str], Any] = {}
    for off in offs:
        monkeypatch.setenv(kp.PLAN_OFF_ENV, ",".join(x for x in (off, always_off) if x))
        for compaction in compactions:
            built[off, compaction] = api.compiled_task(program, task, backend, compaction)
    assert _fold(built["", "table"].plan).in_split  # type: ignore[union-attr]
    for strategy, b, r, p in schedules:
        sched = Schedule.make(strategy, b, r, p)
        for workers in workers_:
            got = {}
            for key, ct in built.items():
                reducers, stats = ct.run(rargs, sched, workers=workers)
                assert {k: v for k, v in reducers.items() if k in want} == want, (key, sched)
                got[key] = {k: getattr(stats, k) for k in STATS}
            ref = got["narrow_partials,fold_in_split", "table"]
            for key, st in got.items():
                if workers == 1:
                    assert st == ref, (name, sched, key)
                else:  # two workers: the counts of every level (the blocks may differ)
                    for k in ("tasks", "leaves", "tasks_per_level", "leaves_per_level"):
                        assert st[k] == ref[k], (name, sched, key, k)

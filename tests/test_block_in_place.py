"""Blocks in place (technique ``block_in_place``, revec/transforms/kernel_plan.py
``prepass_decision``; on by default on the C and numba back ends,
REVEC_PLAN_OFF=block_in_place off): before a vector split, one pass over the is-base test
(32 threads per step, the masks stored); a block whose threads all agree is read in place
instead of split into copies, a mixed block is split on the stored masks (numba: the
split's own mask pass, its bytes ORed and ANDed).  Results and every statistic are the
same on and off.

Also the grouped compaction steps (c_codegen.group_steps): consecutive steps of several
columns under one mask share the mask's control, one per width (AVX2: one pshufb control
per 32 lanes of 8 bits, two of 16 bits)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from revec import api
from revec.backends.c_codegen import group_steps
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule, trace
from tests.test_leaf_inlining import STATS, per_level
from tests.test_schedule_policy import task_tree

ROOT = Path(__file__).parent.parent
NONE: frozenset[str] = frozenset()
HAS_GCC = shutil.which("gcc") is not None
SCHEDULES = [("bfs", None, None, 4), ("blocked", 64, None, 4), ("reexp", 64, 64, 4),
             ("reexp", 40, 16, 4)]


def _split(plan: kp.KernelPlan) -> kp.Split:
    s = plan.step(kp.Split)
    assert isinstance(s, kp.Split)
    return s


def test_decision() -> None:
    par = api.get_program(ROOT / "benchmarks" / "parentheses.py")
    on = kp.build_plan(par, "parentheses", off=NONE)
    assert _split(on).prepass and _split(on).inductive_copy == "bfs"
    assert "blocks in place (block_in_place): on:" in on.render()
    # a cheap test (no call, no memory read): lane-wise any / all, evaluated again by
    # the split of a mixed block; one that calls a helper: the pass stores its masks
    assert not _split(on).prepass_store and "any / all (a mixed first step" in on.render()
    # (minmax by default folds its base case in the split, fold_in_split: no base
    # copies for the pass to save, not applied; with that off, the stored form)
    mm_prog = api.get_program(ROOT / "benchmarks" / "minmax.py")
    mm = kp.build_plan(mm_prog, "minmax", off=frozenset({"fold_in_split"}))
    assert _split(mm).prepass and _split(mm).prepass_store
    assert "first: the mask, 32 threads per step, stored" in mm.render()
    folded = kp.build_plan(mm_prog, "minmax", off=NONE)
    assert not _split(folded).prepass
    assert "block_in_place): not applied: the base case is folded in the split" \
        in folded.render()
    off = kp.build_plan(par, "parentheses", off=frozenset({"block_in_place"}))
    assert not _split(off).prepass and "block_in_place): switched off" in off.render()
    # numba: the split's mask pass stores its masks whatever the test (ORed and ANDed)
    numba = kp.build_plan(par, "parentheses", target="numba", off=NONE)
    assert _split(numba).prepass and _split(numba).prepass_store
    assert _split(numba).inductive_copy == "bfs"
    assert "first: the mask, 32 threads per step, stored" in numba.render()
    assert "blocks in place (block_in_place): on:" in numba.render()
    nb_off = kp.build_plan(par, "parentheses", target="numba",
                           off=frozenset({"block_in_place"}))
    assert not _split(nb_off).prepass and "block_in_place): switched off" in nb_off.render()
    nb_mm = kp.build_plan(mm_prog, "minmax", target="numba", off=NONE)
    assert not _split(nb_mm).prepass or not any(
        isinstance(st, kp.BaseCase) and st.fold is not None and st.fold.in_split
        for st in nb_mm.steps), "block_in_place where the base case is folded in the split"
    # a scalar split keeps arena indices for a side reading three or more columns
    nq = api.get_program(ROOT / "benchmarks" / "nqueens_board.py")
    assert not _split(kp.build_plan(nq, "nqueens_board", "scalar", off=NONE)).prepass
    # uniform_base decides the block with one test; leaf inlining as one pass counts
    nqueens = api.get_program(ROOT / "benchmarks" / "nqueens.py")
    assert not _split(kp.build_plan(nqueens, "nqueens", off=NONE)).prepass
    fib = api.get_program(ROOT / "benchmarks" / "fib.py")
    assert not _split(kp.build_plan(fib, "fib", off=NONE)).prepass
    assert _split(kp.build_plan(fib, "fib", off=frozenset({"leaf_inline"}))).prepass


def test_group_steps() -> None:
    lines = ["    RV_STEP8((const uint8_t *)(p_a + off + t), (uint8_t *)qp_a, ni, ~bits);",
             "    RV_STEP8((const uint8_t *)(p_b + off + t), (uint8_t *)qp_b, ni, ~bits);",
             "    RV_STEP8((const uint8_t *)(p_c + off + t), (uint8_t *)bp_c, nb, bits);",
             "    RV_STEP16((const uint16_t *)(p_d + off + t), (uint16_t *)bp_d, nb, bits);"]
    out = group_steps(lines)
    text = "\n".join(out)
    # the first two share one mask and index: one control, two applications
    assert text.count("rv_gctrl8(g_)") == 1 and text.count("rv_gapply8(") == 2
    assert "rv_gapply8(((const uint8_t *)(p_b + off + t)), ((uint8_t *)qp_b), (ni), gc8_);" \
        in text
    # another mask, one column of each width: left as they are
    assert out[-2:] == lines[2:]
    assert group_steps(lines[2:]) == lines[2:]
    # 16-bit staged steps (a spawn loop's state) and an 8-bit one under one mask: one
    # control per width, the staged copies and applications kept staged
    loop = ["  RV_LSTEP16((const uint16_t *)x_v_x, (uint16_t *)sc_v_x, na, b);",
            "  RV_LSTEP16((const uint16_t *)x_v_o, (uint16_t *)sc_v_o, na, b);",
            "  RV_STEP8((const uint8_t *)x_v_m, (uint8_t *)sc_v_m, na, b);",
            "  RV_STEP32((const uint32_t *)x_v_h, (uint32_t *)sc_v_h, na, b);",
            "  na += __builtin_popcount(b);"]
    # (a 32-bit step ends the group: 32 bits are not grouped)
    assert group_steps(loop)[:2] == loop[:2]  # (RV_LSTEP16: only in staged kernels)
    text = "\n".join(group_steps(loop, staged=True))
    assert "one mask, 3 columns" in text and text.count("rv_gctrl16(g_)") == 1
    assert text.count("rv_lgapply16(") == 2 and text.count("RV_LCOPY32(16,") == 2
    assert "rv_gapply8(((const uint8_t *)x_v_m), ((uint8_t *)sc_v_m), (na), gc8_);" in text
    assert text.endswith("\n".join(loop[-2:]))


def built_pair(monkeypatch: pytest.MonkeyPatch, program: Any, task: str,
               extra_off: str = "", marker: str = "", backend: str = "c") -> dict[str, Any]:
    """The compiled task as is ("") and with block_in_place switched off."""
    built = {}
    for off in ("", "block_in_place"):
        monkeypatch.setenv(kp.PLAN_OFF_ENV, ",".join(x for x in (off, extra_off) if x))
        monkeypatch.setenv(kp.PLAN_ON_ENV, "")
        built[off] = api.compiled_task(program, task, backend)
    assert "block_in_place: the is-base" in built[""].source and marker in built[""].source
    assert "block_in_place" not in built["block_in_place"].source
    return built


def check_identical(monkeypatch: pytest.MonkeyPatch, path: Path, task: str,
                    args: tuple[Any, ...], extra_off: str = "", marker: str = "",
                    backend: str = "c") -> None:
    kids = task_tree(path, task, args)
    want_reducers = api.run_program(path, task, args, variant="seq").reducers
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    built = built_pair(monkeypatch, program, task, extra_off, marker, backend)
    want_tasks, _ = per_level(kids)
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        got = {}
        for off, ct in built.items():
            reducers, stats = ct.run(rargs, sched)
            assert reducers == want_reducers, (sched, off)
            assert stats.tasks_per_level == want_tasks, (sched, off)
            got[off] = {k: getattr(stats, k) for k in STATS}
            # two and three workers: the same answer and tree
            for w in (2, 3):
                reducers, stats = ct.run(rargs, sched, workers=w)
                assert reducers == want_reducers and stats.tasks_per_level == want_tasks, \
                    (sched, off, w)
        assert got[""] == got["block_in_place"], sched


@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
def test_identical_on_and_off(monkeypatch: pytest.MonkeyPatch) -> None:
    # parentheses: every block all base (depth 2n) or all inductive; bfs reads a copy
    check_identical(monkeypatch, ROOT / "benchmarks" / "parentheses.py", "parentheses", (6,),
                    marker="pany[u] |= isb")


@pytest.mark.slow
@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
def test_identical_on_and_off_mixed(monkeypatch: pytest.MonkeyPatch) -> None:
    # fib without leaf inlining: blocks of base and inductive threads mixed
    check_identical(monkeypatch, ROOT / "benchmarks" / "fib.py", "fib", (14,), "leaf_inline")


@pytest.mark.slow
@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
def test_identical_on_and_off_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    # minmax: an is-base test calling a helper, the pass stores its masks; mixed blocks
    # are split on them (4 x 4 tic-tac-toe after 9 moves: 7 empty cells)
    # (with fold_in_split off: folded in the split, it does not apply)
    check_identical(monkeypatch, ROOT / "benchmarks" / "minmax.py", "minmax",
                    (0x0163, 0x0A08, False), "fold_in_split", marker="pm[(uint64_t)t / 32]")


# numba: the pass is the split's mask pass (masks stored, ORed and ANDed); all base / all
# inductive blocks read in place through ptr_add, bfs reads a copy (copy_n)
NUMBA_MARK = "pall = pall & _isb"


def test_numba_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    # parentheses: every block all base (depth 2n) or all inductive; bfs reads a copy.
    # One numba build (default suite: a numba compile is seconds), its answer and every
    # statistic those of the schedule itself (revec.transforms.schedule.trace), as with
    # block_in_place off (test_identical_on_and_off_parentheses_numba, -m slow)
    path = ROOT / "benchmarks" / "parentheses.py"
    kids = task_tree(path, "parentheses", (6,))
    want_reducers = api.run_program(path, "parentheses", (6,), variant="seq").reducers
    program = api.get_program(path)
    rargs = api.root_args(program, "parentheses", (6,))
    monkeypatch.setenv(kp.PLAN_OFF_ENV, "")
    monkeypatch.setenv(kp.PLAN_ON_ENV, "")
    ct = api.compiled_task(program, "parentheses", "numba")
    assert "block_in_place: the is-base" in ct.source and NUMBA_MARK in ct.source
    assert "q_opened = ptr_add(c_opened, off)" in ct.source  # read in place
    assert "copy_n(q_opened, ptr_add(c_opened, off), n)" in ct.source  # bfs: a copy
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        want = trace(sched, kids).statistics()
        for w in (1, 2):
            reducers, stats = ct.run(rargs, sched, workers=w)
            assert reducers == want_reducers, (sched, w)
            if w == 1:
                assert {k: getattr(stats, k) for k in STATS} == want, sched
            else:  # two workers: the same answer and tree
                assert stats.tasks_per_level == want["tasks_per_level"], (sched, w)


@pytest.mark.slow
def test_identical_on_and_off_parentheses_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    check_identical(monkeypatch, ROOT / "benchmarks" / "parentheses.py", "parentheses", (6,),
                    marker=NUMBA_MARK, backend="numba")


@pytest.mark.slow
def test_identical_on_and_off_mixed_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    # fib without leaf inlining: blocks of base and inductive threads mixed
    check_identical(monkeypatch, ROOT / "benchmarks" / "fib.py", "fib", (14,), "leaf_inline",
                    marker=NUMBA_MARK, backend="numba")


@pytest.mark.slow
def test_identical_on_and_off_stored_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    # minmax (a helper in the is-base test; its base case not folded in the split)
    check_identical(monkeypatch, ROOT / "benchmarks" / "minmax.py", "minmax",
                    (0x0163, 0x0A08, False), "fold_in_split", marker=NUMBA_MARK,
                    backend="numba")

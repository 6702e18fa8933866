"""Two techniques for a spawn loop whose lane body is heavy (it calls a library function:
uts's SHA-1), both on by default on the C back end.

Wide lane flags (technique ``wide_flags``, revec/transforms/kernel_plan.py
``wide_flags_decision``; on by default on the C back end, REVEC_PLAN_OFF=wide_flags off):
a spawn loop whose body calls a library function (uts's SHA-1) keeps its phase B lane
flags (loop condition, spawn masks and indices, lane conditions) as 32-bit ints, so gcc
vectorizes the heavy lane body by its 32-bit values instead of by byte flags.  The lane
loop computes the same values either way: results and every statistic are the same on
and off.  Its partial chunks run 32 lanes on copies of the active list's last thread,
stored after the list's end (contiguous loads, with the technique on or off).

Pressure-aware scheduling (technique ``sched_pressure``, ``sched_pressure_decision``):
the kernel function is compiled with gcc's scheduling before register allocation,
register-pressure aware (an ``optimize`` attribute): the same code, scheduled
differently."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from revec import api
from revec.backends import registry
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule

ROOT = Path(__file__).resolve().parent.parent
UTS = ROOT / "benchmarks" / "uts.py"
NONE: frozenset[str] = frozenset()
HAS_GCC = shutil.which("gcc") is not None

# uts with an 8-bit column: the lane loop's vectorization factor is the byte's anyway
NARROW = '''
import numpy as np
from revec import Reducer, reduce, spawn, task
from revec.lib import sha1_spawn

nodes = Reducer(np.int64, "sum")


@task
def walk(d: np.int8 = 3, h0: np.uint32 = 1, h4: np.uint32 = 7):
    if d == 0:
        reduce(nodes, 1)
    else:
        reduce(nodes, 1)
        for i in range(np.int32(h4 & np.uint32(3))):
            c0, c1, c2, c3, c4 = sha1_spawn(h0, h0, h0, h0, h4, i)
            spawn(walk, d - 1, c0, c4)
'''


def test_wide_flags_decision(tmp_path: Path) -> None:
    uts = api.get_program(UTS)
    on = kp.build_plan(uts, "uts", off=NONE)
    assert on.wide_flags and "wide lane flags (wide_flags): on:" in on.render()
    off = kp.build_plan(uts, "uts", off=frozenset({"wide_flags"}))
    assert not off.wide_flags and "wide lane flags (wide_flags): switched off" in off.render()
    numba = kp.build_plan(uts, "uts", target="numba", off=NONE)
    # numba's spawn loop has no lane loop of C's kind (no LoopIterate with lanes): the
    # decision does not arise, and the plan says nothing of wide flags
    assert not numba.wide_flags and numba.wide_flags_note == ""
    assert "wide lane flags" not in numba.render()
    # a light loop body (no library call): byte flags, and its plan text says nothing
    nqueens = kp.build_plan(api.get_program(ROOT / "benchmarks" / "nqueens.py"),
                            "nqueens", off=NONE)
    assert not nqueens.wide_flags and "wide lane flags" not in nqueens.render()
    assert nqueens.wide_flags_note.startswith("not applied: the spawn loop's body calls no")
    path = tmp_path / "narrow.py"
    path.write_text(NARROW)
    narrow = kp.build_plan(api.get_program(path), "walk", off=NONE)
    assert not narrow.wide_flags and "(d:int8)" in narrow.wide_flags_note


def test_sched_pressure_decision() -> None:
    uts = api.get_program(UTS)
    on = kp.build_plan(uts, "uts", off=NONE)
    assert on.sched_pressure and "(sched_pressure): on:" in on.render()
    off = kp.build_plan(uts, "uts", off=frozenset({"sched_pressure"}))
    assert not off.sched_pressure and "(sched_pressure): switched off" in off.render()
    assert off.wide_flags  # the two are switched apart
    assert not kp.build_plan(uts, "uts", target="numba", off=NONE).sched_pressure
    nqueens = kp.build_plan(api.get_program(ROOT / "benchmarks" / "nqueens.py"),
                            "nqueens", off=NONE)
    assert not nqueens.sched_pressure and "sched_pressure" not in nqueens.render()
    with kp.plan_switches("", ""):
        src = registry.get("c").generate(uts, "uts")
    assert "RV_SCHED_PRESSURE static int64_t kernel(" in src
    with kp.plan_switches("sched_pressure", ""):
        assert "RV_SCHED_PRESSURE" not in registry.get("c").generate(uts, "uts")


def test_wide_flags_source() -> None:
    uts = api.get_program(UTS)
    src = {}
    for off in ("", "wide_flags"):
        with kp.plan_switches(off, ""):
            src[off] = registry.get("c").generate(uts, "uts")
    assert "uint32_t go[32];" in src[""] and "rv_bits32w(go)" in src[""]
    assert "rv_bits32w" not in src["wide_flags"]
    for s in src.values():  # the clamped chunk loads contiguously from the padded list
        assert "lanes - 1)" not in s and "sc_v_h0[z] = sc_v_h0[na - 1];" in s


STATS = ("tasks", "leaves", "levels", "blocks", "utilization", "reexpansions", "peak_live",
         "tasks_per_level", "leaves_per_level", "reexpansions_per_level",
         "reexp_growth_per_level")
TREE = ("tasks", "leaves", "levels", "tasks_per_level", "leaves_per_level")


@pytest.mark.slow
@pytest.mark.skipif(not HAS_GCC, reason="no gcc")
@pytest.mark.parametrize("technique", ["wide_flags", "sched_pressure"])
def test_identical_on_and_off(technique: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """uts's quick tree (1,732 nodes) on every variant, block sizes around the 32-lane
    chunk (partial chunks of fewer and more than 8 lanes) and 1-3 workers: the same
    reducers and statistics with the technique on and off (with 2 and 3 workers the
    tree's per-level counts: the blocks follow the steals' timing), and UTS's answer."""
    from revec.bench import answers
    from revec.bench.presets import preset

    p = preset("uts", "quick")
    want = answers.expected("uts", p.args)
    program = api.get_program(p.path)
    rargs = api.root_args(program, "uts", p.root_args)
    built = {}
    for off in ("", technique):
        monkeypatch.setenv(kp.PLAN_OFF_ENV, off)
        monkeypatch.setenv(kp.PLAN_ON_ENV, "")
        built[off] = api.compiled_task(program, "uts", "c")
    assert built[""].source != built[technique].source
    for strategy, b, r, w in [("bfs", 1 << 30, 0, 1), ("blocked", 9, 0, 1),
                              ("blocked", 40, 0, 2), ("reexp", 7, 3, 1),
                              ("reexp", 33, 20, 3), ("reexp", 300, 100, 2)]:
        sched = Schedule.make(strategy, b, r)
        got = {}
        for off, ct in built.items():
            reducers, stats = ct.run(rargs, sched, workers=w)
            assert {k: reducers[k] for k in want} == want, (sched, w, off)
            # (with work stealing the blocks follow the steals' timing: the tree's
            # per-level counts are what every run shares, as in tests/test_workers.py)
            got[off] = (reducers, {k: getattr(stats, k) for k in (STATS if w == 1 else TREE)})
        assert got[""] == got[technique], (sched, w)

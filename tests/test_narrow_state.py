"""A 32-bit loop counter (technique ``narrow_state``, revec/transforms/kernel_plan.py
``narrow_state_decision``; on by default on the numba back end, REVEC_PLAN_OFF=narrow_state
off): a lock-step ``for v in range(start, stop, +-1)`` spawn loop whose bounds fit in 32
bits by their types keeps ``v`` and its bound in 32-bit active-list columns, widened back
to int64 where the kernel loads them (LLVM vectorizes a loop by the widest type it loads
or stores: uts's SHA-1 ran 4 lanes per 128-bit register with int64 state on AVX2).
The values are the same: results and every statistic are the same on and off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from revec import api
from revec.backends import registry
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule

ROOT = Path(__file__).resolve().parent.parent
UTS = ROOT / "benchmarks" / "uts.py"
NONE: frozenset[str] = frozenset()

# a counter at the top of int32's range (it ends equal to the bound: 2^31 - 1 going
# up), its values passed on as int64 children and summed
EDGE = '''
import numpy as np
from revec import Reducer, reduce, spawn, task

total = Reducer(np.int64, "sum")
nodes = Reducer(np.int64, "sum")


@task
def walk(d: np.int64 = 3, i: np.int64 = 0, lo: np.int32 = 2147483644,
         hi: np.int32 = 2147483647):
    if d == 0:
        reduce(total, i)
    else:
        reduce(nodes, 1)
        for j in range(RANGE):
            spawn(walk, d - 1, j, lo, hi)
'''


def edge(tmp_path: Path, rng: str, name: str = "edge") -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(EDGE.replace("RANGE", rng))
    return path


def test_narrow_state_decision(tmp_path: Path) -> None:
    uts = api.get_program(UTS)
    on = kp.build_plan(uts, "uts", target="numba", off=NONE)
    assert on.narrow_state and "(narrow_state): on:" in on.render()
    assert "i:int32, _stop:int32" in on.render()
    off = kp.build_plan(uts, "uts", target="numba", off=frozenset({"narrow_state"}))
    assert not off.narrow_state and "(narrow_state): switched off" in off.render()
    assert "i:int64, _stop:int64" in off.render()
    c = kp.build_plan(uts, "uts", target="c", off=NONE)
    assert not c.narrow_state and "off by default on the c back end" in c.narrow_state_note
    # a while loop (no counter): nothing said in the plan text
    nq = kp.build_plan(api.get_program(ROOT / "benchmarks" / "nqueens.py"), "nqueens",
                       target="numba", off=NONE)
    assert not nq.narrow_state and "narrow_state" not in nq.render()
    assert nq.narrow_state_note.startswith("not applied: the spawn loop is a while loop")
    for rng, why in (("lo, hi", None), ("hi, lo, -1", None),
                     ("np.int64(lo) * 2, hi", "bounds may not fit"),
                     ("lo, hi, 2", "step is not +1 or -1")):
        plan = kp.build_plan(api.get_program(edge(tmp_path, rng)), "walk", target="numba",
                             off=NONE)
        assert plan.narrow_state == (why is None), rng
        assert why is None or why in plan.narrow_state_note, (rng, plan.narrow_state_note)


def test_narrow_state_source() -> None:
    uts = api.get_program(UTS)
    src = {}
    for off in ("", "narrow_state"):
        with kp.plan_switches(off, ""):
            src[off] = registry.get("numba").generate(uts, "uts")
    assert "int64(ld(sa_i, a))" in src[""] and "st(sa_i, a, int32(v_i))" in src[""]
    assert "int64(ld(sa_i, a))" not in src["narrow_state"]
    assert "st(sa_i, a, v_i)" in src["narrow_state"]


STATS = ("tasks", "leaves", "levels", "blocks", "utilization", "reexpansions", "peak_live",
         "tasks_per_level", "leaves_per_level", "reexpansions_per_level",
         "reexp_growth_per_level")
TREE = ("tasks", "leaves", "levels", "tasks_per_level", "leaves_per_level")


def same_on_and_off(program_path: Path, task: str, args: tuple[object, ...],
                    monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The reducers and statistics of every variant, block sizes around the 32-lane
    steps and 1-3 workers with narrow_state on and off (asserted equal); those of on."""
    program = api.get_program(program_path)
    rargs = api.root_args(program, task, args)
    built = {}
    for off in ("", "narrow_state"):
        monkeypatch.setenv(kp.PLAN_OFF_ENV, off)
        monkeypatch.setenv(kp.PLAN_ON_ENV, "")
        built[off] = api.compiled_task(program, task, "numba")
    assert built[""].source != built["narrow_state"].source
    out = []
    for strategy, b, r, w in [("bfs", 1 << 30, 0, 1), ("blocked", 9, 0, 1),
                              ("blocked", 40, 0, 2), ("reexp", 7, 3, 1),
                              ("reexp", 33, 20, 3), ("reexp", 300, 100, 2)]:
        sched = Schedule.make(strategy, b, r)
        got = {}
        for off, ct in built.items():
            reducers, stats = ct.run(rargs, sched, workers=w)
            # (with work stealing the blocks follow the steals' timing: the tree's
            # per-level counts are what every run shares, as in tests/test_workers.py)
            got[off] = (dict(reducers),
                        {k: getattr(stats, k) for k in (STATS if w == 1 else TREE)})
        assert got[""] == got["narrow_state"], (sched, w)
        out.append(got[""][0])
    return out


@pytest.mark.slow
def test_identical_on_and_off_uts(monkeypatch: pytest.MonkeyPatch) -> None:
    """uts's quick tree (1,732 nodes): the same on and off, and UTS's answer."""
    from revec.bench import answers
    from revec.bench.presets import preset

    p = preset("uts", "quick")
    want = answers.expected("uts", p.args)
    for reducers in same_on_and_off(Path(p.path), "uts", p.root_args, monkeypatch):
        assert {k: reducers[k] for k in want} == want


@pytest.mark.slow
@pytest.mark.parametrize("rng", ["lo, hi", "hi, lo, -1"])
def test_identical_on_and_off_edge(rng: str, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A counter at the top of int32's range, up and down: the same on and off, and
    the sum of the leaves' counters (27 leaves, 9 per value of the last level's)."""
    lo, hi = 2147483644, 2147483647
    vals = range(lo, hi) if rng == "lo, hi" else range(hi, lo, -1)
    for reducers in same_on_and_off(edge(tmp_path, rng), "walk", (), monkeypatch):
        assert int(reducers["total"]) == 9 * sum(vals) and int(reducers["nodes"]) == 13

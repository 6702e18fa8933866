"""lane_buffers (revec/transforms/kernel_plan.py ``buffers_decision``, on by default on
the numba back end; numba_lanes.LaneSpawnsEmitter.emit_buffered): a lane-spawns step runs
its passes as one lane loop per 32-thread step into stack arrays (``lane_buf``), integer
reductions into per-lane partials (bytes in 16-bit lanes, 16-bit values in 32-bit ones,
merged after each run of steps).  It may not change a result or a statistic: each
program runs with it on and off, on several schedules, and must agree with the
plain-Python run and with itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from revec import api
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule

ROOT = Path(__file__).parent.parent
STATS = ("tasks", "leaves", "levels", "blocks", "utilization", "reexpansions", "peak_live",
         "tasks_per_level", "leaves_per_level", "reexpansions_per_level",
         "reexp_growth_per_level", "inlined")
# blocks of thousands of threads (the 16-bit lane sums merged after runs of 64 steps,
# 2048 threads: fib's leaves), partial steps, bfs
SCHEDULES = [("bfs", None, None, 4), ("reexp", 8192, None, 4), ("reexp", 40, 20, 3)]
# fib and binomial: leaf inlining (numba's default there), narrow sums of bytes and of a
# constant; branches (leaf inlining switched on): a float sum in thread order, an int32
# min, a uint16 max and an int64 sum of uint16 values in 32-bit lanes; parentheses: lane
# spawns without leaves
PROGRAMS: dict[str, tuple[Path, str, tuple[Any, ...], str]] = {
    "fib": (ROOT / "benchmarks" / "fib.py", "fib", (22,), ""),
    "binomial": (ROOT / "benchmarks" / "binomial.py", "binomial", (20, 9), ""),
    "branches": (ROOT / "tests" / "programs" / "lanes.py", "branches", (11,), "leaf_inline"),
    "parentheses": (ROOT / "benchmarks" / "parentheses.py", "parentheses", (9,), ""),
}


@pytest.mark.parametrize("name", ["fib"] + [pytest.param(x, marks=pytest.mark.slow)
                                            for x in ("binomial", "branches", "parentheses")])
def test_results_and_stats_identical_on_and_off(name: str) -> None:
    path, task, args, on = PROGRAMS[name]
    program = api.get_program(path)
    rargs = api.root_args(program, task, args)
    want = api.run_program(path, task, args, variant="seq").reducers
    built: dict[str, Any] = {}
    for off in ("", "lane_buffers"):
        with kp.plan_switches(off, on):
            built[off] = api.compiled_task(program, task, "numba")
    lanes = built[""].plan.step(kp.LaneSpawns)
    assert isinstance(lanes, kp.LaneSpawns) and lanes.buffers
    assert "lane_buf(" in built[""].source and "lane_buf(" not in built["lane_buffers"].source
    if name == "fib":  # bytes summed in 16-bit lanes, merged after runs of 2048 threads
        assert "_lp_count = lane_buf(int16)" in built[""].source
        assert "tend = min(jend, t + 2048)" in built[""].source
    for strategy, b, r, p in SCHEDULES:
        sched = Schedule.make(strategy, b, r, p)
        got = {}
        for off, ct in built.items():
            reducers, stats = ct.run(rargs, sched, workers=1)
            if name != "branches":  # (its float sum: inlined leaves reduce in another order)
                assert {k: v for k, v in reducers.items() if k in want} == want, \
                    (name, sched, off)
            got[off] = ({k: v for k, v in reducers.items()},
                        {k: getattr(stats, k) for k in STATS})
        assert got[""] == got["lane_buffers"], (name, sched)


def test_lane_picks_of_integer_columns_are_bit_mask_selects() -> None:
    """A child column that several spawn sites can fill (graphcol: three sites, three
    child blocks) is picked per lane by bit masks, not by a conditional expression: LLVM
    made the latter masked stores into the lane buffer (``vpmaskmovq`` on AVX2,
    microcoded on AMD: graphcol's numba reexp 0.194 s -> 0.106 s on a build without
    AVX-512, 0.086 s -> 0.068 s native).  No numba compile: the module's source only."""
    from revec.backends.numba_codegen import generate_numba_module

    src = generate_numba_module(api.get_program(ROOT / "benchmarks" / "graphcol.py"),
                                "graphcol")
    # (the buffered lane loop: each choice into its variable, b ^ ((a ^ b) & -m))
    lines = [x.strip() for x in src.splitlines()]
    picks = [x for x in lines if x.startswith("st(ak0_")]
    assert len(picks) == 3, picks
    for x in picks:
        var = x.split(", ")[-1].rstrip(")")
        assert var.startswith("_p0_"), picks
        chain = [y for y in lines if y.startswith(f"{var[:-2]}_")]
        assert len(chain) == 2 and all(" if " not in y for y in chain), chain
        assert any("& -uint64(_m0)" in y for y in chain), chain

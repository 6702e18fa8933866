"""sentinel_partials (revec/transforms/kernel_plan.py ``sentinel_decision``, the numba
kernel's ``sentinel_pass``): leaf_level's masked min / max partials without the per-lane
"any child reduced" flags; a partial that ends at its identity runs the threads' loop
again with them.  The reducers are those of the sequential run, with it on and off."""

from __future__ import annotations

from pathlib import Path

import pytest

from revec import api
from revec.transforms import kernel_plan as kp

HERE = Path(__file__).parent
PROG = HERE / "programs" / "sentinel.py"
NONE: frozenset[str] = frozenset()


def _level(target: str, off: frozenset[str]) -> kp.LeafLevel:
    plan = kp.build_plan(api.get_program(PROG), "sentinel", target=target, off=off, on=NONE)
    step = plan.step(kp.StraightSpawns)
    assert isinstance(step, kp.StraightSpawns) and step.leaf_level is not None
    assert step.leaf_level.fold is not None, "the inlined base cases are folded"
    return step.leaf_level


def test_plan_decides_where_it_applies() -> None:
    assert _level("numba", NONE).sentinel
    assert not _level("numba", frozenset({"sentinel_partials"})).sentinel
    assert not _level("c", NONE).sentinel
    prog = api.get_program(HERE.parent / "benchmarks" / "fib.py")
    plan = kp.build_plan(prog, "fib", target="numba", off=NONE, on=NONE)
    assert "sentinel_partials" not in plan.render()


# one numba build (a few seconds): the leaves that reduce the int32 identity itself into
# an int64 max reducer are the ambiguous case the pass again decides
@pytest.mark.parametrize("off", ["", pytest.param("sentinel_partials", marks=pytest.mark.slow)])
@pytest.mark.parametrize("variant", ["reexp", pytest.param("bfs", marks=pytest.mark.slow)])
def test_reducers_are_the_sequential_ones(off: str, variant: str) -> None:
    seq = api.run_program(PROG, "sentinel", (), variant="seq").reducers
    assert seq["edge"] == -2147483648 and seq["low"] == 2147483647
    got = api.run_program(PROG, "sentinel", (), variant=variant, backend="numba",
                          block_size=16, simd_width=4, plan_off=off)
    assert got.reducers == seq
    if not off:
        built = api.compiled_task(api.get_program(PROG), "sentinel", "numba")
        assert "sentinel_partials: a partial at its identity" in built.source

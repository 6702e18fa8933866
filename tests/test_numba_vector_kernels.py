"""The numba kernels with each compaction step variant (REVEC_NUMBA_VECTOR = avx512 /
avx2 / scalar, and compaction="scalar") against the sequential program: the block split
(straight spawns, index lists, uniform fields), the lock-step active lists and the
conditional spawns, with block sizes that leave partial 32-thread steps and uniform
ones."""

from __future__ import annotations

import math

import pytest

from revec.api import get_program, run_loaded
from revec.bench.presets import PRESETS
from revec.runtime.compaction import numba_vector as nv

BENCH = ("fib", "nqueens", "parentheses", "knapsack")


def _same(ref: dict, got: dict) -> bool:
    return all(x == got[k] or (isinstance(x, float) and math.isclose(x, got[k], rel_tol=1e-9))
               for k, x in ref.items())


def _check(name: str, compaction: str | None = None) -> None:
    program = get_program(f"benchmarks/{name}.py")
    args = list(PRESETS[name]["quick"].args.values())
    ref = run_loaded(program, name, args, variant="seq")
    tasks = set()
    for variant, b in (("bfs", 50), ("blocked", 33), ("reexp", 96), ("reexp", 4096)):
        got = run_loaded(program, name, args, variant=variant, backend="numba",
                         block_size=b, compaction=compaction)
        assert _same(ref.reducers, got.reducers), (name, variant, b, got.reducers)
        tasks.add((got.stats.tasks, got.stats.leaves))
    assert len(tasks) == 1, tasks  # every schedule runs the same tree


@pytest.mark.parametrize("isa", nv.ISAS)
@pytest.mark.parametrize("name", BENCH)
def test_kernels_with_each_step_variant(name: str, isa: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if isa == "avx2" and nv.native_isa(8) == "scalar":
        pytest.skip("the target CPU lacks SSSE3/AVX2")
    monkeypatch.setenv(nv.ENV, isa)
    _check(name)


def test_compaction_scalar_option() -> None:
    _check("nqueens", compaction="scalar")


LANE_PROGRAMS = (("benchmarks/parentheses.py", "parentheses", "quick"),
                 ("benchmarks/graphcol.py", "graphcol", "quick"),
                 ("tests/programs/lane_subsets.py", "subsets", None),
                 ("tests/programs/lanes.py", "branches", None))


@pytest.mark.parametrize("mode", ("avx2", "scalar", "scalar-split"))
@pytest.mark.parametrize("path,name,preset", LANE_PROGRAMS,
                         ids=[p[1] for p in LANE_PROGRAMS])
def test_conditional_spawns_in_lanes(path: str, name: str, preset: str | None, mode: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The lane-spawns step (conditional spawns, 32 threads per step, the rest thread by
    thread) against the sequential program, block sizes with full 32-thread steps and a
    partial one, on every variant, with the AVX2 and the scalar compaction steps and with
    compaction="scalar" (index lists for sides reading three or more columns); the tree is
    the same in every schedule."""
    if mode == "avx2" and nv.native_isa(8) == "scalar":
        pytest.skip("the target CPU lacks SSSE3/AVX2")
    if mode == "scalar-split" and name not in ("graphcol", "subsets"):
        pytest.skip("the index lists of compaction='scalar': graphcol and subsets suffice")
    compaction = "scalar" if mode == "scalar-split" else None
    monkeypatch.setenv(nv.ENV, "scalar" if mode == "scalar-split" else mode)
    program = get_program(path)
    args = list(PRESETS[name][preset].args.values()) if preset else []
    ref = run_loaded(program, name, args, variant="seq")
    trees = set()
    for variant, b in (("bfs", 32), ("blocked", 64), ("reexp", 100), ("reexp", 4096)):
        got = run_loaded(program, name, args, variant=variant, backend="numba",
                         block_size=b, compaction=compaction)
        assert _same(ref.reducers, got.reducers), (name, variant, b, got.reducers)
        trees.add((got.stats.tasks, got.stats.leaves))
    assert len(trees) == 1, trees


@pytest.mark.parametrize("name", ("parentheses", "graphcol"))
def test_conditional_spawns_module_uses_lanes(name: str) -> None:
    """The generated numba module runs the conditional spawns with the vector steps."""
    from revec.backends.numba_codegen import generate_numba_module

    src = generate_numba_module(get_program(f"benchmarks/{name}.py"), name)
    assert "the plan's lane-spawns step" in src
    assert "movemask32(ms0, t)" in src and "popcount32(mk)" in src
    assert "runs thread by thread" not in src

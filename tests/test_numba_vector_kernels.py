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

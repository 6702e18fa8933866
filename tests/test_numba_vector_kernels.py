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


def _check(name: str, compaction: str | None = None, path: str | None = None,
           args: list | None = None,
           runs: tuple[tuple[str, int], ...] = (("bfs", 50), ("blocked", 33), ("reexp", 96),
                                                ("reexp", 4096))) -> None:
    """Every run of ``runs`` (variant, B) on numba against the sequential program (a
    benchmark at its quick preset unless ``path`` and ``args`` are given)."""
    program = get_program(path or f"benchmarks/{name}.py")
    if args is None:
        args = list(PRESETS[name]["quick"].args.values())
    ref = run_loaded(program, name, args, variant="seq")
    tasks = set()
    for variant, b in runs:
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
# the index lists of compaction="scalar" (sides reading three or more columns): graphcol
# and subsets suffice
LANE_CASES = [(*prog, mode) for prog in LANE_PROGRAMS
              for mode in ("avx2", "scalar", "scalar-split")
              if mode != "scalar-split" or prog[1] in ("graphcol", "subsets")]


@pytest.mark.parametrize("path,name,preset,mode", LANE_CASES,
                         ids=[f"{c[1]}-{c[3]}" for c in LANE_CASES])
def test_conditional_spawns_in_lanes(path: str, name: str, preset: str | None, mode: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The lane-spawns step (conditional spawns, 32 threads per step, the rest thread by
    thread) against the sequential program, block sizes with full 32-thread steps and a
    partial one, on every variant, with the AVX2 and the scalar compaction steps and with
    compaction="scalar" (index lists for sides reading three or more columns); the tree is
    the same in every schedule."""
    if mode == "avx2" and nv.native_isa(8) == "scalar":
        pytest.skip("the target CPU lacks SSSE3/AVX2")
    monkeypatch.setenv(nv.ENV, "scalar" if mode == "scalar-split" else mode)
    _check(name, "scalar" if mode == "scalar-split" else None, path,
           list(PRESETS[name][preset].args.values()) if preset else [],
           (("bfs", 32), ("blocked", 64), ("reexp", 100), ("reexp", 4096)))


@pytest.mark.parametrize("name", ("parentheses", "graphcol"))
def test_conditional_spawns_module_uses_lanes(name: str) -> None:
    """The generated numba module runs the conditional spawns with the vector steps."""
    from revec.backends.numba_codegen import generate_numba_module

    src = generate_numba_module(get_program(f"benchmarks/{name}.py"), name)
    assert "the plan's lane-spawns step" in src
    # (lane_buffers, the numba default: the step's masks from a stack array)
    assert "ms0 = lane_buf(uint8)" in src and "movemask32(ms0, 0)" in src
    assert "popcount32(mk)" in src
    assert "runs thread by thread" not in src


SCRATCH_CASES = [(f"benchmarks/{n}.py", n, c) for n in
                 ("fib", "nqueens", "uts", "graphcol", "knapsack", "parentheses", "binomial",
                  "minmax") for c in (None, "scalar")] + [
    (path, name, c) for path, name, _ in LANE_PROGRAMS if path.startswith("tests/")
    for c in (None, "scalar")]


@pytest.mark.parametrize("path,name,compaction", SCRATCH_CASES,
                         ids=[f"{c[1]}-{c[2] or 'vector'}" for c in SCRATCH_CASES])
def test_every_scratch_column_has_a_size(path: str, name: str, compaction: str | None) -> None:
    """The driver grows the module's own scratch columns (SCRATCH_BYTES) before it calls
    the kernel, which has no bounds checks: every scratch column the generated kernel
    takes a pointer to must have a size that grows with the block (the lanes' fill
    columns: a fixed one), and no size may name a column the module does not have."""
    import re

    import numpy as np

    from revec.backends.numba_codegen import generate_numba_module

    src = generate_numba_module(get_program(path), name, compaction)
    nparams = int(re.search(r"ITEMSIZES = np\.array\((\[.*?\])", src).group(1).count(",")) + 1
    scratch = int(re.search(r"SCRATCH_COLUMNS = (\d+)", src).group(1))
    sizes = np.array(eval(re.search(r"SCRATCH_BYTES = np\.array\((\[.*?\])", src).group(1)))
    assert sizes.size == 2 * scratch
    used = {int(k) for k in re.findall(r"column_ptr\(cols, (\d+),", src)}
    own = {c - 3 * nparams for c in used if c >= 3 * nparams}
    # every scratch column the module declares is used, and no other (knapsack, whose
    # split is decided once per block with straight spawns, has none)
    assert own == set(range(scratch)), (own, scratch)
    for c in own:
        assert sizes[2 * c] > 0 or sizes[2 * c + 1] > 0, (c, sizes)

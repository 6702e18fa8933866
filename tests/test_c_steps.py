"""The 32-lane compaction steps of generated C kernels (``RV_STEP8`` ... ``RV_STEP64`` of
``revec/backends/c_codegen.py``: AVX-512 ``vpcompress``, the AVX2 table steps or the
scalar step, whichever the module is compiled for, with the copy / skip fast paths for
full and empty masks) equal ``x[mask]`` and write nothing before the output index.
Also the grouped steps of several columns under one mask (``c_codegen.group_steps``:
``rv_gctrl<W>`` / ``rv_gapply<W>``, one control per width, 8 and 16 bits), on each instruction set: the
native build, an AVX2-only build and the scalar one."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest

from revec.backends.c_codegen import SPLIT_STEPS, STAGED_STEPS, WIDE_VECTORS, group_steps
from revec.runtime.compaction import c_source, cpu_features
from revec.toolchain.cbuild import load_c_module

CDEF = "int64_t rv_test_step(int w, const void *x, void *o, int64_t j, uint32_t bits);"
WIDTHS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@cache
def _module(scalar: bool) -> Any:
    # scalar: compiled without -march=native, so the scalar steps (no AVX2 / AVX-512)
    body = "\n".join(f"    case {w}: RV_STEP{w}((const uint{w}_t *)x, (uint{w}_t *)o, j, bits);"
                     f" break;" for w in WIDTHS)
    src = (WIDE_VECTORS + "#include <stdint.h>\n#include <string.h>\n"
           "#define REVEC_STEPS_ONLY 1\n" + c_source() + SPLIT_STEPS +
           "int64_t rv_test_step(int w, const void *x, void *o, int64_t j, uint32_t bits) {\n"
           "    switch (w) {\n" + body + "\n    }\n"
           "    return j + __builtin_popcount(bits);\n}\n")
    return load_c_module("test_c_steps" + ("_scalar" if scalar else ""), CDEF, src,
                         cflags=["-O2"] if scalar else None)


def _masks(seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    special = [0, 0xFFFFFFFF, 1, 1 << 31, 0x0000FFFF, 0xFFFF0000, 0x55555555, 0xFFFFFFFE,
               0x7FFFFFFF]
    return special + [int(m) for m in rng.integers(0, 1 << 32, 400, dtype=np.uint64)]


@pytest.mark.parametrize("scalar", [False, True], ids=["native", "scalar"])
@pytest.mark.parametrize("w", list(WIDTHS))
def test_step_equals_boolean_indexing(w: int, scalar: bool) -> None:
    ffi, lib = _module(scalar)
    dt = WIDTHS[w]
    rng = np.random.default_rng(w)
    sentinel = np.iinfo(dt).max
    for bits in _masks(w):
        x = rng.integers(0, np.iinfo(dt).max, 32, dtype=dt, endpoint=False)
        mask = ((bits >> np.arange(32)) & 1).astype(bool)
        j = int(rng.integers(0, 9))
        out = np.full(j + 64, sentinel, dtype=dt)  # room for a full-width store past j
        got = lib.rv_test_step(w, ffi.from_buffer(x), ffi.from_buffer(out), j, bits)
        k = int(mask.sum())
        assert got == j + k
        np.testing.assert_array_equal(out[j:j + k], x[mask], err_msg=f"w={w} mask={bits:#x}")
        assert (out[:j] == sentinel).all(), f"w={w} mask={bits:#x}: wrote before j"
        # nothing is written past the 32 lanes the step may store
        assert (out[j + 32:] == sentinel).all(), f"w={w} mask={bits:#x}: wrote past 32"


# grouped steps: three columns under one mask, (macro, width) each
GROUPS = [(("RV_STEP", 8),) * 3, (("RV_STEP", 16),) * 3, (("RV_LSTEP", 16),) * 3,
          (("RV_LSTEP", 16), ("RV_STEP", 8), ("RV_LSTEP", 16)),
          (("RV_STEP", 16), ("RV_STEP", 8), ("RV_STEP", 8))]
GCDEF = ("void rv_test_group(int kind, const void *x0, const void *x1, const void *x2, "
         "void *o0, void *o1, void *o2, int64_t j, uint32_t bits);")
ISAS = {"native": None, "avx2": ["-O2", "-mavx2", "-mpopcnt"], "scalar": ["-O2"]}


@cache
def _group_module(isa: str) -> Any:
    cases = []
    for k, group in enumerate(GROUPS):
        lines = [f"        {mac}{w}((const uint{w}_t *)x{i}, (uint{w}_t *)o{i}, j, bits);"
                 for i, (mac, w) in enumerate(group)]
        body = group_steps(lines, staged=True)
        assert "one mask, 3 columns" in body[0], body
        cases.append(f"    case {k}:\n" + "\n".join(body) + "\n        break;")
    src = (WIDE_VECTORS + "#include <stdint.h>\n#include <string.h>\n"
           "#define REVEC_STEPS_ONLY 1\n" + c_source() + SPLIT_STEPS + STAGED_STEPS +
           "void rv_test_group(int kind, const void *x0, const void *x1, const void *x2, "
           "void *o0, void *o1, void *o2, int64_t j, uint32_t bits) {\n"
           "    switch (kind) {\n" + "\n".join(cases) + "\n    }\n}\n")
    return load_c_module(f"test_c_group_steps_{isa}", GCDEF, src, cflags=ISAS[isa])


@pytest.mark.parametrize("isa", list(ISAS))
@pytest.mark.parametrize("kind", range(len(GROUPS)))
def test_grouped_steps_equal_boolean_indexing(kind: int, isa: str) -> None:
    if isa == "avx2" and "avx2" not in cpu_features():
        pytest.skip("no AVX2 on this CPU")
    ffi, lib = _group_module(isa)
    rng = np.random.default_rng(100 + kind)
    dts: list[Any] = [WIDTHS[w] for _, w in GROUPS[kind]]
    for bits in _masks(kind):
        mask = ((bits >> np.arange(32)) & 1).astype(bool)
        j = int(rng.integers(0, 9))
        xs = [rng.integers(0, np.iinfo(dt).max, 32, dtype=dt, endpoint=False) for dt in dts]
        outs = [np.full(j + 64, np.iinfo(dt).max, dtype=dt) for dt in dts]
        lib.rv_test_group(kind, *[ffi.from_buffer(x) for x in xs],
                          *[ffi.from_buffer(o) for o in outs], j, bits)
        k = int(mask.sum())
        for x, out, dt in zip(xs, outs, dts):
            msg = f"kind={kind} isa={isa} mask={bits:#x} width={dt().nbytes * 8}"
            np.testing.assert_array_equal(out[j:j + k], x[mask], err_msg=msg)
            assert (out[:j] == np.iinfo(dt).max).all(), msg + ": wrote before j"
            assert (out[j + 32:] == np.iinfo(dt).max).all(), msg + ": wrote past 32"

"""The 32-lane compaction steps of generated C kernels (``RV_STEP8`` ... ``RV_STEP64`` of
``revec/backends/c_codegen.py``: AVX-512 ``vpcompress``, the AVX2 table steps or the
scalar step, whichever the module is compiled for, with the copy / skip fast paths for
full and empty masks) equal ``x[mask]`` and write nothing before the output index."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest

from revec.backends.c_codegen import SPLIT_STEPS, WIDE_VECTORS
from revec.runtime.compaction import c_source
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

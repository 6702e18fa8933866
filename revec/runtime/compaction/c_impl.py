"""The C compaction kernels (compaction.h), built through the revec build cache."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from revec.errors import RevecError
from revec.runtime.compaction.tables import c_tables
from revec.toolchain.cbuild import load_c_module

# variant numbers of compaction.h (REVEC_V_*)
VARIANTS: dict[str, int] = {
    "best": -1, "branchy": 0, "scalar": 1, "prefix": 2, "ssse3": 3, "avx2": 4, "avx512": 5,
}
FEATURE_BITS: dict[str, int] = {"ssse3": 1, "avx2": 2, "avx512": 4, "avx512vbmi2": 8}

CDEF = """
int revec_cmp_features(void);
int revec_cmp_best(int bits);
int revec_cmp_usable(int bits, int variant);
int64_t revec_cmp_compact(int bits, int variant, const void *x, const uint8_t *m, int64_t n,
                          void *out);
int64_t revec_cmp_split(int bits, int variant, const void *x, const uint8_t *m, int64_t n,
                        void *t, void *f);
int64_t revec_cmp_bench(int op, int bits, int variant, const void *x, const uint8_t *m,
                        int64_t n, void *o1, void *o2, int64_t reps);
"""


def _text(name: str) -> str:
    return resources.files("revec.runtime.compaction").joinpath(name).read_text()


@cache
def c_source() -> str:
    """Tables + kernels as one C text (all ``static``): paste it into a generated program."""
    return c_tables() + "\n" + _text("compaction.h")


@cache
def module() -> tuple[Any, Any]:
    """The compiled wrapper module ``(ffi, lib)`` (built once per machine, then cached)."""
    return load_c_module("compaction", CDEF, c_source() + "\n" + _text("module.c"))


def features() -> frozenset[str]:
    """The CPU features the C dispatcher sees."""
    bits = module()[1].revec_cmp_features()
    return frozenset(name for name, bit in FEATURE_BITS.items() if bits & bit)


def usable(bits: int, variant: str) -> bool:
    return bool(module()[1].revec_cmp_usable(bits, VARIANTS[variant]))


def best(bits: int) -> str:
    code = module()[1].revec_cmp_best(bits)
    return next(k for k, v in VARIANTS.items() if v == code)


def _ptrs(ffi: Any, *arrays: np.ndarray) -> list[Any]:
    return [ffi.from_buffer("uint8_t[]", a, require_writable=False) for a in arrays]


def compact(variant: str, x: np.ndarray, mask: np.ndarray, out: np.ndarray) -> int:
    """Compact ``x`` (1-D contiguous, itemsize 1/2/4/8) by the byte mask into ``out``."""
    ffi, lib = module()
    px, pm = _ptrs(ffi, x, mask)
    po = ffi.from_buffer("uint8_t[]", out, require_writable=True)
    r = lib.revec_cmp_compact(x.itemsize * 8, VARIANTS[variant], px, pm, x.size, po)
    if r < 0:
        raise RevecError(f"C compaction variant {variant!r} is not usable on this CPU")
    return int(r)


def split(variant: str, x: np.ndarray, mask: np.ndarray, out_true: np.ndarray,
          out_false: np.ndarray) -> int:
    ffi, lib = module()
    px, pm = _ptrs(ffi, x, mask)
    pt = ffi.from_buffer("uint8_t[]", out_true, require_writable=True)
    pf = ffi.from_buffer("uint8_t[]", out_false, require_writable=True)
    r = lib.revec_cmp_split(x.itemsize * 8, VARIANTS[variant], px, pm, x.size, pt, pf)
    if r < 0:
        raise RevecError(f"C split variant {variant!r} is not usable on this CPU")
    return int(r)


def bench_ns(op: str, variant: str, x: np.ndarray, mask: np.ndarray, out1: np.ndarray,
             out2: np.ndarray, reps: int) -> int:
    """Nanoseconds for ``reps`` back-to-back runs inside C (op: compact, split, copy, memcpy)."""
    ffi, lib = module()
    code = {"compact": 0, "split": 1, "copy": 2, "memcpy": 3}[op]
    px, pm = _ptrs(ffi, x, mask)
    p1 = ffi.from_buffer("uint8_t[]", out1, require_writable=True)
    p2 = ffi.from_buffer("uint8_t[]", out2, require_writable=True)
    ns = lib.revec_cmp_bench(code, x.itemsize * 8, VARIANTS[variant], px, pm, x.size, p1, p2,
                             reps)
    if ns < 0:
        raise RevecError(f"C variant {variant!r} is not usable on this CPU")
    return int(ns)

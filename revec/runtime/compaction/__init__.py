"""Stream compaction: ``x[mask]`` by precomputed tables and vector shuffles (paper Sec. 5).

One interface over several implementations::

    from revec.runtime import compaction
    out = compaction.compact(x, mask)                 # == x[mask], a view of a new array
    n = compaction.compact_into(x, mask, out)         # out[:n] == x[mask]; out may be x
    t, f = compaction.split(x, mask)                  # (x[mask], x[~mask]) in one pass
    a = compaction.split_into(x, mask, out_true, out_false)

``x`` is 1-D with 1-, 2-, 4- or 8-byte elements (any integer, float or bool dtype: bits
are moved); ``mask`` has the same length (bool, or any dtype: nonzero = selected).
Output arrays need room for ``len(x)`` elements (nothing more: the vector kernels never
store past ``out[len(x) - 1]``); elements past the count are unspecified.

Implementations (``impl=``):

* ``"c"``: the C kernels, the best variant for this CPU chosen at run time
  (AVX-512 ``vpcompress`` > AVX2 > SSSE3 > scalar);
* ``"c-avx512"``, ``"c-avx2"``, ``"c-ssse3"``, ``"c-prefix"``, ``"c-scalar"``,
  ``"c-branchy"``: one C variant (``available()`` lists those usable here);
* ``"numba"``, ``"numba-prefix"``: numba loops with explicit table lookups;
* ``"numpy"``: boolean indexing (the reference);
* ``"auto"`` (default): ``"c"`` when a C compiler (or a cached build) is available, else
  ``"numba"``.

The C text (tables and static kernels) for generated programs: :func:`c_source`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from revec.errors import RevecError
from revec.runtime.compaction.tables import (
    advance_table,
    combine_table,
    prefix_table,
    shuffle_table,
)

__all__ = [
    "IMPLEMENTATIONS", "available", "c_source", "compact", "compact_into", "cpu_features",
    "split", "split_into", "advance_table", "combine_table", "prefix_table", "shuffle_table",
]

C_VARIANTS = ("branchy", "scalar", "prefix", "ssse3", "avx2", "avx512")
IMPLEMENTATIONS: tuple[str, ...] = (
    "auto", "c", *(f"c-{v}" for v in C_VARIANTS), "numba", "numba-prefix", "numpy",
)
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def c_source() -> str:
    """Tables and kernels of the C implementation as one text of ``static`` definitions.

    A generated C program can paste it and call e.g.
    ``revec_get_compact(32, REVEC_V_BEST)(x, m, n, out)``; see ``compaction.h``.
    """
    from revec.runtime.compaction import c_impl

    return c_impl.c_source()


@cache
def _c_ok() -> bool:
    from revec.runtime.compaction import c_impl

    try:
        c_impl.module()
    except RevecError:
        return False
    return True


def cpu_features() -> frozenset[str]:
    """The SIMD features the C dispatcher uses (``ssse3``, ``avx2``, ``avx512``, ...)."""
    from revec.runtime.compaction import c_impl

    return c_impl.features()


def available() -> list[str]:
    """The implementations usable on this machine (every lane width), ``auto`` excluded."""
    names = ["numpy", "numba", "numba-prefix"]
    if _c_ok():
        from revec.runtime.compaction import c_impl

        names.append("c")
        names += [f"c-{v}" for v in C_VARIANTS
                  if all(c_impl.usable(b, v) for b in (8, 16, 32, 64))]
    return names


def _resolve(impl: str) -> str:
    if impl not in IMPLEMENTATIONS:
        raise RevecError(f"unknown compaction implementation {impl!r}; "
                         f"choose from {', '.join(IMPLEMENTATIONS)}")
    if impl == "auto":
        return "c" if _c_ok() else "numba"
    return impl


def _prepare(x: Any, mask: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, its unsigned view, the mask as contiguous uint8)."""
    x = np.asarray(x)
    if x.ndim != 1:
        raise RevecError(f"compaction needs a 1-D array, not {x.ndim}-D")
    if x.dtype.itemsize not in _UINT or x.dtype.hasobject or x.dtype.fields is not None:
        raise RevecError(f"compaction supports 1-, 2-, 4- and 8-byte elements, not {x.dtype}")
    x = np.ascontiguousarray(x)
    m = np.asarray(mask)
    if m.shape != x.shape:
        raise RevecError(f"mask has shape {m.shape}, the array {x.shape}")
    if m.dtype == np.bool_ or m.dtype in (np.uint8, np.int8):
        m = np.ascontiguousarray(m).view(np.uint8)
    else:
        m = (m != 0).view(np.uint8)
    return x, x.view(_UINT[x.dtype.itemsize]), m


def _check_out(out: Any, x: np.ndarray, what: str) -> np.ndarray:
    if not isinstance(out, np.ndarray):
        raise RevecError(f"{what} must be a numpy array")
    if out.dtype != x.dtype or out.ndim != 1 or not out.flags.c_contiguous \
            or not out.flags.writeable:
        raise RevecError(f"{what} must be a writeable contiguous 1-D {x.dtype} array")
    if out.size < x.size:
        raise RevecError(f"{what} has room for {out.size} elements, needs {x.size}")
    return out.view(_UINT[x.dtype.itemsize])[: x.size]


def _compact_fn(impl: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray], int]:
    if impl == "numpy":
        def run(xu: np.ndarray, m: np.ndarray, ou: np.ndarray) -> int:
            sel = xu[m.view(np.bool_)]
            ou[: sel.size] = sel
            return int(sel.size)
        return run
    if impl.startswith("numba"):
        from revec.runtime.compaction import numba_impl

        kernel = numba_impl.COMPACT[impl]
        return lambda xu, m, ou: int(kernel(xu, m, ou))
    from revec.runtime.compaction import c_impl

    variant = "best" if impl == "c" else impl[2:]
    return lambda xu, m, ou: c_impl.compact(variant, xu, m, ou)


def compact_into(x: Any, mask: Any, out: np.ndarray, *, impl: str = "auto") -> int:
    """Write ``x[mask]`` to ``out[:count]`` and return count (``out`` may be ``x``)."""
    impl = _resolve(impl)
    x, xu, m = _prepare(x, mask)
    ou = _check_out(out, x, "out")
    if ou.ctypes.data == xu.ctypes.data or not np.shares_memory(ou, xu):
        return _compact_fn(impl)(xu, m, ou)
    # overlapping but not identical: go through a copy
    tmp = np.empty_like(xu)
    k = _compact_fn(impl)(xu, m, tmp)
    ou[:k] = tmp[:k]
    return k


def compact(x: Any, mask: Any, *, impl: str = "auto") -> np.ndarray:
    """``x[mask]`` (order preserved), as a view of a new array."""
    x = np.asarray(x)
    out = np.empty(x.shape, x.dtype)
    k = compact_into(x, mask, out, impl=impl)
    return out[:k]


def split_into(x: Any, mask: Any, out_true: np.ndarray, out_false: np.ndarray, *,
               impl: str = "auto") -> int:
    """One pass: ``x[mask]`` to ``out_true``, ``x[~mask]`` to ``out_false``; returns the
    number of selected elements (``len(x)`` minus it went to ``out_false``)."""
    impl = _resolve(impl)
    x, xu, m = _prepare(x, mask)
    tu = _check_out(out_true, x, "out_true")
    fu = _check_out(out_false, x, "out_false")
    if np.shares_memory(tu, fu) or np.shares_memory(tu, xu) or np.shares_memory(fu, xu):
        raise RevecError("split outputs must not overlap each other or the input")
    if impl == "numpy":
        b = m.view(np.bool_)
        sel, rest = xu[b], xu[~b]
        tu[: sel.size] = sel
        fu[: rest.size] = rest
        return int(sel.size)
    if impl.startswith("numba"):
        from revec.runtime.compaction import numba_impl

        return int(numba_impl.SPLIT[impl](xu, m, tu, fu))
    from revec.runtime.compaction import c_impl

    return c_impl.split("best" if impl == "c" else impl[2:], xu, m, tu, fu)


def split(x: Any, mask: Any, *, impl: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """``(x[mask], x[~mask])`` computed in one pass."""
    x = np.asarray(x)
    t = np.empty(x.shape, x.dtype)
    f = np.empty(x.shape, x.dtype)
    k = split_into(x, mask, t, f, impl=impl)
    return t[:k], f[: x.size - k]

"""Small compiled helpers the generated numba modules import."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def grow(a, need):  # type: ignore[no-untyped-def]
    """``a`` with room for at least ``need`` elements (contents kept)."""
    if need <= a.size:
        return a
    b = np.empty(max(need, 2 * a.size), a.dtype)
    b[: a.size] = a
    return b


@njit(cache=True, nogil=True)
def grow2(a, need):  # type: ignore[no-untyped-def]
    """Like :func:`grow`, zero-filling the new part."""
    if need <= a.size:
        return a
    b = np.zeros(max(need, 2 * a.size), a.dtype)
    b[: a.size] = a
    return b

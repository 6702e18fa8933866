"""The working buffer of an output array (revec/frontend/outputs.py): its elements over
raw bytes that end with an error flag byte, which a store out of range sets.  Apart
from revec.frontend.outputs so that binding (revec/frontend/inputs.py), which makes
the buffers, and the outputs' run, which converts the caller's values as binding does,
import without a circle."""

from __future__ import annotations

from typing import Any

import numpy as np

FLAG_BYTES = 8  # the error flag byte and padding after an output's elements


def new_buffer(dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    """A zeroed working buffer: ``dtype`` elements of ``shape`` over raw bytes that end
    with the error flag byte (see :func:`raw_buffer`)."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.zeros(nbytes + FLAG_BYTES, np.uint8)
    return raw[:nbytes].view(dtype).reshape(shape)


def raw_buffer(arr: np.ndarray) -> np.ndarray:
    """The raw bytes under a working buffer (its elements, then the flag byte at
    ``arr.nbytes``): what a back end binds, so its flag can be set."""
    base = arr.base
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    assert isinstance(base, np.ndarray) and base.dtype == np.uint8 \
        and base.size == arr.nbytes + FLAG_BYTES, "not an output's working buffer"
    return base

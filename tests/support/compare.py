"""How the tests compare a run's results with the sequential reference's: integers, min
and max exactly; float sums up to summation order (DESIGN.md section 3: every schedule
adds in its own order), relative 1e-9."""

from __future__ import annotations

import math
from typing import Any


def close(x: Any, y: Any) -> bool:
    """Equal; floats up to summation order (relative 1e-9; NaN equals NaN)."""
    if isinstance(x, float):
        return x == y or math.isclose(x, y, rel_tol=1e-9) or (math.isnan(x) and math.isnan(y))
    return bool(x == y)


def same(ref: dict[str, Any], got: dict[str, Any]) -> bool:
    """Every reducer of ``ref`` :func:`close` to the one of that name in ``got``."""
    return all(close(x, got[k]) for k, x in ref.items())

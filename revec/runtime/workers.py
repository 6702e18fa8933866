"""Several workers: how many by default, and their statistics (docs/design.md, Workers)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from revec.errors import RevecError

# columns of the drivers' per-worker statistics (revec.backends.c_driver.W_*)
W_TASKS, W_STEALS, W_ATTEMPTS, W_IDLE_NS, W_GIVEN, W_PEAK, W_BLOCKS = range(7)


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


def check_workers(workers: int | None) -> int:
    """``None`` -> :func:`default_workers`; fewer than 1 is a user error."""
    if workers is None:
        return default_workers()
    if int(workers) < 1:
        raise RevecError(f"workers must be at least 1, got {workers}")
    return int(workers)


def per_worker_stats(wst: np.ndarray) -> list[dict[str, Any]]:
    """One row per worker: tasks run, successful steals, steal requests, idle seconds,
    packages given to thieves, peak live frames and blocks."""
    return [{"tasks": int(r[W_TASKS]), "steals": int(r[W_STEALS]),
             "steal_requests": int(r[W_ATTEMPTS]), "idle_seconds": float(r[W_IDLE_NS]) / 1e9,
             "given": int(r[W_GIVEN]), "peak_live": int(r[W_PEAK]),
             "blocks": int(r[W_BLOCKS])} for r in wst]

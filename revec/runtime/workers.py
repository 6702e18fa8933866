"""Several workers: how many by default, and their statistics (docs/backends.md, "Workers")."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from revec import ir
from revec.errors import RevecError
from revec.runtime.stats import RunStats
from revec.transforms.schedule import Schedule

# driver statistics shared by both back ends (st: vectorized threads, blocks, peak live)
ST_VEC, ST_BLOCKS, ST_PEAK, ST_INLINED = 3, 4, 6, 7
# columns of the drivers' per-worker statistics (revec.backends.c_driver.W_*)
W_TASKS, W_STEALS, W_ATTEMPTS, W_IDLE_NS, W_GIVEN, W_PEAK, W_BLOCKS, W_CPU_NS = range(8)


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


# the most worker threads a run takes (docs/backends.md, "Workers"): more threads than
# cores only share the cores, and each costs its own deque, statistics row and start-up
# (10,000 workers ran fib(25) for 24 s in C and 106 s in numba instead of well under 1 s)
MAX_WORKERS = 1024


def max_workers() -> int:
    """The cap on workers: :data:`MAX_WORKERS`, or the usable cores where there are more."""
    return max(MAX_WORKERS, default_workers())


def check_workers(workers: int | None, option: str = "workers") -> int:
    """``None`` -> :func:`default_workers`; fewer than 1, or more than
    :func:`max_workers`, is a user error (``option``: its name in the message)."""
    if workers is None:
        return default_workers()
    if int(workers) < 1:
        raise RevecError(f"{option} must be at least 1, got {workers}")
    if int(workers) > max_workers():
        raise RevecError(f"{option} must be at most {max_workers()}, got {workers} (this "
                         f"machine lets this process use {default_workers()} cores; more "
                         "workers than cores only share them)")
    return int(workers)


# the per-worker rows ``revec run`` prints one by one; beyond this many, a summary
PER_WORKER_LINES = 8


def summarise(rows: list[dict[str, Any]], keys: tuple[str, ...]) -> str:
    """``key min A  median B  max C`` for each of ``keys`` over ``rows``."""
    def show(v: float, real: bool) -> str:
        return f"{v:.4f}" if real else f"{v:.0f}" if v == int(v) else f"{v:.1f}"

    parts = []
    for k in keys:
        vals = np.array([r[k] for r in rows], dtype=np.float64)
        real = isinstance(rows[0][k], float)
        parts.append(f"{k.replace('_', ' ')} min {show(vals.min(), real)}  median "
                     f"{show(float(np.median(vals)), real)}  max {show(vals.max(), real)}")
    return "; ".join(parts)


def per_worker_stats(wst: np.ndarray) -> list[dict[str, Any]]:
    """One row per worker: tasks run, successful steals, steal requests, idle seconds,
    packages given to thieves, peak live frames, blocks and the thread's CPU seconds
    (both back ends)."""
    return [{"tasks": int(r[W_TASKS]), "steals": int(r[W_STEALS]),
             "steal_requests": int(r[W_ATTEMPTS]), "idle_seconds": float(r[W_IDLE_NS]) / 1e9,
             "given": int(r[W_GIVEN]), "peak_live": int(r[W_PEAK]),
             "blocks": int(r[W_BLOCKS]), "cpu_seconds": float(r[W_CPU_NS]) / 1e9}
            for r in wst]


def acc_slot(accs: np.ndarray, i: int, r: ir.ReducerDecl) -> np.ndarray:
    """Reducer ``r``'s value in the accumulator bytes: slot ``i`` of 8 bytes, viewed as
    a one-element array of its dtype (the layout both drivers share)."""
    return accs[8 * i: 8 * i + r.dtype.itemsize].view(r.dtype)


def init_accs(reducers: list[ir.ReducerDecl], accs: np.ndarray) -> np.ndarray:
    """Write each reducer's identity into its slot of ``accs`` (returned)."""
    for i, r in enumerate(reducers):
        acc_slot(accs, i, r)[0] = r.identity()
    return accs


def acc_values(reducers: list[ir.ReducerDecl], accs: np.ndarray) -> dict[str, Any]:
    """The reducers' values (Python scalars) in the accumulator bytes."""
    return {r.name: acc_slot(accs, i, r)[0].item() for i, r in enumerate(reducers)}


def merge_accs(reducers: list[ir.ReducerDecl], a: np.ndarray, b: np.ndarray) -> None:
    """Fold the accumulators ``b`` into ``a`` (8 bytes per reducer)."""
    for i, r in enumerate(reducers):
        x, y = acc_slot(a, i, r), acc_slot(b, i, r)
        if r.op == "sum":
            x[0] = (x[0] or y[0]) if r.dtype.kind == "b" else (x + y)[0]  # arrays wrap
        elif r.op == "min":
            x[0] = min(x[0], y[0])
        else:
            x[0] = max(x[0], y[0])


def run_stats(lv: np.ndarray, st: np.ndarray, wst: np.ndarray, seconds: float,
              schedule: Schedule, workers: int = 1) -> RunStats:
    tasks = lv[:, 0].astype(np.int64)
    total = int(tasks.sum())
    stats = RunStats(
        tasks=total, leaves=int(lv[:, 1].sum()), levels=len(tasks),
        utilization=(int(st[ST_VEC]) / total) if total else 0.0,
        reexpansions=int(lv[:, 2].sum()), peak_live=int(st[ST_PEAK]),
        seconds=seconds, blocks=int(st[ST_BLOCKS]), simd_width=schedule.simd_width,
        tasks_per_level=tasks.tolist(),
        leaves_per_level=lv[:, 1].astype(np.int64).tolist(),
        reexpansions_per_level=lv[:, 2].astype(np.int64).tolist(),
        reexp_growth_per_level=[float(g / r) if r else 0.0
                                for g, r in zip(lv[:, 3], lv[:, 4])],
        inlined=int(st[ST_INLINED]),
    )
    if workers > 1:
        stats.workers = workers
        stats.per_worker = per_worker_stats(wst)
    return stats

"""The utilization simulator (paper Sec. 7.2 / 8): sample uniform (n, h) trees and run
the schedules on each, in batches of trials compiled with numba.

Trial t of seed S samples the tree of root state ``root_state(S, t)``; every strategy
(and every parameter setting of one call) runs on that same tree, so comparisons are
paired, and results do not depend on how the trials are split among workers.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from revec.errors import RevecError
from revec.treegen.defaults import DEFAULT_BLOCK_SIZE, DEFAULT_SIMD_WIDTH, DEFAULT_TRIALS
from revec.treegen.rng import root_state, seed_value
from revec.treegen.sampler import Tables, sample_tree, tables_for
from revec.treegen.schedules import (
    BLOCKS,
    ISSUED,
    MAXBLOCK,
    REEXP,
    RESULT_COLS,
    STRATEGY_NAMES,
    SWITCH_READINGS,
    VEC,
    WIDE,
    run_schedule,
    thresholds,
)

BATCH = 256  # trials per kernel call


@dataclass(frozen=True)
class Setting:
    """One schedule to simulate: a named strategy with its thresholds."""

    strategy: str
    block_size: int = DEFAULT_BLOCK_SIZE
    reexp_threshold: int = DEFAULT_SIMD_WIDTH
    simd_width: int = DEFAULT_SIMD_WIDTH
    switch: str = "whole"  # reading of the bfs -> blocked switch (SWITCH_READINGS)

    def row(self) -> tuple[int, int, int, int]:
        b, r = thresholds(self.strategy, self.block_size, self.reexp_threshold)
        return b, r, self.simd_width, SWITCH_READINGS.index(self.switch)


def check_setting(s: Setting) -> None:
    if s.strategy not in STRATEGY_NAMES:
        raise RevecError(f"unknown strategy {s.strategy!r}; expected one of "
                         f"{', '.join(STRATEGY_NAMES)} or all")
    if s.simd_width < 1:
        raise RevecError(f"SIMD width must be at least 1, got {s.simd_width}")
    if s.block_size < 1:
        raise RevecError(f"block size must be at least 1, got {s.block_size}")
    if s.switch not in SWITCH_READINGS:
        raise RevecError(f"unknown switch reading {s.switch!r}; expected one of "
                         f"{', '.join(SWITCH_READINGS)}")
    if s.reexp_threshold < 0:
        raise RevecError(f"re-expansion threshold must be >= 0, got {s.reexp_threshold}")


@njit(cache=True, nogil=True)
def simulate_batch(la: np.ndarray, le: np.ndarray, start_a: np.ndarray, start_e: np.ndarray,
                   off: np.ndarray, rec: np.ndarray, pos_t: np.ndarray, sc: np.ndarray,
                   sd: np.ndarray, n: int, h: int,
                   seed: np.uint64, first_trial: int, trials: int, settings: np.ndarray,
                   out: np.ndarray) -> None:
    """Trials ``first_trial ..`` (``trials`` of them); ``settings[k] = (B, R, P,
    switch)`` (:meth:`Setting.row`);
    ``out[t, k]`` receives schedule k's result row on trial t's tree and
    ``out[t, k, RESULT_COLS]`` the tree's number of levels."""
    first_child = np.empty(n, np.int32)
    node_m = np.empty(n, np.int32)
    node_h = np.empty(n, np.int32)
    node_kind = np.empty(n, np.int8)
    node_state = np.empty(n, np.uint64)
    level_start = np.empty(h + 2, np.int32)
    queue = np.empty(n, np.int32)
    arena = np.empty(n + 1, np.int32)
    so = np.empty(n + 1, np.int32)
    sl = np.empty(n + 1, np.int32)
    sm = np.empty(n + 1, np.int8)
    row = np.empty(RESULT_COLS, np.int64)
    m_root = (n - 1) // 2
    for t in range(trials):
        state = root_state(seed, first_trial + t)
        levels = sample_tree(la, le, start_a, start_e, off, rec, pos_t, sc, sd, m_root, h,
                             state,
                             first_child, node_m, node_h, node_kind, node_state, level_start,
                             queue)
        for k in range(settings.shape[0]):
            run_schedule(first_child, level_start, levels, n, settings[k, 0], settings[k, 1],
                         settings[k, 2], settings[k, 3], node_m, arena, so, sl, sm, row)
            for c in range(RESULT_COLS):
                out[t, k, c] = row[c]
            out[t, k, RESULT_COLS] = levels


@dataclass
class SimulationResult:
    nodes: int
    height: int
    trials: int
    seed: int
    settings: list[Setting]
    raw: np.ndarray = field(repr=False)  # (trials, settings, RESULT_COLS + 1) int64

    def utilization(self, k: int) -> np.ndarray:
        """Per-trial utilization of setting k: sum floor(b/P) P over all threads."""
        return self.raw[:, k, VEC] / self.nodes

    def occupancy(self, k: int) -> np.ndarray:
        """Per-trial lane occupancy: threads / sum ceil(b/P) P."""
        return self.nodes / self.raw[:, k, ISSUED]

    def wide_share(self, k: int) -> np.ndarray:
        """Per-trial share of threads run in blocks of at least P threads."""
        return self.raw[:, k, WIDE] / self.nodes

    def blocks(self, k: int) -> np.ndarray:
        return self.raw[:, k, BLOCKS]

    def max_block(self, k: int) -> np.ndarray:
        """Per-trial largest executed block (for bfs: the widest level)."""
        return self.raw[:, k, MAXBLOCK]

    def reexpansions(self, k: int) -> np.ndarray:
        return self.raw[:, k, REEXP]

    def summary(self) -> dict[str, dict[str, float]]:
        out = {}
        for k, s in enumerate(self.settings):
            u = self.utilization(k)
            out[s.strategy if _unique_names(self.settings) else f"{s.strategy}#{k}"] = {
                "mean": float(u.mean()), "std": float(u.std(ddof=1)) if len(u) > 1 else 0.0,
                "block_size": s.block_size, "reexp_threshold": s.reexp_threshold,
                "simd_width": s.simd_width,
                "occupancy_mean": float(self.occupancy(k).mean()),
                "wide_share_mean": float(self.wide_share(k).mean()),
                "blocks_mean": float(self.blocks(k).mean()),
                "reexpansions_mean": float(self.reexpansions(k).mean()),
            }
        return out


def _unique_names(settings: Sequence[Setting]) -> bool:
    return len({s.strategy for s in settings}) == len(settings)


def settings_array(settings: Sequence[Setting]) -> np.ndarray:
    return np.array([s.row() for s in settings], np.int64).reshape(-1, 4)


def run_range(tables: Tables, n: int, h: int, seed: int, first_trial: int, trials: int,
              settings: np.ndarray) -> np.ndarray:
    """Raw results of one range of trials (one kernel call; releases the GIL)."""
    out = np.zeros((trials, settings.shape[0], RESULT_COLS + 1), np.int64)
    if trials:
        simulate_batch(*tables.kernel_args(), n, h, seed_value(seed), first_trial, trials,
                       settings, out)
    return out


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


def simulate(n: int, h: int, settings: Sequence[Setting], trials: int = DEFAULT_TRIALS,
             seed: int = 0, workers: int | None = None, progress: bool = False
             ) -> SimulationResult:
    """Run ``trials`` trials on ``workers`` threads (numba kernels without the GIL)."""
    if trials < 1:
        raise RevecError(f"trials must be at least 1, got {trials}")
    for s in settings:
        check_setting(s)
    tables = tables_for(n, h)
    arr = settings_array(settings)
    raw = np.zeros((trials, len(settings), RESULT_COLS + 1), np.int64)
    ranges = [(t, min(BATCH, trials - t)) for t in range(0, trials, BATCH)]
    nworkers = max(1, workers or default_workers())

    def job(r: tuple[int, int]) -> tuple[int, np.ndarray]:
        return r[0], run_range(tables, n, h, seed, r[0], r[1], arr)

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=trials, unit="trial", leave=False, smoothing=0.1)
    with ThreadPoolExecutor(nworkers) as pool:
        for start, part in pool.map(job, ranges):
            raw[start:start + len(part)] = part
            if bar is not None:
                bar.update(len(part))
    if bar is not None:
        bar.close()
    return SimulationResult(n, h, trials, seed, list(settings), raw)


def named_settings(strategies: Sequence[str], simd_width: int, block_size: int,
                   reexp_threshold: int | None, switch: str = "whole") -> list[Setting]:
    r = simd_width if reexp_threshold is None else reexp_threshold
    return [Setting(s, block_size, r, simd_width, switch) for s in strategies]


def root_states(seed: int, trials: Sequence[int]) -> list[int]:
    """Root states of the given trials (for the task program treebuild)."""
    s = seed_value(seed)
    return [int(root_state(s, t)) for t in trials]

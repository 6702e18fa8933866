"""Compile (with a source-keyed cache) and run the generated numba module."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
from numba import typed

from revec import ir
from revec.backends.numba_codegen import generate_numba_module
from revec.cli.common import write_atomic
from revec.runtime import numba_scheduler as S
from revec.runtime.memory import MemoryBudgetError
from revec.runtime.stats import RunStats
from revec.runtime.workers import merge_accs, run_stats
from revec.transforms.blocking import to_block_program
from revec.transforms.schedule import Schedule


def cache_dir() -> Path:
    root = os.environ.get("REVEC_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "revec")
    return Path(root) / "numba"


def load_generated(source: str, stem: str) -> types.ModuleType:
    """Import generated source from a file named by its hash (numba caches beside it)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    name = f"revec_gen_{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    path = cache_dir() / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        write_atomic(path, source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class NumbaTask:
    """A compiled task: call :meth:`run` with root arguments and a schedule."""

    def __init__(self, program: ir.Program, task: str) -> None:
        self.program = program
        self.task = program.tasks[task]
        self.source = generate_numba_module(program, task)
        t0 = time.perf_counter()
        self.module = load_generated(self.source, f"{Path(program.path).stem}_{task}")
        from revec.runtime.numba_scheduler import run_schedule

        self.driver = run_schedule
        self.compile_seconds = time.perf_counter() - t0
        self.consts = typed.List(
            [np.ascontiguousarray(program.arrays[a]).reshape(-1).view(np.uint8).copy()
             for a in sorted(program.arrays)] or [np.zeros(8, np.uint8)])
        # invariant parameters are read from the root's slot only: width 0 tells the
        # driver not to grow, scratch or move their columns
        invariant = to_block_program(program, task).invariant
        self.itemsizes = np.array([0 if p.name in invariant else p.ty.dtype.itemsize
                                   for p in self.task.params], np.int64)
        self.static_k = -1 if self.task.max_spawns is None else int(self.task.max_spawns)

    def run(self, args: tuple[Any, ...], schedule: Schedule, max_memory: int = 0,
            workers: int = 1) -> tuple[dict[str, Any], RunStats]:
        """Run one schedule on ``workers`` threads; ``max_memory`` bounds the bytes of
        thread frames of all workers together (0: none)."""
        if workers > 1:
            return self.run_workers(args, schedule, max_memory, workers)
        cols = typed.List()
        for p, a in zip(self.task.params, args):
            col = np.zeros(1024, p.ty.dtype)
            col[0] = a
            cols.append(col.view(np.uint8))
        for _ in range(2):  # base / inductive scratch columns, grown by the driver
            for p in self.task.params:
                cols.append(np.zeros(1024, p.ty.dtype).view(np.uint8))
        for _ in range(self.module.SCRATCH_COLUMNS):  # the kernel's own, grown by it
            cols.append(np.zeros(1024, np.uint8))
        reducers = list(self.program.reducers.values())
        accs = np.zeros(8 * max(len(reducers), 1), np.uint8)
        for i, r in enumerate(reducers):
            accs[8 * i: 8 * i + r.dtype.itemsize].view(r.dtype)[0] = r.identity()
        ints = typed.List([np.zeros(max(self.static_k, 4), np.int64),
                           np.array([max_memory, 0, 0], np.int64), np.zeros(1, np.int64),
                           np.zeros(8, np.int64)])
        t0 = time.perf_counter()
        lv, st = self.driver(self.module.kernel, cols, self.itemsizes, self.consts, accs, ints,
                             self.static_k, schedule.block_size, schedule.reexp_threshold,
                             schedule.simd_width)
        seconds = time.perf_counter() - t0
        if ints[1][1] != 0:
            raise MemoryBudgetError(max_memory)
        values = {r.name: accs[8 * i: 8 * i + r.dtype.itemsize].view(r.dtype)[0].item()
                  for i, r in enumerate(reducers)}
        tasks = lv[:, S.L_TASKS].astype(np.int64)
        total = int(tasks.sum())
        returns = lv[:, S.L_RETURNS]
        stats = RunStats(
            tasks=total, leaves=int(lv[:, S.L_LEAVES].sum()), levels=len(tasks),
            utilization=(int(st[S.VEC]) / total) if total else 0.0,
            reexpansions=int(lv[:, S.L_REEXP].sum()), peak_live=int(st[S.PEAK]),
            seconds=seconds, blocks=int(st[S.BLOCKS]), simd_width=schedule.simd_width,
            tasks_per_level=tasks.tolist(),
            leaves_per_level=lv[:, S.L_LEAVES].astype(np.int64).tolist(),
            reexpansions_per_level=lv[:, S.L_REEXP].astype(np.int64).tolist(),
            reexp_growth_per_level=[float(g / r) if r else 0.0
                                    for g, r in zip(lv[:, S.L_GROWTH], returns)],
        )
        return values, stats

    def _state(self, args: tuple[Any, ...]) -> tuple[Any, np.ndarray]:
        """A worker's frame / scratch columns (the root in slot 0) and accumulators."""
        cols = typed.List()
        for p, a in zip(self.task.params, args):
            col = np.zeros(1024, p.ty.dtype)
            col[0] = a
            cols.append(col.view(np.uint8))
        for _ in range(2):
            for p in self.task.params:
                cols.append(np.zeros(1024, p.ty.dtype).view(np.uint8))
        for _ in range(self.module.SCRATCH_COLUMNS):
            cols.append(np.zeros(1024, np.uint8))
        reducers = list(self.program.reducers.values())
        accs = np.zeros(8 * max(len(reducers), 1), np.uint8)
        for i, r in enumerate(reducers):
            accs[8 * i: 8 * i + r.dtype.itemsize].view(r.dtype)[0] = r.identity()
        return cols, accs

    def run_workers(self, args: tuple[Any, ...], schedule: Schedule, max_memory: int,
                    workers: int) -> tuple[dict[str, Any], RunStats]:
        """The schedule on ``workers`` nogil threads with work stealing
        (:mod:`revec.runtime.numba_workers`)."""
        import threading

        from revec.runtime import numba_workers as NW

        reducers = list(self.program.reducers.values())
        ncols = self.itemsizes.size
        ctl = np.array([1, 0], np.int64)
        req = np.zeros(workers, np.int64)
        resp = np.zeros(workers, np.int64)
        used = np.zeros(workers, np.int64)
        pk_cols = typed.List([np.zeros(max(NW.PKG_CAP * int(w), 1), np.uint8)
                              for _ in range(workers) for w in self.itemsizes])
        pk_meta = np.zeros((workers, NW.PK_COUNTS + NW.PKG_SEGS), np.int64)
        wst = np.zeros((workers, NW.W_COLS), np.int64)
        states = [self._state(args) for _ in range(workers)]
        ints = [typed.List([np.zeros(max(self.static_k, 4), np.int64),
                            np.array([max_memory, 0, w], np.int64), used,
                            np.zeros(8, np.int64)]) for w in range(workers)]
        out: list[Any] = [None] * workers
        errors: list[BaseException] = []
        del ncols

        def work(w: int) -> None:
            try:
                cols, accs = states[w]
                out[w] = NW.run_worker(
                    self.module.kernel, cols, self.itemsizes, self.consts, accs, ints[w],
                    self.static_k, schedule.block_size, schedule.reexp_threshold,
                    schedule.simd_width, w, workers, ctl, req, resp, pk_cols, pk_meta, wst)
            except BaseException as err:  # noqa: BLE001 - re-raised below
                ctl[NW.STOP] = 1
                errors.append(err)

        hz = NW.cycles_per_second()
        threads = [threading.Thread(target=work, args=(w,)) for w in range(1, workers)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        work(0)
        for t in threads:
            t.join()
        seconds = time.perf_counter() - t0
        if errors:
            raise errors[0]
        if any(i[1][1] != 0 for i in ints):
            raise MemoryBudgetError(max_memory)
        accs = states[0][1].copy()
        for w in range(1, workers):
            merge_accs(reducers, accs, states[w][1])
        depth = max(len(lv) for lv, _ in out)
        lv = np.zeros((depth, S.LV_COLS), np.float64)
        st = np.zeros(S.ST_SIZE, np.int64)
        for wl, wstat in out:
            lv[: len(wl)] += wl
            st[S.VEC] += wstat[S.VEC]
            st[S.BLOCKS] += wstat[S.BLOCKS]
            st[S.PEAK] += wstat[S.PEAK]
        wst[:, NW.W_IDLE] = (wst[:, NW.W_IDLE] / hz * 1e9).astype(np.int64)
        values = {r.name: accs[8 * i: 8 * i + r.dtype.itemsize].view(r.dtype)[0].item()
                  for i, r in enumerate(reducers)}
        return values, run_stats(lv, st, wst, seconds, schedule, workers)

"""Build (through the cffi build cache) and run the generated C for one task."""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from revec import ir
from revec.backends.c_codegen import generate_c_module
from revec.backends.c_driver import CDEF, DRIVER_OBJECT, ENTRIES, W_COLS
from revec.errors import RevecError
from revec.runtime import interrupt
from revec.runtime.memory import BudgetUse, MemoryBudgetError, out_of_memory
from revec.runtime.no_return import c_no_return_error
from revec.runtime.stats import RunStats
from revec.runtime.workers import acc_values, init_accs, run_stats
from revec.toolchain.cbuild import load_c_module
from revec.transforms.kernel_plan import build_plan
from revec.transforms.schedule import Schedule

# Identical results to the numba back end: no FMA contraction, wrapping signed
# arithmetic as insurance (the generated code already wraps through unsigned types).
C_FLAGS = ("-ffp-contract=off", "-fwrapv", "-fno-strict-aliasing")
_LOCKS: dict[int, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()
RC_NOMEM, RC_BUDGET, RC_INTERRUPTED = 2, 3, 4  # revec_run's failure codes (csrc/driver.h)
# st_out slots (csrc/driver.c): the deepest level, and after a run over the budget the
# kind that crossed it and the bytes of each kind held (revec.runtime.memory.KINDS);
# slot 7 is revec.runtime.workers.ST_INLINED
ST_MAXDEPTH, ST_WHY, ST_HELD, ST_COLS = 2, 8, 9, 13


@dataclass
class RawRun:
    """A run's accumulators (8 bytes per reducer), per-level statistics ``lv`` (tasks,
    leaves, re-expansions, growth, returns), driver statistics ``st``, per-worker
    statistics ``wst``, seconds, and the frontier of an expansion (frames per column,
    at tree level ``frontier_depth``)."""

    accs: np.ndarray
    lv: np.ndarray
    st: np.ndarray
    wst: np.ndarray
    seconds: float
    frontier: list[np.ndarray] | None = None
    frontier_depth: int = 0
    frontier_count: int = 0

    def stats(self, schedule: Schedule, workers: int = 1) -> RunStats:
        return run_stats(self.lv, self.st, self.wst, self.seconds, schedule, workers)


class CTask:
    def __init__(self, program: ir.Program, task: str, compaction: str = "table",
                 omp: bool = False) -> None:
        self.program = program
        self.task = program.tasks[task]
        # the kernel plan, built once: the generated module and the driver's columns
        # follow it
        self.plan = build_plan(program, task)
        self.source = generate_c_module(program, task, self.plan)
        # the frame columns the driver keeps (parameters not passed on unchanged)
        self.columns = self.plan.columns
        flags = list(C_FLAGS)
        if compaction == "scalar":
            flags.append("-DRV_SCALAR_SPLIT")  # the kernel's branch-free scalar split
        flags.append("-pthread")  # the driver's worker threads
        if omp:
            flags.append("-fopenmp")  # the OpenMP-tasks peer (revec_seq_omp)
        t0 = time.perf_counter()
        hint = f"{Path(program.path).stem}_{task}" + ("_omp" if omp else "")
        self.ffi, self.lib = load_c_module(hint, CDEF,
                                           self.source, extra_compile_args=flags,
                                           libraries=["m", "pthread"],
                                           objects=[DRIVER_OBJECT])
        self.compile_seconds = time.perf_counter() - t0
        # the entry points, as cffi function pointers (c_driver.ENTRIES)
        addr = self.ffi.new("void *[]", len(ENTRIES))
        self.lib.revec_entries(addr)
        # (cffi function pointers: Any; None for an entry the module lacks, the OpenMP
        # peer without -fopenmp)
        fns: dict[str, Any] = {
            name: self.ffi.cast(f"{name}_t", addr[i]) if addr[i] != self.ffi.NULL else None
            for i, name in enumerate(ENTRIES)}
        self._run_from, self._seq, self._free = (
            fns["revec_run_from"], fns["revec_seq"], fns["revec_free"])
        self._set_interrupt, self._seq_omp = fns["revec_set_interrupt"], fns["revec_seq_omp"]
        # one run at a time per loaded module (its driver state is module-global)
        with _LOCKS_GUARD:
            self._lock = _LOCKS.setdefault(id(self.lib), threading.Lock())
        self._arrays = [np.ascontiguousarray(program.arrays[a]) for a in sorted(program.arrays)]
        self._array_ptrs = self.ffi.new("void *[]", max(len(self._arrays), 1))
        for i, a in enumerate(self._arrays):
            self._array_ptrs[i] = self.ffi.cast("void *", a.ctypes.data)

    def _root(self, args: tuple[Any, ...]) -> bytes:
        buf = np.zeros(8 * max(len(args), 1), np.uint8)
        for i, (p, a) in enumerate(zip(self.task.params, args)):
            buf[8 * i: 8 * i + p.ty.dtype.itemsize].view(p.ty.dtype)[0] = a
        return buf.tobytes()

    def _accs(self) -> tuple[np.ndarray, list[ir.ReducerDecl]]:
        reducers = list(self.program.reducers.values())
        return init_accs(reducers, np.zeros(8 * max(len(reducers), 1), np.uint8)), reducers

    @staticmethod
    def _values(accs: np.ndarray, reducers: list[ir.ReducerDecl]) -> dict[str, Any]:
        return acc_values(reducers, accs)

    def run(self, args: tuple[Any, ...], schedule: Schedule, max_memory: int = 0,
            workers: int = 1) -> tuple[dict[str, Any], RunStats]:
        """Run one schedule on ``workers`` threads; ``max_memory`` bounds the bytes of
        thread frames of all workers together (0: none)."""
        raw = self.run_raw(args, schedule, max_memory, workers)
        return self.values(raw.accs), raw.stats(schedule, workers)

    def run_raw(self, args: tuple[Any, ...], schedule: Schedule, max_memory: int = 0,
                workers: int = 1, frames: list[np.ndarray] | None = None, depth: int = 0,
                stop_at: int = 0, count: int = 0, bounds_from: np.ndarray | None = None
                ) -> RawRun:
        """The run's accumulators and statistics arrays, unconverted.  ``frames``: start
        from these thread frames (one array per column of :attr:`columns`, all at tree
        level ``depth``, ``count`` of them) instead of the root; ``stop_at``: stop once the first bfs block
        holds that many threads and return it as :attr:`RawRun.frontier`; ``bounds_from``:
        accumulators whose bounds (``ir.ReducerDecl.bound``) this run starts from."""
        ffi = self.ffi
        accs, reducers = self._accs()
        if bounds_from is not None:
            # a chunk of a Dask run: its bounds start where the frontier's were
            for i, r in enumerate(reducers):
                if r.bound:
                    accs[8 * i: 8 * i + 8] = bounds_from[8 * i: 8 * i + 8]
        lv_out = ffi.new("double **")
        nlv = ffi.new("int64_t *")
        st = np.zeros(ST_COLS, np.int64)
        wst = np.zeros((max(workers, 1), W_COLS), np.int64)
        ncols = max(len(self.columns), 1)
        cols = ffi.new("void *[]", ncols)
        n = 0
        if frames is not None:
            frames = [np.ascontiguousarray(a) for a in frames]
            n = count
            for i, a in enumerate(frames):
                cols[i] = ffi.cast("void *", a.ctypes.data)
        front = ffi.new("void *[]", ncols)
        fn = ffi.new("int64_t *")
        fd = ffi.new("int64_t *")
        with self._lock:  # the driver's shared state is per module: one run at a time
            flag = interrupt.flag()
            self._set_interrupt(ffi.cast("int64_t *", flag.ctypes.data))
            interrupt.clear()
            t0 = time.perf_counter()
            rc = self._run_from(
                self._root(args), cols, n, depth, stop_at, front, fn, fd,
                schedule.block_size, schedule.reexp_threshold, schedule.simd_width,
                self._array_ptrs, ffi.from_buffer("char[]", accs), lv_out, nlv,
                ffi.cast("int64_t *", st.ctypes.data), max_memory, max(workers, 1),
                ffi.cast("int64_t *", wst.ctypes.data))
            seconds = time.perf_counter() - t0
        frontier = None
        if int(fn[0]) > 0 or stop_at > 0:
            frontier = []
            for i, p in enumerate(self.columns):
                k = int(fn[0]) * p.ty.dtype.itemsize
                frontier.append(np.frombuffer(ffi.buffer(front[i], k), p.ty.dtype).copy()
                                if k else np.zeros(0, p.ty.dtype))
            for i in range(ncols):
                if front[i] != ffi.NULL:
                    self._free(front[i])
        if rc == RC_INTERRUPTED:
            raise KeyboardInterrupt
        helper_error = c_no_return_error(self.program, rc)
        if helper_error is not None:
            raise helper_error
        if rc == RC_BUDGET:
            raise MemoryBudgetError(max_memory, BudgetUse.of(
                st[ST_HELD:ST_HELD + 4].tolist(), int(st[ST_WHY]), int(st[ST_MAXDEPTH]),
                schedule.strategy, max(workers, 1)))
        if rc == RC_NOMEM:
            raise out_of_memory("C", max_memory)
        k = int(nlv[0])
        lv = np.frombuffer(ffi.buffer(lv_out[0], k * 5 * 8), np.float64).reshape(k, 5).copy()
        self._free(lv_out[0])
        return RawRun(accs, lv, st, wst, seconds, frontier, int(fd[0]), int(fn[0]))

    def values(self, accs: np.ndarray) -> dict[str, Any]:
        return self._values(accs, list(self.program.reducers.values()))

    def run_recursive(self, args: tuple[Any, ...]) -> tuple[dict[str, Any], float]:
        """The plain recursive C of the same program (the C programmer's baseline)."""
        accs, reducers = self._accs()
        with self._lock:
            t0 = time.perf_counter()
            self._seq(self._root(args), self._array_ptrs, self.ffi.from_buffer("char[]", accs))
            seconds = time.perf_counter() - t0
        return self._values(accs, reducers), seconds

    def run_omp(self, args: tuple[Any, ...], threads: int, cutoff: int
                ) -> tuple[dict[str, Any], float]:
        """The OpenMP-tasks peer (a task per spawn above depth ``cutoff``) on
        ``threads`` threads; needs ``omp=True``."""
        if self._seq_omp is None:
            raise RevecError("this module was built without -fopenmp (omp_task builds "
                             "the OpenMP-tasks peer)")
        accs, reducers = self._accs()
        with self._lock:
            t0 = time.perf_counter()
            self._seq_omp(self._root(args), self._array_ptrs,
                          self.ffi.from_buffer("char[]", accs), cutoff, threads)
            seconds = time.perf_counter() - t0
        return self._values(accs, reducers), seconds


@functools.lru_cache(maxsize=16)
def omp_task(program: ir.Program, task: str) -> CTask:
    """The program built with ``-fopenmp``, for its OpenMP-tasks peer."""
    return CTask(program, task, omp=True)

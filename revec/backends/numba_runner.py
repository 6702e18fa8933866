"""Compile (with a source-keyed cache) and run the generated numba module.

numba's on-disk cache (index ``.nbi`` and object ``.nbc`` files beside the generated
module, or under ``$NUMBA_CACHE_DIR``) is loaded into the process without a check of
its own beyond a pickle: a damaged file raises from deep inside numba or, with a flipped
bit in the object code, crashes.  revec records the size and SHA-256 of those files
after each import and verifies them before the next one (under a per-module lock); a
mismatch is reported once and the module's cache files are deleted, so numba rebuilds
them.  The shared runtime (:mod:`revec.runtime.numba_scheduler` and its helpers) is
checked the same way before its first import.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import numpy as np

from revec import ir
from revec.backends.gc_pause import gc_paused
from revec.backends.numba_codegen import generate_numba_module
from revec.files import write_atomic
from revec.frontend.assemble import RECURSION_LIMIT
from revec.frontend.buffers import raw_buffer
from revec.runtime import interrupt
from revec.runtime.memory import BudgetUse, MemoryBudgetError, out_of_memory
from revec.runtime.no_return import NoReturnValue, no_return_error
from revec.runtime.stats import RunStats
from revec.runtime.workers import acc_slot, acc_values, init_accs, merge_accs, run_stats
from revec.toolchain import cache_root
from revec.toolchain.cache_check import NO_RECORD, mismatch, warn_once, write_sums
from revec.toolchain.cbuild import file_lock
from revec.transforms.kernel_plan import build_plan
from revec.transforms.schedule import Schedule


def cache_dir() -> Path:
    """Where generated modules are written (numba caches beside them): under
    ``$REVEC_CACHE_DIR``, or a private temporary cache when that cannot be written
    (numba itself does not use a cache folder it cannot write)."""
    return cache_root.writable() / "numba"


def numba_cache_folder(py_file: Path) -> Path | None:
    """Where numba caches the functions of ``py_file`` (its own locator rules)."""
    from numba.core.caching import CacheImpl

    def probe() -> None:  # a function object for the locators: only its line is read
        pass

    locators: list[Any] = CacheImpl._locator_classes  # (numba's: untyped)
    for cls in locators:
        try:
            locator = cls.from_function(probe, str(py_file))
        except Exception:  # a locator that does not apply to plain files
            locator = None
        if locator is not None:
            return Path(locator.get_cache_path())
    return None


def numba_cache_files(py_file: Path) -> dict[str, Path]:
    """numba's cache files of the functions defined in ``py_file`` (by file name)."""
    folder = numba_cache_folder(py_file)
    if folder is None or not folder.is_dir():
        return {}
    prefix = py_file.stem + "."
    return {f.name: f for f in folder.iterdir()
            if f.name.startswith(prefix) and f.suffix in (".nbi", ".nbc")}


def _verify(files_of: list[Path], record: Path, what: str) -> None:
    """Check the cache files of ``files_of`` against ``record``; on a mismatch warn
    once and delete them (numba rebuilds them on import)."""
    files: dict[str, Path] = {}
    for f in files_of:
        files.update(numba_cache_files(f))
    if not files and not record.exists():
        return
    problem = mismatch(record, files)
    if problem is None:
        return
    if problem != NO_RECORD:
        warn_once(str(record), f"numba's cache of {what} is damaged ({problem}); "
                  "rebuilding it")
    for f in files.values():
        f.unlink(missing_ok=True)
    record.unlink(missing_ok=True)


def _record(files_of: list[Path], record: Path) -> None:
    files: dict[str, Path] = {}
    for f in files_of:
        files.update(numba_cache_files(f))
    write_sums(record, files)


_RUNTIME_MODULES = ("revec.runtime.numba_scheduler", "revec.runtime.numba_support")
# the work-stealing driver: imported (and checked) on the first run with several workers
_WORKERS_MODULE = "revec.runtime.numba_workers"


def _runtime_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "runtime"


def _runtime_files() -> list[Path]:
    return [_runtime_dir() / "numba_scheduler.py", _runtime_dir() / "numba_support.py"]


def _workers_files() -> list[Path]:
    return [_runtime_dir() / "numba_workers.py"]


def _runtime_record(files: list[Path], stem: str) -> Path:
    """Beside the runtime's numba cache files (shared by every revec cache using them)."""
    # keyed by the runtime's source: a changed runtime (a new revec) starts a new record,
    # and numba rewrites its files for the new source without a spurious warning
    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    tag = h.hexdigest()[:16]
    folder = numba_cache_folder(files[0])
    if folder is None:
        return cache_dir() / f"{stem}-{tag}.sums"
    return folder / f"revec-{stem}-{tag}.sums"


def _load_checked(name: str, files: list[Path], stem: str, what: str) -> types.ModuleType:
    """Import a compiled runtime module after checking its numba cache (once per
    process): a damaged cache file is reported once and rebuilt, never loaded."""
    if name in sys.modules:
        return sys.modules[name]
    record = _runtime_record(files, stem)
    record.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(record.with_suffix(".lock")):
        _verify(files, record, what)
        with gc_paused():
            module = importlib.import_module(name)
        _record(files, record)
    return module


def _load_runtime() -> types.ModuleType:
    """Import the shared scheduler after checking its numba cache (once per process)."""
    return _load_checked(_RUNTIME_MODULES[0], _runtime_files(), "runtime",
                         "revec's scheduler")


_workers_recorded: list[bool] = []  # once per process, after the first run


def load_workers() -> types.ModuleType:
    """The work-stealing driver (:mod:`revec.runtime.numba_workers`), its numba cache
    checked like the scheduler's."""
    return _load_checked(_WORKERS_MODULE, _workers_files(), "workers",
                         "revec's work-stealing driver")


def record_runtime() -> None:
    """Re-record the shared runtime's cache (its helpers compile with the first kernel),
    and the work-stealing driver's once it is loaded (a helper compiles on first use)."""
    _rerecord(_runtime_files(), "runtime")
    if _WORKERS_MODULE in sys.modules:
        _rerecord(_workers_files(), "workers")


def _rerecord(files: list[Path], stem: str) -> None:
    record = _runtime_record(files, stem)
    with file_lock(record.with_suffix(".lock")):
        _record(files, record)


S = _load_runtime()
# the list builders are part of the runtime: taken after the check of its cache above
_SUPPORT = importlib.import_module("revec.runtime.numba_support")
bytes_list = _SUPPORT.bytes_list
ints_list = _SUPPORT.ints_list


def load_generated(source: str, stem: str) -> types.ModuleType:
    """Import generated source from a file named by its hash and that of the vector
    primitives it calls (numba caches beside it, and does not notice a change of the
    functions a cached function calls)."""
    from revec.runtime.compaction.numba_vector import source_digest

    digest = hashlib.sha256((source + source_digest()).encode()).hexdigest()[:20]
    name = f"revec_gen_{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    path = cache_dir() / f"{name}.py"
    with cache_root.cache_writes(path.parent.parent, path):
        return _load_generated(source, name, path)


def _load_generated(source: str, name: str, path: Path) -> types.ModuleType:
    path.parent.mkdir(parents=True, exist_ok=True)
    record = path.with_suffix(".sums")
    with file_lock(path.with_suffix(".lock")):
        if not path.exists() or path.read_text() != source:
            write_atomic(path, source)
        _verify([path], record, f"the generated module {path.name}")
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        # the source of a deep expression (a 3,000-term sum: a flat chain, still a tree
        # that deep to Python's compiler) compiles under the checker's recursion limit,
        # as the program's own source did
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
        try:
            # (numba's failed writes do not name their file: name its cache folder)
            with gc_paused(), cache_root.cache_writes(
                    path.parent.parent, numba_cache_folder(path) or path):
                spec.loader.exec_module(module)  # compiles (or loads) the kernel
        except BaseException:
            del sys.modules[name]
            raise
        finally:
            sys.setrecursionlimit(limit)
        _record([path], record)
    return module


def record_generated(module: types.ModuleType) -> None:
    """Re-record a generated module's cache after its first run (lazily compiled
    helpers add files)."""
    path = Path(module.__file__ or "")
    record = path.with_suffix(".sums")
    with cache_root.cache_writes(path.parent.parent, record), \
            file_lock(path.with_suffix(".lock")):
        _record([path], record)


class NumbaTask:
    """A compiled task: call :meth:`run` with root arguments and a schedule."""

    def __init__(self, program: ir.Program, task: str, compaction: str | None = None
                 ) -> None:
        self.program = program
        self.task = program.tasks[task]
        # the kernel plan, built once: the generated module and the driver's columns
        # follow it
        self.plan = build_plan(program, task, "scalar" if compaction == "scalar" else "vector",
                               "numba")
        self.source = generate_numba_module(program, task, compaction, self.plan)
        t0 = time.perf_counter()
        self.module = load_generated(self.source, f"{Path(program.path).stem}_{task}")
        record_runtime()  # the kernel's compile may have added runtime helpers' files
        from revec.runtime.numba_scheduler import run_schedule

        self.driver = run_schedule
        self._recorded = False
        self.compile_seconds = time.perf_counter() - t0
        # an output's working buffer itself (the kernels store into it; its flag byte
        # after the elements), every other array a copy of its bytes
        self.const_arrays = [
            raw_buffer(program.arrays[a]) if a in program.outputs else
            np.ascontiguousarray(program.arrays[a]).reshape(-1).view(np.uint8).copy()
            for a in sorted(program.arrays)] or [np.zeros(8, np.uint8)]
        self.shared = [a in program.outputs for a in sorted(program.arrays)] or [False]
        self.consts = bytes_list(self.const_arrays)
        # invariant parameters are read from the root's slot only: width 0 tells the
        # driver not to grow, scratch or move their columns
        invariant = {c.name for c in self.plan.invariant}
        self.itemsizes = np.array([0 if p.name in invariant else p.ty.dtype.itemsize
                                   for p in self.task.params], np.int64)
        self.static_k = -1 if self.task.max_spawns is None else int(self.task.max_spawns)
        # what the module's own scratch columns need per block (read by the driver)
        self.scratch_bytes = np.ascontiguousarray(self.module.SCRATCH_BYTES, np.int64)

    def run(self, args: tuple[Any, ...], schedule: Schedule, max_memory: int = 0,
            workers: int = 1) -> tuple[dict[str, Any], RunStats]:
        """Run one schedule on ``workers`` threads; ``max_memory`` bounds the bytes of
        thread frames of all workers together (0: none)."""
        if workers > 1:
            return self.run_workers(args, schedule, max_memory, workers)
        cols, accs = self._state(args)
        flags = _flags(max_memory, 0)
        ints = ints_list([np.zeros(max(2 * self.static_k, 4), np.int64), flags,
                          np.zeros(1, np.int64), self._meta(), interrupt.flag(),
                          self.scratch_bytes, *self._bound_cells(accs)])
        interrupt.clear()
        t0 = time.perf_counter()
        try:
            lv, st = self.driver(self.module.kernel, cols, self.itemsizes, self.consts, accs,
                                 ints, self.static_k, schedule.block_size,
                                 schedule.reexp_threshold, schedule.simd_width)
        except NoReturnValue as err:  # a helper fell off its end
            raise no_return_error(self.program, err.args[0]) from None
        except SystemError:
            # a SIGINT's KeyboardInterrupt can surface as "returned a result with an
            # exception set" while numba boxes the result
            if interrupt.interrupted():
                raise KeyboardInterrupt from None
            raise
        except MemoryError:  # an allocation failed before the run reached its budget
            raise out_of_memory("numba", max_memory) from None
        finally:
            if not self._recorded:  # the first run compiled whatever was still lazy
                self._recorded = True
                record_generated(self.module)
                record_runtime()
        if interrupt.interrupted():  # the driver stopped between blocks
            raise KeyboardInterrupt
        seconds = time.perf_counter() - t0
        if flags[_SUPPORT.F_OVER] != 0:
            raise MemoryBudgetError(max_memory, _budget_use([flags], [st], schedule, 1))
        values = self._values(accs)
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
            inlined=int(st[S.INLINED]),
        )
        return values, stats

    def _bound_cells(self, accs: np.ndarray) -> list[np.ndarray]:
        """The bounds' shared cells (``ints[BOUND_CELLS]``, none without bounds): one
        int64 per bound holding its value's bits (an integer widened to int64, a float
        as float64), starting at its accumulator's value."""
        if not self.plan.bounds:
            return []
        reducers = list(self.program.reducers.values())
        cells = _own_lines(len(self.plan.bounds), np.int64)
        for k, b in enumerate(self.plan.bounds):
            i = next(j for j, r in enumerate(reducers) if r.name == b)
            value = acc_slot(accs, i, reducers[i])
            wide = value.astype(np.float64) if value.dtype.kind == "f" else value
            cells[k] = wide.astype(np.int64)[0] if value.dtype.kind != "f" else \
                wide.view(np.int64)[0]
        return [cells]

    def _meta(self, meta: np.ndarray | None = None) -> np.ndarray:
        """A kernel call's meta slots (numba_support.M_*), with the plan's child-block
        slack, which the driver's stride of the child blocks follows."""
        meta = np.zeros(8, np.int64) if meta is None else meta
        meta[_SUPPORT.M_SLACK] = self.plan.slack
        return meta

    def _values(self, accs: np.ndarray) -> dict[str, Any]:
        """The reducers' values in the accumulator bytes (8 per reducer)."""
        return acc_values(list(self.program.reducers.values()), accs)

    def _state(self, args: tuple[Any, ...]) -> tuple[Any, np.ndarray]:
        """A worker's frame / scratch columns (the root in slot 0) and accumulators (on
        cache lines no other array shares: each worker writes them every block)."""
        arrays = []
        for p, a in zip(self.task.params, args):
            col = np.zeros(1024, p.ty.dtype)
            col[0] = a
            arrays.append(col.view(np.uint8))
        for _ in range(2):  # base / inductive scratch columns, grown by the driver
            for p in self.task.params:
                arrays.append(np.zeros(1024, p.ty.dtype).view(np.uint8))
        for _ in range(self.module.SCRATCH_COLUMNS):  # the kernel's own, grown by it
            arrays.append(np.zeros(1024, np.uint8))
        cols = bytes_list(arrays)
        reducers = list(self.program.reducers.values())
        return cols, init_accs(reducers, _own_lines(8 * max(len(reducers), 1), np.uint8))

    def run_workers(self, args: tuple[Any, ...], schedule: Schedule, max_memory: int,
                    workers: int) -> tuple[dict[str, Any], RunStats]:
        """The schedule on ``workers`` nogil threads with work stealing
        (:mod:`revec.runtime.numba_workers`)."""

        NW: Any = load_workers()
        reducers = list(self.program.reducers.values())
        ncols = self.itemsizes.size
        ctl = np.array([1, 0], np.int64)
        req = np.zeros(workers, np.int64)
        resp = np.zeros(workers, np.int64)
        used = np.zeros(workers, np.int64)
        pk_cols = bytes_list([np.zeros(max(NW.PKG_CAP * int(w), 1), np.uint8)
                              for _ in range(workers) for w in self.itemsizes])
        pk_meta = np.zeros((workers, NW.PK_COUNTS + NW.PKG_SEGS), np.int64)
        wst = np.zeros((workers, NW.W_COLS), np.int64)
        states = [self._state(args) for _ in range(workers)]
        # the small arrays a worker writes every block (child counters, kernel meta,
        # accumulators) on cache lines of their own: adjacent allocations shared a line
        # between workers (false sharing)
        flags = [_flags(max_memory, w) for w in range(workers)]
        for f in flags:  # each worker's package columns, its rows of pk_meta and wst
            f[_SUPPORT.F_HELD + _SUPPORT.K_OTHER] = (
                NW.PKG_CAP * int(self.itemsizes.sum()) + 8 * (pk_meta.shape[1] + NW.W_COLS))
        cells = self._bound_cells(states[0][1])  # one shared cell per bound
        ints = [ints_list([_own_lines(max(2 * self.static_k, 4), np.int64), flags[w], used,
                           self._meta(_own_lines(8, np.int64)), interrupt.flag(),
                           self.scratch_bytes, *cells])
                for w in range(workers)]
        # each worker its own list of the constant arrays: a kernel takes list items,
        # and the reference counts of one shared list's items would be written by every
        # worker on every block
        # (an output's list item is a view of the one buffer every worker stores into)
        consts = [self.consts] + [bytes_list([c[:] if shared else c.copy() for c, shared in
                                              zip(self.const_arrays, self.shared)])
                                  for _ in range(1, workers)]
        interrupt.clear()
        out: list[Any] = [None] * workers
        errors: list[BaseException] = []
        del ncols

        def work(w: int) -> None:
            try:
                cols, accs = states[w]
                out[w] = NW.run_worker(
                    self.module.kernel, cols, self.itemsizes, consts[w], accs, ints[w],
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
        if not _workers_recorded:  # the first run compiled the driver's lazy helpers
            _workers_recorded.append(True)
            record_runtime()
        if interrupt.interrupted():  # every worker stopped between blocks
            raise KeyboardInterrupt
        if errors:
            if isinstance(errors[0], MemoryError):  # (as in run)
                raise out_of_memory("numba", max_memory) from None
            if isinstance(errors[0], NoReturnValue):  # a helper fell off its end
                raise no_return_error(self.program, errors[0].args[0]) from None
            raise errors[0]
        if any(f[_SUPPORT.F_OVER] != 0 for f in flags):
            raise MemoryBudgetError(max_memory, _budget_use(
                flags, [o[1] for o in out if o is not None], schedule, workers))
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
            st[S.INLINED] += wstat[S.INLINED]
        wst[:, NW.W_IDLE] = (wst[:, NW.W_IDLE] / hz * 1e9).astype(np.int64)
        values = self._values(accs)
        return values, run_stats(lv, st, wst, seconds, schedule, workers)


def _flags(max_memory: int, worker: int) -> np.ndarray:
    """A worker's driver flags (``ints[1]``, numba_support.F_*): the budget, the
    over-budget flag, the worker's index and the bytes it holds of each kind."""
    flags = np.zeros(_SUPPORT.N_FLAGS, np.int64)
    flags[_SUPPORT.F_BUDGET] = max_memory
    flags[_SUPPORT.F_WORKER] = worker
    return flags


def _budget_use(flags: list[np.ndarray], sts: list[np.ndarray], schedule: Schedule,
                workers: int) -> BudgetUse:
    """What the workers held when one went over the budget (their flags' counters and
    the deepest level of their statistics ``sts``)."""
    held = np.sum([f[_SUPPORT.F_HELD:_SUPPORT.F_HELD + 4] for f in flags], axis=0)
    why = next(int(f[_SUPPORT.F_OVER]) for f in flags if f[_SUPPORT.F_OVER] != 0)
    depth = max((int(st[S.MAXDEPTH]) for st in sts), default=0)
    return BudgetUse.of(held.tolist(), why, depth, schedule.strategy, workers)


def _own_lines(n: int, dtype: Any) -> np.ndarray:
    """``n`` zeros of ``dtype`` with 128 bytes of padding on either side (two cache lines:
    the adjacent-line prefetcher pairs them), so that no other array's data shares their
    cache lines."""
    size = np.dtype(dtype).itemsize
    return np.zeros(n * size + 256, np.uint8)[128: 128 + n * size].view(dtype)

"""Runs across machines with Dask (docs/backends.md, "Workers").

The root expands breadth-first (one bfs block per level, in this process) until a level
holds many more threads than the cluster has cores; that frontier is cut into chunks
(SoA numpy arrays, a few chunks per core: over-decomposition, so Dask's own dynamic
scheduling balances unbalanced trees).  Each chunk is a pure Dask task: it runs the
compiled program (C back end) from the chunk's frames with the local multi-core runtime
and returns its reducers and statistics.  A task lost with its worker is simply run
again.  Results are combined in chunk order: the expansion's reducers, then chunk 0,
1, ...; so integer, min and max results equal a single process's, and float sums
differ by summation order only.

This module drives whole runs through the API (:mod:`revec.api`: the checked program,
the compiled task, the result), so it sits above the API in revec's layers
(tests/test_layering.py), not in :mod:`revec.runtime` below it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from revec import ir
from revec.api import RunResult, compiled_task, get_program, result_of, root_args
from revec.errors import RevecError
from revec.frontend.inputs import bind_inputs, global_inputs
from revec.frontend.outputs import start_outputs
from revec.runtime.memory import check_budget, default_budget
from revec.runtime.workers import check_workers, default_workers, merge_accs, run_stats
from revec.transforms.schedule import Schedule

CHUNKS_PER_CORE = 4
THREADS_PER_CHUNK = 256  # frontier threads per chunk the expansion aims for
# seconds (docs/backends.md, "Workers"): how long to try to reach the scheduler
# (--connect-timeout), and how long a cluster may have no worker, at the start or
# after its last worker left, before the run gives up (--worker-timeout)
CONNECT_TIMEOUT = 20.0
WORKER_TIMEOUT = 60.0
POLL = 0.5  # seconds between looks at the cluster while no chunk finishes
FETCH = 2.0  # seconds a finished chunk's result may take to arrive (doubled on retry)


def _program_path(path: str, source: str) -> str:
    """The program file on this machine: ``path`` if it holds ``source``, else a copy
    of ``source`` under the cache directory (a worker on another machine)."""
    p = Path(path)
    try:
        if p.is_file() and p.read_text() == source:
            return path
    except OSError:
        pass
    from revec.toolchain import cache_root

    d = cache_root.writable() / "dask" / hashlib.sha256(source.encode()).hexdigest()[:20]
    d.mkdir(parents=True, exist_ok=True)
    q = d / p.name
    if not q.exists():
        tmp = d / f".{p.name}.{os.getpid()}"
        tmp.write_text(source)
        os.replace(tmp, q)
    return str(q)


def run_chunk(path: str, source: str, task: str, rargs: tuple[Any, ...],
              frames: list[np.ndarray], count: int, depth: int, schedule: Schedule,
              max_memory: int, workers: int | None, bounds_from: np.ndarray | None = None,
              inputs: tuple[Any, ...] | None = None, pointers: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, dict[str, np.ndarray]]:
    """One Dask task: the schedule from ``count`` thread frames (one array per column,
    tree level ``depth``).  A program's bounds (branch-and-bound) start from
    ``bounds_from``, the frontier's accumulators: each chunk prunes with the bound the
    frontier had, never with another chunk's.  ``inputs``: the root call's arguments
    when the task has array inputs or boards (an output's argument: its initial
    values), ``pointers``: the arrays of the file-scope pointers (both bound here as on
    the caller's side).  Returns the accumulators, per-level statistics, driver
    statistics, seconds and the output arrays as the chunk's tasks left them (by
    parameter name)."""
    program = get_program(_program_path(path, source))
    if inputs is not None or pointers:  # (own output buffers: a chunk may run in the
        # head's process)
        program = bind_inputs(program, task, inputs or (), pointers,
                              fresh=bool(program.outputs))[0]
    ctask = compiled_task(program, task, "c")
    with start_outputs(program, task, inputs or (), fill_callers=False) as outs:
        raw = ctask.run_raw(rargs, schedule, max_memory, workers or _chunk_workers(),
                            frames=frames, depth=depth, count=count, bounds_from=bounds_from)
    return raw.accs, raw.lv, raw.st, raw.seconds, outs.results


def _bound(program: ir.Program, keys: Sequence[str], fields: tuple[tuple[str, str], ...]
           ) -> Any:
    """A bound input as the caller passes it: its array, or (structs) a dict of fields."""
    if fields:
        return {f: program.arrays[k] for f, k in fields}
    return program.arrays[keys[0]]


def _chunk_workers() -> int:
    """Every core of the worker's machine: chunks in one process run one at a time (the
    compiled driver's state is per module), each on all cores."""
    return default_workers()


def _start_local(cluster_type: Any, n: int, own: list[Any]) -> None:
    """Start a local cluster of ``n`` worker processes and append it to ``own`` (the
    objects the run closes).

    Ctrl-C reaches every process of the terminal's process group: the head stops the
    run and closes the cluster, and a worker process must not see it (each printed a
    KeyboardInterrupt traceback).  So SIGINT is blocked in this thread while the cluster
    starts: its event-loop thread, and every worker process that thread starts (also
    later, to replace a lost one), inherit the signal blocked.  An interrupt meanwhile
    waits, and arrives once the cluster is in ``own`` (closed on the way out).  The
    cluster's logs are silenced: the head says what matters (a chunk's error, a lost
    worker) once, without the workers' tracebacks."""
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    if main:
        # multiprocessing starts its resource tracker with SIGINT blocked and then
        # *unblocks* it in the starting thread: started here first, it is not started
        # (and the signal not unblocked) in the cluster's thread
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if main else None
    try:
        with warnings.catch_warnings():
            # the scheduler's HTTP endpoints (health, metrics) move to a free port when
            # another cluster holds 8787: nothing for the user to act on
            warnings.filterwarnings("ignore", message="Port .* is already in use")
            own.append(cluster_type(n_workers=n, threads_per_worker=1, processes=True,
                                    dashboard_address=None, silence_logs=logging.CRITICAL))
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def ignore_sigint_plugin() -> Any:
    """A Dask worker plugin for the local cluster's worker processes: SIGINT ignored
    (see :func:`_start_local`; for a cluster whose event-loop thread was started before,
    without the signal blocked).  (Defined here, not at module level: importing
    this module does not import distributed; Dask sends the class by value.)"""
    from distributed.diagnostics.plugin import WorkerPlugin

    class IgnoreSigint(WorkerPlugin):
        idempotent = True

        def setup(self, worker: Any) -> None:
            import signal
            import threading

            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, signal.SIG_IGN)

    return IgnoreSigint()


@contextlib.contextmanager
def _quiet_distributed() -> Iterator[None]:
    """distributed's log lines (its warnings and tracebacks: a key it could not gather,
    a connection closed) off while a run goes on: the run says what matters itself (a
    lost worker, a wait, a chunk's error), once."""
    handlers = [h for h in logging.getLogger("distributed").handlers
                if isinstance(h, logging.StreamHandler)]
    levels = [h.level for h in handlers]
    for h in handlers:
        h.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for h, level in zip(handlers, levels):
            h.setLevel(level)


def _is_not_allexit(record: logging.LogRecord) -> bool:
    exc = record.exc_info[1] if record.exc_info else None
    return type(exc).__name__ != "AllExit"


def _drop_allexit() -> None:
    """distributed's client ends a fetch of a lost chunk with an internal AllExit that no
    one retrieves; asyncio would print it, with a traceback, when the task is freed
    (possibly after the run).  Those records are dropped (installed once)."""
    log = logging.getLogger("asyncio")
    if _is_not_allexit not in log.filters:
        log.addFilter(_is_not_allexit)


class _Notes:
    """What the head says on standard error: the progress line (rewritten in place)
    and one line for each event (a wait, a lost worker) on its own line."""

    def __init__(self, progress: bool) -> None:
        self.progress, self.open = progress, False

    def line(self, text: str) -> None:
        if self.progress:
            self.open = True  # first: an interrupt in print still ends the line
            print(f"\rrevec: {text}", end="", file=sys.stderr, flush=True)

    def note(self, text: str) -> None:
        self.end()
        print(f"revec: {text}", file=sys.stderr, flush=True)

    def end(self) -> None:
        if self.open:
            print(file=sys.stderr, flush=True)
            self.open = False


def _connect(client_type: Any, scheduler: str, timeout: float) -> Any:
    """A client of the scheduler at ``scheduler``, or a :class:`RevecError` after
    ``timeout`` seconds (said on standard error after a few seconds of trying)."""
    import threading

    slow = threading.Timer(2.0, lambda: _Notes(False).note(
        f"connecting to the Dask scheduler at {scheduler} (giving up after {timeout:g} s; "
        "--connect-timeout)"))
    slow.daemon = True
    if timeout > 2.0:
        slow.start()
    try:
        return client_type(scheduler, timeout=timeout)
    except ValueError as err:  # not an address: no port, unknown scheme
        raise RevecError(f"--scheduler {scheduler!r} is not a Dask scheduler address "
                         f"({err}); give HOST:PORT or tcp://HOST:PORT") from None
    except (OSError, TimeoutError) as err:
        why = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise RevecError(f"cannot reach the Dask scheduler at {scheduler} within "
                         f"{timeout:g} s (--connect-timeout SECONDS): {why}") from None
    finally:
        slow.cancel()


def _wait_for_workers(client: Any, where: str, timeout: float) -> None:
    """Return once the cluster has a worker; say that it waits; a :class:`RevecError`
    after ``timeout`` seconds without one."""
    if client.nthreads():
        return
    _Notes(False).note(f"waiting for a Dask worker to join the scheduler at {where} "
                       f"(giving up after {timeout:g} s; --worker-timeout)")
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise RevecError(f"no Dask worker joined the scheduler at {where} within "
                         f"{timeout:g} s (--worker-timeout SECONDS); start one with "
                         f"'dask worker {where}'") from None


def _gather(client: Any, futures: list[Any], where: str, timeout: float, progress: bool,
            on_chunk: Callable[[int, int, Any], None] | None) -> list[Any]:
    """The chunks' results in chunk order, as they finish.  ``futures`` is emptied: a
    chunk's future is released once its result is here (a worker lost later does not
    make Dask run it again).  Chunks lost with a worker are said on standard error (Dask
    runs them again); a cluster left with no worker for ``timeout`` seconds is a
    :class:`RevecError`, and so is a chunk Dask gave up on."""
    from collections import deque

    from distributed import KilledWorker, wait

    total = len(futures)
    index = {f.key: i for i, f in enumerate(futures)}
    pending = {f.key: f for f in futures}
    futures.clear()
    results: list[Any] = [None] * total
    notes = _Notes(progress)
    lost: deque[tuple[str, set[Any]]] = deque()
    fetch: dict[Any, float] = {}  # a chunk's fetch timeout after it ran out

    def on_event(event: Any) -> None:  # on the client's event loop thread
        msg = event[1] if isinstance(event, tuple | list) and len(event) == 2 else None
        if isinstance(msg, dict) and msg.get("action") == "remove-worker":
            keys = set(msg.get("processing-tasks") or ()) | set(
                msg.get("lost-computed-tasks") or ())
            lost.append((str(msg.get("worker")), keys))

    client.subscribe_topic("all", on_event)
    empty_since: float | None = None
    try:
        while pending:
            try:
                finished = wait(list(pending.values()), timeout=POLL,
                                return_when="FIRST_COMPLETED").done
            except TimeoutError:
                finished = set()
            if finished and not client.nthreads():
                finished = set()  # their results were on workers that are gone
            progressed = False
            for fut in finished:
                i = index[fut.key]
                try:
                    # a chunk whose worker left between finishing and this fetch waits
                    # for Dask to run it again, forever if no worker is left: fetched
                    # with a timeout (doubled each time it runs out: a large result may
                    # take a while); when it runs out, the cluster is looked at
                    results[i] = fut.result(timeout=fetch.get(fut.key, FETCH))
                except KilledWorker as err:
                    raise RevecError(f"Dask gave up on chunk {i}: every worker that ran it "
                                     f"died ({err})") from None
                except TimeoutError:  # the others may be lost too: look first
                    fetch[fut.key] = 2 * fetch.get(fut.key, FETCH)
                    break
                progressed = True
                del pending[fut.key]
                done = total - len(pending)
                notes.line(f"{done}/{total} chunks done")
                if on_chunk is not None:
                    on_chunk(done, total, client)
            while lost:
                worker, keys = lost.popleft()
                n = sum(1 for k in keys if k in pending)
                if n:
                    notes.note(f"Dask worker {worker} left with {n} chunk"
                               f"{'s' if n > 1 else ''} not done; Dask runs "
                               f"{'them' if n > 1 else 'it'} again")
            if progressed or not pending:
                empty_since = None
                continue
            if client.nthreads():
                if empty_since is not None:
                    notes.note("a Dask worker joined; the run goes on")
                empty_since = None
            elif empty_since is None:
                empty_since = time.monotonic()
                notes.note(f"the Dask cluster at {where} has no worker left; waiting for "
                           f"one (giving up after {timeout:g} s; --worker-timeout)")
            elif time.monotonic() - empty_since > timeout:
                raise RevecError(f"no Dask worker at {where} for {timeout:g} s, with "
                                 f"{len(pending)} of {total} chunks not done "
                                 "(--worker-timeout SECONDS); giving up")
    finally:
        notes.end()
        try:
            client.unsubscribe_topic("all")
        except Exception:  # noqa: BLE001 - the client may be closing (Ctrl-C)
            pass
    return results


def _add_levels(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = max(len(a), len(b))
    out = np.zeros((n, a.shape[1]), np.float64)
    out[: len(a)] += a
    out[: len(b)] += b
    return out


def run_dask(path: str | Path, task: str, args: tuple[Any, ...] | list[Any] = (), *,
             variant: str = "reexp", backend: str | None = None,
             block_size: int | None = None, reexp_threshold: int | None = None,
             simd_width: int | None = None, max_memory: int | None = None,
             workers: int | None = None, scheduler: str | None = None,
             local: int | None = None, client: Any = None, chunks: int | None = None,
             progress: bool = False,
             on_chunk: Callable[[int, int, Any], None] | None = None,
             inputs: Mapping[str, Any] | None = None,
             connect_timeout: float = CONNECT_TIMEOUT,
             worker_timeout: float = WORKER_TIMEOUT) -> RunResult:
    """Run a task on a Dask cluster: ``client`` (a ``distributed.Client``), or the
    cluster at ``scheduler``, or a ``LocalCluster`` of ``local`` processes.  ``workers``:
    threads per chunk (default: the worker machine's cores); ``chunks``:
    how many chunks (default: 4 per cluster core).  ``on_chunk(done, total, client)`` is
    called as chunks finish (progress).  ``inputs``: a C file's file-scope pointers'
    arrays, as for :func:`revec.api.run_program`.  ``connect_timeout``: seconds to try
    to reach ``scheduler``; ``worker_timeout``: seconds the cluster may have no worker
    (waits, and chunks lost with a worker and run again, are said on standard error)."""
    if variant == "seq":
        raise RevecError("--variant seq runs in this process; Dask runs need bfs, blocked "
                         "or reexp")
    if backend not in (None, "c"):
        raise RevecError("Dask runs use the C back end; drop --backend or pass --backend c")
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - a dependency
        raise RevecError("Dask runs need the 'distributed' package") from None
    if workers is not None:
        check_workers(workers)
    if local is not None:
        check_workers(local, "local Dask worker processes")
    program, scalars, user_args = bind_inputs(get_program(path), task, args, inputs)
    # the outputs: the head's tasks (above the frontier) store into the bound buffers,
    # each chunk returns its own, merged by the elements it changed
    outs = start_outputs(program, task, user_args)
    # the chunks bind the same arrays (converted and checked here; an output: its
    # initial values)
    root_inputs = None
    t = program.tasks[task]
    if t.arrays or t.private:
        pos = {ap.position: ap for ap in t.arrays}
        boards = {pa.position: program.boards[pa.name] for pa in t.private}
        root_inputs = tuple(
            boards[i] if i in boards else
            outs.initial[pos[i].array] if i in pos and pos[i].array in outs.initial else
            _bound(program, pos[i].keys, pos[i].fields) if i in pos else a
            for i, a in enumerate(user_args))
    pointers = {name: _bound(program, [d.name for d in decls],
                             tuple((str(d.field), d.name) for d in decls if d.field))
                for name, decls in global_inputs(program).items() if name in (inputs or {})}
    rargs = root_args(program, task, scalars)
    schedule = Schedule.make(variant, block_size, reexp_threshold, simd_width)
    budget = default_budget() if max_memory is None else max_memory
    if budget < 0:
        raise RevecError(f"max_memory must not be negative, got {budget}")
    check_budget(budget)
    ctask = compiled_task(program, task, "c")
    reducers = list(program.reducers.values())
    own: list[Any] = []
    t0 = time.perf_counter()
    _drop_allexit()
    with outs, _quiet_distributed():
        try:
            if client is None:
                if scheduler is not None:
                    client = _connect(Client, scheduler, connect_timeout)
                else:
                    _start_local(LocalCluster, local or default_workers(), own)
                    client = Client(own[-1])
                    client.register_plugin(ignore_sigint_plugin(), name="revec-ignore-sigint")
                own.insert(0, client)
            where = str(scheduler or getattr(client.scheduler, "address", None) or
                        "the Dask scheduler")
            _wait_for_workers(client, where, worker_timeout)
            cores = max(sum(client.nthreads().values()), 1)
            nchunks = chunks or CHUNKS_PER_CORE * cores
            # the frontier: one bfs block per level until it holds enough threads
            expand = Schedule.make("bfs", 1 << 62, 0, schedule.simd_width)
            raw = ctask.run_raw(rargs, expand, budget, 1, stop_at=nchunks * THREADS_PER_CHUNK)
            accs, lv, st = raw.accs, raw.lv, raw.st.copy()
            peak = int(st[6])
            rows: list[dict[str, Any]] = []
            n = raw.frontier_count
            if n > 0:
                frontier = raw.frontier or []
                bounds = np.linspace(0, n, min(nchunks, n) + 1).astype(np.int64)
                source = Path(path).read_text()
                from dask.base import tokenize

                token = tokenize(source, task, rargs, schedule, budget, workers, n,
                                 raw.frontier_depth, frontier, root_inputs, pointers)
                futures = []
                for i in range(len(bounds) - 1):
                    part = [a[bounds[i]: bounds[i + 1]] for a in frontier]
                    futures.append(client.submit(
                        run_chunk, str(Path(path).resolve()), source, task, rargs, part,
                        int(bounds[i + 1] - bounds[i]), raw.frontier_depth, schedule, budget,
                        workers, accs.copy(), root_inputs, pointers,
                        key=f"revec-chunk-{token}-{i}"))  # pure: retried on loss
                results = _gather(client, futures, where, worker_timeout, progress, on_chunk)
                del futures
                for i, (c_accs, c_lv, c_st, c_sec, c_out) in enumerate(results):  # in order
                    merge_accs(reducers, accs, c_accs)
                    for name, arr in c_out.items():
                        outs.merge(outs.array_of(name), arr)
                    lv = _add_levels(lv, c_lv)
                    st[3] += c_st[3]
                    st[4] += c_st[4]
                    peak = max(peak, int(c_st[6]))
                    rows.append({"chunk": i, "tasks": int(c_lv[:, 0].sum()), "seconds": c_sec,
                                 "frames": int(bounds[i + 1] - bounds[i])})
            st[6] = peak
        finally:
            for obj in own:
                obj.close()
    stats = run_stats(lv, st, np.zeros((1, 8), np.int64), time.perf_counter() - t0,
                      schedule)
    stats.workers = cores
    stats.per_worker = rows
    values = ctask.values(accs)
    return result_of(program, RunResult(task, rargs, variant, "c", schedule, values, stats,
                                        outputs=outs.results))

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

import hashlib
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from revec import ir
from revec.api import RunResult, compiled_task, get_program, result_of, root_args
from revec.errors import RevecError
from revec.frontend.inputs import bind_inputs, global_inputs
from revec.frontend.outputs import start_outputs
from revec.runtime.memory import check_budget, default_budget
from revec.runtime.workers import default_workers, merge_accs, run_stats
from revec.transforms.schedule import Schedule

CHUNKS_PER_CORE = 4
THREADS_PER_CHUNK = 256  # frontier threads per chunk the expansion aims for


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
             inputs: Mapping[str, Any] | None = None) -> RunResult:
    """Run a task on a Dask cluster: ``client`` (a ``distributed.Client``), or the
    cluster at ``scheduler``, or a ``LocalCluster`` of ``local`` processes.  ``workers``:
    threads per chunk (default: the worker machine's cores); ``chunks``:
    how many chunks (default: 4 per cluster core).  ``on_chunk(done, total, client)`` is
    called as chunks finish (progress).  ``inputs``: a C file's file-scope pointers'
    arrays, as for :func:`revec.api.run_program`."""
    if variant == "seq":
        raise RevecError("--variant seq runs in this process; Dask runs need bfs, blocked "
                         "or reexp")
    if backend not in (None, "c"):
        raise RevecError("Dask runs use the C back end; drop --backend or pass --backend c")
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - a dependency
        raise RevecError("Dask runs need the 'distributed' package") from None
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
    with outs:
        try:
            if client is None:
                if scheduler is not None:
                    try:
                        client = Client(scheduler, timeout="20s")
                    except ValueError as err:  # not an address: no port, unknown scheme
                        raise RevecError(f"--scheduler {scheduler!r} is not a Dask scheduler "
                                         f"address ({err}); give HOST:PORT or "
                                         "tcp://HOST:PORT") from None
                    except (OSError, TimeoutError) as err:
                        raise RevecError(f"cannot reach the Dask scheduler at {scheduler}: "
                                         f"{err}") from None
                else:
                    cluster = LocalCluster(n_workers=local or default_workers(),
                                           threads_per_worker=1, processes=True,
                                           dashboard_address=None)
                    own.append(cluster)
                    client = Client(cluster)
                own.insert(0, client)
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
                index = {f.key: i for i, f in enumerate(futures)}
                results: list[Any] = [None] * len(futures)
                done = 0
                for fut in as_completed(futures):
                    results[index[fut.key]] = fut.result()
                    done += 1
                    if progress:
                        print(f"\rrevec: {done}/{len(futures)} chunks done", end="",
                              file=sys.stderr, flush=True)
                    if on_chunk is not None:
                        on_chunk(done, len(futures), client)
                if progress:
                    print(file=sys.stderr)
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

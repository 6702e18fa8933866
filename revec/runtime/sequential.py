"""The sequential reference (``--variant seq``): the program run as plain Python.

``spawn`` calls the task at once and ``reduce`` folds (see :mod:`revec.lang`).
Deep task trees need a deep host stack, so the run happens in a thread with a
large stack and a raised recursion limit.

The recursion limit is the interpreter's, shared by every thread: it stays raised
while any run's thread is alive.  A run interrupted in the calling thread (Ctrl-C, a
``SIGALRM`` handler raising, ...) stops its thread before the exception goes on, so no
thread keeps running the program after its caller gave up (with the limit lowered
under it, CPython aborts: "Cannot recover from stack overflow").
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.lang import Reducer, Task
from revec.runtime.stats import RunStats

STACK_BYTES = 1 << 30
RECURSION_LIMIT = 1_000_000
# how long an interrupted run's thread may take to unwind its stack before the caller's
# exception goes on without it (a thread inside one long C call cannot be stopped)
STOP_SECONDS = 30.0

_lock = threading.Lock()
_active = [0, 0]  # [runs whose thread may be alive, the recursion limit before the first]


class Stopped(BaseException):
    """Raised inside a run's thread to stop it (its caller was interrupted)."""


def run_sequential(program: ir.Program, task: str, args: tuple[Any, ...]
                   ) -> tuple[dict[str, Any], RunStats]:
    """The reducers' values after the plain-Python run; a value-returning task's
    returned value is under its result reducer's name (``TaskDef.result``)."""
    g = program.module.__dict__
    fn: Task = g[task]
    # the program's reducers and its bounds (reset too; a bound is not a result)
    reducers: dict[str, Reducer] = {name: g[name] for name, decl in program.reducers.items()
                                    if not decl.hidden or decl.bound}
    for r in reducers.values():
        r.reset()
    # A value-returning task without a result annotation: the type revec inferred from
    # its returns acts as the annotation (each call's result takes it, with wraparound),
    # as in the compiled runs.  Plain numpy would carry a narrower return's type up its
    # path and wrap there (docs/language.md).
    inferred = [(obj, t.result_ty.dtype.type) for name, t in program.tasks.items()
                if t.result_ty is not None and isinstance(obj := g.get(name), Task)
                and obj.result_type is None]
    for obj, rtype in inferred:
        obj.result_type = rtype
    box: dict[str, Any] = {}
    done = threading.Event()  # set when body's frames are gone (see _run_deep)

    def body() -> None:
        try:
            t0 = time.perf_counter()
            box["value"] = fn(*args)
            box["seconds"] = time.perf_counter() - t0
        except BaseException as err:  # re-raised in the caller's thread
            box["error"] = err
        finally:
            done.set()

    try:
        _run_deep(body, done)
    finally:
        for obj, _ in inferred:
            obj.result_type = None
    if "error" in box:
        err = box.pop("error")
        if isinstance(err, RecursionError):
            # a task that never reaches its base case: one line, not a million frames
            raise RevecError(f"the plain Python run of '{task}' went past "
                             f"{RECURSION_LIMIT:,} nested Python calls; does every path "
                             "reach the base case?") from None
        if isinstance(err, Exception) and not isinstance(err, (RevecError, MemoryError)):
            raise _user_exception(program, task, err) from None
        raise err
    values = {name: r.value.item() for name, r in reducers.items()
              if not program.reducers[name].bound}
    result = program.tasks[task].result
    if result is not None:
        decl = program.reducers[result]
        values[result] = np.asarray(box["value"]).astype(decl.dtype).item()
    return values, RunStats(seconds=box["seconds"])


def _run_deep(body: Callable[[], None], done: threading.Event) -> None:
    """Run ``body`` (which sets ``done`` as it ends) in a thread with a
    :data:`STACK_BYTES` stack and the recursion limit at least :data:`RECURSION_LIMIT`;
    wait for it.  If the wait is interrupted, the thread is stopped (:class:`Stopped`
    raised in it) and the interruption goes on.

    (The wait is on ``done``, not ``Thread.join``: a join interrupted by a signal
    handler's exception marks a running thread as ended in Python 3.11.)"""
    with _lock:
        if _active[0] == 0:
            _active[1] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_active[1], RECURSION_LIMIT))
        _active[0] += 1
        old_stack = threading.stack_size()
        try:
            threading.stack_size(STACK_BYTES)
            # a daemon: should it not stop, the interpreter still exits without it
            worker = threading.Thread(target=body, name="revec-seq", daemon=True)
            worker.start()
        except BaseException:
            _release()
            raise
        finally:
            threading.stack_size(old_stack)
    try:
        done.wait()
    except BaseException:
        _stop(worker, done)
        raise
    finally:
        if done.is_set():
            with _lock:
                _release()


def _release() -> None:
    """One run's thread has ended (call under ``_lock``): the last one restores the
    recursion limit."""
    _active[0] -= 1
    if _active[0] == 0:
        sys.setrecursionlimit(_active[1])


def _stop(worker: threading.Thread, done: threading.Event) -> None:
    """Raise :class:`Stopped` in ``worker`` (unless its run is over) and wait (up to
    :data:`STOP_SECONDS`, through further interruptions) for it to unwind."""
    if worker.ident is not None and not done.is_set():
        set_async = ctypes.pythonapi.PyThreadState_SetAsyncExc
        set_async.argtypes = [ctypes.c_ulong, ctypes.py_object]
        set_async.restype = ctypes.c_int
        set_async(worker.ident, Stopped)
    deadline = time.monotonic() + STOP_SECONDS
    while not done.is_set() and time.monotonic() < deadline:
        try:
            done.wait(0.1)
        except BaseException:  # a second Ctrl-C while it unwinds: keep waiting
            continue


def _user_exception(program: ir.Program, task: str, err: Exception) -> RevecError:
    """An exception the program's own code raised in the plain run (a helper's path
    without ``return`` giving None, a division by zero, ...): one located error at the
    innermost line of the program's file it passed through, as Python's traceback would
    point there, instead of the traceback through revec's own frames."""
    what = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
    message = f"the plain Python run of '{task}' raised {what}"
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if f.filename == program.path and f.lineno is not None]
    if not frames:
        return RevecError(message)
    at = frames[-1]
    lines = program.source.splitlines()
    text = lines[at.lineno - 1] if at.lineno and at.lineno <= len(lines) else ""
    col = (at.colno or 0) + 1
    return RevecError(message, SourceLoc(program.path, at.lineno or 1, col, text))

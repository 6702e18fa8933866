"""Output arrays: what tasks write (``ir.Store``) and the run hands back to the caller.

A task's output parameter (Python ``out: Output[np.int64]``, C ``long *out`` written
through) is an input of the program with ``output`` set (:attr:`revec.ir.Program.outputs`).
Binding it (:func:`revec.frontend.inputs.bind_inputs`) gives the bound program a
*working buffer* of the caller's shape: the typed array in ``program.arrays`` over raw
bytes with one more *error flag* byte (and padding) after the elements.  Every back end
writes that buffer in place through a pointer (C ``a_<name>``, numba a view of
``consts[i]``, the NumPy interpreter and the sequential reference the array itself); a
store whose index is out of range stores nothing and sets the flag byte.  A run copies
the caller's values into the buffer first (elements no task writes keep them) and
copies the result out after (:class:`OutputRun`): into the caller's own NumPy array,
and into ``RunResult.outputs``.

Different tasks write different elements, so the workers of a run need no
synchronisation, and Dask chunks each return their buffer, merged by the elements
that differ from the caller's values (an element a chunk wrote with the value it had
is the same either way).  The checking mode (:func:`checked_arrays`) runs the
sequential reference over :class:`CheckedOutput` arrays that record which task wrote
each element and report two tasks writing one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from revec import ir, lang
from revec.errors import RevecError
from revec.frontend.buffers import raw_buffer
from revec.frontend.inputs import input_value


def is_output(program: ir.Program, name: str) -> bool:
    decl = program.inputs.get(name)
    return decl is not None and decl.output


# ---------------------------------------------------------------- one run's outputs
_LOCKS: dict[int, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@dataclass
class OutputRun:
    """The outputs of one run of a bound program: each buffer, its initial values and
    the caller's object (filled in place when it is a writable NumPy array)."""

    program: ir.Program
    names: dict[str, str]  # program array -> the user's parameter name
    initial: dict[str, np.ndarray]
    callers: dict[str, Any]
    lock: threading.Lock | None = None
    results: dict[str, np.ndarray] = field(default_factory=dict)

    def __enter__(self) -> OutputRun:
        if self.lock is not None:
            self.lock.acquire()
        for name, init in self.initial.items():
            buf = self.program.arrays[name]
            buf[...] = init
            raw_buffer(buf)[buf.nbytes] = 0
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            if exc[0] is None:
                self.collect()
        finally:
            if self.lock is not None:
                self.lock.release()

    def collect(self) -> None:
        for name in self.initial:
            buf = self.program.arrays[name]
            if raw_buffer(buf)[buf.nbytes]:
                decl = self.program.inputs[name]
                raise RevecError(f"a task stored into the output '{self.names[name]}' at an "
                                 f"index outside its shape {tuple(buf.shape)}", decl.loc)
            self.results[self.names[name]] = buf.copy()
        for name, caller in self.callers.items():
            if isinstance(caller, np.ndarray) and caller.flags.writeable \
                    and caller.shape == self.program.arrays[name].shape:
                caller[...] = self.results[self.names[name]]

    def array_of(self, param: str) -> str:
        """The program array of the output parameter ``param``."""
        return next(k for k, v in self.names.items() if v == param)

    def merge(self, name: str, chunk: np.ndarray) -> None:
        """A Dask chunk's buffer into this run's: the elements the chunk changed."""
        buf = self.program.arrays[name]
        changed = chunk != self.initial[name]
        buf[changed] = chunk[changed]


def start_outputs(program: ir.Program, task: str, user_args: tuple[Any, ...],
                  fill_callers: bool = True) -> OutputRun:
    """The outputs of a run of the bound ``program``'s ``task`` with the caller's
    arguments ``user_args`` (use as a context manager around the run); ``fill_callers``:
    a caller's writable NumPy array gets the result too (not a Dask chunk's)."""
    t = program.tasks[task]
    names: dict[str, str] = {}
    initial: dict[str, np.ndarray] = {}
    callers: dict[str, Any] = {}
    for ap in t.arrays:
        if not ap.output:
            continue
        decl = program.inputs[ap.array]
        names[ap.array] = ap.name
        initial[ap.array] = np.array(input_value(decl, user_args[ap.position],
                                                 f"argument '{ap.name}'"), copy=True)
        if fill_callers:
            callers[ap.array] = user_args[ap.position]
    lock = None
    if initial:
        with _LOCKS_GUARD:
            lock = _LOCKS.setdefault(id(program), threading.Lock())
    return OutputRun(program, names, initial, callers, lock)


# ---------------------------------------------------------------- the checking mode
class OwnerLog:
    """Which task wrote each element of one output (the checking mode)."""

    def __init__(self, name: str, shape: tuple[int, ...]) -> None:
        self.name = name
        self.shape = shape
        self.owner = np.full(int(np.prod(shape, dtype=np.int64)), -1, np.int64)
        self.tasks: dict[int, str] = {}

    def record(self, ids: np.ndarray) -> None:
        trace = lang.OUTPUT_TRACE
        if not trace:
            return
        serial, text = trace[-1]
        prev = self.owner[ids]
        clash = (prev >= 0) & (prev != serial)
        if clash.any():
            k = int(np.argmax(clash))
            at = np.unravel_index(int(ids[k]), self.shape)
            where = ", ".join(str(int(i)) for i in at)
            raise RevecError(f"two tasks write {self.name}[{where}]: "
                             f"{self.tasks[int(prev[k])]} and {text}; an output's element "
                             "may be written by one task only (checked by the sequential "
                             "reference)")
        self.owner[ids] = serial
        self.tasks[serial] = text


class CheckedOutput(np.ndarray):
    """An output array of the checking mode: stores record their task (see
    :class:`OwnerLog`); views (``out[k:]``) share the log."""

    _rv_log: OwnerLog | None
    _rv_ids: np.ndarray | None

    def __array_finalize__(self, obj: Any) -> None:
        self._rv_log = getattr(obj, "_rv_log", None)
        self._rv_ids = getattr(obj, "_rv_ids", None)

    def __getitem__(self, key: Any) -> Any:
        res = super().__getitem__(key)
        if isinstance(res, CheckedOutput) and self._rv_ids is not None:
            res._rv_ids = self._rv_ids[key]
        return res

    def __setitem__(self, key: Any, value: Any) -> None:
        if self._rv_log is not None and self._rv_ids is not None:
            ids = np.asarray(self._rv_ids[key]).reshape(-1)
            self._rv_log.record(ids)
        super().__setitem__(key, value)


def checked_array(arr: np.ndarray, name: str) -> CheckedOutput:
    """``arr`` (a working buffer) as a :class:`CheckedOutput` recording into a new log."""
    out = arr.view(CheckedOutput)
    out._rv_log = OwnerLog(name, tuple(arr.shape))
    out._rv_ids = np.arange(arr.size, dtype=np.int64).reshape(arr.shape)
    return out


def reference_store(arr: np.ndarray, indices: tuple[Any, ...], value: Any) -> None:
    """A store of the C reference (``--variant seq``): C has no negative indices, and an
    index out of range is an error here (the compiled runs flag it too)."""
    for d, i in enumerate(indices):
        if not 0 <= int(i) < arr.shape[d]:
            raise RevecError(f"a task stored into an output at index {int(i)}, outside its "
                             f"shape {tuple(arr.shape)}")
    arr[tuple(int(i) for i in indices)] = value

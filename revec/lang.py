"""The language surface below the API: ``spawn``, ``reduce``, ``Reducer`` and the
:class:`Task` a ``@task`` function becomes.

Imported by user programs through :mod:`revec` (``from revec import task, spawn,
reduce, Reducer, Bound``).  Executed as plain Python these give the *sequential reference*
semantics of DESIGN.md section 2: ``spawn`` calls the task at once (depth-first),
``reduce`` folds into the reducer, and every task argument takes its annotated numpy
type (fixed-width wraparound, like the compiled variants).

This module imports nothing of revec: the front end, the sequential runtime and the API
build on it.  Compiling and running a task (``fib.run(...)``) is the API's part, so the
``task`` decorator users import from :mod:`revec` makes a
:class:`revec.api.RunnableTask`, this module's :class:`Task` with a ``run`` method.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

import numpy as np

REDUCER_OPS = ("sum", "min", "max")

# Annotation -> numpy scalar type.  Python's int/float/bool mean int64/float64/bool.
SCALAR_TYPES: dict[Any, type[np.generic]] = {
    np.int8: np.int8, np.int16: np.int16, np.int32: np.int32, np.int64: np.int64,
    np.uint8: np.uint8, np.uint16: np.uint16, np.uint32: np.uint32, np.uint64: np.uint64,
    np.float32: np.float32, np.float64: np.float64, np.bool_: np.bool_,
    int: np.int64, float: np.float64, bool: np.bool_,
}


def to_scalar(value: Any, scalar_type: type[np.generic]) -> np.generic:
    """Convert ``value`` to ``scalar_type`` with C-cast semantics (wraparound, truncation)."""
    if type(value) is scalar_type:
        return value
    try:
        return scalar_type(value)
    except OverflowError:
        # A Python int outside the target range: wrap like a fixed-width cast.
        return cast(np.generic, np.asarray(value).astype(scalar_type)[()])


E = TypeVar("E")
# the checking mode of output arrays (revec/frontend/outputs.py): the tasks running, as
# (serial, "task(arguments)"), innermost last; None when not checking.  Kept here (with
# the functions below) because Task.__call__ names the task running, and this module
# imports nothing of revec.
OUTPUT_TRACE: list[tuple[int, str]] | None = None
_SERIAL = [0]


def trace_on() -> None:
    """The checking mode starts: record the tasks running."""
    global OUTPUT_TRACE
    OUTPUT_TRACE = []
    _SERIAL[0] = 0


def trace_off() -> None:
    global OUTPUT_TRACE
    OUTPUT_TRACE = None


def push_task(name: str, params: list[str], args: tuple[Any, ...]) -> None:
    """A task starts (the checking mode): later stores are its own."""
    trace = OUTPUT_TRACE
    if trace is None:
        return
    _SERIAL[0] += 1
    shown = ", ".join(f"{p}={_show(a)}" for p, a in zip(params, args))
    trace.append((_SERIAL[0], f"{name}({shown})"))


def pop_task() -> None:
    if OUTPUT_TRACE:
        OUTPUT_TRACE.pop()


def _show(a: Any) -> str:
    if isinstance(a, np.ndarray) and a.ndim > 0:
        return f"<array of {a.shape[0]}>"
    if isinstance(a, list | tuple):
        return f"<{type(a).__name__} of {len(a)}>"
    return repr(a.item() if isinstance(a, np.generic) else a)


class Output(Generic[E]):
    """Annotation of a task's output array parameter: ``out: Output[np.int64]``.

    A task writes it (``out[i] = v``; ``out[i, j] = v`` for a 2-D one, the dimensions are
    those of its uses) at elements no two tasks share, never reads it, and passes it
    unchanged (or a slice ``out[k:]``) to its spawns.  At run time it is the caller's
    NumPy array, filled in place (plain Python: an ordinary ``ndarray``)."""

    # (for type checkers only: a task gets a NumPy array, never an Output object)
    def __setitem__(self, key: Any, value: Any) -> None:  # pragma: no cover
        raise TypeError("Output is an annotation; a task gets a NumPy array")

    def __getitem__(self, key: Any) -> Any:  # pragma: no cover
        raise TypeError("Output is an annotation; a task gets a NumPy array")

    def __len__(self) -> int:  # pragma: no cover
        raise TypeError("Output is an annotation; a task gets a NumPy array")


class Reducer:
    """A module-level reduction variable: ``count = Reducer(np.int64, "sum")``."""

    def __init__(self, dtype: Any, op: str) -> None:
        if op not in REDUCER_OPS:
            raise ValueError(f"unknown reducer operation {op!r}; expected one of {REDUCER_OPS}")
        self.scalar_type: type[np.generic] = SCALAR_TYPES[dtype]
        self.dtype = np.dtype(self.scalar_type)
        self.op = op
        self.value: Any = self.identity()  # a scalar of scalar_type

    def identity(self) -> np.generic:
        t = self.scalar_type
        if self.op == "sum":
            return t(0)
        if self.dtype.kind == "f":
            return t(np.inf if self.op == "min" else -np.inf)
        if self.dtype.kind == "b":
            return t(self.op == "min")
        info = np.iinfo(self.dtype)
        return t(info.max if self.op == "min" else info.min)

    def reset(self) -> None:
        self.value = self.identity()

    def fold(self, x: Any) -> None:
        v = to_scalar(x, self.scalar_type)
        with np.errstate(over="ignore"):
            if self.op == "sum":
                self.value = self.scalar_type(self.value + v)
            elif self.op == "min":
                self.value = v if v < self.value else self.value
            else:
                self.value = v if v > self.value else self.value

    def __repr__(self) -> str:
        return f"Reducer({self.dtype.name}, {self.op!r})"


BOUND_OPS = ("max", "min")


class Bound(Reducer):
    """A module-level bound for branch-and-bound: ``best = Bound(np.int64, "max")``.

    Tasks only raise it (``best.raise_to(v)``, a ``"max"`` bound) or only lower it
    (``best.lower_to(v)``, a ``"min"`` bound) and read ``best.value`` to prune.  Plain
    Python reads the current value; the compiled variants read the value the bound had
    when the task's block started (a max/min reducer shared between the workers), so
    the answer is the serial program's whenever pruning is sound (docs/design.md,
    "Bounds").  ``start``: the initial value (default: the identity, e.g. the type's
    minimum for ``"max"``)."""

    def __init__(self, dtype: Any, op: str, start: Any = None) -> None:
        if op not in BOUND_OPS:
            raise ValueError(f"a Bound is raised (\"max\") or lowered (\"min\"), not {op!r}")
        super().__init__(dtype, op)
        if self.dtype.kind not in "iuf":
            raise ValueError(f"a Bound holds an integer or float, not {self.dtype.name}")
        self.start = None if start is None else to_scalar(start, self.scalar_type)
        self.value = self.identity()

    def identity(self) -> np.generic:
        if getattr(self, "start", None) is not None:
            return self.start  # type: ignore[return-value]
        return super().identity()

    def raise_to(self, v: Any) -> None:
        """A ``"max"`` bound becomes ``max(value, v)``."""
        if self.op != "max":
            raise ValueError("a \"min\" Bound is lowered (lower_to), not raised")
        self.fold(v)

    def lower_to(self, v: Any) -> None:
        """A ``"min"`` bound becomes ``min(value, v)``."""
        if self.op != "min":
            raise ValueError("a \"max\" Bound is raised (raise_to), not lowered")
        self.fold(v)

    def __repr__(self) -> str:
        return f"Bound({self.dtype.name}, {self.op!r})"


class Task:
    """A task function.  Calling it runs the sequential reference semantics; the front
    end recognizes a program's tasks as the module's instances of this class."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn  # what a call runs (a caching or tracing wrapper stays in place)
        # the function as written, under functools wrappers (lru_cache, cache, any
        # functools.wraps decorator): the front end reads its source
        self.source_fn: Callable[..., Any] = inspect.unwrap(fn)
        sig = inspect.signature(fn)
        self.param_names = list(sig.parameters)
        self.param_types: list[type[np.generic] | None] = [
            SCALAR_TYPES.get(p.annotation) for p in sig.parameters.values()
        ]
        self.defaults = {
            name: p.default for name, p in sig.parameters.items() if p.default is not p.empty
        }
        try:
            self.result_type: type[np.generic] | None = SCALAR_TYPES.get(sig.return_annotation)
        except TypeError:  # an unhashable annotation
            self.result_type = None

    def __call__(self, *args: Any) -> Any:
        """The sequential reference: plain Python recursion on numpy scalars (a result
        takes the annotated result type, with wraparound)."""
        conv = [a if t is None else to_scalar(a, t) for a, t in zip(args, self.param_types)]
        if OUTPUT_TRACE is not None:  # the checking mode of outputs: stores name the task
            push_task(self.fn.__name__, self.param_names, tuple(conv))
            try:
                with np.errstate(all="ignore"):
                    value = self.fn(*conv)
            finally:
                pop_task()
        else:
            with np.errstate(all="ignore"):
                value = self.fn(*conv)
        if value is not None and self.result_type is not None:
            return to_scalar(value, self.result_type)
        return value


def spawn(f: Callable[..., None], *args: Any) -> None:
    """Sequential reference: run the child task at once (depth-first)."""
    f(*args)


def reduce(r: Reducer, value: Any) -> None:
    """Fold ``value`` into reducer ``r``."""
    r.fold(value)

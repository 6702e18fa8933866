"""Programmatic entry point: check, transform and run task programs.

>>> from revec.api import run_program
>>> result = run_program("benchmarks/fib.py", "fib", (20,), variant="reexp")
>>> result.reducers, result.stats.utilization
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from revec import ir
from revec.backends import registry
from revec.errors import RevecError
from revec.frontend import arg_value, load_program
from revec.frontend.inputs import bind_inputs
from revec.frontend.outputs import start_outputs
from revec.frontend.python.roots import root_typed
from revec.runtime.memory import check_budget, default_budget
from revec.runtime.sequential import run_sequential
from revec.runtime.stats import RunStats
from revec.runtime.workers import check_workers
from revec.transforms.bounds import PRUNED
from revec.transforms.schedule import STRATEGIES, UNBOUNDED, Schedule

VARIANTS = ("seq", *STRATEGIES)
# what ``backend=`` accepts: auto and every back end of the registry
BACKENDS = registry.choices()


# the numeric run options and the least value each takes: one check for the command
# line (``--workers``) and the API (``workers=``), so every bad value gets one message
# style: "--workers must be at least 1, got -1" / "workers must be at least 1, got -1"
COUNTS = {"block_size": 1, "reexp_threshold": 0, "simd_width": 1, "workers": 1,
          "dask_local": 1}


def cli_spelling(name: str) -> str:
    """An option as the command line spells it (``--block-size``)."""
    return "--" + name.replace("_", "-")


def read_count(name: str, value: Any, spell: Any = str) -> int | None:
    """The numeric run option ``name`` (text from the command line, or an integer from
    the API) as an integer, range-checked (:data:`COUNTS`); None: not given."""
    if value is None:
        return None
    option = spell(name)
    if isinstance(value, bool) or not isinstance(value, str | int | np.integer):
        raise RevecError(f"{option} must be an integer, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise RevecError(f"{option} must be an integer, got {value!r}") from None
    least = COUNTS[name]
    if number < least:
        raise RevecError(f"{option} must be at least {least}, got {number}")
    return number


def check_seq_backend(variant: str, backend: str | None, spell: Any = str) -> None:
    """The seq variant is the plain Python program: it takes no back end."""
    if variant == "seq" and backend is not None:
        raise RevecError(f"{spell('variant')} seq runs the plain recursive Python program, "
                         f"not compiled code: it takes no {spell('backend')} (got "
                         f"{spell('backend')} {backend}); use {spell('variant')} bfs, blocked "
                         f"or reexp for the {backend} back end")


def memory_option(value: Any, spell: Any = str) -> int | None:
    """``max_memory``: bytes, or a size as the command line takes it ("8G", "512M")."""
    if value is None:
        return None
    if isinstance(value, str):
        from revec.runtime.memory import parse_size

        return parse_size(value)
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise RevecError(f"{spell('max_memory')} must be a number of bytes or a size such "
                         f"as \"8G\", got {value!r}")
    return int(value)


def c_compiler_works() -> bool:
    """A C compiler is found and builds a module (a tiny probe, cached on disk): the C
    back end is available (:mod:`revec.backends.c_backend`)."""
    return registry.get("c").unavailable() is None


def resolve_backend(backend: str) -> str:
    """The back end's name; ``auto``: the first available of the registry's preference
    order (C when a working C compiler is found, else numba).  An unknown name is a
    :class:`RevecError` naming the known ones."""
    return registry.resolve(backend).name


@dataclass
class RunResult:
    task: str
    args: tuple[Any, ...]
    variant: str
    backend: str
    schedule: Schedule | None
    reducers: dict[str, Any]
    stats: RunStats
    # the returned value of a task that returns one (None for a spawn/reduce task)
    result: Any = None
    has_result: bool = False
    # every output array the task wrote, by parameter name (a caller's own writable NumPy
    # array is filled in place too); ``outputs_checked``: the engine that checked that no
    # two tasks write one element (check_outputs=True), else None
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    outputs_checked: str | None = None

    def to_json(self) -> dict[str, Any]:
        stats = self.stats.to_json()
        extra: dict[str, Any] = {"result": np.asarray(self.result).item()} \
            if self.has_result else {}
        if self.outputs:
            extra["outputs"] = {k: output_json(v) for k, v in self.outputs.items()}
            extra["outputs_checked"] = self.outputs_checked
        return {
            "task": self.task,
            "args": [np.asarray(a).item() for a in self.args],
            "variant": self.variant,
            "backend": self.backend,
            # null when there is no schedule (seq) or B is unbounded (bfs)
            "block_size": None if self.schedule is None
            or self.schedule.block_size >= UNBOUNDED else self.schedule.block_size,
            "reexp_threshold": None if self.schedule is None else self.schedule.reexp_threshold,
            "reducers": {k: np.asarray(v).item() for k, v in self.reducers.items()},
            **extra,
            "workers": self.stats.workers,
            "stats": stats,
        }


OUTPUT_JSON_VALUES = 1000  # an output up to this many elements is in the JSON in full


def output_json(a: np.ndarray) -> dict[str, Any]:
    """An output array in ``revec run --json``: its shape and element type, its values
    when small, and the sum and count of non-zero elements."""
    out: dict[str, Any] = {"shape": list(a.shape), "dtype": a.dtype.name,
                           "sum": np.asarray(a.sum()).item(), "nonzero": int(np.count_nonzero(a))}
    if a.size <= OUTPUT_JSON_VALUES:
        out["values"] = a.tolist()
    return out


def output_summary(name: str, a: np.ndarray) -> str:
    """One line about an output array (``revec run`` without ``--json``)."""
    shown = np.array2string(a.reshape(-1)[:10], separator=" ", threshold=10)
    more = f" ... ({a.size} elements)" if a.size > 10 else ""
    return (f"output {name}: {a.dtype.name} {tuple(a.shape)} = {shown}{more}; "
            f"sum {np.asarray(a.sum()).item()}")


@functools.lru_cache(maxsize=32)
def _cached_program(path: str, mtime: float) -> ir.Program:
    return load_program(path)


def get_program(path: str | Path) -> ir.Program:
    p = Path(path)
    if p.is_dir():
        raise RevecError(f"{p} is a directory, not a program file (a .py or .c file)")
    if not p.is_file():
        raise RevecError(f"no such file: {p}")
    return _cached_program(str(p.resolve()), p.stat().st_mtime)


@functools.lru_cache(maxsize=32)
def _program_of_source(name: str, text: str, namespace: Any) -> ir.Program:
    from revec.frontend import load_program_source

    return load_program_source(name, text, namespace)


def task_program(fn: Any) -> ir.Program:
    """The checked program of a live :class:`revec.lang.Task` (imported module, script or
    notebook cell): its file's source through ``inspect``/``linecache``, its globals as
    the module.  Cached per (file, source text, module), so a compiled task is reused
    until its source changes."""
    import inspect
    import linecache

    # the function as written: under functools.lru_cache / cache or any
    # functools.wraps wrapper (__wrapped__), whose own code is elsewhere
    target = getattr(fn, "source_fn", fn.fn)
    code = getattr(target, "__code__", None)
    filename = code.co_filename if code is not None else inspect.getsourcefile(target)
    if not filename:
        raise RevecError(f"the source of task '{fn.__name__}' cannot be found")
    linecache.checkcache(filename)
    g = getattr(target, "__globals__", None)
    if g is None:
        raise RevecError(f"the source of task '{fn.__name__}' cannot be found (not a "
                         "Python function)")
    text = "".join(linecache.getlines(filename, g))
    if not text:
        raise RevecError(f"the source of task '{fn.__name__}' ({filename}) cannot be found; "
                         "define it in a file, or register exec'd source in linecache")
    module: Any = sys.modules.get(g.get("__name__", ""))
    if module is None or module.__dict__ is not g:
        module = _LiveModule(g)
    return _program_of_source(filename, text, module)


class _LiveModule:
    """A module-like view of a globals dict (``__dict__`` is that dict)."""

    def __init__(self, g: dict[str, Any]) -> None:
        self.__dict__ = g

    def __hash__(self) -> int:
        return id(self.__dict__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _LiveModule) and other.__dict__ is self.__dict__


def run_task(fn: Any, args: tuple[Any, ...], *, variant: str = "reexp",
             backend: str | None = None, block_size: Any = None,
             reexp_threshold: Any = None, simd_width: Any = None, max_memory: Any = None,
             compaction: str | None = None, workers: Any = 1,
             inputs: Mapping[str, Any] | None = None,
             check_outputs: bool = False, plan_off: Any = None,
             plan_on: Any = None) -> RunResult:
    """``task.run(*args, **options)``: see :meth:`revec.RunnableTask.run`.  The options
    of ``revec run``, checked by the same code as the command line's."""
    if variant not in VARIANTS:
        raise RevecError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    # (unlike the command line, the API's seq variant ignores a back end given: a loop
    # over variants passes one to each)
    if compaction is not None and compaction not in COMPACTIONS:
        raise RevecError(f"unknown compaction {compaction!r}; expected one of {COMPACTIONS}")
    program = task_program(fn)
    return run_loaded(program, fn.__name__, args, variant=variant,
                      backend=backend or "auto",
                      block_size=read_count("block_size", block_size),
                      reexp_threshold=read_count("reexp_threshold", reexp_threshold),
                      simd_width=read_count("simd_width", simd_width),
                      max_memory=memory_option(max_memory), compaction=compaction,
                      workers=None if workers is None else read_count("workers", workers),
                      inputs=inputs, check_outputs=check_outputs, plan_off=plan_off,
                      plan_on=plan_on)


def root_args(program: ir.Program, task: str, args: tuple[Any, ...] | list[Any]
              ) -> tuple[Any, ...]:
    """Root arguments converted (and range-checked) to the task's parameter types;
    missing trailing ones come from the parameter defaults."""
    if task not in program.tasks:
        names = ", ".join(sorted(program.tasks))
        raise RevecError(f"no task '{task}' in {program.path} (tasks: {names})")
    params = program.tasks[task].user_params
    hidden = [p for p in program.tasks[task].params if p.hidden]
    if len(args) > len(params):
        raise RevecError(f"task '{task}' takes {len(params)} argument(s), got {len(args)}")
    out = []
    for i, p in enumerate(params):
        if i < len(args):
            out.append(arg_value(p, str(args[i]) if not isinstance(args[i], str) else args[i]))
        elif p.has_default:
            out.append(arg_value(p, str(p.default)))
        else:
            raise RevecError(f"task '{task}' needs argument '{p.name}' "
                             f"({len(params)} argument(s): "
                             f"{', '.join(q.name for q in params)})")
    out += [arg_value(p, str(p.default)) for p in hidden]
    return tuple(out)


COMPACTIONS = ("table", "scalar")


def compiled_task(program: ir.Program, task: str, backend: str,
                  compaction: str | None = None) -> Any:
    """The compiled task (:class:`revec.backends.registry.CompiledTask`, built by the
    back end's ``build``) once per process for each (program, task, back end,
    compaction).  ``compaction`` picks the block split: ``table`` (the default: vector
    compaction steps) or ``scalar`` (branch-free scalar steps, for comparisons such as
    the paper's Fig. 16).  Typed ``Any``: callers that know the back end use its extras
    (the C task's ``run_raw``, ``source``)."""
    if compaction is not None and compaction not in COMPACTIONS:
        raise RevecError(f"unknown compaction {compaction!r}; expected one of {COMPACTIONS}")
    # one cache key however the caller spelled it ("auto", compaction passed or not);
    # the plan techniques switched off / on (REVEC_PLAN_OFF / REVEC_PLAN_ON, or
    # kernel_plan.plan_switches: --plan-off, run(plan_off=...)) change the kernels: part
    # of it
    from revec.transforms.kernel_plan import plan_off, plan_on

    return _compiled_task(program, task, resolve_backend(backend), compaction,
                          plan_off(), plan_on())


@functools.lru_cache(maxsize=64)
def _compiled_task(program: ir.Program, task: str, backend: str,
                   compaction: str | None, off: frozenset[str] = frozenset(),
                   on: frozenset[str] = frozenset()) -> Any:
    # (the back end's build reads the same switches when it builds its plan)
    return registry.get(backend).build(program, task, compaction)


def run_program(path: str | Path, task: str, args: tuple[Any, ...] | list[Any] = (), *,
                variant: str = "reexp", backend: str = "auto",
                block_size: int | None = None, reexp_threshold: int | None = None,
                simd_width: int | None = None, max_memory: int | None = None,
                compaction: str | None = None, workers: int | None = 1,
                inputs: Mapping[str, Any] | None = None,
                check_outputs: bool = False, plan_off: Any = None,
                plan_on: Any = None) -> RunResult:
    """Run a task program (``backend="auto"``: C if a working compiler is found, else
    numba).  An output array argument (``Output[...]`` / a C pointer tasks write) is
    filled in place when it is a writable NumPy array of its shape, and every output
    is in ``RunResult.outputs``; ``check_outputs``: first run the sequential reference
    recording which task writes each element of each output, and fail naming both
    tasks when two write one (the compiled runs do not check).  ``max_memory``: bytes the run may hold (thread frames, record stacks, per-level statistics, per-worker state)
    (default: half of the machine's memory; 0: no limit); a run that would need more
    stops with :class:`revec.runtime.memory.MemoryBudgetError`.  ``workers``: threads
    running the schedule with work stealing (default 1; None: the cores this process
    may use); the budget covers them all.  ``inputs``: the arrays of a C file's
    file-scope pointers that ``main`` fills (``{"matrix": array}``; a pointer to
    structs takes a structured array or a dict of one array per field).  ``plan_off`` /
    ``plan_on``: kernel plan techniques switched off / on for this run (a comma list or
    a list of names of :data:`revec.transforms.kernel_plan.TECHNIQUES`; None: as
    ``REVEC_PLAN_OFF`` / ``REVEC_PLAN_ON`` say); they change the kernels, never the
    results or the statistics."""
    program = get_program(path)
    return run_loaded(program, task, args, variant=variant, backend=backend,
                      block_size=block_size, reexp_threshold=reexp_threshold,
                      simd_width=simd_width, max_memory=max_memory, compaction=compaction,
                      workers=workers, inputs=inputs, check_outputs=check_outputs,
                      plan_off=plan_off, plan_on=plan_on)


def run_loaded(program: ir.Program, task: str, args: tuple[Any, ...] | list[Any] = (), *,
               variant: str = "reexp", backend: str = "auto",
               block_size: int | None = None, reexp_threshold: int | None = None,
               simd_width: int | None = None, max_memory: int | None = None,
               compaction: str | None = None, workers: int | None = 1,
               inputs: Mapping[str, Any] | None = None,
               check_outputs: bool = False, narrow: bool = True, plan_off: Any = None,
               plan_on: Any = None) -> RunResult:
    """:func:`run_program` on a checked program.  ``narrow=False``: a Python task's
    unannotated parameters keep the root call's types (int64, ...), not narrowed by
    the value-range analysis (which never changes a result; for comparisons)."""
    from revec.transforms.kernel_plan import plan_switches

    with plan_switches(plan_off, plan_on):
        return _run_loaded(program, task, args, variant, backend, block_size,
                           reexp_threshold, simd_width, max_memory, compaction, workers,
                           inputs, check_outputs, narrow)


def _run_loaded(program: ir.Program, task: str, args: tuple[Any, ...] | list[Any],
                variant: str, backend: str, block_size: int | None,
                reexp_threshold: int | None, simd_width: int | None,
                max_memory: int | None, compaction: str | None, workers: int | None,
                inputs: Mapping[str, Any] | None, check_outputs: bool,
                narrow: bool) -> RunResult:
    if variant not in VARIANTS:
        raise RevecError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    # a Python task's unannotated parameters: the root call's types, narrowed by the
    # value-range analysis for compiled runs (the plain Python run keeps the root's)
    program = root_typed(program, task, args, narrow=narrow and variant != "seq")
    program, args, user_args = bind_inputs(program, task, args, inputs)
    rargs = root_args(program, task, args)
    checked = None
    if check_outputs:
        with start_outputs(program, task, user_args) as outs:
            reducers, stats = run_checked(program, task, rargs)
        checked = "the sequential reference"
        if variant == "seq":
            res = RunResult(task, rargs, variant, "python", None, reducers, stats,
                            outputs=outs.results, outputs_checked=checked)
            return result_of(program, res)
    if variant == "seq":
        with start_outputs(program, task, user_args) as outs:
            reducers, stats = run_sequential(program, task, reference_args(
                program, program.tasks[task], rargs))
        return result_of(program, RunResult(task, rargs, variant, "python", None, reducers,
                                           stats, outputs=outs.results))
    backend = resolve_backend(backend)
    schedule = Schedule.make(variant, block_size, reexp_threshold, simd_width)
    runner = compiled_task(program, task, backend, compaction)
    budget = default_budget() if max_memory is None else max_memory
    if budget < 0:
        raise RevecError(f"max_memory must not be negative, got {budget}")
    check_budget(budget)
    with start_outputs(program, task, user_args) as outs:
        reducers, stats = runner.run(rargs, schedule, budget, check_workers(workers))
    stats.frame_bytes = frame_bytes(program.tasks[task])
    return result_of(program, RunResult(task, rargs, variant, backend, schedule, reducers,
                                        stats, outputs=outs.results,
                                        outputs_checked=checked))


def run_checked(program: ir.Program, task: str, rargs: tuple[Any, ...]
                ) -> tuple[dict[str, Any], RunStats]:
    """The sequential reference over output arrays that record which task writes each
    element (:class:`revec.frontend.outputs.CheckedOutput`): two tasks writing one
    element is a :class:`RevecError` naming both."""
    import dataclasses

    from revec.frontend.outputs import checked_array
    from revec.lang import trace_off, trace_on

    names = {ap.array: ap.name for t in program.tasks.values() for ap in t.arrays}
    checked = {k: checked_array(program.arrays[k], names.get(k, k)) for k in program.outputs}
    arrays = {**program.arrays, **checked}
    module = program.module
    rebind = getattr(module, "__revec_rebind__", None)
    if rebind is not None:  # a generated reference (C): its globals hold the arrays
        module = rebind(arrays)
    run = dataclasses.replace(program, arrays=arrays, module=module)  # (boards kept)
    trace_on()
    try:
        return run_sequential(run, task, reference_args(run, run.tasks[task], rargs))
    finally:
        trace_off()


def frame_bytes(t: ir.TaskDef) -> int:
    """Bytes of one thread frame in the blocks: the fields not passed on unchanged by
    every spawn (those are held once for the tree)."""
    from revec.transforms.blocking import invariant_params

    invariant = invariant_params(t)
    return sum(p.ty.dtype.itemsize for p in t.params if p.name not in invariant)


def reference_args(program: ir.Program, t: ir.TaskDef, rargs: tuple[Any, ...]
                   ) -> tuple[Any, ...]:
    """The plain reference run's arguments: the converted scalars, and each array
    argument as the bound NumPy array of its declared element type (a ``list[int]``'s
    elements are int64 in every run, as the compiled ones compute)."""
    wide = program.root_types.get(t.name, {})
    if wide:  # narrowed parameters: plain Python computes in the root call's types
        rargs = tuple(np.dtype(wide[p.name]).type(a.item()) if p.name in wide else a
                      for p, a in zip(t.user_params, rargs)) + rargs[len(t.user_params):]
    if not (t.arrays or t.private):
        return rargs[:len(t.user_params)]
    scalars = iter(rargs[:len(t.user_params)])
    arrays: dict[int, Any] = {
        ap.position: {f: program.arrays[k] for f, k in ap.fields} if ap.fields
        else program.arrays[ap.array] for ap in t.arrays}
    boards = program.boards
    for pa in t.private:  # a list of NumPy scalars (plain Python builds on it: b + [c])
        # (of the root call's type where the board's slots were narrowed)
        dtype = getattr(wide.get(pa.name), "dtype", pa.ty.dtype)
        items = [dtype.type(v) for v in boards[pa.name].tolist()]
        arrays[pa.position] = tuple(items) if pa.sequence == "tuple" else items
    return tuple(arrays[i] if i in arrays else next(scalars) for i in range(t.arity))


def result_of(program: ir.Program, res: RunResult) -> RunResult:
    """Move a value-returning task's result out of the reducers; hide the hidden ones
    and the hidden frame fields from the arguments."""
    t = program.tasks[res.task]
    res.args = res.args[:len(t.user_params)]
    if t.result is not None:
        res.result = res.reducers[t.result]
        res.has_result = True
    if PRUNED in res.reducers:  # a program with bounds: its prunes, counted by a reducer
        res.stats.pruned = int(res.reducers[PRUNED])
    res.reducers = {k: v for k, v in res.reducers.items()
                    if k in program.reducers and not program.reducers[k].hidden}
    return res


class LoadedTask:
    """A task of a loaded program file (:func:`load`): ``run(*args, **options)`` runs it
    as :func:`run_program` does; array parameters take lists or NumPy arrays (an array
    of C structs: a structured array, or a dict of one array per field), and
    ``inputs={"matrix": array}`` supplies a C file's file-scope pointers."""

    def __init__(self, path: str, name: str) -> None:
        self.path, self.name = path, name

    def run(self, *args: Any, **options: Any) -> RunResult:
        return run_program(self.path, self.name, args, **options)

    def __repr__(self) -> str:
        return f"<revec task {self.name} of {self.path}>"


class LoadedProgram:
    """A checked program file, Python or Cilk C: ``load("sum.c").dsum.run(values, 10)``."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.program = get_program(path)  # checked now: errors are raised here

    @property
    def tasks(self) -> list[str]:
        return sorted(self.program.tasks)

    def __getattr__(self, name: str) -> LoadedTask:
        program = self.__dict__.get("program")  # absent while unpickling
        if program is None or name not in program.tasks:
            raise AttributeError(f"no task '{name}' in {self.__dict__.get('path')}")
        return LoadedTask(self.path, name)

    def __getitem__(self, name: str) -> LoadedTask:
        if name not in self.program.tasks:
            raise KeyError(f"no task '{name}' in {self.path} (tasks: {', '.join(self.tasks)})")
        return LoadedTask(self.path, name)


def load(path: str | Path) -> LoadedProgram:
    """Check a program file (a ``.c`` file is Cilk C) and return its tasks to run from
    Python: ``revec.load("knapsack.c").knapsack.run(values, weights, 10)``."""
    return LoadedProgram(path)

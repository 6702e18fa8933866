"""Programmatic entry point: check, transform and run task programs.

>>> from revec.api import run_program
>>> result = run_program("benchmarks/fib.py", "fib", (20,), variant="reexp")
>>> result.reducers, result.stats.utilization
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from revec import ir
from revec.errors import RevecError
from revec.frontend import arg_value, load_program
from revec.runtime.memory import default_budget
from revec.runtime.sequential import run_sequential
from revec.runtime.stats import RunStats
from revec.runtime.workers import check_workers
from revec.transforms.schedule import STRATEGIES, Schedule

VARIANTS = ("seq", *STRATEGIES)
BACKENDS = ("numba", "c")


@dataclass
class RunResult:
    task: str
    args: tuple[Any, ...]
    variant: str
    backend: str
    schedule: Schedule | None
    reducers: dict[str, Any]
    stats: RunStats

    def to_json(self) -> dict[str, Any]:
        stats = self.stats.to_json()
        return {
            "task": self.task,
            "args": [np.asarray(a).item() for a in self.args],
            "variant": self.variant,
            "backend": self.backend,
            "block_size": None if self.schedule is None else self.schedule.block_size,
            "reexp_threshold": None if self.schedule is None else self.schedule.reexp_threshold,
            "reducers": {k: np.asarray(v).item() for k, v in self.reducers.items()},
            "workers": self.stats.workers,
            "stats": stats,
        }


@functools.lru_cache(maxsize=32)
def _cached_program(path: str, mtime: float) -> ir.Program:
    return load_program(path)


def get_program(path: str | Path) -> ir.Program:
    p = Path(path)
    if not p.is_file():
        raise RevecError(f"no such file: {p}")
    return _cached_program(str(p.resolve()), p.stat().st_mtime)


def root_args(program: ir.Program, task: str, args: tuple[Any, ...] | list[Any]
              ) -> tuple[Any, ...]:
    """Root arguments converted (and range-checked) to the task's parameter types;
    missing trailing ones come from the parameter defaults."""
    if task not in program.tasks:
        names = ", ".join(sorted(program.tasks))
        raise RevecError(f"no task '{task}' in {program.path} (tasks: {names})")
    params = program.tasks[task].params
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
    return tuple(out)


COMPACTIONS = ("table", "scalar")


@functools.lru_cache(maxsize=64)
def compiled_task(program: ir.Program, task: str, backend: str,
                  compaction: str | None = None) -> Any:
    """The compiled module of a task.  ``compaction`` picks the block split of the C
    back end: ``table`` (the default: table-driven vector compaction) or ``scalar``
    (the branch-free scalar loop, for comparisons such as the paper's Fig. 16); the
    numba back end has the scalar split only."""
    if compaction is not None and compaction not in COMPACTIONS:
        raise RevecError(f"unknown compaction {compaction!r}; expected one of {COMPACTIONS}")
    if backend == "numba" and compaction == "table":
        raise RevecError("the numba back end has no table-driven split yet; "
                         "use --backend c or compaction='scalar'")
    if backend == "numba":
        from revec.backends.numba_runner import NumbaTask

        return NumbaTask(program, task)
    if backend == "c":
        try:
            from revec.backends.c_runner import CTask  # type: ignore[import-not-found]
        except ModuleNotFoundError:
            raise RevecError("the C back end is not available yet; use --backend numba"
                             ) from None
        return CTask(program, task, compaction or "table")
    raise RevecError(f"unknown back end {backend!r}; expected one of {BACKENDS}")


def run_program(path: str | Path, task: str, args: tuple[Any, ...] | list[Any] = (), *,
                variant: str = "reexp", backend: str = "numba",
                block_size: int | None = None, reexp_threshold: int | None = None,
                simd_width: int | None = None, max_memory: int | None = None,
                compaction: str | None = None, workers: int | None = 1) -> RunResult:
    """Run a task program.  ``max_memory``: bytes of thread frames the run may hold
    (default: half of the machine's memory; 0: no limit); a run that would need more
    stops with :class:`revec.runtime.memory.MemoryBudgetError`.  ``workers``: threads
    running the schedule with work stealing (default 1; None: the cores this process
    may use); the budget covers them all."""
    program = get_program(path)
    return run_loaded(program, task, args, variant=variant, backend=backend,
                      block_size=block_size, reexp_threshold=reexp_threshold,
                      simd_width=simd_width, max_memory=max_memory, compaction=compaction,
                      workers=workers)


def run_loaded(program: ir.Program, task: str, args: tuple[Any, ...] | list[Any] = (), *,
               variant: str = "reexp", backend: str = "numba",
               block_size: int | None = None, reexp_threshold: int | None = None,
               simd_width: int | None = None, max_memory: int | None = None,
               compaction: str | None = None, workers: int | None = 1) -> RunResult:
    if variant not in VARIANTS:
        raise RevecError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    rargs = root_args(program, task, args)
    if variant == "seq":
        reducers, stats = run_sequential(program, task, rargs)
        return RunResult(task, rargs, variant, "python", None, reducers, stats)
    schedule = Schedule.make(variant, block_size, reexp_threshold, simd_width)
    runner = compiled_task(program, task, backend, compaction)
    budget = default_budget() if max_memory is None else max_memory
    if budget < 0:
        raise RevecError(f"max_memory must not be negative, got {budget}")
    reducers, stats = runner.run(rargs, schedule, budget, check_workers(workers))
    return RunResult(task, rargs, variant, backend, schedule, reducers, stats)

"""revec: SIMD execution of recursive task-parallel programs (Ren et al., TOPC 2019).

The public surface: ``from revec import task, spawn, reduce, Reducer, Bound``.
``spawn``, ``reduce``, ``Reducer``, ``Bound`` and the base class :class:`Task` are the language of
:mod:`revec.lang`; the ``task`` decorator here makes a :class:`RunnableTask`, which
adds ``fib.run(...)`` (compile and run, :mod:`revec.api`).

This package sits above the API in revec's layers (tests/test_layering.py): the language
imports nothing of the API, and the API is imported only when a task is first run, so
``import revec`` and decorating a task cost no more than numpy (a program run as plain
Python, the sequential reference, never loads the compiler).  Importing revec changes
no process-wide setting (environment, recursion limit, numba's configuration): revec's
own numba compiles format numba's messages without colour only while they run
(:class:`revec.runtime.numba_pipeline._PlainErrorMessages`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from revec.lang import Bound, Output, Reducer, Task, reduce, spawn

if TYPE_CHECKING:
    from revec.api import LoadedProgram, RunResult

__all__ = ["Bound", "Output", "Reducer", "RunnableTask", "Task", "load", "reduce", "spawn",
           "task"]
__version__ = "0.1.0"


class RunnableTask(Task):
    """A task function made by ``@task``: calling it runs the sequential reference
    (:class:`revec.lang.Task`), :meth:`run` compiles and runs it."""

    def run(self, *args: Any, variant: str = "reexp", backend: str | None = None,
            block_size: int | None = None, reexp_threshold: int | None = None,
            simd_width: int | None = None, max_memory: int | str | None = None,
            compaction: str | None = None, workers: int | None = 1,
            inputs: Mapping[str, Any] | None = None,
            check_outputs: bool = False, plan_off: str | Sequence[str] | None = None,
            plan_on: str | Sequence[str] | None = None) -> RunResult:
        """Compile this task (cached per function source and back end) and run it:
        ``fib.run(30, variant="reexp", backend="c", block_size=4096, workers=2,
        max_memory="2G")``.  The options are ``revec run``'s, checked by the same code
        (``backend`` None: auto; ``workers`` None: the cores this process may use;
        ``max_memory``: bytes or a size such as "512M"); what the command line writes
        (``--output``, ``--json``) is in the returned :class:`revec.api.RunResult`
        (``.outputs``, ``.to_json()``); a Dask run is :func:`revec.cluster.run_dask`
        on the task's file.  Unannotated parameters take the types of ``args``.
        ``plan_off`` / ``plan_on`` (``revec run --plan-off`` / ``--plan-on``): kernel plan
        techniques switched off / on, e.g. ``plan_off="leaf_inline"``."""
        from revec.api import run_task

        return run_task(self, args, variant=variant, backend=backend,
                        block_size=block_size, reexp_threshold=reexp_threshold,
                        simd_width=simd_width, max_memory=max_memory, compaction=compaction,
                        workers=workers, inputs=inputs, check_outputs=check_outputs,
                        plan_off=plan_off, plan_on=plan_on)


def task(fn: Callable[..., Any]) -> RunnableTask:
    """Mark a function as a task of the spawn language (DESIGN.md section 2)."""
    return RunnableTask(fn)


def load(path: str) -> LoadedProgram:
    """Check a program file, Python or Cilk C (``.c``), and return its tasks to run from
    Python: ``revec.load("sum.c").dsum.run(np.arange(10, dtype=np.int32), 10)``
    (:func:`revec.api.load`)."""
    from revec.api import load as load_file

    return load_file(path)

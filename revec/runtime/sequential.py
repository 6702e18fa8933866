"""The sequential reference (``--variant seq``): the program run as plain Python.

``spawn`` calls the task at once and ``reduce`` folds (see :mod:`revec.lang`).
Deep task trees need a deep host stack, so the run happens in a thread with a
large stack and a raised recursion limit.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import numpy as np

from revec import ir
from revec.errors import RevecError
from revec.lang import Reducer, Task
from revec.runtime.stats import RunStats

STACK_BYTES = 1 << 30
RECURSION_LIMIT = 1_000_000


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

    def body() -> None:
        try:
            t0 = time.perf_counter()
            box["value"] = fn(*args)
            box["seconds"] = time.perf_counter() - t0
        except BaseException as err:  # re-raised in the caller's thread
            box["error"] = err

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    try:
        sys.setrecursionlimit(RECURSION_LIMIT)
        threading.stack_size(STACK_BYTES)
        worker = threading.Thread(target=body, name="revec-seq")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
        for obj, _ in inferred:
            obj.result_type = None
    if "error" in box:
        err = box.pop("error")
        if isinstance(err, RecursionError):
            # a task that never reaches its base case: one line, not a million frames
            raise RevecError(f"the plain Python run of '{task}' went past "
                             f"{RECURSION_LIMIT:,} nested Python calls; does every path "
                             "reach the base case?") from None
        raise err
    values = {name: r.value.item() for name, r in reducers.items()
              if not program.reducers[name].bound}
    result = program.tasks[task].result
    if result is not None:
        decl = program.reducers[result]
        values[result] = np.asarray(box["value"]).astype(decl.dtype).item()
    return values, RunStats(seconds=box["seconds"])

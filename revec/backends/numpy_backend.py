"""The numpy back end: the kernel plan interpreted with NumPy whole-block operations.

Not a fast back end: the plan's executable reference.  It is written against the kernel
plan alone (:func:`revec.transforms.kernel_plan.build_plan`), so a plan step whose
meaning is unclear, or a decision a back end would have to re-derive from the task,
shows up here first.  The differential tests run it on small inputs beside the numba and
C back ends: the same reducers as the sequential reference and the same statistics as
the compiled drivers.

* :mod:`.numpy_eval`: IR expressions and statements over many threads (lanes) at once;
* :mod:`.numpy_kernel`: one block, by walking the plan's steps;
* :mod:`.numpy_driver`: the schedule (record stack, thresholds) and its statistics;
* this module: the back end's face (``BACKEND``) and a built task's ``run``.

Several workers (``workers > 1``) run as one: the schedule is run once, sequentially, and
the statistics say ``workers == 1`` (the reducers are those of any number of workers:
integer sums, min and max exactly, float sums up to summation order).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from revec import ir
from revec.backends.numpy_driver import run_schedule
from revec.backends.numpy_kernel import Block, Kernel
from revec.errors import RevecError
from revec.runtime.stats import RunStats
from revec.transforms import kernel_plan as kp
from revec.transforms.schedule import Schedule

# helpers calling helpers and long expressions nest the interpreter's recursion (as
# deep as the front end's checks go: revec.frontend.RECURSION_LIMIT)
RECURSION_LIMIT = 12_000

# Which back end's plan is interpreted (kernel_plan.TARGETS: each back end's plan has the
# shapes measured best there).  The C plan, by default: it has the most lane code (the
# lock-step loops' prefix and body if-converted).  The tests interpret every target's.
DEFAULT_TARGET = "c"
# the plans it interprets do not inline leaves (its driver keeps no count of inlined
# leaves per child block; the compiled back ends' results and statistics equal it) and
# do not fold the base case into the split (its split step copies the base threads, which
# its base-case step reads: fold_in_split leaves the plan's base side empty)
NOT_INTERPRETED = frozenset({"leaf_inline", "fold_in_split"})


def split_mode(compaction: str | None) -> str:
    """The plan's split mode for the API's ``compaction`` (``table`` / None: vector)."""
    if compaction in (None, "table"):
        return "vector"
    if compaction == "scalar":
        return "scalar"
    raise RevecError(f"unknown compaction {compaction!r}; expected 'table' or 'scalar'")


class NumpyTask:
    """A task ready to run: its kernel plan and the interpreter of its steps."""

    def __init__(self, program: ir.Program, task: str, compaction: str | None = None,
                 target: str = DEFAULT_TARGET) -> None:
        self.program = program
        self.task = program.tasks[task]
        self.plan = kp.build_plan(program, task, split_mode(compaction), target, NOT_INTERPRETED)
        assert not self.task.prologue, "the prologue is inlined before the plan is built"

    def run(self, args: tuple[Any, ...], schedule: Schedule, max_memory: int = 0,
            workers: int = 1) -> tuple[dict[str, Any], RunStats]:
        """Run ``schedule`` from the root frame ``args`` (every parameter, hidden ones
        included, as :func:`revec.api.root_args` gives them).  Returns every reducer's
        value (hidden ones included) and the run's statistics; ``max_memory`` bounds the
        bytes of live frames (0: none); ``workers`` > 1 runs as one worker."""
        del workers  # see the module docstring
        plan = self.plan
        value = {p.name: np.array([a], p.ty.dtype) for p, a in zip(self.task.params, args)}
        invariant = {c.name: value[c.name][0] for c in plan.invariant}
        uniform = {c.name: value[c.name][0] for c in plan.uniform}
        varying = [c for c in plan.columns if c.name not in uniform]
        root = Block(1, {c.name: value[c.name] for c in varying}, uniform)
        accs = {r.name: r.dtype.type(r.identity()) for r in self.program.reducers.values()}
        kernel = Kernel(self.program, plan, invariant)
        frame_bytes = sum(c.ty.dtype.itemsize for c in plan.columns)
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, RECURSION_LIMIT))
        t0 = time.perf_counter()
        try:
            tally = run_schedule(kernel, root, schedule, accs, frame_bytes, max_memory)
        finally:
            sys.setrecursionlimit(old)
        seconds = time.perf_counter() - t0
        return {name: v.item() for name, v in accs.items()}, tally.stats(seconds)


class NumpyBackend:
    """The registry's face of the numpy back end."""

    name = "numpy"
    target = DEFAULT_TARGET  # the kernel plans it interprets
    suffix = ".txt"

    def unavailable(self) -> str | None:
        return None  # NumPy is always there

    def generate(self, program: ir.Program, task: str, compaction: str | None = None) -> str:
        """What it will execute: the kernel plan, whose steps it interprets."""
        plan = kp.build_plan(program, task, split_mode(compaction), DEFAULT_TARGET, NOT_INTERPRETED)
        return ("numpy back end: interprets this kernel plan step by step "
                "(revec/backends/numpy_kernel.py)\n\n" + plan.render())

    def build(self, program: ir.Program, task: str, compaction: str | None = None
              ) -> NumpyTask:
        return NumpyTask(program, task, compaction)


BACKEND = NumpyBackend()

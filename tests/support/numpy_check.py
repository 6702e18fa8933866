"""The numpy back end (the kernel plan's executable reference) in the differential tests.

It interprets the plan with NumPy, about a millisecond per block at best, so the
differential suites run it only on the trees it can afford: those the numba back end ran
with at most :data:`MAX_TASKS` tasks (most generated programs; their median tree has a
handful).  Its reducers must be the sequential reference's and its statistics those of
the numba back end for the same schedule (both run the schedule of DESIGN.md section 3).
"""

from __future__ import annotations

from typing import Any

from revec import ir
from revec.api import RunResult, run_loaded
from tests.support.compare import close

MAX_TASKS = 3000

# the statistics both back ends must agree on
STATS = ("tasks", "leaves", "levels", "blocks", "utilization", "reexpansions", "peak_live",
         "tasks_per_level", "leaves_per_level", "reexpansions_per_level",
         "reexp_growth_per_level")


def affordable(numba: RunResult) -> bool:
    return numba.stats.tasks <= MAX_TASKS


def check_numpy(program: ir.Program, task: str, args: Any, variant: str, b: int, r: int,
                numba: RunResult, reducers: dict[str, Any] | None = None,
                result: Any = None) -> RunResult | None:
    """Run the numpy back end where :func:`affordable`: the reference's ``reducers``
    (those given) and returned value (``result``, if not None), the numba run's
    statistics.  Returns its result (None: skipped)."""
    if not affordable(numba):
        return None
    got = run_loaded(program, task, args, variant=variant, block_size=b, reexp_threshold=r,
                     backend="numpy")
    where = ("numpy", task, variant, b, r)
    for k, want in (reducers or {}).items():
        assert close(want, got.reducers[k]), (*where, k, want, got.reducers[k])
    if result is not None:
        assert close(result, got.result), (*where, result, got.result)
    for k in STATS:
        assert getattr(got.stats, k) == getattr(numba.stats, k), (*where, k)
    return got

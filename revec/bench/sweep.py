"""The measurement plan of ``revec bench`` (the paper's eight programs) and its timing rules.

Every time is the median of ``repeats`` timed runs in one process; the first call of each
compiled program (one per back end and compaction) is an untimed warm-up that also
compiles.  revec runs are timed by the run itself (``RunStats.seconds``: the schedule,
without compilation), baselines by :func:`revec.bench.baselines.prepare` (the recursion
alone).

The block-size sweep (2^4 .. 2^16) is designed to fit the whole default suite in 30
minutes on two cores (docs/benchmarks.md):

* bfs does not depend on B: one configuration per back end;
* blocked and reexp (R = B) are *scanned* from the largest B down, one timed run per size;
  the C back end at every power of two, the numba back end (slower to compile and, on
  some programs, per task) at every second one (2^4, 2^6, ..., 2^16).  The scan stops
  (the smaller sizes are recorded as not run: they are slower still, with more and
  smaller blocks) once a run takes longer than ``stop_floor`` seconds and more than
  ``slow_factor`` times the best of the back end so far (the warm-up run at B = 4096
  included), or once the next size, extrapolated from the growth between the last two,
  would take over twice that;
* the numba back end skips the sizes whose schedule (same strategy and B: the same
  blocks) was not run or was over ``slow_factor`` times its curve's best on the C back end;
* bfs: one run, repeated only if it is not that far slower;
* where the numba back end's sizes skip some of the C back end's, the C sizes next to the
  best scanned numba size (B/2 and 2B) are run too, one run each, so that both back ends'
  best B are found on the same grid;
* the best scanned sizes of each curve (at most ``refine`` of them, within
  ``refine_within`` of its best run) are *refined* to ``repeats`` runs; the best median
  among them is the curve's entry in Table 2;
* Fig. 16: the C back end's reexp curve again with the scalar split (every second size,
  one run each, and the table split's best size with ``repeats`` runs);
* CPython recursion runs only where its estimated time (its per-task time on the quick
  preset times this run's task count) stays under ``cpython_cap`` seconds per run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ALL_SIZES: tuple[int, ...] = tuple(2 ** k for k in range(4, 17))


@dataclass(frozen=True)
class SweepPlan:
    repeats: int = 5
    c_sizes: tuple[int, ...] = ALL_SIZES
    numba_sizes: tuple[int, ...] = ALL_SIZES[::2]
    scalar_sizes: tuple[int, ...] = ALL_SIZES[::3]
    strategies: tuple[str, ...] = ("bfs", "blocked", "reexp")
    backends: tuple[str, ...] = ("c", "numba")
    slow_factor: float = 4.0           # stop a scan once a run is this much slower than its best
    stop_floor: float = 1.0            # ... and takes longer than this (seconds)
    refine: int = 2                    # scanned sizes refined to `repeats` runs, per curve
    refine_within: float = 1.1         # ... if within this factor of the curve's best run
    cpython_cap: float = 5.0           # seconds per CPython run (estimated) above which it is skipped
    compaction_figure: bool = True     # Fig. 16 (C back end, scalar split)
    ablation: bool = False             # each plan technique switched in turn (ablation.md)

    def sizes(self, backend: str) -> tuple[int, ...]:
        return self.c_sizes if backend == "c" else self.numba_sizes

    def neighbours(self, backend: str, best: int) -> tuple[int, ...]:
        """The C sizes next to ``best`` (B/2, 2B) that ``backend``'s coarser scan left out."""
        own = set(self.sizes(backend))
        return tuple(b for b in (best * 2, best // 2) if b in self.c_sizes and b not in own)

    def max_neighbours(self, backend: str) -> int:
        """Runs reserved per curve for :meth:`neighbours` (progress accounting)."""
        return 0 if set(self.c_sizes) <= set(self.sizes(backend)) else 2

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        def pw(sizes: tuple[int, ...]) -> str:
            return ", ".join(f"2^{s.bit_length() - 1}" for s in sizes)

        return (f"medians of {self.repeats} timed runs after an untimed warm-up (compile "
                f"excluded); bfs once per back end (independent of B); blocked and reexp "
                f"(R = B) scanned from the largest B down with one run per size (C: {pw(self.c_sizes)}; "
                f"numba: {pw(self.numba_sizes)}), the scan stopped once a run took over "
                f"{self.stop_floor:g} s and {self.slow_factor:g}x the back end's best (or the "
                f"next size, extrapolated, would take twice that); bfs repeated only if not "
                f"that slow; numba skips a size whose schedule was over {self.slow_factor:g}x its "
                f"curve's best (or not run) on the C back end"
                + ("" if set(self.c_sizes) <= set(self.numba_sizes) else
                   ", and runs the C sizes next to its best scanned size (B/2, 2B) once")
                + f"; the best {self.refine} scanned "
                f"size(s) within {self.refine_within:g}x of it refined to {self.repeats} runs; "
                f"Fig. 16: C reexp with the scalar split at {pw(self.scalar_sizes)} (one run) "
                f"and at the table split's best B ({self.repeats} runs); CPython recursion "
                f"skipped where one run is estimated over {self.cpython_cap:g} s"
                + ("; ablation: each plan technique switched in turn at the best reexp B, "
                   f"interleaved rounds, medians of {self.repeats}" if self.ablation else ""))


@dataclass
class Record:
    """One measured configuration (an entry of a benchmark's ``results`` list)."""

    impl: str                          # "revec" or a baseline: "c-recursive", "njit", "cpython"
    backend: str                       # "c", "numba", "python"
    strategy: str | None = None        # bfs / blocked / reexp (revec only)
    block_size: int | None = None
    reexp_threshold: int | None = None
    compaction: str | None = None      # C back end: "table" or "scalar"
    status: str = "ok"                 # ok | skipped: ... | stopped: ... | not run: ...
    times: list[float] = field(default_factory=list)
    verified: bool | None = None
    stats: dict[str, Any] | None = None
    note: str = ""

    @property
    def seconds(self) -> float | None:
        if not self.times:
            return None
        s = sorted(self.times)
        mid = len(s) // 2
        return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["seconds"] = self.seconds
        d["runs"] = len(self.times)
        return d

"""``revec bench [NAMES...]``: the paper's eight programs against their baselines.

:func:`run_benchmark` measures one benchmark at one preset size under a
:class:`revec.bench.sweep.SweepPlan` and returns its JSON record; :func:`run_suite` runs
several, stores each record as ``<out>/results/NAME.json`` as soon as it is measured and
renders the report (:mod:`revec.bench.suite_report`), which ``revec report bench``
rebuilds later from the stored records alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from revec.api import compiled_task, get_program, root_args, run_loaded
from revec.bench import answers, baselines
from revec.bench.presets import Preset, preset
from revec.bench.records import store
from revec.bench.sweep import Record, SweepPlan
from revec.frontend.inputs import bind_inputs
from revec.ir import Program
from revec.runtime.memory import MemoryBudgetError
from revec.transforms.kernel_plan import plan_off, plan_on

OVER_BUDGET = "stopped: over memory budget"
WARM_BLOCK = 4096
STAT_KEYS = ("tasks", "leaves", "levels", "utilization", "reexpansions", "peak_live", "blocks")


def expected_answer(p: Preset) -> tuple[dict[str, int], str]:
    """The independent answer of a preset and where it comes from.  UTS sample trees are
    checked against their published sizes (walking T3 in Python would take minutes)."""
    if p.name == "uts":
        from revec.bench.presets import _uts

        for tree, q in answers.UTS_TREES.items():
            pub = answers.UTS_PUBLISHED[tree]
            args = _uts(t=q["t"], a=q["a"], d=q["d"], b=q["b"], r=q["r"], q=q["q"], m=q["m"])
            if args == p.args and pub["depth"] is not None:
                return {k: int(v) for k, v in pub.items() if v is not None}, \
                    f"published UTS 2.1 sample tree {tree}"
    return answers.expected(p.name, p.args), "revec.bench.answers"


def _matches(got: dict[str, Any], want: dict[str, int]) -> bool:
    try:
        return all(int(np.asarray(got[k]).item()) == v for k, v in want.items())
    except (KeyError, TypeError, ValueError):
        return False


class _Bench:
    """The state of one benchmark's measurement."""

    def __init__(self, p: Preset, plan: SweepPlan, max_memory: int, bar: Any) -> None:
        self.p, self.plan, self.max_memory, self.bar = p, plan, max_memory, bar
        self.program: Program = get_program(p.path)
        # the program with the preset's arrays bound (what the runs compile and run:
        # run_loaded binds the same arrays to this same program)
        self.bound, self.scalars, _ = bind_inputs(self.program, p.task, p.root_args)
        self.want, self.answer_source = expected_answer(p)
        self.records: list[Record] = []
        self.compile_seconds: dict[str, float] = {}
        self.reducers: dict[str, Any] | None = None
        self.tree: dict[str, list[int]] = {}
        self.per_level: dict[str, dict[str, Any]] = {}
        self.tasks = 0
        self.fastest: dict[str, float] = {}
        self.ticked = 0  # progress steps counted (the bar's total: planned_runs)
        self.ablated: dict[str, Any] | None = None  # --ablation's measurements

    # ------------------------------------------------------------------ helpers
    def _tick(self, label: str, n: int = 1) -> None:
        self.ticked += n
        self.bar.set_postfix_str(f"{self.p.name} {label}", refresh=False)
        self.bar.update(n)

    def _revec_once(self, rec: Record) -> bool:
        """One timed run added to ``rec``; False when the run stopped (over budget)."""
        assert rec.strategy is not None
        try:
            r = run_loaded(self.program, self.p.task, self.p.root_args, variant=rec.strategy,
                           backend=rec.backend, block_size=rec.block_size,
                           max_memory=self.max_memory, compaction=rec.compaction)
        except MemoryBudgetError:
            rec.status = OVER_BUDGET
            rec.times.clear()
            return False
        ok = _matches(r.reducers, self.want)
        rec.verified = ok if rec.verified is None else (rec.verified and ok)
        rec.times.append(float(r.stats.seconds))
        rec.reexp_threshold = None if r.schedule is None else _finite(r.schedule.reexp_threshold)
        s = r.stats
        rec.stats = {k: getattr(s, k) for k in STAT_KEYS}
        if self.reducers is None and ok:
            self.reducers = {k: np.asarray(v).item() for k, v in r.reducers.items()}
        if not self.tree:
            self.tree = {"tasks_per_level": list(s.tasks_per_level),
                         "leaves_per_level": list(s.leaves_per_level)}
            self.tasks = int(s.tasks)
        if rec.strategy == "reexp" and rec.backend == "c" and rec.compaction != "scalar":
            self.per_level[str(rec.block_size)] = {
                "reexpansions_per_level": list(s.reexpansions_per_level),
                "reexp_growth_per_level": [float(g) for g in s.reexp_growth_per_level]}
        return True

    def _repeat(self, rec: Record, runs: int) -> None:
        label = f"{rec.backend} {rec.strategy}" + (
            f" B={rec.block_size}" if rec.block_size else "") + (
            " scalar" if rec.compaction == "scalar" else "")
        for i in range(runs):
            if not self._revec_once(rec):
                self._tick(label, runs - i)
                return
            self._tick(label)

    # ------------------------------------------------------------------ baselines
    def baselines(self) -> None:
        for impl, kind in (("c-recursive", "c"), ("njit", "numba")):
            rec = Record(impl=impl, backend=kind)
            t0 = time.perf_counter()
            fn = baselines.prepare(self.p.name, kind, self.p.args)
            if kind == "c":
                fn()                                   # untimed warm-up
            self.compile_seconds[f"baseline-{kind}"] = time.perf_counter() - t0
            for _ in range(self.plan.repeats):
                t0 = time.perf_counter()
                got = fn()
                rec.times.append(time.perf_counter() - t0)
                ok = _matches(got, self.want)
                rec.verified = ok if rec.verified is None else (rec.verified and ok)
                self._tick(impl)
            self.records.append(rec)

    def cpython(self) -> None:
        rec = Record(impl="cpython", backend="python")
        if self.tasks == 0:
            rec.status = "skipped: no revec run gave the task count to estimate its time"
            self._tick("cpython (skipped)", self.plan.repeats)
            self.records.append(rec)
            return
        q = preset(self.p.name, "quick")
        fn = baselines.prepare(self.p.name, "python", q.args)
        t0 = time.perf_counter()
        fn()
        t_quick = time.perf_counter() - t0
        quick = run_loaded(self.program, q.task, q.root_args, variant="reexp",
                           backend=self.plan.backends[0], block_size=WARM_BLOCK, max_memory=0)
        per_task = t_quick / max(1, quick.stats.tasks)
        estimate = per_task * self.tasks
        rec.note = (f"estimate {estimate:.3g} s: {per_task * 1e9:.0f} ns per task on the "
                    f"quick preset x {self.tasks:,} tasks")
        if estimate > self.plan.cpython_cap:
            rec.status = f"skipped: estimated {_fmt_s(estimate)} per run"
            self._tick("cpython (skipped)", self.plan.repeats)
        else:
            fn = baselines.prepare(self.p.name, "python", self.p.args)
            for _ in range(self.plan.repeats):
                t0 = time.perf_counter()
                got = fn()
                rec.times.append(time.perf_counter() - t0)
                ok = _matches(got, self.want)
                rec.verified = ok if rec.verified is None else (rec.verified and ok)
                self._tick("cpython")
        self.records.append(rec)

    # ------------------------------------------------------------------ revec
    def warm(self, backend: str, compaction: str | None) -> None:
        t0 = time.perf_counter()
        compiled_task(self.bound, self.p.task, backend, compaction)
        key = backend if compaction in (None, "table") else f"{backend}-{compaction}"
        self.compile_seconds[key] = time.perf_counter() - t0
        rec = Record(impl="revec", backend=backend, strategy="reexp", block_size=WARM_BLOCK,
                     compaction=compaction)
        self._revec_once(rec)                          # untimed warm-up (kernel, driver)
        self._tick(f"{backend} warm-up")
        if rec.seconds is not None and compaction != "scalar":
            self._note_time(backend, rec.seconds)

    def _note_time(self, backend: str, t: float) -> None:
        self.fastest[backend] = min(self.fastest.get(backend, float("inf")), t)

    def _far_slower(self, backend: str, t: float, curve_best: float = float("inf")) -> bool:
        """Is ``t`` more than ``slow_factor`` times the best this back end (or this
        curve) has shown, and longer than ``stop_floor`` seconds?"""
        ref = min(curve_best, self.fastest.get(backend, float("inf")))
        return t > self.plan.stop_floor and t > self.plan.slow_factor * ref

    def _slow_on_c(self, strategy: str, b: int) -> bool:
        """Was this schedule (strategy, B) far slower than its curve's best on the C back
        end, or not run there?  (The schedule, and so the blocks, are the same on both
        back ends.)"""
        curve = [r for r in self.records if r.impl == "revec" and r.backend == "c"
                 and r.strategy == strategy and r.compaction == "table"]
        same = [r for r in curve if r.block_size == b]
        times = [r.seconds for r in curve if r.seconds is not None]
        if not same or not times:
            return False
        t = same[0].seconds
        if t is None:
            return same[0].status.startswith("not run")
        return t > self.plan.stop_floor / 4 and t > self.plan.slow_factor * min(times)

    def _stop_scan(self, backend: str | None, t: float, prev: float | None,
                   curve_best: float) -> bool:
        """Stop a scan (towards smaller B) after a run of ``t`` seconds: when it is far
        slower than the best, or when the next size, extrapolated from the growth between
        the last two sizes, would be over twice that."""
        key = backend or ""
        if self._far_slower(key, t, curve_best):
            return True
        if prev is None or prev <= 0:
            return False
        predicted = t * max(1.0, t / prev)
        ref = min(curve_best, self.fastest.get(key, float("inf")))
        return predicted > self.plan.stop_floor and predicted > 2 * self.plan.slow_factor * ref

    def bfs(self, backend: str) -> None:
        rec = Record(impl="revec", backend=backend, strategy="bfs",
                     compaction="table" if backend == "c" else None)
        self._repeat(rec, 1)
        t = rec.seconds
        if t is not None and self._far_slower(backend, t):
            rec.note = (f"one run: {t:.3g} s is over {self.plan.slow_factor:g}x the back "
                        "end's best")
            self._tick(f"{backend} bfs (stopped)", self.plan.repeats - 1)
        elif t is not None:
            self._repeat(rec, self.plan.repeats - 1)
            self._note_time(backend, rec.seconds or t)
        else:
            self._tick(f"{backend} bfs", self.plan.repeats - 1)
        self.records.append(rec)

    def curve(self, backend: str, strategy: str, sizes: Sequence[int],
              compaction: str | None) -> list[Record]:
        """Scan ``sizes`` from the largest down, then refine the best."""
        plan = self.plan
        recs: list[Record] = []
        best = float("inf")
        stopped: float | None = None
        prev: float | None = None
        for b in sorted(sizes, reverse=True):
            rec = Record(impl="revec", backend=backend, strategy=strategy, block_size=b,
                         compaction=compaction)
            recs.append(rec)
            if stopped is not None:
                rec.status = (f"not run: the scan stopped at a larger B "
                              f"({stopped:.3g} s there)")
                self._tick(f"{backend} {strategy} B={b} (skipped)")
                continue
            if backend != "c" and self._slow_on_c(strategy, b):
                rec.status = ("not run: the same schedule on the C back end was not run or "
                              f"over {plan.slow_factor:g}x its best there")
                self._tick(f"{backend} {strategy} B={b} (skipped)")
                continue
            self._repeat(rec, 1)
            t = rec.seconds
            if t is None:
                continue
            best = min(best, t)
            if self._stop_scan(backend, t, prev, best):
                stopped = t
            prev = t
        self._neighbours(backend, strategy, compaction, recs)
        timed = sorted((r for r in recs if r.seconds is not None), key=lambda r: r.seconds or 0)
        chosen = [r for r in timed[:plan.refine] if (r.seconds or 0) <= plan.refine_within * best]
        for r in chosen:
            self._repeat(r, plan.repeats - 1)
            if r.seconds is not None and compaction != "scalar":
                self._note_time(backend, r.seconds)
        # the ticks reserved for refinement that did not happen
        self._tick(f"{backend} {strategy}", (plan.refine - len(chosen)) * (plan.repeats - 1))
        self.records.extend(recs)
        return recs

    def _neighbours(self, backend: str, strategy: str, compaction: str | None,
                    recs: list[Record]) -> None:
        """A coarser scan (numba's every second size) also runs the C sizes next to its
        best scanned size, one run each, so that its best B is found on C's grid."""
        plan = self.plan
        top = best_record(recs)
        extra = plan.neighbours(backend, top.block_size) if top and top.block_size else ()
        for b in sorted(extra, reverse=True):
            rec = Record(impl="revec", backend=backend, strategy=strategy, block_size=b,
                         compaction=compaction)
            if self._slow_on_c(strategy, b):
                rec.status = ("not run: the same schedule on the C back end was not run or "
                              f"over {plan.slow_factor:g}x its best there")
                self._tick(f"{backend} {strategy} B={b} (skipped)")
            else:
                self._repeat(rec, 1)
            recs.append(rec)
        recs.sort(key=lambda r: -(r.block_size or 0))
        self._tick(f"{backend} {strategy}", plan.max_neighbours(backend) - len(extra))

    def revec(self) -> None:
        plan = self.plan
        for backend in plan.backends:
            compaction = "table" if backend == "c" else None
            self.warm(backend, compaction)
            # reexp first: its best sets the reference of the adaptive stop
            for strategy in ("reexp", "blocked"):
                if strategy in plan.strategies:
                    recs = self.curve(backend, strategy, plan.sizes(backend), compaction)
                    if backend == "c" and strategy == "reexp" and plan.compaction_figure:
                        self.scalar_curve(recs)
            if "bfs" in plan.strategies:
                self.bfs(backend)

    def scalar_curve(self, table: list[Record]) -> None:
        """Fig. 16: the C back end's reexp curve with the scalar split (one run per size,
        ``repeats`` at the table split's best size; the same adaptive stop)."""
        plan = self.plan
        start = self.ticked
        top = best_record(table)
        self.warm("c", "scalar")
        sizes = set(plan.scalar_sizes) | ({top.block_size} if top and top.block_size else set())
        stopped: float | None = None
        prev: float | None = None
        own = float("inf")                 # the scalar curve is compared with itself
        for b in sorted(sizes, reverse=True):
            runs = plan.repeats if top is not None and b == top.block_size else 1
            rec = Record(impl="revec", backend="c", strategy="reexp", block_size=b,
                         compaction="scalar")
            self.records.append(rec)
            if stopped is not None and runs == 1:
                rec.status = f"not run: the scan stopped at a larger B ({stopped:.3g} s there)"
                self._tick(f"c reexp B={b} scalar (skipped)")
                continue
            self._repeat(rec, runs)
            t = rec.seconds
            if t is None:
                continue
            own = min(own, t)
            if self._stop_scan(None, t, prev, own):
                stopped = t
            prev = t
        # the steps planned for this curve (see planned_runs) that it did not take: the
        # table split's best size is one of the scalar sizes
        missing = 1 + len(plan.scalar_sizes) + plan.repeats - (self.ticked - start)
        if missing > 0:
            self._tick("c reexp scalar", missing)

    def planned_runs(self) -> int:
        plan, r = self.plan, self.plan.repeats
        n = 3 * r                                      # baselines (cpython counted as skipped)
        for backend in plan.backends:
            n += 1 + (r if "bfs" in plan.strategies else 0)
            curves = sum(s in plan.strategies for s in ("blocked", "reexp"))
            n += curves * (len(plan.sizes(backend)) + plan.max_neighbours(backend)
                           + plan.refine * (r - 1))
            if backend == "c" and "reexp" in plan.strategies and plan.compaction_figure:
                n += 1 + len(plan.scalar_sizes) + r
        if plan.ablation:
            from revec.bench.ablation import planned_runs

            n += planned_runs(plan.backends, r)
        return n

    def ablation(self) -> None:
        """``--ablation``: each plan technique switched in turn at the best reexp B
        (:mod:`revec.bench.ablation`)."""
        from revec.bench.ablation import isa, run_ablation
        from revec.bench.suite_report import loadavg

        load = loadavg()
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        plain = baselines.prepare(self.p.name, "c", self.p.args)
        rows = [row for backend in self.plan.backends
                for row in run_ablation(self, backend, _matches, plain)]
        self.ablated = {"isa": isa(), "repeats": self.plan.repeats, "date": started,
                        "load_at_start": load, "load_at_end": loadavg(), "rows": rows}

    def record(self, seconds: float) -> dict[str, Any]:
        t = self.bound.tasks[self.p.task]
        rargs = root_args(self.bound, self.p.task, self.scalars)
        inputs: dict[str, Any] = {q.name: np.asarray(v).item()
                                  for q, v in zip(t.user_params, rargs)}
        for name, value in self.p.args.items():  # arrays: their type and length
            if name not in inputs:
                a = np.asarray(value)
                inputs[name] = f"{a.dtype.name}[{len(a)}]" + (
                    f": {value}" if not isinstance(value, list | tuple | np.ndarray) else "")
        verified = bool(self.records) and all(
            r.verified is not False for r in self.records) and self.reducers is not None
        return {
            "name": self.p.name,
            "size": self.p.size,
            "input": {
                "program": f"benchmarks/{self.p.name}.py", "task": self.p.task,
                "args": inputs, "description": self.p.note,
                "backends": list(self.plan.backends),
                "strategies": list(self.plan.strategies),
                "block_sizes": {b: list(self.plan.sizes(b)) for b in self.plan.backends},
                "reexp_threshold": "R = B", "simd_width": 16,
                "repeats": self.plan.repeats, "max_memory": self.max_memory,
            },
            "reducers": self.reducers or {},
            "expected": self.want,
            "answer_source": self.answer_source,
            "verified": verified,
            "results": [r.to_json() for r in self.records],
            "tree": self.tree,
            "reexp_per_level": self.per_level,
            "compile_seconds": self.compile_seconds,
            "elapsed_seconds": seconds,
            "plan": self.plan.to_json(),
            "plan_text": self.plan.describe(),
            # the plan techniques switched by --plan-off / --plan-on or the environment
            "plan_switches": {"off": sorted(plan_off()), "on": sorted(plan_on())},
        } | ({"ablation": self.ablated} if self.ablated is not None else {})


def _finite(x: float | int | None) -> int | None:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return None
    v = int(x)
    return v if v < 2**62 else None


def _fmt_s(x: float) -> str:
    return f"{x:.0f} s" if x < 120 else f"{x / 60:.0f} min"


def best_record(recs: Sequence[Record]) -> Record | None:
    """The configuration with the lowest median among those run ``repeats`` times (or,
    failing that, among all timed ones)."""
    timed = [r for r in recs if r.seconds is not None]
    if not timed:
        return None
    most = max(len(r.times) for r in timed)
    return min((r for r in timed if len(r.times) == most), key=lambda r: r.seconds or 0)


def advance(bar: Any, n: int = 1) -> None:
    """Count ``n`` more on a tqdm bar that is left on screen.  Its last step is not drawn
    here: closing the bar draws the final line (with the overall rate), so drawing it on
    the last update too printed that line twice."""
    if bar.total is not None and bar.n + n >= bar.total:
        bar.n += n
    else:
        bar.update(n)


def run_benchmark(name: str, size: str, plan: SweepPlan, max_memory: int,
                  progress: bool = True, inputs: Preset | None = None) -> dict[str, Any]:
    """Measure one benchmark at a preset size (or on ``inputs``); its JSON record (see
    docs/benchmarks.md)."""
    p = inputs if inputs is not None else preset(name, size)
    t0 = time.perf_counter()
    b = _Bench(p, plan, max_memory, None)
    # the bar's total is the planned runs from its first line on (not 1, then the plan)
    with tqdm(total=b.planned_runs(), desc=name, unit="run", disable=not progress,
              leave=False, dynamic_ncols=True) as bar:
        b.bar = bar
        b.baselines()
        b.revec()
        if plan.ablation:
            b.ablation()
        b.cpython()
    return b.record(time.perf_counter() - t0)


def run_suite(names: Sequence[str], size: str, plan: SweepPlan, out: Path, max_memory: int,
              progress: bool = True, write: bool = True,
              on_record: Callable[[dict[str, Any]], None] | None = None
              ) -> list[dict[str, Any]]:
    """Measure ``names`` and (with ``write``) store them under ``out`` and render the
    report from everything stored there."""
    from revec.bench.suite_report import loadavg, machine_header, render

    header = machine_header()
    records = []
    try:
        with tqdm(total=len(names), desc=f"revec bench ({size})", unit="benchmark",
                  disable=not progress, dynamic_ncols=True) as bar:
            for name in names:
                load = loadavg()  # the report gives the load when each benchmark started
                rec = run_benchmark(name, size, plan, max_memory, progress)
                rec["machine"] = {**header, "load_at_start": load}
                records.append(rec)
                if write:
                    store(rec, out)
                if on_record is not None:
                    on_record(rec)
                advance(bar)
    finally:
        # also when interrupted (Ctrl-C): the finished benchmarks' results are stored,
        # and the report shows them
        if write and records:
            render(out)
    return records

"""``revec bench --ablation``: what each kernel plan technique is worth.

For each benchmark and compiled back end, at the best reexp configuration the sweep
found (its block size; C with the table split), the kernels are run with the plan
techniques (:data:`revec.transforms.kernel_plan.TECHNIQUES`) as they are (their
back end's defaults, or as ``--plan-off`` / ``--plan-on`` set them) and then with each
technique switched in turn: off where it is on, on where it is off.  The runs are
interleaved (one round runs every configuration once; ``repeats`` rounds), so the load
of a shared machine falls on all of them alike, and each configuration's time is the
median of its rounds.  A technique that does not apply (the back end's generated source
is the same with it on and off: :func:`revec.backends.techniques.technique_states`) is
recorded as not applicable and not run.  Every run is verified: its answer against the
benchmark's independent one, its statistics (tasks, leaves and re-expansions per level,
utilization, peak live frames, blocks) against the runs with the techniques as they
are.

The rows are stored in the benchmark's record (``"ablation"``) and rendered into
``ablation.md`` by :func:`revec.bench.suite_report.render`.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from revec.api import compiled_task, run_loaded
from revec.backends.techniques import technique_states
from revec.bench.presets import Preset
from revec.bench.records import best
from revec.bench.sweep import Record, SweepPlan
from revec.ir import Program
from revec.runtime.memory import MemoryBudgetError
from revec.transforms import kernel_plan as kp

Matches = Callable[[dict[str, Any], dict[str, int]], bool]


class Measured(Protocol):
    """What the ablation reads of a benchmark's measurement (revec.bench.suite._Bench)."""

    p: Preset
    plan: SweepPlan
    program: Program  # the checked program the runs run
    bound: Program  # the program with the preset's arrays bound (what they compile)
    want: dict[str, int]  # the independent answer
    max_memory: int
    records: list[Record]  # the sweep's

    def _tick(self, label: str, n: int = 1) -> None: ...

# the statistics every configuration must share with the techniques as they are
SAME_STATS = ("tasks", "leaves", "levels", "utilization", "reexpansions", "peak_live",
              "blocks", "tasks_per_level", "leaves_per_level", "reexpansions_per_level")


def planned_runs(backends: tuple[str, ...], repeats: int) -> int:
    """Progress steps of one benchmark's ablation: per back end, a warm-up and
    ``repeats`` rounds of every configuration (each technique may apply) and of plain
    recursive C."""
    return len(backends) * ((1 + len(kp.TECHNIQUES)) * (1 + repeats) + repeats)


def isa() -> dict[str, str]:
    """The vector instruction sets the kernels are built for: C, from the macros the
    compiler defines with the build's flags (``REVEC_CFLAGS``); numba, the compaction
    variant its kernels use for 32-bit lanes (``REVEC_NUMBA_VECTOR`` or the CPU)."""
    out: dict[str, str] = {}
    try:
        from revec.toolchain.cbuild import compiler_command, effective_cflags

        macros = subprocess.run([*compiler_command(), *effective_cflags(), "-dM", "-E",
                                 "-x", "c", "-"], input="", capture_output=True,
                                text=True, timeout=30).stdout
        out["c"] = ("AVX-512" if "__AVX512F__" in macros else "AVX2" if "__AVX2__" in macros
                    else "SSE4.2" if "__SSE4_2__" in macros else "no x86 vector extension")
    except (OSError, subprocess.SubprocessError):
        out["c"] = "unknown"
    try:
        from revec.runtime.compaction.numba_vector import ENV, isa_for, target_features

        forced = os.environ.get(ENV, "").strip()
        variant = isa_for(32).replace("avx512", "AVX-512").replace("avx2", "AVX2") + (
            f" ({ENV}={forced})" if forced and forced != "auto" else "")
        target = numba_target_isa(target_features())
        # the ISA LLVM compiles numba's code for (NUMBA_CPU_NAME alone keeps the host's
        # features: AVX-512 code on an AVX-512 host) and the compaction variant
        out["numba"] = (variant if variant.startswith(target)
                        else f"{target}, compaction variant {variant}")
    except Exception as err:  # noqa: BLE001 - informative only (numba may be missing)
        out["numba"] = f"unknown ({type(err).__name__})"
    return out


def numba_target_isa(features: frozenset[str]) -> str:
    """The widest x86 vector extension among numba's target ``features`` (LLVM names:
    avx512f, avx2, sse4.2)."""
    return ("AVX-512" if "avx512f" in features else "AVX2" if "avx2" in features
            else "SSE4.2" if "sse4.2" in features else "no x86 vector extension")


def _stats(r: Any) -> dict[str, Any]:
    s = r.stats
    return {k: (list(getattr(s, k)) if k.endswith("_per_level") else getattr(s, k))
            for k in SAME_STATS}


def run_ablation(b: Measured, backend: str, matches: Matches,
                 plain: Callable[[], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The ablation rows of ``backend`` for the benchmark ``b`` measures (after its
    sweep: at the best reexp block size); ``matches(reducers, want)``: is an answer
    right?  ``plain``: a run of plain recursive C, timed once per round too (the as-is
    row's ``plain_c_times``: its speedup over plain C from the same rounds)."""
    repeats = b.plan.repeats
    per_backend = (1 + len(kp.TECHNIQUES)) * (1 + repeats) + repeats
    compaction = "table" if backend == "c" else None
    top = best(r.to_json() for r in b.records if r.impl == "revec"
               and r.backend == backend and r.strategy == "reexp"
               and r.compaction == compaction)
    base = {"backend": backend, "strategy": "reexp", "compaction": compaction}
    if top is None:
        b._tick(f"{backend} ablation (no reexp time)", per_backend)
        return [dict(base, technique=None, status="not run: no timed reexp configuration")]
    bsize = int(top["block_size"])
    off, on = kp.plan_off(), kp.plan_on()
    states = technique_states(b.bound, b.p.task, backend, compaction)
    rows: list[dict[str, Any]] = [dict(base, technique=None, state=None, block_size=bsize,
                                       plan_off=sorted(off), plan_on=sorted(on - off))]
    for s in states:
        row: dict[str, Any] = dict(base, technique=s.name, in_force=s.state,
                                    block_size=bsize)
        if s.state == "n/a":
            row.update(state="n/a", status="not applicable: the same kernel", note=s.why)
            b._tick(f"{backend} {s.name} (n/a)", 1 + repeats)
        else:
            t = frozenset({s.name})
            row["state"] = "off" if s.state == "on" else "on"
            row["plan_off"] = sorted(off | t if s.state == "on" else off - t)
            row["plan_on"] = sorted(on - t - off if s.state == "on" else (on | t) - (off - t))
        rows.append(row)
    run = [r for r in rows if r.get("status") is None]
    if len(run) == 1:  # no technique applies: the sweep's runs are the reference
        rows[0].update(status="ok", times=list(top["times"]), runs=top["runs"],
                       seconds=top["seconds"], verified=top["verified"], stats_same=None,
                       note="no technique applies: the sweep's runs at this B")
        b._tick(f"{backend} ablation (nothing applies)", per_backend)
        return rows
    for r in run:
        r.update(status="ok", times=[], verified=None, stats_same=None)
    # warm-up: compile each configuration and run it once, untimed
    for r in run:
        t0 = time.perf_counter()
        _compiled(b, backend, compaction, r)
        r["compile_seconds"] = time.perf_counter() - t0
        _once(b, backend, r, timed=False, matches=matches)
        b._tick(f"{backend} ablation warm-up" + (f" {r['technique']}" if r["technique"]
                                                 else ""))
    plain_times: list[float] = []
    plain_ok: bool | None = None
    for _ in range(repeats):
        for r in run:
            if r["status"] == "ok":
                _once(b, backend, r, timed=True, matches=matches)
            b._tick(f"{backend} ablation" + (f" {r['technique']} {r['state']}"
                                              if r["technique"] else " (as is)"))
        if plain is not None:
            t0 = time.perf_counter()
            got = plain()
            plain_times.append(time.perf_counter() - t0)
            plain_ok = matches(got, b.want) and plain_ok is not False
        b._tick(f"{backend} ablation plain C")
    if plain_times:
        run[0].update(plain_c_times=plain_times,
                      plain_c_seconds=float(np.median(plain_times)), plain_c_verified=plain_ok)
    ref = run[0].get("_stats")
    for r in run:
        st = r.pop("_stats", None)
        r["stats_same"] = st is not None and ref is not None and st == ref and \
            "differs between runs" not in st
        times = r["times"]
        r["runs"] = len(times)
        r["seconds"] = float(np.median(times)) if times else None
    return rows


def _compiled(b: Measured, backend: str, compaction: str | None, r: dict[str, Any]) -> Any:
    with kp.plan_switches(r["plan_off"], r["plan_on"]):
        return compiled_task(b.bound, b.p.task, backend, compaction)


def _once(b: Measured, backend: str, r: dict[str, Any], timed: bool, matches: Matches) -> None:
    """One run of configuration ``r``: its time (``timed``), answer and statistics."""
    try:
        res = run_loaded(b.program, b.p.task, b.p.root_args, variant="reexp",
                         backend=backend, block_size=r["block_size"],
                         max_memory=b.max_memory, compaction=r["compaction"],
                         plan_off=r["plan_off"], plan_on=r["plan_on"])
    except MemoryBudgetError:
        r["status"] = "stopped: over memory budget"
        r["times"] = []
        return
    ok = matches(res.reducers, b.want)
    r["verified"] = ok if r["verified"] is None else (r["verified"] and ok)
    st = _stats(res)
    if "_stats" not in r:
        r["_stats"] = st
    elif r["_stats"] != st:
        r["_stats"] = {"differs between runs": True}
    if timed:
        r["times"].append(float(res.stats.seconds))

"""The multi-core table (the paper's Table 5, Sec. 6.5): for each benchmark and worker
count, plain recursive C (one core), its OpenMP-tasks peer, revec C reexp and revec numba
reexp, with speedups over plain C and parallel efficiency (speedup of N workers over 1
worker, divided by N).  ``revec bench --workers 1,2`` writes it to
``reports/bench/<size>/workers.md`` and ``workers.json``.

The OpenMP peer is the program's plain recursive C with ``#pragma omp task`` per spawn
above a cutoff depth (gcc ``-fopenmp``); the cutoff is the best of a small sweep at the
largest thread count, and is reported.  revec runs use the default block size and
threshold (B = R = 4096) and the reexp schedule.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from revec.api import compiled_task, get_program, root_args
from revec.backends.c_runner import omp_task
from revec.bench import baselines
from revec.bench.presets import preset
from revec.files import write_atomic
from revec.transforms.schedule import Schedule

CUTOFFS = (2, 4, 6, 8, 12, 16)


def _median(fn: Callable[..., tuple[dict[str, Any], float]], repeats: int,
            want: dict[str, Any] | None) -> tuple[float, bool]:
    times, ok = [], True
    for _ in range(repeats):
        got, t = fn()
        times.append(t)
        if want is not None:
            ok = ok and all(got.get(k) == v for k, v in want.items())
    return statistics.median(times), ok


def _timed(fn: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], float]:
    t0 = time.perf_counter()
    got = fn()
    return got, time.perf_counter() - t0


def measure(name: str, size: str, workers: Sequence[int], repeats: int, budget: int,
            log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    pre = preset(name, size)
    program = get_program(pre.path)
    rargs = root_args(program, pre.task, pre.root_args)
    plain = baselines.prepare(name, "c", pre.args)
    want = plain()
    t_plain, ok_plain = _median(lambda: _timed(plain), repeats, want)
    log(f"{name}: plain C {t_plain:.4f} s")
    omp = omp_task(program, pre.task)
    top = max(workers)
    omp.run_omp(rargs, top, 4)  # warm-up
    sweep = {c: min(omp.run_omp(rargs, top, c)[1] for _ in range(2)) for c in CUTOFFS}
    cutoff = min(sweep, key=lambda c: sweep[c])
    log(f"{name}: OpenMP cutoff sweep {sweep} -> {cutoff}")
    schedule = Schedule.make("reexp")
    c_task = compiled_task(program, pre.task, "c")
    nb_task = compiled_task(program, pre.task, "numba")
    # each implementation's worker counts (and revec's two back ends) once per round,
    # rounds repeated: the ratios of N over 1 worker come from interleaved runs, so drift
    # of the machine (page reclaim, other jobs) hits both sides alike.  OpenMP runs in
    # its own phase: libgomp's idle threads spin-wait for a while after a parallel
    # region (measured: revec C fib 2 workers 0.066 s alone, 0.076 s right after an
    # OpenMP run), which would slow whatever ran next.
    phases: list[dict[tuple[str, int], Callable[[], tuple[dict[str, Any], float]]]] = [
        {("omp", n): partial(omp.run_omp, rargs, n, cutoff) for n in workers}, {}]
    for n in workers:
        phases[1]["c", n] = partial(_run, c_task, rargs, schedule, budget, n)
        phases[1]["nb", n] = partial(_run, nb_task, rargs, schedule, budget, n)
    times: dict[tuple[str, int], list[float]] = {}
    ok = ok_plain
    for runs in phases:
        for fn in runs.values():  # warm-up (compiled code, caches, the allocator)
            fn()
        for _ in range(repeats):
            for key, fn in runs.items():
                got, t = fn()
                times.setdefault(key, []).append(t)
                ok = ok and all(got.get(k) == v for k, v in want.items())
        time.sleep(0.5)  # let spinning OpenMP threads go to sleep
    detail = {n: _worker_detail(c_task, rargs, schedule, budget, n) for n in workers}
    rows = []
    for n in workers:
        t_omp, t_c, t_nb = (statistics.median(times[k, n]) for k in ("omp", "c", "nb"))
        rows.append({"workers": n, "omp": t_omp, "c_reexp": t_c, "numba_reexp": t_nb,
                     "verified": ok, "c_workers": detail[n],
                     # every timed run, in round order (the spread behind each median)
                     "runs": {k: times[k, n] for k in ("omp", "c", "nb")}})
        log(f"{name}: {n} workers: OpenMP {t_omp:.4f} s, revec C {t_c:.4f} s, "
            f"numba {t_nb:.4f} s")
    return {"name": name, "size": size, "note": pre.note, "plain_c": t_plain,
            "omp_cutoff": cutoff, "omp_cutoff_sweep": sweep, "rows": rows,
            "repeats": repeats}


def _run(task: Any, rargs: tuple[Any, ...], schedule: Schedule, budget: int, n: int
         ) -> tuple[dict[str, Any], float]:
    got, stats = task.run(rargs, schedule, budget, n)
    return got, stats.seconds


def _worker_detail(task: Any, rargs: tuple[Any, ...], schedule: Schedule, budget: int,
                   n: int) -> list[dict[str, Any]]:
    """One more C run's per-worker tasks, steals, idle and CPU seconds (the measured
    reasons behind an efficiency below 1)."""
    _, stats = task.run(rargs, schedule, budget, n)
    keys = ("tasks", "steals", "idle_seconds", "cpu_seconds")
    return [{k: row[k] for k in keys if k in row} for row in stats.per_worker]


def _geomean(xs: list[float]) -> float:
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def render(results: list[dict[str, Any]], load: str) -> str:
    workers = [r["workers"] for r in results[0]["rows"]] if results else []
    L = ["# Every core: revec with several workers (Table 5 style)", "",
         "Seconds are medians of repeated in-process runs; speedups are over the plain "
         "recursive C on one core; efficiency is the speedup of N workers over 1 worker of "
         "the same implementation, divided by N.  OpenMP: the program's plain recursive C "
         "with a task per spawn above the cutoff depth (gcc -fopenmp).  revec: reexp, "
         "B = R = 4096.", "", f"Machine: {os.cpu_count()} cores; load when run: {load}.", "",
         "| benchmark | N | plain C s | OpenMP s (cutoff) | revec C s | numba s | OpenMP x | "
         "revec C x | numba x | eff OpenMP | eff C | eff numba | revec C / OpenMP |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    by_n: dict[int, dict[str, list[float]]] = {n: {"c": [], "nb": [], "vs": [], "omp": []}
                                               for n in workers}
    for r in results:
        one = r["rows"][0]
        for row in r["rows"]:
            n = row["workers"]
            p = r["plain_c"]
            eff = [(one[k] / row[k]) / (n / one["workers"]) for k in
                   ("omp", "c_reexp", "numba_reexp")]
            vs = row["omp"] / row["c_reexp"]
            by_n[n]["c"].append(one["c_reexp"] / row["c_reexp"])
            by_n[n]["nb"].append(one["numba_reexp"] / row["numba_reexp"])
            by_n[n]["omp"].append(one["omp"] / row["omp"])
            by_n[n]["vs"].append(vs)
            L.append(f"| {r['name']} | {n} | {p:.4f} | {row['omp']:.4f} ({r['omp_cutoff']}) "
                     f"| {row['c_reexp']:.4f} | {row['numba_reexp']:.4f} | "
                     f"{p / row['omp']:.2f} | {p / row['c_reexp']:.2f} | "
                     f"{p / row['numba_reexp']:.2f} | {eff[0]:.2f} | {eff[1]:.2f} | "
                     f"{eff[2]:.2f} | {vs:.2f} |" + ("" if row["verified"] else " unverified"))
    L += ["", "Geometric means over the benchmarks (N workers over 1 worker of the same "
          "implementation; revec C over OpenMP at the same N):", ""]
    for n in workers:
        g = by_n[n]
        L.append(f"- N = {n}: revec C {_geomean(g['c']):.2f}x, numba {_geomean(g['nb']):.2f}x, "
                 f"OpenMP {_geomean(g['omp']):.2f}x; revec C / OpenMP {_geomean(g['vs']):.2f}x")
    detail = [(r["name"], row) for r in results for row in r["rows"]
              if row.get("c_workers") and row["workers"] > 1]
    if detail:
        L += ["", "revec C per worker (one more run): tasks, successful steals, idle and "
              "thread CPU milliseconds:", ""]
        for name, row in detail:
            parts = [f"{w.get('tasks', 0):,} tasks, {w.get('steals', 0)} steals, idle "
                     f"{1e3 * w.get('idle_seconds', 0.0):.1f}, CPU "
                     f"{1e3 * w.get('cpu_seconds', 0.0):.1f}" for w in row["c_workers"]]
            L.append(f"- {name}, N = {row['workers']}: " + "; ".join(parts))
    return "\n".join(L) + "\n"


def run_workers_table(names: Sequence[str], size: str, workers: Sequence[int],
                      repeats: int, budget: int, out_dir: Path | None,
                      progress: bool = True, show: bool = False) -> list[dict[str, Any]]:
    """Measure ``names`` on each worker count; the table goes to ``out_dir`` (workers.md
    and workers.json), or with ``show`` and no ``out_dir`` to standard output."""
    def log(s: str) -> None:
        if progress:
            print(s, file=sys.stderr, flush=True)

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    results = [measure(n, size, workers, repeats, budget, log) for n in names]
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text = render(results, f"{load} (before), {load_after} (after)")
    if out_dir is not None:
        write_atomic(out_dir / "workers.md", text)
        write_atomic(out_dir / "workers.json", json.dumps(results, indent=1) + "\n")
    elif show:
        sys.stdout.write(text)
    return results

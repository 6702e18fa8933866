"""The report of ``revec bench``: tables (markdown) from stored benchmark records.

Everything here reads only the records :mod:`revec.bench.suite` stored under
``<out>/results/`` (through :mod:`revec.bench.records`; this module does not import the
suite), so ``revec report bench`` rebuilds the report without running anything.  Speedups are ratios of medians measured in the same run of the suite.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from revec.bench.records import (
    baseline,
    baseline_seconds,
    best,
    load_stored,
    revec_records,
    strategy_best,
)
from revec.errors import RevecError
from revec.files import write_atomic

README = "README.md"
STRATEGIES = ("bfs", "blocked", "reexp")
BACKENDS = ("c", "numba")  # the compiled back ends the tables show (revec bench --backends)


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def machine_header() -> dict[str, Any]:
    """What the report header says about the machine, taken when the suite starts."""
    try:
        from revec.bench.compaction import machine_info

        info: dict[str, Any] = dict(machine_info())
    except Exception:  # noqa: BLE001 - the header is informative only
        info = {"cpu": platform.processor(), "python": platform.python_version(),
                "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
    info["cores"] = os.cpu_count()
    info["revision"] = _revision()
    info["load_at_start"] = loadavg()
    return info


def _revision() -> str:
    """The commit measured, and how many files of revec/ and benchmarks/ differed from it."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "revec", "benchmarks"],
                               cwd=root, capture_output=True, text=True,
                               timeout=10).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not head:
        return "unknown"
    return head + (f" with {len(dirty)} uncommitted file(s) in revec/ or benchmarks/"
                   if dirty else "")


def speedup(base: float | None, t: float | None) -> float | None:
    if base is None or t is None or t <= 0:
        return None
    return base / t


def geomean(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None and x > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(x) for x in vals) / len(vals))


def _x(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}x"


def _s(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:.3f}" if v >= 0.01 else f"{v:.2g}"


def _b(b: int | None) -> str:
    if b is None:
        return "—"
    k = b.bit_length() - 1
    return f"2^{k}" if b == 1 << k else str(b)


def _cell(r: dict[str, Any] | None, base: float | None, with_b: bool = True) -> str:
    if r is None:
        return "—"
    if r.get("seconds") is None:
        return "stopped (memory)" if "memory" in r.get("status", "") else "not run"
    runs = "" if r["runs"] >= r.get("_repeats", r["runs"]) else f" ({r['runs']} run)"
    b = f" @ {_b(r['block_size'])}" if with_b and r.get("block_size") else ""
    return f"{_x(speedup(base, r['seconds']))}{b}{runs}"


# ---------------------------------------------------------------------- tables
def table2(recs: list[dict[str, Any]]) -> list[str]:
    out = ["| benchmark | input | plain C (s) | @njit (s) | CPython (s) | "
           "C bfs | C blocked | C reexp | numba bfs | numba blocked | numba reexp | verified |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for rec in recs:
        repeats = rec["input"]["repeats"]
        c = baseline_seconds(rec, "c-recursive")
        cells = []
        for backend in BACKENDS:
            for s in STRATEGIES:
                r = strategy_best(rec, backend, s)
                if r is not None:
                    r = dict(r, _repeats=repeats)
                cells.append(_cell(r, c, with_b=s != "bfs"))
        py = baseline(rec, "cpython")
        if py is None:
            pys = "—"
        elif py.get("seconds") is None:
            pys = py.get("status", "skipped").replace("skipped: ", "skipped (") + ")"
        else:
            pys = _s(py["seconds"])
        out.append(f"| {rec['name']} | {rec['input']['description']} | {_s(c)} | "
                   f"{_s(baseline_seconds(rec, 'njit'))} | {pys} | " + " | ".join(cells)
                   + f" | {'yes' if rec['verified'] else '**NO**'} |")
    gm = []
    for backend in BACKENDS:
        for s in STRATEGIES:
            gm.append(_x(geomean(
                speedup(baseline_seconds(rec, "c-recursive"),
                        (strategy_best(rec, backend, s) or {}).get("seconds"))
                for rec in recs)))
    out.append("| geometric mean | | | | | " + " | ".join(gm) + " | |")
    return out


def njit_table(recs: list[dict[str, Any]]) -> list[str]:
    out = ["| benchmark | @njit (s) | numba bfs | numba blocked | numba reexp |",
           "|---|---|---|---|---|"]
    cols: dict[str, list[float | None]] = {s: [] for s in STRATEGIES}
    for rec in recs:
        j = baseline_seconds(rec, "njit")
        cells = []
        for s in STRATEGIES:
            r = strategy_best(rec, "numba", s)
            cells.append(_cell(r, j, with_b=s != "bfs"))
            cols[s].append(speedup(j, None if r is None else r.get("seconds")))
        out.append(f"| {rec['name']} | {_s(j)} | " + " | ".join(cells) + " |")
    out.append("| geometric mean | | " + " | ".join(_x(geomean(cols[s])) for s in STRATEGIES)
               + " |")
    return out


def times_table(recs: list[dict[str, Any]]) -> list[str]:
    out = ["| benchmark | plain C | @njit | " + " | ".join(
        f"{b} {s}" for b in BACKENDS for s in STRATEGIES) + " |",
        "|---|---|---|" + "---|" * 6]
    for rec in recs:
        cells = []
        for b in BACKENDS:
            for s in STRATEGIES:
                r = strategy_best(rec, b, s)
                cells.append(_s(None if r is None else r.get("seconds")))
        out.append(f"| {rec['name']} | {_s(baseline_seconds(rec, 'c-recursive'))} | "
                   f"{_s(baseline_seconds(rec, 'njit'))} | " + " | ".join(cells) + " |")
    return out


def memory_table(recs: list[dict[str, Any]]) -> list[str]:
    out = ["| benchmark | tasks | levels | bfs peak live | blocked peak live (B) | "
           "reexp peak live (B) | utilization bfs / blocked / reexp | re-expansions (reexp) |",
           "|---|---|---|---|---|---|---|---|"]
    for rec in recs:
        cells, utils = [], []
        tasks = levels = reexp = None
        for s in STRATEGIES:
            r = strategy_best(rec, "c", s)
            st = None if r is None else r.get("stats")
            if st is None:
                cells.append("stopped (memory)" if r is not None and "memory" in
                             r.get("status", "") else "—")
                utils.append("—")
                continue
            assert r is not None  # (it has statistics)
            tasks, levels = st["tasks"], st["levels"]
            b = "" if s == "bfs" else f" ({_b(r['block_size'])})"
            cells.append(f"{st['peak_live']:,}{b}")
            utils.append(f"{st['utilization']:.3f}")
            if s == "reexp":
                reexp = st["reexpansions"]
        out.append(f"| {rec['name']} | {'—' if tasks is None else f'{tasks:,}'} | "
                   f"{'—' if levels is None else levels} | " + " | ".join(cells)
                   + f" | {' / '.join(utils)} | {'—' if reexp is None else f'{reexp:,}'} |")
    return out


def compaction_table(recs: list[dict[str, Any]]) -> list[str]:
    out = ["| benchmark | B | C reexp, table split | C reexp, scalar split | table vs scalar |",
           "|---|---|---|---|---|"]
    for rec in recs:
        t = best(revec_records(rec, "c", "reexp"))
        if t is None:
            continue
        sc = [r for r in revec_records(rec, "c", "reexp", "scalar")
              if r["block_size"] == t["block_size"] and r.get("seconds") is not None]
        if not sc:
            continue
        c = baseline_seconds(rec, "c-recursive")
        out.append(f"| {rec['name']} | {_b(t['block_size'])} | "
                   f"{_x(speedup(c, t['seconds']))} | {_x(speedup(c, sc[0]['seconds']))} | "
                   f"{_x(speedup(sc[0]['seconds'], t['seconds']))} |")
    return out if len(out) > 2 else []


def unusual(recs: list[dict[str, Any]]) -> list[str]:
    """Configurations not measured as planned (skipped, stopped, not run, unverified)."""
    out = []
    for rec in recs:
        groups: dict[str, list[str]] = {}
        for r in rec["results"]:
            if r["impl"] == "cpython" and r.get("verified") is not False:
                continue                                   # its own line below
            if r["status"] == "ok" and r.get("verified") is not False:
                continue
            what = r["impl"] if r["impl"] != "revec" else (
                f"{r['backend']} {r['strategy']}"
                + (" scalar" if r.get("compaction") == "scalar" else ""))
            status = r["status"].split(" (")[0] if r["status"].startswith("not run") \
                else r["status"]
            if r.get("verified") is False:
                status = "WRONG ANSWER"
            key = f"{what}: {status}"
            groups.setdefault(key, []).append(_b(r.get("block_size")) if r.get("block_size")
                                              else "")
        for key, bs in groups.items():
            sizes = ", ".join(b for b in bs if b)
            out.append(f"- {rec['name']}, {key}" + (f" (B = {sizes})" if sizes else ""))
        py = baseline(rec, "cpython")
        if py is not None and py.get("seconds") is None:
            out.append(f"- {rec['name']}, CPython recursion: {py['status']}"
                       + (f" ({py['note']})" if py.get("note") else ""))
    return out


def acceptance(recs: list[dict[str, Any]]) -> list[str]:
    c_reexp = {rec["name"]: speedup(baseline_seconds(rec, "c-recursive"),
                                   (strategy_best(rec, "c", "reexp") or {}).get("seconds"))
               for rec in recs}
    nb = [speedup(baseline_seconds(rec, "njit"),
                  (strategy_best(rec, "numba", "reexp") or {}).get("seconds")) for rec in recs]
    gm = geomean(c_reexp.values())
    slower = [n for n, v in c_reexp.items() if v is not None and v < 1.0]
    gnb = geomean(nb)
    return [
        f"- C back end, best reexp configuration: geometric-mean speedup over plain recursive "
        f"C **{_x(gm)}** over {sum(v is not None for v in c_reexp.values())} benchmark(s) "
        f"(goal: at least 2.6x).",
        "- Benchmarks where the best C reexp is slower than plain recursive C: "
        + (", ".join(f"{n} ({_x(c_reexp[n])})" for n in slower) or "none") + ".",
        f"- numba back end, best reexp configuration vs `@njit` recursion: geometric mean "
        f"**{_x(gnb)}** (goal: above 1x).",
    ]


def _per_record(recs: list[dict[str, Any]], key: str) -> str:
    """The records' machine ``key`` (revision, date): one value, or which benchmarks
    have which when the records come from runs at different times."""
    values: dict[str, list[str]] = {}
    for r in recs:
        values.setdefault(str(r.get("machine", {}).get(key, "?")), []).append(r["name"])
    if len(values) == 1:
        return next(iter(values))
    return "; ".join(f"{v} ({', '.join(names)})" for v, names in values.items())


# ---------------------------------------------------------------------- the page
def render_text(recs: list[dict[str, Any]], figures: list[str]) -> str:
    if not recs:
        raise RevecError("no stored benchmark results to report")
    sizes = sorted({r["size"] for r in recs})
    m = recs[0].get("machine", {})
    plan_text = recs[0].get("plan_text") or ""
    loads = ", ".join(f"{r['name']} {r.get('machine', {}).get('load_at_start', '?')}"
                      for r in recs)
    total = sum(r.get("elapsed_seconds", 0.0) for r in recs)
    lines = [
        f"# revec bench: the paper's benchmarks ({', '.join(sizes)} size)", "",
        "Rebuilt by `revec report bench` from the stored records in `results/`; measured by "
        f"`revec bench --size {sizes[0]}`.", "",
        f"- Machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores; "
        f"{m.get('compiler', '?')}; flags `{m.get('cflags', '?')}`; "
        f"Python {m.get('python', '?')}, numpy {m.get('numpy', '?')}.",
        f"- Code: {_per_record(recs, 'revision')}.",
        f"- Measured: {_per_record(recs, 'date')}; load average (1/5/15 min) when each "
        f"benchmark started: {loads}{_load_remark(recs, m)}.",
        f"- Suite time (measurement, including compilation): {total / 60:.1f} min.",
        f"- Sweep: {plan_text}.",
        f"- Speedup = median time of plain recursive C (gcc {m.get('cflags', '?')}: the "
        "same flags as the kernels) / median time "
        "of the variant, both measured in the same run; `x @ 2^k` gives the best block size "
        "(R = B for reexp); bfs does not depend on B.  A number of runs in parentheses marks "
        "a configuration stopped early for being far slower than the best.", "",
        "## Table 2: best block size and speedup over plain recursive C", "",
        *table2(recs), "",
        "## numba back end vs `@njit` recursion (speedup = @njit time / variant time)", "",
        *njit_table(recs), "",
        "## This project's targets", "", *acceptance(recs), "",
        "## Median times at the best configuration (seconds)", "", *times_table(recs), "",
        "## Memory: peak live thread frames (C back end, at the best block size)", "",
        "Frames produced and not yet executed plus the block being executed; the schedule "
        "alone decides it, so both back ends hold the same number.", "",
        *memory_table(recs), "",
    ]
    comp = compaction_table(recs)
    lines += ["## Table compaction vs the scalar split (Fig. 16, C back end)", ""]
    lines += comp if comp else ["No scalar-split measurements stored."]
    lines += [""]
    if figures:
        lines += ["## Figures", ""] + [f"![{f}]({f})" for f in figures] + [""]
    if any(r.get("ablation") for r in recs):
        from revec.bench.ablation_report import ABLATION

        lines += ["## Plan techniques, each switched in turn", "",
                  f"Measured by `revec bench --ablation`: see [{ABLATION}]({ABLATION}).", ""]
    odd = unusual(recs)
    lines += ["## Configurations not measured as planned", ""]
    lines += odd if odd else ["None."]
    lines += ["", "## Compile times (seconds, not part of any timing)", "",
              "| benchmark | " + " | ".join(sorted({k for r in recs
                                                    for k in r.get("compile_seconds", {})}))
              + " |"]
    keys = sorted({k for r in recs for k in r.get("compile_seconds", {})})
    lines.append("|---|" + "---|" * len(keys))
    for r in recs:
        cs = r.get("compile_seconds", {})
        lines.append(f"| {r['name']} | " + " | ".join(
            f"{cs[k]:.2f}" if k in cs else "—" for k in keys) + " |")
    return "\n".join(lines) + "\n"


def render(out: Path) -> list[Path]:
    """Render the report under ``out`` from its stored records: README.md and figures."""
    from revec.bench.suite_figures import draw_all

    recs = load_stored(out)
    if not recs:
        raise RevecError(f"no stored benchmark results under {out / 'results'}; "
                         "run 'revec bench' first")
    from revec.bench.ablation_report import render as render_ablation

    figures = draw_all(recs, out)
    text = render_text(recs, [f.name for f in figures])
    write_atomic(out / README, text)
    return [out / README, *figures, *render_ablation(recs, out)]


def _load_remark(recs: list[dict[str, Any]], machine: dict[str, Any]) -> str:
    """Say so when the 1-minute load reached the core count (other jobs ran)."""
    try:
        cores = int(machine.get("cores", 0))
        top = max(float(str(r.get("machine", {}).get("load_at_start", "0")).split()[0])
                  for r in recs)
    except (ValueError, IndexError):
        return ""
    if cores and top >= cores:
        return " (at or above the number of cores: other jobs shared the machine)"
    return " (below the number of cores)"

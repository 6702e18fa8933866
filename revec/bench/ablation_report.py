"""``ablation.md``: the plan-technique ablation ``revec bench --ablation`` stored in the
benchmarks' records (``"ablation"``, see :mod:`revec.bench.ablation`), rendered from
the records alone (``revec report bench`` rebuilds it)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from revec.bench.records import baseline_seconds
from revec.files import write_atomic

ABLATION = "ablation.md"
NAMES = {"c": "C", "numba": "numba"}


def ablated(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records that hold an ablation."""
    return [r for r in recs if r.get("ablation")]


def _s(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:.3f}" if v >= 0.01 else f"{v:.2g}"


def _b(b: int | None) -> str:
    if not b:
        return "—"
    k = int(b).bit_length() - 1
    return f"2^{k}" if b == 1 << k else str(b)


def _gm(xs: list[float]) -> float | None:
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def _switches(sw: dict[str, list[str]]) -> str:
    parts = [f"{k} {', '.join(sw[k])}" for k in ("off", "on") if sw.get(k)]
    return "; ".join(parts) if parts else "none"


def techniques_of(recs: list[dict[str, Any]]) -> list[str]:
    """Every technique some record's ablation names, in first-seen order."""
    out: list[str] = []
    for rec in recs:
        for row in rec["ablation"]["rows"]:
            t = row.get("technique")
            if t and t not in out:
                out.append(t)
    return out


def row_ok(row: dict[str, Any]) -> bool:
    """Was a measured configuration verified (answer and statistics)?"""
    return row.get("verified") is not False and row.get("stats_same") is not False


def cell(row: dict[str, Any] | None, ref: float | None) -> tuple[str, float | None]:
    """A technique's cell and its ratio (switched time / time as is)."""
    if row is None:
        return "—", None
    if row.get("state") == "n/a":
        return "n/a (same kernel)", None
    t = row.get("seconds")
    if t is None:
        return row.get("status", "not run").split(":")[0], None
    ratio = t / ref if ref else None
    mark = "" if row_ok(row) else " **NOT VERIFIED**"
    shown = "—" if ratio is None else f"{ratio:.2f}x"
    return f"{row['in_force']} → {row['state']}: {_s(t)} s, {shown}{mark}", ratio


def table(recs: list[dict[str, Any]], backend: str) -> list[str]:
    techs = techniques_of(recs)
    out = ["| benchmark | B | as is (s) | as is vs plain C | " + " | ".join(techs)
           + " | verified |", "|---|---|---|---|" + "---|" * len(techs) + "---|"]
    ratios: dict[str, list[float]] = {t: [] for t in techs}
    any_row = False
    for rec in recs:
        rows = [r for r in rec["ablation"]["rows"] if r["backend"] == backend]
        if not rows:
            continue
        any_row = True
        ref_row = next((r for r in rows if r.get("technique") is None), None)
        ref = None if ref_row is None else ref_row.get("seconds")
        # plain C timed in the same rounds (else the sweep's baseline)
        c = (ref_row or {}).get("plain_c_seconds") or baseline_seconds(rec, "c-recursive")
        cells = []
        for t in techs:
            text, ratio = cell(next((r for r in rows if r.get("technique") == t), None), ref)
            cells.append(text)
            if ratio is not None:
                ratios[t].append(ratio)
        measured = [r for r in rows if r.get("seconds") is not None]
        ok = bool(measured) and all(row_ok(r) for r in measured) and \
            (ref_row or {}).get("plain_c_verified") is not False
        b = None if ref_row is None else ref_row.get("block_size")
        vs = "—" if not (c and ref) else f"{c / ref:.2f}x"
        out.append(f"| {rec['name']} | {_b(b)} | {_s(ref)} | {vs} | " + " | ".join(cells)
                   + f" | {'yes' if ok else '**NO**'} |")
    if not any_row:
        return []
    gms = [_gm(ratios[t]) for t in techs]
    out.append("| geometric mean (where it applies) | | | | " + " | ".join(
        "—" if g is None else f"{g:.2f}x ({len(ratios[t])})" for g, t in zip(gms, techs))
        + " | |")
    return out


def render_text(recs: list[dict[str, Any]]) -> str:
    recs = ablated(recs)
    m = recs[0].get("machine", {})
    isa = recs[0]["ablation"].get("isa", {})
    sizes = sorted({r["size"] for r in recs})
    repeats = sorted({r["ablation"].get("repeats") for r in recs})
    switches = {_switches(r.get("plan_switches") or {}) for r in recs}
    lines = [
        f"# revec bench: plan techniques, each switched in turn ({', '.join(sizes)} size)",
        "",
        "Rebuilt by `revec report bench` from the stored records in `results/`; measured by "
        f"`revec bench --ablation --size {sizes[0]}`.", "",
        f"- Machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores; "
        f"{m.get('compiler', '?')}; flags `{m.get('cflags', '?')}`.",
        f"- ISA of the kernels: C {isa.get('c', '?')} (the macros the compiler defines with "
        f"these flags); numba {isa.get('numba', '?')}.",
        f"- Code: {m.get('revision', '?')}.",
        "- Measured (UTC; load average 1/5/15 min at the start and end of each benchmark's "
        "ablation): " + "; ".join(
            f"{r['name']} {r['ablation'].get('date', '?')}, load "
            f"{r['ablation'].get('load_at_start', '?')} → {r['ablation'].get('load_at_end', '?')}"
            for r in recs) + ".",
        f"- Switches in force for the whole run (--plan-off / --plan-on or REVEC_PLAN_OFF / "
        f"REVEC_PLAN_ON): {' / '.join(sorted(switches))}.",
        "- Each row: the benchmark's best reexp configuration of the sweep (its block size "
        "B; C with the table split), run with the plan techniques as they are (**as is**: "
        "each back end's defaults, with the switches above) and with each technique switched in turn (off where it "
        "is on, on where it is off), in interleaved rounds (every configuration once per "
        f"round), medians of {', '.join(map(str, repeats))} rounds.  A cell gives the "
        "switch (as is → switched), the switched run's median and its time over the as-is "
        "time: **above 1x, the technique as it is makes the kernel faster**.  n/a: the "
        "technique does not apply (the back end's generated source is the same with it on "
        "and off), not run.  **as is vs plain C**: plain recursive C timed once per round "
        "in the same rounds, median over the as-is median (where none applies: the sweep's "
        "times).",
        "- Verified: every run's answer equals the benchmark's independent one, and its "
        "statistics (tasks, leaves and re-expansions per level, utilization, peak live "
        "frames, blocks) equal the as-is runs'.", "",
    ]
    for backend in ("c", "numba"):
        t = table(recs, backend)
        if t:
            lines += [f"## {NAMES[backend]} back end ({isa.get(backend, '?')})", "", *t, ""]
    notes = [f"- {rec['name']}, {row['backend']}"
             + (f" {row['technique']} {row.get('state')}" if row.get("technique") else
                " as is")
             + f": {row.get('status')}" + ("" if row_ok(row) else ", NOT VERIFIED")
             for rec in recs for row in rec["ablation"]["rows"]
             if row.get("state") != "n/a" and (row.get("status") != "ok" or not row_ok(row))]
    lines += ["Where no technique applies, the as-is time is the sweep's (its runs at that "
              "B): " + ("; ".join(
                  f"{NAMES[b]} {', '.join(names)}" for b, names in _nothing(recs).items())
                  or "none") + ".", ""]
    lines += ["## Configurations not measured as planned", ""] + (notes or ["None."])
    return "\n".join(lines) + "\n"


def _nothing(recs: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Back end -> the benchmarks where no technique applies."""
    out: dict[str, list[str]] = {}
    for rec in recs:
        for row in rec["ablation"]["rows"]:
            if row.get("technique") is None and row.get("note", "").startswith("no technique"):
                out.setdefault(row["backend"], []).append(rec["name"])
    return out


def render(recs: list[dict[str, Any]], out: Path) -> list[Path]:
    """Write ``ablation.md`` under ``out`` when some record holds an ablation."""
    if not ablated(recs):
        return []
    write_atomic(out / ABLATION, render_text(recs))
    return [out / ABLATION]

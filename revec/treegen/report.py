"""``reports/treegen/``: the paper's Figs. 18-23 from the stored simulation results,
with tables of our numbers beside the paper's (TOPC 2019, Sec. 8)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from revec.cli.common import write_atomic

RESULTS = "results.json"

# The paper's numbers (Sec. 8), as quoted in issue 5.
PAPER_REEXP_B64 = {18: 0.76, 28: 0.66, 52: 0.65, 100: 0.61}
PAPER_BLOCKED_B_NEEDED = {18: ">400", 28: "1,750", 52: "1,800", 100: "2,000"}
PAPER_WIDTH_D100 = {80: 0.47, 160: 0.36}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def block_size_needed(key: dict[str, Any], target: float) -> float | None:
    """Smallest B (interpolated in log B) at which blocked reaches ``target``."""
    from revec.treegen.experiments import BLOCKED_SIZES

    pts = [(b, key[f"blocked B={b}"]["mean"]) for b in BLOCKED_SIZES]
    if pts[0][1] >= target:
        return float(pts[0][0])
    for (b0, u0), (b1, u1) in zip(pts, pts[1:]):
        if u0 < target <= u1:
            f = (target - u0) / (u1 - u0)
            return math.exp(math.log(b0) + f * (math.log(b1) - math.log(b0)))
    return None


def _fmt_b(b: float | None) -> str:
    from revec.treegen.experiments import BLOCKED_SIZES

    return f"> {BLOCKED_SIZES[-1]}" if b is None else f"{b:,.0f}"


def render(res: dict[str, Any], out: Path) -> list[Path]:
    """Write the six figures and README.md into ``out``; returns the files."""
    from revec.treegen.experiments import B_OVER_P, BLOCKED_SIZES, KEY_DEPTHS, WIDTHS

    plt = _pyplot()
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    depths = sorted(int(d) for d in res["depths"])
    D = res["depths"]
    K = res["key_depths"]

    # Fig. 18: distribution of trial utilization
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for dist in res["distribution"]:
        edges = dist["edges"]
        total = sum(dist["hist"])
        width = edges[1] - edges[0]
        dens = [h / (total * width) for h in dist["hist"]]
        ax.step(edges[:-1], dens, where="post",
                label=f"{dist['trials']:,} trials (mean {dist['summary']['mean']:.3f})")
    ax.set_xlabel("SIMD utilization of one trial (re-expansion, B=64, R=P=16)")
    ax.set_ylabel("density")
    ax.set_title("Fig. 18: utilization over trials, 10,001 nodes, depth 20")
    ax.legend()
    files.append(_save(fig, out / "fig18_distribution.png"))

    # Fig. 19: utilization vs depth
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for label in ("bfs", "reexp R=B", "reexp R=B/2", "reexp R=P", "blocked"):
        ax.plot(depths, [D[str(d)][label]["utilization"]["mean"] for d in depths], "o-",
                ms=3, label=label)
    ax.axhline(0.5, color="grey", lw=0.5, ls=":")
    ax.set_xlabel("tree depth (height)")
    ax.set_ylabel("mean SIMD utilization")
    ax.set_ylim(0, 1.02)
    ax.set_title("Fig. 19: utilization vs depth (P=16, B=64)")
    ax.legend(fontsize=8)
    files.append(_save(fig, out / "fig19_depth.png"))

    # Fig. 20: with vs without re-expansion
    fig, ax = plt.subplots(figsize=(6.4, 4))
    labels = ("blocked", "reexp R=P", "reexp R=B/2", "reexp R=B")
    w = 0.8 / (len(labels) + 1)
    for i, label in enumerate(labels):
        ax.bar([j + i * w for j in range(len(KEY_DEPTHS))],
               [D[str(d)][label]["utilization"]["mean"] for d in KEY_DEPTHS], w, label=label)
    ax.bar([j + len(labels) * w for j in range(len(KEY_DEPTHS))],
           [PAPER_REEXP_B64[d] for d in KEY_DEPTHS], w, label="paper, re-expansion",
           color="black", alpha=0.35)
    ax.set_xticks([j + 0.4 - w / 2 for j in range(len(KEY_DEPTHS))],
                  [str(d) for d in KEY_DEPTHS])
    ax.set_xlabel("depth")
    ax.set_ylabel("mean SIMD utilization")
    ax.set_title("Fig. 20: with and without re-expansion (P=16, B=64)")
    ax.legend(fontsize=8)
    files.append(_save(fig, out / "fig20_reexp_vs_blocked.png"))

    # Fig. 21: block size needed without re-expansion
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for d in KEY_DEPTHS:
        line = ax.plot(BLOCKED_SIZES, [K[str(d)][f"blocked B={b}"]["mean"]
                                       for b in BLOCKED_SIZES], "o-", ms=3,
                       label=f"depth {d}")[0]
        target = D[str(d)]["reexp R=P"]["utilization"]["mean"]
        ax.axhline(target, color=line.get_color(), ls=":", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("block size B without re-expansion")
    ax.set_ylabel("mean SIMD utilization")
    ax.set_title("Fig. 21: blocked vs B (dotted: re-expansion at B=64, R=P)")
    ax.legend(fontsize=8)
    files.append(_save(fig, out / "fig21_block_size_needed.png"))

    # Fig. 22: utilization vs B/P
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for d in KEY_DEPTHS:
        ax.plot(B_OVER_P, [K[str(d)][f"reexp B/P={k} R=P"]["mean"] for k in B_OVER_P], "o-",
                ms=3, label=f"depth {d}, R=P")
        ax.plot(B_OVER_P, [K[str(d)][f"reexp B/P={k} R=B"]["mean"] for k in B_OVER_P], "s--",
                ms=3, label=f"depth {d}, R=B")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("B / P (P = 16)")
    ax.set_ylabel("mean SIMD utilization (re-expansion)")
    ax.set_title("Fig. 22: utilization vs block size over SIMD width")
    ax.legend(fontsize=7, ncol=2)
    files.append(_save(fig, out / "fig22_block_over_p.png"))

    # Fig. 23: SIMD width
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for d in KEY_DEPTHS:
        ax.plot(WIDTHS, [K[str(d)][f"reexp P={p} B=4P R=P"]["mean"] for p in WIDTHS], "o-",
                ms=3, label=f"depth {d}, R=P")
    for d in (100,):
        ax.plot(WIDTHS, [K[str(d)][f"reexp P={p} B=4P R=B"]["mean"] for p in WIDTHS], "s--",
                ms=3, label=f"depth {d}, R=B")
    ax.plot(list(PAPER_WIDTH_D100), list(PAPER_WIDTH_D100.values()), "k*", ms=10,
            label="paper, depth 100")
    ax.set_xlabel("SIMD width P (B = 4P)")
    ax.set_ylabel("mean SIMD utilization (re-expansion)")
    ax.set_title("Fig. 23: utilization vs SIMD width at B/P = 4")
    ax.legend(fontsize=7)
    files.append(_save(fig, out / "fig23_simd_width.png"))

    readme = out / "README.md"
    write_atomic(readme, markdown(res))
    files.append(readme)
    return files


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def _pm(s: dict[str, float]) -> str:
    return f"{s['mean']:.3f} ± {s['std']:.3f}"


def markdown(res: dict[str, Any]) -> str:
    from revec.treegen.experiments import B_OVER_P, KEY_DEPTHS, WIDTHS

    D = res["depths"]
    K = res["key_depths"]
    depths = sorted(int(d) for d in D)
    t = res["trials_per_depth"]
    L: list[str] = []
    a = L.append
    a("# Uniform random trees: SIMD utilization of the schedules (paper Sec. 7-8)\n")
    a(f"Generated by `revec report treegen --trials {res['distribution'][-1]['trials']}` "
      f"in {res['seconds']:.0f} s (simulation). Trees: {res['nodes']:,} nodes (the paper's "
      "10,000; full binary trees have an odd count), drawn uniformly among all trees of "
      "that size and exact height (`revec.treegen`). Defaults of Sec. 7.2: P = 16, "
      f"B = 64, R = P. {t:,} trials per depth (paired: all settings of a depth run on "
      "the same trees); ± is the standard deviation over trials, the standard error of a "
      f"mean is that over sqrt({t:,}). Raw numbers: `results.json`.\n")
    a("Utilization is DESIGN.md's: sum over executed blocks of floor(b/P)·P over all "
      "tasks. *Occupancy* is sum(b) / sum(ceil(b/P)·P) (busy lanes among the lanes of "
      "issued vectors); *wide share* is the share of tasks run in blocks of at least P "
      "threads. *split* rows use the other reading of the bfs -> blocked switch (the "
      "one the numba runtime currently implements, see docs/treegen.md).\n")

    a("## Fig. 18: distribution over trials (depth 20)\n")
    a("![](fig18_distribution.png)\n")
    a("| trials | re-exp R=P: mean ± std | min | max | blocked | re-exp R=B |")
    a("|---:|---:|---:|---:|---:|---:|")
    for dist in res["distribution"]:
        a(f"| {dist['trials']:,} | {_pm(dist['summary'])} | {dist['min']:.3f} | "
          f"{dist['max']:.3f} | {_pm(dist['summary_blocked'])} | "
          f"{_pm(dist['summary_reexp_R_B'])} |")
    a("\nThe distribution is narrow and its mean is stable from the smallest to the "
      "largest number of trials, as in the paper: a few thousand trials suffice.\n")

    a("## Fig. 19: utilization vs depth\n")
    a("![](fig19_depth.png)\n")
    a("| depth | bfs | blocked | re-exp R=P | R=B/2 | R=3B/4 | R=B | widest level (mean, max) |")
    a("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for d in depths:
        row = D[str(d)]
        wl = row.get("widest level")
        wtxt = f"{wl['mean']:.0f}, {wl['max']}" if wl else "-"
        a(f"| {d} | " + " | ".join(f"{row[k]['utilization']['mean']:.3f}" for k in (
            "bfs", "blocked", "reexp R=P", "reexp R=B/2", "reexp R=3B/4", "reexp R=B"))
          + f" | {wtxt} |")
    lo_p = min(D[str(d)]["reexp R=P"]["utilization"]["mean"] for d in depths)
    lo_b = min(D[str(d)]["reexp R=B"]["utilization"]["mean"] for d in depths)
    a(f"\nPaper: re-expansion stays above 50% for depths 14-150. Ours: the minimum over "
      f"depths {depths[0]}-{depths[-1]} is {lo_p:.3f} with R = P and {lo_b:.3f} with "
      "R = B.\n")

    a("## Fig. 20: with and without re-expansion; R and the definition of utilization\n")
    a("![](fig20_reexp_vs_blocked.png)\n")
    a("| depth | paper re-exp | re-exp R=P | R=B/2 | R=3B/4 | R=B | R=P split | R=B split "
      "| blocked | blocked split |")
    a("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for d in KEY_DEPTHS:
        row = D[str(d)]
        a(f"| {d} | {PAPER_REEXP_B64[d]:.2f} | " + " | ".join(
            f"{row[k]['utilization']['mean']:.3f}" for k in (
                "reexp R=P", "reexp R=B/2", "reexp R=3B/4", "reexp R=B", "reexp R=P split",
                "reexp R=B split", "blocked", "blocked split")) + " |")
    a("\nAlternative definitions of utilization, re-expansion at B = 64:\n")
    a("| depth | paper | R=P util. | R=P occupancy | R=P wide share | R=B util. | "
      "R=B occupancy | R=B wide share |")
    a("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for d in KEY_DEPTHS:
        row = D[str(d)]
        cells = []
        for k in ("reexp R=P", "reexp R=B"):
            cells += [f"{row[k][m]['mean']:.3f}" for m in
                      ("utilization", "occupancy", "wide_share")]
        a(f"| {d} | {PAPER_REEXP_B64[d]:.2f} | " + " | ".join(cells) + " |")
    a("")
    a(closest_reading(res))

    a("## Fig. 21: block size needed without re-expansion\n")
    a("![](fig21_block_size_needed.png)\n")
    a("Smallest B (interpolated in log B) at which blocked execution (no re-expansion) "
      "reaches the utilization of re-expansion at B = 64:\n")
    a("| depth | paper | target R=P | B needed | target R=B | B needed |")
    a("|---:|---:|---:|---:|---:|---:|")
    for d in KEY_DEPTHS:
        tp = D[str(d)]["reexp R=P"]["utilization"]["mean"]
        tb = D[str(d)]["reexp R=B"]["utilization"]["mean"]
        a(f"| {d} | {PAPER_BLOCKED_B_NEEDED[d]} | {tp:.3f} | "
          f"{_fmt_b(block_size_needed(K[str(d)], tp))} | {tb:.3f} | "
          f"{_fmt_b(block_size_needed(K[str(d)], tb))} |")
    a("")
    wl = {d: D[str(d)].get("widest level") for d in KEY_DEPTHS}
    if all(wl.values()):
        a("A blocked schedule whose B exceeds the widest level never leaves bfs mode and "
          "equals bfs; the widest level of these trees holds on average " + ", ".join(
              f"{wl[d]['mean']:.0f} (depth {d})" for d in KEY_DEPTHS) + " threads (at most "
          + ", ".join(f"{wl[d]['max']}" for d in KEY_DEPTHS) + "). So with these trees and "
          "rules no B near the paper's 1,750-2,000 can be needed at depths 52-100; the "
          "paper's blocked schedule or trees must differ (docs/treegen.md).\n")

    a("## Fig. 22: utilization vs B/P (P = 16)\n")
    a("![](fig22_block_over_p.png)\n")
    a("| depth | R | " + " | ".join(f"B/P={k}" for k in B_OVER_P) + " |")
    a("|---:|---|" + "---:|" * len(B_OVER_P))
    for d in KEY_DEPTHS:
        for r in ("P", "B"):
            a(f"| {d} | {r} | " + " | ".join(
                f"{K[str(d)][f'reexp B/P={k} R={r}']['mean']:.3f}" for k in B_OVER_P) + " |")
    a("")

    a("## Fig. 23: SIMD width at B/P = 4\n")
    a("![](fig23_simd_width.png)\n")
    a("| depth | R | " + " | ".join(f"P={p}" for p in WIDTHS) + " |")
    a("|---:|---|" + "---:|" * len(WIDTHS))
    for d in KEY_DEPTHS:
        for r in ("P", "B"):
            a(f"| {d} | {r} | " + " | ".join(
                f"{K[str(d)][f'reexp P={p} B=4P R={r}']['mean']:.3f}" for p in WIDTHS) + " |")
    k100 = K["100"]
    a(f"\nPaper, depth 100: widths 80 -> 160 give 0.47 -> 0.36. Ours: "
      f"{k100['reexp P=80 B=4P R=P']['mean']:.3f} -> {k100['reexp P=160 B=4P R=P']['mean']:.3f}"
      f" with R = P, {k100['reexp P=80 B=4P R=B']['mean']:.3f} -> "
      f"{k100['reexp P=160 B=4P R=B']['mean']:.3f} with R = B.\n")

    a("## Closing note: our numbers next to the paper's\n")
    a(closing_note(res))
    return "\n".join(L) + "\n"


def _distance(res: dict[str, Any], label: str, metric: str) -> float:
    from revec.treegen.experiments import KEY_DEPTHS

    return sum(abs(res["depths"][str(d)][label][metric]["mean"] - PAPER_REEXP_B64[d])
               for d in KEY_DEPTHS) / len(KEY_DEPTHS)


def readings(res: dict[str, Any]) -> list[tuple[float, str]]:
    """Mean absolute distance to the paper's 76/66/65/61% of every reading."""
    out = []
    for label in ("reexp R=P", "reexp R=3B/4", "reexp R=B/2", "reexp R=B", "reexp R=P split",
                  "reexp R=B split"):
        for metric in ("utilization", "occupancy", "wide_share"):
            out.append((_distance(res, label, metric), f"{label}, {metric}"))
    return sorted(out)


def closest_reading(res: dict[str, Any]) -> str:
    r = readings(res)
    lines = ["Mean absolute distance to the paper's re-expansion numbers "
             "(depths 18/28/52/100), closest first:\n",
             "| reading | distance |", "|---|---:|"]
    lines += [f"| {name} | {dist:.3f} |" for dist, name in r[:8]]
    return "\n".join(lines) + "\n"


def closing_note(res: dict[str, Any]) -> str:
    from revec.treegen.experiments import KEY_DEPTHS

    D = res["depths"]
    K = res["key_depths"]
    best = readings(res)[0]
    ours_p = " / ".join(f"{D[str(d)]['reexp R=P']['utilization']['mean']:.2f}"
                        for d in KEY_DEPTHS)
    ours_b = " / ".join(f"{D[str(d)]['reexp R=B']['utilization']['mean']:.2f}"
                        for d in KEY_DEPTHS)
    ours_b2 = " / ".join(f"{D[str(d)]['reexp R=B/2']['utilization']['mean']:.2f}"
                         for d in KEY_DEPTHS)
    need = " / ".join(_fmt_b(block_size_needed(K[str(d)],
                                               D[str(d)]["reexp R=P"]["utilization"]["mean"]))
                      for d in KEY_DEPTHS)
    need_b = " / ".join(_fmt_b(block_size_needed(K[str(d)],
                                                 D[str(d)]["reexp R=B"]["utilization"]["mean"]))
                        for d in KEY_DEPTHS)
    k100 = K["100"]
    depths = sorted(int(d) for d in D)
    lo_p = min(D[str(d)]["reexp R=P"]["utilization"]["mean"] for d in depths)
    lo_b = min(D[str(d)]["reexp R=B"]["utilization"]["mean"] for d in depths)
    return "\n".join([
        "| claim (paper, Sec. 8) | paper | ours, R = P (Sec. 7.2 wording) | ours, R = B |",
        "|---|---|---|---|",
        f"| re-expansion at B = 64, depths 18/28/52/100 | 0.76 / 0.66 / 0.65 / 0.61 | "
        f"{ours_p} | {ours_b} (R = B/2: {ours_b2}) |",
        f"| B needed without re-expansion to match it | >400 / 1,750 / 1,800 / 2,000 | "
        f"{need} | {need_b} |",
        f"| depth 100, widths 80 -> 160 (B/P = 4) | 0.47 -> 0.36 | "
        f"{k100['reexp P=80 B=4P R=P']['mean']:.2f} -> "
        f"{k100['reexp P=160 B=4P R=P']['mean']:.2f} | "
        f"{k100['reexp P=80 B=4P R=B']['mean']:.2f} -> "
        f"{k100['reexp P=160 B=4P R=B']['mean']:.2f} |",
        f"| re-expansion above 50% for depths 14-150 | yes | min {lo_p:.2f} | "
        f"min {lo_b:.2f} |",
        "",
        f"Closest reading to the paper's re-expansion numbers: **{best[1]}** (mean "
        f"absolute difference {best[0]:.3f}). See the discussion in docs/treegen.md "
        "(section 'Differences from the paper').",
        "",
    ])


def build(out: Path, trials: int, scheduler: str | None = None, progress: bool = True
          ) -> list[Path]:
    from revec.treegen.experiments import run_all

    res = run_all(trials, scheduler=scheduler, progress=progress)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / RESULTS, json.dumps(res, indent=1) + "\n")
    return [out / RESULTS, *render(res, out)]


def render_stored(out: Path) -> list[Path]:
    res = json.loads((out / RESULTS).read_text())
    return render(res, out)

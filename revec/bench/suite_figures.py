"""The figures of ``revec bench`` (the paper's Figs. 9, 10, 12, 15 and 16), drawn from the
stored benchmark records only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from revec.bench.records import baseline_seconds, best, revec_records, strategy_best

FIGURES = {
    "fig09_tasks_per_level.png": "tasks and leaves per level",
    "fig10_utilization.png": "SIMD utilization (P = 16) vs block size",
    "fig12_speedup.png": "speedup over plain recursive C vs block size",
    "fig15_reexpansions.png": "re-expansions per level (reexp, C back end)",
    "fig16_compaction.png": "C reexp with table compaction vs the scalar split",
}

STYLE = {("c", "blocked"): ("tab:blue", "s--"), ("c", "reexp"): ("tab:blue", "o-"),
         ("numba", "blocked"): ("tab:orange", "s--"), ("numba", "reexp"): ("tab:orange", "o-")}


def _grid(n: int) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(4, max(1, n))
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.9 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes.flat


def _save(fig: Any, path: Path, title: str) -> Path:
    import matplotlib.pyplot as plt

    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)
    return path


def _curve(rec: dict[str, Any], backend: str, strategy: str, value: Callable[
        [dict[str, Any]], float | None], compaction: str | None = None
           ) -> tuple[list[int], list[float]]:
    pts = []
    for r in revec_records(rec, backend, strategy, compaction):
        v = value(r)
        if r.get("block_size") and v is not None:
            pts.append((r["block_size"], v))
    pts.sort()
    return [p[0] for p in pts], [p[1] for p in pts]


def fig_levels(recs: list[dict[str, Any]], path: Path) -> Path:
    fig, axes = _grid(len(recs))
    for ax, rec in zip(axes, recs):
        tree = rec.get("tree") or {}
        t, lv = tree.get("tasks_per_level", []), tree.get("leaves_per_level", [])
        ax.plot(range(len(t)), t, "-", label="tasks")
        ax.plot(range(len(lv)), lv, "--", label="leaves")
        ax.set_yscale("log")
        ax.set_title(rec["name"], fontsize=9)
        ax.set_xlabel("level", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7)
    return _save(fig, path, "Fig. 9: tasks and leaves per level")


def fig_utilization(recs: list[dict[str, Any]], path: Path) -> Path:
    fig, axes = _grid(len(recs))

    def util(r: dict[str, Any]) -> float | None:
        return None if not r.get("stats") else r["stats"]["utilization"]

    for ax, rec in zip(axes, recs):
        for strategy in ("blocked", "reexp"):
            x, y = _curve(rec, "c", strategy, util)
            if not x:
                x, y = _curve(rec, "numba", strategy, util)
            ax.plot(x, y, STYLE[("c", strategy)][1], ms=3, label=strategy)
        bfs = strategy_best(rec, "c", "bfs") or strategy_best(rec, "numba", "bfs")
        if bfs is not None and bfs.get("stats"):
            ax.axhline(bfs["stats"]["utilization"], color="gray", lw=0.8, ls=":", label="bfs")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.02)
        ax.set_title(rec["name"], fontsize=9)
        ax.set_xlabel("block size B", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7)
    return _save(fig, path, "Fig. 10: SIMD utilization (P = 16) vs block size")


def fig_speedup(recs: list[dict[str, Any]], path: Path) -> Path:
    fig, axes = _grid(len(recs))
    for ax, rec in zip(axes, recs):
        c = baseline_seconds(rec, "c-recursive")

        def sp(r: dict[str, Any], c: float | None = c) -> float | None:
            return None if c is None or r.get("seconds") is None else c / r["seconds"]

        for (backend, strategy), (colour, fmt) in STYLE.items():
            x, y = _curve(rec, backend, strategy, sp)
            if x:
                ax.plot(x, y, fmt, color=colour, ms=3, label=f"{backend} {strategy}")
        for backend, colour in (("c", "tab:blue"), ("numba", "tab:orange")):
            bfs = strategy_best(rec, backend, "bfs")
            if bfs is not None and sp(bfs) is not None:
                ax.axhline(sp(bfs), color=colour, lw=0.8, ls=":")
        j = baseline_seconds(rec, "njit")
        if c is not None and j is not None:
            ax.axhline(c / j, color="tab:green", lw=0.8, ls="-.", label="@njit")
        ax.axhline(1.0, color="black", lw=0.6)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(rec["name"], fontsize=9)
        ax.set_xlabel("block size B", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=6)
    return _save(fig, path, "Fig. 12: speedup over plain recursive C vs block size "
                            "(dotted: bfs)")


def fig_reexp(recs: list[dict[str, Any]], path: Path) -> Path:
    fig, axes = _grid(len(recs))
    for ax, rec in zip(axes, recs):
        per = rec.get("reexp_per_level") or {}
        sizes = sorted(int(b) for b in per)
        top = best(revec_records(rec, "c", "reexp"))
        show = sorted({s for s in (sizes[:1] + sizes[-1:]) if s}
                      | ({top["block_size"]} if top and str(top["block_size"]) in per else set()))
        for b in show:
            y = per[str(b)]["reexpansions_per_level"]
            label = f"B = {b}" + (" (best)" if top and b == top["block_size"] else "")
            dense = len(y) > 200                  # deep trees (UTS): points only
            ax.plot(range(len(y)), [v if v > 0 else float("nan") for v in y],
                    "." if dense else ".-", ms=2, lw=0.8, label=label)
        ax.set_yscale("log")
        ax.set_title(rec["name"], fontsize=9)
        ax.set_xlabel("level", fontsize=8)
        ax.tick_params(labelsize=7)
        if show:
            ax.legend(fontsize=6)
    return _save(fig, path, "Fig. 15: re-expansions per level (reexp, R = B)")


def fig_compaction(recs: list[dict[str, Any]], path: Path) -> Path:
    fig, axes = _grid(len(recs))
    for ax, rec in zip(axes, recs):
        c = baseline_seconds(rec, "c-recursive")

        def sp(r: dict[str, Any], c: float | None = c) -> float | None:
            return None if c is None or r.get("seconds") is None else c / r["seconds"]

        for comp, fmt in (("table", "o-"), ("scalar", "x--")):
            x, y = _curve(rec, "c", "reexp", sp, comp)
            if x:
                ax.plot(x, y, fmt, ms=3, label=f"{comp} split")
        ax.axhline(1.0, color="black", lw=0.6)
        ax.set_xscale("log", base=2)
        ax.set_title(rec["name"], fontsize=9)
        ax.set_xlabel("block size B", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7)
    return _save(fig, path, "Fig. 16: C reexp speedup with table compaction vs the "
                            "scalar split")


def draw_all(recs: list[dict[str, Any]], out: Path) -> list[Path]:
    makers = (fig_levels, fig_utilization, fig_speedup, fig_reexp, fig_compaction)
    return [make(recs, out / name) for make, name in zip(makers, FIGURES)]

"""The simulations behind the paper's Figs. 18-23 (Sec. 8), as Dask sweeps.

All experiments use uniform trees of 10,001 nodes (the paper's 10,000: full binary
trees have an odd node count) and, unless varied, P = 16, B = 64, R = P (Sec. 7.2).
Every setting of one depth runs on the same trees (paired comparison).  Results are
plain JSON-able dicts, stored in ``reports/treegen/results.json``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from revec.treegen.simulator import Setting
from revec.treegen.sweep import Point, run_sweep

NODES = 10001
P = 16
B = 64
DEPTHS_FIG19 = (14, 16, 18, 20, 24, 28, 36, 44, 52, 64, 76, 88, 100, 125, 150)
KEY_DEPTHS = (18, 28, 52, 100)
BLOCKED_SIZES = (64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144)
B_OVER_P = (1, 2, 4, 8, 16, 32)
WIDTHS = tuple(range(16, 161, 16))
# re-expansion thresholds at B = 64 for the R analysis (key depths); 16, 32, 48 and 64
# are the labelled settings "reexp R=P", "R=B/2", "R=3B/4", "R=B", 0 is "blocked"
R_SWEEP = (0, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 96, 128)
R_LABELS = {0: "blocked", P: "reexp R=P", B // 2: "reexp R=B/2", 3 * B // 4: "reexp R=3B/4",
            B: "reexp R=B"}
# block sizes at which the share of trees whose widest level reaches them is recorded
WIDEST_AT_LEAST = (64, 128, 256, 320, 400, 512, 1024, 1750, 2000)


@dataclass(frozen=True)
class Labelled:
    label: str
    setting: Setting


def depth_settings() -> list[Labelled]:
    """Fig. 19 / 20 and the R analysis: one set per depth."""
    return [
        Labelled("bfs", Setting("bfs", B, P, P)),
        Labelled("blocked", Setting("blocked", B, 0, P)),
        Labelled("reexp R=P", Setting("reexp", B, P, P)),
        Labelled("reexp R=3B/4", Setting("reexp", B, 3 * B // 4, P)),
        Labelled("reexp R=B/2", Setting("reexp", B, B // 2, P)),
        Labelled("reexp R=B", Setting("reexp", B, B, P)),
        Labelled("blocked split", Setting("blocked", B, 0, P, "split")),
        Labelled("reexp R=P split", Setting("reexp", B, P, P, "split")),
        Labelled("reexp R=B split", Setting("reexp", B, B, P, "split")),
    ]


def r_label(r: int) -> str:
    return R_LABELS.get(r, f"reexp R={r}")


def r_sweep_settings() -> list[Labelled]:
    """The thresholds of R_SWEEP not among :func:`depth_settings` (key depths only)."""
    return [Labelled(r_label(r), Setting("reexp", B, r, P)) for r in R_SWEEP
            if r not in R_LABELS]


def key_depth_settings() -> list[Labelled]:
    """Figs. 21-23 at the key depths."""
    out = [Labelled(f"blocked B={b}", Setting("blocked", b, 0, P)) for b in BLOCKED_SIZES]
    for k in B_OVER_P:
        out.append(Labelled(f"reexp B/P={k} R=P", Setting("reexp", k * P, P, P)))
        out.append(Labelled(f"reexp B/P={k} R=B", Setting("reexp", k * P, k * P, P)))
    for w in WIDTHS:
        out.append(Labelled(f"reexp P={w} B=4P R=P", Setting("reexp", 4 * w, w, w)))
        out.append(Labelled(f"reexp P={w} B=4P R=B", Setting("reexp", 4 * w, 4 * w, w)))
        out.append(Labelled(f"blocked P={w} B=4P", Setting("blocked", 4 * w, 0, w)))
    return out


def _summ(u: np.ndarray) -> dict[str, float]:
    return {"mean": float(u.mean()), "std": float(u.std(ddof=1)) if len(u) > 1 else 0.0,
            "sem": float(u.std(ddof=1) / np.sqrt(len(u))) if len(u) > 1 else 0.0}


def run_all(trials: int, seed: int = 2019, scheduler: str | None = None,
            progress: bool = True) -> dict[str, Any]:
    """Every experiment; ``trials`` is the largest trial count (Fig. 18's); the
    depth sweeps use ``max(200, trials // 20)`` trials per depth.  At the key depths the
    depth points also run the thresholds of :data:`R_SWEEP` (same trees as Figs. 19-20);
    Figs. 21-23 use other trees (seeds ``seed + 1000 + depth``)."""
    t_depth = max(200, trials // 20)
    dist_trials = (max(10, trials // 100), max(10, trials // 10), trials)
    ds = depth_settings()
    ks = key_depth_settings()
    dist_settings = (Setting("bfs", B, P, P), Setting("blocked", B, 0, P),
                     Setting("reexp", B, P, P), Setting("reexp", B, B, P))
    points: list[Point] = []
    rs = r_sweep_settings()

    def depth_labels(d: int) -> list[Labelled]:
        return ds + rs if d in KEY_DEPTHS else ds

    for d in DEPTHS_FIG19:
        points.append(Point(NODES, d, tuple(x.setting for x in depth_labels(d)), t_depth,
                            seed + d))
    for d in KEY_DEPTHS:
        points.append(Point(NODES, d, tuple(x.setting for x in ks), t_depth, seed + 1000 + d))
    for i, t in enumerate(dist_trials):
        points.append(Point(NODES, 20, dist_settings, t, seed + 5000 + i))
    t0 = time.perf_counter()
    results = run_sweep(points, chunk=256, scheduler=scheduler, progress=progress)
    seconds = time.perf_counter() - t0
    out: dict[str, Any] = {"nodes": NODES, "simd_width": P, "block_size": B,
                           "trials_per_depth": t_depth, "seconds": seconds, "seed": seed,
                           "depths": {}, "key_depths": {}, "distribution": []}
    k = 0
    for d in DEPTHS_FIG19:
        r = results[k]
        k += 1
        out["depths"][str(d)] = {
            x.label: {"utilization": _summ(r.utilization[:, i]),
                      "occupancy": _summ(r.occupancy[:, i]),
                      "wide_share": _summ(r.wide_share[:, i])}
            for i, x in enumerate(depth_labels(d))}
        widest = r.max_block[:, 0]  # setting 0 is bfs: its largest block is the widest level
        out["depths"][str(d)]["widest level"] = {
            "mean": float(widest.mean()), "max": int(widest.max()),
            "p50": float(np.percentile(widest, 50)), "p90": float(np.percentile(widest, 90)),
            "p99": float(np.percentile(widest, 99)),
            "share_at_least": {str(b): float((widest >= b).mean()) for b in WIDEST_AT_LEAST}}
    out["r_sweep"] = {str(d): {str(r): out["depths"][str(d)][r_label(r)] for r in R_SWEEP}
                      for d in KEY_DEPTHS if d in DEPTHS_FIG19}
    for d in KEY_DEPTHS:
        r = results[k]
        k += 1
        out["key_depths"][str(d)] = {x.label: _summ(r.utilization[:, i])
                                     for i, x in enumerate(ks)}
    for t in dist_trials:
        r = results[k]
        k += 1
        u = r.utilization[:, 2]
        hist, edges = np.histogram(u, bins=60, range=(min(0.3, float(u.min())),
                                                      max(0.6, float(u.max()))))
        out["distribution"].append({
            "trials": t, "height": 20, "strategy": "reexp R=P",
            "summary": _summ(u), "summary_blocked": _summ(r.utilization[:, 1]),
            "summary_reexp_R_B": _summ(r.utilization[:, 3]),
            "min": float(u.min()), "max": float(u.max()),
            "hist": hist.tolist(), "edges": edges.tolist()})
    return out

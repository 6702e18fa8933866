"""Parameter sweeps of the simulator on Dask.

A sweep is a list of points (n, h, settings, trials, seed).  Each point's trials are cut
into ranges of ``chunk`` trials; one Dask task runs one range in a numba kernel that
releases the GIL (:func:`revec.treegen.simulator.run_range`) and returns per-trial
utilization, lane occupancy and wide-block share for every setting.  By default a
local in-process cluster (one worker, a thread per core) runs the tasks; ``scheduler``
connects to an existing cluster instead.  Results depend only on each point's seed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from revec.errors import RevecError
from revec.treegen.schedules import ISSUED, MAXBLOCK, VEC, WIDE
from revec.treegen.simulator import (
    Setting,
    check_setting,
    default_workers,
    run_range,
    settings_array,
)


@dataclass(frozen=True)
class Point:
    nodes: int
    height: int
    settings: tuple[Setting, ...]
    trials: int
    seed: int = 0


@dataclass
class PointResult:
    point: Point
    utilization: np.ndarray  # (trials, settings)
    occupancy: np.ndarray
    wide_share: np.ndarray
    max_block: np.ndarray  # largest executed block per trial and setting
    extra: dict[str, Any] = field(default_factory=dict)

    def mean(self, k: int) -> float:
        return float(self.utilization[:, k].mean())

    def std(self, k: int) -> float:
        u = self.utilization[:, k]
        return float(u.std(ddof=1)) if len(u) > 1 else 0.0


def _range_task(n: int, h: int, seed: int, first: int, count: int,
                settings: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    from revec.treegen.sampler import tables_for

    raw = run_range(tables_for(n, h), n, h, seed, first, count, settings)
    return (raw[:, :, VEC] / n, n / raw[:, :, ISSUED], raw[:, :, WIDE] / n,
            raw[:, :, MAXBLOCK].copy())


@contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None
                ) -> Iterator[Any]:
    """A ``distributed.Client``: to ``scheduler`` if given, else a local in-process
    cluster with one thread per core (the kernels release the GIL)."""
    import logging

    from distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except OSError as err:
            raise RevecError(f"cannot reach the Dask scheduler at {scheduler}: {err}"
                             ) from None
        try:
            yield client
        finally:
            client.close()
        return
    nthreads = workers or default_workers()
    with LocalCluster(n_workers=1, threads_per_worker=nthreads, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        yield client


def run_sweep(points: Sequence[Point], chunk: int = 1024, scheduler: str | None = None,
              workers: int | None = None, progress: bool = True) -> list[PointResult]:
    """Run every point on Dask; results in the order of ``points``."""
    from distributed import as_completed

    for p in points:
        for s in p.settings:
            check_setting(s)
        if p.trials < 1:
            raise RevecError(f"trials must be at least 1, got {p.trials}")
    # validate (n, h) and build the tables once here (shared by an in-process cluster)
    from revec.treegen.sampler import tables_for

    for n, h in sorted({(p.nodes, p.height) for p in points}):
        tables_for(n, h)
    out_u = [np.zeros((p.trials, len(p.settings))) for p in points]
    out_o = [np.zeros((p.trials, len(p.settings))) for p in points]
    out_w = [np.zeros((p.trials, len(p.settings))) for p in points]
    out_m = [np.zeros((p.trials, len(p.settings)), np.int64) for p in points]
    with dask_client(scheduler, workers) as client:
        futures = {}
        for i, p in enumerate(points):
            arr = settings_array(p.settings)
            for first in range(0, p.trials, chunk):
                cnt = min(chunk, p.trials - first)
                f = client.submit(_range_task, p.nodes, p.height, p.seed, first, cnt, arr,
                                  pure=False)
                futures[f] = (i, first, cnt)
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=sum(p.trials for p in points), unit="trial", leave=False)
        for f in as_completed(list(futures)):
            i, first, cnt = futures.pop(f)
            u, o, w, mb = f.result()
            out_u[i][first:first + cnt] = u
            out_o[i][first:first + cnt] = o
            out_w[i][first:first + cnt] = w
            out_m[i][first:first + cnt] = mb
            if bar is not None:
                bar.update(cnt)
        if bar is not None:
            bar.close()
    return [PointResult(p, out_u[i], out_o[i], out_w[i], out_m[i])
            for i, p in enumerate(points)]


SWEEP_KEYS = ("nodes", "height", "simd-width", "block-size", "reexp-threshold")


def parse_sweep(specs: Sequence[str]) -> dict[str, list[int]]:
    """``["height=14,20,28", "block-size=64:512:64"]`` -> lists of values
    (a:b:c is the inclusive range a, a + c, ... <= b)."""
    out: dict[str, list[int]] = {}
    for spec in specs:
        key, sep, values = spec.partition("=")
        key = key.strip().replace("_", "-")
        if not sep or key not in SWEEP_KEYS:
            raise RevecError(f"bad --sweep {spec!r}: expected KEY=V1,V2,... or KEY=A:B:STEP "
                             f"with KEY one of {', '.join(SWEEP_KEYS)}")
        vals: list[int] = []
        try:
            for part in values.split(","):
                if ":" in part:
                    a, b, c = (int(x) for x in part.split(":"))
                    if c <= 0:
                        raise ValueError
                    vals.extend(range(a, b + 1, c))
                else:
                    vals.append(int(part))
        except ValueError:
            raise RevecError(f"bad --sweep values in {spec!r}") from None
        out[key] = vals
    return out


def grid_points(base: dict[str, int], sweep: dict[str, list[int]], strategies: Sequence[str],
                trials: int, seed: int, reexp_default_is_p: bool = True,
                switch: str = "whole") -> list[Point]:
    """The cartesian product of the swept values over the base parameters."""
    keys = list(sweep)
    points = []
    for combo in itertools.product(*(sweep[k] for k in keys)):
        v = dict(base)
        v.update(zip(keys, combo))
        r = v.get("reexp-threshold")
        if r is None:
            r = v["simd-width"] if reexp_default_is_p else v["block-size"]
        settings = tuple(Setting(s, v["block-size"], r, v["simd-width"], switch)
                         for s in strategies)
        points.append(Point(v["nodes"], v["height"], settings, trials, seed))
    return points

"""Sweeps on a local Dask cluster give the simulator's own per-trial results."""

from __future__ import annotations

import numpy as np
import pytest

from revec.cli import main
from revec.treegen.simulator import simulate
from revec.treegen.sweep import grid_points, parse_sweep, run_sweep


def test_sweep_equals_simulate() -> None:
    sweep = parse_sweep(["height=9,12", "block-size=8:16:8"])
    assert sweep == {"height": [9, 12], "block-size": [8, 16]}
    base = {"nodes": 101, "height": 10, "simd-width": 4, "block-size": 64,
            "reexp-threshold": None}
    points = grid_points(base, sweep, ["blocked", "reexp"], trials=700, seed=8)
    assert len(points) == 4
    results = run_sweep(points, chunk=256, progress=False)
    for r in results:
        p = r.point
        s0 = p.settings[0]
        ref = simulate(p.nodes, p.height, list(p.settings), trials=700, seed=8)
        assert s0.reexp_threshold == s0.simd_width  # R = P by default (Sec. 7.2)
        for k in range(len(p.settings)):
            assert np.array_equal(r.utilization[:, k], ref.utilization(k))


def test_cli_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--nodes", "51", "--height", "8", "--trials", "200",
                 "--sweep", "block-size=8,16", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.count("n=51 h=8") == 2 and "B=8" in out and "B=16" in out

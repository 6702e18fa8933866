"""revec report: the treegen target renders all six figures and the tables (on small
trees here; the real report uses 10,001 nodes), and the no-target form needs stored
results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from revec.cli import main
from revec.cli.report_cmd import TARGETS
from revec.treegen import experiments


def test_targets_are_a_dict_with_treegen() -> None:
    assert "treegen" in TARGETS


def test_no_stored_results_is_an_error(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--reports-dir", str(tmp_path)]) == 2
    assert "no stored results" in capsys.readouterr().err
    assert main(["report", "nosuch", "--reports-dir", str(tmp_path)]) == 2


def test_treegen_report_small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(experiments, "NODES", 201)
    monkeypatch.setattr(experiments, "DEPTHS_FIG19", (9, 18, 28, 52, 100))
    assert main(["report", "treegen", "--trials", "40", "--reports-dir", str(tmp_path),
                 "--no-progress"]) == 0
    out = tmp_path / "treegen"
    names = sorted(p.name for p in out.iterdir())
    for fig in ("fig18_distribution", "fig19_depth", "fig20_reexp_vs_blocked",
                "fig20_threshold", "fig21_block_size_needed", "fig22_block_over_p",
                "fig23_simd_width"):
        assert f"{fig}.png" in names
        assert (out / f"{fig}.png").stat().st_size > 5000
    text = (out / "README.md").read_text()
    for needle in ("0.76 / 0.66 / 0.65 / 0.61", ">400 / 1,750 / 1,800 / 2,000",
                   "0.47 -> 0.36", "Closest reading", "Re-expansion against R",
                   "Which reading comes closest"):
        assert needle in text
    res = json.loads((out / "results.json").read_text())
    assert res["nodes"] == 201 and res["distribution"][-1]["trials"] == 40
    # utilization against R at the key depths: every R of the sweep, three definitions,
    # the labelled settings (R = P, B) taken from the same trees
    for d in ("18", "100"):
        sweep = res["r_sweep"][d]
        assert sorted(map(int, sweep)) == sorted(experiments.R_SWEEP)
        assert sweep["16"] == res["depths"][d]["reexp R=P"]
        assert sweep["0"] == res["depths"][d]["blocked"]
        assert set(sweep["40"]) == {"utilization", "occupancy", "wide_share"}
    # bfs never loses lanes on a level of >= P threads: its mean is the largest
    row = res["depths"]["9"]
    assert row["bfs"]["utilization"]["mean"] >= row["blocked"]["utilization"]["mean"]
    # the no-target form re-renders from the stored results
    (out / "README.md").unlink()
    capsys.readouterr()
    assert main(["report", "--reports-dir", str(tmp_path)]) == 0
    assert (out / "README.md").read_text() == text

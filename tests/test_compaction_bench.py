"""revec bench compaction: the command, its report and plot, and the registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from revec import bench
from revec.bench.compaction import parse_sizes
from revec.cli import main
from revec.errors import RevecError


def test_parse_sizes() -> None:
    assert parse_sizes(None) == [16384, 1048576]
    assert parse_sizes("16K, 1M,100") == [16384, 1048576, 100]
    for bad in ("x", "0", "16Q"):
        with pytest.raises(RevecError, match="--size"):
            parse_sizes(bad)


def test_bench_compaction_small(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "compaction", "--size", "16K,1000", "--repeats", "1",
                 "--reports-dir", str(tmp_path), "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    res = out["compaction"]
    cases = {(c["bits"], c["n"], c["density"]) for c in res["cases"]}
    assert {(8, 16384, 0.5), (32, 16384, 0.5), (8, 1000, 0.1), (32, 1000, 0.9)} <= cases
    main_case = next(c for c in res["cases"] if (c["bits"], c["n"], c["density"])
                     == (32, 16384, 0.5))
    for key in ("branchy", "scalar", "numpy", "numba", "c-avx2", "copy", "memcpy"):
        assert main_case["methods"][key]["median_s"] > 0
    assert res["acceptance"]["measured"] and res["acceptance"]["method"].startswith("c-")
    md = (tmp_path / "compaction.md").read_text()
    assert "target" in md and "32-bit lanes, n = 16K" in md and "plain copy" in md
    assert (tmp_path / "compaction.png").read_bytes()[:4] == b"\x89PNG"


def test_unknown_benchmark_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "nosuch"]) == 2
    assert "unknown benchmark 'nosuch'" in capsys.readouterr().err


def test_registry_accepts_new_runners(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bench.BenchOptions] = []

    def runner(options: bench.BenchOptions) -> dict[str, object]:
        seen.append(options)
        return {"size": options.size}

    monkeypatch.setattr(bench, "REGISTRY", dict(bench.REGISTRY))
    bench.register("toy", runner)
    assert main(["bench", "toy", "--size", "small", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"toy": {"size": "small"}}
    assert seen[0].size == "small"
    assert main(["bench", "--list"]) == 0
    from revec.bench.presets import BENCHMARKS

    # every benchmark: the suite's eight (marked), then the registered others
    assert capsys.readouterr().out.splitlines() == [f"{n}  (suite)" for n in BENCHMARKS] + [
        "compaction", "toy"]

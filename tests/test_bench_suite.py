"""``revec bench`` (the eight-benchmark suite) and ``revec report bench``: a reduced sweep
on quick presets writes the table, the figures and JSON records of the documented shape,
and the report is re-rendered from the stored records alone; the memory budget turns an
over-wide bfs run into a recorded stop."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from revec.bench.presets import Preset
from revec.bench.suite import OVER_BUDGET, run_benchmark
from revec.bench.suite_figures import FIGURES
from revec.bench.sweep import SweepPlan
from revec.cli import main

NAMES = ("fib", "nqueens")


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict], str]:
    reports = tmp_path_factory.mktemp("reports")
    capture = reports / "stdout.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["bench", *NAMES, "--size", "quick", "--block-sizes", "16,1024",
                     "--reports-dir", str(reports), "--json", "--no-progress"])
    assert code == 0
    capture.write_text(buf.getvalue())
    out = reports / "bench" / "quick"
    return out, json.loads(buf.getvalue()), (out / "README.md").read_text()


def test_json_shape_and_verification(suite_run: tuple[Path, list[dict], str]) -> None:
    _, recs, _ = suite_run
    assert [r["name"] for r in recs] == list(NAMES)
    for rec in recs:
        assert {"name", "size", "input", "reducers", "verified", "results"} <= set(rec)
        assert rec["size"] == "quick" and rec["verified"] is True
        assert rec["input"]["args"] and rec["input"]["repeats"] == 5
        assert rec["reducers"] == rec["expected"] or set(rec["expected"]) <= set(rec["reducers"])
        impls = {r["impl"] for r in rec["results"]}
        assert {"c-recursive", "njit", "cpython", "revec"} <= impls
        revec = [r for r in rec["results"] if r["impl"] == "revec"]
        seen = {(r["backend"], r["strategy"]) for r in revec}
        assert seen == {(b, s) for b in ("c", "numba") for s in ("bfs", "blocked", "reexp")}
        assert any(r.get("compaction") == "scalar" for r in revec)
        for r in rec["results"]:
            if r["status"] == "ok" and r["impl"] != "cpython":
                assert r["verified"] is True and r["runs"] >= 1 and r["seconds"] > 0
        # every curve's entry in Table 2 is a median of 5 runs
        for b in ("c", "numba"):
            for s in ("blocked", "reexp"):
                curve = [r for r in revec if (r["backend"], r["strategy"]) == (b, s)
                         and r.get("compaction") != "scalar"]
                assert sorted(r["block_size"] for r in curve) == [16, 1024]
                assert max(r["runs"] for r in curve) == 5
        assert rec["tree"]["tasks_per_level"] and rec["reexp_per_level"]


def test_report_files_and_rerender_from_stored(suite_run: tuple[Path, list[dict], str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out, _, readme = suite_run
    assert "## Table 2" in readme and "Peak live" in readme.replace("peak live", "Peak live")
    for name in NAMES:
        assert (out / "results" / f"{name}.json").is_file()
        assert f"| {name} |" in readme
    for fig in FIGURES:
        assert (out / fig).stat().st_size > 1000
        (out / fig).unlink()
    (out / "README.md").unlink()

    def no_runs(*a: object, **k: object) -> None:
        raise AssertionError("revec report bench must not run anything")

    import revec.bench.baselines
    import revec.bench.suite

    monkeypatch.setattr(revec.bench.suite, "run_loaded", no_runs)
    monkeypatch.setattr(revec.bench.baselines, "prepare", no_runs)
    assert main(["report", "bench", "--reports-dir", str(out.parents[1])]) == 0
    assert (out / "README.md").read_text() == readme
    for fig in FIGURES:
        assert (out / fig).is_file()


def test_no_report_prints_table_2_and_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--no-report`` measures and shows Table 2 of the run on standard output; no file
    is written anywhere (the working directory and the default reports folder)."""
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "fib", "--size", "quick", "--block-sizes", "16", "--backends", "c",
                 "--repeats", "1", "--no-report", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| benchmark | input | plain C (s) |" in out
    assert "| fib |" in out
    assert list(tmp_path.iterdir()) == []


def test_user_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "fib", "--size", "huge", "--reports-dir", str(tmp_path)]) == 2
    assert main(["bench", "nosuch", "--reports-dir", str(tmp_path)]) == 2
    assert main(["bench", "fib", "--block-sizes", "0", "--reports-dir", str(tmp_path)]) == 2
    assert main(["report", "bench", "--reports-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "revec bench" in err


def test_over_budget_bfs_is_recorded_not_fatal() -> None:
    # graphcol(16): its widest bfs level does not fit in 1 MiB; reexp at B = 256 does
    p = Preset("graphcol", "test", {"n": 16}, "first 16 vertices", ("colourings",))
    plan = SweepPlan(repeats=1, c_sizes=(256,), backends=("c",), strategies=("bfs", "reexp"),
                     compaction_figure=False, cpython_cap=0.0)
    rec = run_benchmark("graphcol", "test", plan, max_memory=1 << 20, progress=False, inputs=p)
    by = {r["strategy"]: r for r in rec["results"] if r["impl"] == "revec"}
    assert by["bfs"]["status"] == OVER_BUDGET and by["bfs"]["seconds"] is None
    assert by["reexp"]["status"] == "ok" and by["reexp"]["verified"] is True
    assert rec["verified"] is True
    cpython = [r for r in rec["results"] if r["impl"] == "cpython"][0]
    assert cpython["status"].startswith("skipped")

    from revec.bench.suite_report import render_text

    text = render_text([dict(rec, machine={})], [])
    assert "stopped (memory)" in text and OVER_BUDGET in text


class _Bar:
    def set_postfix_str(self, *a: object, **k: object) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass


def _fake_times(monkeypatch: pytest.MonkeyPatch, c_time: dict[int, float],
                nb_time: dict[int, float]) -> list[tuple[str, int]]:
    """Runs of the sweep take these seconds (by back end and B) and run nothing; the
    list returned records each (back end, B) run."""
    from revec.bench import suite

    ran: list[tuple[str, int]] = []

    def fake_once(self: suite._Bench, rec: suite.Record) -> bool:
        table = c_time if rec.backend == "c" else nb_time
        ran.append((rec.backend, rec.block_size or 0))
        rec.times.append(table[rec.block_size or 65536])
        rec.verified = True
        return True

    monkeypatch.setattr(suite._Bench, "_revec_once", fake_once)
    return ran


def test_sweep_scan_stop_skip_and_refine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep's rules on synthetic times (seconds by back end and B; nothing runs)."""
    from revec.bench import suite
    from revec.bench.presets import preset

    c_time = {65536: 0.5, 16384: 0.4, 4096: 0.43, 1024: 0.9, 256: 3.0, 64: 9.0, 16: 30.0}
    nb_time = {65536: 2.0, 16384: 1.5, 4096: 1.6, 1024: 2.5, 256: 6.0, 64: 12.0, 16: 60.0}
    ran = _fake_times(monkeypatch, c_time, nb_time)
    plan = SweepPlan(c_sizes=tuple(c_time), numba_sizes=tuple(nb_time))
    b = suite._Bench(preset("fib", "quick"), plan, 0, _Bar())
    c = {r.block_size: r for r in b.curve("c", "reexp", plan.c_sizes, "table")}
    # 3.0 s at 256 is over 1 s and 4x the best (0.4): the smaller sizes are not run
    assert len(c[256].times) == 1 and c[256].status == "ok"
    assert c[64].status.startswith("not run") and c[16].status.startswith("not run")
    # the two best scanned sizes within 1.1x of the best are refined to 5 runs
    assert len(c[16384].times) == 5 and len(c[4096].times) == 5
    assert len(c[65536].times) == 1 and suite.best_record(list(c.values())) is c[16384]
    # numba: sizes whose schedule was over 4x its best on C (or not run there) are skipped
    nb = {r.block_size: r for r in b.curve("numba", "reexp", plan.numba_sizes, None)}
    assert nb[256].status.startswith("not run") and nb[16].status.startswith("not run")
    assert ("numba", 256) not in ran and ("numba", 64) not in ran
    assert len(nb[16384].times) == 5


def test_sweep_coarse_scan_runs_the_best_sizes_neighbours(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba scans every second size; the C sizes next to its best scanned one (B/2, 2B)
    are run too, and one of them can be the curve's best.  A neighbour whose schedule was
    far slower on C is skipped like any other size."""
    from revec.bench import suite
    from revec.bench.presets import preset

    c_time = {2 ** k: 0.4 + 0.01 * abs(k - 13) for k in range(8, 17)}
    c_time[256] = 5.0                      # over 4x C's best: numba must not run it
    nb_time = {65536: 0.9, 32768: 0.55, 16384: 0.6, 8192: 0.8, 4096: 1.0, 1024: 1.2, 512: 1.3,
               256: 9.0}
    ran = _fake_times(monkeypatch, c_time, nb_time)
    plan = SweepPlan(c_sizes=tuple(sorted(c_time)), numba_sizes=(65536, 16384, 4096, 1024, 256))
    assert plan.max_neighbours("c") == 0 and plan.max_neighbours("numba") == 2
    assert plan.neighbours("numba", 16384) == (32768, 8192)
    assert plan.neighbours("numba", 256) == (512,)          # 128 is not a C size here
    b = suite._Bench(preset("fib", "quick"), plan, 0, _Bar())
    b.curve("c", "reexp", plan.c_sizes, "table")
    ran.clear()
    nb = b.curve("numba", "reexp", plan.numba_sizes, None)
    sizes = [r.block_size for r in nb]
    assert sizes == sorted(sizes, reverse=True) and 32768 in sizes and 8192 in sizes
    assert ("numba", 32768) in ran and ("numba", 8192) in ran and ("numba", 512) not in ran
    assert suite.best_record(nb) is next(r for r in nb if r.block_size == 32768)
    assert len(next(r for r in nb if r.block_size == 32768).times) == plan.repeats
    # progress: every planned step is ticked (two neighbours reserved per numba curve)
    with_neighbours = suite._Bench(preset("fib", "quick"), plan, 0, _Bar()).planned_runs()
    assert with_neighbours - suite._Bench(
        preset("fib", "quick"), replace(plan, c_sizes=plan.numba_sizes), 0,
        _Bar()).planned_runs() == 2 * 2 + 2 * (len(plan.c_sizes) - len(plan.numba_sizes))


def test_ablation_names_numba_target_isa(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ablation report names the ISA numba compiles for (its LLVM target features),
    not only the forced compaction variant: REVEC_NUMBA_VECTOR=avx2 on a target with
    avx512f is AVX-512 code (NUMBA_CPU_NAME alone keeps the host's features)."""
    from revec.bench import ablation
    from revec.runtime.compaction import numba_vector

    assert ablation.numba_target_isa(frozenset({"avx2", "avx512f", "avx512vl"})) == "AVX-512"
    assert ablation.numba_target_isa(frozenset({"avx2", "fma", "sse4.2"})) == "AVX2"
    assert ablation.numba_target_isa(frozenset({"sse4.2"})) == "SSE4.2"
    monkeypatch.setenv(numba_vector.ENV, "avx2")
    for feats, want in ((frozenset({"avx2", "ssse3", "avx512f", "avx512vl"}),
                         "AVX-512, compaction variant AVX2 (REVEC_NUMBA_VECTOR=avx2)"),
                        (frozenset({"avx2", "ssse3"}), "AVX2 (REVEC_NUMBA_VECTOR=avx2)")):
        monkeypatch.setattr(numba_vector, "target_features", lambda f=feats: f)
        assert ablation.isa()["numba"] == want


def test_each_benchmark_records_the_load_when_it_started(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    """The report says "load average when each benchmark started": each record takes
    its own, not the suite's first one."""
    from revec.bench import suite, suite_report

    loads = iter(["0.10 0.20 0.30", "1.50 0.90 0.40", "2.00 1.20 0.60", "3.00 2.00 1.00"])
    monkeypatch.setattr(suite_report, "loadavg", lambda: next(loads))
    monkeypatch.setattr(suite, "run_benchmark",
                        lambda name, *a, **k: {"name": name})
    recs = suite.run_suite(["fib", "uts"], "quick", SweepPlan(), tmp_path, 1 << 30,
                           progress=False, write=False)
    # the header's own load is the first value; then one per benchmark as it starts
    assert [r["machine"]["load_at_start"] for r in recs] == ["1.50 0.90 0.40",
                                                             "2.00 1.20 0.60"]


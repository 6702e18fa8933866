"""Plan technique switches as options (``--plan-off`` / ``--plan-on`` on ``revec run``,
``transform`` and ``bench``; ``plan_off=`` / ``plan_on=`` on ``Task.run`` and
``run_program``), each technique's state in ``revec transform --plan``, and
``revec bench --ablation``: the options reach the generated source, a technique that
does not apply is detected and not measured, every ablation run is verified, and the
stored rows render into ``ablation.md``."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from revec.backends.techniques import technique_states
from revec.bench import ablation
from revec.bench.ablation_report import render_text as ablation_text
from revec.bench.presets import Preset
from revec.bench.sweep import SweepPlan
from revec.cli import main
from revec.errors import RevecError
from revec.frontend import load_program
from revec.transforms import kernel_plan as kp

ROOT = Path(__file__).resolve().parent.parent
FIB = str(ROOT / "benchmarks" / "fib.py")
KNAPSACK = str(ROOT / "benchmarks" / "knapsack.py")
NQUEENS = str(ROOT / "benchmarks" / "nqueens.py")


@pytest.fixture(autouse=True)
def _no_env_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(kp.PLAN_OFF_ENV, raising=False)
    monkeypatch.delenv(kp.PLAN_ON_ENV, raising=False)


# ---------------------------------------------------------------- the switches
def test_plan_switches_override_the_environment_and_restore(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(kp.PLAN_ON_ENV, "leaf_inline")
    assert kp.plan_on() == {"leaf_inline"}
    with kp.plan_switches(on=""):
        assert kp.plan_on() == frozenset() and kp.plan_off() == frozenset()
        with kp.plan_switches(off=["leaf_inline"]):
            assert kp.plan_off() == {"leaf_inline"} and kp.plan_on() == frozenset()
        assert kp.plan_off() == frozenset()
    assert kp.plan_on() == {"leaf_inline"}  # the environment again


def test_plan_switches_errors() -> None:
    with pytest.raises(RevecError, match=r"--plan-off: unknown plan technique 'nope'"):
        with kp.plan_switches("leaf_inline,nope", None, ("--plan-off", "--plan-on")):
            pass
    with pytest.raises(RevecError, match="both name leaf_inline"):
        with kp.plan_switches("leaf_inline", ["leaf_inline"]):
            pass
    from revec.api import run_program

    with pytest.raises(RevecError, match="plan_on: unknown plan technique 'fast'"):
        run_program(FIB, "fib", (5,), backend="c", plan_on="fast")


def _transform(capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["transform", FIB, "--backend", "c", *extra]) == 0
    return capsys.readouterr().out


def test_cli_options_reach_the_generated_source(capsys: pytest.CaptureFixture[str]) -> None:
    off = _transform(capsys, "--plan-off", "leaf_inline")
    default = _transform(capsys)
    assert off != default
    assert _transform(capsys, "--plan-on", "leaf_inline") == default  # on by default (C, fib)
    # the option replaces the environment variable
    import os

    os.environ[kp.PLAN_OFF_ENV] = "leaf_inline"
    try:
        assert _transform(capsys) == off
        assert _transform(capsys, "--plan-off", "") == default
    finally:
        del os.environ[kp.PLAN_OFF_ENV]


def test_cli_option_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["transform", FIB, "--plan-off", "bogus"],
                 ["transform", FIB, "--plan-off", "leaf_inline", "--plan-on", "leaf_inline"],
                 ["run", FIB, "fib", "5", "--plan-on", "x"],
                 ["run", FIB, "fib", "5", "--plan-on", "leaf_inline", "--scheduler",
                  "tcp://127.0.0.1:1"],
                 ["bench", "fib", "--plan-off", "bogus", "--no-report"],
                 ["bench", "fib", "--ablation", "--workers", "1", "--no-report"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "revec: error:" in err and "Traceback" not in err
    assert main(["transform", FIB, "--plan-off", "bogus"]) == 2
    assert "expected a comma list of leaf_inline" in capsys.readouterr().err


def test_plan_shows_each_technique_state(capsys: pytest.CaptureFixture[str]) -> None:
    text = _transform(capsys, "--plan")
    assert "leaf_inline: on -- the c back end's default" in text
    assert "leaf_inline: off -- switched off" in _transform(capsys, "--plan", "--plan-off",
                                                           "leaf_inline")
    assert main(["transform", NQUEENS, "--backend", "c", "--plan"]) == 0
    text = capsys.readouterr().out
    assert "leaf_inline: n/a -- not applicable: the kernel is the same" in text
    assert "not applied:" in text.split("leaf_inline: n/a", 1)[1]
    # knapsack's base case reads an array: its leaves inlined per level only
    assert main(["transform", KNAPSACK, "--backend", "c", "--plan"]) == 0
    text = capsys.readouterr().out
    assert "leaf_inline: on -- the c back end's default" in text
    assert "leaf_level: on -- the c back end's default" in text
    assert main(["transform", KNAPSACK, "--backend", "c", "--plan", "--plan-off",
                 "leaf_level"]) == 0
    text = capsys.readouterr().out
    assert "leaf_level: off -- switched off" in text
    assert "leaf inlining: off by default for this program on the c back end: the base " \
        "case reads arrays" in text


def test_any_number_of_techniques_and_one_that_never_applies(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The states follow kernel_plan.TECHNIQUES as it is at the time: a technique no plan
    decision reads changes no source and is 'n/a'."""
    monkeypatch.setattr(kp, "TECHNIQUES", ("leaf_inline", "never_used"))
    program = load_program(FIB)
    states = {s.name: s for s in technique_states(program, "fib", "c")}
    assert states["leaf_inline"].state == "on" and states["never_used"].state == "n/a"
    with kp.plan_switches(off="leaf_inline"):
        assert technique_states(program, "fib", "c")[0].state == "off"


# ---------------------------------------------------------------- the ablation
class _Bar:
    def set_postfix_str(self, *a: object, **k: object) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass


def _tiny_ablation(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """fib(12): a one-size reexp sweep on the C back end, then the ablation (no
    baselines: the suite's own tests run those)."""
    from revec.bench.suite import _Bench

    monkeypatch.setattr(kp, "TECHNIQUES", ("leaf_inline", "never_used"))
    p = Preset("fib", "test", {"n": 12}, "fib(12)", ("count",))
    plan = SweepPlan(repeats=3, c_sizes=(64,), backends=("c",), strategies=("reexp",),
                     compaction_figure=False, cpython_cap=0.0, ablation=True)
    b = _Bench(p, plan, 1 << 26, _Bar())
    b.curve("c", "reexp", plan.c_sizes, "table")
    b.ablation()
    return b.record(0.0)


def test_ablation_runs_are_interleaved_and_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[tuple[str, ...]] = []
    real = ablation.run_loaded

    def logged(*a: Any, **k: Any) -> Any:
        order.append(tuple(k["plan_off"]))
        return real(*a, **k)

    monkeypatch.setattr(ablation, "run_loaded", logged)
    rec = _tiny_ablation(monkeypatch)
    # a warm-up of each configuration, then rounds of one run of each
    assert order == [(), ("leaf_inline",)] * 4
    ab = rec["ablation"]
    assert ab["isa"]["c"] in ("AVX-512", "AVX2", "SSE4.2", "no x86 vector extension")
    assert ab["repeats"] == 3 and ab["load_at_start"]
    rows = {r["technique"]: r for r in ab["rows"]}
    assert set(rows) == {None, "leaf_inline", "never_used"}
    assert rows["never_used"]["state"] == "n/a" and "times" not in rows["never_used"]
    for t in (None, "leaf_inline"):
        r = rows[t]
        assert r["block_size"] == 64 and r["status"] == "ok" and r["runs"] == 3
        assert r["verified"] is True and r["stats_same"] is True
    # leaf inlining is on by default for fib on C: the ablation switches it off
    assert rows["leaf_inline"]["state"] == "off" and rows["leaf_inline"]["in_force"] == "on"
    assert rows["leaf_inline"]["plan_off"] == ["leaf_inline"]
    # plain recursive C, once per round, for the as-is speedup
    assert len(rows[None]["plain_c_times"]) == 3 and rows[None]["plain_c_verified"] is True
    text = ablation_text([dict(rec, machine={"cpu": "test cpu"})])
    assert "| fib | 2^6 |" in text and "on → off:" in text and "n/a (same kernel)" in text
    assert "| leaf_inline | never_used | verified |" in text


def test_ablation_catches_different_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    """A switched run whose statistics differ from the as-is runs' is not verified."""
    real = ablation.run_loaded

    def skewed(*a: Any, **k: Any) -> Any:
        res = real(*a, **k)
        if "leaf_inline" in (k.get("plan_off") or ()):
            res.stats.leaves += 1  # a leaf counted twice
        return res

    monkeypatch.setattr(ablation, "run_loaded", skewed)
    rec = _tiny_ablation(monkeypatch)
    rows = {r["technique"]: r for r in rec["ablation"]["rows"]}
    assert rows["leaf_inline"]["stats_same"] is False and rows[None]["stats_same"] is True
    text = ablation_text([dict(rec, machine={})])
    assert "**NOT VERIFIED**" in text and "| **NO** |" in text


def _fake(name: str, c: float, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "size": "default", "machine": {"cpu": "X", "cores": 2},
            "results": [{"impl": "c-recursive", "seconds": c, "status": "ok"}],
            "plan_switches": {"off": [], "on": []},
            "ablation": {"isa": {"c": "AVX2", "numba": "AVX2"}, "repeats": 5,
                         "date": "2026-01-01 00:00 UTC", "load_at_start": "1.0 1.0 1.0",
                         "load_at_end": "1.1 1.0 1.0", "rows": rows}}


def _row(backend: str, t: str | None, seconds: float | None, **kw: Any) -> dict[str, Any]:
    return {"backend": backend, "technique": t, "block_size": 1024, "seconds": seconds,
            "verified": True, "stats_same": True, "status": "ok", **kw}


def test_ablation_table_from_records(tmp_path: Path) -> None:
    recs = [
        _fake("fib", 1.0, [_row("c", None, 0.5), _row("c", "a", 1.0, in_force="on",
                                                      state="off"),
                           _row("c", "b", None, state="n/a", status="not applicable")]),
        _fake("knapsack", 2.0, [_row("c", None, 1.0), _row("c", "a", 4.0, in_force="on",
                                                           state="off"),
                                _row("c", "b", 0.5, in_force="off", state="on")]),
    ]
    text = ablation_text(recs)
    assert "ISA of the kernels: C AVX2" in text and "load 1.0 1.0 1.0 → 1.1 1.0 1.0" in text
    assert "| benchmark | B | as is (s) | as is vs plain C | a | b | verified |" in text
    assert "| fib | 2^10 | 0.500 | 2.00x | on → off: 1.000 s, 2.00x | n/a (same kernel) | yes |" \
        in text
    assert "| knapsack | 2^10 | 1.000 | 2.00x | on → off: 4.000 s, 4.00x | " \
        "off → on: 0.500 s, 0.50x | yes |" in text
    # the geometric mean over the benchmarks where the technique applies
    assert "| geometric mean (where it applies) | | | | 2.83x (2) | 0.50x (1) | |" in text
    assert "## numba back end" not in text
    # stored records -> README link and ablation.md, as revec report bench renders them
    import json

    from revec.bench.records import store
    from revec.bench.suite_report import render_text as readme_text

    bad = copy.deepcopy(recs[1])
    bad["ablation"]["rows"][2]["verified"] = False
    assert "off → on: 0.500 s, 0.50x **NOT VERIFIED**" in ablation_text([bad])
    for r in recs:
        store(r, tmp_path)
    assert json.loads((tmp_path / "results" / "fib.json").read_text())["ablation"]
    assert "[ablation.md](ablation.md)" in readme_text(
        [dict(r, input={"repeats": 5, "description": ""}, verified=True) for r in recs], [])


def test_bench_ablation_cli_no_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``revec bench --ablation --no-report``: Table 2, then the ablation table, on
    standard output; nothing written."""
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "fib", "--size", "quick", "--block-sizes", "16", "--backends", "c",
                 "--repeats", "1", "--no-report", "--no-progress", "--ablation"]) == 0
    out = capsys.readouterr().out
    assert "| benchmark | input | plain C (s) |" in out
    table = out.split("## C back end (", 1)[1]
    assert "| fib | 2^4 |" in table and "on → off:" in table and "| yes |" in table
    assert list(tmp_path.iterdir()) == []

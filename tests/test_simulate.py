"""The utilization simulator: kernel = plain-Python reference tree by tree, simulated
means = exact expectations over all trees of small (n, h), worker independence,
deep trees without host recursion, CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from revec.cli import main
from revec.transforms.schedule import UNBOUNDED
from revec.treegen.reference import exact_mean_utilization, schedule_counts
from revec.treegen.sampler import sample_preorders
from revec.treegen.schedules import RESULT_COLS, interior_counts, run_schedule
from revec.treegen.simulator import Setting, named_settings, simulate

SMALL_SETTINGS = [
    Setting("bfs", 4, 2, 2), Setting("blocked", 4, 2, 2), Setting("reexp", 4, 3, 2),
    Setting("reexp", 6, 6, 4), Setting("blocked", 3, 0, 2, "split"),
    Setting("reexp", 5, 4, 2, "split"),
]


@pytest.mark.parametrize("n,h", [(31, 8), (63, 9), (101, 12)])
def test_kernel_equals_reference(n: int, h: int) -> None:
    trials = 150
    # R <= 1 takes the kernel's shortcut for one-thread blocked-mode blocks; P = 1 too
    settings = SMALL_SETTINGS + [Setting("blocked", 3, 0, 1), Setting("reexp", 4, 1, 1),
                                 Setting("reexp", 2, 1, 2, "split")]
    res = simulate(n, h, settings, trials=trials, seed=11, workers=1)
    trees = sample_preorders(n, h, trials, seed=11)
    for t, tree in enumerate(trees):
        for k, s in enumerate(settings):
            b, r, p, _ = s.row()
            vec, lanes, wide, sizes = schedule_counts(tree, b, r, p, s.switch)
            assert tuple(res.raw[t, k, :4]) == (vec, lanes, wide, len(sizes)), (t, s)
            assert res.max_block(k)[t] == max(sizes)


@pytest.mark.parametrize("n,h", [(15, 5), (21, 6)])
def test_mean_matches_exact_expectation(n: int, h: int) -> None:
    trials = 30000
    res = simulate(n, h, SMALL_SETTINGS, trials=trials, seed=2024)
    exact = [float(exact_mean_utilization(n, h, *s.row()[:3], switch=s.switch))
             for s in SMALL_SETTINGS]
    assert len(set(exact)) >= 4  # the settings really differ
    for k, s in enumerate(SMALL_SETTINGS):
        u = res.utilization(k)
        sem = u.std(ddof=1) / math.sqrt(trials)
        assert abs(u.mean() - exact[k]) < 5 * sem + 1e-12, (s, u.mean(), exact[k], sem)


def test_results_do_not_depend_on_workers() -> None:
    st = named_settings(["bfs", "blocked", "reexp"], 16, 64, None)
    a = simulate(2001, 16, st, trials=700, seed=3, workers=1)
    b = simulate(2001, 16, st, trials=700, seed=3, workers=2)
    c = simulate(2001, 16, st, trials=300, seed=3, workers=2)
    assert np.array_equal(a.raw, b.raw)
    assert np.array_equal(a.raw[:300], c.raw)
    d = simulate(2001, 16, st, trials=300, seed=4, workers=2)
    assert not np.array_equal(c.raw, d.raw)


def test_paper_ordering_at_depth_20() -> None:
    """Sec. 8 at P = 16, B = 64: bfs near 1, re-expansion well above no re-expansion."""
    st = named_settings(["bfs", "blocked", "reexp"], 16, 64, None)
    res = simulate(10001, 20, st, trials=400, seed=1)
    bfs, blocked, reexp = (res.utilization(k).mean() for k in range(3))
    assert bfs > 0.95 and reexp > blocked + 0.1


def test_deep_tree_runs_without_recursion() -> None:
    """A caterpillar 300,000 levels deep: every schedule runs (explicit block stack)."""
    depth = 300_000
    n = 2 * depth - 1
    first_child = np.full(n, -1, np.int32)
    level_start = np.zeros(depth + 1, np.int32)
    for d in range(depth - 1):  # node 2d - 1 (or 0) is the spine node of level d
        spine = 0 if d == 0 else 2 * d - 1
        first_child[spine] = 2 * d + 1
    for d in range(depth):
        level_start[d] = 0 if d == 0 else 2 * d - 1
    level_start[depth] = n
    work = [np.empty(n + 1, np.int64) for _ in range(3)]
    modes = np.empty(n + 1, np.int8)
    out = np.zeros(RESULT_COLS, np.int64)
    interior = np.empty(n, np.int64)
    interior_counts(first_child, n, interior)
    assert interior[0] == depth - 1 and interior[n - 1] == 0
    for b, r in ((UNBOUNDED, 0), (4, 0), (4, 4)):
        run_schedule(first_child, level_start, depth, n, b, r, 2, 0, interior, work[0],
                     work[1], work[2], modes, out)
        assert out[0] == n - 1  # blocks of 2 never reach B: bfs, 2 threads a level
        assert out[3] == depth
    # B = R = 2: blocked mode splits every 2-block into two 1-blocks, which re-expand
    run_schedule(first_child, level_start, depth, n, 2, 2, 2, 0, interior, work[0],
                 work[1], work[2], modes, out)
    assert out[0] == 2 * ((depth - 1 + 1) // 2)
    assert out[3] == 1 + (depth - 1) // 2 * 3 + (depth - 1) % 2
    # B = 2, R = 0: the level-1 block (2 threads) runs in blocked mode, then one-thread
    # blocks all the way down (counted from the interior counts)
    run_schedule(first_child, level_start, depth, n, 2, 0, 2, 0, interior, work[0],
                 work[1], work[2], modes, out)
    assert out[0] == 2 and out[1] == 2 * (n - 1) and out[2] == 2
    assert out[3] == n - 1


def test_cli_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--nodes", "101", "--height", "10", "--trials", "300",
                 "--seed", "5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["trials"] == 300
    assert set(doc["strategies"]) == {"bfs", "blocked", "reexp"}
    for v in doc["strategies"].values():
        assert 0 <= v["mean"] <= 1 and v["std"] >= 0
    ref = simulate(101, 10, named_settings(["reexp"], 16, 64, None), trials=300, seed=5)
    assert doc["strategies"]["reexp"]["mean"] == pytest.approx(ref.utilization(0).mean(),
                                                             rel=0, abs=1e-15)


@pytest.mark.parametrize("argv,words", [
    (["--nodes", "100", "--height", "10"], "odd number"),
    (["--nodes", "101", "--height", "5"], "at most 31 nodes"),
    (["--nodes", "101", "--height", "10", "--trials", "0"], "trials"),
    (["--nodes", "101", "--height", "10", "--simd-width", "0"], "SIMD width"),
    (["--nodes", "101", "--height", "10", "--sweep", "depth=3"], "--sweep"),
])
def test_cli_errors(argv: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize("n,h", [(23, 6), (25, 7)])
def test_mean_matches_exact_expectation_larger(n: int, h: int) -> None:
    settings = SMALL_SETTINGS + [Setting("reexp", 8, 4, 4), Setting("blocked", 8, 0, 4)]
    trials = 200000
    res = simulate(n, h, settings, trials=trials, seed=99)
    for k, s in enumerate(settings):
        exact = float(exact_mean_utilization(n, h, *s.row()[:3], switch=s.switch))
        u = res.utilization(k)
        sem = u.std(ddof=1) / math.sqrt(trials)
        assert abs(u.mean() - exact) < 5 * sem + 1e-12, (s, u.mean(), exact, sem)

"""Exact (n, h) counts: OEIS A073345, closed forms, an independent big-integer DP."""

from __future__ import annotations

import json
from functools import cache
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revec.cli import main
from revec.errors import RevecError
from revec.treegen.counts import check_size_height, count, log_tables

# OEIS A073345, rows n = 0..7 (n interior nodes), columns k = 0..n: binary trees with
# n internal nodes of height k (edges); e(2n + 1, k + 1) = T(n, k).
A073345 = [
    [1],
    [0, 1],
    [0, 0, 2],
    [0, 0, 1, 4],
    [0, 0, 0, 6, 8],
    [0, 0, 0, 6, 20, 16],
    [0, 0, 0, 4, 40, 56, 32],
    [0, 0, 0, 1, 68, 152, 144, 64],
]


@cache
def dp_at_most(m: int, h: int) -> int:
    """Independent plain-int recursion on interior nodes."""
    if h <= 0:
        return 0
    if m == 0:
        return 1
    return sum(dp_at_most(i, h - 1) * dp_at_most(m - 1 - i, h - 1) for i in range(m))


def test_oeis_a073345() -> None:
    for m, row in enumerate(A073345):
        for k, value in enumerate(row):
            assert count(2 * m + 1, k + 1).exact == value, (m, k)


def test_catalan_and_closed_forms() -> None:
    for m in (0, 1, 5, 40, 300):
        catalan = comb(2 * m, m) // (m + 1)
        assert count(2 * m + 1, m + 1).at_most == catalan
        assert count(2 * m + 1, m + 5).at_most == catalan
    for h in range(2, 40):
        assert count(2 * h - 1, h).exact == 2 ** (h - 2)  # one path, a side per level
    for h in range(1, 12):
        assert count(2 ** h - 1, h).exact == 1  # the complete tree
    assert count(1, 1).exact == 1


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(1, 14))
def test_against_dp(m: int, h: int) -> None:
    c = count(2 * m + 1, h)
    assert c.at_most == dp_at_most(m, h)
    assert c.exact == dp_at_most(m, h) - dp_at_most(m, h - 1)


def test_log_tables_match_exact() -> None:
    la, le = log_tables(60, 12)
    import math

    for m in range(61):
        for h in range(13):
            a = dp_at_most(m, h)
            e = a - dp_at_most(m, h - 1)
            assert (la[h, m] == -math.inf) if a == 0 else la[h, m] == pytest.approx(
                math.log(a), rel=1e-14, abs=1e-13)
            assert (le[h, m] == -math.inf) if e == 0 else le[h, m] == pytest.approx(
                math.log(e), rel=1e-14, abs=1e-13)


@pytest.mark.parametrize("n,h,words", [
    (20, 5, "odd number"), (7, 2, "at most 3 nodes"), (5, 4, "at least 7 nodes"),
    (0, 1, "at least 1"), (1, 0, "at least 1"),
])
def test_invalid_sizes(n: int, h: int, words: str) -> None:
    with pytest.raises(RevecError, match=words):
        check_size_height(n, h)


def test_cli_count_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["treegen", "count", "21", "6", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"nodes": 21, "height": 6, "at_most": "1860", "exact": "1744"}


def test_cli_count_big(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["treegen", "count", "601", "20", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert int(doc["at_most"]) == dp_big(300, 20)
    assert int(doc["exact"]) == dp_big(300, 20) - dp_big(300, 19)


def dp_big(m: int, h: int) -> int:
    """Row-by-row plain-int polynomial recursion (independent of flint)."""
    t = [1] + [0] * m
    if h <= 0:
        return 0
    for _ in range(2, h + 1):
        sq = [0] * (m + 1)
        nz = [i for i, v in enumerate(t) if v]
        for i in nz:
            for j in nz:
                if i + j + 1 > m:
                    break
                sq[i + j + 1] += t[i] * t[j]
        sq[0] = 1
        t = sq
    return t[m]


def test_cli_count_invalid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["treegen", "count", "10000", "20"]) == 2
    err = capsys.readouterr().err
    assert "revec: error:" in err and "odd" in err and "Traceback" not in err


def test_ball_log_tables_match_the_exact_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """The interval-arithmetic tables (large sizes) against the exact big-integer ones:
    the same zero entries, every logarithm within a few units in the last place; an
    entry that cannot be certified sends the whole table to the exact path."""
    import numpy as np

    from revec.treegen import counts

    def close(a: np.ndarray, b: np.ndarray) -> bool:
        fin = np.isfinite(b)
        return bool(np.array_equal(np.isinf(a), np.isinf(b)) and np.all(
            np.abs(a[fin] - b[fin]) <= 4 * np.spacing(np.abs(b[fin]) + 1.0)))

    balls = counts._interval_log_tables(700, 200)
    assert balls is not None
    exact = counts._exact_log_tables(700, 200)
    assert close(balls[0], exact[0]) and close(balls[1], exact[1])
    # the route: sizes from BALL_MIN_WORK take the balls, unless an entry cannot be
    # certified to LOG_TABLE_MIN_BITS
    calls: list[tuple[int, int]] = []
    real = counts._exact_log_tables
    monkeypatch.setattr(counts, "_exact_log_tables",
                        lambda m, h: calls.append((m, h)) or real(m, h))
    monkeypatch.setattr(counts, "BALL_MIN_WORK", 0)
    la, le = counts._compute_log_tables(200, 30)
    assert calls == [] and not la.flags.writeable
    small = real(200, 30)
    assert close(la, small[0]) and close(le, small[1])
    monkeypatch.setattr(counts, "LOG_TABLE_MIN_BITS", counts.LOG_TABLE_PREC + 1)
    la2, le2 = counts._compute_log_tables(200, 30)
    assert calls == [(200, 30)]
    assert np.array_equal(la2, small[0]) and np.array_equal(le2, small[1])

"""The uniform (n, h) sampler: chi-square uniformity over all trees of small (n, h),
exact heights, the table path equal to the scan path, large trees, CLI."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from revec.cli import main
from revec.errors import RevecError
from revec.treegen.reference import all_trees, children_table
from revec.treegen.rng import node_uniform, root_state
from revec.treegen.sampler import TreeBuffers, sample_preorders, sample_tree, tables_for
from revec.treegen.splits import (
    AT_MOST,
    GREEN,
    SMALL,
    _next_position,
    children_of,
    choose_split,
    choose_split_large,
    choose_split_scaled,
    choose_split_small,
    position_range,
    position_weights,
)


def chisquare(observed: np.ndarray, expected: np.ndarray):  # type: ignore[no-untyped-def]
    """scipy's chi-square test, imported on first use: scipy.stats takes about 2 s to
    import, which every pytest-xdist worker paid while collecting this module."""
    from scipy.stats import chisquare as scipy_chisquare

    return scipy_chisquare(observed, expected)


@pytest.fixture(scope="module", autouse=True)
def _largest_log_table_first() -> None:
    """Computes the module's largest log table (n = 10001, h = 150) before its tests ask
    for the smaller ones of n = 10001: a cached table at least as large serves them by
    slicing (revec.treegen.counts.log_tables), so a fresh checkout computes it once,
    not also the h = 100 one (about 10 s)."""
    from revec.treegen.counts import log_tables

    log_tables(5000, 150)


def height(preorder: str) -> int:
    kids = children_table(preorder)
    depth = [0] * len(preorder)
    depth[0] = 1
    for x, k in enumerate(kids):
        if k is not None:
            depth[k[0]] = depth[k[1]] = depth[x] + 1
    return max(depth)


@pytest.mark.parametrize("n,h,samples", [(9, 4, 6000), (11, 5, 10000), (15, 5, 34000),
                                         (15, 7, 40000), (21, 6, 120000)])
def test_uniform_chi_square(n: int, h: int, samples: int) -> None:
    trees = all_trees(n, h)
    counts = Counter(sample_preorders(n, h, samples, seed=n * 100 + h))
    assert set(counts) <= set(trees), "sampled a tree outside (n, h)"
    observed = np.array([counts[t] for t in trees])
    expected = np.full(len(trees), samples / len(trees))
    assert expected.min() >= 5
    p = chisquare(observed, expected).pvalue
    assert p > 1e-4, (n, h, p)


def test_chi_square_detects_a_biased_sampler() -> None:
    """The check above can fail: drop a share of one tree and it does."""
    n, h, samples = 11, 5, 10000
    trees = all_trees(n, h)
    sample = sample_preorders(n, h, samples, seed=3)
    biased = [t for i, t in enumerate(sample) if not (t == trees[0] and i % 2 == 0)]
    counts = Counter(biased)
    observed = np.array([counts[t] for t in trees])
    assert chisquare(observed, np.full(len(trees), len(biased) / len(trees))).pvalue < 1e-4


@pytest.mark.parametrize("n,h", [(101, 10), (255, 8), (10001, 20), (2001, 300),
                                 pytest.param(10001, 100, marks=pytest.mark.slow)])
def test_exact_size_and_height(n: int, h: int) -> None:
    for t in sample_preorders(n, h, 3, seed=1):
        assert len(t) == n and t.count("0") == (n + 1) // 2
        assert height(t) == h


def test_same_seed_same_trees_other_seed_other_trees() -> None:
    a = sample_preorders(301, 12, 20, seed=9)
    assert a == sample_preorders(301, 12, 20, seed=9)
    assert a != sample_preorders(301, 12, 20, seed=10)
    assert len(set(a)) == 20


def test_table_path_equals_scan_path() -> None:
    """Nodes with at most SMALL interior nodes use the recorded tables; the scan must
    give the same (position, option) for every u, bit for bit."""
    t = tables_for(2 * SMALL + 101, 24)
    rng = np.random.default_rng(0)
    us = np.concatenate([rng.random(40), [0.0, 1 - 2**-53, 0.5]])
    checked = 0
    for kind, start in ((AT_MOST, t.start_a), (GREEN, t.start_e)):
        for h in range(2, 25):
            for m in range(1, SMALL + 1, 3):
                exists = (t.la if kind == AT_MOST else t.le)[h, m] > -np.inf
                if not exists:
                    continue
                lo, hi = position_range(m, h, kind)
                for u in us:
                    a = choose_split(t.la, t.le, start, m, h, kind, u)
                    b = choose_split_small(t.off, t.rec, t.pos, m, h, kind, u)
                    assert a == b, (kind, h, m, u)
                    assert lo <= a[0] <= hi
                    checked += 1
    assert checked > 10000


@pytest.mark.parametrize("n,h", [(10001, 20), (10001, 100), (2001, 300)])
def test_sampled_tree_follows_the_generic_scan(n: int, h: int) -> None:
    """End to end: every node of trees from the sampler (tables, scaled and exact
    scans, m = 1 shortcut) has the children that the generic scan of its own uniform
    number gives."""
    t = tables_for(n, h)
    buf = TreeBuffers(n, h)
    big = 0
    for trial in range(2):
        sample_tree(*t.kernel_args(), (n - 1) // 2, h, np.uint64(root_state(11, trial)),
                    buf.first_child, buf.node_m, buf.node_h, buf.node_kind, buf.node_state,
                    buf.level_start, buf.queue)
        for x in np.flatnonzero(buf.node_m[:n] > 0):
            m, hh, kind = int(buf.node_m[x]), int(buf.node_h[x]), int(buf.node_kind[x])
            start = t.start_a if kind == AT_MOST else t.start_e
            p, o = choose_split(t.la, t.le, start, m, hh, kind, node_uniform(buf.node_state[x]))
            lm, lh, lk, rm, rh, rk = children_of(m, hh, kind, p, o)
            f = int(buf.first_child[x])
            got = (buf.node_m[f], buf.node_h[f], buf.node_kind[f], buf.node_m[f + 1],
                   buf.node_h[f + 1], buf.node_kind[f + 1])
            assert tuple(int(v) for v in got) == (lm, lh, lk, rm, rh, rk), (trial, x)
            big += m > SMALL
    assert big > 50


def test_children_of_follows_the_options() -> None:
    """The branch-free children_of against the options as sampler.py describes them."""
    for m in (1, 2, 7, 300):
        for h in (3, 9):
            for pos in range(0, (m - 1) // 2 + 1, max(1, m // 7)):
                for opt in (0, 1):  # at most h: the smaller side left, then right
                    i = pos if opt == 0 else m - 1 - pos
                    assert children_of(m, h, AT_MOST, pos, opt) == (
                        i, h - 1, AT_MOST, m - 1 - i, h - 1, AT_MOST)
                for opt in range(4):  # green: A(s), B(s), A(m-1-s), B(m-1-s)
                    i = pos if opt < 2 else m - 1 - pos
                    want = ((i, h - 1, GREEN, m - 1 - i, h - 1, AT_MOST) if opt % 2 == 0
                            else (i, h - 2, AT_MOST, m - 1 - i, h - 1, GREEN))
                    assert children_of(m, h, GREEN, pos, opt) == want, (m, h, pos, opt)


def test_one_interior_node_has_one_split() -> None:
    """The sampler takes (0, 0) for m = 1 without a random number: the scan agrees for
    every u, height and kind."""
    t = tables_for(2 * SMALL + 101, 24)
    for kind, start in ((AT_MOST, t.start_a), (GREEN, t.start_e)):
        for h in range(2, 25):
            if (t.la if kind == AT_MOST else t.le)[h, 1] == -np.inf:
                continue
            for u in (0.0, 0.3, 1 - 2**-53):
                assert choose_split(t.la, t.le, start, 1, h, kind, u) == (0, 0), (kind, h)


def _thresholds(t, m: int, h: int, kind: int, start: np.ndarray, steps: int) -> list[float]:
    """The sums the scan compares u with in its first steps (same operations)."""
    lo, hi = position_range(m, h, kind)
    up, down, turn, acc, out = int(start[h, m]), int(start[h, m]) - 1, 0, 0.0, []
    while (up <= hi or down >= lo) and len(out) < 4 * steps:
        pos, up, down, turn = _next_position(up, down, lo, hi, turn)
        w0, w1, w2, w3 = position_weights(t.la, t.le, m, h, kind, pos)
        s1 = w0 + w1
        s2 = s1 + w2
        s3 = s2 + w3
        out += [acc + w0, acc + s1, acc + s2, acc + s3]
        acc += s3
    return out


@pytest.mark.parametrize("n,h", [(10001, 20), (10001, 100), (2001, 300)])
def test_large_scan_equals_generic_scan(n: int, h: int) -> None:
    """Nodes above SMALL use choose_split_large, the generic scan with its arithmetic
    written out per kind: the same (position, option) for every node and u, including
    u equal to the scan's sums and the doubles next to them."""
    t = tables_for(n, h)
    rng = np.random.default_rng(n + h)
    m_max = (n - 1) // 2
    checked = 0
    for kind, start, logs in ((AT_MOST, t.start_a, t.la), (GREEN, t.start_e, t.le)):
        for _ in range(100):
            m = int(rng.integers(SMALL + 1, m_max + 1))
            hh = int(rng.integers(2, h + 1))
            if logs[hh, m] == -np.inf:
                continue
            us = list(rng.random(4))
            for x in _thresholds(t, m, hh, kind, start, 8):
                us += [u for u in (x, np.nextafter(x, 0.0), np.nextafter(x, 1.0))
                       if 0.0 <= u < 1.0]
            for u in us:
                a = choose_split(t.la, t.le, start, m, hh, kind, u)
                b = choose_split_large(t.la, t.le, start, m, hh, kind, u)
                assert a == b, (kind, hh, m, u)
                checked += 1
    assert checked > 3000


@pytest.mark.parametrize("n,h,rate", [(10001, 20, 0.7), (10001, 100, 0.99),
                                       (2001, 300, 0.99), (10001, 150, 0.99)])
def test_scaled_scan_equals_exact_scan_when_it_decides(n: int, h: int, rate: float) -> None:
    """The sampler's scaled scan (products instead of exps) gives the exact scan's
    choice whenever it decides; it decides for nearly every node of sampled trees
    (tight height budgets excepted: their scaling factor would overflow), and it
    declines for u on (or next to) the exact scan's sums, where a rounding difference
    could matter."""
    t = tables_for(n, h)
    buf = TreeBuffers(n, h)
    rng = np.random.default_rng(7 * n + h)
    decided = random_u = at_sums = declined_at_sums = 0
    for trial in range(3):
        sample_tree(*t.kernel_args(), (n - 1) // 2, h, np.uint64(root_state(5, trial)),
                    buf.first_child, buf.node_m, buf.node_h, buf.node_kind, buf.node_state,
                    buf.level_start, buf.queue)
        big = np.flatnonzero(buf.node_m[:n] > SMALL)
        for x in rng.choice(big, size=min(len(big), 60), replace=False):
            m, hh, kind = int(buf.node_m[x]), int(buf.node_h[x]), int(buf.node_kind[x])
            start = t.start_a if kind == AT_MOST else t.start_e
            sums = [v for v in _thresholds(t, m, hh, kind, start, 6) if 0.0 < v < 1.0]
            cases = [(float(u), False) for u in rng.random(5)]
            cases += [(u, True) for v in sums for u in (v, np.nextafter(v, 0.0))]
            for u, on_sum in cases:
                p, o, ok = choose_split_scaled(t.la, t.le, t.sc, t.sd, start, m, hh, kind, u)
                if ok:
                    assert (p, o) == choose_split(t.la, t.le, start, m, hh, kind, u), (
                        kind, hh, m, u)
                if on_sum:
                    at_sums += 1
                    declined_at_sums += not ok
                else:
                    random_u += 1
                    decided += ok
    assert random_u > 300 and decided >= rate * random_u, (decided, random_u)
    assert at_sums > 300 and declined_at_sums == at_sums


@pytest.mark.parametrize("n,h", [(20, 5), (7, 2), (5, 4), (-1, 3)])
def test_invalid(n: int, h: int) -> None:
    with pytest.raises(RevecError):
        sample_preorders(n, h, 1, seed=0)


def test_cli_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["treegen", "sample", "21", "6", "--count", "4", "--seed", "5"]) == 0
    lines = capsys.readouterr().out.split()
    assert lines == sample_preorders(21, 6, 4, seed=5)
    assert all(set(x) <= {"0", "1"} and len(x) == 21 for x in lines)
    assert main(["treegen", "sample", "21", "3"]) == 2
    assert "at most 7 nodes" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("n,h,samples", [(25, 6, 400000), (25, 7, 1500000)])
def test_uniform_chi_square_larger(n: int, h: int, samples: int) -> None:
    trees = all_trees(n, h)
    counts = Counter(sample_preorders(n, h, samples, seed=7))
    assert set(counts) <= set(trees)
    observed = np.array([counts[t] for t in trees])
    p = chisquare(observed, np.full(len(trees), samples / len(trees))).pvalue
    assert p > 1e-4, (n, h, p)

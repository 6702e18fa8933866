"""Exact counts of full binary trees by size and height (DESIGN.md section 6).

A single node has height 1.  With ``m`` interior nodes a full binary tree has
``n = 2m + 1`` nodes.  ``T_h(y) = sum_m T(m, h) y^m`` counts the trees of height at most
``h`` by interior nodes; ``T_1 = 1`` and ``T_h = 1 + y T_{h-1}^2``.  Then
``a(2m+1, h) = T(m, h)`` (height at most h) and ``e(n, h) = a(n, h) - a(n, h - 1)``
(height exactly h).  The polynomials are exact big-integer polynomials (python-flint
``fmpz_poly``), truncated at the largest interior count needed.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from flint import fmpz_poly

from revec.errors import RevecError


def check_size_height(n: int, h: int) -> None:
    """Raise a :class:`RevecError` unless some full binary tree has ``n`` nodes and
    height exactly ``h``."""
    if h < 1:
        raise RevecError(f"height must be at least 1 (a single node has height 1), got {h}")
    if n < 1:
        raise RevecError(f"node count must be at least 1, got {n}")
    if n % 2 == 0:
        raise RevecError(f"a full binary tree has an odd number of nodes, got {n} "
                         f"(use {n + 1})")
    if n < 2 * h - 1:
        raise RevecError(f"a tree of height {h} has at least {2 * h - 1} nodes, got {n}")
    if h < 63 and n > (1 << h) - 1:
        raise RevecError(f"a tree of height {h} has at most {(1 << h) - 1} nodes, got {n}")


def height_polys(max_interior: int, max_height: int) -> list[fmpz_poly]:
    """``[T_0, T_1, ..., T_H]`` truncated to degree ``max_interior`` (T_0 = 0: no tree)."""
    one = fmpz_poly([1])
    polys = [fmpz_poly([]), one]
    t = one
    for _ in range(2, max_height + 1):
        t = one + t.pow_trunc(2, max_interior).left_shift(1)
        polys.append(t)
    return polys[: max_height + 1]


@dataclass(frozen=True)
class Count:
    nodes: int
    height: int
    at_most: int  # a(n, h)
    exact: int  # e(n, h)

    def to_json(self) -> dict[str, object]:
        return {"nodes": self.nodes, "height": self.height,
                "at_most": str(self.at_most), "exact": str(self.exact)}


def _coeff(p: fmpz_poly, m: int) -> int:
    return int(p[m]) if m <= p.degree() else 0


def count(n: int, h: int) -> Count:
    """a(n, h) and e(n, h) exactly.  Any odd ``n >= 1`` and ``h >= 1`` is accepted here
    (counts may be 0); :func:`check_size_height` says whether a tree exists."""
    if n < 1 or n % 2 == 0 or h < 1:
        raise RevecError(f"counts are defined for odd n >= 1 and h >= 1, got n={n}, h={h}")
    m = (n - 1) // 2
    h_eff = min(h, m + 1)  # no tree with m interior nodes is higher than m + 1
    polys = height_polys(m, h_eff)
    at_most = _coeff(polys[h_eff], m)
    below = _coeff(polys[h - 1], m) if h - 1 <= h_eff else at_most
    return Count(n, h, at_most, at_most - below)


def log_or_neg_inf(values: list[int]) -> np.ndarray:
    return np.array([math.log(v) if v > 0 else -math.inf for v in values], np.float64)


def cache_dir() -> Path:
    """``$REVEC_CACHE_DIR/treegen`` (default ``~/.cache/revec/treegen``)."""
    root = os.environ.get("REVEC_CACHE_DIR") or Path.home() / ".cache" / "revec"
    return Path(root) / "treegen"


@lru_cache(maxsize=4)
def log_tables(max_interior: int, max_height: int) -> tuple[np.ndarray, np.ndarray]:
    """Natural logarithms of T(m, h) (height at most h) and E(m, h) (exactly h) for
    ``0 <= m <= max_interior``, ``0 <= h <= max_height``; -inf where the count is 0.
    Arrays of shape (max_height + 1, max_interior + 1), C order (one row per height).
    Tables are kept on disk (:func:`cache_dir`); a cached table at least as large
    serves by slicing (entries do not depend on the table's extent)."""
    folder = cache_dir()
    for f in sorted(folder.glob("logs-*-*.npz")) if folder.is_dir() else []:
        try:
            cm, ch = (int(x) for x in f.stem.split("-")[1:3])
        except ValueError:
            continue
        if cm >= max_interior and ch >= max_height:
            try:
                with np.load(f) as z:
                    la = np.ascontiguousarray(z["la"][: max_height + 1, : max_interior + 1])
                    le = np.ascontiguousarray(z["le"][: max_height + 1, : max_interior + 1])
            except (OSError, KeyError, ValueError):
                continue
            la.setflags(write=False)
            le.setflags(write=False)
            return la, le
    la, le = _compute_log_tables(max_interior, max_height)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".npz", dir=folder)
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, la=la, le=le)
        os.replace(tmp, folder / f"logs-{max_interior}-{max_height}.npz")
    except OSError:
        pass  # a read-only cache only costs time
    return la, le


# Precision of the interval arithmetic of the log tables (bits), and the relative accuracy
# every table entry must be certified to (else the exact big-integer path runs).
LOG_TABLE_PREC = 128
LOG_TABLE_MIN_BITS = 100
# Below this many table entries times heights the exact polynomials are as fast (their
# coefficients stay short for low heights): measured 2-core AMD EPYC, python-flint 0.9,
# (max interior, max height) -> exact / balls: (5000, 20) 1.6 / 2.0 s, (2000, 60)
# 1.6 / 2.0 s, (1000, 300) 2.4 / 2.3 s, (5000, 60) 13.5 / 6.2 s, (5000, 150) 42 / 11 s.
BALL_MIN_WORK = 250_000


def _compute_log_tables(max_interior: int, max_height: int) -> tuple[np.ndarray, np.ndarray]:
    """The log tables by interval arithmetic (:func:`_interval_log_tables`), certified
    entry by entry; the exact big-integer polynomials where that cannot certify."""
    tables = None
    if max_interior * max_height >= BALL_MIN_WORK:
        tables = _interval_log_tables(max_interior, max_height)
    if tables is None:
        tables = _exact_log_tables(max_interior, max_height)
    for t in tables:
        t.setflags(write=False)
    return tables


def _interval_log_tables(max_interior: int, max_height: int
                         ) -> tuple[np.ndarray, np.ndarray] | None:
    """T(m, h) and E(m, h) as ball polynomials (python-flint ``arb_poly``, 128-bit
    midpoints with error radii), or None if some entry is not certified to
    ``LOG_TABLE_MIN_BITS`` relative bits (or an exact zero).

    Only logarithms (doubles) are needed, and the exact heights need no subtraction:
    ``E_h = T_h - T_{h-1} = y (T_{h-1}^2 - T_{h-2}^2) = y E_{h-1} (T_{h-1} + T_{h-2})``,
    a product of polynomials with nonnegative coefficients, so every coefficient keeps
    its relative accuracy (no cancellation).  An entry certified to 100 bits gives a
    logarithm within 2^-100 (absolute) of the exact one: within one unit in the last
    place of the double, like ``math.log`` of the exact integer.  Measured for trees of
    10,001 nodes and height 150 (2-core AMD EPYC, python-flint 0.9): 42 s with the
    exact 10,000-bit coefficients, 11-13 s with balls.
    """
    from flint import arb_poly, ctx

    m1 = max_interior + 1
    la = np.full((max_height + 1, m1), -np.inf)
    le = np.full((max_height + 1, m1), -np.inf)
    saved = ctx.prec
    ctx.prec = LOG_TABLE_PREC
    try:
        one = arb_poly([1])
        t_prev, t_cur, e_cur = arb_poly([]), one, one  # T_0, T_1, E_1
        for h in range(1, max_height + 1):
            if h >= 2:
                t_next = one + (t_cur * t_cur).truncate(max_interior).left_shift(1)
                e_cur = (e_cur * (t_cur + t_prev)).truncate(max_interior).left_shift(1)
                t_prev, t_cur = t_cur, t_next
            for row, poly in ((la[h], t_cur), (le[h], e_cur)):
                for m, c in enumerate(poly.coeffs()[:m1]):
                    if c.is_zero():
                        continue
                    if not c > 0 or c.rel_accuracy_bits() < LOG_TABLE_MIN_BITS:
                        return None
                    row[m] = float(c.log())
    finally:
        ctx.prec = saved
    return la, le


def _exact_log_tables(max_interior: int, max_height: int) -> tuple[np.ndarray, np.ndarray]:
    polys = height_polys(max_interior, max_height)
    la = np.full((max_height + 1, max_interior + 1), -np.inf)
    le = np.full((max_height + 1, max_interior + 1), -np.inf)
    prev: list[int] = [0] * (max_interior + 1)
    for h, p in enumerate(polys):
        coeffs = [int(c) for c in p.coeffs()][: max_interior + 1]
        coeffs += [0] * (max_interior + 1 - len(coeffs))
        la[h] = log_or_neg_inf(coeffs)
        le[h] = log_or_neg_inf([c - q for c, q in zip(coeffs, prev)])
        prev = coeffs
    return la, le

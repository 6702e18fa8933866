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


def _compute_log_tables(max_interior: int, max_height: int) -> tuple[np.ndarray, np.ndarray]:
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
    la.setflags(write=False)
    le.setflags(write=False)
    return la, le

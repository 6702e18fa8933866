"""Uniform (n, h) trees and the SIMD-utilization simulator (paper Sec. 7-8).

``counts`` (exact counts), ``rng`` (per-node splittable states), ``splits`` (one node's
split), ``sampler`` (whole trees), ``schedules`` (bfs / blocked / re-expansion over a
tree), ``simulator`` (batched trials), ``sweep`` (Dask), ``experiments`` and ``report``
(reports/treegen), ``reference`` (plain-Python enumeration and schedules for tests).
See docs/treegen.md.
"""

"""Schedules of DESIGN.md section 3 and their threshold semantics.

One scheduler serves the three named strategies; they differ only in the two
thresholds it reads:

* ``bfs``: never leave bfs mode (B is infinite, R unused);
* ``blocked`` (paper Fig. 4): bfs until the first block of B or more threads,
  then blocked forever (R = 0: never re-expand);
* ``reexp`` (paper Fig. 6): blocked, re-expanding a child block of fewer than R
  threads in bfs mode until it holds B or more again.

The two decisions are the functions below; every back end (and the simulator)
implements exactly these comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass

from revec.errors import RevecError

STRATEGIES = ("bfs", "blocked", "reexp")
UNBOUNDED = 1 << 62
DEFAULT_BLOCK_SIZE = 4096
DEFAULT_SIMD_WIDTH = 16


@dataclass(frozen=True)
class Schedule:
    strategy: str
    block_size: int  # B: bfs-mode blocks of B or more threads switch to blocked mode
    reexp_threshold: int  # R: blocked-mode child blocks of fewer than R threads re-expand
    simd_width: int  # P: lanes, for the utilization statistic

    @classmethod
    def make(cls, strategy: str, block_size: int | None = None,
             reexp_threshold: int | None = None,
             simd_width: int | None = None) -> Schedule:
        if strategy not in STRATEGIES:
            raise RevecError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
        b = DEFAULT_BLOCK_SIZE if block_size is None else block_size
        p = DEFAULT_SIMD_WIDTH if simd_width is None else simd_width
        if b < 1:
            raise RevecError(f"block size must be at least 1, got {b}")
        if p < 1:
            raise RevecError(f"SIMD width must be at least 1, got {p}")
        if reexp_threshold is not None and reexp_threshold < 0:
            raise RevecError(f"re-expansion threshold must be >= 0, got {reexp_threshold}")
        if strategy == "bfs":
            return cls(strategy, UNBOUNDED, 0, p)
        if strategy == "blocked":
            return cls(strategy, b, 0, p)
        r = b if reexp_threshold is None else reexp_threshold  # Sec. 4.3: R = B
        return cls(strategy, b, r, p)


def next_block_stays_bfs(next_size: int, block_size: int) -> bool:
    """In bfs mode: the next block runs in bfs mode while it holds fewer than B threads."""
    return next_size < block_size


def child_block_reexpands(child_size: int, reexp_threshold: int) -> bool:
    """In blocked mode: a child block of fewer than R threads is executed in bfs mode."""
    return child_size < reexp_threshold


def utilization_share(block_threads: int, simd_width: int) -> int:
    """Threads of one block that run in full SIMD vectors: floor(b / P) * P."""
    return block_threads // simd_width * simd_width

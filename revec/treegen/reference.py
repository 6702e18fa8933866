"""Plain-Python references for the tests and the report: every tree of (n, h) by
enumeration, and the schedules of DESIGN.md section 3 over a tree: the policy's own
:func:`revec.transforms.schedule.trace` for DESIGN.md's reading of the bfs -> blocked
switch, and the simulator's variant reading written as directly as possible (lists of
nodes, a list used as the stack of blocks).  Slow; for small trees only."""

from __future__ import annotations

from fractions import Fraction
from functools import cache

from revec.transforms.schedule import (
    Schedule,
    child_block_reexpands,
    next_block_stays_bfs,
    trace,
    utilization_share,
)
from revec.treegen.counts import check_size_height


@cache
def _at_most(m: int, h: int) -> tuple[str, ...]:
    if h < 1:
        return ()
    if m == 0:
        return ("0",)
    out = []
    for i in range(m):
        for left in _at_most(i, h - 1):
            for right in _at_most(m - 1 - i, h - 1):
                out.append("1" + left + right)
    return tuple(out)


def all_trees(n: int, h: int) -> list[str]:
    """Preorder strings of every full binary tree with n nodes and height exactly h."""
    check_size_height(n, h)
    m = (n - 1) // 2
    shorter = set(_at_most(m, h - 1))
    return [t for t in _at_most(m, h) if t not in shorter]


def children_table(preorder: str) -> list[tuple[int, int] | None]:
    """Node ids in preorder; entry x = (left, right) or None for a leaf."""
    kids: list[tuple[int, int] | None] = [None] * len(preorder)
    stack: list[int] = []  # interior nodes waiting for their right child
    pending_left: dict[int, int] = {}
    for x, c in enumerate(preorder):
        if stack:
            p = stack[-1]
            if p not in pending_left:
                pending_left[p] = x
            else:
                kids[p] = (pending_left.pop(p), x)
                stack.pop()
        if c == "1":
            stack.append(x)
    return kids


def schedule_counts(preorder: str, block_size: int, reexp_threshold: int,
                    simd_width: int, switch: str = "whole"
                    ) -> tuple[int, int, int, list[int]]:
    """(vectorized threads, issued lanes, threads in blocks >= P, block sizes in
    execution order) of the schedule with thresholds (B, R) on the tree; ``switch`` as
    :data:`revec.treegen.schedules.SWITCH_READINGS` (``whole``: the policy's trace)."""
    kids = children_table(preorder)
    P = simd_width
    if switch == "whole":
        # the one scheduler with these thresholds (the strategy name only labels it)
        policy = Schedule("reexp", block_size, reexp_threshold, simd_width)
        sizes = [b.threads for b in
                 trace(policy, [() if k is None else k for k in kids]).blocks]
    else:
        sizes = _split_switch_sizes(kids, block_size, reexp_threshold)
    vec = sum(utilization_share(b, P) for b in sizes)
    lanes = sum(-(-b // P) * P for b in sizes)
    wide = sum(b for b in sizes if b >= P)
    return vec, lanes, wide, sizes


def _split_switch_sizes(kids: list[tuple[int, int] | None], block_size: int,
                        reexp_threshold: int) -> list[int]:
    """Block sizes of the variant reading ``split``: a bfs-mode block whose children
    number B or more continues in blocked mode at once (its children grouped by spawn
    index), with the policy's decisions otherwise."""
    sizes: list[int] = []
    stack: list[tuple[list[int], str]] = [([0], "bfs")]
    while stack:
        block, mode = stack.pop()
        sizes.append(len(block))
        inner = [kids[x] for x in block if kids[x] is not None]
        left = [k[0] for k in inner if k is not None]
        right = [k[1] for k in inner if k is not None]
        if mode == "bfs" and not next_block_stays_bfs(len(left) + len(right), block_size):
            mode = "blocked"
        if mode == "bfs":
            nxt = left + right
            if nxt:
                stack.append((nxt, "bfs"))
        else:
            for child in (right, left):  # left (index 0) on top: it runs first
                if child:
                    stack.append((child, "bfs" if child_block_reexpands(len(child),
                                                                        reexp_threshold)
                                  else "blocked"))
    return sizes


def exact_mean_utilization(n: int, h: int, block_size: int, reexp_threshold: int,
                           simd_width: int, switch: str = "whole") -> Fraction:
    """Expected utilization over uniform (n, h) trees, exactly."""
    trees = all_trees(n, h)
    total = sum((Fraction(schedule_counts(t, block_size, reexp_threshold, simd_width,
                                          switch)[0], n)
                 for t in trees), Fraction(0))
    return total / len(trees)

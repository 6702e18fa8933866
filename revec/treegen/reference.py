"""Plain-Python references for the tests and the report: every tree of (n, h) by
enumeration, and the schedules of DESIGN.md section 3 written as directly as possible
(lists of nodes, a list used as the stack of blocks).  Slow; for small trees only."""

from __future__ import annotations

from fractions import Fraction
from functools import cache

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
    """(vectorized threads, issued lanes, threads in blocks >= P, block sizes) of the
    schedule with thresholds (B, R) on the tree; ``switch`` as
    :data:`revec.treegen.schedules.SWITCH_READINGS`."""
    kids = children_table(preorder)
    P = simd_width
    sizes: list[int] = []
    stack: list[tuple[list[int], str]] = [([0], "bfs")]
    while stack:
        block, mode = stack.pop()
        sizes.append(len(block))
        inner = [kids[x] for x in block if kids[x] is not None]
        left = [k[0] for k in inner if k is not None]
        right = [k[1] for k in inner if k is not None]
        if mode == "bfs" and switch == "split" and len(left) + len(right) >= block_size:
            mode = "blocked"
        if mode == "bfs":
            nxt = left + right
            if nxt:
                stack.append((nxt, "bfs" if len(nxt) < block_size else "blocked"))
        else:
            for child in (right, left):  # left (index 0) on top: it runs first
                if child:
                    stack.append((child, "bfs" if len(child) < reexp_threshold else "blocked"))
    vec = sum(b // P * P for b in sizes)
    lanes = sum(-(-b // P) * P for b in sizes)
    wide = sum(b for b in sizes if b >= P)
    return vec, lanes, wide, sizes


def exact_mean_utilization(n: int, h: int, block_size: int, reexp_threshold: int,
                           simd_width: int, switch: str = "whole") -> Fraction:
    """Expected utilization over uniform (n, h) trees, exactly."""
    trees = all_trees(n, h)
    total = sum(Fraction(schedule_counts(t, block_size, reexp_threshold, simd_width,
                                                  switch)[0], n)
                for t in trees)
    return total / len(trees)

"""Independent answers for the benchmark suite (DESIGN.md section 8).

Each function computes a benchmark's expected reducer values by a method that shares no
code with the task program in ``benchmarks/`` (iteration, closed forms, published tables,
dynamic programs, or a separately written walker), so a wrong task program or a wrong
compiled variant cannot agree with it by construction.

:func:`expected` maps a benchmark name and its root arguments (as in
:mod:`revec.bench.presets`) to ``{reducer name: value}``.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from revec.errors import RevecError


# --------------------------------------------------------------------------- fib
def fib(n: int) -> int:
    """fib(0) = 0, fib(1) = 1, by iteration."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


# --------------------------------------------------------------------------- nqueens
# OEIS A000170, "Number of ways of placing n nonattacking queens on an n X n board",
# https://oeis.org/A000170 (terms for n = 0 .. 27).
NQUEENS_A000170: tuple[int, ...] = (
    1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184,
    14772512, 95815104, 666090624, 4968057848, 39029188884, 314666222712,
    2691008701644, 24233937684440, 227514171973736, 2207893435808352,
    22317699616364044, 234907967154122528,
)


def nqueens(n: int) -> int:
    if not 0 <= n < len(NQUEENS_A000170):
        raise RevecError(f"no published n-queens count for n = {n}")
    return NQUEENS_A000170[n]


# --------------------------------------------------------------------------- counting
def catalan(n: int) -> int:
    """Well-formed strings of n pairs of parentheses: C(2n, n) / (n + 1)."""
    return math.comb(2 * n, n) // (n + 1)


def binomial(n: int, k: int) -> int:
    return math.comb(n, k)


# --------------------------------------------------------------------------- uts
# Published sample trees of UTS 2.1: sample_trees.sh of the UTS distribution
# (https://sourceforge.net/projects/uts-benchmark/, "Small Workloads (~4 million nodes)"
# and "Large Workloads"); the default tree (no options: geometric, linear shape, b = 4,
# d = 6, r = 0) has 1732 nodes and 1050 leaves (the verification table of the UTS port in
# STAPL, which lists the default tree next to T1 .. T5).  ``depth`` is None where the
# source gives none.
UTS_PUBLISHED: dict[str, dict[str, int | None]] = {
    "default": {"nodes": 1732, "leaves": 1050, "depth": None},
    "T1": {"nodes": 4130071, "leaves": 3305118, "depth": 10},
    "T2": {"nodes": 4117769, "leaves": 2342762, "depth": 81},
    "T3": {"nodes": 4112897, "leaves": 3599034, "depth": 1572},
    "T4": {"nodes": 4132453, "leaves": 3108986, "depth": 134},
    "T5": {"nodes": 4147582, "leaves": 2181318, "depth": 20},
    "T1L": {"nodes": 102181082, "leaves": 81746377, "depth": 13},
    "T2L": {"nodes": 96793510, "leaves": 53791152, "depth": 67},
    "T3L": {"nodes": 111345631, "leaves": 89076904, "depth": 17844},
}

# Tree parameters of the same file: (type t, shape a, gen_mx d, b_0 b, root r, q, m).
# Types: 0 binomial, 1 geometric, 2 hybrid, 3 balanced; shapes: 0 linear, 1 expdec,
# 2 cyclic, 3 fixed.  Unset options keep UTS's defaults (a 0, d 6, q 15/64, m 4).
UTS_TREES: dict[str, dict[str, Any]] = {
    "default": dict(t=1, a=0, d=6, b=4.0, r=0, q=15.0 / 64.0, m=4),
    "T1": dict(t=1, a=3, d=10, b=4.0, r=19, q=15.0 / 64.0, m=4),
    "T2": dict(t=1, a=2, d=16, b=6.0, r=502, q=15.0 / 64.0, m=4),
    "T3": dict(t=0, a=0, d=6, b=2000.0, r=42, q=0.124875, m=8),
    "T4": dict(t=2, a=0, d=16, b=6.0, r=1, q=0.234375, m=4),
    "T5": dict(t=1, a=0, d=20, b=4.0, r=34, q=15.0 / 64.0, m=4),
    "T1L": dict(t=1, a=3, d=13, b=4.0, r=29, q=15.0 / 64.0, m=4),
    "T2L": dict(t=1, a=2, d=23, b=7.0, r=220, q=15.0 / 64.0, m=4),
    "T3L": dict(t=0, a=0, d=6, b=2000.0, r=7, q=0.200014, m=5),
}


def uts_walk(t: int, a: int, d: int, b: float, r: int, q: float, m: int,
             shift: float = 0.5, max_nodes: int | None = None,
             root_state: bytes | None = None) -> dict[str, int]:
    """Walk a UTS 2.1 tree with :mod:`hashlib` SHA-1 states (an iterative stack of
    20-byte digests); returns nodes, leaves and depth (the largest node height, root 0).
    The root's state is SHA-1(16 zero bytes, r as 4 big-endian bytes) unless
    ``root_state`` (20 bytes) is given."""
    if root_state is None:
        root = hashlib.sha1(bytes(16) + struct.pack(">i", r)).digest()
    else:
        root = bytes(root_state)
    stack: list[tuple[bytes, int]] = [(root, 0)]
    nodes = leaves = depth = 0
    sha1 = hashlib.sha1
    pack = struct.Struct(">i").pack
    log = math.log
    while stack:
        state, h = stack.pop()
        nodes += 1
        if max_nodes is not None and nodes > max_nodes:
            raise RevecError(f"UTS tree larger than {max_nodes} nodes")
        depth = max(depth, h)
        u = (int.from_bytes(state[16:20], "big") & 0x7FFFFFFF) / 2147483648.0
        if t == 0 and h == 0:
            kids = math.floor(b)
        elif t == 0 or (t == 2 and h >= shift * d):
            kids = m if u < q else 0
        elif t == 3:
            kids = int(b) if h < d else 0
        else:  # geometric (also the top of a hybrid tree)
            target = b
            if h > 0:
                if a == 1:
                    target = b * math.pow(h, -log(b) / log(d))
                elif a == 2:
                    target = 0.0 if h > 5 * d else math.pow(b, math.sin(2.0 * math.pi * h / d))
                elif a == 3:
                    target = b if h < d else 0.0
                else:
                    target = b * (1.0 - h / d)
            p = 1.0 / (1.0 + target)
            den = log(1.0 - p) if p < 1.0 else -math.inf
            kids = math.floor(log(1.0 - u) / den)
        if h == 0 and t == 0:
            kids = min(kids, math.ceil(b))
        elif t != 3:
            kids = min(kids, 100)
        if kids <= 0:
            leaves += 1
            continue
        for i in range(kids):
            stack.append((sha1(state + pack(i)).digest(), h + 1))
    return {"nodes": nodes, "leaves": leaves, "depth": depth}


# --------------------------------------------------------------------------- knapsack
DATA_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "data"


def read_knapsack(path: str | Path) -> tuple[int, list[tuple[int, int]]]:
    """A Cilk-5 knapsack input: ``#items capacity`` then ``value weight`` per item.
    Returns (capacity, [(value, weight), ...]) in file order.  Like Cilk-5's
    ``read_input``, only the first ``#items`` pairs are read (example 3 lists 31 pairs
    under a count of 30)."""
    words = [int(w) for w in Path(path).read_text().split()]
    if len(words) < 2 or len(words) < 2 + 2 * words[0]:
        raise RevecError(f"{path}: not a Cilk-5 knapsack input (#items capacity value weight ...)")
    n, cap = words[0], words[1]
    items = [(words[2 + 2 * i], words[3 + 2 * i]) for i in range(n)]
    return cap, items


def knapsack_dp(capacity: int, items: Sequence[tuple[int, int]]) -> int:
    """Best total value of a subset of ``items`` (value, weight) within ``capacity``:
    the textbook 0/1 dynamic program over capacities."""
    best = [0] * (capacity + 1)
    for value, weight in items:
        for c in range(capacity, weight - 1, -1):
            cand = best[c - weight] + value
            if cand > best[c]:
                best[c] = cand
    return best[capacity]


def knapsack(example: int, n: int) -> int:
    """Best value over the first ``n`` items of Cilk-5 example ``example`` (1, 2 or 3)."""
    cap, items = read_knapsack(DATA_DIR / f"cilk5-example{example}.input")
    if not 0 <= n <= len(items):
        raise RevecError(f"example{example} has {len(items)} items, not {n}")
    return knapsack_dp(cap, items[:n])


# --------------------------------------------------------------------------- graphcol
def colourings_by_frontier(nv: int, edges: Sequence[tuple[int, int]], k: int = 3) -> int:
    """Proper k-colourings of a graph by a frontier (transfer-matrix) dynamic program:
    vertices are added in order 0 .. nv-1; the state is the colours of the added vertices
    that still have a neighbour to come, with the number of colourings reaching it."""
    adj: list[set[int]] = [set() for _ in range(nv)]
    for u, v in edges:
        if u == v:
            return 0
        adj[u].add(v)
        adj[v].add(u)
    last_use = [max([u, *adj[u]]) for u in range(nv)]
    frontier: tuple[int, ...] = ()
    states: dict[tuple[int, ...], int] = {(): 1}
    for v in range(nv):
        new_frontier = tuple(u for u in (*frontier, v) if last_use[u] > v)
        keep = [i for i, u in enumerate(frontier) if last_use[u] > v]
        earlier = [i for i, u in enumerate(frontier) if u in adj[v]]
        nxt: dict[tuple[int, ...], int] = {}
        for cols, ways in states.items():
            banned = {cols[i] for i in earlier}
            for c in range(k):
                if c in banned:
                    continue
                key = tuple(cols[i] for i in keep) + ((c,) if last_use[v] > v else ())
                nxt[key] = nxt.get(key, 0) + ways
        states = nxt
        frontier = new_frontier
    return sum(states.values())


def chromatic_polynomial_value(nv: int, edges: Sequence[tuple[int, int]], k: int) -> int:
    """P(G, k) by deletion-contraction (memoised on the edge set); for small graphs only
    (a second, slower method the tests use on induced subgraphs)."""

    @cache
    def p(n: int, es: frozenset[tuple[int, int]]) -> int:
        if not es:
            return k ** n
        u, v = min(es)
        rest = es - {(u, v)}
        merged = set()
        for a, b in rest:
            a2 = u if a == v else a
            b2 = u if b == v else b
            merged.add((min(a2, b2), max(a2, b2)))
        return p(n, frozenset(rest)) - p(n - 1, frozenset(merged))

    return p(nv, frozenset((min(a, b), max(a, b)) for a, b in edges))


# --------------------------------------------------------------------------- minmax
LINES_4X4: tuple[int, ...] = tuple(
    [sum(1 << (4 * r + c) for c in range(4)) for r in range(4)]
    + [sum(1 << (4 * r + c) for r in range(4)) for c in range(4)]
    + [sum(1 << (5 * i) for i in range(4)), sum(1 << (3 * i + 3) for i in range(4))]
)


def tictactoe_4x4(x: int, o: int) -> dict[str, int]:
    """Every game continuing from the position (x, o) (bitmasks of the 16 cells, X moves
    when both have as many stones): leaves won by X, by O, drawn, and all positions,
    by a search memoised over board states (each state's counts computed once)."""

    @cache
    def count(x: int, o: int) -> tuple[int, int, int, int]:
        for line in LINES_4X4:
            if x & line == line:
                return (1, 0, 0, 1)
            if o & line == line:
                return (0, 1, 0, 1)
        empty = ~(x | o) & 0xFFFF
        if empty == 0:
            return (0, 0, 1, 1)
        xw = ow = dr = tot = 0
        x_moves = bin(x).count("1") == bin(o).count("1")
        for cell in range(16):
            bit = 1 << cell
            if empty & bit:
                a, b, c, t = count(x | bit, o) if x_moves else count(x, o | bit)
                xw, ow, dr, tot = xw + a, ow + b, dr + c, tot + t
        return (xw, ow, dr, tot + 1)

    if x & o:
        raise RevecError("a cell holds both an X and an O")
    xw, ow, dr, tot = count(x, o)
    return {"xwins": xw, "owins": ow, "draws": dr, "positions": tot}


# --------------------------------------------------------------------------- dispatch
def read_graph(path: str | Path = DATA_DIR / "graph38.edges") -> tuple[int, list[tuple[int, int]]]:
    """The graphcol input: a first line ``vertices edges``, then one ``u v`` per line
    (``#`` starts a comment).  Returns (vertices, edges)."""
    rows = []
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            rows.append([int(w) for w in line.split()])
    nv, ne = rows[0]
    edges = [(u, v) for u, v in rows[1:]]
    if len(edges) != ne:
        raise RevecError(f"{path}: header says {ne} edges, found {len(edges)}")
    return nv, edges


def induced_prefix(n: int, edges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The edges among vertices 0 .. n-1."""
    return [(u, v) for u, v in edges if u < n and v < n]


def _graph_answer(args: Mapping[str, Any]) -> dict[str, int]:
    nv, edges = read_graph()
    n = int(args["n"])
    if not 0 <= n <= nv:
        raise RevecError(f"the graph has {nv} vertices, not {n}")
    return {"colourings": colourings_by_frontier(n, induced_prefix(n, edges))}


def _uts_answer(args: Mapping[str, Any]) -> dict[str, int]:
    if int(args.get("height", 0)) != 0:
        raise RevecError("a UTS walk starts at the root (height 0)")
    state = struct.pack(">5I", *(int(args[f"h{j}"]) for j in range(5)))
    res = uts_walk(int(args["tree_type"]), int(args["shape"]), int(args["gen_mx"]),
                   float(args["b0"]), 0, float(args["q"]), int(args["m"]),
                   float(args["shift_depth"]), root_state=state)
    return {"nodes": res["nodes"], "leaves": res["leaves"], "depth": res["depth"]}


ANSWERS: dict[str, Callable[[Mapping[str, Any]], dict[str, int]]] = {
    "fib": lambda a: {"count": fib(int(a["n"]))},
    "nqueens": lambda a: {"solutions": nqueens(int(a["n"]))},
    "parentheses": lambda a: {"count": catalan(int(a["n"]))},
    "binomial": lambda a: {"count": binomial(int(a["n"]), int(a["k"]))},
    "knapsack": lambda a: {"best": knapsack(int(a["example"]), int(a["n"]))},
    "uts": _uts_answer,
    "graphcol": _graph_answer,
    "minmax": lambda a: {k: v for k, v in tictactoe_4x4(int(a["x"]), int(a["o"])).items()
                         if k != "positions"},
    "nqueens_board": lambda a: {"solutions": nqueens(int(a["n"]))},
    "knapsack_bb": lambda a: {"best": knapsack_dp(int(a["c"]), list(zip(a["values"],
                                                                        a["weights"])))},
    "findmax": lambda a: {"largest": int(np.asarray(a["a"])[int(a["lo"]):int(a["hi"])].max())},
}


def expected(name: str, args: Mapping[str, Any]) -> dict[str, int]:
    """The independent answer of benchmark ``name`` for root arguments ``args``
    (a mapping from parameter names; see :mod:`revec.bench.presets`)."""
    if name not in ANSWERS:
        raise RevecError(f"no benchmark named {name!r}; expected one of {sorted(ANSWERS)}")
    return ANSWERS[name](args)

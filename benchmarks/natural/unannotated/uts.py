"""Unannotated twin of ``benchmarks/natural/uts.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

uts as people write it: the number of nodes of the subtree, with leaves and depth
still counted by reducers (twin of ``benchmarks/uts.py``: the same UTS 2.1 trees; the
child count is computed once, before the is-base test)."""

import numpy as np

from revec import Reducer, reduce, task
from revec.lib import sha1_spawn

BIN = 0
GEO = 1
HYBRID = 2
BALANCED = 3

LINEAR = 0
EXPDEC = 1
CYCLIC = 2
FIXED = 3

MAX_CHILDREN = 100

leaves = Reducer(np.int64, "sum")
depth = Reducer(np.int64, "max")


def binomial_children(r: np.int32, q: np.float64, m: np.int32) -> np.int32:
    u = np.float64(r) / 2147483648.0
    return m if u < q else np.int32(0)


def geometric_children(r: np.int32, height: np.int32, b0: np.float64, gen_mx: np.int32,
                       shape: np.int32) -> np.int32:
    b_i = b0
    if height > 0:
        h = np.float64(height)
        g = np.float64(gen_mx)
        if shape == EXPDEC:
            b_i = b0 * h ** (-np.log(b0) / np.log(g))
        elif shape == CYCLIC:
            if height > 5 * gen_mx:
                b_i = 0.0
            else:
                b_i = b0 ** np.sin(2.0 * 3.141592653589793 * h / g)
        elif shape == FIXED:
            b_i = b0 if height < gen_mx else 0.0
        else:
            b_i = b0 * (1.0 - h / g)
    p = 1.0 / (1.0 + b_i)
    u = np.float64(r) / 2147483648.0
    return np.int32(np.floor(np.log(1.0 - u) / np.log(1.0 - p)))


def num_children(tree_type: np.int32, b0: np.float64, gen_mx: np.int32, shape: np.int32,
                 q: np.float64, m: np.int32, shift_depth: np.float64, height: np.int32,
                 h4: np.uint32) -> np.int32:
    r = np.int32(h4 & np.uint32(0x7FFFFFFF))
    n = np.int32(0)
    if tree_type == BIN:
        if height == 0:
            n = np.int32(np.floor(b0))
        else:
            n = binomial_children(r, q, m)
    elif tree_type == GEO:
        n = geometric_children(r, height, b0, gen_mx, shape)
    elif tree_type == HYBRID:
        if np.float64(height) < shift_depth * np.float64(gen_mx):
            n = geometric_children(r, height, b0, gen_mx, shape)
        else:
            n = binomial_children(r, q, m)
    elif height < gen_mx:
        n = np.int32(b0)
    if tree_type == BIN and height == 0:
        n = min(n, np.int32(np.ceil(b0)))
    elif tree_type != BALANCED:
        n = min(n, np.int32(MAX_CHILDREN))
    return n


@task
def uts(tree_type=1, b0=4.0, gen_mx=6,
        shape=0, q=0.234375, m=4,
        shift_depth=0.5, height=0,
        h0=0x6768033E, h1=0x21646824, h2=0x7BD031A0,
        h3=0xA2D9876D, h4=0x79818F8F):
    kids = num_children(tree_type, b0, gen_mx, shape, q, m, shift_depth, height, h4)
    if kids <= 0:
        reduce(leaves, 1)
        reduce(depth, height)
        return 1
    total = 1
    for i in range(kids):
        c0, c1, c2, c3, c4 = sha1_spawn(h0, h1, h2, h3, h4, i)
        total += uts(tree_type, b0, gen_mx, shape, q, m, shift_depth, height + 1,
                     c0, c1, c2, c3, c4)
    return total

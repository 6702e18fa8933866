"""uts baselines: recursive UTS 2.1 tree walks (SHA-1 states), counting nodes and leaves and
finding the depth.  Python hashes with hashlib; numba and C use revec.lib.uts's SHA-1
compression (the same code the task program calls)."""

import hashlib
import math
import struct
from typing import Any

import numpy as np
from numba import njit

from revec.lib.sha1_ir import sha1_spawn_ir
from revec.lib.uts import C_SOURCE

C_PREFIX = "#include <stdint.h>\n" + C_SOURCE


def _params(args: dict[str, Any]) -> tuple[int, float, int, int, float, int, float]:
    return (int(args["tree_type"]), float(args["b0"]), int(args["gen_mx"]), int(args["shape"]),
            float(args["q"]), int(args["m"]), float(args["shift_depth"]))


def _state(args: dict[str, Any]) -> list[int]:
    return [int(args[f"h{j}"]) for j in range(5)]


def uts_py(tree_type: int, b0: float, gen_mx: int, shape: int, q: float, m: int,
           shift_depth: float, root: bytes) -> tuple[int, int, int]:
    acc = [0, 0, 0]
    spawn_bytes = struct.Struct(">i").pack

    def children(height: int, r: int) -> int:
        u = r / 2147483648.0
        if tree_type == 0 and height == 0:
            return min(math.floor(b0), math.ceil(b0))
        if tree_type == 3:
            return int(b0) if height < gen_mx else 0
        if tree_type == 0 or (tree_type == 2 and height >= shift_depth * gen_mx):
            return m if u < q else 0
        b_i = b0
        if height > 0:
            if shape == 1:
                b_i = b0 * math.pow(height, -math.log(b0) / math.log(gen_mx))
            elif shape == 2:
                b_i = 0.0 if height > 5 * gen_mx else math.pow(
                    b0, math.sin(2.0 * 3.141592653589793 * height / gen_mx))
            elif shape == 3:
                b_i = b0 if height < gen_mx else 0.0
            else:
                b_i = b0 * (1.0 - height / gen_mx)
        if b_i <= 0.0:
            return 0
        p = 1.0 / (1.0 + b_i)
        return min(math.floor(math.log(1.0 - u) / math.log(1.0 - p)), 100)

    def rec(state: bytes, height: int) -> None:
        acc[0] += 1
        kids = children(height, int.from_bytes(state[16:], "big") & 0x7FFFFFFF)
        if kids <= 0:
            acc[1] += 1
            if height > acc[2]:
                acc[2] = height
            return
        for i in range(kids):
            rec(hashlib.sha1(state + spawn_bytes(i)).digest(), height + 1)

    rec(root, 0)
    return acc[0], acc[1], acc[2]


@njit(cache=True)
def _children_nb(tree_type: int, b0: float, gen_mx: int, shape: int, q: float, m: int,
                 shift_depth: float, height: int, r: int) -> int:
    u = r / 2147483648.0
    if tree_type == 0 and height == 0:
        return min(int(math.floor(b0)), int(math.ceil(b0)))
    if tree_type == 3:
        return int(b0) if height < gen_mx else 0
    if tree_type == 0 or (tree_type == 2 and height >= shift_depth * gen_mx):
        return m if u < q else 0
    b_i = b0
    if height > 0:
        if shape == 1:
            b_i = b0 * math.pow(height, -math.log(b0) / math.log(gen_mx))
        elif shape == 2:
            if height > 5 * gen_mx:
                b_i = 0.0
            else:
                b_i = math.pow(b0, math.sin(2.0 * 3.141592653589793 * height / gen_mx))
        elif shape == 3:
            b_i = b0 if height < gen_mx else 0.0
        else:
            b_i = b0 * (1.0 - height / gen_mx)
    if b_i <= 0.0:
        return 0
    p = 1.0 / (1.0 + b_i)
    return min(int(math.floor(math.log(1.0 - u) / math.log(1.0 - p))), 100)


@njit(cache=True)
def uts_nb(tree_type: int, b0: float, gen_mx: int, shape: int, q: float, m: int,
           shift_depth: float, height: int, h0: np.uint32, h1: np.uint32, h2: np.uint32,
           h3: np.uint32, h4: np.uint32, acc: np.ndarray) -> None:
    acc[0] += 1
    kids = _children_nb(tree_type, b0, gen_mx, shape, q, m, shift_depth, height,
                        int(h4 & np.uint32(0x7FFFFFFF)))
    if kids <= 0:
        acc[1] += 1
        if height > acc[2]:
            acc[2] = height
        return
    for i in range(kids):
        c0, c1, c2, c3, c4 = sha1_spawn_ir(h0, h1, h2, h3, h4, np.int32(i))
        uts_nb(tree_type, b0, gen_mx, shape, q, m, shift_depth, height + 1, c0, c1, c2, c3, c4,
               acc)


def _result(acc: Any) -> dict[str, int]:
    return {"nodes": int(acc[0]), "leaves": int(acc[1]), "depth": int(acc[2])}


def python_run(args: dict[str, Any]) -> dict[str, int]:
    root = struct.pack(">5I", *_state(args))
    return _result(uts_py(*_params(args), root))


def numba_run(args: dict[str, Any]) -> dict[str, int]:
    acc = np.zeros(3, dtype=np.int64)
    h = [np.uint32(w) for w in _state(args)]
    uts_nb(*_params(args), 0, *h, acc)
    return _result(acc)


CDEF = """
void uts_setup(int tree_type, double b0, int gen_mx, int shape, double q, int m,
               double shift_depth);
void uts(int height, uint32_t h0, uint32_t h1, uint32_t h2, uint32_t h3, uint32_t h4);
int64_t uts_count(int which);
"""


def c_setup(ffi: Any, lib: Any, args: dict[str, Any]) -> None:
    lib.uts_setup(*_params(args))


def c_run(ffi: Any, lib: Any, args: dict[str, Any]) -> dict[str, int]:
    lib.uts_setup(*_params(args))  # also resets the counters
    lib.uts(0, *_state(args))
    return _result([lib.uts_count(k) for k in range(3)])

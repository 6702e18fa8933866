"""Compaction tables for w-bit masks (paper Sec. 5, Fig. 8), generated once.

For a w-bit mask ``m`` (bit i set = lane i selected):

* shuffle entry ``shuffle_table(w)[m]``: the positions of the selected lanes in order,
  then padding (``pad``);
* advance entry ``advance_table(w)[m]``: how many lanes are selected (popcount);
* prefix entry ``prefix_table(w)[m][i]``: how many selected lanes precede lane i, i.e.
  where lane i goes when it is selected (the prefix-sum table that drives a masked
  scatter; storing *every* lane at its prefix position in lane order is also a branch-free
  compaction, because an unselected lane's store is overwritten by the next selected one).

A compaction of width k*w is factorised into k lookups of width w: the 16-lane byte
compaction uses two 8-lane entries (2 KB of tables instead of 1 MB), the second entry's
positions shifted by 8 and moved behind the first entry's ``advance`` selected positions.

The C sources get the same tables as C initialisers (:func:`c_tables`); the numba
implementation uses the numpy arrays.
"""

from __future__ import annotations

from functools import cache

import numpy as np

PAD = 0x80  # pshufb: an index byte with the top bit set writes a zero


@cache
def shuffle_table(w: int, pad: int = PAD) -> np.ndarray:
    """``(2**w, w)`` uint8: selected lane positions of each mask, then ``pad``."""
    _check_w(w)
    t = np.full((1 << w, w), pad, np.uint8)
    for m in range(1 << w):
        lanes = [i for i in range(w) if m >> i & 1]
        t[m, : len(lanes)] = lanes
    t.flags.writeable = False
    return t


@cache
def advance_table(w: int) -> np.ndarray:
    """``(2**w,)`` uint8: the number of selected lanes of each mask."""
    _check_w(w)
    t = np.array([bin(m).count("1") for m in range(1 << w)], np.uint8)
    t.flags.writeable = False
    return t


@cache
def prefix_table(w: int) -> np.ndarray:
    """``(2**w, w)`` uint8: entry ``[m, i]`` = number of selected lanes before lane i."""
    _check_w(w)
    t = np.zeros((1 << w, w), np.uint8)
    for m in range(1 << w):
        c = 0
        for i in range(w):
            t[m, i] = c
            c += m >> i & 1
    t.flags.writeable = False
    return t


@cache
def combine_table() -> np.ndarray:
    """``(9, 16)`` uint8 pshufb controls that join two 8-lane shuffle entries in a register.

    Row ``c`` maps a register holding [entry(lo) | entry(hi) + 8] to the 16-lane control:
    bytes ``k < c`` keep entry(lo)[k], bytes ``k >= c`` take entry(hi)[k - c] (from byte
    ``8 + k - c``).  This avoids assembling the control with two stores at a variable offset
    and a reload (a store-forwarding stall on every chunk; DESIGN.md Sec. 5).
    """
    t = np.full((9, 16), PAD, np.uint8)
    for c in range(9):
        for k in range(16):
            if k < c:
                t[c, k] = k
            elif k - c < 8:
                t[c, k] = 8 + k - c
    t.flags.writeable = False
    return t


@cache
def byte_shuffle_table(w: int, lane_bytes: int) -> np.ndarray:
    """``(2**w, w*lane_bytes)`` uint8 pshufb controls for w lanes of ``lane_bytes`` bytes."""
    base = shuffle_table(w)
    t = np.full((1 << w, w * lane_bytes), PAD, np.uint8)
    for m in range(1 << w):
        for k in range(int(advance_table(w)[m])):
            for b in range(lane_bytes):
                t[m, k * lane_bytes + b] = base[m, k] * lane_bytes + b
    t.flags.writeable = False
    return t


@cache
def dword_permute_table(w: int, lane_dwords: int) -> np.ndarray:
    """``(2**w, w*lane_dwords)`` int32 vpermd indices: 4 lanes of 2 dwords for 64-bit lanes."""
    base = shuffle_table(w, pad=0)
    t = np.zeros((1 << w, w * lane_dwords), np.int32)
    for m in range(1 << w):
        for k in range(w):
            for d in range(lane_dwords):
                t[m, k * lane_dwords + d] = int(base[m, k]) * lane_dwords + d
    t.flags.writeable = False
    return t


@cache
def packed_permute_table() -> np.ndarray:
    """``(256,)`` uint32: the 8-wide shuffle entry as eight 3-bit lane numbers (bits 3k..3k+2).

    AVX2 expands it with one broadcast and one variable shift (``vpsrlvd`` by 0, 3, ..., 21);
    ``vpermd`` reads only the low 3 bits of each index, so no masking is needed.  1 KB
    instead of the 8 KB of widened dword indices, measured slightly faster on Zen 3.
    """
    base = shuffle_table(8, pad=0)
    t = np.zeros(256, np.uint32)
    for m in range(256):
        t[m] = sum(int(base[m, k]) << (3 * k) for k in range(8))
    t.flags.writeable = False
    return t


def _check_w(w: int) -> None:
    if w not in (1, 2, 4, 8):
        raise ValueError(f"table width must be 1, 2, 4 or 8, not {w}")


def _c_array(ctype: str, name: str, rows: np.ndarray, align: int = 0) -> str:
    attr = f" __attribute__((aligned({align}), unused))" if align else " __attribute__((unused))"
    body = ",\n".join("  {" + ",".join(str(int(v)) for v in row) + "}" for row in rows)
    dims = "".join(f"[{d}]" for d in rows.shape)
    return f"static const {ctype} {name}{dims}{attr} = {{\n{body}\n}};\n"


def _c_vector(ctype: str, name: str, vals: np.ndarray) -> str:
    body = ",".join(str(int(v)) for v in vals)
    return f"static const {ctype} {name}[{vals.size}] __attribute__((unused)) = {{{body}}};\n"


@cache
def c_tables() -> str:
    """The tables as C definitions (names ``revec_cmp_*``), used by ``compaction.h``."""
    shuf8 = shuffle_table(8)
    shuf8_hi = shuf8.copy()
    shuf8_hi[shuf8_hi != PAD] += 8
    parts = [
        "/* generated by revec.runtime.compaction.tables: do not edit */\n#include <stdint.h>\n",
        "/* 8-lane shuffle entries as 8 bytes (pad 0x80), and the same + 8 (upper half) */\n",
        _c_array("uint8_t", "revec_cmp_shuf8", shuf8, 8),
        _c_array("uint8_t", "revec_cmp_shuf8_hi", shuf8_hi, 8),
        _c_vector("uint8_t", "revec_cmp_adv8", advance_table(8)),
        _c_array("uint8_t", "revec_cmp_prefix8", prefix_table(8), 8),
        "/* pshufb controls joining two 8-lane entries in a register */\n",
        _c_array("uint8_t", "revec_cmp_combine", combine_table(), 16),
        _c_vector("uint32_t", "revec_cmp_perm8x32", packed_permute_table()),
        "/* 4-lane tables: 4 x 32-bit lanes (pshufb) */\n",
        _c_array("uint8_t", "revec_cmp_shuf4x32", byte_shuffle_table(4, 4), 16),
        _c_vector("uint8_t", "revec_cmp_adv4", advance_table(4)),
        _c_array("uint8_t", "revec_cmp_prefix4", prefix_table(4), 4),
        "/* 2 x 64-bit lanes (pshufb) and 4 x 64-bit lanes as dword pairs (vpermd) */\n",
        _c_array("uint8_t", "revec_cmp_shuf2x64", byte_shuffle_table(2, 8), 16),
        _c_array("int32_t", "revec_cmp_perm4x64", dword_permute_table(4, 2), 32),
    ]
    return "".join(parts)

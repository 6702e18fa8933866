"""The UTS splittable random-number generator (SHA-1), as a runtime-library function.

UTS 2.1 (Olivier et al., "UTS: An Unbalanced Tree Search Benchmark", LCPC 2006) gives every
tree node a 20-byte state.  The root's state is the SHA-1 digest of 16 zero bytes followed by
the root id as a 4-byte big-endian integer; child ``i`` of a node has the SHA-1 digest of the
parent's 20 bytes followed by ``i`` as a 4-byte big-endian integer; a node's random number
is its state's last four bytes (big endian) with the top bit cleared.

Here a state is carried as five ``uint32`` words ``h0 .. h4`` (the digest's big-endian words),
so a task program keeps it in five scalar parameters::

    h0, h1, h2, h3, h4 = sha1_spawn(h0, h1, h2, h3, h4, i)   # child i's state
    r = h4 & 0x7FFFFFFF                                        # the node's random number

Three versions of ``sha1_spawn`` compute the same function: the Python one calls
:mod:`hashlib`; the numba and C ones are one SHA-1 compression of the single padded
64-byte block (24 message bytes) as straight-line code (80 rounds, constant message words
folded by the compilers): the C one generated below, the numba one emitted as LLVM IR by
the intrinsic of :mod:`revec.lib.sha1_ir`.  A plain-Python straight-line version is kept
for the tests.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

import numpy as np
from numba import njit

from revec.lib import LibFunction, register
from revec.lib.sha1_ir import H_INIT, ROUND_K, sha1_spawn_ir
from revec.lib.uts_root import uts_root_state as uts_root_state  # re-exported

MASK32 = 0xFFFFFFFF
POS_MASK = 0x7FFFFFFF


def sha1_spawn_py(h0: Any, h1: Any, h2: Any, h3: Any, h4: Any, i: Any
                  ) -> tuple[np.uint32, np.uint32, np.uint32, np.uint32, np.uint32]:
    """Child ``i``'s state of the node with state ``h0 .. h4`` (Python: :mod:`hashlib`)."""
    msg = struct.pack(">5Ii", int(h0), int(h1), int(h2), int(h3), int(h4),
                      int(np.int32(i)))
    w = struct.unpack(">5I", hashlib.sha1(msg).digest())
    return (np.uint32(w[0]), np.uint32(w[1]), np.uint32(w[2]), np.uint32(w[3]),
            np.uint32(w[4]))


# --------------------------------------------------------------------------- generator
def _message_words(c: bool) -> list[str]:
    """The 16 words of the padded block: 5 state words, the spawn index, 0x80 padding,
    zeros, and the bit length 192."""
    words = ["a0", "a1", "a2", "a3", "a4", "a5", "0x80000000"] + ["0"] * 8 + ["192"]
    if c:
        words = [w if w.startswith("a") else w + "u" for w in words]
    return words


def _compress_lines(c: bool) -> list[str]:
    """Straight-line statements of one SHA-1 compression from the initial hash values.

    Python form: values are non-negative ints below 2**32 held in int64, masked after
    every operation that can exceed 32 bits.  C form: ``uint32_t`` arithmetic."""
    m = "" if c else " & 0xFFFFFFFF"

    def rotl(x: str, n: int) -> str:
        if c:
            return f"(({x} << {n}) | ({x} >> {32 - n}))"
        return f"((({x} << {n}) | ({x} >> {32 - n})) & 0xFFFFFFFF)"

    decl = "uint32_t " if c else ""
    end = ";" if c else ""
    lines: list[str] = []
    w = _message_words(c)
    for t in range(16, 80):
        name = f"w{t}"
        lines.append(f"{decl}{name} = {rotl(f'({w[t - 3]} ^ {w[t - 8]} ^ {w[t - 14]} ^ {w[t - 16]})', 1)}{end}")
        w.append(name)
    a, b, cc, d, e = (f"{h}u" if c else str(h) for h in H_INIT)
    for t in range(80):
        if t < 20:
            f = f"({d} ^ ({b} & ({cc} ^ {d})))"
        elif t < 40 or t >= 60:
            f = f"({b} ^ {cc} ^ {d})"
        else:
            f = f"(({b} & {cc}) | ({b} & {d}) | ({cc} & {d}))"
        k = ROUND_K[t // 20]
        ks = f"{k}u" if c else str(k)
        tmp = f"t{t}"
        rb = f"r{t}"
        lines.append(f"{decl}{tmp} = ({rotl(a, 5)} + {f} + {e} + {ks} + {w[t]}){m}{end}")
        lines.append(f"{decl}{rb} = {rotl(b, 30)}{end}")
        a, b, cc, d, e = tmp, a, rb, cc, d
    finals = [a, b, cc, d, e]
    for j, (h, v) in enumerate(zip(H_INIT, finals)):
        hs = f"{h}u" if c else str(h)
        lines.append(f"{decl}o{j} = ({hs} + {v}){m}{end}")
    return lines


def _python_source() -> str:
    body = ["def sha1_spawn_unrolled(h0, h1, h2, h3, h4, i):",
            "    a0 = np.int64(h0)", "    a1 = np.int64(h1)", "    a2 = np.int64(h2)",
            "    a3 = np.int64(h3)", "    a4 = np.int64(h4)",
            "    a5 = np.int64(np.uint32(np.int32(i)))"]
    body += ["    " + line for line in _compress_lines(c=False)]
    body.append("    return (np.uint32(o0), np.uint32(o1), np.uint32(o2), np.uint32(o3), "
                "np.uint32(o4))")
    return "\n".join(body) + "\n"


C_SOURCE = "\n".join([
    # always_inline: inlined into the kernel's 32-lane loops, gcc vectorizes the
    # compression across threads (8 SHA-1s per AVX2 instruction)
    "static inline __attribute__((always_inline)) void revec_lib_sha1_spawn("
    "uint32_t a0, uint32_t a1, uint32_t a2, "
    "uint32_t a3, uint32_t a4, int32_t i,",
    "        uint32_t *out0, uint32_t *out1, uint32_t *out2, uint32_t *out3, uint32_t *out4)",
    "{",
    "    uint32_t a5 = (uint32_t)i;",
    *("    " + line for line in _compress_lines(c=True)),
    "    *out0 = o0; *out1 = o1; *out2 = o2; *out3 = o3; *out4 = o4;",
    "}",
]) + "\n"



def _load_unrolled() -> Any:
    """The generated straight-line compression as a plain Python function."""
    namespace: dict[str, Any] = {"np": np}
    exec(compile(_python_source(), "<revec.lib.uts sha1_spawn_unrolled>", "exec"), namespace)
    return namespace["sha1_spawn_unrolled"]


#: The generated straight-line compression as plain Python (tests compare it with hashlib).
sha1_spawn_unrolled = _load_unrolled()


@njit(cache=True)
def sha1_spawn_numba(h0: Any, h1: Any, h2: Any, h3: Any, h4: Any, i: Any) -> Any:
    """The numba version, callable from Python too; compiled code calls the intrinsic
    :func:`revec.lib.sha1_ir.sha1_spawn_ir` directly (inlined, so thread loops vectorize)."""
    return sha1_spawn_ir(h0, h1, h2, h3, h4, i)


_U32 = np.dtype(np.uint32)
sha1_spawn = register(LibFunction(
    name="sha1_spawn",
    arg_types=(_U32, _U32, _U32, _U32, _U32, np.dtype(np.int32)),
    result_types=(_U32, _U32, _U32, _U32, _U32),
    py=sha1_spawn_py,
    numba=sha1_spawn_ir,
    c_source=C_SOURCE,
))

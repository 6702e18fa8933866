"""The C spellings of types and constants: declaration specifiers and ``<stdint.h>``
names -> scalar types (x86-64 LP64, as gcc), a type's name in messages, and the values
and types of integer, character and floating constants (C99 6.4.4).  The conversions
between the types are C's type rules (:mod:`revec.frontend.rules.c99`).
"""

from __future__ import annotations

import numpy as np

from revec.frontend.rules.c99 import CBOOL, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64
from revec.ir import Ty

# <stdint.h> / <stdbool.h> / <stddef.h> names (declared by the front end's prelude)
TYPEDEFS: dict[str, Ty] = {
    "int8_t": I8, "int16_t": I16, "int32_t": I32, "int64_t": I64,
    "uint8_t": U8, "uint16_t": U16, "uint32_t": U32, "uint64_t": U64,
    "bool": CBOOL, "size_t": U64, "ptrdiff_t": I64, "intptr_t": I64, "uintptr_t": U64,
}

C_NAMES: dict[str, str] = {  # a type's C spelling in messages
    "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "long",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "unsigned", "uint64": "unsigned long",
    "float32": "float", "float64": "double", "bool": "_Bool",
}


def c_name(ty: Ty) -> str:
    return C_NAMES[ty.dtype.name]


def from_specifiers(names: list[str]) -> Ty | None:
    """The type of a specifier list (``['unsigned', 'long']``); None for ``void``.
    Raises ValueError (with the user-facing reason) for a type outside the subset."""
    if len(names) == 1 and names[0] in TYPEDEFS:
        return TYPEDEFS[names[0]]
    words = sorted(names)
    if words == ["void"]:
        return None
    if "long" in words and "double" in words:
        raise ValueError("long double is not supported; use double")
    if words == ["float"]:
        return F32
    if words == ["double"]:
        return F64
    if words == ["_Bool"]:
        return CBOOL
    unsigned = "unsigned" in words
    if unsigned and "signed" in words:
        raise ValueError("a type cannot be both signed and unsigned")
    rest = [w for w in words if w not in ("signed", "unsigned")]
    if any(w not in ("char", "short", "int", "long") for w in rest):
        bad = next(w for w in rest if w not in ("char", "short", "int", "long"))
        raise ValueError(f"type '{bad}' is not supported here")
    rest_set = [w for w in rest if w != "int"]
    if rest.count("int") > 1:
        raise ValueError("'int' given twice")
    if rest_set == ["char"] and "int" not in rest:
        return U8 if unsigned else I8
    if rest_set == ["short"]:
        return U16 if unsigned else I16
    if rest_set == []:
        return U32 if unsigned else I32
    if rest_set in (["long"], ["long", "long"]):
        return U64 if unsigned else I64
    raise ValueError(f"type '{' '.join(names)}' is not supported")


def int_literal(text: str) -> tuple[int, Ty]:
    """An integer constant's value and C type (C99 6.4.4.1). Raises ValueError."""
    t = text.lower()
    suffix = ""
    while t and t[-1] in "ul":
        suffix = t[-1] + suffix
        t = t[:-1]
    if suffix not in ("", "u", "l", "ul", "lu", "ll", "ull", "llu"):
        raise ValueError(f"integer suffix '{text[len(t):]}' is not valid")
    if t.startswith(("0x",)):
        value, decimal = int(t[2:], 16), False
    elif t.startswith("0b"):
        value, decimal = int(t[2:], 2), False
    elif len(t) > 1 and t.startswith("0"):
        value, decimal = int(t[1:], 8), False
    else:
        value, decimal = int(t), True
    unsigned = "u" in suffix
    longs = "l" in suffix
    order: list[Ty]
    if unsigned:
        order = [U64] if longs else [U32, U64]
    elif decimal:
        order = [I64] if longs else [I32, I64]
    else:
        order = [I64, U64] if longs else [I32, U32, I64, U64]
    for ty in order:
        info = np.iinfo(ty.dtype)
        if value <= info.max:
            return value, ty
    raise ValueError(f"integer constant {text} is too large for any integer type")


ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8,
           "f": 12, "v": 11, "?": 63}


def char_literal(text: str) -> int:
    """The ``int`` value of a character constant such as ``'a'`` or ``'\\n'``."""
    body = text[1:-1]
    if len(body) == 1 and body != "\\":
        value = ord(body)
    elif body.startswith("\\x"):
        value = int(body[2:], 16)
    elif body.startswith("\\") and body[1:].isdigit():
        value = int(body[1:], 8)
    elif body.startswith("\\") and len(body) == 2 and body[1] in ESCAPES:
        value = ESCAPES[body[1]]
    else:
        raise ValueError(f"character constant {text} is not supported")
    if value > 255:
        raise ValueError(f"character constant {text} is not supported")
    return value - 256 if value > 127 else value  # char is signed on x86-64


def float_literal(text: str) -> tuple[float, Ty]:
    t = text.lower()
    ty = F64
    if t.endswith("f"):
        ty, t = F32, t[:-1]
    elif t.endswith("l"):
        raise ValueError("long double constants are not supported")
    value = float.fromhex(t) if t.startswith("0x") else float(t)
    if ty == F32:
        value = float(np.float32(value))
    return value, ty

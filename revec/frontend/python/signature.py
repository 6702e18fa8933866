"""What a Python signature's annotations and defaults mean: numpy scalar types, and
parameter defaults checked against them (by ``revec check``, not first at ``revec run``).
"""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst
import numpy as np

from revec.errors import RevecError, SourceLoc
from revec.ir import Ty
from revec.lang import SCALAR_TYPES


def scalar_type_of(value: Any) -> type[np.generic] | None:
    """The numpy scalar type an annotation's value stands for (``int`` -> int64)."""
    try:
        return SCALAR_TYPES.get(value)
    except TypeError:
        return None


def param_ty(value: Any) -> Ty | None:
    t = scalar_type_of(value)
    return None if t is None else Ty(np.dtype(t))


def strong(ty: Ty) -> Ty:
    """The numpy type a Python scalar of ``ty`` stands for (int -> int64, float -> float64)."""
    return Ty(ty.dtype) if ty.weak else ty


def annotation_value(node: cst.BaseExpression, g: dict[str, Any]) -> Any:
    """The value a (dotted) name in an annotation has in the module's globals ``g``
    (None for anything else: a string annotation names nothing revec reads)."""
    match node:
        case cst.Name(value=v):
            return g[v] if v in g else getattr(builtins, v, None)
        case cst.Attribute(value=base, attr=cst.Name(value=attr)):
            return getattr(annotation_value(base, g), attr, None)
    return None


def check_default(name: str, ty: Ty, value: Any, loc: SourceLoc) -> None:
    """A parameter default must be a value of the parameter's type."""
    dt = ty.dtype
    if dt.kind in "iu":
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
            if isinstance(value, float | np.floating) and float(value).is_integer():
                value = int(value)
            else:
                raise RevecError(f"the default {value!r} of parameter '{name}' is not an "
                                 f"integer; '{name}' is {dt.name}", loc)
        info = np.iinfo(dt)
        if not info.min <= int(value) <= info.max:
            raise RevecError(f"the default {value} of parameter '{name}' is out of range "
                             f"for {dt.name} [{info.min}, {info.max}]", loc)
    elif dt.kind == "f":
        if not isinstance(value, int | float | np.integer | np.floating) or \
                isinstance(value, bool | np.bool_):
            raise RevecError(f"the default {value!r} of parameter '{name}' is not a "
                             f"number; '{name}' is {dt.name}", loc)
        if dt.itemsize < 8 and abs(float(value)) > float(np.finfo(dt).max):
            raise RevecError(f"the default {value} of parameter '{name}' is out of range "
                             f"for {dt.name}", loc)

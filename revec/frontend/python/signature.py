"""What a Python signature's annotations and defaults mean: numpy scalar types, and
parameter defaults checked against them (by ``revec check``, not first at ``revec run``).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

import libcst as cst
import numpy as np

from revec.errors import RevecError, SourceLoc
from revec.ir import SUPPORTED_DTYPES, Ty
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
    if isinstance(ty, ArrayArg):
        return ty
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


@dataclass(frozen=True)
class ArrayArg:
    """A helper argument that is a task-private list: its element type, capacity and
    whether it carries a length (the helper is specialised per such signature)."""

    ty: Ty
    capacity: int
    with_length: bool

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.ty.dtype

    def __str__(self) -> str:
        return f"list[{self.ty}] of {self.capacity}"


@dataclass(frozen=True)
class RootArray:
    """The type of an unannotated array parameter, from the root call's value: its
    element type, dimensions and what plain Python passes (a list or a tuple)."""

    dtype: np.dtype[Any]
    ndim: int
    sequence: str = "list"


# the type of an unannotated task parameter: a scalar's numpy type, or an array's
TypeSpec = np.dtype[Any] | RootArray


def value_spec(value: Any) -> TypeSpec | None:
    """The type a root call's value gives an unannotated parameter, as numba types
    it: a Python int is int64 (uint64 above int64's range), a float float64, a bool
    bool, a NumPy scalar its own type; a list, tuple or NumPy array an array of its
    elements' type (a list of Python ints: int64).  None: no type revec supports."""
    if isinstance(value, bool | np.bool_):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.uint64 if value > np.iinfo(np.int64).max else np.int64)
    if isinstance(value, float):
        return np.dtype(np.float64)
    if isinstance(value, np.generic):
        return value.dtype if value.dtype in SUPPORTED_DTYPES else None
    if not isinstance(value, list | tuple | np.ndarray) and hasattr(value, "__array__"):
        value = np.asarray(value)  # an array-like (NumPy's protocol)
    if isinstance(value, list | tuple | np.ndarray):
        try:
            arr = np.asarray(value)
        except ValueError:
            return None
        if arr.ndim == 0:
            return None
        dtype = np.dtype(np.int64) if arr.size == 0 and arr.dtype.kind == "f" and \
            not isinstance(value, np.ndarray) else arr.dtype
        if dtype not in SUPPORTED_DTYPES:
            return None
        return RootArray(dtype, arr.ndim, "tuple" if isinstance(value, tuple) else "list")
    return None


def used_as_array(function: cst.FunctionDef, name: str) -> bool:
    """The body indexes ``name`` (``name[i]``) or takes ``len(name)``: an array."""
    found = False

    class Visit(cst.CSTVisitor):
        def visit_Subscript(self, node: cst.Subscript) -> None:
            nonlocal found
            if isinstance(node.value, cst.Name) and node.value.value == name:
                found = True

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            if isinstance(node.func, cst.Name) and node.func.value == "len" and \
                    len(node.args) == 1 and isinstance(node.args[0].value, cst.Name) and \
                    node.args[0].value.value == name:
                found = True

    function.body.visit(Visit())
    return found


# annotations of a read-only array parameter: list[T], tuple[T, ...], Sequence[T]
# (nested for more dimensions), numpy.typing's NDArray[T]
_SEQUENCES = {"list", "List", "tuple", "Tuple", "Sequence", "MutableSequence"}


def array_annotation(node: cst.BaseExpression, g: dict[str, Any]
                     ) -> tuple[np.dtype[Any], int | None] | None:
    """The element type and dimensions an array annotation names (dimensions None:
    NDArray, which does not say; the uses decide), or None when ``node`` names no
    array."""
    if not isinstance(node, cst.Subscript):
        return None
    base = node.value
    bname = (base.value if isinstance(base, cst.Name)
             else base.attr.value if isinstance(base, cst.Attribute) else None)
    elems = [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]
    if not elems or len(elems) != len(node.slice):
        return None
    if bname in _SEQUENCES:
        if len(elems) == 2 and not isinstance(elems[1], cst.Ellipsis):
            return None  # tuple[int, int]: a fixed tuple, not an array
        inner = array_annotation(elems[0], g)
        if inner is not None:
            return inner[0], None if inner[1] is None else inner[1] + 1
        t = scalar_type_of(annotation_value(elems[0], g))
        return None if t is None else (np.dtype(t), 1)
    if bname == "NDArray":
        t = scalar_type_of(annotation_value(elems[0], g))
        return None if t is None else (np.dtype(t), None)
    return None


def output_annotation(node: cst.BaseExpression, g: dict[str, Any]
                      ) -> np.dtype[Any] | None:
    """The element type an output annotation names (``Output[np.int64]``,
    ``revec.Output[float]``), or None when ``node`` is no output annotation."""
    if not isinstance(node, cst.Subscript):
        return None
    base = node.value
    bname = (base.value if isinstance(base, cst.Name)
             else base.attr.value if isinstance(base, cst.Attribute) else None)
    if bname != "Output" or len(node.slice) != 1 or not isinstance(node.slice[0].slice,
                                                                     cst.Index):
        return None
    t = scalar_type_of(annotation_value(node.slice[0].slice.value, g))
    return None if t is None else np.dtype(t)


def indexed_dimensions(function: cst.FunctionDef, name: str) -> int:
    """How many indices the body puts on ``name`` (``a[i][j]``, ``a[i, j]``: 2; 1 when
    it is never indexed): the dimensions of an NDArray parameter."""
    best = 0

    class Visit(cst.CSTVisitor):
        def visit_Subscript(self, node: cst.Subscript) -> bool:
            nonlocal best
            count, base = 0, node
            while isinstance(base, cst.Subscript):
                count += len(base.slice)
                base = base.value  # type: ignore[assignment]
            if isinstance(base, cst.Name) and base.value == name:
                best = max(best, count)
                return False
            return True

    function.body.visit(Visit())
    return max(best, 1)


def names_in(function: cst.FunctionDef) -> set[str]:
    """Every plain name the function mentions."""
    out: set[str] = set()

    class Visit(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            out.add(node.value)

    function.visit(Visit())
    return out


def self_calls(function: cst.FunctionDef, task: str) -> list[list[cst.BaseExpression]]:
    """The argument lists of the function's own calls: ``spawn(task, ...)`` and
    ``task(...)`` (return-value recursion)."""
    out: list[list[cst.BaseExpression]] = []

    class Visit(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if isinstance(f, cst.Name) and f.value == "spawn" and node.args and isinstance(
                    node.args[0].value, cst.Name) and node.args[0].value.value == task:
                out.append([a.value for a in node.args[1:]])
            elif isinstance(f, cst.Name) and f.value == task:
                out.append([a.value for a in node.args])

    function.body.visit(Visit())
    return out


def is_view(node: cst.BaseExpression, name: str) -> bool:
    """``name`` itself or a slice of it (what a child gets of a read-only input)."""
    if isinstance(node, cst.Name):
        return node.value == name
    return (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name)
            and node.value.value == name and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Slice))


def length_bound(test: cst.BaseExpression, name: str) -> cst.BaseExpression | None:
    """``X`` where the is-base test ``test`` holds ``len(name) == X`` or
    ``len(name) >= X`` (either way round, possibly among ``or``/``and`` terms): once the
    list is X long the task is a base case, so a child built by appending one element
    to an inductive task's list holds at most X."""
    def is_len(n: cst.BaseExpression) -> bool:
        return (isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
                and n.func.value == "len" and len(n.args) == 1
                and isinstance(n.args[0].value, cst.Name) and n.args[0].value.value == name)

    match test:
        case cst.BooleanOperation(left=a, right=b):
            return length_bound(a, name) or length_bound(b, name)
        case cst.Comparison(left=left, comparisons=[c]):
            op, right = c.operator, c.comparator
            if is_len(left) and isinstance(op, (cst.Equal, cst.GreaterThanEqual)):
                return right
            if is_len(right) and isinstance(op, (cst.Equal, cst.LessThanEqual)):
                return left
    return None

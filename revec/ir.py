"""The checked task program: a small typed IR with source positions.

The front end (:mod:`revec.frontend`) builds it from libcst trees after checking
every rule of the language; the transforms and back ends only ever see this
form.  Every expression carries its numpy result type; operands of arithmetic
are already converted to the type the operation computes in (NumPy 2 / NEP 50
promotion), so a back end only has to emit fixed-width operations and casts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from revec.errors import SourceLoc

DType = np.dtype[Any]


# --------------------------------------------------------------------------- types
@dataclass(frozen=True)
class Ty:
    """A value type.  ``weak`` marks Python scalars (literals, ``int(...)``, range
    indices): under NEP 50 they take the type of a typed operand."""

    dtype: DType
    weak: bool = False

    @property
    def kind(self) -> str:
        return self.dtype.kind

    def __str__(self) -> str:
        if self.weak:
            return {"i": "int", "u": "int", "f": "float", "b": "bool"}[self.kind]
        return self.dtype.name


BOOL = Ty(np.dtype(np.bool_))
WEAK_INT = Ty(np.dtype(np.int64), weak=True)
WEAK_FLOAT = Ty(np.dtype(np.float64), weak=True)
WEAK_BOOL = Ty(np.dtype(np.bool_), weak=True)

SUPPORTED_DTYPES = tuple(
    np.dtype(t)
    for t in (
        np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
        np.float32, np.float64, np.bool_,
    )
)


# --------------------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Expr:
    loc: SourceLoc
    ty: Ty


@dataclass(frozen=True)
class Const(Expr):
    value: int | float | bool


@dataclass(frozen=True)
class Var(Expr):
    """A task parameter (frame field), local variable or loop index."""

    name: str


@dataclass(frozen=True)
class ArrayRef(Expr):
    """``A[i]`` / ``A[i, j]`` on a module-level read-only numpy array."""

    array: str
    indices: tuple[Expr, ...]


@dataclass(frozen=True)
class Cast(Expr):
    """Conversion to ``ty`` with C-cast semantics (wraparound, truncation toward 0)."""

    operand: Expr


@dataclass(frozen=True)
class BinOp(Expr):
    """Arithmetic/bitwise op; both operands already have the computing type ``ty``
    (for ``/`` the float type), result wraps at ``ty``'s width."""

    op: str  # + - * / // % ** << >> & | ^
    left: Expr
    right: Expr


@dataclass(frozen=True)
class UnaryOp(Expr):
    op: str  # - + ~ not
    operand: Expr


@dataclass(frozen=True)
class Compare(Expr):
    """``left op right`` with both operands in a common comparison type."""

    op: str  # < <= > >= == !=
    left: Expr
    right: Expr


@dataclass(frozen=True)
class BoolOp(Expr):
    op: str  # and / or (short-circuit; operands are bool)
    left: Expr
    right: Expr


@dataclass(frozen=True)
class IfExp(Expr):
    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(frozen=True)
class Call(Expr):
    """Call of a module-level helper function (single result)."""

    func: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class LibCall(Expr):
    """Call of a :mod:`revec.lib` function; ``ty`` is its first result type."""

    func: str
    args: tuple[Expr, ...]
    result_tys: tuple[Ty, ...]


@dataclass(frozen=True)
class Recur(Expr):
    """A call of the task itself whose value is used (``fib(n - 1) + fib(n - 2)``);
    ``ty`` is the task's result type, ``args`` are converted to the parameter types.
    Only a value-returning task (``TaskDef.result_ty``) holds these; the pass
    :mod:`revec.transforms.returns` turns them into spawns and reductions, so the
    schedules and back ends never see one."""

    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Pick(Expr):
    """Element ``index`` of a task-private array held as scalars (frame fields or
    locals, ``elements``, all of type ``ty``).  An index outside the elements is the
    program's error (unchecked, as an array read).  A back end may print it as an
    indexed load (C: a compound literal; Python: a tuple) or a select chain."""

    index: Expr
    elements: tuple[Var, ...]


@dataclass(frozen=True)
class BoundRead(Expr):
    """The value of the bound ``reducer`` (a max/min reducer with ``bound`` set) as the
    current block started: a back end's accumulator at block start, combined with the
    value the other workers published; the sequential reference's current value.  Only
    a pruning condition reads it (:mod:`revec.transforms.bounds` checks)."""

    reducer: str


@dataclass(frozen=True)
class MathCall(Expr):
    """A numpy/builtin math function: sqrt exp log sin cos floor ceil abs minimum maximum."""

    func: str
    args: tuple[Expr, ...]


# --------------------------------------------------------------------------- statements
@dataclass(frozen=True)
class Stmt:
    loc: SourceLoc


@dataclass(frozen=True)
class Assign(Stmt):
    target: str
    value: Expr  # already cast to the local's type


@dataclass(frozen=True)
class Unpack(Stmt):
    """``a, b = f(...)`` for a helper or library call returning a tuple."""

    targets: tuple[str, ...]
    call: Call | LibCall
    target_tys: tuple[Ty, ...]


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]


@dataclass(frozen=True)
class For(Stmt):
    """``for var in range(start, stop, step)``; ``var`` is an int64 (Python int)."""

    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class While(Stmt):
    cond: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Break(Stmt):
    pass


@dataclass(frozen=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True)
class Return(Stmt):
    """In a task: ends the thread.  In a helper: returns ``values`` (one or a tuple)."""

    values: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class ExprStmt(Stmt):
    value: Expr


@dataclass(frozen=True)
class Spawn(Stmt):
    """``spawn(task, args...)``: args already converted to the parameter types."""

    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Store(Stmt):
    """``array[i, ...] = value`` on an *output* array (an :class:`InputDecl` with
    ``output``): the element a task writes and no other task writes.  ``indices`` are
    int64, one per dimension, the first already shifted by the task's view offset;
    ``value`` is already converted to the array's element type.  Outputs are never
    read, so the order of two tasks' stores does not matter (docs/design.md)."""

    array: str
    indices: tuple[Expr, ...]
    value: Expr


@dataclass(frozen=True)
class Reduce(Stmt):
    reducer: str
    value: Expr  # already converted to the reducer's type


# --------------------------------------------------------------------------- program
@dataclass(frozen=True)
class Param:
    name: str
    ty: Ty
    loc: SourceLoc
    default: Any = None
    has_default: bool = False
    # a frame field added by a pass (a path weight or path sum), not a user argument;
    # the root gets ``default``
    hidden: bool = False


@dataclass(frozen=True)
class ReducerDecl:
    name: str
    dtype: DType
    op: str  # sum / min / max
    loc: SourceLoc
    hidden: bool = False  # added by a pass (a task's result), not a module-level Reducer
    # a bound for branch-and-bound: tasks only raise (max) or lower (min) it and read it
    # to prune (ir.BoundRead); never reported as a result.  ``start``: its initial value
    # (a C global's initializer), which then stands for the identity
    bound: bool = False
    start: int | float | None = None

    def identity(self) -> int | float | bool:
        if self.start is not None:
            return self.start
        if self.op == "sum":
            zero: int | float | bool = self.dtype.type(0).item()
            return zero
        if self.dtype.kind == "f":
            return float("inf") if self.op == "min" else float("-inf")
        if self.dtype.kind == "b":
            return self.op == "min"
        info = np.iinfo(self.dtype)
        return int(info.max if self.op == "min" else info.min)


@dataclass(frozen=True)
class ArrayParam:
    """A task parameter that is a read-only array (an *input*): not a frame field.

    Reads are :class:`ArrayRef` s of the program array ``array`` (supplied by the root
    call, see :attr:`Program.inputs`); what a child is given (C ``a + k``, Python
    ``a[k:j]``) is carried by the hidden int64 frame fields ``offset`` (where the task's
    view starts in the whole array, in elements of the first dimension) and, for
    Python's slices, ``end`` (where it stops: ``len(a)`` is ``end - offset``).  Passed on
    unchanged by every spawn they are invariant (one value for the whole tree)."""

    name: str  # the user's parameter name
    position: int  # its index among the user's arguments
    array: str  # its key in Program.inputs / Program.arrays (structs: their common prefix)
    offset: str
    end: str | None
    loc: SourceLoc
    output: bool = False  # an output array: written (ir.Store), never read
    # an array of C structs, read as a structure of arrays: (field, its input's key) in
    # declaration order, all sharing the one ``offset``; empty for an array of scalars
    fields: tuple[tuple[str, str], ...] = ()

    @property
    def keys(self) -> tuple[str, ...]:
        """The program arrays (inputs) the parameter stands for."""
        return tuple(k for _, k in self.fields) if self.fields else (self.array,)


@dataclass(frozen=True)
class PrivateArray:
    """A task parameter that is a task-private array (a board copied from the parent
    and changed): part of the frame as ``capacity`` scalar fields ``fields`` (hidden
    parameters; the root call's array fills them, zero-padded) and, for a Python list,
    the hidden field ``length``.  ``capacity`` is a constant or the root value of the
    parameter ``bound`` (the program is then specialised for it when bound)."""

    name: str
    position: int
    ty: Ty
    capacity: int
    fields: tuple[str, ...]
    length: str | None
    loc: SourceLoc
    bound: str | None = None
    sequence: str = "list"  # what plain Python passes: "list" or "tuple" (Python tasks)


@dataclass(frozen=True)
class InputDecl:
    """A read-only array the root call supplies (a task's array parameter, or a C
    file-scope pointer the caller fills).  ``ndim`` dimensions of ``dtype``; a C array
    of structs is one input per field (``field``: the struct field, SoA)."""

    name: str
    dtype: DType
    ndim: int
    loc: SourceLoc
    task: str | None = None  # the task whose parameter it is (None: a global)
    param: str | None = None  # the parameter's name (a global: its name in the file)
    field: str | None = None
    # an output array: tasks write it (ir.Store) at elements no two tasks share, never
    # read it; the run hands it back to the caller (revec/frontend/outputs.py)
    output: bool = False


@dataclass(frozen=True)
class TaskDef:
    name: str
    params: tuple[Param, ...]
    locals: dict[str, Ty]
    is_base: Expr
    base: tuple[Stmt, ...]
    inductive: tuple[Stmt, ...]
    max_spawns: int | None  # static bound on spawns per task, None if data-dependent
    loc: SourceLoc
    # statements before the is-base test (locals both cases may use); removed by
    # revec.transforms.prologue before the schedules see the task
    prologue: tuple[Stmt, ...] = ()
    # a value-returning task: its result type while ``Return``s carry values and
    # ``Recur``s appear; revec.transforms.returns then sets ``result`` to the hidden
    # reducer that holds the root's returned value
    result_ty: Ty | None = None
    result: str | None = None
    # the parameters that are read-only arrays (inputs), in the user's argument order
    arrays: tuple[ArrayParam, ...] = ()
    # the parameters that are task-private arrays (boards), in argument order
    private: tuple[PrivateArray, ...] = ()
    # locals whose IR name is not the source's (a C block-scoped local renamed
    # ``x_2``, a reserved word ``with_c``): IR name -> source name, for messages
    source_names: dict[str, str] = field(default_factory=dict)

    @property
    def arity(self) -> int:
        """How many arguments a caller passes (scalars and arrays)."""
        return len(self.user_params) + len(self.arrays) + len(self.private)

    @property
    def user_params(self) -> tuple[Param, ...]:
        """The parameters a caller passes (without the hidden frame fields)."""
        return tuple(p for p in self.params if not p.hidden)


@dataclass(frozen=True)
class HelperDef:
    name: str
    params: tuple[Param, ...]
    locals: dict[str, Ty]
    body: tuple[Stmt, ...]
    result_tys: tuple[Ty, ...]
    loc: SourceLoc


@dataclass(eq=False)
class Program:
    """A checked program: everything the transforms and back ends need."""

    path: str
    source: str
    tasks: dict[str, TaskDef]
    helpers: dict[str, HelperDef]  # in dependency order (callees first)
    reducers: dict[str, ReducerDecl]
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    libs: tuple[str, ...] = ()
    module: Any = None  # the loaded Python module (sequential reference)
    # arrays the root call supplies (their placeholder in ``arrays`` until bound:
    # revec.frontend.inputs.bind_inputs puts the caller's arrays there)
    inputs: dict[str, InputDecl] = field(default_factory=dict)
    # the root call's task-private arrays by parameter name, once bound (the plain
    # reference starts from them; the fields' root values are their elements)
    boards: dict[str, np.ndarray] = field(default_factory=dict)
    # the same program checked again with the capacities of task-private arrays bounded
    # by parameters set to root values: ``specialize({(task, param): value})`` (set by
    # the front end; None: no such arrays can be specialised)
    specialize: Any = None
    # a Python task's unannotated parameters: task -> parameter -> the type the program
    # is checked with (a numpy dtype, or an array's type: the root call's, from its
    # values; revec.frontend.python.roots), and for those the value-range analysis
    # narrowed, the root call's own type (what the plain Python reference computes in)
    untyped: dict[str, dict[str, Any]] = field(default_factory=dict)
    root_types: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def outputs(self) -> dict[str, InputDecl]:
        """The output arrays among :attr:`inputs` (written by tasks, handed back)."""
        return {k: d for k, d in self.inputs.items() if d.output}


def fresh_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base2``, ``base3``, ... : the first not in ``taken`` (names the
    front end and the passes add: hidden fields, reducers, helpers, locals)."""
    out, i = base, 1
    while out in taken:
        i += 1
        out = f"{base}{i}"
    return out


def speculable(e: Expr) -> bool:
    """Safe to evaluate where the program would not: no memory reads, no calls.
    Iterative: a 1,000-term expression nests deeper than Python's recursion limit."""
    stack = [e]
    while stack:
        x = stack.pop()
        match x:
            case ArrayRef() | Call() | LibCall() | Pick():
                return False
            case Const() | Var() | BoundRead():
                continue
        stack += _children(x)
    return True


def _children(e: Expr) -> list[Expr]:
    out: list[Expr] = []
    for v in vars(e).values():
        if isinstance(v, Expr):
            out.append(v)
        elif isinstance(v, tuple):
            out += [x for x in v if isinstance(x, Expr)]
    return out


def spawn_bound(stmts: tuple[Stmt, ...] | list[Stmt]) -> int | None:
    """Upper bound on the spawns one task executes, or None when data-dependent."""
    total = 0
    for s in stmts:
        match s:
            case Spawn():
                total += 1
            case If(then=then, orelse=orelse):
                a, b = spawn_bound(then), spawn_bound(orelse)
                if a is None or b is None:
                    return None
                total += max(a, b)
            case For(start=start, stop=stop, step=step, body=body):
                inner = spawn_bound(body)
                if inner is None:
                    return None
                if inner:
                    if not (isinstance(start, Const) and isinstance(stop, Const)
                            and isinstance(step, Const)):
                        return None
                    trips = len(range(int(start.value), int(stop.value), int(step.value)))
                    total += trips * inner
            case While(body=body):
                inner = spawn_bound(body)
                if inner is None or inner:
                    return None
    return total


def walk_nodes(node: Expr | Stmt | tuple[Any, ...] | list[Any]) -> Iterator[Expr | Stmt]:
    """Every statement and expression in ``node`` (a node, or a tuple or list of them),
    ``node`` itself included, in preorder.  Iterative: a 1,000-term expression nests
    deeper than Python's recursion limit allows a recursive walk."""
    stack: list[Any] = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, Expr | Stmt):
            yield x
            stack.extend(reversed(vars(x).values()))
        elif isinstance(x, tuple | list):
            stack.extend(reversed(x))


def walk_exprs(e: Expr) -> list[Expr]:
    """``e`` and every expression inside it (preorder; :func:`walk_nodes`, so no
    recursion limit)."""
    return [n for n in walk_nodes(e) if isinstance(n, Expr)]


def param_boards(params: tuple[Param, ...], body: tuple[Stmt, ...]
                 ) -> list[tuple[str, ...]]:
    """The boards a helper reads by index whose elements are all its parameters (a
    board passed to it): each can be built once at the helper's entry."""
    names = {p.name for p in params}
    out: list[tuple[str, ...]] = []
    for n in walk_nodes(body):
        if isinstance(n, Pick):
            key = tuple(x.name for x in n.elements)
            if key not in out and all(k in names for k in key):
                out.append(key)
    return out


def falls_through(stmts: tuple[Stmt, ...] | list[Stmt]) -> bool:
    """May running ``stmts`` reach their end (no ``return`` on some path)?  Conservative:
    True unless every path returns (an ``if`` whose branches both return, a ``while``
    whose condition is the constant true and whose body never breaks out of it)."""
    for s in stmts:
        if isinstance(s, Return):
            return False
        if isinstance(s, If) and not falls_through(s.then) and not falls_through(s.orelse):
            return False
        if (isinstance(s, While) and isinstance(s.cond, Const) and s.cond.value
                and not _breaks(s.body)):
            return False
    return True


def _breaks(stmts: tuple[Stmt, ...] | list[Stmt]) -> bool:
    """A ``break`` of the loop whose body is ``stmts`` (not of a loop inside it)."""
    for s in stmts:
        if isinstance(s, Break):
            return True
        if isinstance(s, If) and (_breaks(s.then) or _breaks(s.orelse)):
            return True
    return False

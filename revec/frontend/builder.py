"""The IR builder shared by the Python and the Cilk C front ends.

As in Clang, where the parsers of C and Objective-C call one semantic builder
(``Sema``), the syntax adapters (:mod:`revec.frontend.python.lower`,
:mod:`revec.frontend.c.lower`) walk their own trees and call this builder for every
decision that is not syntax: the section a statement is in and what it may do there
(spawn, reduce, recurse, return), the conversion of arguments to parameter types, the
locals and their types (with the fixpoint that settles them), the helpers lowered so
far, the library functions and module arrays a program uses, and the typed IR of each
operation (through the language's :class:`revec.frontend.rules.TypeRules`).  A
language only words its diagnostics (:class:`Spelling`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NoReturn, TypeVar

import numpy as np

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.frontend.rules import TypeRuleError, TypeRules
from revec.frontend.shape import IfParts, TaskShape, shape_breaker, split_task
from revec.ir import Ty
from revec.lib import LibFunction

T = TypeVar("T")
DType = np.dtype[Any]
INT64 = Ty(np.dtype(np.int64))
# a task's prologue, is-base test, base case and inductive case
Cases = tuple[tuple[ir.Stmt, ...], ir.Expr, tuple[ir.Stmt, ...], tuple[ir.Stmt, ...]]
FIXPOINT_ROUNDS = 12


@dataclasses.dataclass(frozen=True)
class Spelling:
    """How a language words the builder's diagnostics."""

    is_base: str  # the is-base test as the language writes it: "if <is-base>:"
    task_shape: str  # what a task body must look like
    cast: Callable[[Ty], str]  # an explicit conversion to a type: "np.int64(...)"
    recursive_helper: str  # a helper calls itself (through others): "... {name} ..."


@dataclasses.dataclass(frozen=True)
class ArrayVar:
    """A task-private array as the builder lowers it: scalar ``elements`` (frame fields
    of a parameter, or locals) of type ``ty``, and the IR name of its length (Python
    lists; None: C arrays, whose length is their capacity)."""

    name: str
    ty: Ty
    elements: tuple[str, ...]
    length: str | None


class ProgramBuilder:
    """What lowering one function needs of the whole program: where its syntax nodes
    are (for located errors), the helpers lowered so far, and the module arrays and
    library functions the program uses."""

    def __init__(self, locate: Callable[[Any], SourceLoc]) -> None:
        self.locate = locate
        self.helpers: dict[str, ir.HelperDef] = {}  # callees first
        self.lowering: list[str] = []  # the helpers being lowered (calling one recurses)
        self.arrays: dict[str, np.ndarray] = {}
        self.inputs: dict[str, ir.InputDecl] = {}  # arrays the root call supplies
        # capacities of task-private arrays bounded by a parameter: (task, parameter) ->
        # its root value (a program specialised for a root call; empty when checking)
        self.sizes: dict[tuple[str, str], int] = {}
        self.libs: set[str] = set()

    def error(self, message: str, node: Any) -> NoReturn:
        raise RevecError(message, self.locate(node))

    def helper(self, key: str, name: str, lower: Callable[[], ir.HelperDef]) -> ir.HelperDef:
        """The helper (specialization) ``key`` of the function ``name``, lowered by
        ``lower`` on first use.  The caller rejects a call of a helper that is still
        being lowered (``name in self.lowering``: helpers do not recurse)."""
        if key in self.helpers:
            return self.helpers[key]
        self.lowering.append(name)
        try:
            helper = lower()
        finally:
            self.lowering.pop()
        if helper.name != key:
            helper = dataclasses.replace(helper, name=key)
        self.helpers[key] = helper
        return helper


class FunctionBuilder:
    """Builds the IR of one task or helper function.  A syntax adapter subclasses it,
    walks its tree and implements :meth:`expr`, :meth:`condition` and :meth:`stmt` (the
    lowering of one node); the nodes it passes to the builder only locate errors."""

    spelling: ClassVar[Spelling]

    def __init__(self, ctx: ProgramBuilder, rules: TypeRules, name: str, kind: str) -> None:
        self.ctx = ctx
        self.rules = rules
        self.name = name
        self.kind = kind  # task / helper (/ const: a C file-scope initializer)
        self.section = kind  # prologue / base / inductive / helper while lowering
        self.params: tuple[ir.Param, ...] = ()
        # a task's read-only array parameters (inputs), in argument order
        self.array_params: tuple[ir.ArrayParam, ...] = ()
        # a task's private array parameters (boards), and every private array in scope
        # (parameters and locals) by the key the adapter looks them up with
        self.private_params: tuple[ir.PrivateArray, ...] = ()
        self.array_vars: dict[str, ArrayVar] = {}
        self.store_at: str | None = None  # see store_index
        # statements a statement's lowering needs first (a private array built for a
        # spawn's argument); block() puts them before the statement
        self.pre: list[ir.Stmt] = []
        self.locals: dict[str, Ty] = {}  # IR name -> type (parameters included)
        self.changed = False  # a local's type changed in this round of the fixpoint

    def expr(self, node: Any) -> ir.Expr:
        raise NotImplementedError

    def condition(self, node: Any) -> ir.Expr:
        """The expression ``node`` as a condition (a bool)."""
        raise NotImplementedError

    def stmt(self, node: Any) -> list[ir.Stmt]:
        """The IR of one statement (none, one or several statements)."""
        raise NotImplementedError

    def block(self, nodes: Sequence[Any]) -> tuple[ir.Stmt, ...]:
        """The statements ``nodes``, in order (each after the statements its lowering
        asked to come first, :attr:`pre`)."""
        out: list[ir.Stmt] = []
        outer, self.pre = self.pre, []
        try:
            for node in nodes:
                stmts = self.stmt(node)
                out.extend(self.pre)
                self.pre = []
                out.extend(stmts)
        finally:
            self.pre = outer
        return tuple(out)

    # ------------------------------------------------------------------ diagnostics
    def error(self, message: str, node: Any) -> NoReturn:
        self.ctx.error(message, node)

    def loc(self, node: Any) -> SourceLoc:
        return self.ctx.locate(node)

    def typed(self, rule: Callable[[], T], node: Any) -> T:
        """The result of a type rule; its error is located at ``node``."""
        try:
            return rule()
        except TypeRuleError as err:
            self.error(str(err), node)

    # ------------------------------------------------------------------ task shape
    def task_shape(self, stmts: Sequence[Any], function: Any,
                   as_if: Callable[[Any], IfParts[Any, Any] | None],
                   ends_with_return: Callable[[Sequence[Any]], bool]) -> TaskShape[Any, Any]:
        """The task body's prologue, is-base test, base and inductive cases
        (:mod:`revec.frontend.shape`); no such shape is an error at the first statement."""
        shape = split_task(stmts, as_if, ends_with_return)
        if shape is None:
            breaker = shape_breaker(stmts, as_if)
            if breaker is None:
                self.error(f"{self.spelling.task_shape}; this body has no is-base test",
                           stmts[0] if stmts else function)
            self.error(f"{self.spelling.task_shape}; {breaker[1]}", breaker[0])
        return shape

    def lower_cases(self, shape: TaskShape[Any, Any]) -> Cases:
        """The task's prologue, is-base test, base case and inductive case, each lowered
        in its section (what a statement may do there is checked by the section)."""
        self.section = "prologue"
        prologue = self.block(shape.prologue)
        test = self.condition(shape.test)
        self.section = "base"
        base = self.base_case(shape.base)
        self.section = "inductive"
        inductive = self.inductive_case(shape)
        return prologue, test, base, inductive

    def base_case(self, nodes: Sequence[Any]) -> tuple[ir.Stmt, ...]:
        return self.block(nodes)

    def inductive_case(self, shape: TaskShape[Any, Any]) -> tuple[ir.Stmt, ...]:
        return self.block(shape.inductive)

    # ------------------------------------------------------------------ sections
    def not_before_test(self, what: str, verb: str, node: Any, hint: str = "") -> None:
        """``what`` cannot happen in the prologue (it would ``verb``)."""
        if self.section == "prologue":
            self.error(f"{what} before the is-base test: the prologue (statements before "
                       f"'{self.spelling.is_base}') cannot {verb}{hint}", node)

    def not_in_base(self, what: str, verb: str, node: Any) -> None:
        """``what`` (which would ``verb``) cannot be in the base case: the branch of the
        is-base test, which the user may have meant as the recursive branch."""
        if self.section == "base":
            self.error(f"{what} in the first branch of the is-base test "
                       f"'{self.spelling.is_base}' (the first 'if' whose branch ends with "
                       "'return', or a final if/else): revec takes that branch as the base "
                       f"case, which must not {verb}; test for the base case first and "
                       f"{verb} after it", node)

    def may_recurse(self, what: str, node: Any) -> None:
        """A recursive call (a spawn, or a call whose value is used) is only allowed in
        the inductive case."""
        self.not_in_base(what, "recurse", node)
        self.not_before_test(what, "recurse", node)

    def not_recursive(self, helper: str, node: Any) -> None:
        """A call of a helper that is being lowered is recursion, which helpers cannot do
        (only tasks recurse)."""
        if helper in self.ctx.lowering:
            self.error(self.spelling.recursive_helper.format(name=helper), node)

    # ------------------------------------------------------------------ locals
    def function_locals(self) -> dict[str, Ty]:
        """The locals without the parameters (a TaskDef's or HelperDef's ``locals``)."""
        params = {p.name for p in self.params}
        return {k: v for k, v in self.locals.items() if k not in params}

    def merge_local(self, name: str, ty: Ty, node: Any) -> Ty:
        """Assign a ``ty`` value to the local ``name`` whose type is inferred from its
        assignments: a first assignment gives it ``ty``; a Python scalar (weak) value
        joins the local's type; any other type change is an error (every local has one
        type).  A change marks the fixpoint's round as not settled."""
        if any(ap.name == name for ap in self.array_params):
            self.error(f"'{name}' is a read-only input array; it cannot be assigned", node)
        old = self.locals.get(name)
        if old is None:
            self.locals[name] = ty
            self.changed = True
            return ty
        is_param = any(p.name == name for p in self.params)
        if old.weak or ty.weak or old == ty:
            new = self.rules.join(old, ty)
            if is_param and new != old:
                self.error(f"parameter '{name}' is {old}; assigning a {ty} value would change "
                           "its type (use a new local name)", node)
            if new != old:
                self.locals[name] = new
                self.changed = True
            return self.locals[name]
        self.error(f"'{name}' holds {old} values but is assigned a {ty} value here; every "
                   f"local has one type: convert explicitly, e.g. {self.spelling.cast(old)}",
                   node)

    def fixpoint(self, lower_body: Callable[[], T], function: Any) -> T:
        """Lower the body until no local's type changes, then once more with the settled
        types (that last lowering is the result)."""
        for _ in range(FIXPOINT_ROUNDS):
            self.changed = False
            self.start_round()
            lower_body()
            if not self.changed:
                self.start_round()
                return lower_body()
        raise RevecError("the types of the local variables do not settle", self.loc(function))

    def start_round(self) -> None:
        """Forget what one round of the fixpoint collected (a subclass's hook)."""

    # ------------------------------------------------------------------ typed operations
    def convert(self, e: ir.Expr, ty: Ty) -> ir.Expr:
        return self.rules.convert(e, ty)

    def truth(self, e: ir.Expr) -> ir.Expr:
        return self.rules.truth(e)

    def arith(self, op: str, a: ir.Expr, b: ir.Expr, node: Any) -> ir.Expr:
        return self.typed(lambda: self.rules.arith(op, a, b, self.loc(node)), node)

    def compare(self, op: str, a: ir.Expr, b: ir.Expr, node: Any) -> ir.Expr:
        return self.typed(lambda: self.rules.compare(op, a, b, self.loc(node)), node)

    def unary(self, op: str, a: ir.Expr, node: Any) -> ir.Expr:
        return self.typed(lambda: self.rules.unary(op, a, self.loc(node)), node)

    def logical(self, op: str, a: ir.Expr, b: ir.Expr, node: Any) -> ir.Expr:
        return self.typed(lambda: self.rules.logical(op, a, b, self.loc(node)), node)

    def select(self, cond: ir.Expr, a: ir.Expr, b: ir.Expr, node: Any) -> ir.Expr:
        return self.typed(lambda: self.rules.select(cond, a, b, self.loc(node)), node)

    def arguments(self, nodes: Sequence[Any], tys: Sequence[Ty]) -> tuple[ir.Expr, ...]:
        """Each argument lowered and converted to its parameter's type, one after the
        other (an earlier argument's error is the one reported)."""
        return tuple(self.convert(self.expr(n), t) for n, t in zip(nodes, tys))

    # ------------------------------------------------------------------ array parameters
    def arity(self) -> int:
        """How many arguments a call of this function passes (scalars and arrays)."""
        return (len([p for p in self.params if not p.hidden]) + len(self.array_params)
                + len(self.private_params))

    def array_param(self, name: str, position: int, dtype: DType | None, ndim: int,
                    node: Any, *, with_end: bool, taken: set[str],
                    fields: Sequence[tuple[str, DType]] = (), output: bool = False
                    ) -> ir.ArrayParam:
        """The task parameter ``name`` (argument ``position``) is a read-only array of
        ``ndim`` dimensions of ``dtype``: an input of the program (a placeholder in the
        program's arrays until the root call binds it) and one or two hidden int64
        frame fields, its view's offset and (``with_end``: Python slices) end, named apart
        from ``taken`` (every name the function uses).  The adapter appends
        :meth:`array_fields` after the scalar parameters.  An array of C structs
        (``fields``: each field's name and type, ``dtype`` None) is one input per field,
        ``in_<task>_<name>_<field>``, sharing the one offset field."""
        if self.kind != "task":
            if output:
                self.error(f"parameter '{name}' is an output array; only a task writes "
                           "outputs (a helper returns the value, the task stores it)", node)
            self.error(f"parameter '{name}' is an array; only a task's parameters may be "
                       "arrays so far (pass a helper the elements it needs)", node)
        for what, dt in ([(f"field '{f}' of", d) for f, d in fields] if fields
                         else [("", dtype)]):
            if np.dtype(dt) not in ir.SUPPORTED_DTYPES:
                self.error(f"{what}array parameter '{name}' has elements of type "
                           f"{np.dtype(dt)}, which revec does not support", node)
        if ndim > 1 and with_end is False:
            self.error(f"array parameter '{name}' has {ndim} dimensions; a C pointer "
                       "parameter has one (index it as a[i * n + j])", node)
        prefix = f"in_{self.name}_{name}"
        keyed = ([(f"{prefix}_{f}", d, f) for f, d in fields] if fields
                 else [(prefix, dtype, None)])
        for key, _, f in keyed:
            old = self.ctx.inputs.get(key)
            if (key in self.ctx.arrays and old is None) or (old is not None and (
                    old.task, old.param, old.field) != (self.name, name, f)):
                self.error(f"the input array of parameter '{name}' would be named '{key}', "
                           "which the program already uses", node)
        loc = self.loc(node)
        for key, dt, f in keyed:
            self.ctx.inputs[key] = ir.InputDecl(key, np.dtype(dt), ndim, loc, self.name, name,
                                                f, output=output)
            self.ctx.arrays[key] = np.zeros((0,) * ndim, dt)
        taken = taken | {p.name for p in self.params} | set(self.locals) | {
            f for a in self.array_params for f in (a.offset, a.end) if f is not None}
        off = ir.fresh_name(f"{name}_off", taken)
        end = ir.fresh_name(f"{name}_end", taken | {off}) if with_end else None
        ap = ir.ArrayParam(name, position, prefix, off, end, loc, output=output,
                           fields=tuple((f, key) for key, _, f in keyed if f is not None))
        self.array_params += (ap,)
        return ap

    def array_fields(self) -> list[ir.Param]:
        """The hidden frame fields of the array parameters (offset, end), in order; the
        root's offset is 0 and its end the array's length (set when it is bound)."""
        out = []
        for ap in self.array_params:
            out.append(ir.Param(ap.offset, INT64, ap.loc, 0, True, hidden=True))
            if ap.end is not None:
                out.append(ir.Param(ap.end, INT64, ap.loc, 0, True, hidden=True))
        return out

    def view_length(self, ap: ir.ArrayParam, node: Any) -> ir.Expr:
        """``len(a)``: the length of the task's view of the input ``a``."""
        loc = self.loc(node)
        assert ap.end is not None
        return ir.BinOp(loc, INT64, "-", ir.Var(loc, INT64, ap.end), ir.Var(loc, INT64, ap.offset))

    def input_element(self, ap: ir.ArrayParam, indices: Sequence[Any], node: Any,
                      key: str | None = None) -> ir.ArrayRef:
        """An element of the array parameter ``ap`` indexed by the nodes ``indices`` (one
        per dimension).  The first index counts from the task's view: from its offset,
        and (Python, where the view has an end) a negative one from its end.  ``key``: the
        input read (a struct field's; default: the parameter's one input)."""
        if ap.output:
            self.error(f"reads the output array '{ap.name}'; tasks only write outputs, each "
                       "element by one task (in-place sorting and other read-write patterns "
                       "are not supported: read an input, write an output)", node)
        key = ap.array if key is None else key
        decl = self.ctx.inputs[key]
        return ir.ArrayRef(self.loc(node), Ty(decl.dtype), key,
                           self.element_indices(ap, indices, node, key))

    def element_indices(self, ap: ir.ArrayParam, indices: Sequence[Any], node: Any,
                        key: str | None = None) -> tuple[ir.Expr, ...]:
        """The indices of an element of the array parameter ``ap`` (see
        :meth:`input_element`; ``key``: the input indexed), the first shifted by the
        task's view."""
        decl = self.ctx.inputs[ap.array if key is None else key]
        if len(indices) != decl.ndim:
            self.error(f"array '{ap.name}' has {decl.ndim} dimension(s) but is indexed with "
                       f"{len(indices)}", node)
        idx = [self.typed(functools.partial(self.rules.index, self.expr(i)), i)
               for i in indices]
        loc = self.loc(node)
        first = ir.Cast(loc, INT64, idx[0]) if idx[0].ty != INT64 else idx[0]
        off = ir.Var(loc, INT64, ap.offset)
        shifted: ir.Expr = ir.BinOp(loc, INT64, "+", off, first)
        if ap.end is not None and not (isinstance(first, ir.Const) and int(first.value) >= 0):
            end = ir.Var(loc, INT64, ap.end)
            negative = ir.Compare(loc, ir.BOOL, "<", first, ir.Const(loc, INT64, 0))
            shifted = ir.IfExp(loc, INT64, negative, ir.BinOp(loc, INT64, "+", end, first),
                               shifted)
        return (shifted, *idx[1:])

    def output_store(self, ap: ir.ArrayParam, indices: Sequence[Any], value: Any,
                     node: Any) -> ir.Store:
        """``out[i, ...] = value`` on the output array parameter ``ap``: a store of the
        element (the value converted to the element type, as an assignment does)."""
        if self.kind != "task":
            self.error(f"writes the output array '{ap.name}' in a helper; only a task "
                       "writes outputs (return the value and store it in the task)", node)
        if self.section == "prologue":
            self.error(f"writes the output array '{ap.name}' before the is-base test; "
                       "write outputs in the base case or the inductive case", node)
        decl = self.ctx.inputs[ap.array]
        loc = self.loc(node)
        idx = tuple(ir.Cast(loc, INT64, i) if i.ty != INT64 else i
                    for i in self.element_indices(ap, indices, node))
        val = self.expr(value)
        return ir.Store(self.loc(node), ap.array, idx, self.convert(val, Ty(decl.dtype)))

    def slice_view(self, ap: ir.ArrayParam, start: Any | None, stop: Any | None, node: Any
                   ) -> tuple[ir.Expr, ir.Expr]:
        """The view ``a[start:stop]`` of the array parameter ``ap`` as (offset, end), with
        Python's slice rules (negative bounds count from the end, bounds are clipped)."""
        assert ap.end is not None
        loc = self.loc(node)
        off, end = ir.Var(loc, INT64, ap.offset), ir.Var(loc, INT64, ap.end)
        length = ir.BinOp(loc, INT64, "-", end, off)
        zero = ir.Const(loc, INT64, 0)

        def bound(n: Any, default: ir.Expr) -> ir.Expr:
            if n is None:
                return default
            k = self.typed(functools.partial(self.rules.index, self.expr(n)), n)
            k = ir.Cast(loc, INT64, k) if k.ty != INT64 else k
            upper = ir.MathCall(loc, INT64, "minimum", (k, length))
            if isinstance(k, ir.Const) and int(k.value) >= 0:
                return upper
            lower = ir.MathCall(loc, INT64, "maximum",
                                (ir.BinOp(loc, INT64, "+", k, length), zero))
            return ir.IfExp(loc, INT64, ir.Compare(loc, ir.BOOL, "<", k, zero), lower, upper)

        first = bound(start, zero)
        last = bound(stop, length)
        return (ir.BinOp(loc, INT64, "+", off, first),
                ir.BinOp(loc, INT64, "+", off, ir.MathCall(loc, INT64, "maximum", (last, first))))

    def array_argument(self, ap: ir.ArrayParam, node: Any) -> tuple[ir.Expr, ir.Expr | None]:
        """What a call of the task passes for the array parameter ``ap``: the child's
        (offset, end) from the argument ``node`` (the adapter's syntax: ``a``, ``a + k``,
        ``a[k:]``)."""
        raise NotImplementedError

    def unchanged_view(self, ap: ir.ArrayParam, node: Any) -> tuple[ir.Expr, ir.Expr | None]:
        loc = self.loc(node)
        return (ir.Var(loc, INT64, ap.offset),
                None if ap.end is None else ir.Var(loc, INT64, ap.end))

    def call_arguments(self, nodes: Sequence[Any]) -> tuple[ir.Expr, ...]:
        """A call of the task itself: the scalar arguments converted to their
        parameters' types, then the array arguments' views (the hidden fields)."""
        arrays = {ap.position: ap for ap in self.array_params}
        private = {pa.position: pa for pa in self.private_params}
        scalars = iter([p for p in self.params if not p.hidden])
        out: list[ir.Expr] = []
        views: dict[str, ir.Expr] = {}
        for pos, n in enumerate(nodes):
            pa = private.get(pos)
            if pa is not None:
                views.update(self.private_argument(pa, n))
                continue
            ap = arrays.get(pos)
            if ap is None:
                p = next(scalars)
                out.append(self.convert(self.expr(n), p.ty))
                continue
            off, end = self.array_argument(ap, n)
            views[ap.offset] = off
            if ap.end is not None:
                assert end is not None
                views[ap.end] = end
        return tuple(out + [views[p.name] for p in self.params if p.name in views])

    # ------------------------------------------------------------------ task-private arrays
    def private_param(self, name: str, position: int, ty: Ty, capacity: int,
                      bound: str | None, node: Any, *, with_length: bool,
                      fresh: Callable[[str], str], sequence: str = "list") -> ArrayVar:
        """The task parameter ``name`` is a task-private array of ``capacity`` elements
        of ``ty``: hidden frame fields (and a length field: Python lists), named by
        ``fresh``; the adapter appends :meth:`private_fields` after the scalars."""
        if self.kind != "task":
            raise AssertionError("helpers take arrays as element parameters")
        loc = self.loc(node)
        fields = tuple(fresh(f"{name}_{k}") for k in range(capacity))
        length = fresh(f"{name}_len") if with_length else None
        pa = ir.PrivateArray(name, position, ty, capacity, fields, length, loc, bound,
                             sequence)
        self.private_params += (pa,)
        av = ArrayVar(name, ty, fields, length)
        return av

    def private_fields(self) -> list[ir.Param]:
        out = []
        for pa in self.private_params:
            out += [ir.Param(f, pa.ty, pa.loc, 0, True, hidden=True) for f in pa.fields]
            if pa.length is not None:
                out.append(ir.Param(pa.length, INT64, pa.loc, 0, True, hidden=True))
        return out

    def local_array(self, name: str, ty: Ty, capacity: int, *, with_length: bool,
                    fresh: Callable[[str], str]) -> ArrayVar:
        """A task-local private array (a child's board): ``capacity`` scalar locals."""
        elements = tuple(fresh(f"{name}_{k}") for k in range(capacity))
        for e in elements:
            self.locals.setdefault(e, ty)
        length = fresh(f"{name}_len") if with_length else None
        if length is not None:
            self.locals.setdefault(length, INT64)
        return ArrayVar(name, ty, elements, length)

    def array_element(self, av: ArrayVar, index: ir.Expr, node: Any) -> ir.Expr:
        """``av[index]`` (a negative index counts from the end when the array has a
        length: Python)."""
        loc = self.loc(node)
        idx = ir.Cast(loc, INT64, index) if index.ty != INT64 else index
        if isinstance(idx, ir.Const) and 0 <= int(idx.value) < len(av.elements):
            return ir.Var(loc, av.ty, av.elements[int(idx.value)])
        if av.length is not None and not (isinstance(idx, ir.Const) and int(idx.value) >= 0):
            ln = ir.Var(loc, INT64, av.length)
            idx = ir.IfExp(loc, INT64, ir.Compare(loc, ir.BOOL, "<", idx, ir.Const(loc, INT64, 0)),
                           ir.BinOp(loc, INT64, "+", ln, idx), idx)
        return ir.Pick(loc, av.ty, idx, tuple(ir.Var(loc, av.ty, e) for e in av.elements))

    def array_store(self, av: ArrayVar, index: ir.Expr, value: ir.Expr, node: Any
                    ) -> list[ir.Stmt]:
        """``av[index] = value``: the element ``index`` is assigned (one test per
        element for an index that is not a constant)."""
        loc = self.loc(node)
        val = self.convert(value, av.ty)
        idx = ir.Cast(loc, INT64, index) if index.ty != INT64 else index
        if isinstance(idx, ir.Const):
            k = int(idx.value)
            if k < 0 and av.length is None or not -len(av.elements) <= k < len(av.elements):
                self.error(f"index {k} is outside the {len(av.elements)} elements of "
                           f"'{av.name}'", node)
            if k >= 0:
                return [ir.Assign(loc, av.elements[k], val)]
        if av.length is not None and not (isinstance(idx, ir.Const) and int(idx.value) >= 0):
            ln = ir.Var(loc, INT64, av.length)
            idx = ir.IfExp(loc, INT64, ir.Compare(loc, ir.BOOL, "<", idx, ir.Const(loc, INT64, 0)),
                           ir.BinOp(loc, INT64, "+", ln, idx), idx)
        tmp = self.store_index()
        out: list[ir.Stmt] = [ir.Assign(loc, tmp, idx)]
        for k, e in enumerate(av.elements):
            hit = ir.Compare(loc, ir.BOOL, "==", ir.Var(loc, INT64, tmp), ir.Const(loc, INT64, k))
            out.append(ir.If(loc, hit, (ir.Assign(loc, e, val),), ()))
        return out

    def array_copy(self, dst: ArrayVar, src: ArrayVar, node: Any,
                   length: ir.Expr | None = None) -> list[ir.Stmt]:
        """``dst`` becomes a copy of ``src`` (every element: those past the length are
        never read), with the length ``length`` (default: src's)."""
        loc = self.loc(node)
        out: list[ir.Stmt] = []
        for k, e in enumerate(dst.elements):
            if k < len(src.elements):
                out.append(ir.Assign(loc, e, ir.Var(loc, src.ty, src.elements[k])
                                     if src.ty == dst.ty else self.convert(
                                         ir.Var(loc, src.ty, src.elements[k]), dst.ty)))
        if dst.length is not None:
            if length is None:
                length = (ir.Var(loc, INT64, src.length) if src.length is not None
                          else ir.Const(loc, INT64, len(src.elements)))
            out.append(ir.Assign(loc, dst.length, length))
        return out

    def array_length(self, av: ArrayVar, node: Any) -> ir.Expr:
        loc = self.loc(node)
        if av.length is None:
            return ir.Const(loc, INT64, len(av.elements))
        return ir.Var(loc, INT64, av.length)

    def store_index(self) -> str:
        """The int64 local an element store's index is held in: one for the function
        (each store sets it just before its tests), named once, so the rounds of the
        fixpoint do not each add another."""
        if self.store_at is None:
            self.store_at = ir.fresh_name("_rv_store_at",
                                          set(self.locals) | {p.name for p in self.params})
        self.locals[self.store_at] = INT64
        return self.store_at

    def private_argument(self, pa: ir.PrivateArray, node: Any) -> dict[str, ir.Expr]:
        """What a call of the task passes for the private array parameter ``pa``: the
        child's fields (and length) from the argument ``node`` (a local array, or an
        expression building one: the adapter's syntax)."""
        raise NotImplementedError

    def child_fields(self, pa: ir.PrivateArray, av: ArrayVar, node: Any) -> dict[str, ir.Expr]:
        """The child's private-array fields from the array ``av``."""
        loc = self.loc(node)
        if len(av.elements) < pa.capacity:
            self.error(f"'{av.name}' holds {len(av.elements)} elements; the task's "
                       f"'{pa.name}' holds {pa.capacity}", node)
        out: dict[str, ir.Expr] = {f: self.convert(ir.Var(loc, av.ty, e), pa.ty)
                                   for f, e in zip(pa.fields, av.elements)}
        if pa.length is not None:
            out[pa.length] = self.array_length(av, node)
        return out

    # ------------------------------------------------------------------ statements and calls
    def spawn(self, nodes: Sequence[Any], node: Any) -> ir.Spawn:
        """A spawn of the task itself with the arguments ``nodes`` (already counted)."""
        return ir.Spawn(self.loc(node), self.call_arguments(nodes))

    def recur(self, nodes: Sequence[Any], ty: Ty, node: Any) -> ir.Recur:
        """A call of the task itself whose value (of type ``ty``) is used."""
        return ir.Recur(self.loc(node), ty, self.call_arguments(nodes))

    def reduce(self, decl: ir.ReducerDecl, value: Any, node: Any) -> ir.Reduce:
        """``reduce(decl, value)``.  A float folded into an integer (or bool) reducer
        would be truncated silently: the program must convert explicitly."""
        val = self.expr(value)
        if val.ty.kind == "f" and decl.dtype.kind in "iub":
            self.error(f"reduce({decl.name}, ...) folds a {val.ty} value into the "
                       f"{decl.dtype.name} reducer '{decl.name}', which would truncate it; "
                       f"convert explicitly, e.g. {self.spelling.cast(Ty(decl.dtype))}, or "
                       "declare the reducer as a float", value)
        return ir.Reduce(self.loc(node), decl.name, self.convert(val, Ty(decl.dtype)))

    def library_call(self, lib: LibFunction, nodes: Sequence[Any], node: Any) -> ir.LibCall:
        """A call of a revec.lib function (arguments already counted)."""
        args = self.arguments(nodes, [Ty(np.dtype(t)) for t in lib.arg_types])
        rts = tuple(Ty(np.dtype(t)) for t in lib.result_types)
        self.ctx.libs.add(lib.name)
        return ir.LibCall(self.loc(node), rts[0], lib.name, args, rts)

    def element(self, name: str, array: np.ndarray, ty: Ty, indices: Sequence[Any],
                node: Any) -> ir.ArrayRef:
        """An element (of type ``ty``) of the module-level array ``name``, indexed by the
        expression nodes ``indices``: one per dimension, each an integer."""
        if len(indices) != array.ndim:
            self.error(f"array '{name}' has {array.ndim} dimension(s) but is indexed with "
                       f"{len(indices)}", node)
        idx = []
        for i in indices:
            idx.append(self.typed(functools.partial(self.rules.index, self.expr(i)), i))
        self.ctx.arrays[name] = array
        return ir.ArrayRef(self.loc(node), ty, name, tuple(idx))

    # ------------------------------------------------------------------ definitions
    def task_def(self, prologue: tuple[ir.Stmt, ...], is_base: ir.Expr,
                 base: tuple[ir.Stmt, ...], inductive: tuple[ir.Stmt, ...], function: Any,
                 result_ty: Ty | None) -> ir.TaskDef:
        return ir.TaskDef(self.name, self.params, self.function_locals(), is_base, base,
                          inductive, ir.spawn_bound(inductive), self.loc(function),
                          prologue=prologue, result_ty=result_ty, arrays=self.array_params,
                          private=self.private_params, source_names=self.renamed_locals())

    def renamed_locals(self) -> dict[str, str]:
        """The locals whose IR name differs from the source's: IR name -> source name
        (for messages; a language with block scopes renames locals)."""
        return {}

    def helper_def(self, body: tuple[ir.Stmt, ...], result_tys: tuple[Ty, ...],
                   function: Any) -> ir.HelperDef:
        return ir.HelperDef(self.name, self.params, self.function_locals(), body, result_tys,
                            self.loc(function))

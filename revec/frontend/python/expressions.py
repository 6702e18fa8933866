"""The expression half of the Python syntax adapter: libcst expressions -> typed IR,
through the front-end core (:mod:`revec.frontend.builder`) with NumPy 2's type rules
(:mod:`revec.frontend.rules.nep50`): names, module constants and arrays, operators,
and calls (the task itself, helpers specialized per signature, revec.lib functions,
builtins and numpy functions).  The statements are :mod:`revec.frontend.python.lower`'s.
"""

from __future__ import annotations

import builtins
import types
from typing import Any

import libcst as cst
import numpy as np

import revec.lang as lang
from revec import ir
from revec.errors import RevecError
from revec.frontend.builder import INT64, ArrayVar, FunctionBuilder, Spelling
from revec.frontend.python.context import ProgramContext
from revec.frontend.python.signature import (
    ArrayArg,
    annotation_value,
    scalar_type_of,
    strong,
)
from revec.frontend.python.syntax import (
    BIN_OPS,
    BUILTINS,
    CMP_OPS,
    UNARY_OPS,
    max_ifexp,
)
from revec.frontend.rules.nep50 import (
    MATH_ARITY,
    MATH_FUNCS,
    NEP50,
    builtin_result,
    compare_type,
    math_result,
)
from revec.ir import BOOL, WEAK_BOOL, WEAK_FLOAT, WEAK_INT, Ty
from revec.lang import Task
from revec.lib import LIBRARY, LibFunction

PYTHON = Spelling(
    is_base="if <is-base>:",
    task_shape=("a task body must be 'if <is-base>: <base case> else: <inductive case>' "
                "(or 'if <is-base>: <base case>; return' followed by the inductive case), "
                "optionally after statements without spawns (the prologue)"),
    cast=lambda ty: f"np.{ty.dtype.name}(...)",
    recursive_helper=("helper '{name}' is recursive: helpers cannot recurse "
                      "(only tasks recurse, through spawn)"),
)


def literal_int(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal (``3``, ``-1``), else None."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = literal_int(node.expression)
        return None if inner is None else -inner
    return None


def bound_update(decl: ir.ReducerDecl) -> str:
    """The method that updates the bound ``decl``: raise_to (max) or lower_to (min)."""
    return "raise_to" if decl.op == "max" else "lower_to"


class PyExpressions(FunctionBuilder):
    """Lowers the expressions of one Python task or helper function."""

    spelling = PYTHON

    def __init__(self, ctx: ProgramContext, fdef: cst.FunctionDef, kind: str) -> None:
        super().__init__(ctx, NEP50, fdef.name.value, kind)
        self.ctx: ProgramContext = ctx
        self.fdef = fdef
        # a task that returns a value: its result type (annotated, or inferred from its
        # returns to a fixpoint)
        self.returns_value = False
        self.result_ty: Ty | None = None
        # helpers: the argument types of the call being specialized (None: annotated)
        self.arg_tys: tuple[Ty, ...] | None = None

    def lower_helper(self) -> ir.HelperDef:
        raise NotImplementedError

    def text(self, node: cst.CSTNode) -> str:
        return self.ctx.text(node)

    def annotation(self, node: cst.BaseExpression) -> Any:
        return annotation_value(node, self.ctx.globals())

    def is_lang(self, name: str) -> bool:
        return self.ctx.globals().get(name) is getattr(lang, name)

    def operator(self, op: cst.CSTNode, table: dict[type, str]) -> str:
        """The operator's symbol; one outside the language (``@``) is a located error."""
        sym = table.get(type(op))
        if sym is None:
            self.error(f"the operator '{self.text(op).strip()}' is not in the language (no "
                       f"matrix products on scalars); the operators are "
                       f"{' '.join(BIN_OPS.values())}", op)
        return sym

    def helper(self, name: str, node: cst.CSTNode, arg_tys: tuple[Ty, ...]) -> ir.HelperDef:
        """The helper ``name`` for a call with arguments of ``arg_tys``.  A helper with
        unannotated parameters is specialized per distinct signature of its call sites
        (their types, Python scalars taken as int64/float64/bool), as numba does."""
        ctx = self.ctx
        self.not_recursive(name, node)
        fdef = ctx.functions.get(name)
        if fdef is None:
            self.error(f"'{name}' is not a module-level function of this file", node)
        params = fdef.params.params
        key = name
        sig: tuple[Ty, ...] | None = None
        if any(p.annotation is None for p in params) and len(arg_tys) == len(params):
            sig = tuple(strong(t) for t in arg_tys)
            if any(t.dtype not in ir.SUPPORTED_DTYPES for t in sig):
                self.error(f"an argument of '{name}' has a type revec does not support", node)
            key = name + "__" + "_".join(
                (f"{t.dtype.name}x{t.capacity}" if isinstance(t, ArrayArg) else t.dtype.name)
                for p, t in zip(params, sig) if p.annotation is None)

        def lower() -> ir.HelperDef:
            lowerer = type(self)(ctx, fdef, kind="helper")
            lowerer.arg_tys = sig
            try:
                return lowerer.lower_helper()
            except RevecError as err:
                if sig is None or err.loc is None:
                    raise
                where = f"{err.loc.line}:{err.loc.col}"
                types_ = ", ".join(f"{p.name.value}: {t}" for p, t in zip(params, sig))
                self.error(f"helper '{name}' called with ({types_}) does not type-check: "
                           f"{err.message} (at line {where})", node)

        return ctx.helper(key, name, lower)

    # ------------------------------------------------------------------ expressions
    def condition(self, node: cst.BaseExpression) -> ir.Expr:
        return self.truth(self.expr(node, cond=True))

    def expr(self, node: cst.BaseExpression, cond: bool = False,
             allow_tuple: bool = False) -> ir.Expr:
        loc = self.loc(node)
        match node:
            case cst.Integer():
                return ir.Const(loc, WEAK_INT, int(node.evaluated_value))
            case cst.Float():
                return ir.Const(loc, WEAK_FLOAT, float(node.evaluated_value))
            case cst.Name(value="True" | "False" as v):
                return ir.Const(loc, WEAK_BOOL, v == "True")
            case cst.Name(value=name):
                if cond and (length := self.truth_length(name, node)) is not None:
                    return length  # 'if arr:' / 'if not arr:' on a list: its length
                return self.name_ref(name, node)
            case cst.Attribute():
                return self.attribute_ref(node)
            case cst.BinaryOperation(left=l, operator=op, right=r):
                return self.arith(self.operator(op, BIN_OPS), self.expr(l), self.expr(r), node)
            case cst.UnaryOperation(operator=cst.Not(), expression=e):
                return self.unary("not", self.expr(e, cond), node)
            case cst.UnaryOperation(operator=op, expression=e):
                return self.unary(UNARY_OPS[type(op)], self.expr(e), node)
            case cst.BooleanOperation(left=l, operator=op, right=r):
                left, right = self.expr(l, cond), self.expr(r, cond)
                if not cond and (left.ty.kind != "b" or right.ty.kind != "b"):
                    self.error("'and'/'or' on non-bool values is only allowed in conditions; "
                               "compare explicitly (e.g. x != 0)", node)
                return self.logical("and" if isinstance(op, cst.And) else "or", left, right,
                                    node)
            case cst.Comparison(left=l, comparisons=comps):
                left = self.expr(l)
                parts: list[ir.Expr] = []
                for c in comps:
                    if type(c.operator) not in CMP_OPS:
                        self.error("only <, <=, >, >=, == and != comparisons are allowed",
                                   c.operator)
                    right = self.expr(c.comparator)
                    parts.append(self.compare(CMP_OPS[type(c.operator)], left, right, node))
                    left = right
                out = parts[0]
                for p in parts[1:]:
                    out = ir.BoolOp(loc, BOOL, "and", out, p)
                return out
            case cst.IfExp(test=t, body=b, orelse=o):
                form = max_ifexp(node)
                if form is not None:  # a if a > b else b: max(a, b) of integers
                    x, y = self.expr(form[1]), self.expr(form[2])
                    if x.ty.kind in "iu" and y.ty.kind in "iu":
                        return self.min_max(form[0], [x, y], node)
                test = self.condition(t)
                return self.select(test, self.expr(b), self.expr(o), node)
            case cst.Subscript():
                return self.subscript(node)
            case cst.Call():
                return self.call(node, allow_tuple)
            case cst.Lambda():
                self.error("lambda is not allowed in a task", node)
            case cst.Yield():
                self.error("yield is not allowed in a task", node)
            case cst.Await():
                self.error("await is not allowed in a task", node)
            case cst.NamedExpr():
                self.error("assignment expressions (:=) are not allowed", node)
            case _:
                self.error(f"'{type(node).__name__}' expressions are not allowed in a task "
                           "(only scalar arithmetic, comparisons, calls of helpers and "
                           "indexing of module-level arrays)", node)

    def truth_length(self, name: str, node: cst.Name) -> ir.Expr | None:
        """A list (input array or task-private list) tested for truth in a condition
        (``if not arr: return 0``): its length, true when not empty as in Python; None
        for other names."""
        if "len" in self.ctx.globals():
            return None
        av = self.array_vars.get(name)
        if av is not None:
            return self.array_length(av, node)
        ap = self.array_named(name)
        if ap is not None and not ap.output:
            return self.view_length(ap, node)
        return None

    def array_named(self, name: str) -> ir.ArrayParam | None:
        for ap in self.array_params:
            if ap.name == name:
                return ap
        return None

    def name_ref(self, name: str, node: cst.CSTNode) -> ir.Expr:
        loc = self.loc(node)
        if name in self.array_vars:
            self.error(f"'{name}' is a task-private list: index it ({name}[i]), take its "
                       f"len({name}), build a child's list from it ({name} + [x]) or pass "
                       "it to a spawn or a helper", node)
        ap = self.array_named(name)
        if ap is not None and ap.output:
            self.error(f"'{name}' is an output array: write its elements ({name}[i] = v) "
                       f"and pass it ({name}, or a slice {name}[k:]) to the task's own "
                       "spawns; it cannot be read, passed to a helper or used as a value",
                       node)
        if ap is not None:
            self.error(f"'{name}' is an array parameter: index it ({name}[i]), take its "
                       f"len({name}), or pass it (or a slice {name}[k:]) to a spawn", node)
        if name in self.locals:
            return ir.Var(loc, self.locals[name], name)
        g = self.ctx.globals()
        if name not in g:
            if hasattr(builtins, name):
                self.error(f"'{name}' cannot be used as a value here", node)
            self.error(f"name '{name}' is not defined (or is used before it is assigned)",
                       node)
        return self.global_value(name, g[name], node)

    def global_value(self, name: str, value: Any, node: cst.CSTNode) -> ir.Expr:
        loc = self.loc(node)
        if isinstance(value, bool):
            return ir.Const(loc, WEAK_BOOL, value)
        if isinstance(value, int):
            return ir.Const(loc, WEAK_INT, value)
        if isinstance(value, float):
            return ir.Const(loc, WEAK_FLOAT, value)
        if isinstance(value, np.generic) and value.dtype in ir.SUPPORTED_DTYPES:
            return ir.Const(loc, Ty(value.dtype), value.item())
        if isinstance(value, np.ndarray):
            self.error(f"module-level array '{name}' must be indexed ({name}[i])", node)
        if name in self.ctx.reducers and self.ctx.reducers[name].bound:
            self.error(f"'{name}' is a Bound: read its value as {name}.value (to prune) and "
                       f"update it with {name}.{bound_update(self.ctx.reducers[name])}(v)",
                       node)
        if name in self.ctx.reducers:
            self.error(f"reducer '{name}' can only be updated with reduce({name}, value)", node)
        self.error(f"module-level '{name}' is not a numeric constant a task can read", node)

    def attribute_ref(self, node: cst.Attribute) -> ir.Expr:
        if isinstance(node.value, cst.Name) and node.value.value not in self.locals:
            decl = self.ctx.reducers.get(node.value.value)
            if decl is not None and decl.bound:
                if node.attr.value != "value":
                    self.error(f"'{decl.name}' is a Bound: tasks read {decl.name}.value",
                               node.attr)
                return ir.BoundRead(self.loc(node), Ty(decl.dtype), decl.name)
        value = self.annotation(node)
        text = self.text(node)
        if isinstance(value, (int, float, np.generic)) and not isinstance(value, np.ndarray):
            return self.global_value(text, value, node)
        self.error(f"'{text}' is not a numeric constant a task can read", node)

    def array_argument(self, ap: ir.ArrayParam, node: cst.BaseExpression
                       ) -> tuple[ir.Expr, ir.Expr | None]:
        """The array argument of a spawn: the parameter itself, or a slice of it."""
        if isinstance(node, cst.Name) and node.value == ap.name:
            return self.unchanged_view(ap, node)
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) \
                and node.value.value == ap.name and len(node.slice) == 1 \
                and isinstance(node.slice[0].slice, cst.Slice):
            sl = node.slice[0].slice
            if sl.step is not None:
                self.error("a slice with a step cannot be passed on; pass a[k:j]", sl.step)
            return self.slice_view(ap, sl.lower, sl.upper, node)
        self.error(f"argument {ap.position + 1} of {self.name} is the array parameter "
                   f"'{ap.name}': pass {ap.name} itself or a slice of it ({ap.name}[k:], "
                   f"{ap.name}[k:j])", node)

    def subscript(self, node: cst.Subscript) -> ir.Expr:
        indices: list[cst.BaseExpression] = []
        base: cst.BaseExpression = node
        while isinstance(base, cst.Subscript):
            idx = []
            for el in base.slice:
                if not isinstance(el.slice, cst.Index):
                    self.error("slices are not allowed; index one element", el)
                idx.append(el.slice.value)
            indices = idx + indices
            base = base.value
        if not isinstance(base, cst.Name):
            return self.shape_item(base, indices, node)
        name = base.value
        av = self.array_vars.get(name)
        if av is not None:
            if len(indices) != 1:
                self.error(f"'{name}' is a list of one dimension; index it {name}[i]", node)
            index = self.typed(lambda: self.rules.index(self.expr(indices[0])), indices[0])
            return self.array_element(av, index, node)
        ap = self.array_named(name)
        if ap is not None:
            return self.input_element(ap, indices, node)
        arr = self.ctx.globals().get(name)
        if name in self.locals or not isinstance(arr, np.ndarray):
            self.error(f"'{name}' is not a module-level numpy array", base)
        if arr.dtype not in ir.SUPPORTED_DTYPES:
            self.error(f"array '{name}' has dtype {arr.dtype}, which revec does not support",
                       base)
        return self.element(name, arr, Ty(arr.dtype), indices, node)

    def module_array(self, node: cst.BaseExpression) -> tuple[str, np.ndarray] | None:
        """The module-level array ``node`` names (not a local of the same name)."""
        if isinstance(node, cst.Name) and node.value not in self.locals:
            arr = self.ctx.globals().get(node.value)
            if isinstance(arr, np.ndarray):
                return node.value, arr
        return None

    def shape_item(self, base: cst.BaseExpression, indices: list[cst.BaseExpression],
                   node: cst.Subscript) -> ir.Expr:
        """``A.shape[k]`` of a module-level array ``A`` (a constant ``k``): a constant."""
        found = None
        if isinstance(base, cst.Attribute) and base.attr.value == "shape":
            found = self.module_array(base.value)
        if found is None:
            self.error("only arrays can be indexed: module-level arrays, the task's array "
                       "parameters and its lists (A[i]); a module-level array's size is "
                       "A.shape[k] or len(A)", node)
        name, arr = found
        k = literal_int(indices[0]) if len(indices) == 1 else None
        if k is None or not -arr.ndim <= k < arr.ndim:
            self.error(f"'{name}' has {arr.ndim} dimension(s): index its shape with a "
                       f"constant, {name}.shape[0]" + (
                           f" ... {name}.shape[{arr.ndim - 1}]" if arr.ndim > 1 else ""),
                       node)
        return ir.Const(self.loc(node), WEAK_INT, int(arr.shape[k]))

    def call(self, node: cst.Call, allow_tuple: bool) -> ir.Expr:
        for a in node.args:
            if a.keyword is not None or a.star:
                self.error("only positional arguments are allowed", a)
        match node.func:
            case cst.Name(value=fname):
                return self.named_call(fname, node, allow_tuple)
            case cst.Attribute() as func:
                return self.dotted_call(func, node, allow_tuple)
        self.error("only calls of named functions are allowed", node)

    def named_call(self, fname: str, node: cst.Call, allow_tuple: bool) -> ir.Expr:
        g = self.ctx.globals()
        target = g.get(fname)
        if fname in ("spawn", "reduce") and self.is_lang(fname):
            self.error(f"the value of {fname}(...) cannot be used: call it as a statement",
                       node)
        if isinstance(target, Task):
            if fname == self.name and self.kind == "task" and self.returns_value:
                return self.recur_call(node)
            if fname == self.name:
                self.error(f"recursion by a plain call: use spawn({fname}, ...) to recurse",
                           node)
            self.error(f"calling the task '{fname}' is not allowed: a task may only "
                       "spawn itself", node)
        if isinstance(target, types.FunctionType) and fname in self.ctx.functions:
            if fname == self.name:
                self.error(f"recursion by a plain call: helper '{fname}' calls itself",
                           node)
            return self.helper_call(fname, node, allow_tuple)
        lib = self.lib_function(target)
        if lib is not None:
            return self.lib_call(lib, node, allow_tuple)
        if fname == "len" and "len" not in g and len(node.args) == 1 and isinstance(
                node.args[0].value, cst.Name):
            av = self.array_vars.get(node.args[0].value.value)
            if av is not None:
                return self.array_length(av, node)
            ap = self.array_named(node.args[0].value.value)
            if ap is not None:
                return self.view_length(ap, node)
            found = self.module_array(node.args[0].value)
            if found is not None and found[1].ndim >= 1:  # a module-level array: a constant
                return ir.Const(self.loc(node), WEAK_INT, len(found[1]))
        if fname in BUILTINS and fname not in g:
            return self.builtin_call(fname, node)
        self.error(f"call of '{fname}' is not allowed in a task: only helpers of this "
                   "module, revec.lib functions, abs/min/max/int/float/bool and numpy "
                   "scalar types and math functions can be called", node)

    def dotted_call(self, func: cst.Attribute, node: cst.Call, allow_tuple: bool) -> ir.Expr:
        target = self.annotation(func)
        text = self.text(func)
        st = scalar_type_of(target)
        if st is not None and target not in (int, float, bool):
            if len(node.args) != 1:
                self.error(f"{text}(...) takes one argument", node)
            return self.convert(self.expr(node.args[0].value), Ty(np.dtype(st)))
        fn_name = func.attr.value
        if target is getattr(np, fn_name, None) and fn_name in MATH_FUNCS:
            nargs = MATH_ARITY.get(fn_name, 1)
            if len(node.args) != nargs:
                self.error(f"{text} takes {nargs} argument(s)", node)
            args = [self.expr(a.value) for a in node.args]
            res = self.typed(lambda: math_result(fn_name, tuple(a.ty for a in args)), node)
            conv = tuple(self.convert(a, res if res.kind != "b" else a.ty) for a in args)
            return ir.MathCall(self.loc(node), res, fn_name, conv)
        lib = self.lib_function(target)
        if lib is not None:
            return self.lib_call(lib, node, allow_tuple)
        self.error(f"call of '{text}' is not allowed in a task", node)

    def recur_call(self, node: cst.Call) -> ir.Expr:
        """A call of the task itself whose value is used (return-value recursion)."""
        self.may_recurse(f"recursive call of '{self.name}'", node)
        n = len(node.args)
        if n != self.arity():
            self.error(f"{self.name}(...) passes {n} argument{'s' if n != 1 else ''}, but "
                       f"{self.name} takes {self.arity()}", node)
        return self.recur([a.value for a in node.args], self.result_ty or WEAK_INT, node)

    def lib_function(self, target: Any) -> LibFunction | None:
        for lf in LIBRARY.values():
            if target is lf.py:
                return lf
        return None

    def builtin_call(self, fname: str, node: cst.Call) -> ir.Expr:
        loc = self.loc(node)
        args = [self.expr(a.value) for a in node.args]
        if fname in ("min", "max"):
            if len(args) < 2:
                self.error(f"{fname}() needs at least two arguments", node)
            return self.min_max(fname, args, node)
        if len(args) != 1:
            self.error(f"{fname}() takes one argument here", node)
        res = self.typed(lambda: builtin_result(fname, (args[0].ty,)), node)
        if fname == "abs":
            return ir.MathCall(loc, res, "abs", (self.convert(args[0], res),))
        if fname == "bool":
            return self.truth(args[0])
        return self.convert(args[0], res)

    def min_max(self, fname: str, args: list[ir.Expr], node: cst.CSTNode) -> ir.Expr:
        """min(...) / max(...) of the lowered ``args`` (two or more)."""
        loc = self.loc(node)
        out = args[0]
        for a in args[1:]:
            ty = builtin_result(fname, (out.ty, a.ty))
            ct = compare_type(out.ty, a.ty)
            out = ir.MathCall(loc, ty, "minimum" if fname == "min" else "maximum",
                              (self.convert(out, ct), self.convert(a, ct)))
            if ct != ty:
                out = self.convert(out, ty)
        return out

    def helper_call(self, fname: str, node: cst.Call, allow_tuple: bool) -> ir.Expr:
        n = len(self.ctx.functions[fname].params.params)
        if len(node.args) != n:
            self.error(f"{fname}() takes {n} argument(s), got {len(node.args)}", node)
        raw: list[ir.Expr | ArrayVar] = []
        for a in node.args:
            v = a.value
            if isinstance(v, cst.Name) and v.value in self.array_vars:
                raw.append(self.array_vars[v.value])
            else:
                raw.append(self.expr(v))
        sig = tuple(ArrayArg(x.ty, len(x.elements), x.length is not None)
                    if isinstance(x, ArrayVar) else x.ty for x in raw)
        helper = self.helper(fname, node, sig)  # type: ignore[arg-type]
        flat: list[ir.Expr] = []
        loc = self.loc(node)
        for x in raw:
            if isinstance(x, ArrayVar):
                flat += [ir.Var(loc, x.ty, e) for e in x.elements]
                if x.length is not None:
                    flat.append(ir.Var(loc, INT64, x.length))
            else:
                flat.append(x)
        if any(isinstance(x, ArrayVar) for x in raw) and len(flat) != len(helper.params):
            self.error(f"{fname}() takes its list parameter(s) unannotated (their type "
                       "comes from the call)", node)
        args = tuple(self.convert(e, p.ty) for e, p in zip(flat, helper.params))
        rt = helper.result_tys
        if not rt and not allow_tuple:
            self.error(f"helper '{fname}' returns no value", node)
        if len(rt) > 1 and not allow_tuple:
            self.error(f"helper '{fname}' returns {len(rt)} values: unpack them", node)
        return ir.Call(self.loc(node), rt[0] if rt else WEAK_INT, helper.name, args)

    def lib_call(self, lib: LibFunction, node: cst.Call, allow_tuple: bool) -> ir.Expr:
        if len(node.args) != len(lib.arg_types):
            self.error(f"{lib.name}() takes {len(lib.arg_types)} argument(s), "
                       f"got {len(node.args)}", node)
        if len(lib.result_types) > 1 and not allow_tuple:
            self.error(f"{lib.name}() returns {len(lib.result_types)} values: unpack them", node)
        return self.library_call(lib, [a.value for a in node.args], node)

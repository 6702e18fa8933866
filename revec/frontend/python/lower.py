"""Lowering of task and helper functions from libcst to the typed IR, with checks.

Every construct the language allows has a case below; anything else reaches the
final ``case _`` and is rejected with a located error, so nothing unsupported
slips through silently.  Types follow :mod:`revec.frontend.rules.nep50`; local
variable types are found by iterating the lowering to a fixpoint.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import libcst as cst
import numpy as np

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.frontend.python.source import ParsedSource
from revec.frontend.rules.nep50 import (
    BINARY_OPS as BINARY_FUNCS,
)
from revec.frontend.rules.nep50 import (
    MATH_ARITY,
    MATH_FUNCS,
    TypeRuleError,
    binary_result,
    builtin_result,
    compare_type,
    join,
    literal_fits,
    math_result,
    unary_result,
)
from revec.ir import BOOL, WEAK_BOOL, WEAK_FLOAT, WEAK_INT, Ty
from revec.lang import SCALAR_TYPES, Task
from revec.lib import LIBRARY, LibFunction

BIN_OPS: dict[type, str] = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/",
    cst.FloorDivide: "//", cst.Modulo: "%", cst.Power: "**", cst.LeftShift: "<<",
    cst.RightShift: ">>", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^",
}
AUG_OPS: dict[type, str] = {
    cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*",
    cst.DivideAssign: "/", cst.FloorDivideAssign: "//", cst.ModuloAssign: "%",
    cst.PowerAssign: "**", cst.LeftShiftAssign: "<<", cst.RightShiftAssign: ">>",
    cst.BitAndAssign: "&", cst.BitOrAssign: "|", cst.BitXorAssign: "^",
}
CMP_OPS: dict[type, str] = {
    cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=", cst.Equal: "==", cst.NotEqual: "!=",
}
BUILTINS = ("abs", "min", "max", "int", "float", "bool")
FORBIDDEN_STMTS: dict[type, str] = {
    cst.Try: "try statements are not allowed in a task",
    cst.With: "with statements are not allowed in a task",
    cst.FunctionDef: "nested functions are not allowed in a task",
    cst.ClassDef: "class definitions are not allowed in a task",
    cst.Global: "writing a module-level global is not allowed (module globals are read-only)",
    cst.Nonlocal: "nonlocal is not allowed in a task",
    cst.Raise: "raise is not allowed in a task",
    cst.Del: "del is not allowed in a task",
    cst.Import: "imports belong at module level",
    cst.ImportFrom: "imports belong at module level",
    cst.Assert: "assert is not allowed in a task",
}


def scalar_type_of(value: Any) -> type[np.generic] | None:
    try:
        return SCALAR_TYPES.get(value)
    except TypeError:
        return None


def strong(ty: Ty) -> Ty:
    """The numpy type a Python scalar of ``ty`` stands for (int -> int64, float -> float64)."""
    return Ty(ty.dtype) if ty.weak else ty


def param_ty(value: Any) -> Ty | None:
    t = scalar_type_of(value)
    return None if t is None else Ty(np.dtype(t))


class ProgramContext:
    """What the lowering of one function needs to know about the whole module."""

    def __init__(self, src: ParsedSource, module: types.ModuleType,
                 functions: dict[str, cst.FunctionDef],
                 reducers: dict[str, ir.ReducerDecl]) -> None:
        self.src = src
        self.module = module
        self.functions = functions
        self.reducers = reducers
        self.helpers: dict[str, ir.HelperDef] = {}
        self.helper_stack: list[str] = []
        self.arrays: dict[str, np.ndarray] = {}
        self.libs: set[str] = set()
        self.task_params: dict[str, tuple[ir.Param, ...]] = {}

    def error(self, message: str, node: cst.CSTNode) -> NoReturn:
        raise RevecError(message, self.src.loc(node))

    def globals(self) -> dict[str, Any]:
        return self.module.__dict__

    def lower_helper(self, name: str, node: cst.CSTNode,
                     arg_tys: tuple[Ty, ...] = ()) -> ir.HelperDef:
        """The helper ``name`` for a call with arguments of ``arg_tys``.  A helper with
        unannotated parameters is specialized per distinct signature of its call sites
        (their types, Python scalars taken as int64/float64/bool), as numba does."""
        if name in self.helper_stack:
            self.error(f"helper '{name}' is recursive: helpers cannot recurse "
                       "(only tasks recurse, through spawn)", node)
        fdef = self.functions.get(name)
        if fdef is None:
            self.error(f"'{name}' is not a module-level function of this file", node)
        params = fdef.params.params
        inferred = any(p.annotation is None for p in params)
        key = name
        sig: tuple[Ty, ...] | None = None
        if inferred and len(arg_tys) == len(params):
            sig = tuple(strong(t) for t in arg_tys)
            if any(t.dtype not in ir.SUPPORTED_DTYPES for t in sig):
                self.error(f"an argument of '{name}' has a type revec does not support", node)
            key = name + "__" + "_".join(
                t.dtype.name for p, t in zip(params, sig) if p.annotation is None)
        if key in self.helpers:
            return self.helpers[key]
        self.helper_stack.append(name)
        try:
            lowerer = FunctionLowerer(self, fdef, kind="helper")
            lowerer.arg_tys = sig
            try:
                helper = lowerer.lower_helper()
            except RevecError as err:
                if sig is None or err.loc is None:
                    raise
                where = f"{err.loc.line}:{err.loc.col}"
                types_ = ", ".join(f"{p.name.value}: {t}" for p, t in zip(params, sig))
                self.error(f"helper '{name}' called with ({types_}) does not type-check: "
                           f"{err.message} (at line {where})", node)
        finally:
            self.helper_stack.pop()
        if key != name:
            import dataclasses

            helper = dataclasses.replace(helper, name=key)
        self.helpers[key] = helper
        return helper


class FunctionLowerer:
    """Lowers one task or helper function to IR."""

    def __init__(self, ctx: ProgramContext, fdef: cst.FunctionDef, kind: str) -> None:
        self.ctx = ctx
        self.fdef = fdef
        self.kind = kind  # "task" or "helper"
        self.name = fdef.name.value
        self.params: tuple[ir.Param, ...] = ()
        self.env: dict[str, Ty] = {}
        self.changed = False
        self.final = False
        self.section = "base"  # base / inductive / helper
        self.returns: list[tuple[Ty, ...]] = []
        self.result_tys: tuple[Ty, ...] | None = None
        # a task that returns a value: its result type (annotated, or inferred from its
        # returns to a fixpoint) and whether it is annotated
        self.returns_value = False
        self.result_ty: Ty | None = None
        self.result_annotated = False
        self.task_returns: list[Ty] = []
        # helpers: the argument types of the call being specialized (None: annotated)
        self.arg_tys: tuple[Ty, ...] | None = None

    # ------------------------------------------------------------------ helpers
    def error(self, message: str, node: cst.CSTNode) -> NoReturn:
        self.ctx.error(message, node)

    def loc(self, node: cst.CSTNode) -> SourceLoc:
        return self.ctx.src.loc(node)

    def type_rule(self, fn: Callable[[], Ty], node: cst.CSTNode) -> Ty:
        try:
            return fn()
        except TypeRuleError as err:
            self.error(str(err), node)

    # ------------------------------------------------------------------ signature
    def lower_params(self) -> tuple[ir.Param, ...]:
        p = self.fdef.params
        for bad in (*p.posonly_params, *p.kwonly_params):
            self.error("only plain parameters are allowed", bad)
        if isinstance(p.star_arg, cst.Param):
            self.error("*args parameters are not allowed", p.star_arg)
        if p.star_kwarg is not None:
            self.error("**kwargs parameters are not allowed", p.star_kwarg)
        task_obj = self.ctx.globals().get(self.name)
        defaults = task_obj.defaults if isinstance(task_obj, Task) else {}
        out = []
        for i, prm in enumerate(p.params):
            pname = prm.name.value
            if prm.annotation is None and self.kind == "helper" and self.arg_tys is not None:
                out.append(ir.Param(pname, strong(self.arg_tys[i]), self.loc(prm)))
                continue
            if prm.annotation is None:
                self.error(f"parameter '{pname}' has no type annotation; annotate it with a "
                           "numpy scalar type such as np.int32 (or int/float/bool)", prm)
            ty = param_ty(self.eval_annotation(prm.annotation.annotation))
            if ty is None:
                text = self.ctx.src.module.code_for_node(prm.annotation.annotation)
                self.error(f"parameter '{pname}' has type '{text}', which is not a scalar type; "
                           "use np.int8..np.int64, np.uint8..np.uint64, np.float32, np.float64, "
                           "np.bool_, int, float or bool", prm.annotation.annotation)
            if pname in defaults and prm.default is not None:
                check_default(pname, ty, defaults[pname], self.loc(prm.default))
            out.append(ir.Param(pname, ty, self.loc(prm), defaults.get(pname),
                                pname in defaults))
        return tuple(out)

    def eval_annotation(self, node: cst.BaseExpression) -> Any:
        match node:
            case cst.Name(value=v):
                import builtins

                g = self.ctx.globals()
                return g[v] if v in g else getattr(builtins, v, None)
            case cst.Attribute(value=base, attr=cst.Name(value=attr)):
                return getattr(self.eval_annotation(base), attr, None)
            case cst.SimpleString():
                return None
        return None

    # ------------------------------------------------------------------ fixpoint driver
    def fixpoint(self, lower_body: Callable[[], Any]) -> Any:
        for _ in range(12):
            self.changed = False
            self.returns = []
            lower_body()
            if not self.changed:
                self.final = True
                self.returns = []
                return lower_body()
        raise RevecError("the types of the local variables do not settle",
                         self.loc(self.fdef))

    def set_local(self, name: str, ty: Ty, node: cst.CSTNode) -> Ty:
        if name in self.ctx.reducers or name in self.ctx.functions:
            self.error(f"assignment to '{name}' would shadow the module-level "
                       f"{'reducer' if name in self.ctx.reducers else 'function'} "
                       "(module globals are read-only)", node)
        if name in self.ctx.arrays or isinstance(self.ctx.globals().get(name), np.ndarray):
            self.error(f"assignment to '{name}': module-level arrays are read-only constants",
                       node)
        old = self.env.get(name)
        if old is None:
            self.env[name] = ty
            self.changed = True
            return ty
        is_param = any(p.name == name for p in self.params)
        if old.weak or ty.weak or old == ty:
            new = join(old, ty)
            if is_param and new != old:
                self.error(f"parameter '{name}' is {old}; assigning a {ty} value would change "
                           "its type (use a new local name)", node)
            if new != old:
                self.env[name] = new
                self.changed = True
            return self.env[name]
        self.error(f"'{name}' holds {old} values but is assigned a {ty} value here; every "
                   f"local has one type: convert explicitly, e.g. np.{old.dtype.name}(...)",
                   node)

    # ------------------------------------------------------------------ tasks
    def lower_task(self) -> ir.TaskDef:
        self.params = self.lower_params()
        self.ctx.task_params[self.name] = self.params
        if self.fdef.returns is not None:
            ann = self.fdef.returns.annotation
            if not (isinstance(ann, cst.Name) and ann.value == "None"):
                ty = param_ty(self.eval_annotation(ann))
                if ty is None or ty.kind not in "iuf":
                    text = self.ctx.src.module.code_for_node(ann)
                    self.error(f"a task's result type must be an integer or floating numpy "
                               f"scalar type (np.int64, np.float64, int, float, ...), not "
                               f"'{text}'", ann)
                self.result_ty, self.result_annotated = ty, True
        body = self.body_statements(self.fdef)
        self.returns_value = self.result_annotated or _returns_a_value(self.fdef.body)
        pro_nodes, cond_node, base_nodes, ind_nodes = self.split_task_body(body)

        def lower_all() -> tuple[tuple[ir.Stmt, ...], ir.Expr, tuple[ir.Stmt, ...],
                                 tuple[ir.Stmt, ...]]:
            self.env = {p.name: p.ty for p in self.params} | {
                k: v for k, v in self.env.items() if k not in {p.name for p in self.params}}
            self.task_returns = []
            self.section = "prologue"
            pro = self.block(pro_nodes)
            cond = self.condition(cond_node)
            self.section = "base"
            base = self.block(base_nodes)
            self.section = "inductive"
            ind = self.block(ind_nodes)
            if self.returns_value and not self.result_annotated and self.task_returns:
                guess = self.task_returns[0]
                for t in self.task_returns[1:]:
                    guess = join(guess, t)
                guess = strong(guess)
                if guess.kind not in "iuf":
                    self.error(f"this task returns {guess} values; a task's result must be "
                               "an integer or floating value", self.fdef)
                if guess != self.result_ty:
                    self.result_ty = guess
                    self.changed = True
                    # the locals' types were inferred from the old result type (a local
                    # summing children's results holds that type): infer them afresh
                    self.env = {}
            return pro, cond, base, ind

        pro, cond, base, ind = self.fixpoint(lower_all)
        locals_ = {k: v for k, v in self.env.items() if k not in {p.name for p in self.params}}
        return ir.TaskDef(self.name, self.params, locals_, cond, base, ind,
                          spawn_bound(ind), self.loc(self.fdef), prologue=pro,
                          result_ty=self.result_ty if self.returns_value else None)

    def body_statements(self, fdef: cst.FunctionDef) -> list[cst.CSTNode]:
        if not isinstance(fdef.body, cst.IndentedBlock):
            return list(fdef.body.body)
        stmts: list[cst.CSTNode] = list(fdef.body.body)
        if stmts and is_docstring(stmts[0]):
            stmts = stmts[1:]
        return stmts

    def split_task_body(self, stmts: list[cst.CSTNode]
                        ) -> tuple[Sequence[cst.CSTNode], cst.BaseExpression,
                                   Sequence[cst.CSTNode], Sequence[cst.CSTNode]]:
        """(prologue, is-base test, base case, inductive case).  The is-base ``if`` is
        the first top-level ``if`` whose body ends with ``return`` or that has an
        ``else`` and ends the function; statements before it are the prologue."""
        for node in stmts:
            for part in (node.body if isinstance(node, cst.SimpleStatementLine) else [node]):
                for kind, message in FORBIDDEN_STMTS.items():
                    if isinstance(part, kind):
                        self.error(message, part)
        shape = ("a task body must be 'if <is-base>: <base case> else: <inductive case>' "
                 "(or 'if <is-base>: <base case>; return' followed by the inductive case), "
                 "optionally after statements without spawns (the prologue)")
        at = None
        for i, node in enumerate(stmts):
            if isinstance(node, cst.If):
                body = list(block_body(node.body))
                if (node.orelse is None and body and ends_with_return(body[-1])) or (
                        node.orelse is not None and i == len(stmts) - 1):
                    at = i
                    break
        if at is None:
            self.error(shape, stmts[0] if stmts else self.fdef)
        first = stmts[at]
        assert isinstance(first, cst.If)
        prologue = stmts[:at]
        base = list(block_body(first.body))
        if first.orelse is not None:
            orelse = first.orelse
            ind: Sequence[cst.CSTNode] = (
                [orelse] if isinstance(orelse, cst.If) else list(block_body(orelse.body)))
            return prologue, first.test, base, ind
        return prologue, first.test, base, stmts[at + 1:]

    # ------------------------------------------------------------------ helpers (functions)
    def lower_helper(self) -> ir.HelperDef:
        for dec in self.fdef.decorators:
            self.error("helper functions take no decorators", dec)
        self.params = self.lower_params()
        self.section = "helper"
        stmts = self.body_statements(self.fdef)

        def lower_all() -> tuple[ir.Stmt, ...]:
            self.env = {p.name: p.ty for p in self.params} | {
                k: v for k, v in self.env.items() if k not in {p.name for p in self.params}}
            body = self.block(stmts)
            arities = {len(r) for r in self.returns}
            if len(arities) > 1:
                self.error(f"helper '{self.name}' returns different numbers of values",
                           self.fdef)
            if self.returns:
                n = arities.pop()
                tys = []
                for i in range(n):
                    t = self.returns[0][i]
                    for r in self.returns[1:]:
                        t = join(t, r[i])
                    tys.append(t)
                new = tuple(tys)
            else:
                new = ()
            if new != self.result_tys:
                self.result_tys = new
                self.changed = True
            return body

        body = self.fixpoint(lower_all)
        locals_ = {k: v for k, v in self.env.items() if k not in {p.name for p in self.params}}
        return ir.HelperDef(self.name, self.params, locals_, body, self.result_tys or (),
                            self.loc(self.fdef))

    # ------------------------------------------------------------------ statements
    def block(self, nodes: Sequence[cst.CSTNode]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for node in nodes:
            out.extend(self.stmt(node))
        return tuple(out)

    def stmt(self, node: cst.CSTNode) -> list[ir.Stmt]:
        loc = self.loc(node)
        match node:
            case cst.SimpleStatementLine(body=parts):
                out: list[ir.Stmt] = []
                for part in parts:
                    out.extend(self.stmt(part))
                return out
            case cst.If(test=test, body=body, orelse=orelse):
                cond = self.condition(test)
                then = self.block(block_body(body))
                if orelse is None:
                    els: tuple[ir.Stmt, ...] = ()
                elif isinstance(orelse, cst.If):
                    els = tuple(self.stmt(orelse))
                else:
                    els = self.block(block_body(orelse.body))
                return [ir.If(loc, cond, then, els)]
            case cst.For(orelse=orelse) if orelse is not None:
                self.error("for ... else is not allowed", orelse)
            case cst.For(asynchronous=asyn) if asyn is not None:
                self.error("async for is not allowed", node)
            case cst.For(target=target, iter=it, body=body):
                if not isinstance(target, cst.Name):
                    self.error("the loop variable must be a plain name", target)
                start, stop, step = self.range_args(it)
                var = target.value
                self.set_local(var, WEAK_INT, target)
                return [ir.For(loc, var, start, stop, step, self.block(block_body(body)))]
            case cst.While(orelse=orelse) if orelse is not None:
                self.error("while ... else is not allowed", orelse)
            case cst.While(test=test, body=body):
                return [ir.While(loc, self.condition(test), self.block(block_body(body)))]
            case cst.Break():
                return [ir.Break(loc)]
            case cst.Continue():
                return [ir.Continue(loc)]
            case cst.Pass():
                return []
            case cst.Return(value=value):
                return [self.return_stmt(node, value)]
            case cst.Assign(targets=targets, value=value):
                if len(targets) != 1:
                    self.error("chained assignment is not allowed; assign one target", node)
                return [self.assign(targets[0].target, value, node)]
            case cst.AnnAssign(target=target, value=value):
                if value is None:
                    self.error("a declaration without a value is not allowed", node)
                return [self.assign(target, value, node)]
            case cst.AugAssign(target=target, operator=op, value=value):
                if not isinstance(target, cst.Name):
                    self.write_target_error(target)
                name = target.value
                if name not in self.env:
                    self.not_assigned(name, target)
                cur = ir.Var(self.loc(target), self.env[name], name)
                rhs = self.binop(self.bin_op(op, AUG_OPS), cur, self.expr(value), node)
                ty = self.set_local(name, rhs.ty, node)
                return [ir.Assign(loc, name, self.convert(rhs, ty, node))]
            case cst.Expr(value=value):
                return self.expr_stmt(value, node)
            case _:
                for kind, message in FORBIDDEN_STMTS.items():
                    if isinstance(node, kind):
                        self.error(message, node)
                self.error(f"'{type(node).__name__}' statements are not allowed in a task", node)

    def return_stmt(self, node: cst.CSTNode, value: cst.BaseExpression | None) -> ir.Stmt:
        loc = self.loc(node)
        if self.kind == "task":
            if self.section == "prologue":
                self.error("return before the is-base test: the prologue (statements "
                           "before 'if <is-base>:') cannot return", node)
            if not self.returns_value:
                return ir.Return(loc)
            if value is None:
                self.error("this task returns a value: every 'return' needs one", node)
            val = self.expr(value)
            if val.ty.kind not in "iuf" or self.result_ty is None:
                self.task_returns.append(val.ty)
                if val.ty.kind not in "iuf":
                    self.error(f"a task's result must be an integer or floating value, "
                               f"not {val.ty}", value)
                return ir.Return(loc, (val,))
            self.task_returns.append(val.ty)
            return ir.Return(loc, (self.convert(val, self.result_ty, value),))
        if value is None:
            self.returns.append(())
            return ir.Return(loc)
        elems = ([e.value for e in value.elements] if isinstance(value, cst.Tuple)
                 else [value])
        vals = tuple(self.expr(e) for e in elems)
        self.returns.append(tuple(v.ty for v in vals))
        if self.result_tys is not None and len(self.result_tys) == len(vals):
            vals = tuple(self.convert(v, t, node) for v, t in zip(vals, self.result_tys))
        return ir.Return(loc, vals)

    def write_target_error(self, target: cst.CSTNode) -> NoReturn:
        if isinstance(target, cst.Subscript):
            self.error("module-level arrays are read-only constants; a task cannot write them",
                       target)
        if isinstance(target, cst.Attribute):
            self.error("writing attributes (module globals) is not allowed", target)
        self.error("only plain names can be assigned", target)

    def not_assigned(self, name: str, node: cst.CSTNode) -> NoReturn:
        if name in self.ctx.globals():
            self.error(f"'{name}' is a module-level global, which tasks may read but not write",
                       node)
        self.error(f"local '{name}' is used before it is assigned", node)

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression,
               node: cst.CSTNode) -> ir.Stmt:
        loc = self.loc(node)
        if isinstance(target, cst.Tuple):
            names = []
            for el in target.elements:
                if not isinstance(el.value, cst.Name):
                    self.write_target_error(el.value)
                names.append(el.value.value)
            call = self.expr(value, allow_tuple=True)
            if not isinstance(call, (ir.Call, ir.LibCall)):
                self.error("only a call returning several values can be unpacked", value)
            rtys = self.call_result_tys(call)
            if len(rtys) != len(names):
                self.error(f"unpacking {len(names)} names from a call that returns "
                           f"{len(rtys)} values", target)
            tys = tuple(self.set_local(n, t, target) for n, t in zip(names, rtys))
            return ir.Unpack(loc, tuple(names), call, tys)
        if not isinstance(target, cst.Name):
            self.write_target_error(target)
        val = self.expr(value)
        if isinstance(val, (ir.Call, ir.LibCall)) and len(self.call_result_tys(val)) != 1:
            self.error("this call returns several values: unpack them (a, b = ...)", value)
        ty = self.set_local(target.value, val.ty, target)
        return ir.Assign(loc, target.value, self.convert(val, ty, node))

    def call_result_tys(self, call: ir.Call | ir.LibCall) -> tuple[Ty, ...]:
        if isinstance(call, ir.LibCall):
            return call.result_tys
        return self.ctx.helpers[call.func].result_tys

    def range_args(self, it: cst.BaseExpression) -> tuple[ir.Expr, ir.Expr, ir.Expr]:
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name)
                and it.func.value == "range"):
            self.error("only 'for <name> in range(...)' loops are allowed", it)
        args = [self.expr(a.value) for a in it.args]
        for a, node in zip(args, it.args):
            if a.ty.kind not in "iub" or a.ty.kind == "b" and not a.ty.weak:
                self.error(f"range() needs integer arguments, not {a.ty}", node)
        loc = self.loc(it)
        if not 1 <= len(args) <= 3:
            self.error("range() takes 1 to 3 arguments", it)
        args = [self.convert(a, WEAK_INT, it) for a in args]
        one = ir.Const(loc, WEAK_INT, 1)
        zero = ir.Const(loc, WEAK_INT, 0)
        if len(args) == 1:
            return zero, args[0], one
        if len(args) == 2:
            return args[0], args[1], one
        if isinstance(args[2], ir.Const) and args[2].value == 0:
            self.error("range() step must not be zero", it)
        return args[0], args[1], args[2]

    def expr_stmt(self, value: cst.BaseExpression, node: cst.CSTNode) -> list[ir.Stmt]:
        loc = self.loc(node)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            fname = value.func.value
            if fname == "spawn" and self.is_lang("spawn"):
                return [self.spawn(value)]
            if fname == "reduce" and self.is_lang("reduce"):
                return [self.reduce(value)]
        if isinstance(value, (cst.Yield, cst.Await)):
            self.error(f"{'yield' if isinstance(value, cst.Yield) else 'await'} is not "
                       "allowed in a task", value)
        if isinstance(value, cst.SimpleString | cst.ConcatenatedString):
            return []  # a string statement (comment-like)
        val = self.expr(value, allow_tuple=True)
        if not isinstance(val, (ir.Call, ir.LibCall)):
            self.error("this statement has no effect", node)
        return [ir.ExprStmt(loc, val)]

    def is_lang(self, name: str) -> bool:
        import revec.lang as lang

        return self.ctx.globals().get(name) is getattr(lang, name)

    def spawn(self, call: cst.Call) -> ir.Stmt:
        if self.section == "helper":
            self.error("helpers cannot spawn: only the inductive case of a task spawns", call)
        if self.section == "base":
            self.error("spawn in the base case: the base case must not spawn", call)
        if self.section == "prologue":
            self.error("spawn before the is-base test: the prologue (statements before "
                       "'if <is-base>:') cannot spawn", call)
        if self.returns_value:
            self.error(f"this task returns a value: it recurses by using its own calls' "
                       f"results (e.g. return {self.name}(...) + ...), not by spawn", call)
        if not call.args:
            self.error("spawn needs the task to spawn as its first argument", call)
        for a in call.args:
            if a.keyword is not None or a.star:
                self.error("spawn takes positional arguments only", a)
        target = call.args[0].value
        if not (isinstance(target, cst.Name) and target.value == self.name):
            text = self.ctx.src.module.code_for_node(target)
            self.error(f"spawning another function '{text}': a task may only spawn itself "
                       f"(spawn({self.name}, ...))", target)
        params = self.params
        args = call.args[1:]
        if len(args) != len(params):
            self.error(f"spawn({self.name}, ...) passes {len(args)} argument"
                       f"{'s' if len(args) != 1 else ''}, but {self.name} takes {len(params)}",
                       call)
        vals = tuple(self.convert(self.expr(a.value), p.ty, a) for a, p in zip(args, params))
        return ir.Spawn(self.loc(call), vals)

    def reduce(self, call: cst.Call) -> ir.Stmt:
        if self.section == "helper":
            self.error("helpers cannot reduce: only tasks fold into reducers", call)
        if self.section == "prologue":
            self.error("reduce before the is-base test: the prologue (statements before "
                       "'if <is-base>:') cannot reduce; reduce in the base or inductive case",
                       call)
        if len(call.args) != 2 or any(a.keyword is not None or a.star for a in call.args):
            self.error("reduce takes two arguments: reduce(REDUCER, value)", call)
        rnode = call.args[0].value
        if not isinstance(rnode, cst.Name) or rnode.value not in self.ctx.reducers:
            text = self.ctx.src.module.code_for_node(rnode)
            self.error(f"'{text}' is not a declared reducer; declare it at module level, "
                       f"e.g. {text} = Reducer(np.int64, \"sum\")", rnode)
        decl = self.ctx.reducers[rnode.value]
        val = self.expr(call.args[1].value)
        self.check_reduce_narrowing(val, decl, call.args[1].value)
        return ir.Reduce(self.loc(call), decl.name,
                         self.convert(val, Ty(decl.dtype), call.args[1]))

    def bin_op(self, op: cst.CSTNode, table: dict[type, str]) -> str:
        """The operator's symbol; one outside the language (``@``) is a located error."""
        sym = table.get(type(op))
        if sym is None:
            text = self.ctx.src.module.code_for_node(op).strip()
            self.error(f"the operator '{text}' is not in the language (no matrix "
                       f"products on scalars); the operators are "
                       f"{' '.join(BIN_OPS.values())}", op)
        return sym

    def check_reduce_narrowing(self, val: ir.Expr, decl: ir.ReducerDecl,
                               node: cst.CSTNode) -> None:
        """A float folded into an integer (or bool) reducer would be truncated silently:
        the program must say so with an explicit conversion, e.g. np.int64(x)."""
        if val.ty.kind == "f" and decl.dtype.kind in "iub":
            self.error(f"reduce({decl.name}, ...) folds a {val.ty} value into the "
                       f"{decl.dtype.name} reducer '{decl.name}', which would truncate it; convert "
                       f"explicitly, e.g. np.{decl.dtype.name}(...), or declare the "
                       f"reducer as a float", node)

    # ------------------------------------------------------------------ expressions
    def condition(self, node: cst.BaseExpression) -> ir.Expr:
        return self.truth(self.expr(node, cond=True), node)

    def truth(self, e: ir.Expr, node: cst.CSTNode) -> ir.Expr:
        if e.ty.kind == "b":
            return e
        zero = ir.Const(e.loc, e.ty, 0.0 if e.ty.kind == "f" else 0)
        return ir.Compare(e.loc, BOOL, "!=", e, zero)

    def convert(self, e: ir.Expr, ty: Ty, node: cst.CSTNode) -> ir.Expr:
        """``e`` as a value of type ``ty`` (C-cast semantics)."""
        if e.ty.dtype == ty.dtype:
            if e.ty.weak == ty.weak or isinstance(e, ir.Const):
                return e if e.ty == ty else _retype(e, ty)
            return e
        if isinstance(e, ir.Const):
            value = e.value
            if ty.kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
                if not literal_fits(value, ty):
                    raise RevecError(f"integer literal {value} is out of range for {ty}", e.loc)
                return ir.Const(e.loc, ty, value)
            if ty.kind == "f":
                return ir.Const(e.loc, ty, float(value))
            if ty.kind == "b":
                return ir.Const(e.loc, ty, bool(value))
        return ir.Cast(e.loc, ty, e)

    def binop(self, op: str, left: ir.Expr, right: ir.Expr, node: cst.CSTNode) -> ir.Expr:
        res = self.type_rule(lambda: binary_result(op, left.ty, right.ty), node)
        if isinstance(left, ir.Const) and isinstance(right, ir.Const) and res.weak:
            # Python scalars: fold exactly as Python computes them
            try:
                value = BINARY_FUNCS[op](left.value, right.value)
            except (ArithmeticError, ValueError):
                return ir.BinOp(self.loc(node), res, op, left, right)
            if isinstance(value, int) and not -(1 << 63) <= value < (1 << 63):
                return ir.BinOp(self.loc(node), res, op, left, right)
            return ir.Const(self.loc(node), res, value)
        return ir.BinOp(self.loc(node), res, op, self.convert(left, res, node),
                        self.convert(right, res, node))

    def compare(self, op: str, left: ir.Expr, right: ir.Expr, node: cst.CSTNode) -> ir.Expr:
        ct = compare_type(left.ty, right.ty)
        for side, other in ((left, right), (right, left)):
            # a Python int literal that fits the typed side compares exactly in its type
            if (isinstance(side, ir.Const) and side.ty.weak and side.ty.kind in "iu"
                    and not other.ty.weak and other.ty.kind in "iu"
                    and literal_fits(int(side.value), other.ty)):
                ct = other.ty
        for side in (left, right):
            if (isinstance(side, ir.Const) and ct.kind in "iu"
                    and isinstance(side.value, int) and not literal_fits(int(side.value), ct)):
                ct = Ty(np.dtype(np.float64)) if ct.dtype == np.uint64 else Ty(
                    np.dtype(np.int64))
        return ir.Compare(self.loc(node), BOOL, op, self.convert(left, ct, node),
                          self.convert(right, ct, node))

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
                return self.name_ref(name, node)
            case cst.Attribute():
                return self.attribute_ref(node)
            case cst.BinaryOperation(left=l, operator=op, right=r):
                return self.binop(self.bin_op(op, BIN_OPS), self.expr(l), self.expr(r), node)
            case cst.UnaryOperation(operator=cst.Not(), expression=e):
                inner = self.truth(self.expr(e), e)
                return ir.UnaryOp(loc, BOOL, "not", inner)
            case cst.UnaryOperation(operator=op, expression=e):
                sym = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~"}[type(op)]
                inner = self.expr(e)
                if isinstance(inner, ir.Const) and inner.ty.weak and sym in ("-", "+"):
                    return ir.Const(loc, inner.ty, -inner.value if sym == "-" else inner.value)
                res = self.type_rule(lambda: unary_result(sym, inner.ty), node)
                return ir.UnaryOp(loc, res, sym, self.convert(inner, res, node))
            case cst.BooleanOperation(left=l, operator=op, right=r):
                left, right = self.expr(l, cond), self.expr(r, cond)
                if not cond and (left.ty.kind != "b" or right.ty.kind != "b"):
                    self.error("'and'/'or' on non-bool values is only allowed in conditions; "
                               "compare explicitly (e.g. x != 0)", node)
                sym = "and" if isinstance(op, cst.And) else "or"
                return ir.BoolOp(loc, BOOL, sym, self.truth(left, l), self.truth(right, r))
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
                c = self.condition(t)
                then, els = self.expr(b), self.expr(o)
                ty = join(then.ty, els.ty)
                return ir.IfExp(loc, ty, c, self.convert(then, ty, b), self.convert(els, ty, o))
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

    def name_ref(self, name: str, node: cst.CSTNode) -> ir.Expr:
        loc = self.loc(node)
        if name in self.env:
            return ir.Var(loc, self.env[name], name)
        g = self.ctx.globals()
        if name not in g:
            import builtins

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
        if name in self.ctx.reducers:
            self.error(f"reducer '{name}' can only be updated with reduce({name}, value)", node)
        self.error(f"module-level '{name}' is not a numeric constant a task can read", node)

    def attribute_ref(self, node: cst.Attribute) -> ir.Expr:
        value = self.eval_annotation(node)
        text = self.ctx.src.module.code_for_node(node)
        if isinstance(value, (int, float, np.generic)) and not isinstance(value, np.ndarray):
            return self.global_value(text, value, node)
        self.error(f"'{text}' is not a numeric constant a task can read", node)

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
            self.error("only module-level arrays can be indexed", node)
        name = base.value
        arr = self.ctx.globals().get(name)
        if name in self.env or not isinstance(arr, np.ndarray):
            self.error(f"'{name}' is not a module-level numpy array", base)
        if arr.dtype not in ir.SUPPORTED_DTYPES:
            self.error(f"array '{name}' has dtype {arr.dtype}, which revec does not support",
                       base)
        if len(indices) != arr.ndim:
            self.error(f"array '{name}' has {arr.ndim} dimension(s) but is indexed with "
                       f"{len(indices)}", node)
        idx = []
        for i in indices:
            e = self.expr(i)
            if e.ty.kind not in "iu":
                self.error(f"array index must be an integer, not {e.ty}", i)
            idx.append(self.convert(e, Ty(np.dtype(np.int64)), i))
        self.ctx.arrays[name] = arr
        return ir.ArrayRef(self.loc(node), Ty(arr.dtype), name, tuple(idx))

    def call(self, node: cst.Call, allow_tuple: bool) -> ir.Expr:
        loc = self.loc(node)
        for a in node.args:
            if a.keyword is not None or a.star:
                self.error("only positional arguments are allowed", a)
        func = node.func
        if isinstance(func, cst.Name):
            fname = func.value
            g = self.ctx.globals()
            target = g.get(fname)
            if fname in ("spawn", "reduce") and self.is_lang(fname):
                self.error(f"the value of {fname}(...) cannot be used: call it as a statement",
                           node)
            if isinstance(target, Task):
                if fname == self.name and self.kind == "task" and self.returns_value:
                    return self.recur(node)
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
            if fname in BUILTINS and fname not in g:
                return self.builtin_call(fname, node)
            self.error(f"call of '{fname}' is not allowed in a task: only helpers of this "
                       "module, revec.lib functions, abs/min/max/int/float/bool and numpy "
                       "scalar types and math functions can be called", node)
        if isinstance(func, cst.Attribute):
            target = self.eval_annotation(func)
            text = self.ctx.src.module.code_for_node(func)
            st = scalar_type_of(target)
            if st is not None and target not in (int, float, bool):
                if len(node.args) != 1:
                    self.error(f"{text}(...) takes one argument", node)
                arg = self.expr(node.args[0].value)
                return self.convert(arg, Ty(np.dtype(st)), node.args[0])
            fn_name = func.attr.value
            if target is getattr(np, fn_name, None) and fn_name in MATH_FUNCS:
                nargs = MATH_ARITY.get(fn_name, 1)
                if len(node.args) != nargs:
                    self.error(f"{text} takes {nargs} argument(s)", node)
                args = [self.expr(a.value) for a in node.args]
                res = self.type_rule(lambda: math_result(fn_name, tuple(a.ty for a in args)),
                                     node)
                conv = tuple(self.convert(a, res if res.kind != "b" else a.ty, n)
                             for a, n in zip(args, node.args))
                return ir.MathCall(loc, res, fn_name, conv)
            lib = self.lib_function(target)
            if lib is not None:
                return self.lib_call(lib, node, allow_tuple)
            self.error(f"call of '{text}' is not allowed in a task", node)
        self.error("only calls of named functions are allowed", node)

    def recur(self, node: cst.Call) -> ir.Expr:
        """A call of the task itself whose value is used (return-value recursion)."""
        if self.section == "base":
            self.error(f"recursive call of '{self.name}' in the base case: the base case "
                       "must not recurse", node)
        if self.section == "prologue":
            self.error(f"recursive call of '{self.name}' before the is-base test: the "
                       "prologue (statements before 'if <is-base>:') cannot recurse", node)
        params = self.params
        if len(node.args) != len(params):
            self.error(f"{self.name}(...) passes {len(node.args)} argument"
                       f"{'s' if len(node.args) != 1 else ''}, but {self.name} takes "
                       f"{len(params)}", node)
        vals = tuple(self.convert(self.expr(a.value), p.ty, a)
                     for a, p in zip(node.args, params))
        return ir.Recur(self.loc(node), self.result_ty or WEAK_INT, vals)

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
            out = args[0]
            for a, n in zip(args[1:], node.args[1:]):
                ty = builtin_result(fname, (out.ty, a.ty))
                ct = compare_type(out.ty, a.ty)
                out = ir.MathCall(loc, ty, "minimum" if fname == "min" else "maximum",
                                  (self.convert(out, ct, n), self.convert(a, ct, n)))
                if ct != ty:
                    out = self.convert(out, ty, n)
            return out
        if len(args) != 1:
            self.error(f"{fname}() takes one argument here", node)
        res = self.type_rule(lambda: builtin_result(fname, (args[0].ty,)), node)
        if fname == "abs":
            return ir.MathCall(loc, res, "abs", (self.convert(args[0], res, node),))
        if fname == "bool":
            return self.truth(args[0], node)
        return self.convert(args[0], res, node)

    def helper_call(self, fname: str, node: cst.Call, allow_tuple: bool) -> ir.Expr:
        raw = [self.expr(a.value) for a in node.args]
        fdef = self.ctx.functions[fname]
        if len(node.args) != len(fdef.params.params):
            self.error(f"{fname}() takes {len(fdef.params.params)} argument(s), "
                       f"got {len(node.args)}", node)
        helper = self.ctx.lower_helper(fname, node, tuple(a.ty for a in raw))
        args = tuple(self.convert(e, p.ty, a)
                     for e, a, p in zip(raw, node.args, helper.params))
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
        args = tuple(self.convert(self.expr(a.value), Ty(np.dtype(t)), a)
                     for a, t in zip(node.args, lib.arg_types))
        rts = tuple(Ty(np.dtype(t)) for t in lib.result_types)
        self.ctx.libs.add(lib.name)
        return ir.LibCall(self.loc(node), rts[0], lib.name, args, rts)


class _ValueReturns(cst.CSTVisitor):
    """Finds a ``return <value>`` anywhere under a node (a visitor, not
    ``libcst.matchers``, whose import alone costs about 0.25 s of every command)."""

    def __init__(self) -> None:
        self.found = False

    def visit_Return(self, node: cst.Return) -> bool:
        if node.value is not None:
            self.found = True
        return False


def _returns_a_value(node: cst.CSTNode) -> bool:
    finder = _ValueReturns()
    node.visit(finder)
    return finder.found


def _retype(e: ir.Expr, ty: Ty) -> ir.Expr:
    import dataclasses

    return dataclasses.replace(e, ty=ty)


def block_body(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.IndentedBlock):
        return body.body
    assert isinstance(body, cst.SimpleStatementSuite)
    return [cst.SimpleStatementLine(body=body.body)] if body.body else []


def is_docstring(node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1
            and isinstance(node.body[0], cst.Expr)
            and isinstance(node.body[0].value, cst.SimpleString | cst.ConcatenatedString))


def ends_with_return(node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.SimpleStatementLine) and bool(node.body)
            and isinstance(node.body[-1], cst.Return))


spawn_bound = ir.spawn_bound  # moved to revec.ir (shared with the passes)


def check_default(name: str, ty: Ty, value: Any, loc: SourceLoc) -> None:
    """A parameter default must be a value of the parameter's type (checked by
    ``revec check``, not first at ``revec run``)."""
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

"""The Python syntax adapter: libcst function definitions -> typed IR, through the
front-end core (:mod:`revec.frontend.builder`).

Every construct the language allows has a case below (or in
:mod:`revec.frontend.python.expressions`); anything else reaches the final ``case _``
and is rejected with a located error, so nothing unsupported slips through silently.
Local variable types are found by the builder's fixpoint.
"""

from __future__ import annotations

from typing import Any, NoReturn

import libcst as cst
import numpy as np

from revec import ir
from revec.frontend.builder import INT64, ArrayVar, Cases
from revec.frontend.python.context import ProgramContext
from revec.frontend.python.expressions import bound_update
from revec.frontend.python.lists import PrivateLists
from revec.frontend.python.signature import (
    ArrayArg,
    RootArray,
    TypeSpec,
    array_annotation,
    check_default,
    indexed_dimensions,
    is_view,
    length_bound,
    names_in,
    output_annotation,
    param_ty,
    self_calls,
    strong,
    used_as_array,
    value_spec,
)
from revec.frontend.python.syntax import (
    AUG_OPS,
    as_if,
    block_body,
    body_statements,
    ends_with_return,
    forbidden,
    literal_items,
    parallel_pairs,
    returns_a_value,
    shared_return,
    split_returning_elifs,
)
from revec.ir import BOOL, WEAK_INT, Ty
from revec.lang import Task


class PyFunction(PrivateLists):
    """Lowers one task or helper function to IR."""

    def __init__(self, ctx: ProgramContext, fdef: cst.FunctionDef, kind: str) -> None:
        super().__init__(ctx, fdef, kind)
        self.returns: list[tuple[Ty, ...]] = []  # a helper's returned types, this round
        self.result_tys: tuple[Ty, ...] | None = None
        self.result_annotated = False  # a task's result type is annotated
        self.task_returns: list[Ty] = []
        # the index of each loop over a literal tuple
        self.literal_index: dict[cst.CSTNode, str] = {}
        # the fresh locals of each parallel assignment (a, b = b, a)
        self.parallel_temps: dict[cst.CSTNode, list[str]] = {}

    def start_round(self) -> None:
        self.returns = []

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
        taken: set[str] | None = None
        for i, prm in enumerate(p.params):
            pname = prm.name.value
            if prm.annotation is None and self.kind == "helper" and self.arg_tys is not None:
                arg = self.arg_tys[i]
                if isinstance(arg, ArrayArg):
                    out += self.helper_array_param(pname, arg, prm)
                    continue
                out.append(ir.Param(pname, strong(arg), self.loc(prm)))
                continue
            if prm.annotation is None and self.kind == "task":
                spec = self.untyped_spec(pname, defaults)
                self.ctx.untyped.setdefault(self.name, {})[pname] = spec
                if isinstance(spec, RootArray):
                    if taken is None:
                        taken = names_in(self.fdef)
                    self.array_input(pname, i, spec.dtype, spec.ndim, prm, prm, taken)
                    continue
                root_ty = Ty(spec)
                if pname in defaults and prm.default is not None:
                    check_default(pname, root_ty, defaults[pname], self.loc(prm.default))
                out.append(ir.Param(pname, root_ty, self.loc(prm), defaults.get(pname),
                                    pname in defaults))
                continue
            if prm.annotation is None:
                self.error(f"parameter '{pname}' has no type annotation; annotate it with a "
                           "numpy scalar type such as np.int32 (or int/float/bool), or an "
                           "array type such as list[int] or NDArray[np.int32]", prm)
            ann = prm.annotation.annotation
            out_dtype = output_annotation(ann, self.ctx.globals())
            if out_dtype is not None:
                if taken is None:
                    taken = names_in(self.fdef)
                self.array_param(pname, i, out_dtype, indexed_dimensions(self.fdef, pname),
                                 prm, with_end=True, taken=taken, output=True)
                continue
            array = array_annotation(ann, self.ctx.globals())
            if array is not None:
                dtype, ndim = array
                if taken is None:
                    taken = names_in(self.fdef)
                self.array_input(pname, i, dtype, ndim, prm, ann, taken)
                continue
            ty = param_ty(self.annotation(ann))
            if ty is None:
                hint = ""
                if self.text(ann).split("[")[0].split(".")[-1] in ("ndarray", "list", "tuple",
                                                                   "Sequence", "NDArray"):
                    hint = (" (an array parameter needs its element type: list[int], "
                            "tuple[float, ...], NDArray[np.int32])")
                self.error(f"parameter '{pname}' has type "
                           f"'{self.text(ann)}', which is not a scalar "
                           "type; use np.int8..np.int64, np.uint8..np.uint64, np.float32, "
                           f"np.float64, np.bool_, int, float or bool{hint}", ann)
            if pname in defaults and prm.default is not None:
                check_default(pname, ty, defaults[pname], self.loc(prm.default))
            out.append(ir.Param(pname, ty, self.loc(prm), defaults.get(pname),
                                pname in defaults))
        return tuple(out + self.array_fields() + self.private_fields())

    def array_input(self, pname: str, i: int, dtype: np.dtype[Any], ndim: int | None,
                    prm: cst.Param, where: cst.CSTNode, taken: set[str]) -> None:
        """An array parameter (annotated, or typed from the root call's value): a
        read-only input, or a task-private list when a spawn passes a new list."""
        calls = self_calls(self.fdef, self.name) if self.kind == "task" else []
        if any(len(c) > i and not is_view(c[i], pname) for c in calls):
            if ndim not in (None, 1):
                self.error(f"'{pname}' is a list the task builds anew for its "
                           "children; such task-private lists have one dimension", where)
            self.private_list_param(pname, i, Ty(dtype), prm, taken, calls)
            return
        self.array_param(pname, i, dtype, ndim or indexed_dimensions(self.fdef, pname),
                         prm, with_end=True, taken=taken)

    def untyped_spec(self, pname: str, defaults: dict[str, Any]) -> TypeSpec:
        """The type of an unannotated task parameter: the root call's
        (``ctx.types``, set when the program is checked for a root call), else what
        its default value is, else what the body makes of it (indexed or measured with
        len(): a list of int64; otherwise an int64 scalar): the types ``revec check``
        checks with."""
        given = self.ctx.types.get((self.name, pname))
        if given is not None:
            return given
        if pname in defaults:
            spec = value_spec(defaults[pname])
            if spec is not None:
                return spec
        if used_as_array(self.fdef, pname):
            return RootArray(np.dtype(np.int64), indexed_dimensions(self.fdef, pname))
        return np.dtype(np.int64)

    def private_list_param(self, pname: str, position: int, ty: Ty, prm: cst.Param,
                           taken: set[str], calls: list[list[cst.BaseExpression]]) -> None:
        """A list parameter the task's spawns pass new lists for (``board + [c]``): a
        task-private list, bounded by its is-base test (``len(board) == n``)."""
        body = body_statements(self.fdef)
        shape = self.task_shape(body, self.fdef, as_if, ends_with_return)
        bound_node = length_bound(shape.test, pname)
        if bound_node is None:
            self.error(f"cannot bound the length of the task-private list '{pname}': its "
                       f"is-base test must end the recursion when the list is full "
                       f"(len({pname}) == N or len({pname}) >= N, N a constant or a "
                       "parameter every spawn passes on unchanged), so that the list can "
                       "be stored in the thread blocks with the task", shape.test)
        capacity, bound = self.capacity_of(bound_node, calls, pname)

        def fresh(base: str) -> str:
            name = ir.fresh_name(base, taken)
            taken.add(name)
            return name

        ann = prm.annotation.annotation if prm.annotation is not None else None
        base = ann.value if isinstance(ann, cst.Subscript) else None
        kind = base.value if isinstance(base, cst.Name) else (
            base.attr.value if isinstance(base, cst.Attribute) else "list")
        spec = self.ctx.untyped.get(self.name, {}).get(pname) if ann is None else None
        if isinstance(spec, RootArray):
            kind = spec.sequence
        av = self.private_param(pname, position, ty, capacity, bound, prm, with_length=True,
                                fresh=fresh,
                                sequence="tuple" if kind in ("tuple", "Tuple") else "list")
        self.array_vars[pname] = av

    def capacity_of(self, node: cst.BaseExpression, calls: list[list[cst.BaseExpression]],
                    pname: str) -> tuple[int, str | None]:
        """The capacity a bound ``N`` stands for: a constant, or a parameter every spawn
        passes unchanged (its root value, once bound: ``ctx.sizes``)."""
        if isinstance(node, cst.Integer):
            return max(int(node.evaluated_value), 1), None
        if isinstance(node, cst.Name):
            params = [q.name.value for q in self.fdef.params.params]
            if node.value in params:
                k = params.index(node.value)
                if all(len(c) > k and isinstance(c[k], cst.Name)
                       and getattr(c[k], "value", None) == node.value for c in calls):
                    size = self.ctx.sizes.get((self.name, node.value))
                    if size is None:  # checked before a root call: a nominal capacity
                        task_obj = self.ctx.globals().get(self.name)
                        default = (task_obj.defaults.get(node.value)
                                   if isinstance(task_obj, Task) else None)
                        size = int(default) if isinstance(default, int) else 1
                    return max(size, 1), node.value
            value = self.ctx.globals().get(node.value)
            if isinstance(value, int) and not isinstance(value, bool) and \
                    node.value not in params:
                return max(value, 1), None
        self.error(f"the length of the task-private list '{pname}' is bounded by "
                   f"'{self.text(node)}', which is neither a constant nor a parameter every "
                   "spawn passes on unchanged", node)

    def helper_array_param(self, pname: str, arg: ArrayArg, prm: cst.Param) -> list[ir.Param]:
        """A helper's parameter given a task-private list: one parameter per element and
        its length (the helper is specialised per capacity)."""
        taken = names_in(self.fdef)

        def fresh(base: str) -> str:
            name = ir.fresh_name(base, taken)
            taken.add(name)
            return name

        loc = self.loc(prm)
        elements = tuple(fresh(f"{pname}_{k}") for k in range(arg.capacity))
        length = fresh(f"{pname}_len") if arg.with_length else None
        self.array_vars[pname] = ArrayVar(pname, arg.ty, elements, length)
        out = [ir.Param(e, arg.ty, loc) for e in elements]
        if length is not None:
            out.append(ir.Param(length, INT64, loc))
        return out

    def bind_params(self) -> None:
        """Start a round of the fixpoint: the parameters' types, then the locals'."""
        names = {p.name for p in self.params}
        self.locals = {p.name: p.ty for p in self.params} | {
            k: v for k, v in self.locals.items() if k not in names}

    # ------------------------------------------------------------------ tasks
    def lower_task(self) -> ir.TaskDef:
        self.params = self.lower_params()
        if self.fdef.returns is not None:
            ann = self.fdef.returns.annotation
            if not (isinstance(ann, cst.Name) and ann.value == "None"):
                ty = param_ty(self.annotation(ann))
                if ty is None or ty.kind not in "iuf":
                    self.error(f"a task's result type must be an integer or floating numpy "
                               f"scalar type (np.int64, np.float64, int, float, ...), not "
                               f"'{self.text(ann)}'", ann)
                self.result_ty, self.result_annotated = ty, True
        pinned = self.ctx.types.get((self.name, ""))
        if pinned is not None and not self.result_annotated:
            # checked again with narrowed parameters: the result keeps the type the
            # root call's types gave it
            self.result_ty, self.result_annotated = Ty(np.dtype(pinned)), True
        body = shared_return(split_returning_elifs(body_statements(self.fdef)))
        self.returns_value = self.result_annotated or returns_a_value(self.fdef.body)
        for node in body:
            for part in (node.body if isinstance(node, cst.SimpleStatementLine) else [node]):
                message = forbidden(part)
                if message is not None:
                    self.error(message, part)
        shape = self.task_shape(body, self.fdef, as_if, ends_with_return)

        def lower_all() -> Cases:
            self.bind_params()
            self.task_returns = []
            cases = self.lower_cases(shape)
            if self.returns_value and not self.result_annotated and self.task_returns:
                self.infer_result_ty()
            return cases

        pro, cond, base, ind = self.fixpoint(lower_all, self.fdef)
        return self.task_def(pro, cond, base, ind, self.fdef,
                             self.result_ty if self.returns_value else None)

    def infer_result_ty(self) -> None:
        """An unannotated task's result type: the join of its returned values' types."""
        guess = self.task_returns[0]
        for t in self.task_returns[1:]:
            guess = self.rules.join(guess, t)
        guess = strong(guess)
        if guess.kind not in "iuf":
            self.error(f"this task returns {guess} values; a task's result must be "
                       "an integer or floating value", self.fdef)
        if guess != self.result_ty:
            self.result_ty = guess
            self.changed = True
            # the locals' types were inferred from the old result type (a local
            # summing children's results holds that type): infer them afresh
            self.locals = {}

    # ------------------------------------------------------------------ helpers (functions)
    def lower_helper(self) -> ir.HelperDef:
        for dec in self.fdef.decorators:
            self.error("helper functions take no decorators", dec)
        self.params = self.lower_params()
        self.section = "helper"
        stmts = body_statements(self.fdef)

        def lower_all() -> tuple[ir.Stmt, ...]:
            self.bind_params()
            body = self.block(stmts)
            arities = {len(r) for r in self.returns}
            if len(arities) > 1:
                self.error(f"helper '{self.name}' returns different numbers of values",
                           self.fdef)
            new: tuple[Ty, ...] = ()
            if self.returns:
                n = arities.pop()
                tys = []
                for i in range(n):
                    t = self.returns[0][i]
                    for r in self.returns[1:]:
                        t = self.rules.join(t, r[i])
                    tys.append(t)
                new = tuple(tys)
            if new != self.result_tys:
                self.result_tys = new
                self.changed = True
            return body

        body = self.fixpoint(lower_all, self.fdef)
        return self.helper_def(body, self.result_tys or (), self.fdef)

    # ------------------------------------------------------------------ statements
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
                items = literal_items(it)
                if items is not None:
                    return self.literal_loop(target.value, items, body, node)
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
                target = targets[0].target
                if isinstance(target, cst.Name) and (
                        target.value in self.array_vars or self.builds_list(value)):
                    return self.list_assign(target.value, value, node)
                if (pairs := parallel_pairs(target, value)) is not None:
                    return self.parallel_assign(pairs, node)
                if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) \
                        and target.value.value in self.array_vars and len(target.slice) == 1 \
                        and isinstance(target.slice[0].slice, cst.Index):
                    return self.list_store(self.array_vars[target.value.value],
                                           target.slice[0].slice.value, value, node)
                return [self.assign(target, value, node)]
            case cst.AnnAssign(target=target, value=value):
                if value is None:
                    self.error("a declaration without a value is not allowed", node)
                return [self.assign(target, value, node)]
            case cst.AugAssign(target=target, operator=op, value=value):
                if not isinstance(target, cst.Name):
                    self.write_target_error(target)
                name = target.value
                if name not in self.locals:
                    self.not_assigned(name, target)
                cur = ir.Var(self.loc(target), self.locals[name], name)
                rhs = self.arith(self.operator(op, AUG_OPS), cur, self.expr(value), node)
                ty = self.set_local(name, rhs.ty, node)
                return [ir.Assign(loc, name, self.convert(rhs, ty))]
            case cst.Expr(value=value):
                return self.expr_stmt(value, node)
            case _:
                message = forbidden(node)
                if message is not None:
                    self.error(message, node)
                self.error(f"'{type(node).__name__}' statements are not allowed in a task", node)

    def parallel_assign(self, pairs: list[tuple[cst.Name, cst.BaseExpression]],
                        node: cst.CSTNode) -> list[ir.Stmt]:
        """``a, b = b, a % b``: every value evaluated (into a fresh local each) before any
        name is assigned, as Python does."""
        loc = self.loc(node)
        temps = self.parallel_temps.get(node)
        if temps is None:  # the same locals every round of the type fixpoint
            taken = names_in(self.fdef) | set(self.literal_index.values()) | {
                t for ts in self.parallel_temps.values() for t in ts}
            temps = []
            for _ in pairs:
                temps.append(ir.fresh_name("_rv_tuple", taken | set(temps)))
            self.parallel_temps[node] = temps
        out: list[ir.Stmt] = []
        tys = []
        for tmp, (_, value) in zip(temps, pairs):
            val = self.expr(value)
            if isinstance(val, (ir.Call, ir.LibCall)) and len(self.call_result_tys(val)) != 1:
                self.error("this call returns several values: unpack them (a, b = ...)", value)
            tys.append(self.set_local(tmp, val.ty, node))
            out.append(ir.Assign(loc, tmp, self.convert(val, tys[-1])))
        for tmp, tmp_ty, (name, _) in zip(temps, tys, pairs):
            ty = self.set_local(name.value, tmp_ty, name)
            out.append(ir.Assign(loc, name.value, self.convert(ir.Var(loc, tmp_ty, tmp), ty)))
        return out

    def literal_loop(self, var: str, items: list[cst.BaseExpression], body: cst.BaseSuite,
                     node: cst.CSTNode) -> list[ir.Stmt]:
        """``for t in (1, 2, 3): body``: a loop over the items' positions whose body
        first sets ``t`` to the item there (the items are number literals, so
        evaluating them in the loop is evaluating them once)."""
        loc = self.loc(node)
        index = self.literal_index.get(node)
        if index is None:  # one index per loop (nested loops), the same every round
            taken = names_in(self.fdef) | set(self.literal_index.values())
            index = self.literal_index[node] = ir.fresh_name("_rv_item", taken)
        k = ir.Var(loc, WEAK_INT, index)
        value = self.expr(items[-1])
        for pos in range(len(items) - 2, -1, -1):
            test = ir.Compare(loc, BOOL, "==", k, ir.Const(loc, WEAK_INT, pos))
            value = self.select(test, self.expr(items[pos]), value, node)
        self.set_local(index, WEAK_INT, node)
        ty = self.set_local(var, value.ty, node)
        first = ir.Assign(loc, var, self.convert(value, ty))
        return [ir.For(loc, index, ir.Const(loc, WEAK_INT, 0),
                       ir.Const(loc, WEAK_INT, len(items)), ir.Const(loc, WEAK_INT, 1),
                       (first, *self.block(block_body(body))))]

    def set_local(self, name: str, ty: Ty, node: cst.CSTNode) -> Ty:
        if name in self.ctx.reducers or name in self.ctx.functions:
            self.error(f"assignment to '{name}' would shadow the module-level "
                       f"{'reducer' if name in self.ctx.reducers else 'function'} "
                       "(module globals are read-only)", node)
        if name in self.ctx.arrays or isinstance(self.ctx.globals().get(name), np.ndarray):
            self.error(f"assignment to '{name}': module-level arrays are read-only constants",
                       node)
        return self.merge_local(name, ty, node)

    def return_stmt(self, node: cst.CSTNode, value: cst.BaseExpression | None) -> ir.Stmt:
        loc = self.loc(node)
        if self.kind == "task":
            self.not_before_test("return", "return", node)
            if not self.returns_value:
                return ir.Return(loc)
            if value is None:
                self.error("this task returns a value: every 'return' needs one", node)
            val = self.expr(value)
            self.task_returns.append(val.ty)
            if val.ty.kind not in "iuf":
                self.error(f"a task's result must be an integer or floating value, "
                           f"not {val.ty}", value)
            if self.result_ty is None:
                return ir.Return(loc, (val,))
            return ir.Return(loc, (self.convert(val, self.result_ty),))
        if value is None:
            self.returns.append(())
            return ir.Return(loc)
        elems = ([e.value for e in value.elements] if isinstance(value, cst.Tuple)
                 else [value])
        vals = tuple(self.expr(e) for e in elems)
        self.returns.append(tuple(v.ty for v in vals))
        if self.result_tys is not None and len(self.result_tys) == len(vals):
            vals = tuple(self.convert(v, t) for v, t in zip(vals, self.result_tys))
        return ir.Return(loc, vals)

    def write_target_error(self, target: cst.CSTNode) -> NoReturn:
        base = target
        while isinstance(base, cst.Subscript):
            base = base.value
        ap = self.array_named(base.value) if isinstance(base, cst.Name) else None
        if ap is not None and ap.output:
            self.error(f"'{ap.name}' is an output array: write one element with "
                       f"{ap.name}[i] = value (reading it, as {ap.name}[i] += v does, is "
                       "not supported)", target)
        if isinstance(base, cst.Name) and self.array_named(base.value) is not None:
            self.error(f"'{base.value}' is a read-only input array; a task cannot write it "
                       "(build a new list for a child instead)", target)
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
        if isinstance(target, cst.Subscript):
            store = self.output_target(target, value, node)
            if store is not None:
                return store
        if not isinstance(target, cst.Name):
            self.write_target_error(target)
        val = self.expr(value)
        if isinstance(val, (ir.Call, ir.LibCall)) and len(self.call_result_tys(val)) != 1:
            self.error("this call returns several values: unpack them (a, b = ...)", value)
        ty = self.set_local(target.value, val.ty, target)
        return ir.Assign(loc, target.value, self.convert(val, ty))

    def output_target(self, target: cst.Subscript, value: cst.BaseExpression,
                      node: cst.CSTNode) -> ir.Store | None:
        """``out[i] = value`` (``out[i, j]``, ``out[i][j]``) on an output array
        parameter: its store; None when ``target`` indexes something else."""
        indices: list[cst.BaseExpression] = []
        base: cst.BaseExpression = target
        while isinstance(base, cst.Subscript):
            idx = []
            for el in base.slice:
                if not isinstance(el.slice, cst.Index):
                    if isinstance(base.value, cst.Name) and (
                            ap := self.array_named(base.value.value)) is not None and ap.output:
                        self.error("writes a slice of an output array; write one element "
                                   f"({ap.name}[i] = value)", el)
                    return None
                idx.append(el.slice.value)
            indices = idx + indices
            base = base.value
        if not isinstance(base, cst.Name):
            return None
        ap = self.array_named(base.value)
        if ap is None or not ap.output:
            return None
        return self.output_store(ap, indices, value, node)

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
        args = [self.convert(a, WEAK_INT) for a in args]
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
                return [self.spawn_stmt(value)]
            if fname == "reduce" and self.is_lang("reduce"):
                return [self.reduce_stmt(value)]
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                isinstance(value.func.value, cst.Name) and \
                value.func.value.value in self.ctx.reducers and \
                value.func.value.value not in self.locals:
            return [self.bound_stmt(value, value.func.value.value, value.func.attr.value)]
        if isinstance(value, (cst.Yield, cst.Await)):
            self.error(f"{'yield' if isinstance(value, cst.Yield) else 'await'} is not "
                       "allowed in a task", value)
        if isinstance(value, cst.SimpleString | cst.ConcatenatedString):
            return []  # a string statement (comment-like)
        val = self.expr(value, allow_tuple=True)
        if not isinstance(val, (ir.Call, ir.LibCall)):
            self.error("this statement has no effect", node)
        return [ir.ExprStmt(loc, val)]

    def spawn_stmt(self, call: cst.Call) -> ir.Stmt:
        if self.section == "helper":
            self.error("helpers cannot spawn: only the inductive case of a task spawns", call)
        self.not_in_base("spawn", "spawn", call)
        self.not_before_test("spawn", "spawn", call)
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
            self.error(f"spawning another function '{self.text(target)}': a task may only "
                       f"spawn itself (spawn({self.name}, ...))", target)
        args = call.args[1:]
        if len(args) != self.arity():
            self.error(f"spawn({self.name}, ...) passes {len(args)} argument"
                       f"{'s' if len(args) != 1 else ''}, but {self.name} takes "
                       f"{self.arity()}", call)
        return self.spawn([a.value for a in args], call)

    def reduce_stmt(self, call: cst.Call) -> ir.Stmt:
        if self.section == "helper":
            self.error("helpers cannot reduce: only tasks fold into reducers", call)
        self.not_before_test("reduce", "reduce", call, "; reduce in the base or inductive case")
        if len(call.args) != 2 or any(a.keyword is not None or a.star for a in call.args):
            self.error("reduce takes two arguments: reduce(REDUCER, value)", call)
        rnode = call.args[0].value
        if not isinstance(rnode, cst.Name) or rnode.value not in self.ctx.reducers:
            text = self.text(rnode)
            self.error(f"'{text}' is not a declared reducer; declare it at module level, "
                       f"e.g. {text} = Reducer(np.int64, \"sum\")", rnode)
        decl = self.ctx.reducers[rnode.value]
        if decl.bound:
            self.error(f"'{decl.name}' is a Bound, not an ordinary reducer: update it with "
                       f"{decl.name}.{bound_update(decl)}(value) and read it as "
                       f"{decl.name}.value to prune", rnode)
        return self.reduce(decl, call.args[1].value, call)

    def bound_stmt(self, call: cst.Call, name: str, method: str) -> ir.Stmt:
        """``best.raise_to(v)`` (a "max" Bound) or ``best.lower_to(v)`` (a "min" one):
        a reduction into the bound's hidden reducer."""
        decl = self.ctx.reducers[name]
        if not decl.bound:
            self.error(f"'{name}' is a Reducer: update it with reduce({name}, value)", call)
        if method not in ("raise_to", "lower_to"):
            self.error(f"'{name}' is a Bound: update it with {name}.{bound_update(decl)}(v)",
                       call.func)
        if method != bound_update(decl):
            self.error(f"'{name}' is a \"{decl.op}\" Bound: it is only "
                       f"{'raised' if decl.op == 'max' else 'lowered'} "
                       f"({name}.{bound_update(decl)}(v)); a bound both raised and lowered "
                       "cannot prune soundly", call.func)
        if self.section == "helper":
            self.error("helpers cannot update a bound: only tasks do", call)
        self.not_before_test(f"{name}.{method}", "update a bound", call,
                             "; update it in the base or inductive case")
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            self.error(f"{name}.{method} takes one value", call)
        return self.reduce(decl, call.args[0].value, call)


"""The Cilk C syntax adapter: pycparser function definitions -> typed IR, through the
front-end core (:mod:`revec.frontend.builder`).

A *task* is a function that spawns (``cilk_spawn``) or calls itself; a function
returning a value becomes a value-returning task (``TaskDef.result_ty``) whose own calls
are :class:`revec.ir.Recur` nodes, so the shared pass :mod:`revec.transforms.returns`
derives its spawns and reducers exactly as for a Python program.  Other functions called
by tasks are helpers.  This module lowers functions and statements (the C-only parts:
block scopes, ``cilk_sync`` and the values pending before it, ``for`` loops, local
arrays collecting spawned results); :mod:`revec.frontend.c.expressions` lowers
expressions.
"""

from __future__ import annotations

from collections.abc import Sequence

from pycparser import c_ast

from revec import ir
from revec.frontend.c.boards import CBoards, is_alloca, strip_casts
from revec.frontend.c.bounds import LOWER, RAISE, update_of
from revec.frontend.c.collect import (
    Collect,
    collects_into,
    counter_only_counts,
    counting_loop,
    indexed,
    memset_calls,
    set_after,
    sum_loops,
    write_counts,
)
from revec.frontend.c.context import CProgramContext, spelling
from revec.frontend.c.cutoff import strip_cutoffs
from revec.frontend.c.loops import Range, as_range, continue_with, has_continue
from revec.frontend.c.outputs import output_params, split_pointer
from revec.frontend.c.source import SYNC_NAMES
from revec.frontend.c.syntax import (
    as_if,
    assigned_names,
    body_items,
    ends_with_return,
    is_spawn,
    key,
    walk,
)
from revec.frontend.c.task_forms import recursive_first, shared_tail
from revec.frontend.c.typenames import c_name
from revec.frontend.rules.c99 import I32, I64, usual
from revec.frontend.shape import TaskShape
from revec.ir import BOOL, Ty
from revec.lib import LibFunction


class CFunction(CBoards):
    """Lowers one C task or helper function to IR."""

    def __init__(self, ctx: CProgramContext, fdef: c_ast.FuncDef | None, kind: str) -> None:
        super().__init__(ctx, fdef, kind)
        self.sum_loops: dict[int, Collect] = {}  # id of a summing loop -> its array
        self.loop_depth = 0
        self.loop_nodes: list[c_ast.Node | None] = []  # the loops around a statement
        # local array -> (C name of the local it is summed into, the summing loop)
        self.summed: dict[str, tuple[str, c_ast.For]] = {}
        self.outputs: set[str] = set()  # the pointer parameters that are output arrays

    # ------------------------------------------------------------------ functions
    def signature(self) -> None:
        assert self.fdef is not None
        fdecl = self.fdef.decl.type
        assert isinstance(fdecl, c_ast.FuncDecl)
        self.result = self.ctx.type_of(fdecl.type, f"the result of '{self.name}'")
        params: list[ir.Param] = []
        position = 0
        self.outputs = output_params(self.fdef)  # pointer parameters written through
        for p in (fdecl.args.params if fdecl.args is not None else []):
            if isinstance(p, c_ast.EllipsisParam):
                self.error("variadic functions are not supported", p)
            if isinstance(p, c_ast.Typename):
                if self.ctx.type_of(p.type, "a parameter") is None:
                    continue  # f(void)
                self.error("a parameter needs a name", p)
            if isinstance(p.type, (c_ast.PtrDecl, c_ast.ArrayDecl)):
                if position in self.helper_board_args:
                    params += self.helper_board_param(p, position)
                elif self.is_private_param(p, position):
                    ty = self.ctx.type_of(p.type.type, f"the elements of '{p.name}'")
                    if ty is None:
                        self.error(f"parameter '{p.name}' points to void", p)
                    self.private_pointer_param(p, position, ty)
                else:
                    self.pointer_param(p, position)
                position += 1
                continue
            if self.ctx.struct_of(p.type) is not None:
                self.error(f"parameter '{p.name}' is a struct passed by value; revec reads "
                           f"structs as arrays: pass a pointer (const {spelling(p.type)} "
                           f"*{p.name}) and read {p.name}->field", p)
            ty = self.ctx.type_of(p.type, f"parameter '{p.name}'")
            if ty is None:
                self.error("a parameter of type void", p)
            irname = self.declare(p.name, ty, p)
            params.append(ir.Param(irname, ty, self.loc(p)))
            position += 1
        self.params = tuple(params)
        self.params += tuple(self.array_fields()) + tuple(self.private_fields())
        for f in self.array_fields() + self.private_fields():  # locals of the task too
            self.locals[f.name] = f.ty
            self.ctypes[f.name] = f.ty
        self.scopes.open()

    def pointer_param(self, p: c_ast.Decl, position: int) -> None:
        """A pointer (or array) parameter of a task: a read-only input array (its
        writes are rejected where they are)."""
        inner = p.type.type
        if isinstance(inner, (c_ast.PtrDecl, c_ast.ArrayDecl)):
            self.error(f"parameter '{p.name}' is a pointer to pointers (or a 2-D array); "
                       "pass a flat array and index it a[i * n + j]", p)
        output = p.name in self.outputs
        if self.kind != "task":
            if output:
                self.error(f"helper '{self.name}' writes through its pointer parameter "
                           f"'{p.name}'; only a task writes output arrays (return the value "
                           "and store it in the task)", p)
            self.error(f"pointer parameter '{p.name}' is not supported; helpers take scalar "
                       "values (pass the elements they need)", p)
        if self.scopes.in_block(p.name):
            self.error(f"'{p.name}' is declared twice in this block", p)
        struct = self.ctx.struct_of(inner)
        if struct is not None:  # an array of structs: one input per field
            self.struct_names[p.name] = spelling(inner)
            fields = self.ctx.struct_fields(struct, p, spelling(inner))
            ap = self.array_param(p.name, position, None, 1, p, with_end=False,
                                  taken=set(self.scopes.used),
                                  fields=[(f.name, f.ty.dtype) for f in fields])
        else:
            ty = self.ctx.type_of(inner, f"the elements of parameter '{p.name}'")
            if ty is None:
                self.error(f"parameter '{p.name}' points to void; give the elements a type", p)
            ap = self.array_param(p.name, position, ty.dtype, 1, p, with_end=False,
                                  taken=set(self.scopes.used), output=output)
        self.scopes.used.add(ap.offset)
        self.scopes.bind(p.name, f"<input>{p.name}")

    def lower_task(self) -> ir.TaskDef:
        assert self.fdef is not None
        self.signature()
        items = strip_cutoffs(self.fdef, self.ctx.functions,
                              list(self.fdef.body.block_items or []), self.error)
        self.summed = sum_loops(self.fdef.body, self.error)
        shape = self.task_shape(shared_tail(items), self.fdef, as_if, ends_with_return)
        shape = recursive_first(shape, self.name)
        pro, cond, base, ind = self.lower_cases(shape)
        if self.result is None:
            base, ind = _drop_void_tail(base), _drop_void_tail(ind)
        return self.task_def(pro, cond, base, ind, self.fdef, self.result)

    def base_case(self, nodes: Sequence[c_ast.Node]) -> tuple[ir.Stmt, ...]:
        """A block of its own; what its spawns assign is not pending after it (the
        inductive case starts from the prologue's state)."""
        pending = set(self.pending)
        base = self.scoped(nodes)
        self.pending = pending
        return base

    def inductive_case(self, shape: TaskShape[c_ast.Node, c_ast.Node]
                       ) -> tuple[ir.Stmt, ...]:
        """The ``else`` block, or the statements after the is-base ``if`` (in the
        function's block)."""
        return self.scoped(shape.inductive) if shape.has_else else self.block(shape.inductive)

    def lower_helper(self) -> ir.HelperDef:
        assert self.fdef is not None
        self.signature()
        if self.result is None:
            self.error(f"helper '{self.name}' returns void; a function without spawns "
                       "must return a value (it cannot have effects)", self.fdef.decl)
        self.section = "helper"
        body = self.block(list(self.fdef.body.block_items or []))
        return self.helper_def(body, (self.result,), self.fdef)

    # ------------------------------------------------------------------ statements
    def scoped(self, nodes: Sequence[c_ast.Node]) -> tuple[ir.Stmt, ...]:
        self.scopes.open()
        try:
            return self.block(nodes)
        finally:
            self.scopes.close()

    def stmt(self, node: c_ast.Node) -> list[ir.Stmt]:
        loc = self.loc(node)
        if id(node) in self.ctx.counter_stmts:
            return []  # number_of_tasks++: a statistics counter no task reads
        match node:
            case c_ast.Compound():
                return list(self.scoped(body_items(node)))
            case c_ast.Decl():
                return self.local_decl(node)
            case c_ast.DeclList():
                return [s for d in node.decls for s in self.local_decl(d)]
            case c_ast.If() if self.is_bound_update(node):
                return [self.bound_update(node)]
            case c_ast.If():
                cond = self.condition(node.cond)
                before = set(self.pending)
                then = self.scoped(body_items(node.iftrue))
                after_then = self.pending
                self.pending = set(before)
                els = self.scoped(body_items(node.iffalse))
                self.pending |= after_then
                return [ir.If(loc, cond, then, els)]
            case c_ast.For():
                return self.for_stmt(node)
            case c_ast.While():
                cond = self.condition(node.cond)
                body = self.loop_body(node.stmt)
                return [ir.While(loc, cond, body)]
            case c_ast.DoWhile():
                body = self.loop_body(node.stmt)
                if has_continue(body):
                    self.error("continue inside do ... while is not supported", node)
                cond = self.condition(node.cond)
                stop = ir.If(loc, ir.UnaryOp(loc, BOOL, "not", cond), (ir.Break(loc),), ())
                return [ir.While(loc, ir.Const(loc, BOOL, True), (*body, stop))]
            case c_ast.Break():
                return [ir.Break(loc)]
            case c_ast.Continue():
                return [ir.Continue(loc)]
            case c_ast.Return():
                return [self.return_stmt(node)]
            case c_ast.EmptyStatement() | c_ast.Pragma():
                return []
            case c_ast.Goto():
                self.error("goto is not supported", node)
            case c_ast.Label():
                self.error("labels (and goto) are not supported", node)
            case c_ast.Switch():
                self.error("switch is not supported; use if / else if", node)
            case c_ast.Assignment():
                return self.assignment(node)
            case c_ast.UnaryOp(op="p++" | "++" | "p--" | "--"):
                return self.increment(node)
            case c_ast.ID(name=name) if name in SYNC_NAMES:
                if self.section == "helper":
                    self.error("cilk_sync in a function without spawns", node)
                self.pending = set()
                return []
            case c_ast.FuncCall():
                return self.call_stmt(node)
            case _ if is_spawn(node):
                return self.spawn_stmt(node)
            case c_ast.ExprList():
                out: list[ir.Stmt] = []
                for e in node.exprs:
                    out += self.stmt(e)
                return out
            case c_ast.Cast(expr=c_ast.FuncCall() as call) if isinstance(
                    node.to_type.type, c_ast.TypeDecl) and getattr(
                    node.to_type.type.type, "names", None) == ["void"]:
                return self.call_stmt(call)  # (void) memset(...)
            case c_ast.Cast() | c_ast.BinaryOp() | c_ast.UnaryOp() | c_ast.ID() | \
                    c_ast.Constant() | c_ast.TernaryOp() | c_ast.ArrayRef():
                self.error("this statement has no effect", node)
        self.error(f"'{type(node).__name__}' statements are not supported", node)

    def loop_body(self, body: c_ast.Node | None, loop: c_ast.Node | None = None
                  ) -> tuple[ir.Stmt, ...]:
        if body is not None:
            # without a cilk_sync in the loop, what a spawn in one iteration assigns is
            # still pending in the next one: reads anywhere in the loop are before the sync
            nodes = walk(body)
            if not any(isinstance(n, c_ast.ID) and n.name in SYNC_NAMES for n in nodes):
                for n in nodes:
                    if isinstance(n, c_ast.Assignment) and is_spawn(n.rvalue):
                        target = n.lvalue
                        name = target.name if isinstance(target, c_ast.ID) else None
                        irname = self.scopes.lookup(name) if name is not None else None
                        if isinstance(target, c_ast.ArrayRef) and isinstance(
                                target.name, c_ast.ID) and target.name.name in self.collects:
                            irname = self.collect_target(self.collects[target.name.name])
                        if irname is not None:
                            self.pending.add(irname)
        self.loop_depth += 1
        self.loop_nodes.append(loop)
        try:
            return self.scoped(body_items(body))
        finally:
            self.loop_depth -= 1
            self.loop_nodes.pop()

    def local_decl(self, d: c_ast.Decl) -> list[ir.Stmt]:
        if isinstance(d.type, c_ast.FuncDecl):
            self.error("function declarations inside functions are not supported", d)
        if "static" in (d.storage or []):
            self.error(f"static local '{d.name}' is global state, which is not supported", d)
        if isinstance(d.type, c_ast.ArrayDecl):
            if self.collecting(d.name):
                return self.collect_decl(d)
            return self.board_decl(d)
        if isinstance(d.type, c_ast.PtrDecl) and self.collecting(d.name) and \
                self.alloca_size(d) is not None:
            return self.collect_decl(d)  # int *count = alloca(n * sizeof(int));
        if isinstance(d.type, c_ast.PtrDecl) and (is_alloca(d.init) or (
                d.init is None and self.alloca_size(d) is not None)):
            return self.board_decl(d)
        ty = self.ctx.type_of(d.type, f"'{d.name}'")
        if ty is None:
            self.error("a variable of type void", d)
        if isinstance(d.init, c_ast.InitList):
            self.error(f"'{d.name}' is a scalar; initialize it with a value", d.init)
        value = None
        spawned = False
        if d.init is not None:
            value, spawned = self.rhs(d.init)
        irname = self.declare(d.name, ty, d)
        if value is None:
            return []
        if spawned:
            self.pending.add(irname)
        return [ir.Assign(self.loc(d), irname, self.convert(value, ty))]

    def rhs(self, node: c_ast.Node) -> tuple[ir.Expr, bool]:
        """The value of an assignment's right side; True if it is a spawned call."""
        if is_spawn(node):
            call = node.expr
            self.check_spawn(call, node)
            return self.recursive_call(call, spawned=True), True
        return self.expr(node), False

    def check_spawn(self, call: c_ast.Node, node: c_ast.Node) -> None:
        if not (isinstance(call, c_ast.FuncCall) and isinstance(call.name, c_ast.ID)):
            self.error("cilk_spawn must be followed by a call of the task", node)
        if self.kind != "task":
            self.error("cilk_spawn in a function without spawns", node)
        if call.name.name != self.name:
            self.error(f"spawning another function '{call.name.name}': a task may only spawn "
                       f"itself (cilk_spawn {self.name}(...))", call.name)

    def spawn_stmt(self, node: c_ast.Cast) -> list[ir.Stmt]:
        call = node.expr
        self.check_spawn(call, node)
        if self.result is not None:
            self.error(f"the value of this spawned call is dropped; assign it "
                       f"(x = cilk_spawn {self.name}(...)) and use it after cilk_sync", node)
        return [self.void_spawn(call)]

    def void_spawn(self, call: c_ast.FuncCall) -> ir.Stmt:
        self.not_before_test("cilk_spawn", "spawn", call)
        self.not_in_base("cilk_spawn", "spawn", call)
        return self.spawn(self.counted(call, self.arity()), call)

    def call_stmt(self, node: c_ast.FuncCall) -> list[ir.Stmt]:
        if not isinstance(node.name, c_ast.ID):
            self.error("calls through pointers are not supported", node)
        fname = node.name.name
        if fname == self.name and self.kind == "task" and self.result is None:
            return [self.void_spawn(node)]  # a plain recursive call: a task like a spawn
        lib = self.ctx.lib(fname)
        if lib is not None and len(lib.result_types) > 1:
            return [self.lib_unpack(lib, node)]
        cleared = self.collect_call(node)
        if cleared is not None:
            return cleared
        board = self.board_call(node)
        if board is not None:
            return board
        value = self.expr(node)
        if isinstance(value, ir.Recur):
            self.error(f"the value of this call of '{self.name}' is dropped", node)
        return [ir.ExprStmt(self.loc(node), value)]

    def lib_unpack(self, lib: LibFunction, node: c_ast.FuncCall) -> ir.Stmt:
        nodes = self.arg_nodes(node)
        n_in, n_out = len(lib.arg_types), len(lib.result_types)
        if len(nodes) != n_in + n_out:
            self.error(f"{lib.name}() takes {n_in} values and {n_out} result addresses "
                       f"(&local), got {len(nodes)} arguments", node)
        call = self.library_call(lib, nodes[:n_in], node)
        targets: list[str] = []
        tys: list[Ty] = []
        for a in nodes[n_in:]:
            if not (isinstance(a, c_ast.UnaryOp) and a.op == "&" and isinstance(a.expr, c_ast.ID)):
                self.error(f"{lib.name}() writes its results to locals: pass &name", a)
            irname = self.scopes.lookup(a.expr.name)
            if irname is None or irname in self.loopvars:
                self.error(f"'{a.expr.name}' is not a local variable of this function", a)
            targets.append(irname)
            tys.append(self.locals[irname])
        return ir.Unpack(self.loc(node), tuple(targets), call, tuple(tys))

    def return_stmt(self, node: c_ast.Return) -> ir.Stmt:
        loc = self.loc(node)
        self.not_before_test("return", "return", node)
        if self.result is None:
            if node.expr is not None:
                self.error(f"'{self.name}' returns void; return without a value", node.expr)
            return ir.Return(loc)
        if node.expr is None:
            self.error(f"'{self.name}' returns {c_name(self.result)}: return a value", node)
        if is_spawn(node.expr):
            self.error("return cilk_spawn ...: assign the spawned value, cilk_sync, then "
                       "return it", node.expr)
        value = self.expr(node.expr)
        return ir.Return(loc, (self.convert(value, self.result),))

    # ------------------------------------------------------------------ assignments
    def target(self, lvalue: c_ast.Node) -> str:
        if isinstance(lvalue, c_ast.ID):
            irname = self.scopes.lookup(lvalue.name)
            if irname is None:
                if lvalue.name in self.ctx.bounds:
                    b = self.ctx.bounds[lvalue.name]
                    form = RAISE if b.op == "max" else LOWER
                    self.error(f"writes the bound '{lvalue.name}' other than by "
                               f"{form[0].replace('G', lvalue.name)}: a bound is only "
                               f"{form[1]}, to prune", lvalue)
                if lvalue.name in self.ctx.globals:
                    self.error(f"writes the file-scope variable '{lvalue.name}'; global "
                               "writes are not supported (tasks return their results; a bound for "
                               f"pruning is only raised, if (v > {lvalue.name}) {lvalue.name} = v;"
                               ", or only lowered)", lvalue)
                self.error(f"'{lvalue.name}' is not declared", lvalue)
            if irname in self.loopvars:
                self.error(f"the loop index '{lvalue.name}' is assigned in its loop", lvalue)
            return irname
        if isinstance(lvalue, c_ast.StructRef):
            base = lvalue.name
            while isinstance(base, (c_ast.StructRef, c_ast.ArrayRef, c_ast.UnaryOp,
                                    c_ast.BinaryOp)):
                base = base.left if isinstance(base, c_ast.BinaryOp) else (
                    base.expr if isinstance(base, c_ast.UnaryOp) else base.name)
            self.reject_input_write(base, lvalue)
            self.error("only local variables can be assigned (struct fields are read from "
                       "read-only inputs)", lvalue)
        if isinstance(lvalue, c_ast.UnaryOp) and lvalue.op == "*":
            base = lvalue.expr
            while isinstance(base, c_ast.BinaryOp):
                base = base.left
            self.reject_input_write(base, lvalue)
        if isinstance(lvalue, c_ast.ArrayRef):
            base = lvalue
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            self.reject_input_write(base, lvalue)
            if isinstance(base, c_ast.ID) and base.name in self.ctx.globals and \
                    self.scopes.lookup(base.name) is None:
                self.error(f"writes the file-scope array '{base.name}'; global writes are not "
                           "supported (file-scope arrays are read-only constants)", lvalue)
        if isinstance(lvalue, c_ast.UnaryOp) and lvalue.op == "*":
            self.error("pointers are not supported", lvalue)
        self.error("only local variables can be assigned", lvalue)

    def assignment(self, node: c_ast.Assignment) -> list[ir.Stmt]:
        loc = self.loc(node)
        if isinstance(node.lvalue, c_ast.ID) and node.lvalue.name in self.collects and \
                self.scopes.lookup(node.lvalue.name) == f"<array {node.lvalue.name}>":
            c = self.collects[node.lvalue.name]
            if not (c.alloca and is_alloca(node.rvalue) and node.op == "="):
                self.error(f"'{c.name}' collects results; it is assigned only its alloca'd "
                           "storage", node)
            if self.loop_depth:
                self.error(f"'{c.name}' collects results; allocate it once, before the loop "
                           "that fills it", node)
            return []  # the collecting array's storage: its elements go into a sum
        if isinstance(node.lvalue, c_ast.ID) and self.board_named(node.lvalue.name) and \
                is_alloca(node.rvalue) and node.op == "=":
            return []  # the board's storage (its capacity was read from this alloca)
        stores = self.board_store(node.lvalue, node)
        if stores is not None:
            return stores
        if isinstance(node.lvalue, c_ast.ArrayRef) and isinstance(node.lvalue.name, c_ast.ID) \
                and node.lvalue.name.name in self.collects:
            return self.collect_write(node)
        view = self.output_element(node.lvalue)
        if view is not None:
            ap, index = view
            if node.op != "=":
                self.error(f"'{node.op}' on an element of the output array '{ap.name}' reads "
                           f"it; tasks only write outputs ({ap.name}[i] = value)", node)
            return [self.output_store(ap, [index], node.rvalue, node)]
        irname = self.target(node.lvalue)
        ty = self.ctypes[irname]
        value, spawned = self.rhs(node.rvalue)
        if node.op != "=":
            if spawned and node.op != "+=":
                self.error("only x = cilk_spawn ... and x += cilk_spawn ... are supported",
                           node)
            # x += cilk_spawn f(...) reads x only to accumulate the children's values
            # (the return-value pass sums them): no read of a pending value
            cur = (ir.Var(self.loc(node.lvalue), self.locals[irname], irname) if spawned
                   and irname not in self.loopvars else self.read_var(irname, node.lvalue))
            value = self.arith(node.op[:-1], cur, value, node)
        if spawned:
            self.pending.add(irname)
        return [ir.Assign(loc, irname, self.convert(value, ty))]

    def output_element(self, lvalue: c_ast.Node) -> tuple[ir.ArrayParam, c_ast.Node] | None:
        """``out[i]``, ``*out``, ``*(out + k)`` on an output array parameter: it and the
        index node; None for any other lvalue."""
        if isinstance(lvalue, c_ast.ArrayRef) and isinstance(lvalue.name, c_ast.ID):
            ap = self.input_named(lvalue.name.name)
            if ap is not None and ap.output:
                return ap, lvalue.subscript
        if isinstance(lvalue, c_ast.UnaryOp) and lvalue.op == "*":
            found = split_pointer(lvalue.expr, lambda n: (
                (a := self.input_named(n)) is not None and a.output))
            if found is not None:
                ap = self.input_named(found[0])
                assert ap is not None
                return ap, found[1]
        return None

    def is_bound_update(self, node: c_ast.If) -> bool:
        """``node`` updates a bound (not a local of the same name)."""
        upd = update_of(node) if id(node) in self.ctx.bound_updates else None
        return upd is not None and self.scopes.lookup(upd[0]) is None

    def bound_update(self, node: c_ast.If) -> ir.Stmt:
        """``if (v > G) G = v;`` on the bound G: a reduction into its reducer."""
        upd = update_of(node)
        assert upd is not None
        g, _, value = upd
        if self.kind != "task":
            self.error(f"updates the bound '{g}' in a function without spawns; update it "
                       "in the task", node)
        self.not_before_test(f"updating the bound '{g}'", "update a bound", node)
        return self.reduce(self.ctx.bounds[g], value, node)

    def increment(self, node: c_ast.UnaryOp) -> list[ir.Stmt]:
        irname = self.target(node.expr)
        cur = self.read_var(irname, node.expr)
        one = ir.Const(self.loc(node), I32, 1)
        value = self.arith("+" if "+" in node.op else "-", cur, one, node)
        return [ir.Assign(self.loc(node), irname, self.convert(value, self.ctypes[irname]))]

    # ------------------------------------------------------------------ collecting arrays
    def collecting(self, name: str) -> bool:
        """The task's local array ``name`` collects results: spawned into, or summed."""
        assert self.fdef is not None
        return self.kind == "task" and (name in self.summed or
                                        collects_into(self.fdef.body, name))

    def collect_decl(self, d: c_ast.Decl) -> list[ir.Stmt]:
        if self.kind != "task" or d.name not in self.summed:
            self.error(f"local array '{d.name}': a local array may only collect spawned "
                       f"results ({d.name}[k++] = cilk_spawn f(...)), summed after cilk_sync "
                       f"by 'for (int i = 0; i < k; i++) total += {d.name}[i];'", d)
        t = d.type
        if not isinstance(t.type, c_ast.TypeDecl):
            self.error("a collecting array has one dimension", d)
        elem = self.ctx.type_of(t.type, f"array '{d.name}'")
        if elem is None:
            self.error("arrays of void", d)
        if isinstance(t, c_ast.PtrDecl):
            return self.alloca_collect_decl(d, elem)
        if t.dim is None:
            self.error(f"array '{d.name}' needs a size", d)
        size = int(self.const_expr(t.dim, I64))
        zeroed = False
        if d.init is not None:
            ok = isinstance(d.init, c_ast.InitList) and all(
                isinstance(x, c_ast.Constant) and x.value in ("0", "0.0")
                for x in d.init.exprs)
            if not ok:
                self.error("a collecting array is initialized only with {0}", d.init)
            zeroed = True
        acc, loop = self.summed[d.name]
        return self.start_collect(d, Collect(d.name, elem, size, acc, zeroed, loop))

    def alloca_collect_decl(self, d: c_ast.Decl, elem: Ty) -> list[ir.Stmt]:
        """``int *count = alloca(n * sizeof(int));`` (or assigned later, once), cleared by
        at most one ``memset(count, 0, E)`` before it is filled: the Cilk-5/BOTS nqueens
        form of a collecting array."""
        assert self.fdef is not None
        body = self.fdef.body
        stores = [n for n in walk(body) if isinstance(n, c_ast.Assignment) and
                  isinstance(n.lvalue, c_ast.ID) and n.lvalue.name == d.name]
        if len(stores) + (d.init is not None) != 1:
            self.error(f"'{d.name}' collects results; it is given its alloca'd storage once",
                       stores[-1] if stores else d)
        clears = memset_calls(body, d.name)
        if len(clears) > 1:
            self.error(f"'{d.name}' is cleared twice", clears[1])
        zero_bytes = None
        if clears:
            args = list(clears[0].args.exprs)
            if len(args) != 3 or self.constant_of(strip_casts(args[1])) != 0:
                self.error(f"'{d.name}' collects results; memset clears it with 0 "
                           f"(memset({d.name}, 0, n * sizeof(*{d.name})))", clears[0])
            zero_bytes = args[2]
        acc, loop = self.summed[d.name]
        c = Collect(d.name, elem, -1, acc, bool(clears), loop, alloca=True,
                    zero_bytes=zero_bytes)
        return self.start_collect(d, c)

    def collect_call(self, node: c_ast.FuncCall) -> list[ir.Stmt] | None:
        """``memset(count, 0, ...)`` on an alloca'd collecting array: nothing (it is zero
        until filled: its elements go into a sum); any other call given it is an error
        (None: not a call on a collecting array)."""
        args = list(node.args.exprs) if node.args is not None else []
        dst = strip_casts(args[0]) if args else None
        if not (isinstance(dst, c_ast.ID) and dst.name in self.collects and
                self.scopes.lookup(dst.name) == f"<array {dst.name}>"):
            return None
        c = self.collects[dst.name]
        if not (isinstance(node.name, c_ast.ID) and
                node.name.name in ("memset", "__builtin_memset") and c.alloca):
            self.error(f"'{c.name}' collects results; it is only filled with results and "
                       "summed", node)
        if c.written or self.loop_depth:
            self.error(f"'{c.name}' collects results; clear it before the loop that fills "
                       "it", node)
        return []

    def zeroes(self, c: Collect, bound: c_ast.Node) -> bool:
        """The elements ``c[0]`` .. ``c[bound - 1]`` are zero until written: ``= {0}``, or
        ``memset(c, 0, bound * sizeof(T))`` of an alloca'd array (T of c's element size)."""
        if not c.zeroed:
            return False
        if not c.alloca:
            return True
        node = strip_casts(c.zero_bytes) if c.zero_bytes is not None else None
        if not isinstance(node, c_ast.BinaryOp) or node.op != "*":
            return False
        for x, y in ((node.left, node.right), (node.right, node.left)):
            y = strip_casts(y)
            if isinstance(y, c_ast.UnaryOp) and y.op == "sizeof" and \
                    self.constant_of(y) == c.elem.dtype.itemsize and \
                    key(strip_casts(x)) == key(strip_casts(bound)):
                return True
        return False

    def start_collect(self, d: c_ast.Decl, c: Collect) -> list[ir.Stmt]:
        acc = c.acc
        elem = c.elem
        self.collects[d.name] = c
        self.sum_loops[id(c.loop)] = c
        self.scopes.bind(d.name, f"<array {d.name}>")
        assert self.fdef is not None
        if not (indexed(self.fdef.body, d.name) or set_after(self.fdef.body, acc, d)
                or declared_late(self.fdef.body, d.name, acc)):
            return []
        # the loop-index form, or an accumulator set after the spawns (as in BOTS:
        # 'total = 0; for (...) total += part[i];'): the elements go into a hidden sum
        # (of the accumulator's type), which the summing loop adds the accumulator's
        # value to and which is the accumulator from there on
        sum_ty = self.acc_type(c, d)
        if sum_ty.kind != "f" and elem.kind == "f":
            self.error(f"'{c.acc}' is an integer and '{c.name}' holds floating values: sum "
                       "them into a floating accumulator", d)
        c.sum_ir = self.scopes.fresh(f"{d.name}_sum")  # an IR local no C name reaches
        self.ctypes[c.sum_ir] = self.locals[c.sum_ir] = sum_ty
        return [ir.Assign(self.loc(d), c.sum_ir, ir.Const(self.loc(d), sum_ty, 0))]

    def acc_type(self, c: Collect, where: c_ast.Node) -> Ty:
        """The C type of the local a collecting array is summed into (its declarations
        in the function)."""
        assert self.fdef is not None
        decls = [n for n in walk(self.fdef.body) if isinstance(n, c_ast.Decl) and
                 n.name == c.acc and not isinstance(n.type, c_ast.FuncDecl)]
        tys = {self.ctx.type_of(n.type, f"'{c.acc}'") for n in decls}
        if len(tys) != 1 or None in tys:
            self.error(f"the local '{c.acc}' that sums '{c.name}' must be declared once in "
                       "this function", where)
        ty = tys.pop()
        assert ty is not None
        return ty

    def collect_target(self, c: Collect) -> str | None:
        """The IR local a collecting array's elements are added into."""
        return c.sum_ir if c.sum_ir is not None else self.scopes.lookup(c.acc)

    def fill_loop(self, c: Collect, index: str, node: c_ast.Node) -> bool:
        """``node`` writes ``c[index]`` in the one loop ``for (i = 0; i < B; i++)``
        filling ``c``, whose iterations write it once (at most once: ``= {0}``)."""
        loop = self.loop_nodes[-1] if self.loop_depth == 1 else None
        form = counting_loop(loop) if isinstance(loop, c_ast.For) else None
        if loop is None or form is None or form[0] != index or \
                index in assigned_names(loop.stmt) or any(
                    isinstance(n, c_ast.Decl) and n.name == index for n in walk(loop.stmt)):
            return False
        if c.fill is None:
            lo, hi = write_counts(loop.stmt, c.name)
            if hi > 1:
                self.error(f"an iteration of this loop may write '{c.name}[{index}]' twice; "
                           "each element collects one result", node)
            if lo < 1 and not self.zeroes(c, form[1]):
                clear = (f"clear it first with 'memset({c.name}, 0, <bound> * sizeof(*"
                         f"{c.name}))'" if c.alloca else "declare the array '= {0}'")
                self.error(f"an iteration of this loop may leave '{c.name}[{index}]' "
                           f"unwritten: write it on every path (e.g. 'else {c.name}[{index}] "
                           f"= 0;') or {clear}", node)
            c.fill, c.fill_bound = loop, form[1]
        return c.fill is loop

    def collect_write(self, node: c_ast.Assignment) -> list[ir.Stmt]:
        c = self.collects[node.lvalue.name.name]
        loc = self.loc(node)
        if node.op != "=":
            self.error(f"elements of '{c.name}' are assigned once (=)", node)
        sub = node.lvalue.subscript
        extra: list[ir.Stmt] = []
        if isinstance(sub, c_ast.UnaryOp) and sub.op == "p++" and isinstance(sub.expr, c_ast.ID):
            if c.counter not in (None, sub.expr.name):
                self.error(f"'{c.name}' is filled through '{c.counter}++' elsewhere", sub)
            c.counter = sub.expr.name
            extra = self.increment(sub)
        elif c.sum_ir is not None and isinstance(sub, c_ast.ID) and \
                self.fill_loop(c, sub.name, node):
            pass
        else:
            self.error(f"'{c.name}' collects results through '{c.name}[k++] = ...' or, "
                       f"in the one loop 'for (i = 0; i < n; i++)' that fills it, through "
                       f"'{c.name}[i] = ...' once per iteration", sub)
        acc_ir = self.collect_target(c)
        if acc_ir is None:
            self.error(f"declare '{c.acc}' (which sums '{c.name}') before the spawns that "
                       "fill the array", node)
        c.written = True
        value, spawned = self.rhs(node.rvalue)
        element = self.convert(value, c.elem)
        acc_ty = self.ctypes[acc_ir]
        total = self.arith("+", ir.Var(loc, self.locals[acc_ir], acc_ir), element, node)
        if spawned:
            self.pending.add(acc_ir)
        return [ir.Assign(loc, acc_ir, self.convert(total, acc_ty)), *extra]

    def counted_by(self, c: Collect, node: c_ast.For, bound: c_ast.Node) -> bool:
        """``c`` is filled through ``c[k++]`` by one loop ``for (i = 0; i < B; i++)``
        (``B``: ``bound``, names the task never assigns) whose every iteration writes it
        once, a statement of the summing loop's block or of the function's: ``k`` is
        ``B`` (or 0 where ``B`` is not positive) when the array is summed."""
        assert self.fdef is not None
        body = self.fdef.body
        writes = [n for n in walk(body) if isinstance(n, c_ast.Assignment) and
                  isinstance(n.lvalue, c_ast.ArrayRef) and isinstance(n.lvalue.name, c_ast.ID)
                  and n.lvalue.name.name == c.name]
        block = next(n for n in walk(body) if isinstance(n, c_ast.Compound) and
                     any(x is node for x in body_items(n)))
        names = {n.name for n in walk(bound) if isinstance(n, c_ast.ID)}
        if names & assigned_names(body):
            return False
        for loop in [*body_items(block), *body_items(body)]:
            form = counting_loop(loop) if isinstance(loop, c_ast.For) else None
            if form is None or key(form[1]) != key(bound):
                continue
            inside = {id(n) for n in walk(loop.stmt)}
            if form[0] in assigned_names(loop.stmt) or not all(id(w) in inside for w in writes):
                continue
            if write_counts(loop.stmt, c.name) == (1, 1):
                return True
        return False

    def sum_loop(self, node: c_ast.For, c: Collect) -> list[ir.Stmt]:
        assert self.fdef is not None
        loc = self.loc(node)
        acc_ir = self.scopes.lookup(c.acc)
        if acc_ir is None:
            self.error(f"'{c.acc}' is not declared", node)
        if self.collect_target(c) in self.pending:
            self.error(f"'{c.name}' holds spawned values and is read before cilk_sync", node)
        form = counting_loop(node)
        ok = form is not None
        if form is not None:
            index, bound = form
            add = body_items(node.stmt)[0]
            sub = add.rvalue.subscript if isinstance(add.rvalue, c_ast.ArrayRef) else \
                add.rvalue.right.subscript
            ok = isinstance(sub, c_ast.ID) and sub.name == index
        if ok and c.counter is not None:
            ok = ((isinstance(bound, c_ast.ID) and bound.name == c.counter) or
                  self.counted_by(c, node, bound)) and counter_only_counts(self.fdef.body, c)
        elif ok and c.fill is not None and c.fill_bound is not None:
            # the filling loop's bound, unchanged since (names the task never assigns)
            names = {n.name for n in walk(bound) if isinstance(n, c_ast.ID)}
            ok = (c.zeroed and self.try_const(bound) == c.size) or (
                key(bound) == key(c.fill_bound) and
                not names & assigned_names(self.fdef.body))
        elif ok:
            ok = c.zeroed and self.try_const(bound) == c.size
        if not ok:
            want = c.counter if c.counter is not None else str(c.size) if c.size >= 0 \
                else "n"
            self.error(f"the loop summing '{c.name}' must add every element it was filled "
                       f"with: for (int i = 0; i < {want}; i++) {c.acc} += {c.name}[i];", node)
        if c.sum_ir is None:
            return []
        # from here on the hidden sum is the accumulator: sound while no later statement
        # can read the accumulator's old local, so after this block the task returns
        block = next(n for n in walk(self.fdef.body) if isinstance(n, c_ast.Compound) and
                     any(x is node for x in body_items(n)))
        rest = body_items(block)[[id(x) for x in body_items(block)].index(id(node)) + 1:]
        if block is not self.fdef.body and not ends_with_return(rest):
            self.error(f"after the loop summing '{c.name}' into '{c.acc}', return in the "
                       "same block", node)
        if self.ctypes[acc_ir] != self.ctypes[c.sum_ir]:
            self.error(f"'{c.acc}' is declared with another type here", node)
        total = self.arith("+", ir.Var(loc, self.locals[c.sum_ir], c.sum_ir),
                           ir.Var(loc, self.locals[acc_ir], acc_ir), node)
        self.scopes.bind(c.acc, c.sum_ir)
        return [ir.Assign(loc, c.sum_ir, self.convert(total, self.ctypes[c.sum_ir]))]

    # ------------------------------------------------------------------ loops
    def range_of(self, node: c_ast.For) -> Range | None:
        return as_range(node, self.ctx.type_of, self.try_const)

    def for_stmt(self, node: c_ast.For) -> list[ir.Stmt]:
        loc = self.loc(node)
        if id(node) in self.sum_loops:
            return self.sum_loop(node, self.sum_loops[id(node)])
        rng = self.range_of(node)
        self.scopes.open()
        try:
            if rng is not None:
                start = self.convert(self.convert(self.expr(rng.start), rng.ty), I64)
                bound = self.expr(rng.stop)
                common = usual(rng.ty, bound.ty)
                if not (common.kind == "u" and rng.ty.kind == "i"):
                    stop = self.convert(self.convert(bound, common), I64)
                    if rng.op in ("<=", ">="):
                        d = 1 if rng.op == "<=" else -1
                        stop = ir.BinOp(loc, I64, "+", stop, ir.Const(loc, I64, d))
                    irname = self.declare(rng.index, rng.ty, node.init.decls[0], loop=True)
                    body = self.loop_body(node.stmt, node)
                    return [ir.For(loc, irname, start, stop, ir.Const(loc, I64, rng.step),
                                   body)]
            init: list[ir.Stmt] = []
            if isinstance(node.init, c_ast.DeclList):
                init = [s for d in node.init.decls for s in self.local_decl(d)]
            elif node.init is not None:
                init = self.stmt(node.init)
            cond = (self.condition(node.cond) if node.cond is not None
                    else ir.Const(loc, BOOL, True))
            body = self.loop_body(node.stmt, node)
            step_stmts = tuple(self.stmt(node.next)) if node.next is not None else ()
            body = continue_with(body, step_stmts)
            return [*init, ir.While(loc, cond, (*body, *step_stmts))]
        finally:
            self.scopes.close()


def _drop_void_tail(stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
    """A void task's final ``return;`` (ending the base case) changes nothing."""
    if stmts and isinstance(stmts[-1], ir.Return) and not stmts[-1].values:
        return stmts[:-1]
    return stmts



def declared_late(body: c_ast.Node, name: str, acc: str) -> bool:
    """The accumulator ``acc`` is declared after the first write of the collecting array
    ``name`` (``long total = 0;`` after the spawns, where the array is summed)."""
    first_write = first_decl = None
    for i, n in enumerate(walk(body)):
        if first_write is None and isinstance(n, c_ast.Assignment) and \
                isinstance(n.lvalue, c_ast.ArrayRef) and isinstance(n.lvalue.name, c_ast.ID) \
                and n.lvalue.name.name == name:
            first_write = i
        if first_decl is None and isinstance(n, c_ast.Decl) and n.name == acc and \
                not isinstance(n.type, c_ast.FuncDecl):
            first_decl = i
    return first_write is not None and (first_decl is None or first_decl > first_write)

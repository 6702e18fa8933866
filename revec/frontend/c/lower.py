"""Lowering of Cilk C functions (pycparser trees) to the typed IR, with checks.

A *task* is a function that spawns (``cilk_spawn``) or calls itself; a function
returning a value becomes a value-returning task (``TaskDef.result_ty``) whose own calls
are :class:`revec.ir.Recur` nodes, so the shared pass :mod:`revec.transforms.returns`
derives its spawns and reducers exactly as for a Python program.  Other functions called
by tasks are helpers.  Types follow C (:mod:`revec.frontend.c.typenames`): every implicit
conversion C performs is an explicit cast here.
"""

from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np
from pycparser import c_ast

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.frontend.c import typenames as ct
from revec.frontend.c.source import PRELUDE, SPAWN_TYPES, SYNC_NAMES, CSource, _Parser
from revec.ir import BOOL, WEAK_INT, Ty
from revec.lib import LIBRARY, LibFunction

# identifiers the generated Python (numba back end, sequential reference) reserves
RESERVED = set(keyword.kwlist) | {"np", "range", "min", "max", "abs", "int", "float", "bool",
                                  "len", "print", "math", "numba", "True", "False", "None"}
ARITH = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"}
COMPARE = {"<", ">", "<=", ">=", "==", "!="}
MATH_C = {"sqrt", "exp", "log", "sin", "cos", "floor", "ceil", "fabs", "pow"}
SETJMP = {"setjmp", "longjmp", "_setjmp", "sigsetjmp", "siglongjmp"}
SUPPORTED_CALLS = ("the task itself, functions of this file without spawns (helpers) and "
                   "revec's library functions")


def _key(node: Any) -> Any:
    """A position-free key of a pycparser expression (for ``a > b ? a : b``)."""
    if isinstance(node, c_ast.Node):
        return (type(node).__name__,
                tuple((n, _key(getattr(node, n))) for n in node.attr_names if n != "coord"),
                tuple(_key(c) for _, c in node.children()))
    if isinstance(node, list):
        return tuple(_key(x) for x in node)
    return node


def _body_items(node: c_ast.Node | None) -> list[c_ast.Node]:
    if node is None:
        return []
    if isinstance(node, c_ast.Compound):
        return list(node.block_items or [])
    return [node]


def _ends_with_return(items: list[c_ast.Node]) -> bool:
    if not items:
        return False
    last = items[-1]
    if isinstance(last, c_ast.Return):
        return True
    if isinstance(last, c_ast.Compound):
        return _ends_with_return(_body_items(last))
    if isinstance(last, c_ast.If) and last.iffalse is not None:
        return (_ends_with_return(_body_items(last.iftrue))
                and _ends_with_return(_body_items(last.iffalse)))
    return False


def is_spawn(node: Any) -> bool:
    return (isinstance(node, c_ast.Cast) and isinstance(node.to_type.type, c_ast.TypeDecl)
            and isinstance(node.to_type.type.type, c_ast.IdentifierType)
            and node.to_type.type.type.names in ([t] for t in SPAWN_TYPES))


def _walk(node: c_ast.Node) -> list[c_ast.Node]:
    out = [node]
    for _, c in node.children():
        out += _walk(c)
    return out


@dataclasses.dataclass
class Global:
    name: str
    ty: Ty
    loc: SourceLoc
    value: Any = None  # scalar constant value
    array: np.ndarray | None = None
    const: bool = True


@dataclasses.dataclass
class Collect:
    """A local array collecting spawned results, summed after cilk_sync into ``acc``."""

    name: str
    elem: Ty
    size: int
    acc: str  # C name of the local the summing loop adds into
    zeroed: bool  # declared ``= {0}``
    loop: c_ast.For
    counter: str | None = None  # C name of k in ``arr[k++] = ...``
    writer: int | None = None  # the one statement filling a ``= {0}`` array by loop index


class CProgramContext:
    def __init__(self, src: CSource) -> None:
        self.src = src
        self.functions: dict[str, c_ast.FuncDef] = {}
        self.protos: dict[str, c_ast.Decl] = {}
        self.globals: dict[str, Global] = {}
        self.typedefs: dict[str, Ty | None] = {}
        self.helpers: dict[str, ir.HelperDef] = {}
        self.helper_sigs: dict[str, tuple[tuple[ir.Param, ...], Ty | None]] = {}
        self.in_progress: set[str] = set()
        self.arrays: dict[str, np.ndarray] = {}
        self.libs: set[str] = set()
        self.tasks: set[str] = set()

    def error(self, message: str, node: Any) -> NoReturn:
        raise RevecError(message, self.src.loc(node))

    # ------------------------------------------------------------------ types
    def type_of(self, tnode: c_ast.Node, what: str) -> Ty | None:
        """A scalar type (None: void) of a declaration's type node."""
        if isinstance(tnode, c_ast.PtrDecl):
            self.error(f"pointers are not supported ({what}); pass values, return results",
                       tnode)
        if isinstance(tnode, c_ast.TypeDecl):
            inner = tnode.type
            if isinstance(inner, c_ast.IdentifierType):
                names = list(inner.names)
                if len(names) == 1 and names[0] in self.typedefs:
                    return self.typedefs[names[0]]
                try:
                    return ct.from_specifiers(names)
                except ValueError as err:
                    self.error(str(err), tnode)
            kind = type(inner).__name__.lower()
            self.error(f"{kind} types are not supported ({what})", tnode)
        if isinstance(tnode, c_ast.Typename):
            return self.type_of(tnode.type, what)
        self.error(f"this type is not supported ({what})", tnode)

    # ------------------------------------------------------------------ file scope
    def collect(self) -> None:
        prelude_names = {"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
                         "uint32_t", "uint64_t", "bool", "size_t", "ptrdiff_t", "intptr_t",
                         "uintptr_t", *SPAWN_TYPES, *SYNC_NAMES}
        for ext in self.src.ast.ext:
            if isinstance(ext, c_ast.Typedef):
                if ext.name in prelude_names:  # the prelude's (<stdint.h>, Cilk keywords)
                    continue
                self.typedefs[ext.name] = self.type_of(ext.type, f"typedef {ext.name}")
            elif isinstance(ext, c_ast.FuncDef):
                name = ext.decl.name
                if name in self.functions:
                    self.error(f"function '{name}' is defined twice", ext)
                self.functions[name] = ext
            elif isinstance(ext, c_ast.Decl):
                if ext.name in SYNC_NAMES:
                    continue
                if isinstance(ext.type, c_ast.FuncDecl):
                    self.protos[ext.name] = ext
                else:
                    self.global_decl(ext)
            elif isinstance(ext, c_ast.Pragma):
                continue
            else:
                self.error("this file-scope construct is not supported", ext)
        for name, fdef in self.functions.items():
            if name == "main":
                continue
            nodes = _walk(fdef.body)
            if any(is_spawn(n) for n in nodes) or any(
                    isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)
                    and n.name.name == name for n in nodes):
                self.tasks.add(name)

    def global_decl(self, d: c_ast.Decl) -> None:
        const = "const" in (d.quals or [])
        t = d.type
        if isinstance(t, c_ast.ArrayDecl):
            dims: list[c_ast.Node | None] = []
            while isinstance(t, c_ast.ArrayDecl):
                dims.append(t.dim)
                const = const or "const" in (t.type.quals or []) if isinstance(
                    t.type, c_ast.TypeDecl) else const
                t = t.type
            ty = self.type_of(t, f"array '{d.name}'")
            if ty is None:
                self.error("arrays of void", d)
            const = const or "const" in (getattr(t, "quals", None) or [])
            values = self.init_values(d.init, ty, len(dims), d)
            shape = self.array_shape(dims, values, d)
            arr = np.zeros(shape, dtype=ty.dtype)
            self.fill(arr, values, d)
            arr.setflags(write=False)
            self.globals[d.name] = Global(d.name, ty, self.src.loc(d), array=arr, const=const)
            return
        ty = self.type_of(t, f"'{d.name}'")
        if ty is None:
            self.error("a variable of type void", d)
        const = const or "const" in (getattr(t, "quals", None) or [])
        value: Any = 0
        if d.init is not None:
            value = self.const_value(d.init, ty)
        self.globals[d.name] = Global(d.name, ty, self.src.loc(d), value=value, const=const)

    def const_value(self, node: c_ast.Node, ty: Ty) -> Any:
        lowerer = FunctionLowerer(self, None, "const")
        e = lowerer.convert(lowerer.expr(node), ty)
        if not isinstance(e, ir.Const):
            self.error("a file-scope initializer must be a constant expression", node)
        return e.value

    def init_values(self, init: c_ast.Node | None, ty: Ty, ndim: int, d: c_ast.Node) -> Any:
        if init is None:
            return []
        if ndim == 0:
            return self.const_value(init, ty)
        if not isinstance(init, c_ast.InitList):
            self.error("an array is initialized with { ... }", init)
        return [self.init_values(x, ty, ndim - 1, d) for x in init.exprs]

    def array_shape(self, dims: list[c_ast.Node | None], values: Any, d: c_ast.Node
                    ) -> tuple[int, ...]:
        shape = []
        level = values
        for dim in dims:
            if dim is None:
                n = len(level) if isinstance(level, list) else 0
            else:
                n = int(self.const_value(dim, ct.I64))
            if n <= 0:
                self.error(f"array '{getattr(d, 'name', '')}' needs a positive size", d)
            shape.append(n)
            level = level[0] if isinstance(level, list) and level else []
        return tuple(shape)

    def fill(self, arr: np.ndarray, values: Any, d: c_ast.Node, prefix: tuple[int, ...] = ()
             ) -> None:
        if not isinstance(values, list):
            arr[prefix] = values
            return
        if len(values) > arr.shape[len(prefix)]:
            self.error("too many initializers for the array", d)
        for i, v in enumerate(values):
            self.fill(arr, v, d, (*prefix, i))

    # ------------------------------------------------------------------ helpers
    def helper(self, name: str, node: c_ast.Node) -> tuple[tuple[ir.Param, ...], Ty | None]:
        if name in self.helper_sigs and name not in self.in_progress:
            return self.helper_sigs[name]
        if name in self.in_progress:
            self.error(f"'{name}' is called recursively; a function without spawns (a helper) "
                       "cannot recurse: make it a task (cilk_spawn) or a loop", node)
        self.in_progress.add(name)
        fl = FunctionLowerer(self, self.functions[name], "helper")
        h = fl.lower_helper()
        self.in_progress.discard(name)
        self.helpers[name] = h
        self.helper_sigs[name] = (h.params, fl.result)
        return self.helper_sigs[name]

    def lib(self, name: str) -> LibFunction | None:
        if name not in self.protos:
            return None
        import revec.lib as lib_pkg

        lib_pkg._load_all()
        return LIBRARY.get(name)


class FunctionLowerer:
    def __init__(self, ctx: CProgramContext, fdef: c_ast.FuncDef | None, kind: str) -> None:
        self.ctx = ctx
        self.fdef = fdef
        self.kind = kind  # task / helper / const
        self.name = fdef.decl.name if fdef is not None else ""
        self.scopes: list[dict[str, str]] = [{}]
        self.locals: dict[str, Ty] = {}
        self.ctypes: dict[str, Ty] = {}  # C type of every local (loop indices: not WEAK_INT)
        self.loopvars: set[str] = set()
        self.used_names: set[str] = set()
        self.params: tuple[ir.Param, ...] = ()
        self.result: Ty | None = None
        self.pending: set[str] = set()
        self.section = kind
        self.collects: dict[str, Collect] = {}
        self.sum_loops: dict[int, Collect] = {}
        self.loop_depth = 0
        self.macro_depth = 0
        # local array -> (C name of the local it is summed into, the summing loop, index)
        self._pending_sum: dict[str, tuple[str, c_ast.For, c_ast.Node]] = {}

    def error(self, message: str, node: Any) -> NoReturn:
        self.ctx.error(message, node)

    def loc(self, node: Any) -> SourceLoc:
        return self.ctx.src.loc(node)

    # ------------------------------------------------------------------ names
    def fresh(self, cname: str) -> str:
        base = cname if cname not in RESERVED and not cname.startswith("_rv") else f"{cname}_c"
        name, i = base, 1
        while name in self.used_names or name in self.ctx.functions or (
                name in self.ctx.globals):
            i += 1
            name = f"{base}_{i}"
        self.used_names.add(name)
        return name

    def declare(self, cname: str, ty: Ty, node: c_ast.Node, loop: bool = False) -> str:
        if cname in self.scopes[-1]:
            self.error(f"'{cname}' is declared twice in this block", node)
        irname = self.fresh(cname)
        self.scopes[-1][cname] = irname
        self.ctypes[irname] = ty
        self.locals[irname] = WEAK_INT if loop else ty
        if loop:
            self.loopvars.add(irname)
        return irname

    def lookup(self, cname: str) -> str | None:
        for scope in reversed(self.scopes):
            if cname in scope:
                return scope[cname]
        return None

    # ------------------------------------------------------------------ functions
    def signature(self) -> None:
        assert self.fdef is not None
        fdecl = self.fdef.decl.type
        assert isinstance(fdecl, c_ast.FuncDecl)
        if "static" not in (self.fdef.decl.storage or []) and self.kind == "helper":
            pass
        self.result = self.ctx.type_of(fdecl.type, f"the result of '{self.name}'")
        params: list[ir.Param] = []
        for p in (fdecl.args.params if fdecl.args is not None else []):
            if isinstance(p, c_ast.EllipsisParam):
                self.error("variadic functions are not supported", p)
            if isinstance(p, c_ast.Typename):
                if self.ctx.type_of(p.type, "a parameter") is None:
                    continue  # f(void)
                self.error("a parameter needs a name", p)
            if isinstance(p.type, (c_ast.PtrDecl, c_ast.ArrayDecl)):
                self.error(f"pointer parameter '{p.name}' is not supported; tasks and helpers "
                           "take scalar values", p)
            ty = self.ctx.type_of(p.type, f"parameter '{p.name}'")
            if ty is None:
                self.error("a parameter of type void", p)
            irname = self.declare(p.name, ty, p)
            params.append(ir.Param(irname, ty, self.loc(p)))
        self.params = tuple(params)
        self.scopes.append({})

    def lower_task(self) -> ir.TaskDef:
        assert self.fdef is not None
        self.signature()
        items = list(self.fdef.body.block_items or [])
        self.find_sum_loops()
        shape = ("a task body must be 'if (<is-base>) { <base case>; return ...; }' followed "
                 "by the inductive case, or 'if (<is-base>) { ... } else { ... }' as its last "
                 "statement, optionally after statements without spawns (the prologue)")
        at = None
        for i, node in enumerate(items):
            if isinstance(node, c_ast.If):
                then = _body_items(node.iftrue)
                if (node.iffalse is None and _ends_with_return(then)) or (
                        node.iffalse is not None and i == len(items) - 1):
                    at = i
                    break
        if at is None:
            self.error(shape, items[0] if items else self.fdef)
        first = items[at]
        self.section = "prologue"
        pro = self.block(items[:at])
        cond = self.truth(self.expr(first.cond))
        self.section = "base"
        saved = dict(self.scopes[-1]), set(self.pending)
        base = self.scoped(_body_items(first.iftrue))
        self.scopes[-1], self.pending = dict(saved[0]), set(saved[1])
        self.section = "inductive"
        ind_nodes = (_body_items(first.iffalse) if first.iffalse is not None
                     else items[at + 1:])
        ind = self.scoped(ind_nodes) if first.iffalse is not None else self.block(ind_nodes)
        if self.result is None:
            base, ind = _drop_void_tail(base), _drop_void_tail(ind)
        locals_ = {k: v for k, v in self.locals.items() if k not in {p.name for p in self.params}}
        return ir.TaskDef(self.fdef.decl.name, self.params, locals_, cond, base, ind,
                          ir.spawn_bound(ind), self.loc(self.fdef), prologue=pro,
                          result_ty=self.result)

    def lower_helper(self) -> ir.HelperDef:
        assert self.fdef is not None
        self.signature()
        if self.result is None:
            self.error(f"helper '{self.name}' returns void; a function without spawns "
                       "must return a value (it cannot have effects)", self.fdef.decl)
        self.section = "helper"
        body = self.block(list(self.fdef.body.block_items or []))
        locals_ = {k: v for k, v in self.locals.items() if k not in {p.name for p in self.params}}
        return ir.HelperDef(self.name, self.params, locals_, body, (self.result,),
                            self.loc(self.fdef))

    def find_sum_loops(self) -> None:
        """``for (...; i < B; i++) acc += arr[i];`` loops over local arrays."""
        assert self.fdef is not None
        for node in _walk(self.fdef.body):
            if not isinstance(node, c_ast.For):
                continue
            items = _body_items(node.stmt)
            if len(items) != 1 or not isinstance(items[0], c_ast.Assignment):
                continue
            a = items[0]
            if not isinstance(a.lvalue, c_ast.ID):
                continue
            rhs = a.rvalue
            if a.op == "=" and isinstance(rhs, c_ast.BinaryOp) and rhs.op == "+" and \
                    isinstance(rhs.left, c_ast.ID) and rhs.left.name == a.lvalue.name:
                rhs = rhs.right
            elif a.op != "+=":
                continue
            if isinstance(rhs, c_ast.ArrayRef) and isinstance(rhs.name, c_ast.ID):
                arr = rhs.name.name
                if arr in self.sum_loop_arrays():
                    self.error(f"'{arr}' is summed twice", node)
                self._pending_sum[arr] = (a.lvalue.name, node, rhs.subscript)

    def sum_loop_arrays(self) -> set[str]:
        return set(self._pending_sum)

    # ------------------------------------------------------------------ statements
    def scoped(self, nodes: list[c_ast.Node]) -> tuple[ir.Stmt, ...]:
        self.scopes.append({})
        try:
            return self.block(nodes)
        finally:
            self.scopes.pop()

    def block(self, nodes: list[c_ast.Node]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for n in nodes:
            out += self.stmt(n)
        return tuple(out)

    def stmt(self, node: c_ast.Node) -> list[ir.Stmt]:
        loc = self.loc(node)
        match node:
            case c_ast.Compound():
                return list(self.scoped(_body_items(node)))
            case c_ast.Decl():
                return self.local_decl(node)
            case c_ast.DeclList():
                return [s for d in node.decls for s in self.local_decl(d)]
            case c_ast.If():
                cond = self.truth(self.expr(node.cond))
                before = set(self.pending)
                then = self.scoped(_body_items(node.iftrue))
                after_then = self.pending
                self.pending = set(before)
                els = self.scoped(_body_items(node.iffalse))
                self.pending |= after_then
                return [ir.If(loc, cond, then, els)]
            case c_ast.For():
                return self.for_stmt(node)
            case c_ast.While():
                cond = self.truth(self.expr(node.cond))
                body = self.loop_body(node.stmt)
                return [ir.While(loc, cond, body)]
            case c_ast.DoWhile():
                body = self.loop_body(node.stmt)
                if _has_continue(body):
                    self.error("continue inside do ... while is not supported", node)
                cond = self.truth(self.expr(node.cond))
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
            case c_ast.Cast() | c_ast.BinaryOp() | c_ast.UnaryOp() | c_ast.ID() | \
                    c_ast.Constant() | c_ast.TernaryOp() | c_ast.ArrayRef():
                self.error("this statement has no effect", node)
        self.error(f"'{type(node).__name__}' statements are not supported", node)

    def loop_body(self, body: c_ast.Node | None) -> tuple[ir.Stmt, ...]:
        if body is not None:
            # without a cilk_sync in the loop, what a spawn in one iteration assigns is
            # still pending in the next one: reads anywhere in the loop are before the sync
            nodes = _walk(body)
            if not any(isinstance(n, c_ast.ID) and n.name in SYNC_NAMES for n in nodes):
                for n in nodes:
                    if isinstance(n, c_ast.Assignment) and is_spawn(n.rvalue):
                        target = n.lvalue
                        name = target.name if isinstance(target, c_ast.ID) else None
                        if isinstance(target, c_ast.ArrayRef) and isinstance(
                                target.name, c_ast.ID) and target.name.name in self.collects:
                            name = self.collects[target.name.name].acc
                        irname = self.lookup(name) if name is not None else None
                        if irname is not None:
                            self.pending.add(irname)
        self.loop_depth += 1
        try:
            return self.scoped(_body_items(body))
        finally:
            self.loop_depth -= 1

    def local_decl(self, d: c_ast.Decl) -> list[ir.Stmt]:
        if isinstance(d.type, c_ast.FuncDecl):
            self.error("function declarations inside functions are not supported", d)
        if "static" in (d.storage or []):
            self.error(f"static local '{d.name}' is global state, which is not supported", d)
        if isinstance(d.type, c_ast.ArrayDecl):
            return self.collect_decl(d)
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
            return self.recur(call, spawned=True), True
        return self.expr(node), False

    def check_spawn(self, call: c_ast.Node, node: c_ast.Node) -> None:
        if not (isinstance(call, c_ast.FuncCall) and isinstance(call.name, c_ast.ID)):
            self.error("cilk_spawn must be followed by a call of the task", node)
        if self.kind != "task":
            self.error("cilk_spawn in a function without spawns", node)
        if call.name.name != self.name:
            self.error(f"spawning another function '{call.name.name}': a task may only spawn "
                       f"itself (cilk_spawn {self.name}(...))", call.name)

    def recur(self, call: c_ast.FuncCall, spawned: bool) -> ir.Expr:
        what = "cilk_spawn" if spawned else f"a call of '{self.name}'"
        if self.section == "prologue":
            self.error(f"{what} before the is-base test: the prologue (statements before "
                       "'if (<is-base>)') cannot recurse", call)
        if self.section == "base":
            self.error(f"{what} in the base case: the base case must not recurse", call)
        if self.result is None:
            self.error(f"'{self.name}' returns void: its calls are statements "
                       f"(cilk_spawn {self.name}(...);), not values", call)
        args = self.call_args(call, self.params)
        return ir.Recur(self.loc(call), self.result, args)

    def call_args(self, call: c_ast.FuncCall, params: tuple[ir.Param, ...]
                  ) -> tuple[ir.Expr, ...]:
        nodes = list(call.args.exprs) if call.args is not None else []
        fname = call.name.name
        if len(nodes) != len(params):
            self.error(f"'{fname}' takes {len(params)} argument(s), got {len(nodes)}", call)
        return tuple(self.convert(self.expr(a), p.ty) for a, p in zip(nodes, params))

    def spawn_stmt(self, node: c_ast.Cast) -> list[ir.Stmt]:
        call = node.expr
        self.check_spawn(call, node)
        if self.result is not None:
            self.error(f"the value of this spawned call is dropped; assign it "
                       f"(x = cilk_spawn {self.name}(...)) and use it after cilk_sync", node)
        return [self.void_spawn(call)]

    def void_spawn(self, call: c_ast.FuncCall) -> ir.Stmt:
        if self.section == "prologue":
            self.error("cilk_spawn before the is-base test: the prologue (statements before "
                       "'if (<is-base>)') cannot spawn", call)
        if self.section == "base":
            self.error("cilk_spawn in the base case: the base case must not spawn", call)
        return ir.Spawn(self.loc(call), self.call_args(call, self.params))

    def call_stmt(self, node: c_ast.FuncCall) -> list[ir.Stmt]:
        if not isinstance(node.name, c_ast.ID):
            self.error("calls through pointers are not supported", node)
        fname = node.name.name
        if fname == self.name and self.kind == "task" and self.result is None:
            return [self.void_spawn(node)]  # a plain recursive call: a task like a spawn
        lib = self.ctx.lib(fname)
        if lib is not None and len(lib.result_types) > 1:
            return [self.lib_unpack(lib, node)]
        value = self.expr(node)
        if isinstance(value, ir.Recur):
            self.error(f"the value of this call of '{self.name}' is dropped", node)
        return [ir.ExprStmt(self.loc(node), value)]

    def lib_unpack(self, lib: LibFunction, node: c_ast.FuncCall) -> ir.Stmt:
        nodes = list(node.args.exprs) if node.args is not None else []
        n_in, n_out = len(lib.arg_types), len(lib.result_types)
        if len(nodes) != n_in + n_out:
            self.error(f"{lib.name}() takes {n_in} values and {n_out} result addresses "
                       f"(&local), got {len(nodes)} arguments", node)
        args = tuple(self.convert(self.expr(a), Ty(np.dtype(t)))
                     for a, t in zip(nodes[:n_in], lib.arg_types))
        targets: list[str] = []
        tys: list[Ty] = []
        for a in nodes[n_in:]:
            if not (isinstance(a, c_ast.UnaryOp) and a.op == "&" and isinstance(a.expr, c_ast.ID)):
                self.error(f"{lib.name}() writes its results to locals: pass &name", a)
            irname = self.lookup(a.expr.name)
            if irname is None or irname in self.loopvars:
                self.error(f"'{a.expr.name}' is not a local variable of this function", a)
            targets.append(irname)
            tys.append(self.locals[irname])
        rts = tuple(Ty(np.dtype(t)) for t in lib.result_types)
        self.ctx.libs.add(lib.name)
        call = ir.LibCall(self.loc(node), rts[0], lib.name, args, rts)
        return ir.Unpack(self.loc(node), tuple(targets), call, tuple(tys))

    def return_stmt(self, node: c_ast.Return) -> ir.Stmt:
        loc = self.loc(node)
        if self.section == "prologue":
            self.error("return before the is-base test: the prologue (statements before "
                       "'if (<is-base>)') cannot return", node)
        if self.result is None:
            if node.expr is not None:
                self.error(f"'{self.name}' returns void; return without a value", node.expr)
            return ir.Return(loc)
        if node.expr is None:
            self.error(f"'{self.name}' returns {ct.c_name(self.result)}: return a value", node)
        if is_spawn(node.expr):
            self.error("return cilk_spawn ...: assign the spawned value, cilk_sync, then "
                       "return it", node.expr)
        value = self.expr(node.expr)
        return ir.Return(loc, (self.convert(value, self.result),))

    # ------------------------------------------------------------------ assignments
    def target(self, lvalue: c_ast.Node) -> str:
        if isinstance(lvalue, c_ast.ID):
            irname = self.lookup(lvalue.name)
            if irname is None:
                if lvalue.name in self.ctx.globals:
                    self.error(f"writes the file-scope variable '{lvalue.name}'; global "
                               "writes are not supported (tasks return their results)", lvalue)
                self.error(f"'{lvalue.name}' is not declared", lvalue)
            if irname in self.loopvars:
                self.error(f"the loop index '{lvalue.name}' is assigned in its loop", lvalue)
            return irname
        if isinstance(lvalue, c_ast.ArrayRef):
            base = lvalue
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            if isinstance(base, c_ast.ID) and base.name in self.ctx.globals and \
                    self.lookup(base.name) is None:
                self.error(f"writes the file-scope array '{base.name}'; global writes are not "
                           "supported (file-scope arrays are read-only constants)", lvalue)
        if isinstance(lvalue, c_ast.UnaryOp) and lvalue.op == "*":
            self.error("pointers are not supported", lvalue)
        self.error("only local variables can be assigned", lvalue)

    def assignment(self, node: c_ast.Assignment) -> list[ir.Stmt]:
        loc = self.loc(node)
        if isinstance(node.lvalue, c_ast.ArrayRef) and isinstance(node.lvalue.name, c_ast.ID) \
                and node.lvalue.name.name in self.collects_by_c():
            return self.collect_write(node)
        irname = self.target(node.lvalue)
        ty = self.ctypes[irname]
        value, spawned = self.rhs(node.rvalue)
        if node.op != "=":
            if spawned and node.op != "+=":
                self.error("only x = cilk_spawn ... and x += cilk_spawn ... are supported",
                           node)
            cur = self.read_var(irname, node.lvalue)
            value = self.arith(node.op[:-1], cur, value, node)
        if spawned:
            self.pending.add(irname)
        return [ir.Assign(loc, irname, self.convert(value, ty))]

    def increment(self, node: c_ast.UnaryOp) -> list[ir.Stmt]:
        irname = self.target(node.expr)
        cur = self.read_var(irname, node.expr)
        one = ir.Const(self.loc(node), ct.I32, 1)
        value = self.arith("+" if "+" in node.op else "-", cur, one, node)
        return [ir.Assign(self.loc(node), irname, self.convert(value, self.ctypes[irname]))]

    # ------------------------------------------------------------------ collecting arrays
    def collects_by_c(self) -> dict[str, Collect]:
        return {c.name: c for c in self.collects.values()}

    def collect_decl(self, d: c_ast.Decl) -> list[ir.Stmt]:
        arrays = self.sum_loop_arrays()
        if self.kind != "task" or d.name not in arrays:
            self.error(f"local array '{d.name}': a local array may only collect spawned "
                       f"results ({d.name}[k++] = cilk_spawn f(...)), summed after cilk_sync "
                       f"by 'for (int i = 0; i < k; i++) total += {d.name}[i];'", d)
        t = d.type
        if not isinstance(t.type, c_ast.TypeDecl):
            self.error("a collecting array has one dimension", d)
        elem = self.ctx.type_of(t.type, f"array '{d.name}'")
        if elem is None:
            self.error("arrays of void", d)
        if t.dim is None:
            self.error(f"array '{d.name}' needs a size", d)
        size = int(self.const_expr(t.dim, ct.I64))
        zeroed = False
        if d.init is not None:
            ok = isinstance(d.init, c_ast.InitList) and all(
                isinstance(x, c_ast.Constant) and x.value in ("0", "0.0")
                for x in d.init.exprs)
            if not ok:
                self.error("a collecting array is initialized only with {0}", d.init)
            zeroed = True
        acc, loop, _ = self._pending_sum[d.name]
        c = Collect(d.name, elem, size, acc, zeroed, loop)
        self.collects[d.name] = c
        self.sum_loops[id(loop)] = c
        self.scopes[-1][d.name] = f"<array {d.name}>"
        return []

    def collect_write(self, node: c_ast.Assignment) -> list[ir.Stmt]:
        c = self.collects_by_c()[node.lvalue.name.name]
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
        elif c.zeroed and isinstance(sub, c_ast.ID) and self.loop_depth == 1 and \
                self.lookup(sub.name) in self.loopvars and c.writer in (None, id(node)):
            c.writer = id(node)
        else:
            self.error(f"'{c.name}' collects results through '{c.name}[k++] = ...' (or, "
                       "declared '= {0}', indexed by the index of the one loop that fills it)",
                       sub)
        acc_ir = self.lookup(c.acc)
        if acc_ir is None:
            self.error(f"declare '{c.acc}' (which sums '{c.name}') before the spawns that "
                       "fill the array", node)
        value, spawned = self.rhs(node.rvalue)
        element = self.convert(value, c.elem)
        acc_ty = self.ctypes[acc_ir]
        total = self.arith("+", ir.Var(loc, self.locals[acc_ir], acc_ir), element, node)
        if spawned:
            self.pending.add(acc_ir)
        return [ir.Assign(loc, acc_ir, self.convert(total, acc_ty)), *extra]

    def sum_loop(self, node: c_ast.For, c: Collect) -> list[ir.Stmt]:
        acc_ir = self.lookup(c.acc)
        if acc_ir is None:
            self.error(f"'{c.acc}' is not declared", node)
        if acc_ir in self.pending:
            self.error(f"'{c.name}' holds spawned values and is read before cilk_sync", node)
        canon = self.canonical(node)
        bound = node.cond.right if isinstance(node.cond, c_ast.BinaryOp) else None
        ok = canon is not None and node.cond.op == "<" and isinstance(
            node.init, c_ast.DeclList) and isinstance(node.init.decls[0].init, c_ast.Constant)
        if ok:
            start = self.const_expr(node.init.decls[0].init, ct.I64)
            ok = start == 0 and canon[3] == 1
        if ok and c.counter is not None and c.writer is None:
            ok = isinstance(bound, c_ast.ID) and bound.name == c.counter and \
                self.counter_only_counts(c)
        elif ok:
            ok = c.zeroed and c.counter is None and self.try_const(bound) == c.size
        if not ok:
            want = c.counter if c.counter is not None else str(c.size)
            self.error(f"the loop summing '{c.name}' must add every element it was filled "
                       f"with: for (int i = 0; i < {want}; i++) {c.acc} += {c.name}[i];", node)
        return []

    def counter_only_counts(self, c: Collect) -> bool:
        """``k`` starts at 0 and changes only by the ``arr[k++]`` writes."""
        assert self.fdef is not None
        in_index: set[int] = set()
        for n in _walk(self.fdef.body):
            if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and \
                    n.name.name == c.name:
                in_index.add(id(n.subscript))
        for n in _walk(self.fdef.body):
            if isinstance(n, c_ast.Decl) and n.name == c.counter:
                init = n.init
                if not (isinstance(init, c_ast.Constant) and init.value == "0"):
                    return False
            elif isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID) and \
                    n.lvalue.name == c.counter:
                return False
            elif isinstance(n, c_ast.UnaryOp) and isinstance(n.expr, c_ast.ID) and \
                    n.expr.name == c.counter and n.op in ("p++", "++", "p--", "--") and \
                    id(n) not in in_index:
                return False
        return True

    # ------------------------------------------------------------------ loops
    def canonical(self, node: c_ast.For) -> tuple[str, Ty, c_ast.Node, int, c_ast.Node, str
                                                  ] | None:
        """(index, its type, start, step, stop, comparison) of ``for (T i = a; i < b;
        i++)`` loops that are Python ranges: the index is declared by the loop and only
        the loop's step changes it; the bound does not change in the loop."""
        init, cond, nxt = node.init, node.cond, node.next
        if not (isinstance(init, c_ast.DeclList) and len(init.decls) == 1):
            return None
        d = init.decls[0]
        if d.init is None or not isinstance(d.type, c_ast.TypeDecl):
            return None
        ty = self.ctx.type_of(d.type, f"'{d.name}'")
        if ty is None or ty.kind not in "iu" or ty.dtype.itemsize < 4:
            return None
        if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=")
                and isinstance(cond.left, c_ast.ID) and cond.left.name == d.name):
            return None
        step = None
        if isinstance(nxt, c_ast.UnaryOp) and isinstance(nxt.expr, c_ast.ID) and \
                nxt.expr.name == d.name and nxt.op in ("p++", "++", "p--", "--"):
            step = 1 if "+" in nxt.op else -1
        elif isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID) and \
                nxt.lvalue.name == d.name and nxt.op in ("+=", "-=") and \
                isinstance(nxt.rvalue, c_ast.Constant):
            v = self.try_const(nxt.rvalue)
            if v is None or v <= 0:
                return None
            step = v if nxt.op == "+=" else -v
        if step is None:
            return None
        if (step > 0) != (cond.op in ("<", "<=")):
            return None
        if step < 0 and ty.kind == "u":
            return None
        changed = _assigned_names(node.stmt)
        if d.name in changed:
            return None
        bound_names = {n.name for n in _walk(cond.right) if isinstance(n, c_ast.ID)}
        if bound_names & changed or any(isinstance(n, c_ast.FuncCall) or is_spawn(n)
                                        for n in _walk(cond.right)):
            return None
        return d.name, ty, d.init, step, cond.right, cond.op

    def for_stmt(self, node: c_ast.For) -> list[ir.Stmt]:
        loc = self.loc(node)
        if id(node) in self.sum_loops:
            return self.sum_loop(node, self.sum_loops[id(node)])
        canon = self.canonical(node)
        self.scopes.append({})
        try:
            if canon is not None:
                cname, ty, start_n, step, stop_n, op = canon
                start = self.convert(self.convert(self.expr(start_n), ty), ct.I64)
                bound = self.expr(stop_n)
                common = ct.usual(ty, bound.ty)
                if common.kind == "u" and ty.kind == "i":
                    canon = None
                else:
                    stop = self.convert(self.convert(bound, common), ct.I64)
                    if op in ("<=", ">="):
                        d = 1 if op == "<=" else -1
                        stop = ir.BinOp(loc, ct.I64, "+", stop, ir.Const(loc, ct.I64, d))
                    irname = self.declare(cname, ty, node.init.decls[0], loop=True)
                    body = self.loop_body(node.stmt)
                    return [ir.For(loc, irname, start, stop, ir.Const(loc, ct.I64, step),
                                   body)]
            init: list[ir.Stmt] = []
            if isinstance(node.init, c_ast.DeclList):
                init = [s for d in node.init.decls for s in self.local_decl(d)]
            elif node.init is not None:
                init = self.stmt(node.init)
            cond = (self.truth(self.expr(node.cond)) if node.cond is not None
                    else ir.Const(loc, BOOL, True))
            body = self.loop_body(node.stmt)
            step_stmts = tuple(self.stmt(node.next)) if node.next is not None else ()
            body = _continue_with(body, step_stmts)
            return [*init, ir.While(loc, cond, (*body, *step_stmts))]
        finally:
            self.scopes.pop()

    # ------------------------------------------------------------------ expressions
    def const_expr(self, node: c_ast.Node, ty: Ty) -> Any:
        e = self.convert(self.expr(node), ty)
        if not isinstance(e, ir.Const):
            self.error("a constant expression is needed here", node)
        return e.value

    def try_const(self, node: c_ast.Node | None) -> Any:
        if node is None:
            return None
        try:
            e = self.expr(node)
        except RevecError:
            return None
        return e.value if isinstance(e, ir.Const) else None

    def read_var(self, irname: str, node: c_ast.Node) -> ir.Expr:
        loc = self.loc(node)
        if irname in self.pending:
            cname = getattr(node, "name", irname)
            self.error(f"'{cname}' holds the value of a spawned call and is read before "
                       "cilk_sync", node)
        if irname in self.loopvars:
            return ir.Cast(loc, self.ctypes[irname], ir.Var(loc, WEAK_INT, irname))
        return ir.Var(loc, self.locals[irname], irname)

    def expr(self, node: c_ast.Node) -> ir.Expr:
        loc = self.loc(node)
        match node:
            case c_ast.Constant():
                return self.constant(node)
            case c_ast.ID(name=name):
                return self.name_ref(name, node)
            case c_ast.BinaryOp(op=op) if op in ARITH:
                return self.arith(op, self.expr(node.left), self.expr(node.right), node)
            case c_ast.BinaryOp(op=op) if op in COMPARE:
                a, b = self.expr(node.left), self.expr(node.right)
                self.numeric(a, node.left)
                self.numeric(b, node.right)
                t = ct.usual(a.ty, b.ty)
                A, B = _unwidened(self.convert(a, t), self.convert(b, t))
                return ir.Compare(loc, BOOL, op, A, B)
            case c_ast.BinaryOp(op="&&" | "||"):
                a = self.truth(self.expr(node.left))
                b = self.truth(self.expr(node.right))
                if isinstance(a, ir.Const) and isinstance(b, ir.Const):
                    v = (a.value and b.value) if node.op == "&&" else (a.value or b.value)
                    return ir.Const(loc, BOOL, bool(v))
                return ir.BoolOp(loc, BOOL, "and" if node.op == "&&" else "or", a, b)
            case c_ast.UnaryOp(op="-" | "+" | "~"):
                a = self.expr(node.expr)
                self.numeric(a, node.expr)
                if node.op == "~" and a.ty.kind == "f":
                    self.error("~ needs an integer operand", node)
                t = ct.promote(a.ty)
                a = self.convert(a, t)
                if isinstance(a, ir.Const):
                    v = a.value
                    v = -v if node.op == "-" else (~v if node.op == "~" else v)
                    return ir.Const(loc, t, ct.wrap(v, t) if t.kind in "iu" else v)
                if node.op == "+":
                    return a
                return ir.UnaryOp(loc, t, node.op, a)
            case c_ast.UnaryOp(op="!"):
                a = self.truth(self.expr(node.expr))
                if isinstance(a, ir.Const):
                    return ir.Const(loc, BOOL, not a.value)
                return ir.UnaryOp(loc, BOOL, "not", a)
            case c_ast.UnaryOp(op="sizeof"):
                if isinstance(node.expr, c_ast.Typename):
                    ty = self.ctx.type_of(node.expr, "sizeof")
                else:
                    ty = self.expr(node.expr).ty
                if ty is None:
                    self.error("sizeof(void)", node)
                return ir.Const(loc, ct.U64, int(ty.dtype.itemsize))
            case c_ast.UnaryOp(op="&" | "*"):
                self.error("pointers are not supported (no & or * on values)", node)
            case c_ast.UnaryOp(op="p++" | "++" | "p--" | "--"):
                self.error("++/-- inside an expression is not supported; write it as its "
                           "own statement", node)
            case c_ast.TernaryOp():
                return self.ternary(node)
            case c_ast.Cast() if is_spawn(node):
                self.error("cilk_spawn may only start a statement or stand right of '=' "
                           "(x = cilk_spawn f(...))", node)
            case c_ast.Cast():
                ty = self.ctx.type_of(node.to_type, "a cast")
                value = self.expr(node.expr)
                if ty is None:
                    self.error("a cast to void is not supported", node)
                self.numeric(value, node.expr)
                return self.convert(value, ty)
            case c_ast.FuncCall():
                return self.call(node)
            case c_ast.ArrayRef():
                return self.array_ref(node)
            case c_ast.Assignment():
                self.error("an assignment inside an expression is not supported; write it as "
                           "its own statement", node)
            case c_ast.ExprList():
                self.error("the comma operator is not supported", node)
        self.error(f"'{type(node).__name__}' expressions are not supported", node)

    def numeric(self, e: ir.Expr, node: c_ast.Node) -> None:
        if e.ty.kind not in "iufb":
            self.error("a number is needed here", node)

    def constant(self, node: c_ast.Constant) -> ir.Expr:
        loc = self.loc(node)
        try:
            if node.type == "string":
                self.error("strings are not supported", node)
            if node.type == "char" or node.value.startswith("'"):
                return ir.Const(loc, ct.I32, ct.char_literal(node.value))
            if node.type in ("float", "double", "long double") or (
                    not node.value.lower().startswith("0x") and any(
                        ch in node.value for ch in ".eE")) or "p" in node.value.lower():
                v, ty = ct.float_literal(node.value)
                return ir.Const(loc, ty, v)
            iv, ty = ct.int_literal(node.value)
            return ir.Const(loc, ty, iv)
        except ValueError as err:
            self.error(str(err), node)

    def name_ref(self, name: str, node: c_ast.Node) -> ir.Expr:
        loc = self.loc(node)
        irname = self.lookup(name)
        if irname is not None:
            if irname.startswith("<array"):
                c = self.collects_by_c()[name]
                self.error(f"'{name}' collects spawned results; it may only be summed after "
                           f"cilk_sync (for (...) {c.acc} += {name}[i];)", node)
            return self.read_var(irname, node)
        if name in SYNC_NAMES:
            self.error("cilk_sync is a statement", node)
        g = self.ctx.globals.get(name)
        if g is not None:
            if g.array is not None:
                self.error(f"'{name}' is an array; index it", node)
            if not g.const:
                self.error(f"reads the file-scope variable '{name}', which is not const; "
                           "file-scope variables are read-only constants: declare it const",
                           node)
            return ir.Const(loc, g.ty, g.value)
        macro = self.ctx.src.macros.get(name)
        if macro is not None:
            return self.expand(macro, node)
        if name in ("true", "false"):
            return ir.Const(loc, ct.I32, 1 if name == "true" else 0)
        if name in self.ctx.functions or name in self.ctx.protos:
            self.error(f"'{name}' is a function; call it", node)
        self.error(f"'{name}' is not declared", node)

    def expand(self, macro: Any, node: c_ast.Node) -> ir.Expr:
        if self.macro_depth > 50:
            self.error(f"the macro '{macro.name}' expands into itself", node)
        if not macro.text:
            self.error(f"the macro '{macro.name}' is empty", node)
        try:
            ast = _Parser().parse(f"{PRELUDE}int __revec_macro = ({macro.text});", "<macro>")
            init = ast.ext[-1].init
        except Exception:  # noqa: BLE001 - pycparser's errors
            self.error(f"the macro '{macro.name}' ({macro.text}) is not a constant expression; "
                       "only #define NAME <expression> is supported", node)
        for n in _walk(init):
            n.coord = node.coord
        self.macro_depth += 1
        try:
            return self.expr(init)
        finally:
            self.macro_depth -= 1

    def ternary(self, node: c_ast.TernaryOp) -> ir.Expr:
        loc = self.loc(node)
        c = node.cond
        a, b = self.expr(node.iftrue), self.expr(node.iffalse)
        self.numeric(a, node.iftrue)
        self.numeric(b, node.iffalse)
        t = ct.usual(a.ty, b.ty)
        if isinstance(c, c_ast.BinaryOp) and c.op in ("<", ">", "<=", ">=") and t.kind in "iu":
            kl, kr, kt, kf = _key(c.left), _key(c.right), _key(node.iftrue), _key(node.iffalse)
            if {kl, kr} == {kt, kf} and kl != kr:
                bigger = c.op in (">", ">=")
                func = "maximum" if (kt == kl) == bigger else "minimum"
                return ir.MathCall(loc, t, func, (self.convert(a, t), self.convert(b, t)))
        cond = self.truth(self.expr(c))
        if isinstance(cond, ir.Const):
            return self.convert(a if cond.value else b, t)
        return ir.IfExp(loc, t, cond, self.convert(a, t), self.convert(b, t))

    def call(self, node: c_ast.FuncCall) -> ir.Expr:
        loc = self.loc(node)
        if not isinstance(node.name, c_ast.ID):
            self.error("calls through pointers are not supported", node)
        fname = node.name.name
        if fname in SETJMP:
            self.error(f"{fname} is not supported (non-local jumps)", node)
        if fname == self.name and self.kind == "task":
            return self.recur(node, spawned=False)
        if fname in self.ctx.tasks:
            self.error(f"calls the task '{fname}'; a task may only call itself, and helpers "
                       "cannot call tasks", node)
        if fname in self.ctx.functions and fname != "main":
            params, result = self.ctx.helper(fname, node)
            if result is None:
                self.error(f"'{fname}' returns void", node)
            return ir.Call(loc, result, fname, self.call_args(node, params))
        base = fname[:-1] if fname.endswith("f") and fname[:-1] in MATH_C else fname
        if base in MATH_C:  # <math.h>
            ty = ct.F32 if base != fname else ct.F64
            nodes = list(node.args.exprs) if node.args is not None else []
            if len(nodes) != (2 if base == "pow" else 1):
                self.error(f"{fname}() takes {2 if base == 'pow' else 1} argument(s)", node)
            vals = [self.convert(self.expr(a), ty) for a in nodes]
            if base == "pow":
                return ir.BinOp(loc, ty, "**", vals[0], vals[1])
            return ir.MathCall(loc, ty, base, tuple(vals))
        lib = self.ctx.lib(fname)
        if lib is not None:
            if len(lib.result_types) > 1:
                self.error(f"{lib.name}() returns {len(lib.result_types)} values through "
                           "&local arguments: call it as a statement", node)
            nodes = list(node.args.exprs) if node.args is not None else []
            if len(nodes) != len(lib.arg_types):
                self.error(f"{lib.name}() takes {len(lib.arg_types)} argument(s)", node)
            args = tuple(self.convert(self.expr(a), Ty(np.dtype(t)))
                         for a, t in zip(nodes, lib.arg_types))
            rts = tuple(Ty(np.dtype(t)) for t in lib.result_types)
            self.ctx.libs.add(lib.name)
            return ir.LibCall(loc, rts[0], lib.name, args, rts)
        self.error(f"call of unknown function '{fname}'; revec accepts calls of "
                   f"{SUPPORTED_CALLS}", node.name)

    def array_ref(self, node: c_ast.ArrayRef) -> ir.Expr:
        indices: list[c_ast.Node] = []
        base: c_ast.Node = node
        while isinstance(base, c_ast.ArrayRef):
            indices.insert(0, base.subscript)
            base = base.name
        if not isinstance(base, c_ast.ID):
            self.error("only file-scope const arrays can be indexed", node)
        name = base.name
        if self.lookup(name) is not None:
            self.name_ref(name, base)
            self.error(f"'{name}' is not an array", base)
        g = self.ctx.globals.get(name)
        if g is None or g.array is None:
            self.error(f"'{name}' is not a file-scope array", base)
        if not g.const:
            self.error(f"reads the file-scope array '{name}', which is not const; file-scope "
                       "arrays are read-only constants: declare it const", base)
        if len(indices) != g.array.ndim:
            self.error(f"array '{name}' has {g.array.ndim} dimension(s) but is indexed with "
                       f"{len(indices)}", node)
        idx = []
        for i in indices:
            e = self.expr(i)
            if e.ty.kind not in "iub":
                self.error("an array index must be an integer", i)
            idx.append(self.convert(e, ct.I64))
        self.ctx.arrays[name] = g.array
        return ir.ArrayRef(self.loc(node), g.ty, name, tuple(idx))

    # ------------------------------------------------------------------ typing
    def truth(self, e: ir.Expr) -> ir.Expr:
        if e.ty.kind == "b":
            return e
        if isinstance(e, ir.Const):
            return ir.Const(e.loc, BOOL, bool(e.value))
        return ir.Compare(e.loc, BOOL, "!=", e, ir.Const(e.loc, e.ty, 0 if e.ty.kind in "iu"
                                                          else 0.0))

    def convert(self, e: ir.Expr, ty: Ty) -> ir.Expr:
        """``e`` converted to ``ty`` as C converts (constants folded)."""
        if e.ty == ty:
            return e
        if isinstance(e, ir.Const):
            v = e.value
            if ty.kind == "b":
                return ir.Const(e.loc, ty, bool(v))
            if ty.kind == "f":
                return ir.Const(e.loc, ty, float(ty.dtype.type(float(v))))
            if e.ty.kind == "f":
                fv = float(v)
                if fv != fv or abs(fv) >= 2.0 ** 64:
                    return ir.Cast(e.loc, ty, e)
                return ir.Const(e.loc, ty, ct.wrap(int(fv), ty))
            return ir.Const(e.loc, ty, ct.wrap(int(v), ty))
        if (e.ty.kind in "iu" and ty.kind in "iu"
                and ty.dtype.itemsize < e.ty.dtype.itemsize):
            narrow = _narrowed(e, ty)
            if narrow is not None:
                return narrow
        return ir.Cast(e.loc, ty, e)

    def arith(self, op: str, a: ir.Expr, b: ir.Expr, node: c_ast.Node) -> ir.Expr:
        loc = self.loc(node)
        self.numeric(a, node)
        self.numeric(b, node)
        floats = a.ty.kind == "f" or b.ty.kind == "f"
        if op in ("<<", ">>", "&", "|", "^", "%") and floats:
            self.error(f"'{op}' needs integer operands", node)
        if op in ("<<", ">>"):
            t = ct.promote(a.ty)
            A, B = self.convert(a, t), self.convert(b, t)
        else:
            t = ct.usual(a.ty, b.ty)
            A, B = self.convert(a, t), self.convert(b, t)
        if isinstance(A, ir.Const) and isinstance(B, ir.Const):
            folded = _fold(op, A.value, B.value, t)
            if folded is not None:
                return ir.Const(loc, t, folded)
        if op == "/" and t.kind == "f":
            return ir.BinOp(loc, t, "/", A, B)
        if op in ("/", "%") and t.kind == "u":
            return ir.BinOp(loc, t, "//" if op == "/" else "%", A, B)
        if op in ("/", "%"):
            return _trunc_divmod(op, A, B, t, loc)
        return ir.BinOp(loc, t, op, A, B)


# operations whose result's low bits depend only on the operands' low bits (so do
# those of - and ~)
_LOW_BITS_OPS = ("+", "-", "*", "&", "|", "^")


def _narrowed(e: ir.Expr, ty: Ty) -> ir.Expr | None:
    """The integer expression ``e`` truncated to the narrower integer type ``ty``,
    computed in ``ty`` where that needs no conversion (None otherwise): ``(int8_t)(n -
    1)`` on an ``int8_t n`` is ``n - 1`` in int8 arithmetic, which wraps alike.  The
    program is then what the Python front end makes of ``n - 1`` (one conversion less
    for numba to type; a spawn's ``n - 1`` is recognized as a level-uniform step)."""
    if e.ty.kind not in "iu" or e.ty.dtype.itemsize < ty.dtype.itemsize:
        return None
    match e:
        case ir.Const(value=v):
            return ir.Const(e.loc, ty, ct.wrap(int(v), ty))
        case ir.Cast(operand=x) if x.ty == ty:
            return x
        case ir.BinOp(op=op, left=a, right=b) if op in _LOW_BITS_OPS:
            na, nb = _narrowed(a, ty), _narrowed(b, ty)
            if na is not None and nb is not None:
                return ir.BinOp(e.loc, ty, op, na, nb)
        case ir.UnaryOp(op="-" | "~" as op, operand=x):
            nx = _narrowed(x, ty)
            if nx is not None:
                return ir.UnaryOp(e.loc, ty, op, nx)
    return None


def _keeps_values(src: Ty, dst: Ty) -> bool:
    """Every value of the integer type ``src`` is a value of ``dst``."""
    if src.weak or src.kind not in "iu" or dst.kind not in "iu":
        return False
    if src.kind == dst.kind:
        return src.dtype.itemsize <= dst.dtype.itemsize
    return src.kind == "u" and src.dtype.itemsize < dst.dtype.itemsize


def _unwidened(a: ir.Expr, b: ir.Expr) -> tuple[ir.Expr, ir.Expr]:
    """The operands of a comparison without the value-preserving widening both got
    (``(int)k == 0`` on an ``int8_t k`` compares ``k`` with an int8 0): widening keeps
    the order and equality of values.  Unchanged unless both narrow to one type."""
    def inner(e: ir.Expr) -> ir.Expr | None:
        if isinstance(e, ir.Cast) and _keeps_values(e.operand.ty, e.ty):
            return e.operand
        return None

    na, nb = inner(a), inner(b)
    if na is not None and nb is not None and na.ty == nb.ty:
        return na, nb
    if na is not None and isinstance(b, ir.Const) and _fits(b, na.ty):
        return na, ir.Const(b.loc, na.ty, int(b.value))
    if nb is not None and isinstance(a, ir.Const) and _fits(a, nb.ty):
        return ir.Const(a.loc, nb.ty, int(a.value)), nb
    return a, b


def _fits(c: ir.Const, ty: Ty) -> bool:
    info = np.iinfo(ty.dtype)
    return c.ty.kind in "iu" and info.min <= int(c.value) <= info.max


def _fold(op: str, a: Any, b: Any, t: Ty) -> Any:
    """C's value of a constant operation (None: leave it to run time)."""
    if t.kind == "f":
        if op in ("+", "-", "*") or (op == "/" and b != 0):
            x = {"+": a + b, "-": a - b, "*": a * b}.get(op, a / b if b else 0.0)
            return float(t.dtype.type(x))
        return None
    a, b = int(a), int(b)
    bits = 8 * t.dtype.itemsize
    if op in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return ct.wrap(q if op == "/" else a - b * q, t)
    if op in ("<<", ">>"):
        if not 0 <= b < bits:
            return None
        return ct.wrap(a << b if op == "<<" else a >> b, t)
    table: dict[str, Callable[[int, int], int]] = {
        "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
        "&": lambda x, y: x & y, "|": lambda x, y: x | y, "^": lambda x, y: x ^ y}
    return ct.wrap(table[op](a, b), t)


def _trunc_divmod(op: str, a: ir.Expr, b: ir.Expr, t: Ty, loc: SourceLoc) -> ir.Expr:
    """C's signed ``a / b`` and ``a % b`` (truncating toward zero) from the IR's floor
    division: where the remainder is not zero and the signs differ, the floor quotient
    is one less than C's and the floor remainder exceeds C's by ``b``."""
    zero = ir.Const(loc, t, 0)
    rem = ir.BinOp(loc, t, "%", a, b)
    differ = ir.BoolOp(loc, BOOL, "and", ir.Compare(loc, BOOL, "!=", rem, zero),
                       ir.Compare(loc, BOOL, "<", ir.BinOp(loc, t, "^", a, b), zero))
    fix = ir.Cast(loc, t, differ)
    if op == "/":
        return ir.BinOp(loc, t, "+", ir.BinOp(loc, t, "//", a, b), fix)
    return ir.BinOp(loc, t, "-", rem, ir.BinOp(loc, t, "*", fix, b))


def _assigned_names(node: c_ast.Node | None) -> set[str]:
    out: set[str] = set()
    if node is None:
        return out
    for n in _walk(node):
        if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
            out.add(n.lvalue.name)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("p++", "++", "p--", "--") and \
                isinstance(n.expr, c_ast.ID):
            out.add(n.expr.name)
        elif isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID):
            out.add(n.expr.name)
    return out


def _has_continue(body: tuple[ir.Stmt, ...]) -> bool:
    for s in body:
        if isinstance(s, ir.Continue):
            return True
        if isinstance(s, ir.If) and (_has_continue(s.then) or _has_continue(s.orelse)):
            return True
    return False


def _continue_with(body: tuple[ir.Stmt, ...], step: tuple[ir.Stmt, ...]
                   ) -> tuple[ir.Stmt, ...]:
    """``continue`` in a for loop lowered to ``while`` runs the loop's step first."""
    if not step:
        return body
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Continue):
            out += [*step, s]
        elif isinstance(s, ir.If):
            out.append(dataclasses.replace(s, then=_continue_with(s.then, step),
                                           orelse=_continue_with(s.orelse, step)))
        else:
            out.append(s)
    return tuple(out)


def _drop_void_tail(stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
    """A void task's final ``return;`` (ending the base case) changes nothing."""
    if stmts and isinstance(stmts[-1], ir.Return) and not stmts[-1].values:
        return stmts[:-1]
    return stmts

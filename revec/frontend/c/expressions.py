"""The expression half of the Cilk C syntax adapter: pycparser expressions -> typed IR,
through the front-end core (:mod:`revec.frontend.builder`) with C's type rules
(:mod:`revec.frontend.rules.c99`): every implicit conversion C performs is an explicit
cast in the IR.  The statements are :mod:`revec.frontend.c.lower`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pycparser import c_ast

from revec import ir
from revec.errors import RevecError
from revec.frontend.builder import FunctionBuilder, Spelling
from revec.frontend.c.collect import Collect
from revec.frontend.c.context import CProgramContext, Global
from revec.frontend.c.source import SYNC_NAMES
from revec.frontend.c.syntax import is_spawn, key
from revec.frontend.c.typenames import c_name, char_literal, float_literal, int_literal
from revec.frontend.rules.c99 import C99, F32, F64, I32, U64, usual
from revec.frontend.scopes import BlockScopes
from revec.ir import WEAK_INT, Ty

ARITH = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"}
COMPARE = {"<", ">", "<=", ">=", "==", "!="}
MATH_C = {"sqrt", "exp", "log", "sin", "cos", "floor", "ceil", "fabs", "pow"}
SETJMP = {"setjmp", "longjmp", "_setjmp", "sigsetjmp", "siglongjmp"}
SUPPORTED_CALLS = ("the task itself, functions of this file without spawns (helpers) and "
                   "revec's library functions")

C = Spelling(
    is_base="if (<is-base>)",
    task_shape=("a task body must be 'if (<is-base>) { <base case>; return ...; }' followed "
                "by the inductive case, or 'if (<is-base>) { ... } else { ... }' as its last "
                "statement, optionally after statements without spawns (the prologue)"),
    cast=lambda ty: f"({c_name(ty)})...",
    recursive_helper=("'{name}' is called recursively; a function without spawns (a helper) "
                      "cannot recurse: make it a task (cilk_spawn) or a loop"),
)


@dataclass(frozen=True)
class Pointer:
    """A pointer a task (or helper) reads: a task's array parameter (``ap``: its view's
    offset field) or a file-scope pointer that main fills (``ap`` None).  Its elements
    are scalars (the input ``key``) or structs (``fields``: each field's input)."""

    name: str
    ap: ir.ArrayParam | None
    key: str | None
    fields: tuple[tuple[str, str], ...] = ()
    struct: str = ""  # the struct type's spelling ("struct item")


INT64 = Ty(np.dtype(np.int64))


class CExpressions(FunctionBuilder):
    """Lowers the expressions of one C function (a task, a helper, or ``const``: a
    file-scope initializer)."""

    spelling = C

    def __init__(self, ctx: CProgramContext, fdef: c_ast.FuncDef | None, kind: str) -> None:
        super().__init__(ctx, C99, fdef.decl.name if fdef is not None else "", kind)
        self.ctx: CProgramContext = ctx
        self.fdef = fdef
        self.scopes = BlockScopes(lambda n: n in ctx.functions or n in ctx.globals)
        self.ctypes: dict[str, Ty] = {}  # C type of every local (loop indices: not WEAK_INT)
        self.loopvars: set[str] = set()
        self.result: Ty | None = None  # the function's result type (None: void)
        self.pending: set[str] = set()  # locals assigned a spawned value, not yet synced
        self.collects: dict[str, Collect] = {}  # local arrays collecting spawned results
        # a helper specialised for boards: argument position -> (element type, capacity)
        self.helper_board_args: dict[int, tuple[Ty, int]] = {}
        self.struct_names: dict[str, str] = {}  # array-of-structs parameter -> its type

    def lower_helper(self) -> ir.HelperDef:
        raise NotImplementedError

    def renamed_locals(self) -> dict[str, str]:
        return dict(self.scopes.sources)

    def condition(self, node: c_ast.Node) -> ir.Expr:
        return self.truth(self.expr(node))

    # ------------------------------------------------------------------ names
    def declare(self, cname: str, ty: Ty, node: c_ast.Node, loop: bool = False) -> str:
        if self.scopes.in_block(cname):
            self.error(f"'{cname}' is declared twice in this block", node)
        irname = self.scopes.declare(cname)
        self.ctypes[irname] = ty
        self.locals[irname] = WEAK_INT if loop else ty
        if loop:
            self.loopvars.add(irname)
        return irname

    def read_var(self, irname: str, node: c_ast.Node) -> ir.Expr:
        loc = self.loc(node)
        if irname in self.pending:
            cname = getattr(node, "name", irname)
            self.error(f"'{cname}' holds the value of a spawned call and is read before "
                       "cilk_sync", node)
        if irname in self.loopvars:
            return ir.Cast(loc, self.ctypes[irname], ir.Var(loc, WEAK_INT, irname))
        return ir.Var(loc, self.locals[irname], irname)

    # ------------------------------------------------------------------ constants
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

    # ------------------------------------------------------------------ expressions
    def expr(self, node: c_ast.Node) -> ir.Expr:
        match node:
            case c_ast.Constant():
                return self.constant(node)
            case c_ast.ID(name=name):
                return self.name_ref(name, node)
            case c_ast.BinaryOp(op=op) if op in ARITH:
                return self.arith(op, self.expr(node.left), self.expr(node.right), node)
            case c_ast.BinaryOp(op=op) if op in COMPARE:
                return self.compare(op, self.expr(node.left), self.expr(node.right), node)
            case c_ast.BinaryOp(op="&&" | "||"):
                return self.logical("and" if node.op == "&&" else "or",
                                    self.expr(node.left), self.expr(node.right), node)
            case c_ast.UnaryOp(op="-" | "+" | "~"):
                return self.unary(node.op, self.expr(node.expr), node)
            case c_ast.UnaryOp(op="!"):
                return self.unary("not", self.expr(node.expr), node)
            case c_ast.UnaryOp(op="sizeof"):
                if isinstance(node.expr, c_ast.Typename):
                    ty = self.ctx.type_of(node.expr, "sizeof")
                else:
                    ty = self.expr(node.expr).ty
                if ty is None:
                    self.error("sizeof(void)", node)
                return ir.Const(self.loc(node), U64, int(ty.dtype.itemsize))
            case c_ast.UnaryOp(op="*") if self.board_read(node) is not None:
                return self.board_read(node)  # type: ignore[return-value]
            case c_ast.UnaryOp(op="*") if self.pointer_view(node.expr) is not None:
                ptr, index = self.pointer_view(node.expr)  # type: ignore[misc]
                return self.pointer_element(ptr, [index], node)
            case c_ast.StructRef():
                return self.struct_ref(node)
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

    def constant(self, node: c_ast.Constant) -> ir.Expr:
        loc = self.loc(node)
        try:
            if node.type == "string":
                self.error("strings are not supported", node)
            if node.type == "char" or node.value.startswith("'"):
                return ir.Const(loc, I32, char_literal(node.value))
            if node.type in ("float", "double", "long double") or (
                    not node.value.lower().startswith("0x") and any(
                        ch in node.value for ch in ".eE")) or "p" in node.value.lower():
                v, ty = float_literal(node.value)
                return ir.Const(loc, ty, v)
            iv, ty = int_literal(node.value)
            return ir.Const(loc, ty, iv)
        except ValueError as err:
            self.error(str(err), node)

    def name_ref(self, name: str, node: c_ast.Node) -> ir.Expr:
        loc = self.loc(node)
        irname = self.scopes.lookup(name)
        if irname is not None:
            if irname.startswith("<board>"):
                self.error(f"'{name}' is a board (a task-private array): index it "
                           f"({name}[i]), copy it (memcpy), or pass it to the task's calls "
                           "or a helper", node)
            if irname.startswith("<input>"):
                self.error(f"'{name}' is an array parameter: index it ({name}[i]) or pass it "
                           f"({name}, {name} + k) to the task's own spawns", node)
            if irname.startswith("<array"):
                c = self.collects[name]
                self.error(f"'{name}' collects spawned results; it may only be summed after "
                           f"cilk_sync (for (...) {c.acc} += {name}[i];)", node)
            return self.read_var(irname, node)
        if name in SYNC_NAMES:
            self.error("cilk_sync is a statement", node)
        g = self.ctx.globals.get(name)
        if g is not None and name in self.ctx.bounds:
            assert g.ty is not None  # a bound is a scalar global
            return ir.BoundRead(loc, g.ty, name)
        if g is not None:
            self.usable(g, node)
            if g.pointer:
                self.error(f"'{name}' is a file-scope pointer (an input of the program): "
                           f"index it ({name}[i])", node)
            if g.array is not None:
                self.error(f"'{name}' is an array; index it", node)
            assert g.ty is not None
            if not g.const:
                self.error(f"reads the file-scope variable '{name}', which is not const; "
                           "file-scope variables are read-only constants: declare it const",
                           node)
            return ir.Const(loc, g.ty, g.value)
        if name in ("true", "false"):
            return ir.Const(loc, I32, 1 if name == "true" else 0)
        if name in self.ctx.functions or name in self.ctx.protos:
            self.error(f"'{name}' is a function; call it", node)
        self.error(f"'{name}' is not declared", node)

    def ternary(self, node: c_ast.TernaryOp) -> ir.Expr:
        c = node.cond
        a, b = self.expr(node.iftrue), self.expr(node.iffalse)
        t = usual(a.ty, b.ty)
        if isinstance(c, c_ast.BinaryOp) and c.op in ("<", ">", "<=", ">=") and t.kind in "iu":
            kl, kr, kt, kf = key(c.left), key(c.right), key(node.iftrue), key(node.iffalse)
            if {kl, kr} == {kt, kf} and kl != kr:
                bigger = c.op in (">", ">=")
                func = "maximum" if (kt == kl) == bigger else "minimum"
                return ir.MathCall(self.loc(node), t, func,
                                   (self.convert(a, t), self.convert(b, t)))
        return self.select(self.expr(c), a, b, node)

    def call(self, node: c_ast.FuncCall) -> ir.Expr:
        loc = self.loc(node)
        if not isinstance(node.name, c_ast.ID):
            self.error("calls through pointers are not supported", node)
        fname = node.name.name
        if fname in SETJMP:
            self.error(f"{fname} is not supported (non-local jumps)", node)
        if fname == self.name and self.kind == "task":
            return self.recursive_call(node, spawned=False)
        if fname in self.ctx.tasks:
            self.error(f"calls the task '{fname}'; a task may only call itself, and helpers "
                       "cannot call tasks", node)
        if fname in self.ctx.functions and fname != "main":
            return self.helper_call(fname, node)
        base = fname[:-1] if fname.endswith("f") and fname[:-1] in MATH_C else fname
        if base in MATH_C:  # <math.h>
            ty = F32 if base != fname else F64
            nodes = self.arg_nodes(node)
            if len(nodes) != (2 if base == "pow" else 1):
                self.error(f"{fname}() takes {2 if base == 'pow' else 1} argument(s)", node)
            vals = self.arguments(nodes, [ty] * len(nodes))
            if base == "pow":
                return ir.BinOp(loc, ty, "**", vals[0], vals[1])
            return ir.MathCall(loc, ty, base, vals)
        lib = self.ctx.lib(fname)
        if lib is not None:
            if len(lib.result_types) > 1:
                self.error(f"{lib.name}() returns {len(lib.result_types)} values through "
                           "&local arguments: call it as a statement", node)
            nodes = self.arg_nodes(node)
            if len(nodes) != len(lib.arg_types):
                self.error(f"{lib.name}() takes {len(lib.arg_types)} argument(s)", node)
            return self.library_call(lib, nodes, node)
        self.error(f"call of unknown function '{fname}'; revec accepts calls of "
                   f"{SUPPORTED_CALLS}", node.name)

    def helper(self, name: str, node: c_ast.Node,
               boards: dict[int, tuple[Ty, int]] | None = None) -> ir.HelperDef:
        """The helper ``name``, lowered on its first call (given boards: specialised per
        their positions, element types and capacities)."""
        self.not_recursive(name, node)
        key = name
        if boards:
            key += "__" + "_".join(f"b{pos}{ty.dtype.name}x{cap}"
                                   for pos, (ty, cap) in sorted(boards.items()))

        def lower() -> ir.HelperDef:
            lowerer = type(self)(self.ctx, self.ctx.functions[name], "helper")
            lowerer.helper_board_args = dict(boards or {})
            return lowerer.lower_helper()

        return self.ctx.helper(key, name, lower)

    def helper_call(self, fname: str, node: c_ast.FuncCall) -> ir.Expr:
        """A call of a helper; a board argument passes its elements."""
        loc = self.loc(node)
        nodes = self.arg_nodes(node)
        boards: dict[int, tuple[Ty, int]] = {}
        found: dict[int, Any] = {}
        for i, a in enumerate(nodes):
            av = self.board_named(a.name) if isinstance(a, c_ast.ID) else None
            if av is not None:
                boards[i] = (av.ty, len(av.elements))
                found[i] = av
        helper = self.helper(fname, node, boards)
        want = len(helper.params) - sum(cap - 1 for _, cap in boards.values())
        if len(nodes) != want:
            self.error(f"'{fname}' takes {want} argument(s), got {len(nodes)}", node)
        args: list[ir.Expr] = []
        params = iter(helper.params)
        for i, a in enumerate(nodes):
            if i in found:
                for e in found[i].elements:
                    p = next(params)
                    args.append(self.convert(ir.Var(loc, found[i].ty, e), p.ty))
            else:
                p = next(params)
                args.append(self.convert(self.expr(a), p.ty))
        return ir.Call(loc, helper.result_tys[0], helper.name, tuple(args))

    def arg_nodes(self, call: c_ast.FuncCall) -> list[c_ast.Node]:
        return list(call.args.exprs) if call.args is not None else []

    def counted(self, call: c_ast.FuncCall, n: int) -> list[c_ast.Node]:
        """The argument nodes of a call of a function of this file taking ``n``."""
        nodes = self.arg_nodes(call)
        if len(nodes) != n:
            self.error(f"'{call.name.name}' takes {n} argument(s), got {len(nodes)}", call)
        return nodes

    def recursive_call(self, call: c_ast.FuncCall, spawned: bool) -> ir.Expr:
        """A call of the task itself (``spawned``: after cilk_spawn) whose value is used."""
        self.may_recurse("cilk_spawn" if spawned else f"a call of '{self.name}'", call)
        if self.result is None:
            self.error(f"'{self.name}' returns void: its calls are statements "
                       f"(cilk_spawn {self.name}(...);), not values", call)
        return self.recur(self.counted(call, self.arity()), self.result, call)

    def array_ref(self, node: c_ast.ArrayRef) -> ir.Expr:
        indices: list[c_ast.Node] = []
        base: c_ast.Node = node
        while isinstance(base, c_ast.ArrayRef):
            indices.insert(0, base.subscript)
            base = base.name
        if not isinstance(base, c_ast.ID):
            self.error("only file-scope const arrays can be indexed", node)
        name = base.name
        read = self.board_read(node)
        if read is not None:
            return read
        ptr = self.pointer_named(name, base)
        if ptr is not None:
            return self.pointer_element(ptr, indices, node)
        if self.scopes.lookup(name) is not None:
            self.name_ref(name, base)
            self.error(f"'{name}' is not an array", base)
        g = self.ctx.globals.get(name)
        if g is None or g.array is None:
            self.error(f"'{name}' is not a file-scope array", base)
        assert g.ty is not None
        if not g.const:
            self.error(f"reads the file-scope array '{name}', which is not const; file-scope "
                       "arrays are read-only constants: declare it const", base)
        return self.element(name, g.array, g.ty, indices, node)

    # ------------------------------------------------------------------ boards
    # (task-private arrays: revec.frontend.c.boards.CBoards, the class that lowers
    # functions, implements these; a file-scope initializer has none)
    def board_named(self, name: str) -> Any:
        return None

    def board_read(self, node: c_ast.Node) -> ir.Expr | None:
        return None

    # ------------------------------------------------------------------ array parameters
    def input_named(self, name: str) -> ir.ArrayParam | None:
        """The array parameter the C name ``name`` stands for here (None: another)."""
        irname = self.scopes.lookup(name)
        if irname is None or not irname.startswith("<input>"):
            return None
        return next(ap for ap in self.array_params if ap.name == irname[len("<input>"):])

    def pointer_named(self, name: str, node: c_ast.Node) -> Pointer | None:
        """The pointer the C name ``name`` stands for here: an array parameter or a
        file-scope pointer (None: anything else)."""
        ap = self.input_named(name)
        if ap is not None:
            return Pointer(name, ap, None if ap.fields else ap.array, ap.fields,
                           self.struct_names.get(name, ""))
        if self.scopes.lookup(name) is not None:
            return None
        g = self.ctx.globals.get(name)
        if g is None:
            return None
        self.usable(g, node)
        if not g.pointer:
            return None
        return Pointer(name, None, g.input, g.fields, g.struct)

    def usable(self, g: Global, node: c_ast.Node) -> None:
        """A file-scope variable a task cannot read is an error where it reads it."""
        if isinstance(g.unusable, RevecError):
            raise g.unusable
        if g.unusable is not None:
            self.error(g.unusable, node)

    def pointer_view(self, node: c_ast.Node) -> tuple[Pointer, c_ast.Node] | None:
        """``p`` or ``p + k`` (``k + p``, ``p - k``) on a pointer ``p`` (an array parameter
        or a file-scope pointer): it and the element offset node (a literal 0 for ``p``);
        None for anything else."""
        if isinstance(node, c_ast.ID):
            ptr = self.pointer_named(node.name, node)
            if ptr is not None:
                return ptr, c_ast.Constant("int", "0", node.coord)
        if isinstance(node, c_ast.BinaryOp) and node.op == "+":
            for a, k in ((node.left, node.right), (node.right, node.left)):
                view = self.pointer_view(a)  # (p + i) + j: p + (i + j)
                if view is not None:
                    return view[0], _plus(view[1], k, node)
        if isinstance(node, c_ast.BinaryOp) and node.op == "-":
            view = self.pointer_view(node.left)
            if view is not None:
                return view[0], _plus(view[1], c_ast.UnaryOp("-", node.right, node.coord),
                                      node)
        return None

    def pointer_element(self, ptr: Pointer, indices: list[c_ast.Node], node: c_ast.Node,
                        field: c_ast.ID | None = None) -> ir.Expr:
        """Element ``indices[0]`` of the pointer ``ptr`` (its ``field``, for structs)."""
        if ptr.fields and field is None:
            first = ptr.fields[0][0]
            self.error(f"'{ptr.name}' points to {ptr.struct} values: read a field "
                       f"({ptr.name}[i].{first}, {ptr.name}->{first})", node)
        if not ptr.fields and field is not None:
            self.error(f"'{ptr.name}' does not point to structs; '{field.name}' is not one of "
                       "its fields", field)
        key = ptr.key
        if field is not None:
            key = dict(ptr.fields).get(field.name)
            if key is None:
                names = ", ".join(f for f, _ in ptr.fields)
                self.error(f"{ptr.struct} has no field '{field.name}' (its fields: {names})",
                           field)
        assert key is not None
        if len(indices) != 1:
            self.error(f"array '{ptr.name}' has 1 dimension(s) but is indexed with "
                       f"{len(indices)}", node)
        if ptr.ap is not None:
            return self.input_element(ptr.ap, indices, node, key)
        i = self.typed(lambda: self.rules.index(self.expr(indices[0])), indices[0])
        loc = self.loc(node)
        i = ir.Cast(loc, INT64, i) if i.ty != INT64 else i
        return ir.ArrayRef(loc, Ty(self.ctx.inputs[key].dtype), key, (i,))

    def struct_ref(self, node: c_ast.StructRef) -> ir.Expr:
        """A field of an array of structs: ``e->f``, ``(e + k)->f``, ``e[i].f``,
        ``(*e).f``, ``(*(e + k)).f``."""
        base = node.name
        view: tuple[Pointer, c_ast.Node] | None = None
        if node.type == "->":
            view = self.pointer_view(base)
        elif isinstance(base, c_ast.ArrayRef) and isinstance(base.name, c_ast.ID):
            ptr = self.pointer_named(base.name.name, base.name)
            view = None if ptr is None else (ptr, base.subscript)
        elif isinstance(base, c_ast.UnaryOp) and base.op == "*":
            view = self.pointer_view(base.expr)
        if view is None:
            self.error("a struct field is read from an array of structs (a task's parameter "
                       "or a file-scope pointer): e->f, (e + k)->f, e[i].f or (*e).f", node)
        return self.pointer_element(view[0], [view[1]], node, node.field)

    def array_argument(self, ap: ir.ArrayParam, node: c_ast.Node
                       ) -> tuple[ir.Expr, ir.Expr | None]:
        """The array argument of a call of the task: ``a``, ``a + k``, ``a - k`` or
        ``&a[k]`` on the same parameter (a child's view starts k elements further)."""
        view = self.pointer_view(node)
        if view is None and isinstance(node, c_ast.UnaryOp) and node.op == "&" and \
                isinstance(node.expr, c_ast.ArrayRef) and isinstance(node.expr.name, c_ast.ID):
            ptr = self.pointer_named(node.expr.name.name, node.expr.name)
            if ptr is not None:
                view = ptr, node.expr.subscript
        if view is None or view[0].ap is not ap:
            self.error(f"argument {ap.position + 1} of '{self.name}' is the array parameter "
                       f"'{ap.name}': pass {ap.name} itself, {ap.name} + k or "
                       f"&{ap.name}[k]", node)
        loc = self.loc(node)
        k = self.typed(lambda: self.rules.index(self.expr(view[1])), view[1])
        k = ir.Cast(loc, INT64, k) if k.ty.dtype != np.int64 else k
        return self.arith("+", ir.Var(loc, k.ty, ap.offset), k, node), None

    def reject_input_write(self, base: c_ast.Node, lvalue: c_ast.Node) -> None:
        ap = self.input_named(base.name) if isinstance(base, c_ast.ID) else None
        if ap is not None and ap.output:
            self.error(f"reads and writes an element of the output array '{ap.name}'; tasks "
                       f"only write outputs ({ap.name}[i] = value), each element by one task",
                       lvalue)
        if isinstance(base, c_ast.ID) and self.input_named(base.name) is not None:
            self.error(f"writes the array parameter '{base.name}'; array parameters are "
                       "read-only inputs (a task's own copy is not supported yet)", lvalue)
        if isinstance(base, c_ast.ID) and self.scopes.lookup(base.name) is None:
            g = self.ctx.globals.get(base.name)
            if g is not None and g.pointer:
                self.error(f"writes through the file-scope pointer '{base.name}'; what it "
                           "points to is a read-only input of the program (the caller "
                           "supplies it)", lvalue)


def _plus(i: c_ast.Node, k: c_ast.Node, node: c_ast.Node) -> c_ast.Node:
    """The element offset ``i + k`` (``k`` alone when ``i`` is the literal 0)."""
    if isinstance(i, c_ast.Constant) and i.value == "0":
        return k
    return c_ast.BinaryOp("+", i, k, node.coord)

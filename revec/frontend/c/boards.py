"""Task-private arrays in Cilk C (a board copied from the parent and changed, the form
of Cilk-5's and BOTS's nqueens): a pointer parameter the task's own calls pass local
arrays for; local arrays ``char b[N]`` and ``char *b = alloca(E * sizeof(char))``;
``memcpy(b, a, ...)``, ``memset(b, 0, ...)``, ``b[j] = x``; reads ``a[i]``, ``*a``,
``*(a + i)``; helpers given a board (``ok(j + 1, b)``, specialised per capacity).

Each array is lowered by the front-end core (:class:`revec.frontend.builder.ArrayVar`)
as scalar elements up to a capacity found from the program: a constant array size, or
an ``alloca`` size bounded by the is-base test (``alloca((j + 1) * sizeof(char))`` with
``if (n == j) return ...``, ``j`` passed as ``j + 1`` and ``n`` unchanged: at most
``n``), whose bound's root value specialises the program.  ``memcpy`` copies the
whole capacity (the elements past the copied count are unset in C; reading them is the
program's error either way).
"""

from __future__ import annotations

from typing import Any

from pycparser import c_ast

from revec import ir
from revec.frontend.builder import ArrayVar
from revec.frontend.c.expressions import CExpressions
from revec.frontend.c.syntax import as_if, ends_with_return, walk
from revec.frontend.rules.c99 import I64
from revec.ir import Ty

BOARD = "<board>"  # the scopes' marker of a C name that is a private array
ALLOC = ("alloca", "__builtin_alloca")


def _strip(node: c_ast.Node) -> c_ast.Node:
    while isinstance(node, c_ast.Cast):
        node = node.expr
    return node


def strip_casts(node: c_ast.Node) -> c_ast.Node:
    """``node`` without the casts around it (``(int *) alloca(...)``)."""
    return _strip(node)


def is_alloca(node: c_ast.Node | None) -> bool:
    node = _strip(node) if node is not None else None
    return isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
        node.name.name in ALLOC


class CBoards(CExpressions):
    """The private-array forms of a C task or helper."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.helper_boards: dict[int, ArrayVar] = {}  # a helper's board parameters

    # ------------------------------------------------------------------ lookups
    def board_named(self, name: str) -> ArrayVar | None:
        irname = self.scopes.lookup(name)
        if irname is None or not irname.startswith(BOARD):
            return None
        return self.array_vars[irname[len(BOARD):]]

    def self_calls(self) -> list[list[c_ast.Node]]:
        assert self.fdef is not None
        out = []
        for n in walk(self.fdef.body):
            if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and \
                    n.name.name == self.name:
                out.append(list(n.args.exprs) if n.args is not None else [])
        return out

    def local_board_decls(self) -> dict[str, c_ast.Decl]:
        """The function's local array and pointer declarations, by name."""
        assert self.fdef is not None
        return {n.name: n for n in walk(self.fdef.body)
                if isinstance(n, c_ast.Decl) and isinstance(n.type, (c_ast.ArrayDecl,
                                                                     c_ast.PtrDecl))}

    def is_private_param(self, p: c_ast.Decl, position: int) -> bool:
        """A pointer parameter the task's own calls pass a local array for."""
        if self.kind != "task":
            return False
        decls = self.local_board_decls()
        for args in self.self_calls():
            if len(args) > position:
                a = _strip(args[position])
                if isinstance(a, c_ast.ID) and a.name in decls and a.name != p.name:
                    return True
        return False

    # ------------------------------------------------------------------ capacity
    def capacity(self, node: c_ast.Node, what: str) -> tuple[int, str | None]:
        """An upper bound on the number of elements the size expression ``node`` (an
        array dimension, or an alloca's byte count over the element size) asks for:
        (capacity, the parameter whose root value it depends on)."""
        bound = self.size_bound(node)
        if bound is None:
            self.error(f"cannot bound the size of {what}: a task-private array needs a "
                       "size that is a constant, a parameter every call passes on "
                       "unchanged, or a depth the is-base test stops (alloca((j + 1) * "
                       "sizeof(char)) with 'if (n == j) return ...;' and the task's own "
                       "calls passing j + 1 and n)", node)
        param, extra = bound
        if param is None:
            return max(extra, 1), None
        size = self.ctx.sizes.get((self.name, param))
        return max((1 if size is None else size) + extra, 1), param

    def size_bound(self, node: c_ast.Node) -> tuple[str | None, int] | None:
        node = _strip(node)
        match node:
            case c_ast.BinaryOp(op="*", left=a, right=b):
                for x, y in ((a, b), (b, a)):
                    if isinstance(_strip(y), c_ast.UnaryOp) and _strip(y).op == "sizeof":
                        return self.size_bound(x)
                return None
            case c_ast.UnaryOp(op="sizeof"):
                return None, 1
            case c_ast.BinaryOp(op="+" | "-", left=a, right=b):
                k = self.constant_of(b)
                base = self.size_bound(a)
                if k is None or base is None:
                    return None
                return base[0], base[1] + (k if node.op == "+" else -k)
            case c_ast.ID(name=name):
                k = self.constant_of(node)
                if k is not None:
                    return None, k
                return self.param_bound(name)
        k = self.constant_of(node)
        return None if k is None else (None, k)

    def constant_of(self, node: c_ast.Node) -> int | None:
        if isinstance(node, c_ast.ID) and self.param_position(node.name) is not None:
            return None
        try:
            return int(self.const_expr(node, I64))
        except Exception:  # noqa: BLE001 - not a constant expression
            return None

    def param_position(self, name: str) -> int | None:
        assert self.fdef is not None
        fdecl = self.fdef.decl.type
        params = fdecl.args.params if fdecl.args is not None else []
        for i, q in enumerate(params):
            if getattr(q, "name", None) == name:
                return i
        return None

    def passed_as(self, name: str, ok: tuple[int, ...]) -> bool:
        """Every call of the task passes ``name`` + k (k in ``ok``) for parameter
        ``name``."""
        pos = self.param_position(name)
        if pos is None:
            return False
        for args in self.self_calls():
            if len(args) <= pos:
                return False
            a = _strip(args[pos])
            if isinstance(a, c_ast.ID) and a.name == name and 0 in ok:
                continue
            if isinstance(a, c_ast.BinaryOp) and a.op == "+" and isinstance(a.left, c_ast.ID) \
                    and a.left.name == name and self.constant_of(a.right) in ok:
                continue
            return False
        return True

    def param_bound(self, name: str) -> tuple[str | None, int] | None:
        """A parameter as a size: one every call passes unchanged bounds itself; a depth
        (every call passes it or it + 1) stopped by the is-base test ``name == X`` or
        ``name >= X`` is at most X - 1 in the inductive case."""
        if self.kind != "task" or self.param_position(name) is None:
            return None
        if self.passed_as(name, (0,)):
            return name, 0
        if not self.passed_as(name, (0, 1)):
            return None
        assert self.fdef is not None
        items = list(self.fdef.body.block_items or [])
        shape = self.task_shape(items, self.fdef, as_if, ends_with_return)
        for cmp in walk(shape.test):
            if not isinstance(cmp, c_ast.BinaryOp):
                continue
            sides = [(cmp.left, cmp.right, cmp.op), (cmp.right, cmp.left,
                                                    {"<=": ">=", "==": "=="}.get(cmp.op, ""))]
            for mine, other, op in sides:
                if isinstance(mine, c_ast.ID) and mine.name == name and op in ("==", ">="):
                    k = self.constant_of(other)
                    if k is not None:
                        return None, k - 1
                    if isinstance(other, c_ast.ID) and self.passed_as(other.name, (0,)):
                        return other.name, -1
        return None

    # ------------------------------------------------------------------ declarations
    def private_pointer_param(self, p: c_ast.Decl, position: int, ty: Ty) -> None:
        """A pointer parameter the task's calls pass boards for: as large as the
        largest board passed."""
        decls = self.local_board_decls()
        best: tuple[int, str | None] | None = None
        for args in self.self_calls():
            a = _strip(args[position]) if len(args) > position else None
            if isinstance(a, c_ast.ID) and a.name in decls:
                cap = self.board_capacity(decls[a.name])
                if best is None or cap[0] > best[0]:
                    best = cap
        assert best is not None

        def fresh(base: str) -> str:
            name = self.scopes.fresh(base)
            return name

        av = self.private_param(p.name, position, ty, best[0], best[1], p,
                                with_length=False, fresh=fresh)
        key = f"{p.name}@param"
        self.array_vars[key] = av
        self.scopes.bind(p.name, BOARD + key)

    def board_capacity(self, d: c_ast.Decl) -> tuple[int, str | None]:
        """The capacity of the local board declared by ``d``."""
        if isinstance(d.type, c_ast.ArrayDecl):
            if d.type.dim is None:
                self.error(f"array '{d.name}' needs a size", d)
            return self.capacity(d.type.dim, f"'{d.name}'")
        size = self.alloca_size(d)
        if size is None:
            self.error(f"'{d.name}' is a pointer; a task's local board is an array "
                       f"(T {d.name}[N]) or alloca'd (T *{d.name} = alloca(n * sizeof(T)))",
                       d)
        return self.capacity(size, f"'{d.name}'")

    def alloca_size(self, d: c_ast.Decl) -> c_ast.Node | None:
        """The byte count of the alloca that ``d`` is initialised with, or that the
        function assigns to its name first."""
        init = d.init
        if init is None:
            assert self.fdef is not None
            for n in walk(self.fdef.body):
                if isinstance(n, c_ast.Assignment) and n.op == "=" and isinstance(
                        n.lvalue, c_ast.ID) and n.lvalue.name == d.name and is_alloca(n.rvalue):
                    init = n.rvalue
                    break
        if init is None or not is_alloca(init):
            return None
        call = _strip(init)
        assert isinstance(call, c_ast.FuncCall)
        args = list(call.args.exprs) if call.args is not None else []
        if len(args) != 1:
            self.error("alloca takes one argument (a byte count)", call)
        return args[0]

    def board_decl(self, d: c_ast.Decl) -> list[ir.Stmt]:
        """``T b[N];`` or ``T *b = alloca(...);`` (or a later ``b = alloca(...)``)."""
        elem_node = d.type.type
        if isinstance(elem_node, (c_ast.ArrayDecl, c_ast.PtrDecl)):
            self.error(f"'{d.name}' has more than one dimension; a board is a flat array", d)
        ty = self.ctx.type_of(elem_node, f"the elements of '{d.name}'")
        if ty is None:
            self.error(f"'{d.name}' has elements of type void", d)
        cap, _ = self.board_capacity(d)
        if isinstance(d.init, c_ast.InitList):
            self.error("a board is filled by memcpy, memset or element assignments", d.init)
        if self.scopes.in_block(d.name):
            self.error(f"'{d.name}' is declared twice in this block", d)
        key = f"{d.name}@{id(d)}"
        av = self.array_vars.get(key)
        if av is None:
            av = self.local_array(d.name, ty, cap, with_length=False,
                                  fresh=lambda b: self.scopes.fresh(b))
            self.array_vars[key] = av
        for e in av.elements:
            self.locals.setdefault(e, ty)
            self.ctypes.setdefault(e, ty)
        self.scopes.bind(d.name, BOARD + key)
        return []

    # ------------------------------------------------------------------ statements
    def board_call(self, node: c_ast.FuncCall) -> list[ir.Stmt] | None:
        """``memcpy(b, a, n)`` / ``memset(b, 0, n)`` on boards (None: another call)."""
        if not isinstance(node.name, c_ast.ID) or node.name.name not in (
                "memcpy", "memset", "memmove", "__builtin_memcpy", "__builtin_memset"):
            return None
        args = [_strip(a) for a in (node.args.exprs if node.args is not None else [])]
        if len(args) != 3:
            self.error(f"{node.name.name} takes three arguments", node)
        dst = self.board_arg(args[0], node)
        if node.name.name.endswith("memset"):
            value = self.constant_of(args[1])
            if value is None:
                self.error("memset fills a board with a constant byte", args[1])
            loc = self.loc(node)
            return [ir.Assign(loc, e, self.convert(ir.Const(loc, I64, value), dst.ty))
                    for e in dst.elements]
        src = self.board_arg(args[1], node)
        if src.ty != dst.ty:
            self.error("memcpy between boards of different element types", node)
        if self.is_own_param(dst):
            self.error(f"'{dst.name}' is the board this task was given; copy it into a "
                       "local board and change that one", args[0])
        return self.array_copy(dst, src, node)

    def board_arg(self, node: c_ast.Node, call: c_ast.Node) -> ArrayVar:
        if isinstance(node, c_ast.ID):
            av = self.board_named(node.name)
            if av is not None:
                return av
        self.error("memcpy and memset work on whole boards here (a task's array "
                   "parameter or local array)", node)

    def is_own_param(self, av: ArrayVar) -> bool:
        return any(pa.fields == av.elements for pa in self.private_params) or \
            av in self.helper_boards.values()

    def board_store(self, lvalue: c_ast.Node, node: c_ast.Assignment) -> list[ir.Stmt] | None:
        """``b[i] = v`` / ``*(b + i) = v`` on a local board (None: not a board)."""
        target = self.board_element(lvalue)
        if target is None:
            return None
        av, index = target
        if self.is_own_param(av):
            self.error(f"'{av.name}' is the board this function was given; copy it into "
                       "a local board and change that one", lvalue)
        value = self.expr(node.rvalue)
        if node.op != "=":
            idx = self.typed(lambda: self.rules.index(self.expr(index)), index)
            cur = self.array_element(av, idx, lvalue)
            value = self.arith(node.op[:-1], cur, value, node)
        idx = self.typed(lambda: self.rules.index(self.expr(index)), index)
        return self.array_store(av, idx, value, node)

    def board_element(self, node: c_ast.Node) -> tuple[ArrayVar, c_ast.Node] | None:
        """``b[i]``, ``*b``, ``*(b + i)`` on a board: it and the index node."""
        if isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.ID):
            av = self.board_named(node.name.name)
            if av is not None:
                return av, node.subscript
        if isinstance(node, c_ast.UnaryOp) and node.op == "*":
            inner = node.expr
            if isinstance(inner, c_ast.ID) and (av := self.board_named(inner.name)):
                return av, c_ast.Constant("int", "0", node.coord)
            if isinstance(inner, c_ast.BinaryOp) and inner.op == "+":
                for a, k in ((inner.left, inner.right), (inner.right, inner.left)):
                    if isinstance(a, c_ast.ID) and (av := self.board_named(a.name)):
                        return av, k
        return None

    def board_read(self, node: c_ast.Node) -> ir.Expr | None:
        target = self.board_element(node)
        if target is None:
            return None
        av, index = target
        idx = self.typed(lambda: self.rules.index(self.expr(index)), index)
        return self.array_element(av, idx, node)

    def private_argument(self, pa: ir.PrivateArray, node: c_ast.Node) -> dict[str, ir.Expr]:
        node = _strip(node)
        av = self.board_named(node.name) if isinstance(node, c_ast.ID) else None
        if av is None:
            self.error(f"argument {pa.position + 1} of '{self.name}' is the board "
                       f"'{pa.name}': pass a local board (or '{pa.name}' itself)", node)
        return self.child_fields(pa, av, node)

    def helper_board_param(self, p: c_ast.Decl, position: int) -> list[ir.Param]:
        """A helper's pointer parameter given a board: one parameter per element."""
        ty, cap = self.helper_board_args[position]
        inner = self.ctx.type_of(p.type.type, f"the elements of '{p.name}'")
        if inner != ty:
            self.error(f"'{p.name}' points to {inner} values; the board passed holds {ty}", p)
        loc = self.loc(p)
        elements = tuple(self.scopes.fresh(f"{p.name}_{k}") for k in range(cap))
        av = ArrayVar(p.name, ty, elements, None)
        key = f"{p.name}@param"
        self.array_vars[key] = av
        self.helper_boards[position] = av
        self.scopes.bind(p.name, BOARD + key)
        for e in elements:
            self.locals[e] = ty
            self.ctypes[e] = ty
        return [ir.Param(e, ty, loc) for e in elements]

"""Task-private lists in Python tasks (a board copied from the parent and changed):
how a child's list is built (``board + [c]``, ``board[:j] + (c,)``, ``[*board, c]``,
``list(board)`` then ``nb[j] = c``), stored and passed to spawns and helpers.

A list is lowered by the front-end core (:class:`revec.frontend.builder.ArrayVar`):
scalar elements up to the task's capacity and a length; this module reads the Python
forms that build one.
"""

from __future__ import annotations

import functools

import libcst as cst

from revec import ir
from revec.frontend.builder import INT64, ArrayVar
from revec.frontend.python.expressions import PyExpressions
from revec.frontend.python.signature import names_in
from revec.ir import Ty


class PrivateLists(PyExpressions):
    """The list forms of a Python task or helper."""

    def list_source(self, node: cst.BaseExpression) -> ArrayVar | None:
        """The list ``node`` names (a private list parameter or local), or None."""
        if isinstance(node, cst.Name):
            return self.array_vars.get(node.value)
        return None

    def builds_list(self, node: cst.BaseExpression) -> bool:
        """``node`` is an expression that makes a list for a child."""
        match node:
            case cst.BinaryOperation(operator=cst.Add(), left=left):
                return self.builds_list(left) or self.list_source(left) is not None or \
                    self.prefix(left) is not None
            case cst.List() | cst.Tuple():
                return True
            case cst.Call(func=cst.Name(value="list" | "tuple"), args=[arg]):
                return self.list_source(arg.value) is not None
            case cst.Call(func=cst.Attribute(value=base, attr=cst.Name(value="copy")), args=[]):
                return self.list_source(base) is not None
            case cst.Subscript():
                return self.prefix(node) is not None
            case cst.Name():
                return self.list_source(node) is not None
        return False

    def prefix(self, node: cst.BaseExpression) -> tuple[ArrayVar, cst.BaseExpression | None] | None:
        """``b[:j]`` / ``b[:]`` of a list ``b``: it and ``j`` (None: all of it)."""
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(
                node.slice[0].slice, cst.Slice):
            sl = node.slice[0].slice
            src = self.list_source(node.value)
            if src is not None and sl.lower is None and sl.step is None:
                return src, sl.upper
        return None

    def capacity_for(self, src: ArrayVar | None, extra: int) -> int:
        """A new list's capacity: its source's (the task's boards all hold as many),
        else the task's private lists', else what the literal needs."""
        if src is not None:
            return len(src.elements)
        caps = [len(a.elements) for a in self.array_vars.values()]
        return max(caps + [extra, 1])

    def build_list(self, target: str, node: cst.BaseExpression, stmt: cst.CSTNode
                   ) -> tuple[ArrayVar, list[ir.Stmt]]:
        """The statements making the local list ``target`` from the expression ``node``."""
        loc = self.loc(node)
        src: ArrayVar | None = None
        upto: cst.BaseExpression | None = None
        appended: list[cst.BaseExpression] = []
        match node:
            case cst.Name():
                src = self.list_source(node)
            case cst.BinaryOperation(operator=cst.Add(), left=left, right=right):
                src = self.list_source(left)
                if src is None and (pre := self.prefix(left)) is not None:
                    src, upto = pre
                if src is None or not isinstance(right, (cst.List, cst.Tuple)):
                    self.error("a child's list is built as LIST + [x, ...] or LIST[:j] + "
                               "(x, ...) from a task-private list", node)
                appended = self.literal_elements(right)
            case cst.List(elements=els) | cst.Tuple(elements=els):
                if els and isinstance(els[0], cst.StarredElement):
                    src = self.list_source(els[0].value)
                    if src is None:
                        self.error("only a task-private list can be unpacked here", els[0])
                    appended = self.literal_elements(node, skip=1)
                else:
                    appended = self.literal_elements(node)
            case cst.Call(func=cst.Name(), args=[arg]):
                src = self.list_source(arg.value)
            case cst.Call(func=cst.Attribute(value=base)):
                src = self.list_source(base)
            case cst.Subscript():
                pre = self.prefix(node)
                assert pre is not None
                src, upto = pre
        if src is None and not isinstance(node, (cst.List, cst.Tuple)):
            self.error("not a list this task can build", node)
        ty = src.ty if src is not None else self.literal_type(appended, node)
        cap = self.capacity_for(src, len(appended))
        known = self.array_vars.get(target)
        if known is not None and (known.ty != ty or len(known.elements) < cap):
            self.error(f"'{target}' holds a list of {len(known.elements)} {known.ty} "
                       f"values; this one is {cap} {ty} values", node)
        dst = known or self.local_array(target, ty, cap, with_length=True, fresh=self.fresh_name)
        self.array_vars[target] = dst
        for e in dst.elements:  # (again after a round of the fixpoint forgot the locals)
            self.locals.setdefault(e, dst.ty)
        assert dst.length is not None
        self.locals.setdefault(dst.length, INT64)
        out: list[ir.Stmt] = []
        if src is not None:
            length: ir.Expr = self.array_length(src, node)
            if upto is not None:
                j = self.typed(lambda: self.rules.index(self.expr(upto)), upto)
                j = ir.Cast(loc, INT64, j) if j.ty != INT64 else j
                zero = ir.Const(loc, INT64, 0)
                # Python's slice rule for b[:j]: a negative j counts from the end; clipped
                neg = ir.MathCall(loc, INT64, "maximum", (ir.BinOp(loc, INT64, "+", length, j), zero))
                pos = ir.MathCall(loc, INT64, "minimum", (j, length))
                length = ir.IfExp(loc, INT64, ir.Compare(loc, ir.BOOL, "<", j, zero), neg, pos)
            if src is not dst:
                out += self.array_copy(dst, src, node, length)
            else:
                out.append(ir.Assign(loc, dst.length or "", length))
        else:
            out.append(ir.Assign(loc, dst.length or "", ir.Const(loc, INT64, 0)))
        assert dst.length is not None
        for value in appended:
            at = ir.Var(loc, INT64, dst.length)
            out += self.array_store(dst, at, self.expr(value), value)
            out.append(ir.Assign(loc, dst.length, ir.BinOp(loc, INT64, "+", at,
                                                            ir.Const(loc, INT64, 1))))
        return dst, out

    def literal_elements(self, node: cst.BaseExpression, skip: int = 0
                         ) -> list[cst.BaseExpression]:
        if not isinstance(node, (cst.List, cst.Tuple)):
            self.error("expected a list or tuple of values", node)
        out = []
        for el in node.elements[skip:]:
            if isinstance(el, cst.StarredElement):
                self.error("only the first element may unpack a list", el)
            out.append(el.value)
        return out

    def literal_type(self, values: list[cst.BaseExpression], node: cst.CSTNode) -> Ty:
        if not values:
            self.error("an empty list's element type is unknown here; build it from the "
                       "task's list (board[:0])", node)
        ty = self.expr(values[0]).ty
        for v in values[1:]:
            ty = self.rules.join(ty, self.expr(v).ty)
        return Ty(ty.dtype)

    def fresh_name(self, base: str) -> str:
        """A name for a list's element or length no name of the function uses."""
        taken = set(self.locals) | {p.name for p in self.params} | self.source_names
        return ir.fresh_name(base, taken)

    @functools.cached_property
    def source_names(self) -> set[str]:
        """Every plain name the function's source mentions."""
        return names_in(self.fdef)

    def list_assign(self, target: str, value: cst.BaseExpression, node: cst.CSTNode
                    ) -> list[ir.Stmt]:
        """``target = <list>`` in a task or helper."""
        if any(pa.name == target for pa in self.private_params):
            self.error(f"'{target}' is the list this task was given; build a new list for a "
                       f"child instead (new = {target} + [x])", node)
        _, stmts = self.build_list(target, value, node)
        return stmts

    def list_store(self, av: ArrayVar, index: cst.BaseExpression, value: cst.BaseExpression,
                   node: cst.CSTNode) -> list[ir.Stmt]:
        """``nb[j] = v`` on a local list (the task's own list is its parent's: not written)."""
        if any(pa.name == av.name for pa in self.private_params) or self.kind == "helper":
            self.error(f"'{av.name}' is a list this function was given; it cannot write it "
                       f"(copy it first: new = list({av.name}))", node)
        idx = self.typed(lambda: self.rules.index(self.expr(index)), index)
        return self.array_store(av, idx, self.expr(value), node)

    def private_argument(self, pa: ir.PrivateArray, node: cst.BaseExpression
                         ) -> dict[str, ir.Expr]:
        """A child's list: a list variable, or an expression building one (into a new
        local, made before the statement)."""
        av = self.list_source(node)
        if av is None:
            if not self.builds_list(node):
                self.error(f"argument {pa.position + 1} of {self.name} is the task-private "
                           f"list '{pa.name}': pass a list (e.g. {pa.name} + [x])", node)
            tmp = self.fresh_name(f"_rv_{pa.name}_child")
            av, stmts = self.build_list(tmp, node, node)
            self.pre += stmts
        return self.child_fields(pa, av, node)

"""Return-value recursion -> the spawn/reduce form, by the algebra of the combination.

A task that returns a value (``TaskDef.result_ty``; its own calls appear as
:class:`revec.ir.Recur`) is rewritten into a task without results that spawns and
reduces.  The rewrite is an IR pass, so every front end shares it.

**Sums.**  If every result is ``sum_i c_i * child_i + local``, the root's value is
``sum over tasks t of W(t) * local(t)`` where ``W(t)`` is the product of the weights
``c`` on the path from the root to ``t``.  So: a hidden sum reducer receives
``w * local`` once per task, and each call of the task becomes a spawn that passes
``w * c_i`` as an extra frame field ``w`` (the root's ``w`` is 1; without weights
other than 1 there is no field).  Integer arithmetic is arithmetic modulo 2**bits
(a ring), so the result equals the plain recursion bit for bit whenever every
intermediate type on a child's path is at least as wide as the result type (checked).

**Max / min.**  If every result is ``local + max(children and local terms)``, the
root's value is the maximum over root-to-leaf paths of the locals' sum: a frame
field ``p`` carries the path sum (``p + local`` to every child); a local term
``x`` of the max and a base case's value ``v`` are candidates ``p + local + x``,
``p + v`` of a hidden max reducer.  Without local terms there is no field.

Results may flow through locals (``total += f(...)`` in loops, ``a = f(x)``,
``best = max(best, f(...))``) provided every local holding results of calls reaches
a ``return`` with one weight (or offset) that the spawns can compute when they
happen (constants and parameters the task never assigns).  Every other use of a
result is a located error naming the supported forms.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.ir import Ty
from revec.transforms.blocking import assigned_names
from revec.transforms.forward_results import forward_results

FORMS = (
    "supported results: a sum of the task's own calls with constant or parameter "
    "weights plus local terms (return f(a) + 2 * f(b) + x; total += f(...) in a loop, "
    "then return total), or max/min of its calls and local terms plus a local term "
    "(return 1 + max(f(a), f(b)))")
SUPPORTED = f"{FORMS}; otherwise write the task with spawn and a Reducer"
# operators whose two operands may not both hold results (not a sum of weighted results)
_PRODUCTS = {"*": "a product", "/": "a quotient", "//": "a quotient", "%": "a remainder",
             "**": "a power", "&": "a bitwise and", "|": "a bitwise or",
             "^": "a bitwise xor", "<<": "a shift", ">>": "a shift"}

Factors = tuple[ir.Expr, ...]


class _Mode:
    SUM = "sum"
    MAX = "max"
    MIN = "min"


def convert_returns(program: ir.Program) -> ir.Program:
    """The program with every value-returning task in the spawn/reduce form."""
    if all(t.result_ty is None for t in program.tasks.values()):
        return program
    tasks: dict[str, ir.TaskDef] = {}
    reducers = dict(program.reducers)
    for name, t in program.tasks.items():
        if t.result_ty is None:
            tasks[name] = t
            continue
        rname = ir.fresh_name(f"{name}_result", set(reducers) | set(program.helpers))
        new, op = _Converter(forward_results(t), rname, program.reducers).convert()
        reducers[rname] = ir.ReducerDecl(rname, t.result_ty.dtype, op, t.loc, hidden=True)
        tasks[name] = new
    return dataclasses.replace(program, tasks=tasks, reducers=reducers)


# --------------------------------------------------------------------------- helpers
def _stmt_exprs(s: ir.Stmt) -> list[ir.Expr]:
    match s:
        case ir.Assign(value=v) | ir.ExprStmt(value=v) | ir.Reduce(value=v):
            return [v]
        case ir.Unpack(call=c):
            return [c]
        case ir.Store(indices=ix, value=v):
            return [*ix, v]
        case ir.If(cond=c) | ir.While(cond=c):
            return [c]
        case ir.For(start=a, stop=b, step=c):
            return [a, b, c]
        case ir.Return(values=vs) | ir.Spawn(args=vs):
            return list(vs)
    return []


def _always_returns(stmts: Sequence[ir.Stmt]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ir.Return):
        return True
    if isinstance(last, ir.If):
        return _always_returns(last.then) and _always_returns(last.orelse)
    return False


def _drop_tail_returns(stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
    """A ``return`` that ends a case changes nothing: leave it out, and turn
    ``if c: A; return`` followed by B into ``if c: A else: B`` (the back ends keep their
    straight-line fast paths for cases without early returns)."""
    for i, st in enumerate(stmts):
        if (isinstance(st, ir.If) and not st.orelse and i + 1 < len(stmts)
                and _always_returns(st.then)):
            stmts = (*stmts[:i], dataclasses.replace(st, orelse=stmts[i + 1:]))
            break
    if not stmts:
        return stmts
    last = stmts[-1]
    if isinstance(last, ir.Return):
        return stmts[:-1]
    if isinstance(last, ir.If):
        return (*stmts[:-1], dataclasses.replace(
            last, then=_drop_tail_returns(last.then), orelse=_drop_tail_returns(last.orelse)))
    return stmts


def _const(ty: Ty, value: int | float, loc: SourceLoc) -> ir.Const:
    if ty.kind in "iu":
        bits = 8 * ty.dtype.itemsize
        v = int(value) % (1 << bits)
        if ty.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
        return ir.Const(loc, ty, v)
    return ir.Const(loc, ty, float(value))


def _conv(e: ir.Expr, ty: Ty) -> ir.Expr:
    if e.ty == ty:
        return e
    if isinstance(e, ir.Const) and not isinstance(e.value, bool):
        if e.ty.kind in "iu" or ty.kind == "f":
            return _const(ty, e.value, e.loc)
    return ir.Cast(e.loc, ty, e)


def _is_const(e: ir.Expr, value: float) -> bool:
    return isinstance(e, ir.Const) and not isinstance(e.value, bool) and e.value == value


def _mul(a: ir.Expr, b: ir.Expr, ty: Ty) -> ir.Expr:
    a, b = _conv(a, ty), _conv(b, ty)
    if _is_const(a, 1):
        return b
    if _is_const(b, 1):
        return a
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        return _const(ty, a.value * b.value, a.loc)
    return ir.BinOp(a.loc, ty, "*", a, b)


def _add(a: ir.Expr, b: ir.Expr, ty: Ty) -> ir.Expr:
    a, b = _conv(a, ty), _conv(b, ty)
    if _is_const(a, 0):
        return b
    if _is_const(b, 0):
        return a
    return ir.BinOp(a.loc, ty, "+", a, b)


def _product(factors: Factors, ty: Ty, loc: SourceLoc) -> ir.Expr:
    out: ir.Expr = _const(ty, 1, loc)
    for f in factors:
        out = _mul(out, f, ty)
    return out


def _signature(factors: Factors | tuple[ir.Expr, ...]) -> tuple[object, ...]:
    """A location-free key of a product/sum of stable terms (compares weights)."""
    def key(e: ir.Expr) -> object:
        match e:
            case ir.Const(value=v):
                return ("c", v)
            case ir.Var(name=n):
                return ("v", n)
            case ir.Cast(operand=o):
                return ("cast", e.ty.dtype.name, key(o))
            case ir.BinOp(op=op, left=a, right=b):
                return (op, key(a), key(b))
            case ir.UnaryOp(op=op, operand=a):
                return (op, key(a))
        return ("?", id(e))
    return tuple(sorted(repr(key(f)) for f in factors))


# --------------------------------------------------------------------------- the pass
@dataclasses.dataclass
class _Child:
    """A term holding results of calls: a call itself or a local accumulating them."""

    expr: ir.Expr  # ir.Recur or ir.Var
    factors: Factors  # sum mode: the weight (product); max mode: unused


class _Converter:
    def __init__(self, t: ir.TaskDef, rname: str,
                 reducers: dict[str, ir.ReducerDecl] | None = None) -> None:
        assert t.result_ty is not None
        self.t = t
        self.reducers = reducers or {}
        # bounds raised (lowered) with the returned max (min) local: raised with every
        # candidate of the max instead (ids of those statements; (bound, its type))
        self.raise_ids: set[int] = set()
        self.raises: list[tuple[str, Ty]] = []
        self.R: Ty = t.result_ty
        self.rname = rname
        self.assigned = assigned_names((*t.prologue, *t.base, *t.inductive))
        self.rlocals = self._result_locals()
        self.mode = _Mode.SUM
        self.weights: dict[str, tuple[Factors, tuple[object, ...]]] = {}  # W_v (sum mode)
        self.offsets: dict[str, tuple[tuple[ir.Expr, ...], tuple[object, ...]]] = {}
        self.field: ir.Param | None = None
        # sum mode: result locals whose own (call-free) part is always 0 (``total = 0``
        # then ``total += f(...)``): they vanish from the rewritten task
        self.zero: set[str] = set()

    def error(self, message: str, loc: SourceLoc) -> RevecError:
        return RevecError(message, loc)

    def show(self, name: str) -> str:
        """A local's name as the source spells it (a C local's IR name may differ)."""
        return self.t.source_names.get(name, name)

    def check_forms(self, s: ir.Stmt, live: frozenset[str]) -> None:
        """Combinations of results no reduction computes, in the statement ``s`` (where
        the result locals ``live`` may hold results), each a located error naming the
        supported forms: a result as an argument of the task's own call (nested
        recursion), two results multiplied (or divided, ...), a negated result inside
        max/min (negamax)."""
        names = set(live)
        for e in _stmt_exprs(s):
            for x in ir.walk_exprs(e):
                self.check_form(x, names)

    def check_form(self, x: ir.Expr, names: set[str]) -> None:
        name = self.t.name
        if isinstance(x, ir.Recur):
            for a in x.args:
                if self.has_child(a, names):
                    raise self.error(
                        f"a result of '{name}' is an argument of another call of '{name}' "
                        "(nested recursion, as in Ackermann's function, tak or McCarthy's "
                        "91): revec spawns all of a task's calls at once, so no call can "
                        f"wait for another's result ({FORMS})",
                        self.first_child(a, names).loc)
        if isinstance(x, ir.BinOp) and x.op in _PRODUCTS and self.has_child(x.left, names) \
                and self.has_child(x.right, names):
            example = " (as in the Catalan or Motzkin numbers)" if x.op == "*" else ""
            raise self.error(f"{_PRODUCTS[x.op]} of two results of '{name}'{example} cannot "
                             f"be turned into a reduction ({SUPPORTED})", x.loc)
        if isinstance(x, ir.MathCall) and x.func in ("maximum", "minimum"):
            for a in x.args:
                neg = self.negated(a, names)
                if neg is not None:
                    raise self.error(
                        f"a negated result of '{name}' inside {x.func[:3]}(...) (negamax) "
                        "cannot be turned into a reduction: max/min reduce over "
                        "root-to-leaf path sums, and a negation flips the order at every "
                        f"level ({SUPPORTED})", neg.loc)
        if isinstance(x, ir.UnaryOp) and x.op == "-":
            inner = self.strip_casts(x.operand)
            if isinstance(inner, ir.MathCall) and inner.func in ("maximum", "minimum") \
                    and self.has_child(inner, names):
                raise self.error(
                    f"a negated max/min of results of '{name}' (negamax) cannot be "
                    "turned into a reduction: max/min reduce over root-to-leaf path "
                    f"sums, and a negation flips the order at every level ({SUPPORTED})",
                    x.loc)

    def negated(self, e: ir.Expr, names: set[str]) -> ir.Expr | None:
        """The negation (``-f(x)``, ``c - f(x)``) of a result that ``e`` is, if any."""
        e = self.strip_casts(e)
        if isinstance(e, ir.UnaryOp) and e.op == "-" and self.has_child(e.operand, names):
            return e
        if isinstance(e, ir.BinOp) and e.op == "-" and self.has_child(e.right, names):
            return e
        if isinstance(e, ir.BinOp) and e.op == "+":
            return self.negated(e.left, names) or self.negated(e.right, names)
        return None

    # ------------------------------------------------------------------ analysis
    def _result_locals(self) -> set[str]:
        out: set[str] = set()
        changed = True
        while changed:
            changed = False
            for s in self._all_stmts((*self.t.base, *self.t.inductive)):
                if isinstance(s, ir.Assign) and s.target not in out and self.has_child(
                        s.value, out):
                    out.add(s.target)
                    changed = True
        return out

    def _all_stmts(self, stmts: Sequence[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            out.append(s)
            match s:
                case ir.If(then=a, orelse=b):
                    out += self._all_stmts(a) + self._all_stmts(b)
                case ir.For(body=b) | ir.While(body=b):
                    out += self._all_stmts(b)
        return out

    def has_child(self, e: ir.Expr, rlocals: set[str] | None = None) -> bool:
        names = self.rlocals if rlocals is None else rlocals
        return any(isinstance(x, ir.Recur) or (isinstance(x, ir.Var) and x.name in names)
                   for x in ir.walk_exprs(e))

    def first_child(self, e: ir.Expr, rlocals: set[str] | None = None) -> ir.Expr:
        names = self.rlocals if rlocals is None else rlocals
        for x in ir.walk_exprs(e):
            if isinstance(x, ir.Recur) or (isinstance(x, ir.Var) and x.name in names):
                return x
        return e

    def stable(self, e: ir.Expr) -> bool:
        """Computable where a spawn happens: constants and never-assigned parameters."""
        params = {p.name for p in self.t.params}
        for x in ir.walk_exprs(e):
            if isinstance(x, ir.Var) and (x.name not in params or x.name in self.assigned):
                return False
            if isinstance(x, (ir.Call, ir.LibCall, ir.ArrayRef, ir.Recur)):
                return False
        return True

    def check_path_type(self, e: ir.Expr) -> None:
        """A node on a result's path: its type must keep the result exact."""
        ok = (e.ty.kind in "iu" and self.R.kind in "iu"
              and e.ty.dtype.itemsize >= self.R.dtype.itemsize) or (
            e.ty.kind == "f" and self.R.kind == "f"
            and e.ty.dtype.itemsize >= self.R.dtype.itemsize)
        if self.mode != _Mode.SUM and ok and self.R.kind in "iu":
            ok = bool(np.can_cast(self.R.dtype, e.ty.dtype, "safe"))
        if not ok:
            raise self.error(f"'{self.t.name}' returns {self.R}, but this result of its "
                             f"call is converted to {e.ty} here, which would change its "
                             f"value; keep its results in {self.R} (or declare {e.ty} as "
                             f"the result type of '{self.t.name}')", e.loc)

    def shape(self, e: ir.Expr) -> str:
        """'none', 'single', 'sum', 'max' or 'min' (the combination ``e`` is)."""
        if not self.has_child(e):
            return "none"
        addends = self.addends(e)
        with_child = [a for a in addends if self.has_child(a)]
        if len(with_child) > 1:
            return "sum"
        inner = self.strip_casts(with_child[0])
        if isinstance(inner, ir.MathCall) and inner.func in ("maximum", "minimum"):
            return "max" if inner.func == "maximum" else "min"
        if isinstance(inner, (ir.Recur, ir.Var)):
            return "single"
        return "sum"

    def addends(self, e: ir.Expr) -> list[ir.Expr]:
        if isinstance(e, ir.BinOp) and e.op == "+" and self.has_child(e):
            return self.addends(e.left) + self.addends(e.right)
        inner = self.strip_casts(e)
        if isinstance(e, ir.Cast) and self.has_child(e) and isinstance(inner, ir.BinOp) \
                and inner.op == "+":
            return self.addends(inner)
        return [e]

    def strip_casts(self, e: ir.Expr) -> ir.Expr:
        while isinstance(e, ir.Cast):
            e = e.operand
        return e

    def decide_mode(self) -> None:
        found: dict[str, ir.Expr] = {}
        for s in self._all_stmts((*self.t.base, *self.t.inductive)):
            exprs: list[ir.Expr] = []
            if isinstance(s, ir.Return):
                exprs = list(s.values)
            elif isinstance(s, ir.Assign) and s.target in self.rlocals:
                exprs = [s.value]
            for e in exprs:
                k = self.shape(e)
                if k in ("sum", "max", "min"):
                    found.setdefault(k, e)
        if len(found) > 1:
            pos = {k: (e.loc.line, e.loc.col) for k, e in found.items()}
            first, later = sorted(found, key=lambda k: pos[k])[:2]
            raise self.error(f"results of the task's calls are combined by {first} on line "
                             f"{pos[first][0]} and by {later} here; one task combines them "
                             "one way (alternating max and min levels, as in minimax, are "
                             f"not one reduction; {SUPPORTED})",
                             self.first_child(found[later]).loc)
        if "max" in found:
            self.mode = _Mode.MAX
        elif "min" in found:
            self.mode = _Mode.MIN

    def find_raises(self) -> None:
        """``if (best > G) G = best; return best;`` (Cilk-5's knapsack): the bound G
        raised (lowered) with the max (min) the task returns.  Every candidate of that
        max reaches ``best`` here or in an ancestor, so G is raised with each candidate
        where it is found instead (G only ever holds values the program as written gives
        it, earlier)."""
        want = {_Mode.MAX: "max", _Mode.MIN: "min"}.get(self.mode)
        ind = self.t.inductive
        for s in self._all_stmts((*self.t.base, *ind)):
            if not (isinstance(s, ir.Reduce) and self.has_child(s.value)):
                continue
            decl = self.reducers.get(s.reducer)
            if decl is None or not decl.bound or decl.op != want:
                continue  # the use of a result the analysis rejects
            how = "raises" if decl.op == "max" else "lowers"
            inner = self.strip_casts(s.value)
            last = ind[-1] if ind else None
            returned = (self.strip_casts(last.values[0]) if isinstance(last, ir.Return)
                        and last.values else None)
            if not (isinstance(inner, ir.Var) and isinstance(returned, ir.Var)
                    and inner.name == returned.name):
                raise self.error(f"this {how} the bound '{decl.name}' with a value computed "
                                 "from the task's results; revec accepts only the local the "
                                 f"task returns, as in 'if (best > {decl.name}) "
                                 f"{decl.name} = best; return best;'", s.loc)
            if not any(x is s for x in ind) or any(
                    isinstance(x, ir.Return) and x is not last and x.values
                    and self.has_child(x.values[0]) for x in self._all_stmts(ind)):
                raise self.error(f"this {how} the bound '{decl.name}' with '{inner.name}' "
                                 "on some paths only; revec accepts it as a statement of the "
                                 "inductive case (not under an if or in a loop) before its one "
                                 f"'return {inner.name};'", s.loc)
            if not np.can_cast(self.R.dtype, decl.dtype, "safe"):
                raise self.error(f"the bound '{decl.name}' ({decl.dtype}) is {how[:-1]}d "
                                 f"with the task's {self.R} result, which it cannot hold "
                                 "exactly", s.loc)
            self.raise_ids.add(id(s))
            self.raises.append((decl.name, Ty(decl.dtype)))

    # ------------------------------------------------------------------ sums
    def linear(self, e: ir.Expr) -> tuple[list[_Child], list[tuple[ir.Expr, Factors]]]:
        """``e`` as sum(children * weights) + sum(local terms * weights)."""
        if not self.has_child(e):
            return [], [(e, ())]
        self.check_path_type(e)
        match e:
            case ir.Recur() | ir.Var():
                return [_Child(e, ())], []
            case ir.Cast(operand=o):
                return self.linear(o)
            case ir.UnaryOp(op="+", operand=o):
                return self.linear(o)
            case ir.UnaryOp(op="-", operand=o):
                c, loc = self.linear(o)
                return self.scale(c, loc, _const(self.R, -1, e.loc))
            case ir.BinOp(op="+" | "-", left=a, right=b):
                ca, la = self.linear(a)
                cb, lb = self.linear(b)
                if e.op == "-":
                    cb, lb = self.scale(cb, lb, _const(self.R, -1, e.loc))
                return ca + cb, la + lb
            case ir.BinOp(op="*", left=a, right=b):
                if self.has_child(a) and self.has_child(b):
                    raise self.error("a product of two results of the task's calls cannot "
                                     f"be turned into a reduction ({SUPPORTED})", e.loc)
                weight, inner = (a, b) if self.has_child(b) else (b, a)
                c, loc = self.linear(inner)
                return self.scale(c, loc, weight)
            case ir.MathCall(func="maximum" | "minimum"):
                raise self.error("max/min of results mixed with a sum of results cannot be "
                                 f"turned into a reduction ({SUPPORTED})", e.loc)
            case ir.Call() | ir.LibCall() | ir.MathCall():
                raise self.error("a result of the task's own call is passed to a function; "
                                 "revec turns results into reductions only where they are "
                                 f"summed into the returned value ({SUPPORTED})", e.loc)
        raise self.error(f"this use of a result of the task's calls cannot be turned into "
                         f"a reduction ({SUPPORTED})", e.loc)

    @staticmethod
    def scale(children: list[_Child], locs: list[tuple[ir.Expr, Factors]], w: ir.Expr
              ) -> tuple[list[_Child], list[tuple[ir.Expr, Factors]]]:
        return ([_Child(c.expr, (*c.factors, w)) for c in children],
                [(x, (*f, w)) for x, f in locs])

    def local_sum(self, children: list[_Child], locs: list[tuple[ir.Expr, Factors]],
                  ty: Ty, loc: SourceLoc) -> ir.Expr:
        out: ir.Expr = _const(ty, 0, loc)
        for c in children:
            if isinstance(c.expr, ir.Var) and c.expr.name not in self.zero:
                # a local's own (call-free) part
                out = _add(out, _mul(_product(c.factors, ty, loc), c.expr, ty), ty)
        for x, f in locs:
            out = _add(out, _mul(_product(f, ty, loc), x, ty), ty)
        return out

    # ------------------------------------------------------------------ max / min
    def leaves(self, e: ir.Expr) -> list[ir.Expr]:
        func = "maximum" if self.mode == _Mode.MAX else "minimum"
        if self.has_child(e):
            self.check_path_type(e)
        match e:
            case ir.Cast(operand=o) if self.has_child(e):
                return self.leaves(o)
            case ir.MathCall(func=f, args=args) if f == func:
                return [x for a in args for x in self.leaves(a)]
            case ir.MathCall(func="maximum" | "minimum") if self.has_child(e):
                raise self.error("max and min of results mixed in one task cannot be "
                                 f"turned into a reduction ({SUPPORTED})", e.loc)
            case ir.Recur() | ir.Var() if self.has_child(e):
                return [e]
            case ir.BinOp(op="+") if self.call_plus(e) is not None:
                return [e]  # a call plus local terms: max(v + f(a), f(b))
        if self.has_child(e):
            raise self.error("in a task that takes the max/min of its calls' results, a "
                             "result may only be a term of max/min, with a local term added "
                             f"outside ({SUPPORTED})", self.first_child(e).loc)
        return [e]

    def call_plus(self, e: ir.Expr) -> tuple[ir.Recur, list[ir.Expr]] | None:
        """``e`` is one call of the task plus local terms (a term of max/min whose
        call is spawned with those terms added to its path): (the call, the terms)."""
        addends = self.addends(e)
        with_child = [a for a in addends if self.has_child(a)]
        if len(with_child) != 1:
            return None
        call = self.strip_casts(with_child[0])
        if not isinstance(call, ir.Recur):
            return None
        node: ir.Expr = e
        while isinstance(node, (ir.BinOp, ir.Cast)) and node is not with_child[0]:
            self.check_path_type(node)
            node = node.operand if isinstance(node, ir.Cast) else (
                node.left if self.has_child(node.left) else node.right)
        return call, [a for a in addends if not self.has_child(a)]

    def split_offset(self, e: ir.Expr) -> tuple[list[ir.Expr], ir.Expr | None]:
        """(local addends, the one max/min term or child) of a result expression."""
        if not self.has_child(e):
            return [e], None
        addends = self.addends(e)
        with_child = [a for a in addends if self.has_child(a)]
        if len(with_child) != 1:
            raise self.error("max/min of results mixed with a sum of results cannot be "
                             f"turned into a reduction ({SUPPORTED})",
                             self.first_child(with_child[1]).loc)
        if isinstance(e, ir.BinOp) or isinstance(e, ir.Cast):
            node: ir.Expr = e
            while isinstance(node, (ir.BinOp, ir.Cast)) and node is not with_child[0]:
                self.check_path_type(node)
                if isinstance(node, ir.Cast):
                    node = node.operand
                else:
                    node = node.left if self.has_child(node.left) else node.right
        return [a for a in addends if not self.has_child(a)], with_child[0]

    # ------------------------------------------------------------------ liveness
    def analyse(self, stmts: Sequence[ir.Stmt], live: frozenset[str]
                ) -> tuple[frozenset[str], bool]:
        """Forward pass: which result locals may hold results of calls; checks every
        return keeps them with one weight/offset.  Returns (live after, always ends)."""
        for s in stmts:
            self.check_forms(s, live)
            match s:
                case ir.Assign(target=v, value=e) if v in self.rlocals:
                    self.check_assign(v, e, live)
                    if self.mode != _Mode.SUM or self.has_child(e, set()) or any(
                            isinstance(x, ir.Var) and x.name in live
                            for x in ir.walk_exprs(e)):
                        live = live | {v}
                case ir.Return(values=(e,)):
                    self.check_return(e, live)
                    return live, True
                case ir.Reduce() if id(s) in self.raise_ids:
                    pass
                case ir.If(cond=c, then=a, orelse=b):
                    self.no_child(c, "in a condition")
                    la, ra = self.analyse(a, live)
                    lb, rb = self.analyse(b, live)
                    if ra and rb:
                        return live, True
                    live = (frozenset() if ra else la) | (frozenset() if rb else lb)
                case ir.For(body=b) | ir.While(body=b):
                    for e in _stmt_exprs(s):
                        self.no_child(e, "in a loop's bounds or condition")
                    for _ in range(2):
                        lb, _r = self.analyse(b, live)
                        live = live | lb
                case _:
                    for e in _stmt_exprs(s):
                        self.no_child(e, "here")
        return live, False

    def no_child(self, e: ir.Expr, where: str) -> None:
        if self.has_child(e):
            raise self.error(f"a result of the task's own call is used {where}; revec turns "
                             f"results into reductions only where they are combined into the "
                             f"returned value ({SUPPORTED})", self.first_child(e).loc)

    def check_assign(self, v: str, e: ir.Expr, live: frozenset[str]) -> None:
        n = self.show(v)
        others = {x.name for x in ir.walk_exprs(e)
                  if isinstance(x, ir.Var) and x.name in self.rlocals and x.name != v}
        if others:
            other = self.show(sorted(others)[0])
            raise self.error(f"'{n}' is computed from '{other}', another local "
                             "holding results of calls; combine the results in the returned "
                             f"expression instead ({SUPPORTED})", e.loc)
        mentions_self = any(isinstance(x, ir.Var) and x.name == v for x in ir.walk_exprs(e))
        if v in live and not mentions_self:
            raise self.error(f"this assignment overwrites '{n}', which already holds results "
                             "of the task's calls (their spawns cannot be undone); accumulate "
                             f"with '{n} += ...' or use a new local", e.loc)
        if self.mode == _Mode.SUM:
            children, _ = self.linear(e)
            self.once(children)
            for c in children:
                if isinstance(c.expr, ir.Var) and c.factors:
                    raise self.error(f"'{n}' is scaled here after it holds results of calls; "
                                     f"only '{n} = {n} + ...' accumulates ({SUPPORTED})",
                                     e.loc)
        else:
            offsets, term = self.split_offset(e)
            if offsets and term is not None:
                raise self.error(f"add the local term where '{n}' is returned, not where it "
                                 f"accumulates ({SUPPORTED})", offsets[0].loc)
            if term is not None:
                self.leaves(term)

    def once(self, children: list[_Child]) -> None:
        """A local holding results is a term of a sum once (``x + y + x`` would need the
        weights of its terms added)."""
        names = [c.expr for c in children if isinstance(c.expr, ir.Var)]
        for i, x in enumerate(names):
            if any(isinstance(y, ir.Var) and y.name == x.name for y in names[:i]):
                n = self.show(x.name)
                raise self.error(f"'{n}' holds results of the task's calls and is a "
                                 "term of this sum more than once; write the weight "
                                 f"(2 * {n}) ({SUPPORTED})", x.loc)

    def check_return(self, e: ir.Expr, live: frozenset[str]) -> None:
        if self.mode == _Mode.SUM:
            children, _ = self.linear(e)
            self.once(children)
            seen = {c.expr.name: c for c in children if isinstance(c.expr, ir.Var)}
            for v in live:
                n = self.show(v)
                if v not in seen:
                    raise self.error(f"this return drops '{n}', which holds results of the "
                                     "task's calls; return it (e.g. return "
                                     f"{n} + ...)", e.loc)
                c = seen[v]
                if not all(self.stable(f) for f in c.factors):
                    raise self.error(f"the weight of '{n}' here depends on locals; weights "
                                     "of accumulated results must be constants or "
                                     "parameters", e.loc)
                sig = _signature(c.factors)
                old = self.weights.setdefault(v, (c.factors, sig))
                if old[1] != sig:
                    raise self.error(f"'{n}' is returned with different weights; the "
                                     "results it holds need one weight", e.loc)
            return
        offsets, term = self.split_offset(e)
        leaves = [] if term is None else self.leaves(term)
        names = {x.name for x in leaves if isinstance(x, ir.Var) and x.name in self.rlocals}
        for v in live:
            n = self.show(v)
            if v not in names:
                raise self.error(f"this return drops '{n}', which holds results of the "
                                 f"task's calls; return it (e.g. return 1 + {v})", e.loc)
            if not all(self.stable(o) for o in offsets):
                raise self.error(f"the local term added to '{n}' here depends on locals; it "
                                 "must be a constant or parameter expression", e.loc)
            sig = _signature(tuple(offsets))
            old = self.offsets.setdefault(v, (tuple(offsets), sig))
            if old[1] != sig:
                raise self.error(f"'{n}' is returned with different local terms added; "
                                 "the results it holds need one", e.loc)

    # ------------------------------------------------------------------ rewrite
    def convert(self) -> tuple[ir.TaskDef, str]:
        t = self.t
        for section, stmts in (("base", t.base), ("inductive", t.inductive)):
            if not _always_returns(stmts):
                where = stmts[-1].loc if stmts else t.loc
                raise self.error(f"'{t.name}' returns a value, but its {section} case can end "
                                 "without 'return'", where)
        self.decide_mode()
        self.find_raises()
        self.analyse(t.base, frozenset())
        self.analyse(t.inductive, frozenset())
        names = {p.name for p in t.params} | set(t.locals)
        if self.mode == _Mode.SUM:
            need = any(f for f, _ in self.weights.values()) or self.any_weighted(t.inductive)
            if need:
                self.field = ir.Param(ir.fresh_name(f"{t.name}_weight", names), self.R, t.loc,
                                      default=1, has_default=True, hidden=True)
        else:
            need = any(o for o, _ in self.offsets.values()) or self.any_offset(t.inductive)
            if need:
                self.field = ir.Param(ir.fresh_name(f"{t.name}_path", names), self.R, t.loc,
                                      default=0, has_default=True, hidden=True)
        if self.raises and self.field is not None:
            raise self.error(f"the bound '{self.raises[0][0]}' is raised with a result that "
                             "the task returns with a local term added; raise it with the "
                             "value the task returns", t.loc)
        hoisted: dict[str, ir.Assign] = {}
        if self.mode == _Mode.SUM:
            self.zero = {v for v in self.rlocals if self.always_zero(v)}
            hoisted = self.hoistable()
            self.zero |= set(hoisted)
            self.hoisted = hoisted
        base = _drop_tail_returns(self.rewrite(t.base))
        ind = _drop_tail_returns(self.rewrite(t.inductive))
        params = t.params + ((self.field,) if self.field is not None else ())
        op = "sum" if self.mode == _Mode.SUM else self.mode
        new = dataclasses.replace(t, params=params, base=base, inductive=ind,
                                  max_spawns=ir.spawn_bound(ind), result=self.rname)
        return new, op

    def hoistable(self) -> dict[str, ir.Assign]:
        """Result locals whose only own part is their initial value, assigned at the top
        of the inductive case and returned by every later return with its weight (e.g.
        ``total = 1`` before a loop of ``total += f(...)``): that value is reduced where
        it is assigned, and the local vanishes."""
        out: dict[str, ir.Assign] = {}
        ind = self.t.inductive
        for i, st in enumerate(ind):
            if not (isinstance(st, ir.Assign) and st.target in self.rlocals
                    and st.target not in self.zero and not self.has_child(st.value)):
                continue
            v = st.target
            assigns = [x for x in self._all_stmts(ind) if isinstance(x, ir.Assign)
                       and x.target == v]
            if any(x is not st and any(not _is_const(e, 0) for e, _ in self.linear(x.value)[1])
                   for x in assigns):
                continue
            if any(isinstance(x, ir.Assign) and x.target == v for x in ind[:i]):
                continue
            later = [x for x in self._all_stmts(ind[i + 1:]) if isinstance(x, ir.Return)]
            if v not in self.weights or not later:
                continue
            if all(any(isinstance(c.expr, ir.Var) and c.expr.name == v
                       and _signature(c.factors) == self.weights[v][1]
                       for c in self.linear(r.values[0])[0]) for r in later):
                out[v] = st
        return out

    def always_zero(self, v: str) -> bool:
        # (the prologue's value too: ``long x = 1;`` before the is-base test)
        for s in self._all_stmts((*self.t.prologue, *self.t.base, *self.t.inductive)):
            if isinstance(s, ir.Assign) and s.target == v:
                children, locs = self.linear(s.value)
                if any(not _is_const(x, 0) for x, _ in locs):
                    return False
        return True

    def any_weighted(self, stmts: Sequence[ir.Stmt]) -> bool:
        for s in self._all_stmts(stmts):
            exprs = list(s.values) if isinstance(s, ir.Return) else (
                [s.value] if isinstance(s, ir.Assign) and s.target in self.rlocals else [])
            for e in exprs:
                children, _ = self.linear(e)
                if any(c.factors for c in children if isinstance(c.expr, ir.Recur)):
                    return True
        return False

    def any_offset(self, stmts: Sequence[ir.Stmt]) -> bool:
        for s in self._all_stmts(stmts):
            if isinstance(s, ir.Return) and self.has_child(s.values[0]):
                offsets, term = self.split_offset(s.values[0])
                if offsets or (term is not None and self.leaf_terms(term)):
                    return True
            if isinstance(s, ir.Assign) and s.target in self.rlocals and \
                    self.has_child(s.value):
                _, term = self.split_offset(s.value)
                if term is not None and self.leaf_terms(term):
                    return True
        return False

    def leaf_terms(self, term: ir.Expr) -> bool:
        """A term of the max/min adds local terms to a call (max(v + f(a), f(b)))."""
        return any(isinstance(x, ir.BinOp) for x in self.leaves(term))

    def weight(self, loc: SourceLoc) -> ir.Expr:
        return (ir.Var(loc, self.R, self.field.name) if self.field is not None
                else _const(self.R, 1 if self.mode == _Mode.SUM else 0, loc))

    def spawn(self, call: ir.Recur, extra: ir.Expr) -> ir.Spawn:
        args = call.args + ((extra,) if self.field is not None else ())
        return ir.Spawn(call.loc, args)

    def rewrite(self, stmts: Sequence[ir.Stmt]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in stmts:
            match s:
                case ir.Return(values=(e,)):
                    out += self.rewrite_return(e, s.loc)
                case ir.Reduce() if id(s) in self.raise_ids:
                    pass
                case ir.Assign(target=v, value=e) if v in getattr(self, "hoisted", {}) and (
                        self.hoisted[v] is s):
                    W = self.weights[v][0]
                    value = _mul(self.weight(s.loc), _mul(_product(W, self.R, s.loc), e,
                                                          self.R), self.R)
                    out.append(ir.Reduce(s.loc, self.rname, value))
                case ir.Assign(target=v, value=e) if v in self.rlocals:
                    out += self.rewrite_assign(v, e, s)
                case ir.If():
                    out.append(dataclasses.replace(s, then=self.rewrite(s.then),
                                                   orelse=self.rewrite(s.orelse)))
                case ir.For() | ir.While():
                    out.append(dataclasses.replace(s, body=self.rewrite(s.body)))
                case _:
                    out.append(s)
        return tuple(out)

    def rewrite_return(self, e: ir.Expr, loc: SourceLoc) -> list[ir.Stmt]:
        R, w = self.R, self.weight(loc)
        out: list[ir.Stmt] = []
        if self.mode == _Mode.SUM:
            children, locs = self.linear(e)
            local = self.local_sum(children, locs, R, loc)
            if not _is_const(local, 0):
                out.append(ir.Reduce(loc, self.rname, _mul(w, local, R)))
            for c in children:
                if isinstance(c.expr, ir.Recur):
                    out.append(self.spawn(c.expr, _mul(w, _product(c.factors, R, loc), R)))
        else:
            offsets, term = self.split_offset(e)
            off: ir.Expr = w
            for o in offsets if term is not None else []:
                off = _add(off, o, R)
            if term is None:
                out += self.candidate(loc, _add(w, e, R))
            else:
                out += self.emit_leaves(self.leaves(term), off, skip=set(self.rlocals))
        out.append(ir.Return(loc))
        return out

    def emit_leaves(self, leaves: list[ir.Expr], off: ir.Expr, skip: set[str]
                    ) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for x in leaves:
            plus = self.call_plus(x) if isinstance(x, ir.BinOp) else None
            if plus is not None:  # the call's own local terms join its path
                extra = off
                for o in plus[1]:
                    extra = _add(extra, o, self.R)
                out.append(self.spawn(plus[0], extra))
            elif isinstance(x, ir.Recur):
                out.append(self.spawn(x, off))
            elif isinstance(x, ir.Var) and x.name in skip:
                continue
            else:
                out += self.candidate(x.loc, _add(off, x, self.R))
        return out

    def candidate(self, loc: SourceLoc, value: ir.Expr) -> list[ir.Stmt]:
        """A candidate of the max/min into the result's reducer, and into every bound
        the task raises (lowers) with its result."""
        return [ir.Reduce(loc, self.rname, value),
                *(ir.Reduce(loc, b, _conv(value, ty)) for b, ty in self.raises)]

    def rewrite_assign(self, v: str, e: ir.Expr, s: ir.Assign) -> list[ir.Stmt]:
        R, loc = self.R, s.loc
        w = self.weight(loc)
        if self.mode == _Mode.SUM:
            children, locs = self.linear(e)
            W = self.weights.get(v, ((), ()))[0]
            out: list[ir.Stmt] = []
            for c in children:
                if isinstance(c.expr, ir.Recur):
                    weight = _mul(w, _product((*W, *c.factors), R, loc), R)
                    out.append(self.spawn(c.expr, weight))
            if v not in self.zero:
                ty = self.t.locals.get(v, R)
                value = self.local_sum(children, locs, ty, loc)
                if not (isinstance(value, ir.Var) and value.name == v):
                    out.append(ir.Assign(loc, v, value))
            return out
        offsets = self.offsets.get(v, ((), ()))[0]
        off: ir.Expr = w
        for o in offsets:
            off = _add(off, o, R)
        _, term = self.split_offset(e)
        leaves = self.leaves(term if term is not None else e)
        return self.emit_leaves(leaves, off, skip={v})

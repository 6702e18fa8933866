"""A value-range (interval) analysis of a checked task's recursion.

From the root call's values, every parameter's interval is the join of the root value
and the intervals of the arguments every spawn passes, under the inductive case's guard
(the is-base test is false there: ``fib(n)`` spawns ``n - 1`` only where ``n >= 2``),
to a fixpoint: widening to the constants of the task (then to the type's bounds) makes
it finite, a few narrowing rounds tighten it again.  Locals are flow-insensitive (the
join of every value assigned), helpers' parameters the join of their call sites'
arguments; anything else (a helper's result, a child's result, an input array's
element) is its type's whole range.

An operation is evaluated on exact (unbounded) integers; where its exact interval does
not fit its IR type, the value may wrap, so the node is recorded as *wrapping* and its
interval is the type's whole range: the analysis is sound for the program's fixed-width
semantics, and :attr:`Ranges.nodes` says which nodes compute their exact values.

Relations between parameters: for each pair of never-assigned integer parameters ``p``,
``q`` the state also holds the interval of the difference ``p - q`` (a pseudo-variable
named ``"p-q"``, a zone restricted to parameter pairs).  The root gives its first
value; a spawn passing ``x + c1`` and ``y + c2`` (``x``, ``y`` parameters, ``c1``,
``c2`` constants, nothing wrapping) passes ``(x - y) + (c1 - c2)``, any other pair the
difference of the arguments' intervals; guards comparing two such forms cut it
(``k != n`` false: ``n - k != 0``); and each parameter is cut by the others and the
differences (``n >= k + lo(n - k)``).  binomial's ``n`` stays at least ``k >= 0``
this way, which no interval of ``n`` alone shows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from revec import ir

INF = math.inf
Interval = tuple[float, float]  # (lo, hi), integers or +-inf; lo > hi never
TOP: Interval = (-INF, INF)
WIDEN_AFTER = 3  # rounds of plain joins of a body's locals before widening
# rounds of plain joins of the parameters (Kleene iteration from the root: round k
# covers every task k levels deep, so a recursion at most this deep reaches its exact
# fixpoint: nqueens' shifted diagonals, knapsack's weights), then widening rounds
KLEENE = 64
ROUNDS = KLEENE + 80


def type_range(ty: ir.Ty) -> Interval:
    """The values of ``ty`` (floats: unbounded)."""
    dt = ty.dtype
    if dt.kind == "b":
        return (0, 1)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return (int(info.min), int(info.max))
    return TOP


def join(a: Interval | None, b: Interval | None) -> Interval | None:
    if a is None:
        return b
    if b is None:
        return a
    return (min(a[0], b[0]), max(a[1], b[1]))


def within(a: Interval, ty: ir.Ty) -> bool:
    lo, hi = type_range(ty)
    return lo <= a[0] and a[1] <= hi


@dataclass
class Ranges:
    """The analysis' result: each parameter's interval (the task's, and each helper's
    under its name), each node's interval (by ``id``) and whether it may wrap."""

    params: dict[str, Interval]
    helper_params: dict[str, dict[str, Interval]] = field(default_factory=dict)
    nodes: dict[int, tuple[Interval, bool]] = field(default_factory=dict)
    # the interval of ``p - q`` for pairs of integer parameters, by :func:`pair` name
    differences: dict[str, Interval] = field(default_factory=dict)

    def exact(self, e: ir.Expr) -> Interval | None:
        """The interval of ``e``'s exact value, None when it may wrap (or was never
        evaluated)."""
        got = self.nodes.get(id(e))
        if got is None or got[1]:
            return None
        return got[0]


class _Eval:
    """One evaluation of expressions in an environment, recording node intervals."""

    def __init__(self, program: ir.Program, record: dict[int, tuple[Interval, bool]],
                 calls: dict[str, dict[int, Interval]]) -> None:
        self.program = program
        self.record = record
        self.calls = calls  # helper -> argument position -> the join of its arguments

    def note(self, e: ir.Expr, value: Interval) -> Interval:
        """``value`` as ``e``'s type holds it: the type's range where it may wrap."""
        wraps = False
        if e.ty.kind in "iub" and not within(value, e.ty):
            value, wraps = type_range(e.ty), True
        old = self.record.get(id(e))
        if old is not None:
            value = (min(old[0][0], value[0]), max(old[0][1], value[1]))
            wraps = wraps or old[1]
        self.record[id(e)] = (value, wraps)
        return value

    def expr(self, e: ir.Expr, env: dict[str, Interval]) -> Interval:
        return self.note(e, self.exact(e, env))

    def exact(self, e: ir.Expr, env: dict[str, Interval]) -> Interval:
        top = type_range(e.ty)
        match e:
            case ir.Const(value=v):
                if isinstance(v, float) and not math.isfinite(v):
                    return TOP
                return (v, v) if e.ty.kind in "iub" else (float(v), float(v))
            case ir.Var(name=name):
                return env.get(name, top)
            case ir.Cast(operand=o):
                inner = self.expr(o, env)
                if e.ty.kind == "b":
                    return (0, 1)
                if e.ty.kind in "iu" and o.ty.kind == "f":
                    if not (math.isfinite(inner[0]) and math.isfinite(inner[1])):
                        return TOP
                    return (math.trunc(inner[0]), math.trunc(inner[1]))
                return inner if e.ty.kind in "iu" else _as_float(inner)
            case ir.BinOp(op=op, left=a, right=b):
                x, y = self.expr(a, env), self.expr(b, env)
                if e.ty.kind not in "iu":
                    return TOP
                return binop(op, x, y)
            case ir.UnaryOp(op=op, operand=o):
                x = self.expr(o, env)
                if op == "not":
                    return (0, 1)
                if e.ty.kind not in "iu":
                    return TOP
                if op == "-":
                    return (-x[1], -x[0])
                if op == "~":
                    return (-x[1] - 1, -x[0] - 1)
                return x
            case ir.Compare(left=a, right=b) | ir.BoolOp(left=a, right=b):
                self.expr(a, env)
                self.expr(b, env)
                return (0, 1)
            case ir.IfExp(cond=c, then=a, orelse=b):
                self.expr(c, env)
                both = join(self.expr(a, env), self.expr(b, env))
                assert both is not None
                return both if e.ty.kind in "iub" else TOP
            case ir.ArrayRef(array=name, indices=idx):
                for i in idx:
                    self.expr(i, env)
                arr = self.program.arrays.get(name)
                decl = self.program.inputs.get(name)
                if arr is not None and decl is None and arr.size and arr.dtype.kind in "iub":
                    return (int(arr.min()), int(arr.max()))
                return top
            case ir.Pick(index=i, elements=els):
                self.expr(i, env)
                picked: Interval | None = None
                for el in els:
                    picked = join(picked, self.expr(el, env))
                return picked if picked is not None else top
            case ir.MathCall(func=f, args=args):
                vals = [self.expr(a, env) for a in args]
                if e.ty.kind not in "iu":
                    return TOP
                if f in ("maximum", "minimum") and len(vals) == 2:
                    pick = max if f == "maximum" else min
                    return (pick(vals[0][0], vals[1][0]), pick(vals[0][1], vals[1][1]))
                if f == "abs" and vals:
                    lo, hi = vals[0]
                    if lo >= 0:
                        return (lo, hi)
                    if hi <= 0:
                        return (-hi, -lo)
                    return (0, max(-lo, hi))
                return top
            case ir.Call(func=f, args=args):
                sites = self.calls.setdefault(f, {})
                for k, a in enumerate(args):
                    got = join(sites.get(k), self.expr(a, env))
                    assert got is not None
                    sites[k] = got
                return top
            case ir.LibCall(args=args) | ir.Recur(args=args):
                for a in args:
                    self.expr(a, env)
                return top
        for child in _children(e):
            self.expr(child, env)
        return top


def _as_float(x: Interval) -> Interval:
    return (float(x[0]), float(x[1]))


def _children(e: ir.Expr) -> Iterable[ir.Expr]:
    for v in vars(e).values():
        if isinstance(v, ir.Expr):
            yield v
        elif isinstance(v, tuple):
            yield from (x for x in v if isinstance(x, ir.Expr))


def _finite(*xs: float) -> bool:
    return all(math.isfinite(x) for x in xs)


def binop(op: str, x: Interval, y: Interval) -> Interval:
    """The exact interval of ``a op b`` for ``a`` in ``x``, ``b`` in ``y`` (integers)."""
    (a, b), (c, d) = x, y
    if op == "+":
        return (a + c, b + d)
    if op == "-":
        return (a - d, b - c)
    if op == "*":
        if not _finite(a, b, c, d):
            return TOP
        ps = (a * c, a * d, b * c, b * d)
        return (min(ps), max(ps))
    if op == "//":
        if c <= 0 <= d or not _finite(a, b, c, d):
            return TOP
        qs = [int(p) // int(q) for p in (a, b) for q in (c, d)]
        return (min(qs), max(qs))
    if op == "%":
        if c > 0 and math.isfinite(d):
            if a >= 0 and b < c:
                return (a, b)
            return (0, d - 1)
        if d < 0 and math.isfinite(c):
            return (c + 1, 0)
        return TOP
    if op == ">>":
        if c < 0 or not _finite(a, b, c, d) or d > 64:
            return TOP
        rs = [int(p) >> int(q) for p in (a, b) for q in (c, d)]
        return (min(rs), max(rs))
    if op == "<<":
        if c < 0 or d > 64 or not _finite(a, b, c, d):
            return TOP
        rs = [int(p) << int(q) for p in (a, b) for q in (c, d)]
        return (min(rs), max(rs))
    if op == "&":
        if a >= 0 and c >= 0:
            return (0, min(b, d))
        if a >= 0:
            return (0, b)
        if c >= 0:
            return (0, d)
        return TOP
    if op in ("|", "^"):
        if a >= 0 and c >= 0 and _finite(b, d):
            return (0, (1 << int(max(b, d)).bit_length()) - 1)
        return TOP
    return TOP  # ** and anything else: not bounded here


# --------------------------------------------------------------------------- statements
def _assigned(stmts: Sequence[ir.Stmt]) -> set[str]:
    out: set[str] = set()
    for s in ir.walk_nodes(list(stmts)):
        if isinstance(s, ir.Assign):
            out.add(s.target)
        elif isinstance(s, ir.Unpack):
            out.update(s.targets)
        elif isinstance(s, ir.For):
            out.add(s.var)
    return out


class _Body:
    """Flow-insensitive locals of one function body: each local the join of the values
    assigned to it, to a fixpoint (widened to its type's range after a few rounds);
    within straight-line code a local read after its assignment has the value assigned
    (``child_len = board_len`` then ``child_len = child_len + 1``: one more than the
    board's length, not a count growing with the rounds), joined after a branch and
    forgotten where a loop may assign it again."""

    def __init__(self, ev: _Eval, local_tys: dict[str, ir.Ty], free: set[str]) -> None:
        self.ev = ev
        self.free = free  # the parameters no statement assigns (conditions refine them)
        self.dead = False  # in code that never runs (its spawns are not collected)
        self.local_tys = local_tys
        self.locals: dict[str, Interval] = {}
        self.strong: dict[str, Interval] = {}  # the locals' values here, where known
        self.spawns: list[tuple[Interval, ...]] = []  # every spawn's argument intervals
        self.sites: list[ir.Spawn] = []  # the spawn statement of each

    def run(self, parts: Sequence[tuple[Sequence[ir.Stmt], dict[str, Interval] | None]],
            conds: Sequence[tuple[ir.Expr, dict[str, Interval]]] = ()) -> None:
        """The parts (statements, their parameters; None: a part that never runs) to a
        fixpoint of the locals."""
        whole = dict(parts[0][1] or {})
        for rnd in range(ROUNDS):
            before = dict(self.locals)
            self.spawns, self.sites = [], []
            for stmts, params in parts:
                self.strong = {}
                self.branch(stmts, params, dict(whole) if params is None else params)
            for c, params in conds:
                self.ev.expr(c, {**self.locals, **params})
            if self.locals == before:
                return
            if rnd >= WIDEN_AFTER:
                for k, v in self.locals.items():
                    if before.get(k) != v:
                        self.locals[k] = type_range(self.local_tys.get(k, ir.WEAK_INT)) \
                            if k in self.local_tys else TOP

    def set(self, name: str, value: Interval) -> None:
        got = join(self.locals.get(name), value)
        assert got is not None
        self.locals[name] = got

    def branch(self, stmts: Sequence[ir.Stmt], inside: dict[str, Interval] | None,
               params: dict[str, Interval]) -> None:
        """A block where a condition holds (``inside``: the parameters there; None: the
        condition never holds, so its spawns never happen); the parameters it assigns
        join back into ``params``."""
        dead = inside is None
        inside = dict(params if inside is None else inside)
        was, self.dead = self.dead, self.dead or dead
        self.block(stmts, inside)
        self.dead = was
        for k in params:
            if k not in self.free:
                got = join(params[k], inside[k])
                assert got is not None
                params[k] = got

    def block(self, stmts: Sequence[ir.Stmt], params: dict[str, Interval]) -> None:
        for s in stmts:
            self.stmt(s, params)

    def forget(self, stmts: Sequence[ir.Stmt], *more: str) -> None:
        """Drop the known values of the locals ``stmts`` (a loop's body) may assign."""
        for name in (*_assigned(stmts), *more):
            self.strong.pop(name, None)

    def stmt(self, s: ir.Stmt, params: dict[str, Interval]) -> None:
        if isinstance(s, ir.While):  # (its condition is evaluated after the body too)
            self.forget(s.body)
        env = {**self.locals, **self.strong, **params}
        ev = self.ev
        match s:
            case ir.Assign(target=t, value=v):
                val = ev.expr(v, env)
                if t in params:
                    params[t] = join(params[t], val)  # type: ignore[assignment]
                else:
                    self.set(t, val)
                    self.strong[t] = val
            case ir.Unpack(targets=ts, call=c, target_tys=tys):
                ev.expr(c, env)
                for t, ty in zip(ts, tys):
                    self.set(t, type_range(ty))
                    self.strong.pop(t, None)
            case ir.If(cond=c, then=a, orelse=b):
                ev.expr(c, env)
                start = dict(self.strong)
                self.branch(a, refine(c, True, params, self.free), params)
                ends, self.strong = self.strong, dict(start)
                self.branch(b, refine(c, False, params, self.free), params)
                self.strong = {k: (min(v[0], ends[k][0]), max(v[1], ends[k][1]))
                               for k, v in self.strong.items() if k in ends}
            case ir.For(var=var, start=a, stop=b, step=c, body=body):
                x, y, z = ev.expr(a, env), ev.expr(b, env), ev.expr(c, env)
                self.forget(body, var)
                if z[0] > 0:
                    rng = (x[0], max(x[1], y[1] - 1))
                elif z[1] < 0:
                    rng = (min(x[0], y[0] + 1), x[1])
                else:
                    rng = (min(x[0], y[0]), max(x[1], y[1]))
                self.set(var, rng)
                self.block(body, params)
                self.forget(body, var)
            case ir.While(cond=c, body=body):
                ev.expr(c, env)
                self.branch(body, refine(c, True, params, self.free), params)
                self.forget(body)
            case ir.Spawn(args=args):
                got = tuple(ev.expr(a, env) for a in args)
                if not self.dead:
                    self.spawns.append(got)
                    self.sites.append(s)
            case ir.Return(values=vals):
                for v in vals:
                    ev.expr(v, env)
            case ir.ExprStmt(value=v) | ir.Reduce(value=v):
                ev.expr(v, env)
            case ir.Store(indices=idx, value=v):
                for i in idx:
                    ev.expr(i, env)
                ev.expr(v, env)


# --------------------------------------------------------------------------- guards
def refine(cond: ir.Expr, holds: bool, env: dict[str, Interval],
           names: set[str]) -> dict[str, Interval] | None:
    """``env`` where ``cond`` is ``holds``: the intervals of the parameters ``names``
    compared with something bounded are cut (``n < 2`` false: ``n >= 2``); None where
    ``cond`` cannot be ``holds`` (that code never runs)."""
    match cond:
        case ir.UnaryOp(op="not", operand=o):
            return refine(o, not holds, env, names)
        case ir.Cast(operand=o) if o.ty.kind == "b":
            return refine(o, holds, env, names)
        case ir.BoolOp(op=op, left=a, right=b):
            if (op == "and") == holds:  # both hold / both fail
                first = refine(a, holds, env, names)
                return None if first is None else refine(b, holds, first, names)
            one, two = refine(a, holds, env, names), refine(b, holds, env, names)
            if one is None or two is None:
                return two if one is None else one
            return {k: _join2(one.get(k), two.get(k), env[k]) for k in env}
        case ir.Compare(op=op, left=a, right=b):
            if not holds:
                op = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=",
                      "!=": "=="}[op]
            out = dict(env)
            sides: list[tuple[str | None, ir.Expr, str]] = [
                (_param(a, names, env), b, op), (_param(b, names, env), a, _flip(op))]
            for var, other, rel in sides:
                if var is None:
                    continue
                bound = _bound_of(other, env)
                if bound is None:
                    continue
                cut = _cut(out[var], rel, bound)
                if cut is None:
                    return None
                out[var] = cut
            related = _relation(a, b, op, names, out)
            if related is not None:
                key, cut_op, by = related
                cut = _cut(out[key], cut_op, (by, by))
                if cut is None:
                    return None
                out[key] = cut
            return out
    return env


def pair(p: str, q: str) -> str:
    """The pseudo-variable holding ``p - q`` (not an identifier: no clash)."""
    return f"{p}-{q}"


def _relation(a: ir.Expr, b: ir.Expr, op: str, names: set[str],
              env: dict[str, Interval]) -> tuple[str, str, int] | None:
    """``a op b`` as ``x - y op c``, ``"x-y"`` a difference in ``env``: (its name, the
    relation, ``c``); None when the sides are not two parameters plus constants."""
    one, two = _offset(a, names, env), _offset(b, names, env)
    if one is None or two is None or one[0] == two[0]:
        return None
    (x, c1), (y, c2) = one, two
    if pair(x, y) in env:  # x + c1 op y + c2  <=>  x - y op c2 - c1
        return pair(x, y), op, c2 - c1
    if pair(y, x) in env:  # <=>  y - x flip(op) c1 - c2
        return pair(y, x), _flip(op), c1 - c2
    return None


def _offset(e: ir.Expr, names: set[str], env: dict[str, Interval]
            ) -> tuple[str, int] | None:
    """``(x, c)`` where ``e`` computes ``x + c`` exactly (``x`` one of the parameters
    ``names``, ``c`` a constant; every integer cast and the addition hold every value
    of ``x + c`` for ``x`` in its interval in ``env``); None otherwise."""
    tys: list[ir.Ty] = []
    while isinstance(e, ir.Cast) and e.ty.kind in "iu" and e.operand.ty.kind in "iu":
        tys.append(e.ty)
        e = e.operand
    c = 0
    if isinstance(e, ir.BinOp) and e.op in ("+", "-") and e.ty.kind in "iu":
        tys.append(e.ty)
        (a, a_tys), (b, b_tys) = _uncast(e.left), _uncast(e.right)
        if e.op == "+" and isinstance(a, ir.Const) and isinstance(b, ir.Var):
            (a, a_tys), (b, b_tys) = (b, b_tys), (a, a_tys)
        if not (isinstance(a, ir.Var) and isinstance(b, ir.Const)
                and b.ty.kind in "iu" and not isinstance(b.value, bool | float)
                and all(within((b.value, b.value), ty) for ty in b_tys)):
            return None
        tys.extend(a_tys)
        c = int(b.value) if e.op == "+" else -int(b.value)
        e = a
    if not isinstance(e, ir.Var) or e.name not in names or e.name not in env \
            or e.ty.kind not in "iu":
        return None
    if not _all_hold([e.ty, *tys], env[e.name], c):
        return None
    return e.name, c


def _uncast(e: ir.Expr) -> tuple[ir.Expr, list[ir.Ty]]:
    """``e`` under its integer-to-integer casts, and their types."""
    tys: list[ir.Ty] = []
    while isinstance(e, ir.Cast) and e.ty.kind in "iu" and e.operand.ty.kind in "iu":
        tys.append(e.ty)
        e = e.operand
    return e, tys


def _all_hold(tys: list[ir.Ty], x: Interval, c: int) -> bool:
    """Every type on the way holds both x's values and x + c's (conservative: each
    cast sees one of the two, so both must fit)."""
    return all(within(x, ty) and within((x[0] + c, x[1] + c), ty) for ty in tys)


def _join2(a: Interval | None, b: Interval | None, default: Interval) -> Interval:
    got = join(a, b)
    return got if got is not None else default


def _flip(op: str) -> str:
    return {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]


def _param(e: ir.Expr, names: set[str], env: dict[str, Interval]) -> str | None:
    """The parameter ``e`` reads (through casts that keep its value)."""
    while isinstance(e, ir.Cast) and e.ty.kind in "iu" and e.operand.ty.kind in "iu":
        inner = e.operand
        if isinstance(inner, ir.Var) and inner.name in env and not within(env[inner.name],
                                                                           e.ty):
            return None
        e = inner
    return e.name if isinstance(e, ir.Var) and e.name in names else None


def _bound_of(e: ir.Expr, env: dict[str, Interval]) -> Interval | None:
    """The interval of a side-effect-free integer expression, or None."""
    if e.ty.kind not in "iu":
        return None
    scratch: dict[int, tuple[Interval, bool]] = {}
    ev = _Eval(ir.Program("", "", {}, {}, {}), scratch, {})
    if not ir.speculable(e):
        return None
    got = ev.expr(e, env)
    if any(w for _, w in scratch.values()):
        return None
    return got


def _cut(x: Interval, op: str, b: Interval) -> Interval | None:
    lo, hi = x
    if op == "<":
        hi = min(hi, b[1] - 1)
    elif op == "<=":
        hi = min(hi, b[1])
    elif op == ">":
        lo = max(lo, b[0] + 1)
    elif op == ">=":
        lo = max(lo, b[0])
    elif op == "==":
        lo, hi = max(lo, b[0]), min(hi, b[1])
    elif op == "!=" and b[0] == b[1]:
        if lo == b[0]:
            lo += 1
        if hi == b[0]:
            hi -= 1
    if lo > hi:
        return None
    return (lo, hi)


# --------------------------------------------------------------------------- the task
def _thresholds(t: ir.TaskDef, roots: dict[str, Interval]) -> list[float]:
    """The values a growing bound is widened to, in order: the task's integer constants
    (and one either side), the root values, then the integer types' bounds."""
    vals: set[float] = set()
    for node in ir.walk_nodes([t.is_base, t.base, t.inductive, t.prologue]):
        if isinstance(node, ir.Const) and node.ty.kind in "iu":
            v = int(node.value)
            vals.update((v - 1, v, v + 1))
    for lo, hi in roots.values():
        vals.update(v for v in (lo, hi) if math.isfinite(v))
    for t_ in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
               np.uint64):
        info = np.iinfo(t_)
        vals.update((int(info.min), int(info.max)))
    return sorted(vals)


def _widen(old: Interval, new: Interval, marks: list[float]) -> Interval:
    lo, hi = new
    if hi > old[1]:
        hi = next((m for m in marks if m >= hi), INF)
    if lo < old[0]:
        lo = next((m for m in reversed(marks) if m <= lo), -INF)
    return (lo, hi)


def analyse(program: ir.Program, task: str, roots: dict[str, Interval],
            arrays: dict[str, np.ndarray] | None = None) -> Ranges:
    """The intervals of ``task``'s parameters over every task of a run whose root has
    the values ``roots`` (parameter -> interval; a missing one: its type's range) and
    the read-only input arrays ``arrays`` (by program array name; a missing one: its
    elements' type's range)."""
    if arrays:
        program = dataclasses.replace(program, arrays={**program.arrays, **arrays},
                                      inputs={k: v for k, v in program.inputs.items()
                                              if k not in arrays})
    t = program.tasks[task]
    start = {p.name: roots.get(p.name, type_range(p.ty)) for p in t.params}
    assigned = _assigned((*t.prologue, *t.base, *t.inductive))
    free = {p.name for p in t.params if p.name not in assigned}
    marks = _thresholds(t, start)
    ints = [p.name for p in t.params if p.name in free and p.ty.kind in "iu"]
    compared = _compared(t)
    pairs = [(p, q) for i, p in enumerate(ints) for q in ints[i + 1:]
             if frozenset((p, q)) in compared][:MAX_PAIRS]
    for p, q in pairs:
        start[pair(p, q)] = binop("-", start[p], start[q])
    keys = [*(p.name for p in t.params), *(pair(p, q) for p, q in pairs)]

    def step(current: dict[str, Interval]) -> dict[str, Interval]:
        """The root's values joined with every spawn's arguments (and differences)."""
        out = dict(start)
        for args in _spawned(program, t, current, free, {}, {}, pairs):
            for k, name in enumerate(keys):
                got = join(out[name], args[k])
                assert got is not None
                out[name] = got
        return out

    def holds(new: dict[str, Interval], current: dict[str, Interval]) -> bool:
        return all(current[k][0] <= v[0] and v[1] <= current[k][1] for k, v in new.items())

    current = dict(start)
    for rnd in range(ROUNDS):
        new = step(current)
        if holds(new, current):  # a post-fixpoint: every task's parameters are inside
            break
        if rnd >= KLEENE:
            new = {k: _widen(current[k], v, marks) for k, v in new.items()}
        current = {k: join(current[k], v) or v for k, v in new.items()}
    else:
        current = {p.name: type_range(p.ty) for p in t.params}
        current.update({pair(p, q): TOP for p, q in pairs})
    # narrowing: a few descending rounds, each kept only while it stays a post-fixpoint
    for _ in range(4):
        new = step(current)
        tighter = {k: (max(v[0], current[k][0]), min(v[1], current[k][1]))
                   for k, v in new.items()}
        if tighter == current or not holds(step(tighter), tighter):
            break
        current = tighter
    # a recursion at most D levels deep (a counter parameter every spawn moves one
    # way, bounded where the task spawns): D rounds from the root cover every task,
    # which bounds what grows with the depth (knapsack's weights, nqueens' diagonals)
    depth = _depth_bound(t, current, start, free)
    if depth is not None:
        levels = dict(start)
        for _ in range(depth):
            new = step(levels)
            levels = {k: join(levels[k], v) or v for k, v in new.items()}
        current = {k: (max(v[0], levels[k][0]), min(v[1], levels[k][1]))
                   for k, v in current.items()}
    # each parameter cut by the differences (binomial: n >= k + lo(n - k))
    current = _tighten(current, pairs) or current
    # the final evaluation, recording every node (the task's and its helpers')
    record: dict[int, tuple[Interval, bool]] = {}
    calls: dict[str, dict[int, Interval]] = {}
    _spawned(program, t, current, free, record, calls, pairs)
    diffs = {pair(p, q) for p, q in pairs}
    out = Ranges({k: v for k, v in current.items() if k not in diffs}, nodes=record,
                 differences={k: v for k, v in current.items() if k in diffs})
    _helpers(program, calls, out)
    return out


MAX_DEPTH = 4096  # the deepest recursion bounded by its counter that is iterated


def _depth_bound(t: ir.TaskDef, params: dict[str, Interval], start: dict[str, Interval],
                 free: set[str]) -> int | None:
    """How deep the recursion goes at most, by a counter: a never-assigned parameter
    that every spawn passes as ``c + d`` (or every spawn as ``c - d``), ``d`` a
    constant >= 1, starting at one root value, where the inductive case (the only one
    that spawns) holds it in a bounded interval; None when no parameter shows it."""
    spawns = [s for s in ir.walk_nodes(list(t.inductive)) if isinstance(s, ir.Spawn)]
    if not spawns:
        return 0
    inductive = refine(t.is_base, False, dict(params), free)
    if inductive is None:
        return 0
    best: int | None = None
    for k, p in enumerate(t.params):
        root = start.get(p.name)
        if p.name not in free or root is None or root[0] != root[1]:
            continue
        steps = [_step(s.args[k], p.name) for s in spawns]
        lo, hi = inductive[p.name]
        if any(x is None or not all(within((lo + x[0], hi + x[0]), ty)
                                    for ty in (*x[1], p.ty)) for x in steps):
            continue  # (a step that could wrap around would not move one way)
        ups = [x[0] for x in steps if x is not None]
        if all(x >= 1 for x in ups) and math.isfinite(hi):
            bound = (hi - root[0]) // min(ups) + 1
        elif all(x <= -1 for x in ups) and math.isfinite(lo):
            bound = (root[0] - lo) // -max(ups) + 1
        else:
            continue
        bound = max(int(bound), 0)
        best = bound if best is None else min(best, bound)
    return best if best is not None and best <= MAX_DEPTH else None


def _step(e: ir.Expr, name: str) -> tuple[int, list[ir.Ty]] | None:
    """``d`` where ``e`` is ``name + d`` or ``name - d`` (``d`` a constant), through
    integer casts, and the types it is computed and converted in; None otherwise."""
    tys = []
    while isinstance(e, ir.Cast) and e.ty.kind in "iu" and e.operand.ty.kind in "iu":
        tys.append(e.ty)
        e = e.operand
    if not isinstance(e, ir.BinOp) or e.op not in "+-":
        return None
    a, b = e.left, e.right
    while isinstance(a, ir.Cast) and a.operand.ty.kind in "iu":
        a = a.operand
    while isinstance(b, ir.Cast) and b.operand.ty.kind in "iu":
        b = b.operand
    tys.append(e.ty)
    if isinstance(a, ir.Var) and a.name == name and isinstance(b, ir.Const):
        return (int(b.value) if e.op == "+" else -int(b.value)), tys
    if e.op == "+" and isinstance(b, ir.Var) and b.name == name and isinstance(a, ir.Const):
        return int(a.value), tys
    return None


def _spawned(program: ir.Program, t: ir.TaskDef, params: dict[str, Interval],
             free: set[str], record: dict[int, tuple[Interval, bool]],
             calls: dict[str, dict[int, Interval]],
             pairs: Sequence[tuple[str, str]] = ()) -> list[tuple[Interval, ...]]:
    """The intervals of every spawn's arguments where the parameters (and the
    differences ``pairs``) are ``params``, followed by the intervals of the differences
    of its arguments for ``pairs``."""
    ev = _Eval(program, record, calls)
    body = _Body(ev, t.locals, free)
    diffs = {pair(p, q) for p, q in pairs}
    env = _tighten(dict(params), pairs)
    if env is None:  # no task has these values
        return []
    inductive = refine(t.is_base, False, dict(env), free)
    if inductive is not None:
        inductive = _tighten(inductive, pairs)
    plain = {k: v for k, v in env.items() if k not in diffs}
    body.run([(t.prologue, dict(plain)), (t.base, dict(plain)),
              (t.inductive, None if inductive is None else
               {k: v for k, v in inductive.items() if k not in diffs})],
             [(t.is_base, dict(plain))])
    if not pairs:
        return body.spawns
    index = {p.name: k for k, p in enumerate(t.params)}
    in_inductive = {id(s) for s in ir.walk_nodes(list(t.inductive))
                    if isinstance(s, ir.Spawn)}
    out: list[tuple[Interval, ...]] = []
    for args, site in zip(body.spawns, body.sites):
        # the parameters are never assigned: at the spawn they are the task's, in
        # the inductive case's intervals (inner conditions only narrow them)
        at = inductive if id(site) in in_inductive and inductive is not None else env
        got: list[Interval] = []
        for p, q in pairs:
            i, j = index[p], index[q]
            d = binop("-", args[i], args[j])
            rel = _spawn_difference(site.args[i], site.args[j], t.params[i].ty,
                                    t.params[j].ty, at, free)
            if rel is not None:
                d = (max(d[0], rel[0]), min(d[1], rel[1]))
            got.append(d)
        if all(lo <= hi for lo, hi in got):  # (else this spawn never happens)
            out.append((*args, *got))
    return out


MAX_PAIRS = 66  # the differences tracked at most (12 integer parameters' pairs)


def _compared(t: ir.TaskDef) -> set[frozenset[str]]:
    """The pairs of parameters some condition of the task compares (each side one of
    them, plus or minus a constant): only their differences can be cut by a guard, so
    only they are tracked (keeping the analysis' cost small)."""
    names = {p.name for p in t.params}
    out: set[frozenset[str]] = set()
    for node in ir.walk_nodes([t.is_base, t.base, t.inductive, t.prologue]):
        if isinstance(node, ir.Compare):
            a, b = _named(node.left), _named(node.right)
            if a in names and b in names and a != b:
                out.add(frozenset((a, b)))
    return out


def _named(e: ir.Expr) -> str | None:
    """The variable ``e`` adds a constant to (syntactically), or None."""
    e = _uncast(e)[0]
    if isinstance(e, ir.BinOp) and e.op in ("+", "-"):
        a, b = _uncast(e.left)[0], _uncast(e.right)[0]
        e = b if isinstance(a, ir.Const) and e.op == "+" else a
        if not isinstance(a if e is b else b, ir.Const):
            return None
    return e.name if isinstance(e, ir.Var) else None


def _spawn_difference(a: ir.Expr, b: ir.Expr, ta: ir.Ty, tb: ir.Ty,
                      env: dict[str, Interval], free: set[str]) -> Interval | None:
    """The interval of ``a - b`` (two spawn arguments, passed as ``ta`` and ``tb``)
    where both are a parameter plus a constant, by the parameters' difference in
    ``env``; None otherwise."""
    one, two = _offset(a, free, env), _offset(b, free, env)
    if one is None or two is None:
        return None
    (x, c1), (y, c2) = one, two
    if not (within((env[x][0] + c1, env[x][1] + c1), ta)
            and within((env[y][0] + c2, env[y][1] + c2), tb)):
        return None  # passing it may wrap
    c = c1 - c2
    if x == y:
        return (c, c)
    if pair(x, y) in env:
        lo, hi = env[pair(x, y)]
        return (lo + c, hi + c)
    if pair(y, x) in env:
        lo, hi = env[pair(y, x)]
        return (-hi + c, -lo + c)
    return None


def _tighten(env: dict[str, Interval], pairs: Sequence[tuple[str, str]]
             ) -> dict[str, Interval] | None:
    """``env`` with each parameter cut by the others and the differences, and each
    difference by its parameters (two passes); None where they contradict."""
    out = dict(env)
    for _ in range(2 if pairs else 0):
        for p, q in pairs:
            key = pair(p, q)
            (plo, phi), (qlo, qhi), (dlo, dhi) = out[p], out[q], out[key]
            plo, phi = max(plo, dlo + qlo), min(phi, dhi + qhi)   # p = d + q
            qlo, qhi = max(qlo, plo - dhi), min(qhi, phi - dlo)   # q = p - d
            dlo, dhi = max(dlo, plo - qhi), min(dhi, phi - qlo)   # d = p - q
            if plo > phi or qlo > qhi or dlo > dhi:
                return None
            out[p], out[q], out[key] = (plo, phi), (qlo, qhi), (dlo, dhi)
    return out


def _helpers(program: ir.Program, calls: dict[str, dict[int, Interval]], out: Ranges
             ) -> None:
    """Each called helper's body, its parameters the join of its call sites' arguments
    (callers before callees: the program lists callees first)."""
    for name in reversed(list(program.helpers)):
        sites = calls.get(name)
        if sites is None:
            continue
        h = program.helpers[name]
        params = {p.name: sites.get(k, type_range(p.ty)) for k, p in enumerate(h.params)}
        out.helper_params[name] = params
        ev = _Eval(program, out.nodes, calls)
        body = _Body(ev, h.locals, {p.name for p in h.params} - _assigned(h.body))
        body.run([(h.body, dict(params))])


def narrow_candidates(x: Interval, unsigned: bool = False) -> list[np.dtype[Any]]:
    """The integer types narrower than 64 bits that hold ``x``, narrowest first, one
    per width: the signed type where it holds ``x``, else the unsigned one (``x``
    non-negative: [0, 65535] gives uint16, then int32); with ``unsigned``, both where
    both hold it, the unsigned one first.  Never uint64: it has no NumPy type in common
    with int64."""
    out: list[np.dtype[Any]] = []
    for signed, unsig in ((np.int8, np.uint8), (np.int16, np.uint16),
                          (np.int32, np.uint32)):
        for t in ((unsig, signed) if unsigned else (signed, unsig)):
            info = np.iinfo(t)
            if info.min <= x[0] and x[1] <= info.max:
                out.append(np.dtype(t))
                if not unsigned:
                    break
    return out


def describe(x: Any) -> str:  # pragma: no cover - debugging aid
    return f"[{x[0]}, {x[1]}]"


# --------------------------------------------------------------------------- demanded bits
ALL_BITS = 64


def demanded(program: ir.Program, task: str, ranges: Ranges) -> dict[str, int]:
    """How many low bits of each integer parameter of ``task`` its uses depend on (64:
    all), to a fixpoint over the recursion (a spawn's argument is used as the child's
    parameter is).  A use keeps a demand of ``k`` bits through ``+ - * & | ^ ~``,
    unary ``-``, the left side of ``<<`` and the branches of a conditional (their low
    ``k`` bits depend only on their operands' low ``k`` bits), is cut to ``w`` bits by
    an integer cast to ``w`` bits, and to ``m`` bits where the value (by ``ranges``)
    lies in an interval of ``2**m`` integers (``x & mask``: ``m`` the mask's bits);
    anything else (a comparison, a division, a right shift, an index, a call's
    argument, a returned or reduced value) demands every bit.  A guide for the types
    :mod:`revec.frontend.python.roots` tries, which checks every one it keeps."""
    t = program.tasks[task]
    names = [p.name for p in t.params]
    ints = {p.name for p in t.params if p.ty.kind in "iu"}
    out = dict.fromkeys(ints, 0)

    def use(e: ir.Expr, k: int) -> None:
        if e.ty.kind in "iu":
            got = ranges.nodes.get(id(e))
            if got is not None and _finite(*got[0]):
                k = min(k, max(int(got[0][1] - got[0][0]).bit_length(), 1))
        match e:
            case ir.Var(name=name):
                if name in out:
                    out[name] = max(out[name], k)
            case ir.Cast(operand=o) if e.ty.kind in "iu" and o.ty.kind in "iu":
                use(o, min(k, e.ty.dtype.itemsize * 8))
            case ir.BinOp(op=op, left=a, right=b) if e.ty.kind in "iu" and op in (
                    "+", "-", "*", "&", "|", "^"):
                use(a, k)
                use(b, k)
            case ir.BinOp(op="<<", left=a, right=b) if e.ty.kind in "iu":
                use(a, k)
                use(b, ALL_BITS)
            case ir.UnaryOp(op="~" | "-" | "+", operand=o) if e.ty.kind in "iu":
                use(o, k)
            case ir.IfExp(cond=c, then=a, orelse=b):
                use(c, ALL_BITS)
                use(a, k)
                use(b, k)
            case _:
                for child in _children(e):
                    use(child, ALL_BITS)

    def stmts(xs: Iterable[Any]) -> None:
        for s in xs:
            if isinstance(s, ir.Spawn) and len(s.args) == len(names):
                for name, a in zip(names, s.args):
                    use(a, out.get(name, ALL_BITS))
                continue
            for f in dataclasses.fields(s):
                v = getattr(s, f.name)
                if isinstance(v, ir.Expr):
                    use(v, ALL_BITS)
                elif isinstance(v, tuple):
                    for x in v:
                        if isinstance(x, ir.Expr):
                            use(x, ALL_BITS)
                        elif isinstance(x, ir.Stmt):
                            stmts([x])

    for _ in range(ALL_BITS + 1):  # (each round only raises a demand)
        before = dict(out)
        use(t.is_base, ALL_BITS)
        stmts((*t.prologue, *t.base, *t.inductive))
        if out == before:
            break
    else:
        out = dict.fromkeys(ints, ALL_BITS)
    for name in names:  # (a parameter a statement assigns: every bit)
        if name in out and name in _assigned((*t.prologue, *t.base, *t.inductive)):
            out[name] = ALL_BITS
    return out


def bitwise(t: ir.TaskDef) -> set[str]:
    """The parameters an operand of ``& | ^ ~`` or the left side of ``<<`` reads
    (through casts): unsigned types suit them (nqueens' ``cols | d1 | d2``: all uint16,
    one type, as the annotated program)."""
    out: set[str] = set()
    for node in ir.walk_nodes([t.is_base, t.base, t.inductive, t.prologue]):
        sides: tuple[ir.Expr, ...] = ()
        if isinstance(node, ir.BinOp) and node.op in ("&", "|", "^"):
            sides = (node.left, node.right)
        elif isinstance(node, ir.BinOp) and node.op == "<<":
            sides = (node.left,)
        elif isinstance(node, ir.UnaryOp) and node.op == "~":
            sides = (node.operand,)
        for e in sides:
            e = _uncast(e)[0]
            if isinstance(e, ir.Var):
                out.add(e.name)
    return out

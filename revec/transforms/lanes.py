"""If-conversion: statements run by 32 threads (lanes) in lock step as straight-line code.

Spawns under conditions give each thread its own spawn indices: a thread's k-th spawn
goes to child block k, whatever site made it.  A kernel can run such an inductive case
(or the prefix or body of a lock-step spawn loop) for 32 threads at a time without a
branch: every ``if`` becomes a pair of lane conditions, an assignment under a condition
keeps the lane's old value where the condition fails, a spawn site records per lane
whether it spawned, its spawn index and its arguments, and a reduction counts only
where its condition holds.  This module makes that rewrite once, as data
(:class:`LaneBody`); every back end prints it (``revec/backends/c_lanes.py``,
``revec/backends/numba_lanes.py``) and none converts statements itself.

Before (one thread)::

    if c:
        x = e
        spawn(f, x)
    spawn(f, y)

After (each lane; ``_c0``/``_c1`` lane conditions, site ``s`` records ``m_s``, ``k_s``
and its arguments ``a_s``)::

    _k = 0
    _c0 = c;  _c1 = not c
    x = e if _c0 else x
    m_0 = _c0;  k_0 = _k;  a_0 = (x,);  _k += m_0
    m_1 = 1;    k_1 = _k;  a_1 = (y,);  _k += m_1

Everything evaluated under a condition is evaluated in every lane, so it must be
speculable (no memory reads, no calls): the kernel plan converts only statements
:func:`if_convertible` accepts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from revec import ir
from revec.errors import SourceLoc
from revec.ir import speculable


def if_convertible(stmts: tuple[ir.Stmt, ...], top: bool = True) -> bool:
    """Straight-line statements and ``if``s only (no loops, returns, unpacks under a
    condition); everything evaluated under a condition speculable: such statements can
    run for 32 lanes in lock step, every ``if`` turned into a lane mask."""
    for s in stmts:
        match s:
            case ir.Assign(value=v):
                if not top and not speculable(v):
                    return False
            case ir.Spawn(args=args):
                if not top and not all(speculable(a) for a in args):
                    return False
            case ir.Reduce(value=v):
                if not top and not speculable(v):
                    return False
            case ir.If(cond=c, then=a, orelse=b):
                if not top and not speculable(c):
                    return False
                if not (if_convertible(a, False) and if_convertible(b, False)):
                    return False
            case ir.Unpack() | ir.ExprStmt():
                if not top:
                    return False
            case ir.Store():
                # a store to an output stays in thread-by-thread code: lane code would
                # need masked scatters (and every back end's lane printers)
                return False
            case _:
                return False
    return True


@dataclass(frozen=True)
class SpawnSite:
    """One spawn statement of lane code: the spawn indices a lane can have there."""

    index: int
    kset: frozenset[int]
    conditional: bool


# ---------------------------------------------------------------- lane operations
@dataclass(frozen=True)
class Cond:
    """Lane condition ``index``: ``cond`` (``not cond`` when ``negate``), and-ed with
    lane condition ``guard`` (None: every lane).  An ``if`` makes two, numbered n and
    n + 1: its then and its else branch."""

    index: int
    cond: ir.Expr
    guard: int | None
    negate: bool
    loc: SourceLoc | None = None  # the ``if``'s position in the user's source


@dataclass(frozen=True)
class SetVar:
    """``target = value`` where lane condition ``guard`` holds (None: every lane); the
    other lanes keep their old value (a select)."""

    target: str
    value: ir.Expr
    guard: int | None
    loc: SourceLoc | None = None


@dataclass(frozen=True)
class MakeSpawn:
    """A spawn site: the lane makes it where ``guard`` holds, as its spawn number ``_k``
    (then one more), with ``args`` (the varying columns' arguments, in column order).
    ``leaf`` (leaf inlining, :class:`LeafInline`): the lane condition under which the
    child is a base case that ran in the lane (its spawn number is used all the same;
    the child is counted, not written)."""

    site: SpawnSite
    guard: int | None
    args: tuple[tuple[str, ir.Expr], ...]
    loc: SourceLoc | None = None
    leaf: int | None = None


@dataclass(frozen=True)
class LeafInline:
    """Leaf inlining at every spawn site: the child's is-base test on the child's
    arguments, and where it holds the child's base case, run in the parent's lane.
    The child's parameters become the lane variables ``temps`` (parameter -> local;
    the invariant ones are the parent's own), the base case's own locals the fresh
    ``locals`` (local -> local), so nothing of the parent's lane is overwritten."""

    params: tuple[ir.Param, ...]  # the task's parameters in order
    is_base: ir.Expr
    base: tuple[ir.Stmt, ...]  # without a final return
    temps: dict[str, str]
    locals: dict[str, str]


@dataclass(frozen=True)
class Fold:
    """``reduce`` where lane condition ``guard`` holds."""

    stmt: ir.Reduce
    guard: int | None

    @property
    def loc(self) -> SourceLoc:
        return self.stmt.loc


@dataclass(frozen=True)
class Plain:
    """A top-level statement every lane runs as it is (an unpack of a helper's or
    library function's results, an expression statement)."""

    stmt: ir.Stmt

    @property
    def loc(self) -> SourceLoc:
        return self.stmt.loc


LaneOp = Cond | SetVar | MakeSpawn | Fold | Plain


@dataclass(frozen=True)
class LaneBody:
    """Statements if-converted for lanes in lock step: the operations in order and the
    spawn sites among them (each with the spawn indices a lane can have there)."""

    ops: tuple[LaneOp, ...]
    sites: tuple[SpawnSite, ...]

    def render(self) -> str:
        """A readable one-line-per-operation form (``revec transform --plan``)."""
        from revec.transforms.show import expr as show

        def g(guard: int | None) -> str:
            return "" if guard is None else f" if _c{guard}"

        out = []
        for op in self.ops:
            match op:
                case Cond(index=i, cond=c, guard=gd, negate=neg):
                    here = "" if gd is None else f"_c{gd} and "
                    out.append(f"_c{i} = {here}{'not ' if neg else ''}({show(c)})")
                case SetVar(target=t, value=v, guard=gd):
                    out.append(f"{t} = {show(v)}{g(gd)}")
                case MakeSpawn(site=s, guard=gd, args=args, leaf=lf):
                    a = ", ".join(f"{c}={show(e)}" for c, e in args)
                    inl = "" if lf is None else f", a leaf (inlined, counted) if _c{lf}"
                    out.append(f"spawn site {s.index} (k in {sorted(s.kset)}): ({a})"
                               f"{g(gd)}{inl}")
                case Fold(stmt=r, guard=gd):
                    out.append(f"reduce({r.reducer}, {show(r.value)}){g(gd)}")
                case Plain(stmt=s):
                    out.append(f"every lane: {type(s).__name__}")
        return "\n".join(out)


def if_convert(stmts: tuple[ir.Stmt, ...], columns: tuple[str, ...],
               fields: tuple[str, ...], leaf: LeafInline | None = None) -> LaneBody:
    """The lane form of :func:`if_convertible` ``stmts``.  ``fields``: the task's
    parameters in order (a spawn's arguments); ``columns``: those a child stores (the
    varying fields, not the invariant ones).  ``leaf``: every spawn site first sets the
    child's parameters into lane variables, tests the child's is-base and runs its base
    case where the test holds (:class:`LeafInline`; the plan checks it applies)."""
    ops: list[LaneOp] = []
    sites: list[SpawnSite] = []
    nconds = 0

    def block(body: tuple[ir.Stmt, ...], guard: int | None,
              kset: frozenset[int]) -> frozenset[int]:
        nonlocal nconds
        for s in body:
            match s:
                case ir.Assign(target=t, value=v):
                    ops.append(SetVar(t, v, guard, s.loc))
                case ir.Spawn(args=args):
                    site = SpawnSite(len(sites), kset, guard is not None)
                    sites.append(site)
                    lf = None if leaf is None else inline_leaf(s, guard)
                    if leaf is not None:  # an argument with a call or a read: once
                        args = tuple(a if speculable(a) or p.name not in leaf.temps else
                                     ir.Var(a.loc, p.ty, leaf.temps[p.name])
                                     for p, a in zip(leaf.params, args))
                    ops.append(MakeSpawn(site, guard, tuple(
                        (f, a) for f, a in zip(fields, args) if f in columns), s.loc, lf))
                    kset = (kset | {k + 1 for k in kset}) if guard is not None else \
                        frozenset(k + 1 for k in kset)
                case ir.Reduce():
                    ops.append(Fold(s, guard))
                case ir.If(cond=c, then=a, orelse=b):
                    n = nconds
                    nconds += 2
                    ops.append(Cond(n, c, guard, False, s.loc))
                    ops.append(Cond(n + 1, c, guard, True, s.loc))
                    kset = block(a, n, kset) | block(b, n + 1, kset)
                case _:
                    assert guard is None, "if_convertible: only assignments, spawns, " \
                        "reductions and ifs under a condition"
                    ops.append(Plain(s))
        return kset

    def inline_leaf(s: ir.Spawn, guard: int | None) -> int:
        """The child of spawn ``s`` tested and, where a base case, run: returns the lane
        condition of its leaves."""
        nonlocal nconds
        assert leaf is not None
        env: dict[str, str] = dict(leaf.locals)
        for p, a in zip(leaf.params, s.args):
            if p.name in leaf.temps:
                env[p.name] = leaf.temps[p.name]
                val = a if a.ty == p.ty else ir.Cast(a.loc, p.ty, a)
                ops.append(SetVar(env[p.name], val, guard, s.loc))
        n = nconds
        nconds += 1
        ops.append(Cond(n, rename_expr(leaf.is_base, env), guard, False, s.loc))
        block(rename_stmts(leaf.base, env), n, frozenset({0}))
        return n

    block(stmts, None, frozenset({0}))
    return LaneBody(tuple(ops), tuple(sites))


# ---------------------------------------------------------------- renaming
def rename_expr(e: ir.Expr, env: dict[str, str]) -> ir.Expr:
    """``e`` with the variables of ``env`` renamed (old name -> new name).  Iterative
    (children first, from an explicit stack): a 1,000-term expression nests deeper than
    Python's recursion limit."""
    done: dict[int, ir.Expr] = {}
    stack: list[tuple[ir.Expr, bool]] = [(e, False)]
    while stack:
        x, ready = stack.pop()
        if id(x) in done:
            continue
        if isinstance(x, ir.Var):
            done[id(x)] = dataclasses.replace(x, name=env[x.name]) if x.name in env else x
            continue
        kids: list[ir.Expr] = []
        tuples: dict[str, tuple[ir.Expr, ...]] = {}
        singles: dict[str, ir.Expr] = {}
        for f in dataclasses.fields(x):
            v = getattr(x, f.name)
            if isinstance(v, ir.Expr):
                singles[f.name] = v
                kids.append(v)
            elif isinstance(v, tuple) and v and all(isinstance(y, ir.Expr) for y in v):
                tuples[f.name] = v
                kids += v
        if not ready:
            stack.append((x, True))
            stack += [(k, False) for k in kids if id(k) not in done]
            continue
        changes: dict[str, Any] = {k: done[id(v)] for k, v in singles.items()}
        changes |= {k: tuple(done[id(y)] for y in v) for k, v in tuples.items()}
        done[id(x)] = dataclasses.replace(x, **changes) if changes else x
    return done[id(e)]


def rename_stmts(stmts: tuple[ir.Stmt, ...], env: dict[str, str]
                 ) -> tuple[ir.Stmt, ...]:
    """If-convertible statements (assignments, reductions, ifs) with the variables of
    ``env`` renamed, the assigned ones included."""
    out: list[ir.Stmt] = []
    for s in stmts:
        match s:
            case ir.Assign(target=t, value=v):
                out.append(dataclasses.replace(s, target=env.get(t, t), value=rename_expr(v, env)))
            case ir.Reduce(value=v):
                out.append(dataclasses.replace(s, value=rename_expr(v, env)))
            case ir.If(cond=c, then=a, orelse=b):
                out.append(dataclasses.replace(s, cond=rename_expr(c, env),
                                               then=rename_stmts(a, env),
                                               orelse=rename_stmts(b, env)))
            case _:
                raise AssertionError(f"leaf inlining: {type(s).__name__} in a base case")
    return tuple(out)

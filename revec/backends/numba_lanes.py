"""The plan's lane-spawns step (conditional spawns) for the numba kernels.

A thread's k-th spawn goes to child block k, whatever site made it.  Thread by thread
that is a branch per condition and a counter per spawn; here the inductive threads run
32 at a time with the vector primitives (revec.runtime.compaction.numba_vector), as the
C kernels do (revec/backends/c_lanes.py), in a form LLVM vectorizes from numba:

* **passes** over the full 32-thread steps of the inductive threads, each the body as
  if-converted code (every ``if`` a lane condition, assignments under a condition as
  selects; conditions, arguments and locals speculable, as the plan requires) storing
  one byte or value column: a conditional site's mask (whether the thread makes that
  spawn), and for child block k each argument column that differs between the sites
  that can make a thread's k-th spawn (the value of the site that makes it) or that is
  not a plain copy of a field; a value the same in every lane (an expression of
  level-uniform and invariant fields) is 32 copies filled once.  One store per loop:
  the C kernel's single lane loop with all its stores measured 2x slower than the
  branches in numba (LLVM does not vectorize it: stores to arrays it cannot tell
  apart); more than ``kernel_plan.FUSE_ABOVE`` passes run as one loop (compile time);
* **steps** of 32 threads: the sites' masks as 32-bit words (``movemask32``); the lanes
  whose k-th spawn site s makes, ``m_s & (exactly k spawns before s)``, by bit
  operations on those words (the counts before a site kept bit-sliced); child block
  k's mask their union, its columns appended by one compaction step each (a field
  passed on unchanged straight from the inductive threads' column), all 32 spawning ->
  copies, none -> skipped;
* the threads past the last full step run thread by thread (the caller's code).

The children of a child block stay in thread order (the thread-by-thread order).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from revec import ir
from revec.emit.names import var
from revec.emit.pyexpr import StmtEmitter, np_type, zero_of
from revec.emit.writer import at
from revec.transforms import kernel_plan as kp
from revec.transforms import lanes
from revec.transforms.blocking import used_vars

LANES = kp.LANES
FULL = (1 << LANES) - 1


@dataclass(frozen=True)
class LaneSite:
    """A spawn site of the lane body: its spawn indices and, per varying column, the
    argument (``args``: the lane variable holding it, ``arg_exprs``: the expression)."""

    index: int
    kset: frozenset[int]
    args: dict[str, str]
    arg_exprs: dict[str, ir.Expr]
    leaf: bool = False  # leaf inlining: the lanes whose child ran in the lane (``l<s>``)


@dataclass(frozen=True)
class LaneLine:
    """One line of a lane body: the variable it assigns (None: kept in every slice), the
    variables it reads, and whether it updates its target in place (``+=``)."""

    text: str
    target: str | None
    uses: frozenset[str]
    update: bool = False


def _reads(e: ir.Expr | ir.Stmt) -> set[str]:
    return {var(n) for n in used_vars(e)}


def lane_lines(body: lanes.LaneBody, ind: str, expr: Callable[[ir.Expr], str],
               reduce: Callable[[ir.Reduce, str, str | None], list[str]] | None
               ) -> list[LaneLine]:
    """The numba lines of an if-converted body (``_c<n>``: lane conditions; ``_m<s>``:
    the lane makes spawn site s; ``_k<s>``: its spawn index there; ``_a<s>_<col>``: the
    arguments).  ``reduce`` None: this pass does not run the reductions."""
    out = [LaneLine(f"{ind}_k = 0", "_k", frozenset())]
    loc = None  # the current operation's position in the user's source

    def add(text: str, target: str | None, uses: set[str], update: bool = False) -> None:
        out.append(LaneLine(at(loc, [f"{ind}{text}"])[0], target, frozenset(uses), update))

    for op in body.ops:
        loc = op.loc
        match op:
            case lanes.SetVar(target=t, value=v, guard=g):
                v_t = var(t)
                if g is None:
                    add(f"{v_t} = {expr(v)}", v_t, _reads(v))
                else:  # (it reads its old value, which stays live)
                    add(f"{v_t} = ({expr(v)}) if _c{g} else {v_t}", v_t,
                        _reads(v) | {f"_c{g}", v_t})
            case lanes.Cond(index=n, cond=cond, guard=g, negate=neg):
                here = "" if g is None else f"_c{g} & "
                text = f"(not ({expr(cond)}))" if neg else f"({expr(cond)})"
                add(f"_c{n} = {here}{text}", f"_c{n}",
                    _reads(cond) | (set() if g is None else {f"_c{g}"}))
            case lanes.MakeSpawn(site=site, guard=g, args=args, leaf=lf):
                i = site.index
                add(f"_m{i} = {'True' if g is None else f'_c{g}'}", f"_m{i}",
                    set() if g is None else {f"_c{g}"})
                if lf is not None:  # the child ran in the lane (leaf inlining)
                    add(f"_l{i} = _c{lf}", f"_l{i}", {f"_c{lf}"})
                add(f"_k{i} = _k", f"_k{i}", {"_k"})
                for c, arg in args:
                    add(f"_a{i}_{c} = {expr(arg)}", f"_a{i}_{c}", _reads(arg))
                add(f"_k += _m{i}", "_k", {f"_m{i}", "_k"}, update=True)
            case lanes.Fold(stmt=r, guard=g):
                if reduce is not None:
                    uses = _reads(r.value) | (set() if g is None else {f"_c{g}"})
                    for line in at(loc, reduce(r, ind, None if g is None else f"_c{g}")):
                        out.append(LaneLine(line, None, frozenset(uses)))
            case lanes.Plain(stmt=st_):  # top-level unpack / expression statement
                uses = _reads(st_)
                if isinstance(st_, ir.Unpack):
                    uses |= {var(t) for t in st_.targets}
                stm = StmtEmitter(expr, var, positions=True)  # type: ignore[arg-type]
                for line in stm.block((st_,), ind, 0):
                    out.append(LaneLine(line, None, frozenset(uses)))
    return out


def slice_lines(lines: list[LaneLine], need: set[str]) -> list[str]:
    """The lines the variables ``need`` depend on, and those kept in every slice (a pass
    stores one value: numba types and lowers dead code too, which costs compile time)."""
    need = set(need)
    keep: list[str] = []
    for line in reversed(lines):
        if line.target is not None and line.target not in need:
            continue
        keep.append(line.text)
        if line.target is not None and not line.update:
            need.discard(line.target)
        need |= line.uses
    return keep[::-1]


class LaneSpawnsEmitter:
    """The numba code of a :class:`kernel_plan.LaneSpawns` step (before the caller's
    thread-by-thread code for the rest, which starts at ``j0``)."""

    def __init__(self, gen: object, step: kp.LaneSpawns) -> None:
        self.gen = gen
        self.step = step
        self.bp = gen.bp  # type: ignore[attr-defined]
        self.columns = self.bp.columns
        self.sites = [LaneSite(op.site.index, op.site.kset,
                               {c: f"_a{op.site.index}_{c}" for c, _ in op.args}, dict(op.args),
                               op.leaf is not None)
                      for op in step.body.ops if isinstance(op, lanes.MakeSpawn)]
        # per child block k and column: the source of its values (the plan's)
        self.sources = {(k, c): src for k, c, src in step.sources}

    def column(self, name: str) -> int:
        """The scratch column of a pass or fill (the plan's scratch, numbered by the
        module generator)."""
        return self.gen.slot[name]  # type: ignore[attr-defined]

    def emit(self) -> list[str]:
        gen = self.gen
        step = self.step
        assert step.lanes == LANES, "the steps' masks are 32-bit words"
        L = ["    # inductive case, 32 threads per step (the plan's lane-spawns step): passes",
             "    # over the full steps store each conditional site's mask and the child",
             "    # blocks' argument columns; then per step the lanes making their k-th",
             "    # spawn (bit operations on the sites' masks) are appended to child block",
             "    # k by one compaction step per column (all 32: copies; none: skipped)",
             f"    jend = ni - ni % {LANES}"]
        for p in step.passes:
            L.append(f"    {p.name} = column_ptr(cols, {self.column(p.name)}, "
                     f"{'uint8' if p.ty is None else np_type(p.ty, '')})")
        for f in step.fills:
            L += [f"    {f.name} = column_ptr(cols, {self.column(f.name)}, {np_type(f.ty, '')})",
                  f"    for u in range({LANES}):",
                  f"        st({f.name}, u, {gen.expr(f.value)})"]  # type: ignore[attr-defined]
        for g, group in enumerate(step.pass_loops()):
            # (the reductions in the first loop only)
            reduce = None if g else gen.reduce  # type: ignore[attr-defined]
            ind = "        "
            head = [LaneLine(f"{ind}{t} = {v}", t, frozenset({"_x"} if by_x else ()))
                    for t, v, by_x in gen.field_loads("q_", step.reads)]  # type: ignore[attr-defined]
            head += [LaneLine(f"{ind}{var(n)} = {zero_of(ty, '')}", var(n), frozenset())
                     for n, ty in sorted(self.bp.task.locals.items())]
            body = head + lane_lines(step.body, ind, gen.expr, reduce)  # type: ignore[attr-defined]
            outs, need = [], set()
            for p in group:
                if p.kind == "mask":
                    outs.append(f"{ind}st({p.name}, j, _m{p.index})")
                    need.add(f"_m{p.index}")
                elif p.kind == "leaf":
                    outs.append(f"{ind}st({p.name}, j, _l{p.index})")
                    need.add(f"_l{p.index}")
                else:
                    assert p.column is not None
                    outs.append(f"{ind}st({p.name}, j, {self.pick(p.index, p.column)})")
                    need |= self.pick_reads(p.index, p.column)
            lines = slice_lines(body, need) + outs
            if lines:
                L.append(f"    for j in range(jend):  # {', '.join(p.name for p in group)}")
                L += lines
        L += [f"    kc{k} = kcnt[{k}]" for k in step.child_blocks]
        if step.leaves:  # each child block's inlined leaves
            L += [f"    lf{k} = 0" for k in step.child_blocks]
        L += ["    t = 0", "    while t < jend:"]
        cond = {p.index for p in step.passes if p.kind == "mask"}
        for s in self.sites:
            L.append(f"        b{s.index} = int64(movemask32(ms{s.index}, t))"
                     if s.index in cond else f"        b{s.index} = {FULL}")
            if s.leaf:
                L.append(f"        l{s.index} = int64(movemask32(ml{s.index}, t))")
        # e<s>_<k>: the lanes with exactly k spawns before site s (bit-sliced counts)
        exact = {0: str(FULL)}
        top = max(step.child_blocks)
        sel: dict[int, list[str]] = {k: [] for k in step.child_blocks}
        lsel: dict[int, list[str]] = {k: [] for k in step.child_blocks}  # inlined leaves
        for n, s in enumerate(self.sites):
            b = f"b{s.index}"
            for k in sorted(s.kset):
                made = b if exact[k] == str(FULL) else f"({b} & {exact[k]})"
                if s.leaf:  # written: made and not a leaf; the leaves counted
                    sel[k].append(f"({made} & ~l{s.index})")
                    lsel[k].append(f"({made} & l{s.index})")
                else:
                    sel[k].append(made)
            if n == len(self.sites) - 1:
                break
            nxt: dict[int, str] = {}
            for k in sorted(set(exact) | {k + 1 for k in exact if k < top}):
                parts = []
                if k in exact:
                    parts.append(f"({exact[k]} & ~{b})")
                if k - 1 in exact:
                    parts.append(b if exact[k - 1] == str(FULL) else f"({exact[k - 1]} & {b})")
                nxt[k] = f"e{s.index}_{k}"
                L.append(f"        {nxt[k]} = {' | '.join(parts)}")
            exact = nxt
        for k in step.child_blocks:
            if lsel[k]:
                L.append(f"        lf{k} += popcount32(uint32(({' | '.join(lsel[k])}) & {FULL}))")
            L.append(f"        mk = uint32(({' | '.join(sel[k])}) & {FULL})")
            L.append(f"        if mk == {FULL}:  # every lane makes its spawn {k}")
            L += [f"            {self.append(p, k, True)}" for p in self.columns]
            L.append(f"            kc{k} += {LANES}")
            L.append("        elif mk != 0:")
            L += [f"            {self.append(p, k, False)}" for p in self.columns]
            L.append(f"            kc{k} += popcount32(mk)")
        L.append(f"        t += {LANES}")
        L += [f"    kcnt[{k}] = kc{k}" for k in step.child_blocks]
        if step.leaves:  # after the child counts: kcnt[K + k], K the most child blocks
            top = self.bp.max_spawns
            L += [f"    kcnt[{top + k}] = lf{k}" for k in step.child_blocks]
        L.append("    j0 = jend  # the rest thread by thread")
        return L

    def append(self, p: ir.Param, k: int, full: bool) -> str:
        """Child block k's new children of column ``p``: a copy of the 32 lanes
        (``full``) or one compaction step."""
        d = f"out_base + {k} * ns + kc{k}" if k else f"out_base + kc{k}"
        src = self.sources[(k, p.name)]
        at = "0" if src.startswith("fill") else "t"
        if full:
            return f"copy32({src}, {at}, c_{p.name}, {d})"
        isa = self.gen.isa(8 * p.ty.dtype.itemsize)  # type: ignore[attr-defined]
        return f"compress_{isa}({src}, {at}, mk, c_{p.name}, {d})"

    def pick_reads(self, k: int, col: str) -> set[str]:
        """The lane variables :meth:`pick` reads."""
        cand = [s for s in self.sites if k in s.kset]
        out = {cand[-1].args[col]}
        for s in cand[:-1]:
            out |= {s.args[col], f"_m{s.index}"} | ({f"_k{s.index}"} if len(s.kset) > 1 else set())
        return out

    def pick(self, k: int, col: str) -> str:
        """Column ``col`` of the lane's k-th spawn (the site that makes it)."""
        cand = [s for s in self.sites if k in s.kset]
        out = cand[-1].args[col]
        for s in reversed(cand[:-1]):
            which = f"_m{s.index}" if len(s.kset) == 1 else f"(_m{s.index} & (_k{s.index} == {k}))"
            out = f"({s.args[col]} if {which} else {out})"
        return out

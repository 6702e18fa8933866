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
  apart); more than :data:`FUSE_ABOVE` passes run as one loop (compile time);
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

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from revec import ir
from revec.emit.pyexpr import StmtEmitter, np_type, zero_of
from revec.transforms import kernel_plan as kp
from revec.transforms.blocking import assigned_names, used_vars

IDENT = re.compile(r"[A-Za-z_]\w*")
LANES = kp.LANES
# more passes than this run as one loop: each vectorized loop costs compile time.
# Measured (graphcol, 9 passes; revec.bench.compile_times and numba reexp at the default
# size, B = 4096, medians of 10, load 2-3, with the 32-lane steps then in runtime
# helpers, which compiled within 0.03 s of these inline ones): one loop per pass 2.70 s
# compile, 0.31-0.34 s run; one loop 2.31 s, 0.41-0.45 s (C reexp 0.40 s).  The one
# loop, for the compile-time margin (target: under 3 s per program); parentheses has 5
# passes, one loop each
FUSE_ABOVE = 6
FULL = (1 << LANES) - 1


@dataclass
class Site:
    index: int
    kset: frozenset[int]
    mask: str                      # this lane makes the spawn (a bool expression)
    args: dict[str, str]           # column -> the argument's expression (numba)
    arg_exprs: dict[str, ir.Expr]  # column -> the argument


@dataclass
class LaneBody:
    """The if-converted body of one lane: its lines (each with the variable it assigns,
    None: kept in every slice) and its spawn sites."""

    lines: list[str] = field(default_factory=list)
    targets: list[str | None] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)

    def add(self, line: str, target: str | None = None) -> None:
        self.lines.append(line)
        self.targets.append(target)

    def slice(self, out: str) -> list[str]:
        """The lines ``out`` depends on, and those kept in every slice (a pass stores one
        value: numba types and lowers dead code too, which costs compile time)."""
        need = set(IDENT.findall(out))
        keep: list[str] = []
        for line, target in zip(reversed(self.lines), reversed(self.targets)):
            if target is not None and target not in need:
                continue
            keep.append(line)
            rhs = line.split("=", 1)[1] if target is not None else line
            if target is not None and "+=" not in line:
                need.discard(target)
            need |= set(IDENT.findall(rhs))
        return keep[::-1]


class LaneIfConverter:
    """The inductive case of one lane as straight-line numba code (``_m<s>``: the lane
    makes spawn site s; ``_k<s>``: its spawn index there; ``_a<s>_<col>``: the
    arguments)."""

    def __init__(self, gen: object, sites: tuple[kp.SpawnSite, ...],
                 reduce: Callable[[ir.Reduce, str, str | None], list[str]] | None) -> None:
        self.gen = gen
        self.expr = gen.expr  # type: ignore[attr-defined]
        self.bp = gen.bp  # type: ignore[attr-defined]
        self.plan_sites = sites
        self.reduce = reduce  # None: this pass does not run the reductions
        self.body = LaneBody()
        self.nconds = 0

    def run(self, stmts: tuple[ir.Stmt, ...], ind: str) -> LaneBody:
        self.body.add(f"{ind}_k = 0", "_k")
        self.block(stmts, ind, None)
        return self.body

    def block(self, stmts: tuple[ir.Stmt, ...], ind: str, pc: str | None) -> None:
        add = self.body.add
        for s in stmts:
            match s:
                case ir.Assign(target=t, value=v):
                    val = self.expr(v)
                    v_t = f"v_{t}"
                    # (under a condition it reads its old value, which stays live)
                    add(f"{ind}{v_t} = {val}" if pc is None
                        else f"{ind}{v_t} = ({val}) if {pc} else {v_t}",
                        v_t)
                case ir.Spawn(args=args):
                    planned = self.plan_sites[len(self.body.sites)]
                    i = planned.index
                    exprs = {p.name: a for a, p in zip(args, self.bp.fields)
                             if p.name not in self.bp.invariant}
                    site = Site(i, planned.kset, f"_m{i}",
                                {c: f"_a{i}_{c}" for c in exprs}, exprs)
                    self.body.sites.append(site)
                    add(f"{ind}_m{i} = {pc if pc is not None else 'True'}", f"_m{i}")
                    add(f"{ind}_k{i} = _k", f"_k{i}")
                    for c, a in exprs.items():
                        add(f"{ind}_a{i}_{c} = {self.expr(a)}", f"_a{i}_{c}")
                    add(f"{ind}_k += _m{i}", "_k")
                case ir.Reduce():
                    if self.reduce is not None:
                        for line in self.reduce(s, ind, pc):
                            add(line)
                case ir.If(cond=c, then=a, orelse=b):
                    n = self.nconds
                    self.nconds += 2
                    cond = self.expr(c)
                    here = f"{pc} & " if pc is not None else ""
                    add(f"{ind}_c{n} = {here}({cond})", f"_c{n}")
                    add(f"{ind}_c{n + 1} = {here}(not ({cond}))", f"_c{n + 1}")
                    self.block(a, ind, f"_c{n}")
                    self.block(b, ind, f"_c{n + 1}")
                case _:  # top-level unpack / expression statement
                    stm = StmtEmitter(self.expr, lambda x: f"v_{x}")
                    for line in stm.block((s,), ind, 0):
                        add(line)


class LaneSpawnsEmitter:
    """The numba code of a :class:`kernel_plan.LaneSpawns` step (before the caller's
    thread-by-thread code for the rest, which starts at ``j0``)."""

    def __init__(self, gen: object, step: kp.LaneSpawns, first_column: int) -> None:
        self.gen = gen
        self.step = step
        self.bp = gen.bp  # type: ignore[attr-defined]
        self.first = first_column
        self.columns = self.bp.columns
        probe = LaneIfConverter(gen, step.sites, None).run(step.stmts, "")
        self.sites = probe.sites
        assigned = assigned_names(step.stmts)
        by_index = gen.by_index["q_"]  # type: ignore[attr-defined]
        moved = {what for side, what, _ in gen.split_moves()  # type: ignore[attr-defined]
                 if side == "q_"}
        # per child block k and column: the source of its values ("q_<col>": the inductive
        # threads' column; else a scratch column written by a pass)
        self.sources: dict[tuple[int, str], str] = {}
        self.passes: list[tuple[str, str, int, ir.Ty | None]] = []  # what, column, k, type
        for s in self.sites:
            if s.index in self.conditional():
                self.passes.append(("mask", f"ms{s.index}", s.index, None))
        # a value every lane of the block has (the same expression of level-uniform or
        # invariant fields at every site): 32 copies in a scratch column, filled once
        self.fills: dict[str, tuple[str, ir.Ty]] = {}  # expression -> (column, type)
        block_wide = set(self.bp.uniform) | set(self.bp.invariant)
        for k in step.child_blocks:
            cand = [s for s in self.sites if k in s.kset]
            for p in self.columns:
                # passed on unchanged by every site that can make the k-th spawn
                plain = all(isinstance(s.arg_exprs[p.name], ir.Var)
                            and s.arg_exprs[p.name].name == p.name for s in cand)
                texts = {self.gen_expr(s.arg_exprs[p.name]) for s in cand}
                used = set().union(*(used_vars(s.arg_exprs[p.name]) for s in cand))
                if (plain and p.name not in assigned and not by_index and p.name in moved):
                    self.sources[(k, p.name)] = f"q_{p.name}"
                elif len(texts) == 1 and used <= block_wide and not used & assigned:
                    text = texts.pop()
                    if text not in self.fills:
                        self.fills[text] = (f"fill{len(self.fills)}", p.ty)
                    self.sources[(k, p.name)] = self.fills[text][0]
                else:
                    name = f"ak{k}_{p.name}"
                    self.sources[(k, p.name)] = name
                    self.passes.append(("value", name, k, p.ty))

    def gen_expr(self, e: ir.Expr) -> str:
        return self.gen.expr(e)  # type: ignore[attr-defined]

    def loops(self) -> list[list[tuple[str, str, int, ir.Ty | None]]]:
        """The passes grouped into loops: one store per loop (LLVM vectorizes such a
        loop), all in one loop when there are more than :data:`FUSE_ABOVE`."""
        if len(self.passes) > FUSE_ABOVE:
            return [self.passes]
        # (a spawn under a condition always leaves a mask pass, which also runs the
        # reductions; without one, a loop of the reductions alone)
        return [[p] for p in self.passes] or [[]]

    def conditional(self) -> set[int]:
        return {s.index for s in self.step.sites if s.conditional}

    def scratch(self) -> int:
        """The scratch byte columns the step keeps."""
        return len(self.passes) + len(self.fills)

    def emit(self) -> list[str]:
        gen = self.gen
        step = self.step
        L = ["    # inductive case, 32 threads per step (the plan's lane-spawns step): passes",
             "    # over the full steps store each conditional site's mask and the child",
             "    # blocks' argument columns; then per step the lanes making their k-th",
             "    # spawn (bit operations on the sites' masks) are appended to child block",
             "    # k by one compaction step per column (all 32: copies; none: skipped)",
             f"    jend = ni - ni % {LANES}"]
        for c, (_, _, _, ty) in enumerate(self.passes):
            size = 1 if ty is None else ty.dtype.itemsize
            self.gen.need(self.first + c, size, LANES * size)  # type: ignore[attr-defined]
        for c, (_, name, _, ty) in enumerate(self.passes):
            L.append(f"    {name} = column_ptr(cols, {self.first + c}, "
                     f"{'uint8' if ty is None else np_type(ty, '')})")
        for c, (text, (name, ty)) in enumerate(self.fills.items(), len(self.passes)):
            self.gen.need(self.first + c, 0, LANES * ty.dtype.itemsize)  # type: ignore[attr-defined]
            L += [f"    {name} = column_ptr(cols, {self.first + c}, {np_type(ty, '')})",
                  f"    for u in range({LANES}):",
                  f"        st({name}, u, {text})"]
        for g, group in enumerate(self.loops()):
            # (the reductions in the first loop only)
            reduce = None if g else gen.reduce  # type: ignore[attr-defined]
            body = LaneIfConverter(gen, step.sites, reduce).run(step.stmts, "        ")
            outs = [f"        st({name}, j, _m{k})" if what == "mask"
                    else f"        st({name}, j, {self.pick(k, name.split('_', 1)[1])})"
                    for what, name, k, _ in group]
            for n, ty in sorted(self.bp.task.locals.items(), reverse=True):
                body.lines.insert(0, f"        v_{n} = {zero_of(ty, '')}")
                body.targets.insert(0, f"v_{n}")
            for line in reversed(gen.load_fields("        ", "q_")):  # type: ignore[attr-defined]
                body.lines.insert(0, line)
                body.targets.insert(0, line.split("=", 1)[0].strip())
            lines = body.slice(" ".join(outs)) + outs
            if lines:
                L.append(f"    for j in range(jend):  # {', '.join(p[1] for p in group)}")
                L += lines
        L += [f"    kc{k} = kcnt[{k}]" for k in step.child_blocks]
        L += ["    t = 0", "    while t < jend:"]
        cond = self.conditional()
        for s in self.sites:
            L.append(f"        b{s.index} = int64(movemask32(ms{s.index}, t))"
                     if s.index in cond else f"        b{s.index} = {FULL}")
        # e<s>_<k>: the lanes with exactly k spawns before site s (bit-sliced counts)
        exact = {0: str(FULL)}
        top = max(step.child_blocks)
        sel: dict[int, list[str]] = {k: [] for k in step.child_blocks}
        for n, s in enumerate(self.sites):
            b = f"b{s.index}"
            for k in sorted(s.kset):
                sel[k].append(b if exact[k] == str(FULL) else f"({b} & {exact[k]})")
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
            L.append(f"        mk = uint32(({' | '.join(sel[k])}) & {FULL})")
            L.append(f"        if mk == {FULL}:  # every lane makes its spawn {k}")
            L += [f"            {self.append(p, k, True)}" for p in self.columns]
            L.append(f"            kc{k} += {LANES}")
            L.append("        elif mk != 0:")
            L += [f"            {self.append(p, k, False)}" for p in self.columns]
            L.append(f"            kc{k} += popcount32(mk)")
        L.append(f"        t += {LANES}")
        L += [f"    kcnt[{k}] = kc{k}" for k in step.child_blocks]
        L.append("    j0 = jend  # the rest thread by thread")
        return L

    def append(self, p: ir.Param, k: int, full: bool) -> str:
        """Child block k's new children of column ``p``: a copy of the 32 lanes
        (``full``) or one compaction step."""
        d = f"out_base + {k} * n + kc{k}" if k else f"out_base + kc{k}"
        src = self.sources[(k, p.name)]
        at = "0" if src.startswith("fill") else "t"
        if full:
            return f"copy32({src}, {at}, c_{p.name}, {d})"
        isa = self.gen.isa(8 * p.ty.dtype.itemsize)  # type: ignore[attr-defined]
        return f"compress_{isa}({src}, {at}, mk, c_{p.name}, {d})"

    def pick(self, k: int, col: str) -> str:
        """Column ``col`` of the lane's k-th spawn (the site that makes it)."""
        cand = [s for s in self.sites if k in s.kset]
        out = cand[-1].args[col]
        for s in reversed(cand[:-1]):
            which = f"_m{s.index}" if len(s.kset) == 1 else f"(_m{s.index} & (_k{s.index} == {k}))"
            out = f"({s.args[col]} if {which} else {out})"
        return out

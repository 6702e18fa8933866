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

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

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


def count_lane_lines(body: lanes.LaneBody, ind: str, expr: Callable[[ir.Expr], str],
                     reduce: Callable[[ir.Reduce, str, str | None], list[str]],
                     once: frozenset[str]) -> list[str]:
    """The numba lines of an if-converted body with leaf inlining for one thread whose
    children are all leaves (site_leaves, the C kernels' ``count_lane_code``): a spawn
    only adds one to the thread's spawn count ``_ns`` (its child ran in the lane: the
    leaf's base case, its lines before the spawn), a child's is-base test is its
    spawn's condition (it holds for the block), and the child's lane variables ``once``
    (set once per block) are not set per lane."""
    leaf = {op.leaf for op in body.ops if isinstance(op, lanes.MakeSpawn)
            and op.leaf is not None}
    out = [f"{ind}_ns = 0"]
    for op in body.ops:
        lines: list[str] = []
        match op:
            case lanes.SetVar(target=t) if t in once:
                pass
            case lanes.SetVar(target=t, value=v, guard=g):
                v_t = var(t)
                lines.append(f"{ind}{v_t} = {expr(v)}" if g is None
                             else f"{ind}{v_t} = ({expr(v)}) if _c{g} else {v_t}")
            case lanes.MakeSpawn(guard=g):
                lines.append(f"{ind}_ns += {'1' if g is None else f'_c{g}'}")
            case lanes.Fold(stmt=r, guard=g):
                lines += reduce(r, ind, None if g is None else f"_c{g}")
            case lanes.Cond(index=n, guard=g) if n in leaf:  # the child is a leaf
                lines.append(f"{ind}_c{n} = {'True' if g is None else f'_c{g}'}")
            case lanes.Cond(index=n, cond=c, guard=g, negate=neg):
                here = "" if g is None else f"_c{g} & "
                text = f"(not ({expr(c)}))" if neg else f"({expr(c)})"
                lines.append(f"{ind}_c{n} = {here}{text}")
            case lanes.Plain(stmt=st_):
                stm = StmtEmitter(expr, var, positions=True)  # type: ignore[arg-type]
                lines += stm.block((st_,), ind, 0)
        out += at(op.loc, lines)
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

    def partial_type(self, s: ir.Reduce) -> ir.Ty | None:
        """The type of reducer ``s.reducer``'s per-lane partials in a buffered lane loop
        (None: the reduction stays on the accumulator, in thread order): integer sums,
        mins and maxes whose value converts exactly as the accumulator's own update does
        (a signed reducer, a value no wider unsigned than 32 bits; for a min / max an
        unsigned reducer of an unsigned value too); sums of values of 16 bits or fewer
        in 32-bit lanes (:meth:`flush_run` bounds them)."""
        decl = self.gen.program.reducers[s.reducer]  # type: ignore[attr-defined]
        rty, vty = ir.Ty(decl.dtype), self.narrow_value(s).ty
        if decl.bound or decl.op not in ("sum", "min", "max"):
            return None
        ok = rty.kind == "i" and (vty.kind in "ib" or vty.kind == "u"
                                  and vty.dtype.itemsize < 8) \
            or decl.op != "sum" and rty.kind == "u" and vty.kind == "u"
        if not ok or vty.kind == "b" and decl.op != "sum":
            return None
        if decl.op == "sum" and vty.dtype.itemsize <= 2 and rty.dtype.itemsize >= 4:
            # bytes in 16-bit lanes, 16-bit values in 32-bit ones (merged in runs)
            return ir.Ty(np.dtype(np.int16 if vty.dtype.itemsize == 1 else np.int32))
        return rty

    def narrow_value(self, s: ir.Reduce) -> ir.Expr:
        """The value a reduction adds, without a widening of a narrow integer to its
        signed reducer's type (the sum of the narrow values in 32-bit lanes, widened once
        when merged, is the same)."""
        v = s.value
        decl = self.gen.program.reducers[s.reducer]  # type: ignore[attr-defined]
        if isinstance(v, ir.Cast) and decl.op == "sum" and v.ty == ir.Ty(decl.dtype) \
                and v.ty.kind == "i" and v.operand.ty.kind in "iub" \
                and v.operand.ty.dtype.itemsize <= 2:
            return v.operand
        if isinstance(v, ir.Const) and decl.op == "sum" and v.ty == ir.Ty(decl.dtype) \
                and v.ty.kind == "i" and -(1 << 15) <= int(v.value) < (1 << 15):
            small = -(1 << 7) <= int(v.value) < (1 << 7)
            return ir.Const(v.loc, ir.Ty(np.dtype(np.int8 if small else np.int16)),
                            int(v.value))
        return v

    def lane_partials(self) -> dict[str, tuple[ir.Ty, str, int]]:
        """Per reducer with per-lane partials: (type, op, the largest magnitude a lane
        adds per step: 0 where the partial is the reducer's own type)."""
        out: dict[str, tuple[ir.Ty, str, int]] = {}
        folds = [op.stmt for op in self.step.body.ops if isinstance(op, lanes.Fold)]
        for r in dict.fromkeys(f.reducer for f in folds):
            tys = {self.partial_type(f) for f in folds if f.reducer == r}
            if len(tys) == 1 and None not in tys:
                ty = next(t for t in tys if t is not None)
                decl = self.gen.program.reducers[r]  # type: ignore[attr-defined]
                most = 0
                if ty != ir.Ty(decl.dtype):  # a narrow sum: each value below 2^(8 size)
                    most = sum(1 << 8 * self.narrow_value(f).ty.dtype.itemsize
                               for f in folds if f.reducer == r)
                out[r] = (ty, decl.op, most)
        return out

    def flush_run(self, parts: dict[str, tuple[ir.Ty, str, int]]) -> int:
        """Steps of 32 threads after which the narrow lane sums are merged (0: none
        needs it): a power of two of steps whose sums stay within each partial's type
        (a lane adds less than ``most`` per step, an n-bit partial holds 2^(n-1))."""
        runs = []
        for ty, _, most in parts.values():
            if most:
                run = 1
                while run * 2 * most <= 1 << (8 * ty.dtype.itemsize - 1):
                    run *= 2
                runs.append(run)
        return min(runs) if runs else 0

    def merge_partials(self, parts: dict[str, tuple[ir.Ty, str, int]], ind: str
                       ) -> list[str]:
        """The per-lane partials merged into the accumulators, and reset."""
        L = [f"{ind}for u in range({LANES}):"]
        for r, (ty, op, _) in parts.items():
            rt = np_type(ir.Ty(self.gen.program.reducers[r].dtype), "")  # type: ignore[attr-defined]
            if op == "sum":
                L.append(f"{ind}    acc_{r} = {rt}(acc_{r} + {rt}(ld(_lp_{r}, u)))")
            else:
                cmp = ">" if op == "max" else "<"
                L += [f"{ind}    _r = {rt}(ld(_lp_{r}, u))",
                      f"{ind}    if _r {cmp} acc_{r}:",
                      f"{ind}        acc_{r} = _r"]
            L.append(f"{ind}    st(_lp_{r}, u, {self.identity(ty, op)})")
        return L

    @staticmethod
    def identity(ty: ir.Ty, op: str) -> str:
        t = np_type(ty, "")
        if op == "sum":
            return f"{t}(0)"
        info = np.iinfo(ty.dtype)
        return f"{t}({int(info.min if op == 'max' else info.max)})"

    def lane_reduce(self, parts: dict[str, tuple[ir.Ty, str, int]]
                    ) -> Callable[[ir.Reduce, str, str | None], list[str]]:
        """A reduction in a buffered lane loop: into lane ``u``'s partial, or (a reducer
        without partials) the accumulator's own update."""
        def reduce(s: ir.Reduce, ind: str, pc: str | None) -> list[str]:
            if s.reducer not in parts:
                return self.gen.reduce(s, ind, pc)  # type: ignore[attr-defined, no-any-return]
            ty, op, _ = parts[s.reducer]
            t = np_type(ty, "")
            v = f"{t}({self.gen.expr(self.narrow_value(s))})"  # type: ignore[attr-defined]
            lp = f"_lp_{s.reducer}"
            if op == "sum":
                val = v if pc is None else f"({v} if {pc} else {t}(0))"
                return [f"{ind}st({lp}, u, {t}(ld({lp}, u) + {val}))"]
            val = v if pc is None else f"({v} if {pc} else {self.identity(ty, op)})"
            return [f"{ind}st({lp}, u, {op}(ld({lp}, u), {val}))"]
        return reduce

    def emit_buffered(self) -> list[str]:
        """The lane-spawns step with lane buffers (``LaneSpawns.buffers``): per step of
        32 threads one lane loop runs the if-converted body and stores every pass into
        a 32-element array on the stack (``lane_buf``), the reductions into per-lane
        partials; then the step's compaction as in :meth:`emit`."""
        gen = self.gen
        step = self.step
        if step.const_leaves:  # (const_leaves) their reductions out of the lane loop
            counted = {c.op for c in step.const_leaves}
            kept = lanes.LaneBody(tuple(op for n, op in enumerate(step.body.ops)
                                        if n not in counted), step.body.sites)
            inner = LaneSpawnsEmitter(gen, dataclasses.replace(step, body=kept,
                                                               const_leaves=()))
            L = inner.emit_buffered()
            at_ = L.index("    j0 = jend  # the rest thread by thread")
            return L[:at_] + self.const_sums() + L[at_:]
        parts = self.lane_partials()
        run = self.flush_run(parts)
        L = ["    # inductive case, 32 threads per step (the plan's lane-spawns step): per",
             "    # step one lane loop runs the body and stores each conditional site's mask",
             "    # and the child blocks' argument values into stack arrays (lane_buf), the",
             "    # reductions into per-lane partials; then the lanes making their k-th",
             "    # spawn (bit operations on the sites' masks) are appended to child block",
             "    # k by one compaction step per column (all 32: copies; none: skipped)",
             f"    jend = ni - ni % {LANES}"]
        for p in step.passes:
            L.append(f"    {p.name} = lane_buf({'uint8' if p.ty is None else np_type(p.ty, '')})")
        for f in step.fills:
            L += [f"    {f.name} = column_ptr(cols, {self.column(f.name)}, {np_type(f.ty, '')})",
                  f"    for u in range({LANES}):",
                  f"        st({f.name}, u, {gen.expr(f.value)})"]  # type: ignore[attr-defined]
        for r, (ty, op, _) in parts.items():
            L += [f"    _lp_{r} = lane_buf({np_type(ty, '')})",
                  f"    for u in range({LANES}):",
                  f"        st(_lp_{r}, u, {self.identity(ty, op)})"]
        L += self.counters()
        L += ["    t = 0", "    while t < jend:"]
        ind = "            "
        head = [LaneLine(f"{ind}{t_} = {v}", t_, frozenset({"_x"} if by_x else ()))
                for t_, v, by_x in gen.field_loads("q_", step.reads)]  # type: ignore[attr-defined]
        head += [LaneLine(f"{ind}{var(n)} = {zero_of(ty, '')}", var(n), frozenset())
                 for n, ty in sorted(self.bp.task.locals.items())]
        body = head + lane_lines(step.body, ind, gen.expr,  # type: ignore[attr-defined]
                                 self.lane_reduce(parts))
        outs, need = [], set()
        for p in step.passes:
            if p.kind == "mask":
                outs.append(f"{ind}st({p.name}, u, _m{p.index})")
                need.add(f"_m{p.index}")
            elif p.kind == "leaf":
                outs.append(f"{ind}st({p.name}, u, _l{p.index})")
                need.add(f"_l{p.index}")
            else:
                assert p.column is not None
                lines, val = self.pick_lines(p.index, p.column, ind)
                outs += lines + [f"{ind}st({p.name}, u, {val})"]
                need |= self.pick_reads(p.index, p.column)
        chunk = [f"        for u in range({LANES}):", "            j = t + u"]
        chunk += slice_lines(body, need) + outs
        chunk += self.steps("0")
        if run:  # runs of steps, the 32-bit lane sums merged after each (a test in the
            # loop over the steps instead kept LLVM from keeping them in registers)
            L += [f"        tend = min(jend, t + {run * LANES})", "        while t < tend:"]
            L += ["    " + x for x in chunk]
            L += self.merge_partials(parts, "        ")
        else:
            L += chunk
            if parts:
                L += self.merge_partials(parts, "    ")
        return L + self.counters_back()

    def const_sums(self) -> list[str]:
        """const_leaves: each constant sum of inlined leaves, once per block: the constant
        times the inlined leaves its child block counted in the steps (``lf<k>``)."""
        L = []
        for c in self.step.const_leaves:
            rt = np_type(ir.Ty(self.gen.program.reducers[c.reducer].dtype), "")  # type: ignore[attr-defined]
            L.append(f"    acc_{c.reducer} = {rt}(acc_{c.reducer} + {rt}({c.value}) * "
                     f"{rt}(lf{c.block}))  # its constant, once per inlined leaf")
        return L

    def emit(self) -> list[str]:
        gen = self.gen
        step = self.step
        assert step.lanes == LANES, "the steps' masks are 32-bit words"
        if step.site_leaves is not None:
            return self.emit_site_leaves(step.site_leaves)
        if step.buffers:
            return self.emit_buffered()
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
        L += self.counters()
        L += ["    t = 0", "    while t < jend:"]
        return L + self.steps("t") + self.counters_back()

    def emit_site_leaves(self, sl: kp.SiteLeaves) -> list[str]:
        """site_leaves by child block (:class:`kp.SiteLeaves`, ``by_site`` False): the
        children's is-base test decided once per block (``cb_``, the module generator's
        ``site_leaf_test``).  All leaves: one loop over every inductive thread runs the
        lane body with leaf inlining (:func:`count_lane_lines`: the leaves' base cases,
        each thread's spawns counted), child block k's inlined leaves the threads with
        more than k spawns (``kcnt[K + k]``), nothing written, no thread left over
        (``j0 = ni``).  None: the lane spawns of the body without leaf code
        (``sl.plain``, whose passes the plan made)."""
        gen = self.gen
        step = self.step
        assert sl.test is not None and sl.plain is not None and not sl.by_site
        once = frozenset(tv for tv, _ in sl.temps)
        ind = "            "
        L = list(gen.site_leaf_test())  # type: ignore[attr-defined]
        L += ["    if cb_:",
              "        # site_leaves: every child a leaf: their base cases in the lanes,",
              "        # child block k's inlined leaves the threads with more than k spawns"]
        L += [f"        nl{k} = 0" for k in step.child_blocks]
        L.append("        for j in range(ni):")
        L += [f"{ind}{t} = {v}" for t, v, _ in
              gen.field_loads("q_", step.reads)]  # type: ignore[attr-defined]
        L += [f"{ind}{var(n)} = {zero_of(ty, '')}"
              for n, ty in sorted(self.bp.task.locals.items()) if n not in once]
        L += count_lane_lines(step.body, ind, gen.expr, gen.reduce,  # type: ignore[attr-defined]
                              once)
        L += [f"{ind}nl{k} += _ns > {k}" for k in step.child_blocks]
        top = self.bp.max_spawns
        L += [f"        kcnt[{top + k}] += nl{k}" for k in step.child_blocks]
        L += ["        j0 = ni", "    else:"]
        plain = LaneSpawnsEmitter(gen, dataclasses.replace(step, body=sl.plain, leaves=False,
                                                             site_leaves=None))
        return L + ["    " + x for x in plain.emit()]

    def counters(self) -> list[str]:
        """The child blocks' counts (and inlined leaves) in locals."""
        step = self.step
        L = [f"    kc{k} = kcnt[{k}]" for k in step.child_blocks]
        if step.leaves:  # each child block's inlined leaves
            L += [f"    lf{k} = 0" for k in step.child_blocks]
        return L

    def steps(self, at_: str) -> list[str]:
        """The body of the loop over the 32-thread steps (``t``): the sites' masks as
        words, each child block's lanes appended; the passes' values at ``at_`` (``t``:
        the pass columns; ``0``: the lane buffers)."""
        step = self.step
        L: list[str] = []
        cond = {p.index for p in step.passes if p.kind == "mask"}
        for s in self.sites:
            L.append(f"        b{s.index} = int64(movemask32(ms{s.index}, {at_}))"
                     if s.index in cond else f"        b{s.index} = {FULL}")
            if s.leaf:
                L.append(f"        l{s.index} = int64(movemask32(ml{s.index}, {at_}))")
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
            L += [f"            {self.append(p, k, True, at_)}" for p in self.columns]
            L.append(f"            kc{k} += {LANES}")
            L.append("        elif mk != 0:")
            L += [f"            {self.append(p, k, False, at_)}" for p in self.columns]
            L.append(f"            kc{k} += popcount32(mk)")
        L.append(f"        t += {LANES}")
        return L

    def counters_back(self) -> list[str]:
        """The counts stored back after the steps."""
        step = self.step
        L = [f"    kcnt[{k}] = kc{k}" for k in step.child_blocks]
        if step.leaves:  # after the child counts: kcnt[K + k], K the most child blocks
            top = self.bp.max_spawns
            L += [f"    kcnt[{top + k}] = lf{k}" for k in step.child_blocks]
        L.append("    j0 = jend  # the rest thread by thread")
        return L

    def append(self, p: ir.Param, k: int, full: bool, at_: str = "t") -> str:
        """Child block k's new children of column ``p``: a copy of the 32 lanes
        (``full``) or one compaction step (a pass's values at ``at_``)."""
        d = f"out_base + {k} * ns + kc{k}" if k else f"out_base + kc{k}"
        src = self.sources[(k, p.name)]
        at = "0" if src.startswith("fill") else "t" if src.startswith("q_") else at_
        if full or src.startswith("fill"):
            # (a fill's 32 values are equal: its compaction step is a copy, which stores
            # the same 32 elements as the step would, into the child block's slack)
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
        ty = next(p.ty for p in self.bp.fields if p.name == col)
        t = np_type(ty, "")
        for s in reversed(cand[:-1]):
            which = self.which(s, k)
            if ty.kind in "iu":
                # a select by bit masks: a conditional expression here LLVM turns into
                # masked stores into the lane buffer (vpmaskmovq on AVX2, microcoded on
                # AMD: graphcol's lane loop spent most of its time there)
                m = f"({t}(0) - {t}({which}))"
                out = f"{t}(({s.args[col]} & {m}) | ({out} & ~{m}))"
            else:
                out = f"({s.args[col]} if {which} else {out})"
        return out

    @staticmethod
    def which(s: LaneSite, k: int) -> str:
        """Whether the lane's k-th spawn is site ``s``'s."""
        return f"_m{s.index}" if len(s.kset) == 1 else f"(_m{s.index} & (_k{s.index} == {k}))"

    def pick_lines(self, k: int, col: str, ind: str) -> tuple[list[str], str]:
        """:meth:`pick` for the buffered lane loop: an integer column's choices as bit
        operations on a mask, ``b ^ ((a ^ b) & -m)``, each into a variable, not ``a if m
        else b``: LLVM turned those nested choices into pairs of masked stores
        (vpmaskmovq), slow on AMD's AVX2 (graphcol numba reexp, AVX2 build on the Zen 4:
        the lane loop held most of the kernel's samples; 0.092 -> 0.071 s).  The lines
        and the value."""
        ty = next(p.ty for p in self.columns if p.name == col)
        if ty.kind not in "iu":
            return [], self.pick(k, col)
        t = np_type(ty, "")
        cand = [s for s in self.sites if k in s.kset]
        out = cand[-1].args[col]
        lines = []
        for s in reversed(cand[:-1]):
            a, nxt = s.args[col], f"_p{k}_{col}_{s.index}"
            lines.append(f"{ind}{nxt} = {t}({t}({out}) ^ (({t}({a}) ^ {t}({out})) & "
                         f"-{t}({self.which(s, k)})))")
            out = nxt
        return lines, out

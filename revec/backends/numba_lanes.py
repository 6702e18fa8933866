"""If-converted lane code for the numba back end: the plan's ``lane-spawns`` step
(conditional spawns without loops: parentheses, graphcol) 32 threads at a time.

Per 32-thread chunk, a lane loop runs the inductive case of each thread with every
``if`` turned into a lane mask (``_c*``): assignments under a mask are selects, every
spawn site records per lane whether it spawned (``m<i>``), the lane's spawn index there
(``k<i>``) and its arguments (``a<i>_<column>``).  Then each child block k gets the
lanes whose k-th spawn happened, in lane (thread) order: the arguments of the site that
made it are selected lane by lane, and each column is appended to the block by one
vector step of :mod:`revec.runtime.compaction.numba_vector` (all 32 lanes spawned: a
copy; none: skipped).  No per-spawn counter in memory and no branch per spawn: the
thread-by-thread kernel's conditional spawns are unpredictable branches and a store /
reload of the child block's count per spawn.

Which statements may run as lane code (if-convertible: expressions under a condition
speculable) and the spawn sites with their spawn indices come from the kernel plan
(revec/transforms/kernel_plan.py); this module only emits them.
"""

from __future__ import annotations

from collections.abc import Callable

from revec import ir
from revec.backends.pyexpr import ExprEmitter, StmtEmitter, np_type, zero_of
from revec.transforms import kernel_plan as kp

LANES = kp.LANES


class LaneBody:
    """The numba statements of one lane (``u``) of if-converted code."""

    def __init__(self, expr: ExprEmitter, var: Callable[[str], str],
                 columns: tuple[ir.Param, ...], fields: tuple[ir.Param, ...],
                 invariant: frozenset[str], sites: tuple[kp.SpawnSite, ...],
                 reduce: Callable[[ir.Reduce, str], list[str]],
                 stmt: StmtEmitter) -> None:
        self.expr = expr
        self.var = var
        self.columns = columns
        self.fields = fields
        self.invariant = invariant
        self.sites = sites
        self.reduce = reduce
        self.stmt = stmt
        self.nsites = 0
        self.nconds = 0

    def run(self, stmts: tuple[ir.Stmt, ...], ind: str) -> list[str]:
        lines = [f"{ind}_k = 0  # this lane's next spawn index"] if self.sites else []
        return lines + self.block(stmts, ind, None, frozenset({0}))

    def truth(self, c: ir.Expr) -> str:
        text = self.expr(c)
        return f"({text})" if c.ty.kind == "b" else f"(({text}) != 0)"

    def block(self, stmts: tuple[ir.Stmt, ...], ind: str, pc: str | None,
              kset: frozenset[int]) -> list[str]:
        out: list[str] = []
        for s in stmts:
            match s:
                case ir.Assign(target=t, value=v):
                    val = self.expr(v)
                    out.append(f"{ind}{self.var(t)} = {val}" if pc is None else
                               f"{ind}{self.var(t)} = ({val}) if {pc} else {self.var(t)}")
                case ir.Spawn(args=args):
                    site = self.sites[self.nsites]
                    assert site.kset == kset, "lane code disagrees with the kernel plan"
                    self.nsites += 1
                    i = site.index
                    vals = [self.expr(a) for a, p in zip(args, self.fields)
                            if p.name not in self.invariant]
                    out.append(f"{ind}m{i}[u] = {pc if pc is not None else '1'}")
                    if len(self.sites) > 1:
                        out.append(f"{ind}k{i}[u] = _k")
                    out += [f"{ind}a{i}_{p.name}[u] = {v}" for p, v in zip(self.columns, vals)]
                    if len(self.sites) > 1:
                        out.append(f"{ind}_k += m{i}[u]")
                    kset = (kset | {k + 1 for k in kset}) if pc is not None else \
                        frozenset(k + 1 for k in kset)
                case ir.Reduce():
                    if pc is None:
                        out += self.reduce(s, ind)
                    else:
                        out += [f"{ind}if {pc}:", *self.reduce(s, ind + "    ")]
                case ir.If(cond=c, then=a, orelse=b):
                    n = self.nconds
                    self.nconds += 2
                    cond = self.truth(c)
                    here = f"{pc} & " if pc is not None else ""
                    out.append(f"{ind}_c{n} = {here}{cond}")
                    out.append(f"{ind}_c{n + 1} = {here}(not {cond})")
                    out += self.block(a, ind, f"_c{n}", kset)
                    ka = self._kset_after(a, kset)
                    kb = self._kset_after(b, kset)
                    out += self.block(b, ind, f"_c{n + 1}", kset)
                    kset = ka | kb
                case _:  # a top-level unpack / expression statement
                    out += self.stmt.stmt(s, ind, 0)
        return out

    @staticmethod
    def _kset_after(stmts: tuple[ir.Stmt, ...], kset: frozenset[int]) -> frozenset[int]:
        """The spawn indices possible after conditional ``stmts`` (every site in them is
        conditional)."""
        for s in stmts:
            match s:
                case ir.Spawn():
                    kset = kset | {k + 1 for k in kset}
                case ir.If(then=a, orelse=b):
                    kset = LaneBody._kset_after(a, kset) | LaneBody._kset_after(b, kset)
        return kset


def scratch(sites: tuple[kp.SpawnSite, ...], columns: tuple[ir.Param, ...],
            ind: str) -> list[str]:
    """The per-lane arrays of the spawn sites and of the selected children."""
    L: list[str] = []
    for s in sites:
        L.append(f"{ind}m{s.index} = np.zeros({LANES}, np.uint8)")
        if len(sites) > 1:
            L.append(f"{ind}k{s.index} = np.zeros({LANES}, np.uint8)")
        L += [f"{ind}a{s.index}_{p.name} = np.zeros({LANES}, {np_type(p.ty)})"
              for p in columns]
    if any(len([s for s in sites if k in s.kset]) > 1 or len(s.kset) > 1
           for s in sites for k in s.kset):
        L.append(f"{ind}mk = np.zeros({LANES}, np.uint8)")
        L += [f"{ind}ak_{p.name} = np.zeros({LANES}, {np_type(p.ty)})" for p in columns]
    return L


def append_children(sites: tuple[kp.SpawnSite, ...], blocks: tuple[int, ...],
                    columns: tuple[ir.Param, ...], compress: Callable[[ir.Ty], str],
                    dst: Callable[[int], str], count: Callable[[int], str],
                    ind: str) -> list[str]:
    """Each child block's new children of a 32-lane chunk, appended at its count."""
    L: list[str] = []
    for k in blocks:
        ks = [s for s in sites if k in s.kset]
        if len(ks) == 1 and len(ks[0].kset) == 1:  # one site, always spawn index k
            i = ks[0].index
            mask, src = f"m{i}", f"a{i}_"
        else:
            L.append(f"{ind}for u in range({LANES}):")
            sel = [f"m{s.index}[u] & (k{s.index}[u] == {k})" if len(s.kset) > 1
                   else f"m{s.index}[u] != 0" for s in ks]
            L += [f"{ind}    s{n} = {x}" for n, x in enumerate(sel)]
            L.append(f"{ind}    mk[u] = {' | '.join(f's{n}' for n in range(len(ks)))}")
            for p in columns:
                pick = f"a{ks[-1].index}_{p.name}[u]"
                for n in range(len(ks) - 2, -1, -1):
                    pick = f"a{ks[n].index}_{p.name}[u] if s{n} else {pick}"
                L.append(f"{ind}    ak_{p.name}[u] = {pick}")
            mask, src = "mk", "ak_"
        L += [f"{ind}bits = movemask32({mask}, 0)",
              f"{ind}_at = {dst(k)}",
              f"{ind}if bits == {(1 << LANES) - 1}:"]
        L += [f"{ind}    copy32({src}{p.name}, 0, c_{p.name}, _at)" for p in columns]
        L.append(f"{ind}elif bits != 0:")
        L += [f"{ind}    {compress(p.ty)}({src}{p.name}, 0, bits, c_{p.name}, _at)"
              for p in columns]
        L.append(f"{ind}{count(k)} += popcount32(bits)")
    return L


def lane_spawns(step: kp.LaneSpawns, expr: ExprEmitter, var: Callable[[str], str],
                columns: tuple[ir.Param, ...], fields: tuple[ir.Param, ...],
                invariant: frozenset[str], locals_: dict[str, ir.Ty],
                loads: list[str], reduce: Callable[[ir.Reduce, str], list[str]],
                stmt: StmtEmitter, compress: Callable[[ir.Ty], str]) -> list[str]:
    """The full 32-thread chunks of the inductive case (``j0`` advances past them)."""
    L = ["    # inductive case, 32 threads at a time as if-converted lane code (the plan's",
         "    # lane-spawns step; revec/backends/numba_lanes.py); the rest thread by thread"]
    L += scratch(step.sites, columns, "    ")
    L += [f"    while j0 + {LANES} <= ni:", f"        for u in range({LANES}):",
          "            j = j0 + u"]
    L += [f"            {x}" for x in loads]
    L += [f"            {var(n)} = {zero_of(ty)}" for n, ty in sorted(locals_.items())]
    body = LaneBody(expr, var, columns, fields, invariant, step.sites, reduce, stmt)
    L += body.run(step.stmts, "            ")
    L += append_children(step.sites, step.child_blocks, columns, compress,
                         lambda k: f"out_base + {k} * n + kcnt[{k}]",
                         lambda k: f"kcnt[{k}]", "        ")
    L.append(f"        j0 += {LANES}")
    return L

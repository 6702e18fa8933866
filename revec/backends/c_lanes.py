"""The inductive case 32 threads at a time, if-converted, for the C back end.

Spawns under conditions give each thread its own spawn indices: a thread's k-th spawn
goes to child block k, whatever site made it.  Executed thread by thread, every spawn
bumps a per-block counter in memory, a dependency chain through the store buffer.
For inductive cases without loops, this module instead runs the body for 32 threads
in lock step as straight-line code over arrays (which gcc vectorizes): every ``if`` is
if-converted into a lane mask, every spawn site records, per lane, whether it spawned,
its arguments and its spawn index; then, per child block k, the lanes whose k-th spawn
it is (from whichever site) are appended with the table-driven compaction (one vector
step per column per block), their arguments selected from that site.

Children inside a child block keep the thread-by-thread order, so results are those of
the thread-by-thread kernel.  With the plan's children by spawn site
(:func:`site_chunk_loop`, technique ``site_blocks``) each site appends its lanes to the
child block of their spawn index straight from its columns' sources: every block holds
the same children, ordered by chunk and then site.  Expressions that only some
threads would evaluate (under a condition) are evaluated by all 32 lanes, so they must
be free of side effects and of memory reads: array reads, helper and library calls
under a condition make a body ineligible (it then runs thread by thread); the kernel
plan (revec/transforms/kernel_plan.py) decides which steps run as lane code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from revec import ir
from revec.backends.c_stmts import CStmts
from revec.emit.cexpr import blend, ctype, select_one
from revec.emit.names import var
from revec.emit.writer import at
from revec.transforms import lanes
from revec.transforms.kernel_plan import LANES, LoopIterate, LoopPrefix, SiteBlocks, heavy_loop_body
from revec.transforms.lanes import LaneBody, SpawnSite

# A partial chunk of phase B with at least this many lanes runs the 32-lane code on
# clamped copies when its lane body calls a library function (LoopEmitter.chunk); fewer
# run scalar.  For uts's SHA-1 a scalar pass of 8 lanes costs about what 32 vectorized
# lanes do.
CLAMP_MIN_LANES = 8


@dataclass
class LaneCode:
    lines: list[str]
    sites: tuple[SpawnSite, ...]
    leaves: frozenset[int] = frozenset()  # the sites with leaf inlining


def set_var(ind: str, target: str, val: str, guard: int | None, ty: ir.Ty) -> str:
    """A lane's assignment ``v_<target> = val``, under the lane condition ``_c<guard>``
    if any: a branch-free blend for integers and booleans, a select otherwise."""
    if guard is None:
        return f"{ind}v_{target} = {val};"
    if ty.kind in "iub":
        return f"{ind}v_{target} = {blend(f'(_c{guard})', f'({val})', f'v_{target}', ty)};"
    return f"{ind}v_{target} = (_c{guard}) ? ({val}) : v_{target};"


def lane_loop(ind: str, loads: list[str], code: LaneCode, ends: list[str] | None) -> list[str]:
    """One chunk's loop over its 32 lanes: the lane's loads, its lane code, then ``ends``
    (the lane's own accumulators merged)."""
    return ["#pragma GCC ivdep", f"{ind}for (int u = 0; u < {LANES}; u++) {{",
            *[f"{ind}    {x}" for x in loads], *[f"    {x}" for x in code.lines],
            *[f"{ind}    {x}" for x in ends or ()], f"{ind}}}"]


def lane_code(body: LaneBody, ind: str, expr: Callable[[ir.Expr], str],
              reduce: Callable[[ir.Reduce, str, str | None], list[str]],
              stmt: Callable[[ir.Stmt, str], list[str]],
              staged: frozenset[tuple[int, str]] | None = None,
              flag: str = "uint8_t") -> LaneCode:
    """The C of an if-converted body (revec/transforms/lanes.py) for lane ``u`` of a
    32-thread chunk: ``_c<n>`` lane conditions, site ``i`` storing ``m<i>[u]`` (the lane
    makes it), ``k<i>[u]`` (its spawn index there) and ``a<i>_<column>[u]``.  Each
    operation's lines are tagged with its statement's source position.  ``staged``
    (children by site, :func:`site_chunk_loop`): only these (site, column) arguments are
    stored, and no spawn index (the sites' masks give it).  ``flag``: the C type of the
    lane conditions and spawn indices (the plan's ``wide_flags``: ``uint32_t``)."""
    out = ([] if staged is not None
           else [f"{ind}int _k = 0;  /* this lane's next spawn index */"])
    for op in body.ops:
        lines: list[str] = []
        match op:
            case lanes.SetVar(target=t, value=v, guard=g):
                lines.append(set_var(ind, t, expr(v), g, v.ty))
            case lanes.MakeSpawn(site=site, guard=g, args=args, leaf=lf):
                i = site.index
                lines.append(f"{ind}m{i}[u] = {'1' if g is None else f'_c{g}'};")
                if lf is not None:  # the child ran here (leaf inlining)
                    lines.append(f"{ind}l{i}[u] = _c{lf};")
                if staged is not None:
                    lines += [f"{ind}a{i}_{c}[u] = {expr(a)};" for c, a in args
                              if (i, c) in staged]
                else:
                    lines.append(f"{ind}k{i}[u] = ({flag})_k;")
                    lines += [f"{ind}a{i}_{c}[u] = {expr(a)};" for c, a in args]
                    lines.append(f"{ind}_k += m{i}[u];")
            case lanes.Fold(stmt=r, guard=g):
                lines += reduce(r, ind, None if g is None else f"_c{g}")
            case lanes.Cond(index=n, cond=c, guard=g, negate=neg):
                here = "" if g is None else f"(_c{g}) && "
                lines.append(f"{ind}RV_MAYBE_UNUSED {flag} _c{n} = {here}{'!' if neg else ''}"
                             f"({expr(c)});")
            case lanes.Plain(stmt=s):
                lines += stmt(s, ind)  # top-level unpack / expression statement
        out += at(op.loc, lines)
    return LaneCode(out, body.sites, frozenset(
        op.site.index for op in body.ops if isinstance(op, lanes.MakeSpawn)
        and op.leaf is not None))


def chunk_loop(code: LaneCode, columns: tuple[ir.Param, ...], loads: list[str],
               ind: str, child_blocks: tuple[int, ...], ends: list[str] | None = None
               ) -> list[str]:
    """The loop over full 32-thread chunks of the inductive threads: per-lane code, then
    each child block's new children appended by compaction steps.

    ``loads`` sets the lane's own frame fields and locals (afresh in every lane, so the
    lane loop carries no dependence; ``j``, the lane's thread, where a field is
    loaded).  A step stores 32 elements at the block's end.  A block gets at most one child per thread, so before a step it holds at most j0
    children and the store ends before j0 + 32 <= ni; the slack after each block
    (RV_SLACK) serves the lock-step loops below and the thread-by-thread tail."""
    L = [f"{ind}for (; j0 + {LANES} <= ni; j0 += {LANES}) {{"]
    i2 = ind + "    "
    for s in code.sites:
        L.append(f"{i2}RV_MAYBE_UNUSED uint8_t m{s.index}[{LANES}], k{s.index}[{LANES}];")
        if s.index in code.leaves:
            L.append(f"{i2}uint8_t l{s.index}[{LANES}];")
        L += [f"{i2}{ctype(p.ty)} a{s.index}_{p.name}[{LANES}];" for p in columns]
    L += lane_loop(i2, loads, code, ends)
    # child block k: the lanes whose k-th spawn happened, each with the arguments of the
    # site that made it (a blend over the sites that can make a k-th spawn), appended
    # with one compaction step per column
    for k in child_blocks:  # (the plan's: every spawn index a lane can have)
        sites = [st for st in code.sites if k in st.kset]
        leafy = [n for n, st in enumerate(sites) if st.index in code.leaves]
        L.append(f"{i2}{{")
        L.append(f"{i2}    uint8_t mk[{LANES}];")
        if leafy:
            L.append(f"{i2}    uint8_t lk[{LANES}];")
        L += [f"{i2}    {ctype(p.ty)} ak_{p.name}[{LANES}];" for p in columns]
        L.append("#pragma GCC ivdep")
        L.append(f"{i2}    for (int u = 0; u < {LANES}; u++) {{")
        sel = [f"(m{st.index}[u] & (k{st.index}[u] == {k}))" if len(st.kset) > 1
               else f"m{st.index}[u]" for st in sites]
        L += [f"{i2}        uint8_t s{n} = {x};" for n, x in enumerate(sel)]
        # leaf inlining: a site's lanes whose child ran in the lane are counted, not kept
        kept = [f"(s{n} & !l{sites[n].index}[u])" if n in leafy else f"s{n}"
                for n in range(len(sel))]
        L.append(f"{i2}        mk[u] = {' | '.join(kept)};")
        if leafy:
            L.append(f"{i2}        lk[u] = "
                     f"{' | '.join(f'(s{n} & l{sites[n].index}[u])' for n in leafy)};")
        for p in columns:
            if p.ty.kind in "iub" and len(sites) > 1:  # at most one site makes it
                pick = select_one([f"s{n}" for n in range(len(sites))],
                                  [f"a{st.index}_{p.name}[u]" for st in sites], p.ty)
            else:
                pick = f"a{sites[-1].index}_{p.name}[u]"
                for n in range(len(sites) - 2, -1, -1):
                    pick = f"(s{n} ? a{sites[n].index}_{p.name}[u] : {pick})"
            L.append(f"{i2}        ak_{p.name}[u] = {pick};")
        L.append(f"{i2}    }}")
        L.append(f"{i2}    uint32_t b = rv_bits32(mk); int64_t d = out_base + {k} * ns;")
        for p in columns:
            w = 8 * p.ty.dtype.itemsize
            L.append(f"{i2}    RV_STEP{w}((const uint{w}_t *)ak_{p.name}, "
                     f"(uint{w}_t *)(p_{p.name} + d), kc[{k}], b);")
        L.append(f"{i2}    kc[{k}] += __builtin_popcount(b);")
        if leafy:
            L.append(f"{i2}    klf[{k}] += __builtin_popcount(rv_bits32(lk));")
        L.append(f"{i2}}}")
    L.append(f"{ind}}}")
    return L


def site_chunk_loop(code: LaneCode, by_site: SiteBlocks, columns: tuple[ir.Param, ...],
                    fills: dict[tuple[int, str], str], loads: list[str], ind: str,
                    staged_step: Callable[[int], str], ends: list[str] | None = None
                    ) -> list[str]:
    """The loop over full 32-thread chunks with the children written by spawn site (the
    plan's :class:`SiteBlocks`): the lane code stores each site's mask bytes and only
    the arguments it computes per lane; then, per (site s, spawn index k), the lanes
    that make site s as their k-th spawn (the site's 32-bit mask and'ed with ``e<k>``,
    the lanes with k spawns before it, bit-sliced counters over the sites in order) are
    appended to child block k, each column from its source: the inductive threads'
    copy (``qp_``), 32 copies of a block-wide value (``fl<s>_<column>``, ``fills``: its
    C expression, filled before the loop) or the staged lane array.  Each lane adds at
    most one child to a block per chunk, so a block's 32-element stores end before
    j0 + 64 <= ni + RV_SLACK."""
    i2 = ind + "    "
    L = [f"{ind}/* children by spawn site: m<s> site s's lanes, e<k> the lanes with k spawns",
         f"{ind}   before it, n<k> child block k's count, fl<n>_<col> 32 copies of a value */"]
    fill: dict[tuple[int, str], str] = {}  # (site, column) -> its array
    named: dict[tuple[str, str], str] = {}  # (column, value) -> its array
    for (s, c), value in fills.items():  # block-wide values, 32 copies
        p = next(p for p in columns if p.name == c)
        if (c, value) not in named:
            named[c, value] = f"fl{len(named)}_{c}"
            L += [f"{ind}{ctype(p.ty)} {named[c, value]}[{LANES}];",
                  f"{ind}for (int u = 0; u < {LANES}; u++) {named[c, value]}[u] = {value};"]
        fill[s, c] = named[c, value]
    blocks = sorted({k for _, k in by_site.pairs})
    # the child blocks' counts in registers during the loop (kc's stores and the
    # columns' may alias)
    L += [f"{ind}int64_t n{k} = kc[{k}];" for k in blocks]
    L.append(f"{ind}for (; j0 + {LANES} <= ni; j0 += {LANES}) {{")
    for st in code.sites:
        L.append(f"{i2}uint8_t m{st.index}[{LANES}];")
        if st.index in code.leaves:
            L.append(f"{i2}uint8_t l{st.index}[{LANES}];")
        L += [f"{i2}{ctype(p.ty)} a{st.index}_{p.name}[{LANES}];" for p in columns
              if by_site.source(st.index, p.name) == "lane"]
    L += lane_loop(i2, loads, code, ends)
    top = max(k for _, k in by_site.pairs)
    # e<k>: the lanes that made k spawns before the current site
    L.append(f"{i2}uint32_t e0 = 0xFFFFFFFFu" + "".join(f", e{k} = 0" for k in range(1, top + 1))
             + ";")
    L.append(f"{i2}(void)e0;")
    for st in code.sites:
        i = st.index
        L.append(f"{i2}{{ const uint32_t b = rv_bits32(m{i});")
        if i in code.leaves:
            L.append(f"{i2}  const uint32_t lb = rv_bits32(l{i});")
        for s, k in by_site.pairs:
            if s != i:
                continue
            L.append(f"{i2}  {{ uint32_t w = b & e{k};")
            if i in code.leaves:  # children that ran in the lane: counted, not written
                L.append(f"{i2}    klf[{k}] += __builtin_popcount(w & lb); w &= ~lb;")
            L.append(f"{i2}    if (w) {{ int64_t d = out_base + {k} * ns;")
            for p in columns:
                w = 8 * p.ty.dtype.itemsize
                src = by_site.source(i, p.name)
                if src == "fill":
                    L.append(f"{i2}      memcpy(p_{p.name} + d + n{k}, {fill[i, p.name]}, "
                             f"sizeof({fill[i, p.name]}));")
                    continue
                x = (f"qp_{p.name} + j0" if src == "input" else f"a{i}_{p.name}")
                mac = f"RV_STEP{w}" if src == "input" else staged_step(w)
                L.append(f"{i2}      {mac}((const uint{w}_t *)({x}), "
                         f"(uint{w}_t *)(p_{p.name} + d), n{k}, w);")
            L.append(f"{i2}      n{k} += __builtin_popcount(w); }}")
            L.append(f"{i2}  }}")
        if st is not code.sites[-1]:  # the lanes making this site have one spawn more
            for k in range(top, 0, -1):
                L.append(f"{i2}  e{k} = (e{k} & ~b) | (e{k - 1} & b);")
            L.append(f"{i2}  e0 &= ~b;")
        L.append(f"{i2}}}")
    L.append(f"{ind}}}")
    L += [f"{ind}kc[{k}] = n{k};" for k in blocks]
    return L


def count_lane_code(body: LaneBody, ind: str, expr: Callable[[ir.Expr], str],
                    reduce: Callable[[ir.Reduce, str, str | None], list[str]],
                    stmt: Callable[[ir.Stmt, str], list[str]], once: frozenset[str],
                    cond_type: str) -> list[str]:
    """The C of an if-converted body with leaf inlining for one thread whose children
    are all leaves (site_leaves decided once per block, kernel_plan.SiteLeaves): as
    :func:`lane_code`, but a spawn only adds one to the thread's spawn count ``_ns``
    (its child ran in the lane: the leaf's base case, its lines before the spawn), a
    child's is-base test is its spawn's condition (it holds for the block), the child's
    lane variables ``once`` (set once per block) are not set per lane, and the lane
    conditions are ``cond_type`` (the width of the loaded columns: gcc vectorizes the
    loop without packing 64-bit compares into bytes and widening them back)."""
    leaf = {op.leaf for op in body.ops if isinstance(op, lanes.MakeSpawn)
            and op.leaf is not None}
    # (the spawn count as wide as the conditions, unless it could wrap)
    nt = cond_type if len(body.sites) < 1 << 7 else "int64_t"
    out = [f"{ind}{nt} _ns = 0;  /* this thread's spawns (children, all leaves) */"]
    for op in body.ops:
        lines: list[str] = []
        match op:
            case lanes.SetVar(target=t) if t in once:
                pass
            case lanes.SetVar(target=t, value=v, guard=g):
                lines.append(set_var(ind, t, expr(v), g, v.ty))
            case lanes.MakeSpawn(guard=g):
                lines.append(f"{ind}_ns += {'1' if g is None else f'_c{g}'};")
            case lanes.Fold(stmt=r, guard=g):
                lines += reduce(r, ind, None if g is None else f"_c{g}")
            case lanes.Cond(index=n, guard=g) if n in leaf:  # the child is a leaf
                lines.append(f"{ind}RV_MAYBE_UNUSED {cond_type} _c{n} = "
                             f"{'1' if g is None else f'_c{g}'};")
            case lanes.Cond(index=n, cond=c, guard=g, negate=neg):
                here = "" if g is None else f"(_c{g}) && "
                lines.append(f"{ind}RV_MAYBE_UNUSED {cond_type} _c{n} = {here}"
                             f"{'!' if neg else ''}({expr(c)});")
            case lanes.Plain(stmt=s):
                lines += stmt(s, ind)
        out += at(op.loc, lines)
    return out


def leaf_count_loop(lines: list[str], by_site: SiteBlocks, loads: list[str], ind: str,
                    ends: list[str] | None = None) -> list[str]:
    """The loop over every inductive thread of a block whose children are all leaves
    (:func:`count_lane_code`'s ``lines``; gcc vectorizes it): child block k's inlined
    leaves are the threads with more than k spawns (a thread's k-th spawn goes to child
    block k); nothing is written, so no thread is left to the thread-by-thread loop
    (``j0 = ni``)."""
    blocks = sorted({k for _, k in by_site.pairs})
    L = [f"{ind}int64_t nl{k} = 0;" for k in blocks]
    L += ["#pragma GCC ivdep", f"{ind}for (int64_t j = 0; j < ni; j++) {{",
          *[f"{ind}    {x}" for x in loads], *[f"    {x}" for x in lines],
          *[f"{ind}    {x}" for x in ends or ()],
          *[f"{ind}    nl{k} += _ns > {k};" for k in blocks], f"{ind}}}"]
    L += [f"{ind}klf[{k}] += nl{k};" for k in blocks]
    L.append(f"{ind}j0 = ni;")
    return L


# ---------------------------------------------------------------- loops of spawns
@dataclass
class StateVar:
    name: str      # C variable
    ctype: str


class LoopEmitter:
    """The inductive case of a :class:`SpawnLoop`, iterations in lock step.

    Phase A runs the prefix thread by thread and keeps the threads whose loop runs at
    least once (their loop state: the fields and locals the loop uses) in a dense
    active list.  Phase B runs one iteration of all active threads per pass, 32 at a
    time as if-converted lane code: iteration ``it`` writes child block ``it`` (one
    child per active thread: dense when the body has one spawn site), and the threads
    whose loop goes on are compacted into the next active list."""

    def __init__(self, gen: Any, prefix: LoopPrefix, iterate: LoopIterate,
                 columns: tuple[ir.Param, ...], dynamic: bool) -> None:
        self.gen = gen
        self.prefix_step = prefix
        self.iterate_step = iterate
        self.shape = prefix.shape
        self.columns = columns
        self.dynamic = dynamic
        assert not iterate.by_index, "the C kernels carry every state field"
        # phase B stages every lane's whole state and compacts it into the next list
        assert iterate.updated == tuple(c.name for c in iterate.state)
        assert iterate.lanes == LANES and iterate.body is not None
        self.state = [StateVar(c.name if c.name == "_stop" else var(c.name),
                               "int64_t" if c.name == "_stop" else ctype(c.ty))
                      for c in prefix.state]
        self.var = var

    # -- static scratch (two active lists, ping-pong)
    def globals(self) -> list[str]:
        L = [f"static RV_TLS {s.ctype} *sa_{s.name}, *sb_{s.name};" for s in self.state]
        L += ["static RV_TLS int64_t state_cap;",
              "static void grow_state(int64_t n) {",
              "    if (n <= state_cap) return;"]
        for s in self.state:
            L += [f"    sa_{s.name} = ({s.ctype} *)rv_realloc(sa_{s.name}, n * sizeof({s.ctype}));",
                  f"    sb_{s.name} = ({s.ctype} *)rv_realloc(sb_{s.name}, n * sizeof({s.ctype}));"]
        L += ["    state_cap = n;", "}"]
        return L

    def free(self) -> list[str]:
        return [f"    free(sa_{s.name}); free(sb_{s.name}); sa_{s.name} = sb_{s.name} = NULL;"
                for s in self.state] + ["    state_cap = 0;"]

    def cont(self) -> str:
        """The loop condition after (or before) an iteration, over the lane's state."""
        loop = self.shape.loop
        if isinstance(loop, ir.While):
            return self.gen.expr(loop.cond)
        i = self.var(loop.var)
        assert isinstance(loop.step, ir.Const), "a lock-step loop's step is a constant"
        return f"({i} < _stop)" if loop.step.value > 0 else f"({i} > _stop)"

    def emit_prefix(self, ind_used: set[str]) -> list[str]:
        """Phase A (the plan's :class:`LoopPrefix` step)."""
        gen, var = self.gen, self.var
        loop = self.shape.loop
        L = ["    /* phase A: the prefix per thread; threads entering the loop -> active list */",
             "    grow_state(ni + 32);",
             "    int64_t na = 0;"]
        L += [f"    {s.ctype} *sc_{s.name} = sa_{s.name}, *sn_{s.name} = sb_{s.name};"
              for s in self.state]
        L.append("    int64_t j0 = 0;")
        if self.prefix_step.lanes > 1:
            L += self.prefix_chunks(ind_used)
        L.append("    for (int64_t j = j0; j < ni; j++) {  /* the rest, thread by thread */")
        L += [f"        {var(p.name)} = qp_{p.name}[j];" for p in self.columns
              if p.name in ind_used]
        if isinstance(loop, ir.For):
            L.append("        int64_t _stop;")
        L += CStmts(gen, "kernel").block(self.shape.prefix, "        ")
        if isinstance(loop, ir.For):
            L += at(loop.loc, [f"        {var(loop.var)} = {gen.expr(loop.start)};",
                               f"        _stop = {gen.expr(loop.stop)};"])
        L += [f"        sc_{s.name}[na] = {s.name};" for s in self.state]
        L += at(loop.loc, [f"        na += ({self.cont()}) ? 1 : 0;"])
        L.append("    }")
        return L

    def emit_iterate(self) -> list[str]:
        """Phase B (the plan's :class:`LoopIterate` step)."""
        L = ["    /* phase B: iteration it of every active thread makes its spawn it */",
              "    for (int64_t it = 0; na > 0; it++) {",
              "        kused = it + 1;"]
        if self.dynamic:
            L += ["        if (kused > kcap_alloc || out_base + kused * ns > cap_frames) {",
                  "            grow_children(out_base + 2 * kused * ns, 2 * kused);",
                  *[f"            p_{p.name} = c_{p.name};" for p in self.columns],
                  "            kc = kcnt;",
                  "        }"]
        L.append("        int64_t d = out_base + it * ns, nn = 0, a = 0;")
        body = self.shape.loop.body
        clamped = heavy_loop_body(body)
        if clamped:
            # a last partial chunk of CLAMP_MIN_LANES or more runs 32 lanes, those past
            # the list's end copies of its last thread: the list's tail holds them (room:
            # grow_state(ni + 32)), so every chunk's lanes load contiguously (clamped
            # indices made gcc gather every state column, 64-bit indices: 40 vpgather
            # in uts's kernel, about 9% of its samples)
            end = f"((na + {LANES - 1}) & ~(int64_t){LANES - 1})"
            L += [f"        if (na % {LANES} >= {CLAMP_MIN_LANES})",
                  f"            for (int64_t z = na; z < {end}; z++) {{",
                  *[f"                sc_{s.name}[z] = sc_{s.name}[na - 1];"
                    for s in self.state],
                  "            }"]
        L += [f"        for (; a < na; a += {LANES}) {{",
              f"            int lanes = na - a < {LANES} ? (int)(na - a) : {LANES};"]
        if not clamped:
            # copies of a lane would reduce twice; a body without a library call (cheap
            # lanes) keeps the vectorized partial loop: 32 clamped lanes for a chunk of
            # 8 made nqueens and minmax about 3x slower
            L += [f"            if (lanes == {LANES}) {{"]
            L += self.chunk("                ", "full")
            L += ["            } else {"]
            L += self.chunk("                ", "partial")
        else:
            L += [f"            if (lanes >= {CLAMP_MIN_LANES}) {{"]
            L += self.chunk("                ", "clamped")
            L += ["            } else {"]
            L += self.chunk("                ", "scalar")
        L += ["            }", "        }"]
        L += [f"        {{ {s.ctype} *x = sc_{s.name}; sc_{s.name} = sn_{s.name}; "
              f"sn_{s.name} = x; }}" for s in self.state]
        L += ["        na = nn;", "    }"]
        return L

    def prefix_chunks(self, ind_used: set[str]) -> list[str]:
        """Phase A for 32 threads at a time when the prefix is if-convertible: the prefix
        as lane code (gcc vectorizes it), then each state column of the threads entering
        the loop appended to the active list with one compaction step.  Thread by thread,
        phase A took about 37% of minmax's kernel (perf, B = 2^13): four scalar stores
        per thread and the active lists' pointers reloaded from the stack."""
        gen, var = self.gen, self.var
        loop = self.shape.loop
        assert self.prefix_step.body is not None
        code = lane_code(self.prefix_step.body, "            ", gen.expr, gen.lane_reduce,
                         CStmts(gen, "kernel").stmt)
        L = ["    for (; j0 + 32 <= ni; j0 += 32) {",
             f"        uint8_t go[{LANES}];"]
        L += [f"        {s.ctype} x_{s.name}[{LANES}];" for s in self.state]
        L.append("#pragma GCC ivdep")
        L.append(f"        for (int u = 0; u < {LANES}; u++) {{")
        # the lane's fields and locals: the kernel's variables, assigned afresh per lane
        loads = [f"            {var(p.name)} = qp_{p.name}[j];" for p in self.columns
                 if p.name in ind_used]
        if loads:
            L.append("            int64_t j = j0 + u;")
        L += loads
        L += [f"            {var(n)} = 0;" for n in sorted(gen.t.locals)]
        if isinstance(loop, ir.For):
            L.append("            int64_t _stop;")
        L += code.lines[1:]  # (its first line declares the spawn index: no spawns here)
        if isinstance(loop, ir.For):
            L += at(loop.loc, [f"            {var(loop.var)} = {gen.expr(loop.start)};",
                               f"            _stop = {gen.expr(loop.stop)};"])
        L += at(loop.loc, [f"            go[u] = ({self.cont()}) ? 1 : 0;"])
        L += [f"            x_{s.name}[u] = {s.name};" for s in self.state]
        L += ["        }", "        uint32_t b = rv_bits32(go);"]
        for s in self.state:
            w = _bits(s.ctype)
            L.append(f"        {gen.staged_step(w)}((const uint{w}_t *)x_{s.name}, "
                     f"(uint{w}_t *)sc_{s.name}, na, b);")
        L += ["        na += __builtin_popcount(b);", "    }"]
        return L

    def chunk(self, ind: str, kind: str) -> list[str]:
        """One pass over a chunk of the active threads, ``lanes`` of them (32 at most):
        ``full``, 32 lanes; ``partial``, the last ``lanes`` (gcc vectorizes the loop,
        with a remainder); ``clamped``, 32 lanes computed, those past ``lanes`` copies
        of the last one and discarded; ``scalar``, the last ``lanes``, not vectorized.
        Only the chunk's own lanes store children; the later lanes' ``go`` bytes are 0."""
        full = kind == "full"
        gen, var = self.gen, self.var
        loop = self.shape.loop
        assert self.iterate_step.body is not None
        # the plan's wide_flags: 32-bit flags, so gcc vectorizes the heavy lane body by
        # its 32-bit values (8 lanes per 256-bit vector), not by byte flags (32 lanes:
        # four registers per value, spilled)
        wide = gen.plan.wide_flags and kind in ("clamped", "scalar")
        flag = "uint32_t" if wide else "uint8_t"
        code = lane_code(self.iterate_step.body, ind + "    ", gen.expr, gen.lane_reduce,
                         CStmts(gen, "kernel").stmt, flag=flag)
        L = [f"{ind}{flag} go[{LANES}];"]
        L += [f"{ind}{s.ctype} x_{s.name}[{LANES}];" for s in self.state]
        for site in code.sites:
            L.append(f"{ind}RV_MAYBE_UNUSED {flag} m{site.index}[{LANES}], "
                     f"k{site.index}[{LANES}];")
            L += [f"{ind}{ctype(p.ty)} a{site.index}_{p.name}[{LANES}];" for p in self.columns]
        # A partial chunk does not compute 32 lanes of one: a chunk of one lane is common
        # (uts's root iterates 2,000 times with one active thread), and 32 copies of it
        # made uts T3's root block 3.6 ms of kernel time (0.6 ms now; perf, 2-core AMD
        # EPYC, 2026-11-27), all of it before a second worker can steal.  When the body
        # calls a library function and cannot reduce (a copy of a lane must not reduce
        # again), a partial chunk of 8 lanes or more runs the 32-lane code on clamped
        # copies (``clamped``, as full chunks do) and a smaller one runs a scalar loop:
        # one vectorized copy of the lane body.  A vectorized partial loop with its
        # remainder doubled the body's machine code and gcc's time (uts's module
        # 9.2-10.6 s, 3.9-4.5 s with one copy); a scalar loop for every partial chunk
        # made uts's reexp 22% slower on one worker.  The empty asm (a compiler barrier)
        # keeps gcc from vectorizing the scalar loop (gcc 12 has no per-loop
        # "novector").  Lanes the loop runs are valid or copies, so the lane code needs
        # no predicate.
        computed = "lanes" if kind in ("partial", "scalar") else str(LANES)
        L.append("#pragma GCC ivdep")
        L.append(f"{ind}for (int u = 0; u < {computed}; u++) {{")
        if kind == "scalar":
            L.append(f'{ind}    __asm__ __volatile__("" ::: "memory");  /* not vectorized */')
        # (clamped: the lanes past the chunk's end read the copies of the list's last
        # thread that emit_iterate stored after it)
        L.append(f"{ind}    int64_t q = a + u;")
        # the lane's state and locals: the kernel's variables, assigned afresh per lane
        # (the loop's stop, not a variable of the task, is declared here)
        names = {s.name for s in self.state}
        L += [f"{ind}    {'int64_t ' if s.name == '_stop' else ''}{s.name} = sc_{s.name}[q];"
              for s in self.state]
        L += [f"{ind}    {var(n)} = 0;" for n in sorted(gen.t.locals) if var(n) not in names]
        L += code.lines
        if isinstance(loop, ir.For):
            L += at(loop.loc, [f"{ind}    {var(loop.var)} += {gen.expr(loop.step)};"])
        L += at(loop.loc, [f"{ind}    go[u] = ({self.cont()});"])
        L += [f"{ind}    x_{s.name}[u] = {s.name};" for s in self.state]
        L.append(f"{ind}}}")
        if not full:
            L.append(f"{ind}for (int u = lanes; u < {LANES}; u++) go[u] = 0;")
        stored = str(LANES) if full else "lanes"  # the chunk's own lanes
        # the children: every lane (every valid lane of a partial chunk) makes exactly one
        # spawn in an iteration, so block it gets one child per lane, in lane order: the
        # spawning site's arguments, selected lane by lane (a blend, no compaction)
        L.append(f"{ind}{{ const int64_t at = d + kc[it];")
        for p in self.columns:
            if p.ty.kind in "iub" and len(code.sites) > 1:  # one spawning site per lane
                pick = select_one([f"m{st.index}[u]" for st in code.sites],
                                  [f"a{st.index}_{p.name}[u]" for st in code.sites], p.ty)
            else:
                pick = f"a{code.sites[-1].index}_{p.name}[u]"
                for site in reversed(code.sites[:-1]):
                    pick = f"(m{site.index}[u] ? a{site.index}_{p.name}[u] : {pick})"
            L.append(f"{ind}  for (int u = 0; u < {stored}; u++) p_{p.name}[at + u] = {pick};")
        L.append(f"{ind}}}")
        L.append(f"{ind}kc[it] += {stored};")
        # the threads whose loop goes on
        L.append(f"{ind}{{ uint32_t b = {'rv_bits32w' if wide else 'rv_bits32'}(go);")
        for s in self.state:
            w = _bits(s.ctype)
            L.append(f"{ind}  {gen.staged_step(w)}((const uint{w}_t *)x_{s.name}, "
                     f"(uint{w}_t *)sn_{s.name}, nn, b);")
        L.append(f"{ind}  nn += __builtin_popcount(b); }}")
        return L


def _bits(c_type: str) -> int:
    """The width of a state variable's C type, for its compaction step."""
    return {"int8_t": 8, "uint8_t": 8, "bool": 8, "int16_t": 16, "uint16_t": 16,
            "int32_t": 32, "uint32_t": 32, "float": 32}.get(c_type, 64)

"""Leaf inlining as one pass, for the C back end (the plan's ``CountBase`` step and a
``LaneSpawns`` step with ``fused``; revec/transforms/kernel_plan.py).

With leaf inlining a child that is a base case runs in its parent's lane and is never
written, so no kernel writes a base thread and only the root block can hold one.  The
kernel counts the block's base threads first (the is-base mask and a popcount per 32
threads); a block without any (every block but the root) skips the split and the base
case and its inductive case reads the block's columns in place (in bfs mode from a copy:
the children overwrite the level); the root runs the split and the base case as without
inlining.  Then one pass runs every inductive thread as lane code, 32 at a time, the
last partial step too (its missing lanes make no spawn, so no child is a base case):

- a child block that only one spawn site can fill takes its masks straight from the
  lane code (kept: the lane spawns and the child is not a leaf; inlined: it is), as
  bytes for one movemask each, and that site's argument arrays as the compaction's
  source (no second staging loop, no spawn-index select);
- a child block several sites can fill selects per lane as without inlining;
- a child block needs no slack after it: a full step's compaction stores 32 elements
  from the block's count, at most the step's first thread, so they end before the
  block's inductive threads do; the last partial step stores exactly (branch-free:
  every lane's value, the position advancing past the kept ones);
- integer sums whose values are narrow (a cast of an 8- or 16-bit value, a small
  constant) run in 16- or 32-bit lane sums, merged once per 32 lanes (they cannot
  overflow there), instead of 64-bit ones per lane.

Results, and the statistics the driver derives from the base count, the children
written and the children inlined per child block, are those of the kernel without
inlining (revec/backends/csrc/driver.c counts an inlined leaf as a task and a leaf of
its level).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from revec import ir
from revec.backends.c_lanes import set_var
from revec.backends.c_stmts import CStmts
from revec.emit.cexpr import ctype, literal, select_one, utype
from revec.emit.names import var
from revec.emit.writer import at
from revec.transforms import kernel_plan as kp
from revec.transforms import lanes
from revec.transforms.lanes import LaneBody

W = kp.LANES
# a narrow lane sum (:func:`narrow_sums`) holds at least this many 32-lane steps before
# it is merged (else the merge, a horizontal sum, costs more than the narrow adds save),
# and at most this many (the merge's counter stays small)
MIN_STEPS = 16
MAX_STEPS = 1 << 20


def count_base(gen: Any, step: kp.CountBase, split: kp.Split, base: kp.BaseCase,
               ind: kp.LaneSpawns) -> list[str]:
    """The :class:`kp.CountBase` step, with the split and the base case it guards, and
    the inductive case's column pointers ``in_<column>``."""
    pred = gen.expr(step.mask)
    loads = [c.name for c in step.reads]
    L = ["    /* leaf inlining: no kernel writes a base case, so only the root block holds",
         "       base threads; count them (the is-base mask, a popcount per 32 threads) */",
         "    int64_t nb0 = 0, tc = 0;",
         f"    for (; tc + {step.lanes} <= n; tc += {step.lanes}) {{",
         f"        uint8_t m[{step.lanes}];",
         f"        for (int u = 0; u < {step.lanes}; u++) {{",
         *[f"            {var(c)} = p_{c}[off + tc + u];" for c in loads],
         *at(step.mask.loc, [f"            m[u] = ({pred}) ? 1 : 0;"]),
         "        }",
         "        nb0 += __builtin_popcount(rv_bits32(m));",
         "    }",
         "    for (; tc < n; tc++) {",
         *[f"        {var(c)} = p_{c}[off + tc];" for c in loads],
         *at(step.mask.loc, [f"        nb0 += ({pred}) ? 1 : 0;"]),
         "    }",
         "    if (nb0 != 0) {  /* the root: the split and the base case */"]
    L += ["    " + x if x else x for x in gen.split(split) + gen.base_case(base)]
    cols = [c.name for c in ind.reads]
    L += ["    } else {  /* no base thread: the inductive case reads the block in place */",
          "        ni = n;"]
    if cols:
        L += ["        if (out_base < off + n) {  /* bfs: the children overwrite the level */",
              *[f"            memcpy(qp_{c}, p_{c} + off, n * sizeof(*qp_{c}));" for c in cols],
              "        }"]
    L.append("    }")
    L += [f"    const {ctype(p.ty)} *restrict in_{p.name} = (nb0 != 0 || out_base < off + n) "
          f"? qp_{p.name} : p_{p.name} + off;" for p in gen.bp.columns if p.name in cols]
    return L


def narrow_sums(gen: Any, body: LaneBody, own: tuple[str, ...]
                ) -> dict[str, tuple[str, int]]:
    """The integer sum reducers of ``own`` whose every reduction in ``body`` adds a
    narrow value (a cast of an integer of at most 16 bits, a constant), with the C type
    of their lane sums and how many 32-lane steps those may hold before they are merged
    into the kernel's accumulator (they cannot overflow): 16 bits when at least
    :data:`MIN_STEPS` steps fit, else 32."""
    folds: dict[str, list[ir.Expr]] = {}
    for op in body.ops:
        if isinstance(op, lanes.Fold):
            folds.setdefault(op.stmt.reducer, []).append(op.stmt.value)
    out: dict[str, tuple[str, int]] = {}
    for r in own:
        decl = gen.program.reducers[r]
        if decl.op != "sum" or r not in folds:
            continue
        # (a value of the reducer's type, no narrower than what it casts: its exact
        # sum, taken modulo the reducer's width as it is merged, is the reducer's sum)
        bounds = [_bound(v) if v.ty.dtype == decl.dtype and (
            not isinstance(v, ir.Cast) or v.operand.ty.kind == "b"
            or v.operand.ty.dtype.itemsize <= v.ty.dtype.itemsize) else None
            for v in folds[r]]
        if any(b is None for b in bounds):
            continue
        step = sum(b for b in bounds if b is not None)  # one lane's sum in one step
        if (2 ** 15 - 1) // step >= MIN_STEPS:
            out[r] = ("int16_t", min((2 ** 15 - 1) // step, MAX_STEPS))
        elif (2 ** 31 - 1) // step >= MIN_STEPS:
            out[r] = ("int32_t", min((2 ** 31 - 1) // step, MAX_STEPS))
    return out


def _bound(v: ir.Expr) -> int | None:
    """The largest magnitude of a narrow value (None: not narrow)."""
    match v:
        case ir.Const(value=c) if isinstance(c, int) and not isinstance(c, bool):
            return abs(c) if abs(c) < 2 ** 15 else None
        case ir.Cast(operand=e) if e.ty.kind in "iu" and e.ty.dtype.itemsize <= 2:
            if isinstance(e, ir.Const):
                return _bound(e)
            info = np.iinfo(e.ty.dtype)
            return max(abs(int(info.min)), int(info.max))
        case ir.Cast(operand=e) if e.ty.kind == "b":
            return 1
    return None


def _narrow_value(gen: Any, v: ir.Expr, t: str) -> str:
    if isinstance(v, ir.Cast) and not isinstance(v.operand, ir.Const):
        return f"({t})({gen.expr(v.operand)})"
    c = v.operand.value if isinstance(v, ir.Cast) else v.value  # type: ignore[attr-defined]
    return f"({t})({int(c)})"


def fused_spawns(gen: Any, step: kp.LaneSpawns) -> list[str]:
    """The inductive case of a fused leaf-inlining :class:`kp.LaneSpawns` step."""
    t = gen.t
    f = gen.bp.columns
    sites = step.sites
    # the child blocks one site fills (that site's kset is {k}), and the others
    single: dict[int, int] = {}
    for k in step.child_blocks:
        fill = [st for st in sites if k in st.kset]
        if len(fill) == 1 and fill[0].kset == frozenset({k}):
            single[fill[0].index] = k
    multi = [st for st in sites if st.index not in single]
    leafy = {op.site.index for op in step.body.ops
             if isinstance(op, lanes.MakeSpawn) and op.leaf is not None}
    leaf_blocks = {k for st in sites if st.index in leafy for k in st.kset}
    # a site every lane makes, alone in its child block: its inlined children are the
    # lanes less the children kept (no leaf mask)
    every = {i for i, k in single.items() if i in leafy and not sites[i].conditional}
    # an integer sum of a constant by every inlined leaf of such a site (binomial's
    # reduce(count, 1)): the constant times the site's leaves, once per block
    leaf_site = {op.leaf: op.site.index for op in step.body.ops
                 if isinstance(op, lanes.MakeSpawn) and op.leaf is not None}
    counted: dict[int, tuple[str, int, int]] = {}  # fold's position -> (reducer, c, k)
    for n, op in enumerate(step.body.ops):
        if isinstance(op, lanes.Fold) and op.guard in leaf_site \
                and leaf_site[op.guard] in every:
            decl = gen.program.reducers[op.stmt.reducer]
            v = op.stmt.value
            c = v.operand if isinstance(v, ir.Cast) else v
            if decl.op == "sum" and decl.dtype.kind in "iu" and not decl.bound \
                    and isinstance(c, ir.Const) and isinstance(c.value, int) \
                    and not isinstance(c.value, bool) and v.ty.dtype == decl.dtype:
                counted[n] = (op.stmt.reducer, c.value, single[leaf_site[op.guard]])
    rest = LaneBody(tuple(op for n, op in enumerate(step.body.ops) if n not in counted),
                    step.body.sites)
    own = gen.lane_accumulators(rest)
    sad = byte_sums(gen, step.body, own, set(counted))  # fold position -> byte C type
    sad_red = sorted({step.body.ops[n].stmt.reducer for n in sad})  # type: ignore[union-attr]
    own = tuple(r for r in own if r not in sad_red)
    narrow = narrow_sums(gen, rest, own)
    # child block k's columns every lane's spawn sets alike (level-uniform and invariant
    # values): filled once the block's children are counted, not staged or compacted
    filled = {(k, c): step.fill(src).value for k, c, src in step.sources}
    staged = {st.index: {p.name for p in f if any((k, p.name) not in filled for k in st.kset)}
              for st in sites}

    def fold(s: ir.Reduce, ind: str, pc: str | None) -> list[str]:
        if s.reducer in narrow:
            nt = narrow[s.reducer][0]
            val = _narrow_value(gen, s.value, nt)
            acc = f"_ls_{s.reducer}"
            add = val if pc is None else f"({pc} ? {val} : ({nt})0)"
            return [f"{ind}{acc} = ({nt})({acc} + {add});"]
        return gen.lane_reduce(s, ind, pc, own)

    stmt = CStmts(gen, "kernel").stmt
    ind = "                "
    code = [f"{ind}RV_MAYBE_UNUSED int _k = 0;  /* this lane's next spawn index */"]
    for n, op in enumerate(step.body.ops):
        if n in counted:
            continue
        lines = []
        if n in sad and isinstance(op, lanes.Fold):  # the byte, 0 where it does not reduce
            bt = sad[n]
            val = f"({bt})({gen.expr(_cast_operand(op.stmt.value))})"
            g = op.guard
            lines.append(f"{ind}lv{n}[u] = {val if g is None else f'_c{g} ? {val} : ({bt})0'};")
            code += at(op.loc, lines)
            continue
        match op:
            case lanes.SetVar(target=tv, value=v, guard=g):
                lines.append(set_var(ind, tv, gen.expr(v), g, v.ty))
            case lanes.MakeSpawn(site=site, guard=g, args=args, leaf=lf):
                i = site.index
                m = "1" if g is None else f"_c{g}"
                if i in single:
                    k = single[i]
                    if lf is not None:  # _c<lf>: the lane spawns and the child is a leaf
                        lines.append(f"{ind}mk{k}[u] = {m} & !_c{lf};")
                        if i not in every:
                            lines.append(f"{ind}lk{k}[u] = _c{lf};")
                    else:
                        lines.append(f"{ind}mk{k}[u] = {m};")
                    lines += [f"{ind}a{i}_{c}[u] = {gen.expr(a)};" for c, a in args
                              if c in staged[i]]
                    lines.append(f"{ind}_k += {m};")
                else:
                    lines.append(f"{ind}m{i}[u] = {m};")
                    if lf is not None:
                        lines.append(f"{ind}l{i}[u] = _c{lf};")
                    lines.append(f"{ind}k{i}[u] = (uint8_t)_k;")
                    lines += [f"{ind}a{i}_{c}[u] = {gen.expr(a)};" for c, a in args
                              if c in staged[i]]
                    lines.append(f"{ind}_k += m{i}[u];")
            case lanes.Fold(stmt=r, guard=g):
                lines += fold(r, ind, None if g is None else f"_c{g}")
            case lanes.Cond(index=n, cond=c, guard=g, negate=neg):
                here = "" if g is None else f"(_c{g}) && "
                lines.append(f"{ind}RV_MAYBE_UNUSED uint8_t _c{n} = {here}{'!' if neg else ''}"
                             f"({gen.expr(c)});")
            case lanes.Plain(stmt=s):
                lines += stmt(s, ind)
        code += at(op.loc, lines)
    loads = ["int64_t j = j0 + u;"] if step.reads else []
    loads += [f"{var(c.name)} = in_{c.name}[j];" for c in step.reads]
    loads += [f"{var(n)} = 0;" for n in sorted(t.locals)]
    for r in own:
        loads.append(f"{narrow[r][0]} _ls_{r} = 0;" if r in narrow
                     else gen.lane_accumulator_start(r))
    ends = [f"ps_{r}[u] = ({narrow[r][0]})(ps_{r}[u] + _ls_{r});" if r in narrow
            else gen.lane_accumulator_end(r) for r in own]
    body = [f"{ind}{x}" for x in loads] + code + [f"{ind}{x}" for x in ends]

    # the lane arrays: per site its arguments; per single-site block its masks; per
    # other site its masks and spawn indices
    arrays: list[tuple[str, str]] = []  # (C type, name)
    for st in sites:
        arrays += [(ctype(p.ty), f"a{st.index}_{p.name}") for p in f
                   if p.name in staged[st.index]]
    for i, k in sorted(single.items()):
        arrays.append(("uint8_t", f"mk{k}"))
        if i in leafy and i not in every:
            arrays.append(("uint8_t", f"lk{k}"))
    arrays += [(bt, f"lv{n}") for n, bt in sad.items()]
    for st in multi:
        arrays += [("uint8_t", f"m{st.index}"), ("uint8_t", f"k{st.index}")]
        if st.index in leafy:
            arrays.append(("uint8_t", f"l{st.index}"))
    L = ["    /* inductive case: every inductive thread as lane code, 32 at a time (the",
         "       last partial step too: its missing lanes make no spawn) */",
         "    const int64_t ns = ni + RV_SLACK;  /* stride of the child blocks */"]
    # the children written and inlined per child block, counted in locals
    L += [f"    int64_t nk{k} = 0;" + (f" int64_t nl{k} = 0;" if k in leaf_blocks and not any(
        kk == k and i in every for i, kk in single.items()) else "")
          for k in step.child_blocks]
    L += STEP_MACROS
    if sad:
        L += SAD_MACROS
    for rn in sad_red:  # a byte sum: per 32 lanes a vector sum of absolute differences
        L += [f"    rv_sad_t sa_{rn} = RV_SAD_ZERO;", f"    int64_t sb_{rn} = 0;"]
    for rn, (nt, _) in narrow.items():  # a narrow sum per lane, merged every few steps
        L += [f"    {nt} ps_{rn}[{W}] = {{0}};", f"    int64_t pn_{rn} = 0;"]
    L += lane_steps_open(W, arrays, body)
    for n, bt in sad.items():
        rn = step.body.ops[n].stmt.reducer  # type: ignore[union-attr]
        if bt == "int8_t":  # (biased to unsigned: 128 more per lane)
            L += [f"        sa_{rn} = RV_SAD_ADDS(sa_{rn}, lv{n}); sb_{rn}++;"]
        else:
            L += [f"        sa_{rn} = RV_SAD_ADDU(sa_{rn}, lv{n});"]
    for rn, (nt, steps) in narrow.items():
        L += [f"        if (++pn_{rn} == {steps}) {{",
              *[f"            {x}" for x in _merge(gen, rn, nt)],
              f"            pn_{rn} = 0;", "        }"]
    for k in step.child_blocks:
        L += ["        {"]
        one = next((i for i, kk in single.items() if kk == k), None)
        if one is not None:
            src = {p.name: f"a{one}_{p.name}" for p in f}
            L.append(f"            uint32_t b = rv_bits32(mk{k}); RV_MAYBE_UNUSED int64_t d = out_base + {k} * ns;")
            lk = f"lk{k}" if one in leafy and one not in every else None
        else:
            L += _select(k, [st for st in sites if k in st.kset],
                         tuple(p for p in f if (k, p.name) not in filled), leafy)
            src = {p.name: f"ak_{p.name}" for p in f}
            lk = "lk" if any(st.index in leafy for st in sites if k in st.kset) else None
        cols = [p for p in f if (k, p.name) not in filled]
        mask = f"mk{k}" if one is not None else "mk"
        if cols:
            L.append(f"            if (lanes_ == {W}) {{")
        for p in cols:
            w = 8 * p.ty.dtype.itemsize
            L.append(f"                RV_LSTEP{w}((const uint{w}_t *){src[p.name]}, "
                     f"(uint{w}_t *)(p_{p.name} + d), nk{k}, b);")
        if cols:
            L += ["            } else {  /* exact stores: no slack after the block */",
                  f"                int64_t q = nk{k};",
                  "                for (int u = 0; u < lanes_; u++) {",
                  *[f"                    p_{p.name}[d + q] = {src[p.name]}[u];" for p in cols],
                  f"                    q += {mask}[u] != 0;",
                  "                }", "            }"]
        L.append(f"            nk{k} += __builtin_popcount(b);")
        if lk is not None:
            L.append(f"            nl{k} += __builtin_popcount(rv_bits32({lk}));")
        L.append("        }")
    L.append("    }")
    for rn, (nt, _) in narrow.items():
        L += [f"    {x}" for x in _merge(gen, rn, nt)]
    for rn in sad_red:
        decl = gen.program.reducers[rn]
        ct = ctype(ir.Ty(decl.dtype))
        u = "u" + ct if decl.dtype.kind == "i" else ct
        L.append(f"    la_{rn} = ({ct})(({u})la_{rn} + ({u})(RV_SAD_SUM(sa_{rn}) - "
                 f"INT64_C({128 * W}) * sb_{rn}));")
    for rn, cv, k in counted.values():
        decl = gen.program.reducers[rn]
        ct = ctype(ir.Ty(decl.dtype))
        u = "u" + ct if decl.dtype.kind == "i" else ct
        L.append(f"    la_{rn} = ({ct})(({u})la_{rn} + ({u})({literal(cv, ir.Ty(decl.dtype))}) "
                 f"* ({u})(ni - nk{k}));  /* its constant, once per inlined leaf */")
    for (k, col), fv in filled.items():
        ty = next(p.ty for p in f if p.name == col)
        L += [f"    {{ const {ctype(ty)} _v = {gen.expr(fv)}; {ctype(ty)} *restrict _o = "
              f"p_{col} + out_base + {k} * ns;",
              f"      for (int64_t i = 0; i < nk{k}; i++) _o[i] = _v; }}"]
    for k in step.child_blocks:
        one = next((i for i, kk in single.items() if kk == k), None)
        nl = f"ni - nk{k}" if one in every else f"nl{k}"
        L.append(f"    kc[{k}] += nk{k};" + (f" klf[{k}] += {nl};" if k in leaf_blocks else ""))
    if step.two_levels and not narrow and not counted:
        return two_levels(gen, step, sad, own, L)
    return L


# a full step's compaction: with AVX-512 VBMI2 the compress itself (its kept-all copy
# and kept-none tests are two branches a step; no difference above the noise measured);
# else with them (AVX2's table-driven steps cost more than a copy: binomial(30, 13),
# where most steps keep all, C reexp B = 8192 with -mno-avx512f, 0.86x of inlining off
# without them, 1.20x with them)
STEP_MACROS = [
    "#ifndef RV_LSTEP8",
    "#if REVEC_X86 && defined(__AVX512VBMI2__) && defined(__AVX512VL__) && "
    "defined(__AVX512BW__)",
    *[f"#define RV_LSTEP{w}(x, o, j, b) RV_CSTEP{w}(x, o, j, b)" for w in (8, 16, 32, 64)],
    "#else",
    *[f"#define RV_LSTEP{w}(x, o, j, b) RV_STEP{w}(x, o, j, b)" for w in (8, 16, 32, 64)],
    "#endif",
    "#endif",
]

# byte sums (:func:`byte_sums`): a vector of four 64-bit sums per reducer, each step
# adding a 32-byte array's sum of absolute differences from zero (a signed byte biased by
# 128); elsewhere a scalar loop
SAD_MACROS = [
    "#ifndef RV_SAD_ZERO",
    "#if REVEC_X86 && defined(__AVX2__)",
    "typedef __m256i rv_sad_t;",
    "#define RV_SAD_ZERO _mm256_setzero_si256()",
    "#define RV_SAD_ADDU(a, x) _mm256_add_epi64((a), _mm256_sad_epu8(_mm256_loadu_si256("
    "(const __m256i *)(x)), _mm256_setzero_si256()))",
    "#define RV_SAD_ADDS(a, x) _mm256_add_epi64((a), _mm256_sad_epu8(_mm256_xor_si256("
    "_mm256_loadu_si256((const __m256i *)(x)), _mm256_set1_epi8((char)0x80)), "
    "_mm256_setzero_si256()))",
    "#define RV_SAD_SUM(a) ({ __m128i t_ = _mm_add_epi64(_mm256_castsi256_si128(a), "
    "_mm256_extracti128_si256((a), 1)); (int64_t)(_mm_cvtsi128_si64(t_) + "
    "_mm_extract_epi64(t_, 1)); })",
    "#else",
    "typedef int64_t rv_sad_t;",
    "#define RV_SAD_ZERO 0",
    "#define RV_SAD_ADDU(a, x) ({ int64_t s_ = (a); for (int u_ = 0; u_ < 32; u_++) "
    "s_ += ((const uint8_t *)(x))[u_]; s_; })",
    "#define RV_SAD_ADDS(a, x) ({ int64_t s_ = (a); for (int u_ = 0; u_ < 32; u_++) "
    "s_ += ((const int8_t *)(x))[u_] + 128; s_; })",
    "#define RV_SAD_SUM(a) (a)",
    "#endif",
    "#endif",
]


def byte_sums(gen: Any, body: LaneBody, own: tuple[str, ...], skip: set[int]
              ) -> dict[int, str]:
    """The reductions (by position in ``body``) of the integer sum reducers of ``own``
    whose every reduction adds a byte (a cast of an 8-bit integer or a bool to the
    reducer's type), with the byte's C type: each stored per lane (0 where it does not
    reduce) and summed per 32 lanes by a vector sum of absolute differences, cheaper
    than widening every byte to a 16-bit lane sum (fib's leaves).  ``skip``: positions
    of reductions counted otherwise."""
    by: dict[str, list[int]] = {}
    for n, op in enumerate(body.ops):
        if isinstance(op, lanes.Fold) and n not in skip:
            by.setdefault(op.stmt.reducer, []).append(n)
    out: dict[int, str] = {}
    for r in own:
        decl = gen.program.reducers[r]
        if decl.op != "sum" or r not in by:
            continue
        types = []
        for n in by[r]:
            v = body.ops[n].stmt.value  # type: ignore[union-attr]
            e = v.operand if isinstance(v, ir.Cast) else None
            ok = e is not None and v.ty.dtype == decl.dtype and not isinstance(e, ir.Const) \
                and (e.ty.kind == "b" or (e.ty.kind in "iu" and e.ty.dtype.itemsize == 1))
            types.append(None if not ok or e is None else
                         "int8_t" if e.ty.kind == "i" else "uint8_t")
        if all(types):
            out.update({n: str(t) for n, t in zip(by[r], types)})
    return out


def _cast_operand(v: ir.Expr) -> ir.Expr:
    assert isinstance(v, ir.Cast)
    return v.operand


def _merge(gen: Any, r: str, nt: str) -> list[str]:
    """Reducer ``r``'s narrow lane sums added to the kernel's accumulator and cleared
    (their exact sum, taken modulo the reducer's width)."""
    decl = gen.program.reducers[r]
    ct = ctype(ir.Ty(decl.dtype))
    u = "u" + ct if decl.dtype.kind == "i" else ct
    return [f"{{ int64_t _s = 0; for (int u = 0; u < {W}; u++) _s += ps_{r}[u];",
            f"  la_{r} = ({ct})(({u})la_{r} + ({u})_s); memset(ps_{r}, 0, sizeof(ps_{r})); }}"]


def _select(k: int, sites: list[lanes.SpawnSite], columns: tuple[ir.Param, ...],
            leafy: set[int]) -> list[str]:
    """Child block ``k`` that several sites can fill: per lane, the site whose spawn is
    the lane's k-th, its arguments, and whether the child is kept or inlined."""
    i2 = "            "
    lf = [n for n, st in enumerate(sites) if st.index in leafy]
    L = [f"{i2}uint8_t mk[{W}];"]
    if lf:
        L.append(f"{i2}uint8_t lk[{W}];")
    L += [f"{i2}{ctype(p.ty)} ak_{p.name}[{W}];" for p in columns]
    L += ["#pragma GCC ivdep", f"{i2}for (int u = 0; u < {W}; u++) {{"]
    sel = [f"(m{st.index}[u] & (k{st.index}[u] == {k}))" if len(st.kset) > 1
           else f"m{st.index}[u]" for st in sites]
    L += [f"{i2}    uint8_t s{n} = {x};" for n, x in enumerate(sel)]
    kept = [f"(s{n} & !l{sites[n].index}[u])" if n in lf else f"s{n}" for n in range(len(sel))]
    L.append(f"{i2}    mk[u] = {' | '.join(kept)};")
    if lf:
        L.append(f"{i2}    lk[u] = {' | '.join(f'(s{n} & l{sites[n].index}[u])' for n in lf)};")
    for p in columns:
        if p.ty.kind in "iub" and len(sites) > 1:
            pick = select_one([f"s{n}" for n in range(len(sites))],
                              [f"a{st.index}_{p.name}[u]" for st in sites], p.ty)
        else:
            pick = f"a{sites[-1].index}_{p.name}[u]"
            for n in range(len(sites) - 2, -1, -1):
                pick = f"(s{n} ? a{sites[n].index}_{p.name}[u] : {pick})"
        L.append(f"{i2}    ak_{p.name}[u] = {pick};")
    L += [f"{i2}}}", f"{i2}uint32_t b = rv_bits32(mk); RV_MAYBE_UNUSED int64_t d = out_base + {k} * ns;"]
    return L


def leaf_level(gen: Any, step: kp.StraightSpawns, level: kp.LeafLevel,
               spawns: list[str]) -> list[str]:
    """leaf_level (:class:`kp.LeafLevel`): when every spawn site's child is a leaf (one
    test per block), each inductive thread runs its children's base cases in the
    threads' loop (a spawn: the child's fields into the lane variables of
    :class:`lanes.LeafInline`, then the base case on them, as masked partials when
    folded) and child block k counts ``ni`` inlined leaves, none written; else
    ``spawns``, the straight spawns' lines as without inlining."""
    leaf = gen.plan.leaf_inline
    assert leaf is not None
    test = " && ".join(f"({gen.expr(t)})" for t in level.tests)
    fold = level.fold
    L = ["    /* leaf_level: the children's is-base reads only level-uniform and invariant",
         "       fields: when every child is a leaf, their base cases run here, in the",
         "       threads' loop, and no child block is written */",
         f"    if (ni > 0 && {test}) {{"]
    if fold is not None:
        for p in fold.partials:
            ident = 0
            if p.op != "sum":
                info = np.iinfo(p.ty.dtype)
                ident = int(info.min if p.op == "max" else info.max)
            L.append(f"        {ctype(p.ty)} _lp_{p.reducer} = {literal(ident, p.ty)};")
            if p.op != "sum":
                L.append(f"        {ctype(p.ty)} _la_{p.reducer} = 0;")
    L += ["#pragma GCC ivdep", "        for (int64_t j = 0; j < ni; j++) {"]
    L += [f"            {var(c.name)} = qp_{c.name}[j];" for c in step.reads]
    stmts = CStmts(gen, "kernel")
    ind = "            "
    site = 0
    for s in step.stmts:
        if not isinstance(s, ir.Spawn):
            L += stmts.block((s,), ind)
            continue
        env: dict[str, str] = dict(leaf.locals)
        sets = []
        for p, a in zip(leaf.params, s.args):
            if p.name in leaf.temps:
                env[p.name] = leaf.temps[p.name]
                val = a if a.ty == p.ty else ir.Cast(a.loc, p.ty, a)
                sets.append(f"{var(env[p.name])} = {gen.expr(val)};")
        L += at(s.loc, [f"{ind}/* spawn {site}: the child is a leaf */", ind + " ".join(sets)])
        if fold is None:
            L += stmts.block(lanes.rename_stmts(leaf.base, env), ind)
        else:
            L += _level_terms(gen, fold, env, site, ind)
        site += 1
    L.append("        }")
    if fold is not None:
        L += merge_partials(gen.program, fold, "_lp_", "_la_", "        ")
    L.append(f"        for (int64_t k = 0; k < {step.spawns}; k++) {{ kc[k] = 0; klf[k] = ni; }}")
    L.append("    } else {")
    L += ["    " + x if x.strip() and not x.startswith("#") else x for x in spawns]
    L.append("    }")
    return L


def merge_partials(program: ir.Program, fold: kp.BaseFold, part: str, flag: str,
                   ind: str) -> list[str]:
    """A folded base case's partials merged into the reducers' accumulators
    (``la_<r>``): a sum added (wrapping, in the reducer's unsigned type), a min / max
    taken where its flag (``<flag><r>``) says a thread reduced into it.  The partials
    are ``<part><r>``."""
    L: list[str] = []
    for p in fold.partials:
        decl = program.reducers[p.reducer]
        rt = ctype(ir.Ty(decl.dtype))
        la = f"la_{p.reducer}"
        if p.op == "sum":
            ru = utype(ir.Ty(decl.dtype))
            L.append(f"{ind}{la} = ({rt})(({ru}){la} + ({ru}){part}{p.reducer});")
        else:
            cmp = ">" if p.op == "max" else "<"
            L.append(f"{ind}if ({flag}{p.reducer}) {{ {rt} _w = ({rt}){part}{p.reducer}; "
                     f"if (_w {cmp} {la}) {la} = _w; }}")
    return L


def _level_terms(gen: Any, fold: kp.BaseFold, env: dict[str, str], site: int,
                 ind: str) -> list[str]:
    """One inlined child's base case as masked updates of the partials ``_lp_<r>``
    (``_la_<r>``: whether a min / max reduced), its conditions and values on the
    child's lane variables (``env``)."""
    part = {p.reducer: p for p in fold.partials}
    L: list[str] = []
    conds: dict[ir.Expr, str] = {}
    for tm in fold.terms:
        for c, _ in tm.conds:
            if c not in conds:
                conds[c] = f"_lc{site}_{len(conds)}"
                L += at(c.loc, [f"{ind}int {conds[c]} = "
                                f"({gen.expr(lanes.rename_expr(c, env))}) ? 1 : 0;"])
    for i, tm in enumerate(fold.terms):
        p = part[tm.reducer]
        t, u = ctype(p.ty), utype(p.ty)
        ok = " & ".join(conds[c] if pos else f"(1 - {conds[c]})" for c, pos in tm.conds)
        fp = f"_lp_{tm.reducer}"
        k, v = f"_lk{site}_{i}", f"_lv{site}_{i}"
        body = [f"{u} {k} = ({u})0 - ({u})({ok or '1'});",
                f"{t} {v} = ({t})({gen.expr(lanes.rename_expr(tm.value, env))});"]
        if p.op == "sum":
            body.append(f"{fp} = ({t})(({u}){fp} + (({u}){v} & {k}));")
        else:
            lim = np.iinfo(p.ty.dtype)
            idv = literal(int(lim.min if p.op == "max" else lim.max), p.ty)
            cmp = ">" if p.op == "max" else "<"
            m = f"_lm{site}_{i}"
            body += [f"{t} {m} = ({t})((({u}){v} & {k}) | (({u}){idv} & ~{k}));",
                     f"{fp} = {m} {cmp} {fp} ? {m} : {fp};",
                     f"_la_{tm.reducer} |= ({t})({ok or '1'});"]
        L += at(tm.value.loc, [ind + "{ " + " ".join(body) + " }"])
    return L


def two_levels(gen: Any, step: kp.LaneSpawns, sad: dict[int, str], own: tuple[str, ...],
               one_level: list[str]) -> list[str]:
    """Technique leaf_two_levels (``LaneSpawns.two_levels``): in a block the driver runs
    blocked (``rv_two_min >= 0``), without base threads, whose child blocks each hold R
    threads or more (``ni >= rv_two_min``: the one-level schedule runs them blocked),
    every inductive child runs in its parent's lane as well, in an inner scope whose
    columns and locals shadow the parent's: its leaf children reduced there, its
    inductive children written to grandchild block k * K + k'.  The driver gets the K
    child blocks' sizes (their inductive threads, their inlined leaves) through
    ``rv_two_counts`` and counts each when it reaches it; else ``one_level``."""
    t = gen.t
    f = gen.bp.columns
    sites = step.sites
    K = len(step.child_blocks)
    block = {st.index: next(iter(st.kset)) for st in sites}
    kk = [(k, k2) for k in range(K) for k2 in range(K)]

    def ops(ind: str, inner: int | None) -> list[str]:
        """The body's operations; ``inner``: as the child of site ``inner`` (its lanes
        guarded by ``_e<inner>``, its spawns into grandchild blocks)."""
        out: list[str] = []
        e = None if inner is None else f"_e{inner}"
        for n, op in enumerate(step.body.ops):
            lines: list[str] = []
            match op:
                case lanes.SetVar(target=tv, value=v, guard=g):
                    lines.append(set_var(ind, tv, gen.expr(v), g, v.ty))
                case lanes.Cond(index=c, cond=cv, guard=g, negate=neg):
                    here = "" if g is None else f"(_c{g}) && "
                    lines.append(f"{ind}RV_MAYBE_UNUSED uint8_t _c{c} = {here}"
                                 f"{'!' if neg else ''}({gen.expr(cv)});")
                case lanes.Fold(stmt=r, guard=g):
                    conds = [x for x in (e, None if g is None else f"_c{g}") if x]
                    pc = " & ".join(conds) if conds else None
                    if n in sad:
                        bt = sad[n]
                        val = f"({bt})({gen.expr(_cast_operand(r.value))})"
                        arr = f"lv{n}" if inner is None else f"lv{n}_{inner}"
                        lines.append(f"{ind}{arr}[u] = "
                                     f"{val if pc is None else f'({pc}) ? {val} : ({bt})0'};")
                    else:
                        lines += gen.lane_reduce(r, ind, None if pc is None else f"({pc})", own)
                case lanes.MakeSpawn(site=site, args=args, leaf=lf):
                    i = site.index
                    if inner is None:  # the child: its leaf test, then its own body
                        lines.append(f"{ind}const uint8_t _e{i} = !_c{lf};")
                        lines.append(f"{ind}q{i}[u] = _e{i};")
                        lines += [f"{ind}const {ctype(p.ty)} _t{i}_{p.name} = {gen.expr(a)};"
                                  for p in f for c, a in args if c == p.name]
                        # (the child's scope shadows the parent's lane variables on
                        # purpose: its body is the parent's lane code, run on its values)
                        lines += ["#pragma GCC diagnostic push",
                                  '#pragma GCC diagnostic ignored "-Wshadow"', f"{ind}{{"]
                        sub = ind + "    "
                        lines += [f"{sub}RV_MAYBE_UNUSED {ctype(p.ty)} {var(p.name)} = "
                                  f"_t{i}_{p.name};" for p in f]
                        lines += [f"{sub}RV_MAYBE_UNUSED {ctype(ty)} {var(nm)} = 0;"
                                  for nm, ty in sorted(t.locals.items())]
                        lines += ops(sub, i)
                        lines += [f"{ind}}}", "#pragma GCC diagnostic pop"]
                    else:
                        g2 = block[inner] * K + block[i]
                        lines.append(f"{ind}mk{g2}[u] = _e{inner} & !_c{lf};")
                        lines += [f"{ind}a{g2}_{c}[u] = {gen.expr(a)};" for c, a in args]
            out += at(op.loc, lines)
        return out

    ind = "                "
    loads = ["int64_t j = j0 + u;"] + [f"{var(c.name)} = in_{c.name}[j];" for c in step.reads]
    loads += [f"{var(n)} = 0;" for n in sorted(t.locals)]
    loads += [gen.lane_accumulator_start(r) for r in own]
    ends = [gen.lane_accumulator_end(r) for r in own]
    body = [f"{ind}{x}" for x in loads] + ops(ind, None) + [f"{ind}{x}" for x in ends]
    arrays: list[tuple[str, str]] = []
    for g2 in range(K * K):
        arrays += [(ctype(p.ty), f"a{g2}_{p.name}") for p in f]
        arrays.append(("uint8_t", f"mk{g2}"))
    arrays += [("uint8_t", f"q{st.index}") for st in sites]
    lvs = [(n, f"lv{n}" + ("" if i is None else f"_{i}"))
           for i in [None, *(st.index for st in sites)] for n in sad]
    arrays += [(sad[n], nm) for n, nm in lvs]
    sad_red = sorted({step.body.ops[n].stmt.reducer for n in sad})  # type: ignore[union-attr]
    L = STEP_MACROS + (SAD_MACROS if sad else []) + [
         "    if (rv_two_min >= 0 && nb0 == 0 && ni >= rv_two_min) {",
         "    /* two levels per call (leaf_two_levels): the child blocks would run blocked;",
         "       every inductive child runs in its parent's lane too */",
         "    static RV_TLS int64_t ktwo[" + str(2 * K) + "];",
         "    const int64_t ns = ni + RV_SLACK;  /* stride of the grandchild blocks */",
         f"    kused = {K * K};"]
    L += [f"    int64_t nk{g2} = 0;" for g2 in range(K * K)]
    L += [f"    int64_t nq{st.index} = 0;" for st in sites]
    for rn in sad_red:
        L += [f"    rv_sad_t sa_{rn} = RV_SAD_ZERO;", f"    int64_t sb_{rn} = 0;"]
    L += lane_steps_open(W, arrays, body)
    for n, nm in lvs:
        rn = step.body.ops[n].stmt.reducer  # type: ignore[union-attr]
        if sad[n] == "int8_t":
            L.append(f"        sa_{rn} = RV_SAD_ADDS(sa_{rn}, {nm}); sb_{rn}++;")
        else:
            L.append(f"        sa_{rn} = RV_SAD_ADDU(sa_{rn}, {nm});")
    L += [f"        nq{st.index} += __builtin_popcount(rv_bits32(q{st.index}));"
          for st in sites]
    for g2 in range(K * K):
        L += ["        {",
              f"            uint32_t b = rv_bits32(mk{g2}); int64_t d = out_base + {g2} * ns;",
              f"            if (lanes_ == {W}) {{"]
        for p in f:
            w = 8 * p.ty.dtype.itemsize
            L.append(f"                RV_LSTEP{w}((const uint{w}_t *)a{g2}_{p.name}, "
                     f"(uint{w}_t *)(p_{p.name} + d), nk{g2}, b);")
        L += ["            } else {  /* exact stores: no slack after the block */",
              f"                int64_t q = nk{g2};",
              "                for (int u = 0; u < lanes_; u++) {",
              *[f"                    p_{p.name}[d + q] = a{g2}_{p.name}[u];" for p in f],
              f"                    q += mk{g2}[u] != 0;",
              "                }", "            }",
              f"            nk{g2} += __builtin_popcount(b);", "        }"]
    L.append("    }")
    for rn in sad_red:
        decl = gen.program.reducers[rn]
        ct = ctype(ir.Ty(decl.dtype))
        u = "u" + ct if decl.dtype.kind == "i" else ct
        L.append(f"    la_{rn} = ({ct})(({u})la_{rn} + ({u})(RV_SAD_SUM(sa_{rn}) - "
                 f"INT64_C({128 * W}) * sb_{rn}));")
    for st in sites:
        k = block[st.index]
        L.append(f"    ktwo[{2 * k}] = nq{st.index}; ktwo[{2 * k + 1}] = ni - nq{st.index};")
    for k, k2 in kk:
        i = next(st.index for st in sites if block[st.index] == k)
        g2 = k * K + k2
        L.append(f"    kc[{g2}] += nk{g2}; klf[{g2}] += nq{i} - nk{g2};")
    L += [f"    rv_two_k = {K}; rv_two_counts = ktwo;", "    } else {"]
    L += one_level
    L.append("    }")
    return L


def two_level_blocks(plan: kp.KernelPlan, k: int) -> int:
    """The child blocks a kernel of ``k`` spawns can use: k * k with two levels per call
    (technique leaf_two_levels), else k."""
    step = plan.step(kp.LaneSpawns)
    return k * k if isinstance(step, kp.LaneSpawns) and step.two_levels else k


def lane_steps_open(W: int, arrays: list[tuple[str, str]], body: list[str]) -> list[str]:
    """The lane steps' loop over the inductive threads, W lanes per step, opened (the
    caller closes it): the step's lane arrays, then ``body`` once for a full step
    (vectorized) and once for the last partial step (the missing lanes zeroed, not
    vectorized)."""
    return [f"    for (int64_t j0 = 0; j0 < ni; j0 += {W}) {{",
            f"        const int lanes_ = ni - j0 < {W} ? (int)(ni - j0) : {W};",
            *[f"        RV_MAYBE_UNUSED {ct} {nm}[{W}];" for ct, nm in arrays],
            f"        if (lanes_ == {W}) {{",
            "#pragma GCC ivdep",
            f"            for (int u = 0; u < {W}; u++) {{", *body, "            }",
            "        } else {  /* the last partial step: the missing lanes make no spawn */",
            *[f"            memset({nm}, 0, sizeof({nm}));" for _, nm in arrays],
            "            for (int u = 0; u < lanes_; u++) {",
            '                __asm__ __volatile__("" ::: "memory");  /* not vectorized */',
            *body, "            }", "        }"]


"""Generation of C for one task: the block kernel, the schedule driver and the plain
recursive C of the same program (the ``seq`` baseline a C programmer would write).

The schedule is the numba back end's, statement for statement (see
``revec/runtime/numba_scheduler.py``): the same record stack, thresholds, compaction
of bfs children and statistics, so both back ends report the same numbers.
"""

from __future__ import annotations

from pathlib import Path

from revec import ir
from revec.backends import c_driver, c_lanes
from revec.backends.c_driver import RUNTIME_PRELUDE
from revec.backends.cexpr import (
    C_PRELUDE,
    CExprEmitter,
    blend,
    cast,
    ctype,
    literal,
    masked,
    truth,
    utype,
)
from revec.errors import RevecError
from revec.ir import speculable
from revec.lib import LIBRARY
from revec.runtime.compaction import c_source as compaction_c_source
from revec.transforms.blocking import (
    contains_return,
    straight_spawns,
    strip_final_return,
    to_block_program,
    used_vars,
)
from revec.transforms.spawn_loops import spawn_loop

INLINE_ARRAY_BYTES = 1 << 16


def var(name: str) -> str:
    return f"v_{name}"


class CStmts:
    """Statement emission; ``spawn``/``reduce``/thread return are supplied per context."""

    def __init__(self, gen: CModuleGen, mode: str) -> None:
        self.gen = gen
        self.mode = mode  # "kernel" / "seq" / "helper"
        self.e = gen.expr

    def block(self, stmts: tuple[ir.Stmt, ...], ind: str) -> list[str]:
        out: list[str] = []
        for s in stmts:
            out.extend(self.stmt(s, ind))
        return out

    @staticmethod
    def if_converts(target: str, orelse: tuple[ir.Stmt, ...]) -> bool:
        """An else branch, if any, is one speculable assignment to the same local."""
        match orelse:
            case ():
                return True
            case (ir.Assign(target=t, value=w),):
                return t == target and speculable(w)
        return False

    def predicable(self, s: ir.Stmt, top: bool = False) -> bool:
        """An if-tree of integer sum reductions, every condition below the top one and
        every value speculable."""
        match s:
            case ir.Reduce(reducer=r, value=v):
                decl = self.gen.program.reducers[r]
                return decl.op == "sum" and decl.dtype.kind in "iu" and speculable(v)
            case ir.If(cond=c, then=a, orelse=b):
                return (top or speculable(c)) and all(self.predicable(x) for x in a + b)
        return False

    def predicated(self, s: ir.Stmt, pc: str | None, ind: str) -> list[str]:
        """``s`` (see :meth:`predicable`) executed under the 0/1 condition ``pc``."""
        if isinstance(s, ir.Reduce):  # always under an if: pc is set
            assert pc is not None
            ty = ir.Ty(self.gen.program.reducers[s.reducer].dtype)
            acc = f"la_{s.reducer}"
            return [f"{ind}{acc} = ({ctype(ty)})(({utype(ty)}){acc} + "
                    f"{masked(self.e(s.value), pc, ty)});"]
        assert isinstance(s, ir.If)
        self.gen.tmp += 1
        k = self.gen.tmp
        c = truth(self.e(s.cond), s.cond.ty)
        lines = [f"{ind}uint8_t _p{k} = {c if pc is None else f'{pc} & {c}'};",
                 f"{ind}uint8_t _q{k} = {f'!_p{k}' if pc is None else f'{pc} & !_p{k}'};"]
        for x in s.then:
            lines += self.predicated(x, f"_p{k}", ind)
        for x in s.orelse:
            lines += self.predicated(x, f"_q{k}", ind)
        return lines

    def stmt(self, s: ir.Stmt, ind: str) -> list[str]:
        e = self.e
        match s:
            case ir.Assign(target=t, value=v):
                return [f"{ind}{var(t)} = {e(v)};"]
            case ir.Unpack(targets=ts, call=call, target_tys=tys):
                rtys = (call.result_tys if isinstance(call, ir.LibCall)
                        else self.gen.program.helpers[call.func].result_tys)
                tmps = [f"_u{i}" for i in range(len(ts))]
                lines = [f"{ind}{{"]
                lines += [f"{ind}    {ctype(t)} {tmp};" for t, tmp in zip(rtys, tmps)]
                args = [e(a) for a in call.args] + [f"&{tmp}" for tmp in tmps]
                fname = (f"revec_lib_{call.func}" if isinstance(call, ir.LibCall)
                         else f"h_{call.func}")
                lines.append(f"{ind}    {fname}({', '.join(args)});")
                for name, tmp, src, dst in zip(ts, tmps, rtys, tys):
                    lines.append(f"{ind}    {var(name)} = {cast(tmp, src, dst)};")
                return lines + [f"{ind}}}"]
            case ir.If(cond=c, then=(ir.Assign(target=t, value=v),), orelse=els) if (
                    v.ty.kind in "iub" and speculable(v) and self.if_converts(t, els)):
                # branch-free: `if c: t = v [else: t = w]` as a blend (see cexpr.blend)
                other = var(t) if not els else e(els[0].value)
                return [f"{ind}{{ uint8_t _c = {truth(e(c), c.ty)};",
                        f"{ind}  {var(t)} = {blend('_c', e(v), other, v.ty)}; }}"]
            case ir.If() if self.mode == "kernel" and self.predicable(s, top=True):
                # only integer sums under conditions (a base case counting outcomes):
                # every thread adds the value or 0, and the thread loop vectorizes
                return self.predicated(s, None, ind)
            case ir.If(cond=c, then=a, orelse=b):
                lines = [f"{ind}if ({e(c)}) {{", *self.block(a, ind + "    "), f"{ind}}}"]
                if b:
                    lines[-1] = f"{ind}}} else {{"
                    lines += [*self.block(b, ind + "    "), f"{ind}}}"]
                return lines
            case ir.For(var=v, start=a, stop=b, step=c, body=body):
                step = e(c)
                cond = (f"({step} > 0 ? {var(v)} < _stop : {var(v)} > _stop)"
                        if not isinstance(c, ir.Const) else
                        (f"{var(v)} < _stop" if c.value > 0 else f"{var(v)} > _stop"))
                return [f"{ind}{{", f"{ind}    int64_t _stop = {e(b)};",
                        f"{ind}    for ({var(v)} = {e(a)}; {cond}; {var(v)} += {step}) {{",
                        *self.block(body, ind + "        "), f"{ind}    }}", f"{ind}}}"]
            case ir.While(cond=c, body=body):
                return [f"{ind}while ({e(c)}) {{", *self.block(body, ind + "    "), f"{ind}}}"]
            case ir.Break():
                return [f"{ind}break;"]
            case ir.Continue():
                return [f"{ind}continue;"]
            case ir.Return(values=vals):
                if self.mode == "helper":
                    h = self.gen.current_helper
                    assert h is not None
                    if len(h.result_tys) > 1:
                        return [f"{ind}{{"] + [
                            f"{ind}    *_out{i} = {e(v)};" for i, v in enumerate(vals)
                        ] + [f"{ind}    return;", f"{ind}}}"]
                    return [f"{ind}return {e(vals[0])};" if vals else f"{ind}return;"]
                if self.mode == "seq":
                    return [f"{ind}return;"]
                return [f"{ind}goto next_thread;"]
            case ir.ExprStmt(value=v):
                return [f"{ind}(void)({e(v)});"]
            case ir.Spawn():
                return self.gen.spawn_kernel(s, ind) if self.mode == "kernel" else \
                    self.gen.spawn_seq(s, ind)
            case ir.Reduce():
                return self.gen.reduce(s, ind, "la_" if self.mode == "kernel" else "acc_")
        raise AssertionError(f"unhandled IR statement {type(s).__name__}")


class CModuleGen:
    def __init__(self, program: ir.Program, task: str) -> None:
        self.program = program
        self.bp = to_block_program(program, task)
        self.t = self.bp.task
        self.arrays = sorted(program.arrays)
        # arrays up to INLINE_ARRAY_BYTES are written into the source as C data
        self.inline_arrays = {n for n in self.arrays
                              if program.arrays[n].nbytes <= INLINE_ARRAY_BYTES}
        self.expr = CExprEmitter(var, self.array_ref, self.helper_call, self.lib_call)
        self.current_helper: ir.HelperDef | None = None
        self.dynamic = self.t.max_spawns is None
        self.straight = straight_spawns(strip_final_return(self.bp.inductive))
        self.next_static = 0
        self.tmp = 0  # numbering of generated temporaries
        self.loop: c_lanes.LoopEmitter | None = None
        # parameters passed on unchanged by every spawn: one value for the whole tree
        self.invariant = [p for p in self.bp.fields if p.name in self.bp.invariant]

    # ------------------------------------------------------------------ references
    def array_ref(self, name: str, idx: list[str]) -> str:
        a = self.program.arrays[name]
        parts = []
        for d, i in enumerate(idx):
            parts.append(f"rv_idx({i}, {a.shape[d]})")
        flat = parts[0]
        for d in range(1, len(parts)):
            flat = f"({flat}) * {a.shape[d]} + {parts[d]}"
        return f"a_{name}[{flat}]"

    def helper_call(self, name: str, args: list[str]) -> str:
        return f"h_{name}({', '.join(args)})"

    def lib_call(self, name: str, args: list[str]) -> str:
        return f"revec_lib_{name}({', '.join(args)})"

    # ------------------------------------------------------------------ module
    def generate(self) -> str:
        t = self.t
        out = [f"/* Generated by revec from {Path(self.program.path).name}: task "
               f"'{t.name}', C back end.  Do not edit. */", WIDE_VECTORS, C_PRELUDE,
               "#define rv_idx(i, n) ((int64_t)(i) < 0 ? (int64_t)(i) + (n) : (int64_t)(i))",
               RUNTIME_PRELUDE, "#define REVEC_STEPS_ONLY 1", compaction_c_source(),
               SPLIT_STEPS]
        for name in self.arrays:
            a = self.program.arrays[name]
            if name in self.inline_arrays:
                out.append(self.array_data(name))
            else:
                out.append(f"static const {ctype(ir.Ty(a.dtype))} *a_{name};")
        for r in self.bp.reducers:
            out.append(f"static RV_TLS {ctype(ir.Ty(r.dtype))} acc_{r.name};")
        for lib in self.program.libs:
            src = LIBRARY[lib].c_source
            if not src.strip():
                raise RevecError(f"library function {lib} has no C version")
            out.append(src)
        for h in self.program.helpers.values():
            out.append(self.helper(h))
        out.append(drop_unused_labels(self.kernel()))
        out.append(c_driver.driver_source(self))
        out.append(c_driver.entry_source(self))
        out.append(self.seq())
        out.append(c_driver.omp_source(self))
        return "\n\n".join(out) + "\n"

    def array_data(self, name: str) -> str:
        """A small module-level array as C data: the compiler sees its values (constant
        folding, unrolled lookups) instead of loading through a pointer."""
        a = self.program.arrays[name]
        ty = ir.Ty(a.dtype)
        values = ", ".join(literal(v, ty) for v in a.reshape(-1).tolist())
        return f"static const {ctype(ty)} a_{name}[{max(a.size, 1)}] = {{{values}}};"

    def locals_decl(self, locals_: dict[str, ir.Ty], ind: str) -> list[str]:
        # every section declares all of the task's locals; a section may use few of them
        return [f"{ind}RV_MAYBE_UNUSED {ctype(ty)} {var(n)} = 0;"
                for n, ty in sorted(locals_.items())]

    def helper(self, h: ir.HelperDef) -> str:
        self.current_helper = h
        params = [f"{ctype(p.ty)} {var(p.name)}" for p in h.params]
        if len(h.result_tys) > 1:
            params += [f"{ctype(t)} *_out{i}" for i, t in enumerate(h.result_tys)]
            ret = "void"
        else:
            ret = ctype(h.result_tys[0]) if h.result_tys else "void"
        lines = [f"static inline {ret} h_{h.name}({', '.join(params) or 'void'}) {{"]
        lines += self.locals_decl(h.locals, "    ")
        lines += CStmts(self, "helper").block(h.body, "    ")
        if ret != "void":
            lines.append(f"    return ({ret})0;")
        lines.append("}")
        self.current_helper = None
        return "\n".join(lines)

    # ------------------------------------------------------------------ kernel
    def kernel(self) -> str:
        """One block: the split (table-driven compaction, 32 threads per step), the base
        case over the base threads, the inductive case writing child block k for spawn k.

        Child block k of a block with ni inductive threads starts at ``out_base + k * ns``,
        ``ns = ni + RV_SLACK`` (each inductive thread makes at most one spawn of each index); the kernel reads
        the block only during the split, so in bfs mode the children may overwrite it."""
        t = self.t
        f = self.bp.columns  # the fields that vary between threads
        restrict = "" if self.dynamic else " restrict"
        # a field equal in every thread of the block is read once, at the block's first
        # thread, not split or loaded per thread (graphcol's EARLIER[v] is then a scalar
        # load instead of a gather).  Measured: see docs/design.md
        uniform = [p for p in f if p.name in self.bp.uniform]
        skip = {p.name for p in uniform}
        base_used = used_vars(self.bp.base) - skip
        ind_used = used_vars(self.bp.inductive) - skip
        pred_used = used_vars(self.bp.is_base) - skip
        lanes = (not self.straight and not self.dynamic
                 and c_lanes.eligible(strip_final_return(self.bp.inductive)))
        shape = None if (self.straight or lanes) else spawn_loop(
            strip_final_return(self.bp.inductive), c_lanes.eligible)
        self.loop = None if shape is None else c_lanes.LoopEmitter(self, shape, f, self.dynamic)
        # room after each child block for the 32-element stores of the lane steps
        L = [f"#define RV_SLACK {c_lanes.LANES if lanes or shape else 0}"]
        if self.loop is not None:
            L += self.loop.globals()
        L += [f"static RV_TLS {ctype(p.ty)} *c_{p.name}, *b_{p.name}, *q_{p.name};"
              for p in f]
        L += [f"static {ctype(p.ty)} u_{p.name};  /* invariant: the root's value */"
              for p in self.invariant]
        L += ["static RV_TLS int64_t cap_frames, scratch_cap, *kcnt, kcap_alloc;", "",
              "static void grow_children(int64_t need_frames, int64_t need_k) {",
              "    if (need_k > kcap_alloc) {",
              "        int64_t k = need_k > 2 * kcap_alloc ? need_k : 2 * kcap_alloc;",
              "        kcnt = (int64_t *)rv_realloc(kcnt, k * sizeof(int64_t));",
              "        memset(kcnt + kcap_alloc, 0, (k - kcap_alloc) * sizeof(int64_t));",
              "        kcap_alloc = k;",
              "    }",
              "    if (need_frames > cap_frames) {",
              "        int64_t c = need_frames > 2 * cap_frames ? need_frames : 2 * cap_frames;",
              f"        rv_check_budget(c * {self.frame_bytes()} + 2 * scratch_cap * "
              f"{self.frame_bytes()});"]
        L += [f"        c_{p.name} = ({ctype(p.ty)} *)rv_realloc(c_{p.name}, "
              f"c * sizeof(*c_{p.name}));" for p in f]
        L += ["        cap_frames = c;", "    }", "}", "",
              "static void grow_scratch(int64_t n) {",
              "    if (n <= scratch_cap) return;",
              f"    rv_check_budget(cap_frames * {self.frame_bytes()} + 2 * n * "
              f"{self.frame_bytes()});"]
        for p in f:
            L += [f"    b_{p.name} = ({ctype(p.ty)} *)rv_realloc(b_{p.name}, "
                  f"n * sizeof(*b_{p.name}));",
                  f"    q_{p.name} = ({ctype(p.ty)} *)rv_realloc(q_{p.name}, "
                  f"n * sizeof(*q_{p.name}));"]
        L += ["    scratch_cap = n;", "}", "",
              "/* one block [off, off + n): returns the number of base threads */",
              "static int64_t kernel(int64_t off, int64_t n, int64_t out_base, "
              "int64_t *kused_out) {",
              f"    int64_t kused = {t.max_spawns or 0}, nb = 0, ni = 0, t = 0;"]
        L += [f"    {ctype(p.ty)} {var(p.name)};" for p in f]
        L += [f"    {ctype(p.ty)} {var(p.name)} = u_{p.name};" for p in self.invariant]
        L += self.locals_decl(t.locals, "    ")
        L += [f"    {ctype(ir.Ty(r.dtype))} la_{r.name} = acc_{r.name};"
              for r in self.bp.reducers]
        L += [f"    {ctype(p.ty)} *{restrict} p_{p.name} = c_{p.name};" for p in f]
        L += [f"    {ctype(p.ty)} *restrict bp_{p.name} = b_{p.name};" for p in f
              if p.name in base_used]
        L += [f"    {ctype(p.ty)} *restrict qp_{p.name} = q_{p.name};" for p in f
              if p.name in ind_used]
        L.append("    int64_t *kc = kcnt;")
        L.append("    (void)kc;")
        if uniform:
            L.append("    if (n > 0) {  /* fields equal in every thread of the block */")
            L += [f"        {var(p.name)} = p_{p.name}[off];" for p in uniform]
            L.append("    }")
        pred = self.expr(self.bp.is_base)
        L += ["#ifndef RV_SCALAR_SPLIT",
              "    /* is-base over 32 threads at a time, then a table-driven compaction of",
              "       each column into the base / inductive frames (revec.runtime.compaction) */",
              "    for (; t + 32 <= n; t += 32) {",
              "        uint8_t m[32];",
              "        for (int u = 0; u < 32; u++) {"]
        L += [f"            {var(p.name)} = p_{p.name}[off + t + u];" for p in f
              if p.name in pred_used]
        L += [f"            m[u] = ({pred}) ? 1 : 0;", "        }",
              "        uint32_t bits = rv_bits32(m);"]
        for p in f:
            bits = 8 * p.ty.dtype.itemsize
            src = f"(const uint{bits}_t *)(p_{p.name} + off + t)"
            if p.name in base_used:
                L.append(f"        RV_STEP{bits}({src}, (uint{bits}_t *)bp_{p.name}, nb, bits);")
            if p.name in ind_used:
                L.append(f"        RV_STEP{bits}({src}, (uint{bits}_t *)qp_{p.name}, ni, ~bits);")
        L += ["        int64_t c = __builtin_popcount(bits);",
              "        nb += c; ni += 32 - c;", "    }", "#endif",
              "    /* the rest (all of it with RV_SCALAR_SPLIT): branch-free scalar split */",
              "    for (; t < n; t++) {"]
        L += [f"        {var(p.name)} = p_{p.name}[off + t];" for p in f if p.name not in skip]
        L.append(f"        int64_t isb = ({pred}) ? 1 : 0;")
        for p in f:
            if p.name in base_used:
                L.append(f"        bp_{p.name}[nb] = {var(p.name)};")
            if p.name in ind_used:
                L.append(f"        qp_{p.name}[ni] = {var(p.name)};")
        L += ["        nb += isb; ni += 1 - isb;", "    }"]
        # the threads are independent (GCC ignores restrict on block-scope pointers once
        # the kernel is inlined, and gives up on more than 10 run-time alias checks)
        narrow = self.narrow_sum(self.bp.base)
        if narrow is not None:
            L += narrow
        else:
            L.append("#pragma GCC ivdep")
            L.append("    for (int64_t j = 0; j < nb; j++) {")
            L += [f"        {var(p.name)} = bp_{p.name}[j];" for p in f if p.name in base_used]
            L += CStmts(self, "kernel").block(self.bp.base, "        ")
            if contains_return(self.bp.base):
                L.append("        next_thread_b: ;")
            L.append("    }")
        L.append("    /* inductive case */")
        L.append("    const int64_t ns = ni + RV_SLACK;  /* stride of the child blocks */")
        if self.straight:
            # one restrict pointer per child block and column: the stores of different
            # spawns provably do not overlap, so gcc vectorizes the loop
            for k in range(t.max_spawns or 0):
                L += [f"    {ctype(p.ty)} *restrict o{k}_{p.name} = p_{p.name} + out_base + "
                      f"{k} * ns;" for p in f]
        if lanes:
            L.append("    int64_t j0 = 0;")
            code = c_lanes.LaneEmitter(
                self.expr, f, self.bp.fields, self.bp.invariant, self.lane_reduce,
                CStmts(self, "kernel").stmt).run(strip_final_return(self.bp.inductive),
                                                  "        ")
            loads = [f"{ctype(p.ty)} {var(p.name)} = qp_{p.name}[j];" for p in f
                     if p.name in ind_used]
            loads += [f"RV_MAYBE_UNUSED {ctype(ty)} {var(n)} = 0;"
                      for n, ty in sorted(t.locals.items())]
            L += c_lanes.chunk_loop(code, f, loads, "    ")
            L.append("    for (int64_t j = j0; j < ni; j++) {  /* the last < 32 threads */")
        elif self.loop is not None:
            L += self.loop.emit(ind_used)
        else:
            if self.straight:  # fixed slots: threads independent, as above
                L.append("#pragma GCC ivdep")
            L.append("    for (int64_t j = 0; j < ni; j++) {")
        if self.loop is None:
            L.append("        int64_t si = 0;")
            L += [f"        {var(p.name)} = qp_{p.name}[j];" for p in f if p.name in ind_used]
            self.next_static = 0
            L += CStmts(self, "kernel").block(self.bp.inductive, "        ")
            L += ["        next_thread: ;", "        (void)si;", "    }"]
        if self.straight:
            L.append(f"    for (int64_t k = 0; k < {t.max_spawns}; k++) kc[k] = ni;")
        L += [f"    acc_{r.name} = la_{r.name};" for r in self.bp.reducers]
        L += ["    *kused_out = kused;", "    return nb;", "}"]
        text = "\n".join(L)
        # a return in the base case jumps to the base loop's own label
        if contains_return(self.bp.base):
            head, sep, tail = text.partition("    /* inductive case */")
            text = head.replace("goto next_thread;", "goto next_thread_b;") + sep + tail
        return text

    def narrow_sum(self, base: tuple[ir.Stmt, ...]) -> list[str] | None:
        """A base case that only sums a narrow integer field into a 64-bit reducer (fib's
        ``reduce(count, n)``): sum runs of up to 2^20 threads in 32 bits, which cannot
        overflow and vectorizes 4x wider than widening every element to 64 bits.  It
        replaces the base loop."""
        match base:
            case (ir.Reduce(reducer=r, value=ir.Cast(operand=ir.Var(name=name) as v, ty=ty)),):
                pass
            case _:
                return None
        decl = self.program.reducers[r]
        if decl.op != "sum" or ty.kind != "i" or ty.dtype.itemsize != 8 \
                or v.ty.kind not in "iu" or v.ty.dtype.itemsize > 2 \
                or name not in {p.name for p in self.bp.columns} \
                or name in self.bp.uniform:  # a level-uniform field has no base column
            return None
        return ["    for (int64_t j0 = 0; j0 < nb; j0 += INT64_C(1) << 20) {",
                "        int64_t j1 = nb - j0 < (INT64_C(1) << 20) ? nb : j0 + (INT64_C(1) << 20);",
                "        int32_t part = 0;",
                "#pragma GCC ivdep",
                f"        for (int64_t j = j0; j < j1; j++) part += bp_{name}[j];",
                f"        la_{r} = (int64_t)((uint64_t)la_{r} + (uint64_t)(int64_t)part);",
                "    }"]

    def lane_reduce(self, s: ir.Reduce, ind: str, pc: str | None) -> list[str]:
        if pc is None:
            return self.reduce(s, ind, "la_")
        return [f"{ind}if ({pc}) {{", *self.reduce(s, ind + "    ", "la_"), f"{ind}}}"]

    def frame_bytes(self) -> int:
        return sum(p.ty.dtype.itemsize for p in self.bp.columns)

    def spawn_kernel(self, s: ir.Spawn, ind: str) -> list[str]:
        f = self.bp.columns
        lines = [f"{ind}{{"]
        if self.dynamic:
            lines += [f"{ind}    if (si >= kused) {{", f"{ind}        kused = si + 1;",
                      f"{ind}        if (kused > kcap_alloc || out_base + kused * ns > "
                      "cap_frames) {",
                      f"{ind}            grow_children(out_base + 2 * kused * ns, 2 * kused);",
                      *[f"{ind}            p_{p.name} = c_{p.name};" for p in f],
                      f"{ind}            kc = kcnt;",
                      f"{ind}        }}",
                      f"{ind}    }}"]
        vals = [self.expr(a) for a, p in zip(s.args, self.bp.fields)
                if p.name not in self.bp.invariant]
        lines += [f"{ind}    {ctype(p.ty)} _s{i} = {v};" for i, (p, v) in enumerate(zip(f, vals))]
        if self.straight:
            # every inductive thread makes this spawn: fixed slot j of child block k
            k = self.next_static
            self.next_static += 1
            lines += [f"{ind}    o{k}_{p.name}[j] = _s{i};" for i, p in enumerate(f)]
            return lines + [f"{ind}}}"]
        lines.append(f"{ind}    int64_t _d = out_base + si * ns + kc[si];")
        lines += [f"{ind}    p_{p.name}[_d] = _s{i};" for i, p in enumerate(f)]
        lines += [f"{ind}    kc[si]++; si++;", f"{ind}}}"]
        return lines

    def reduce(self, s: ir.Reduce, ind: str, prefix: str = "acc_") -> list[str]:
        decl = self.program.reducers[s.reducer]
        ty = ir.Ty(decl.dtype)
        acc = f"{prefix}{s.reducer}"
        v = self.expr(s.value)
        if decl.op == "sum":
            if ty.kind == "b":
                return [f"{ind}{acc} = {acc} || ({v});"]
            if ty.kind == "f":
                return [f"{ind}{acc} = ({ctype(ty)})({acc} + ({v}));"]
            u = "u" + ctype(ty) if ty.kind == "i" else ctype(ty)
            return [f"{ind}{acc} = ({ctype(ty)})(({u}){acc} + ({u})({v}));"]
        cmp = "<" if decl.op == "min" else ">"
        return [f"{ind}{{ {ctype(ty)} _r = {v}; if (_r {cmp} {acc}) {acc} = _r; }}"]

    def compaction(self) -> str:
        lines = []
        for p in self.bp.columns:
            lines.append(f"                memmove(c_{p.name} + dst, c_{p.name} + src, "
                         f"kcnt[k] * sizeof(*c_{p.name}));")
        return "\n".join(lines)

    # ------------------------------------------------------------------ entry points
    def seq(self) -> str:
        t = self.t
        f = self.bp.fields
        params = ", ".join(f"{ctype(p.ty)} {var(p.name)}" for p in f) or "void"
        L = [f"static void seq_{t.name}({params});",
             f"static void seq_{t.name}({params}) {{"]
        L += self.locals_decl(t.locals, "    ")
        L.append(f"    if ({self.expr(t.is_base)}) {{")
        L += CStmts(self, "seq").block(t.base, "        ")
        L += ["        return;", "    }"]
        L += CStmts(self, "seq").block(t.inductive, "    ")
        L.append("}")
        L += ["", "void revec_seq(const char *root, const void *const *arrays, char *accs) {"]
        for i, name in enumerate(self.arrays):
            a = self.program.arrays[name]
            if name not in self.inline_arrays:
                L.append(f"    a_{name} = (const {ctype(ir.Ty(a.dtype))} *)arrays[{i}];")
        for i, r in enumerate(self.bp.reducers):
            L.append(f"    memcpy(&acc_{r.name}, accs + {8 * i}, sizeof(acc_{r.name}));")
        args = []
        for i, p in enumerate(f):
            L.append(f"    {ctype(p.ty)} r{i}; memcpy(&r{i}, root + {8 * i}, sizeof(r{i}));")
            args.append(f"r{i}")
        L.append(f"    seq_{t.name}({', '.join(args)});")
        for i, r in enumerate(self.bp.reducers):
            L.append(f"    memcpy(accs + {8 * i}, &acc_{r.name}, sizeof(acc_{r.name}));")
        L.append("}")
        return "\n".join(L)

    def spawn_seq(self, s: ir.Spawn, ind: str) -> list[str]:
        vals = [cast(self.expr(a), a.ty, p.ty) for a, p in zip(s.args, self.bp.fields)]
        return [f"{ind}seq_{self.t.name}({', '.join(vals)});"]


# One 32-thread step of the split: the compaction of compaction.h for the CPU the module
# is compiled for (-march=native): AVX-512 vpcompress where the module targets VBMI2, else
# the AVX2 table-driven steps, else a branch-free scalar step.
SPLIT_STEPS = r"""
static inline uint32_t rv_bits32(const uint8_t *m) {
#if REVEC_X86 && defined(__AVX512VBMI2__) && defined(__AVX512VL__) && defined(__AVX512BW__)
    return revec_avx512_bits32(m);
#elif REVEC_X86 && defined(__AVX2__)
    return revec_bits32(m);
#else
    uint32_t b = 0;
    for (int u = 0; u < 32; u++) b |= (uint32_t)(m[u] != 0) << u;
    return b;
#endif
}
#define RV_SCALAR_STEP(B) \
static inline void rv_sstep##B(const uint##B##_t *x, uint##B##_t *o, int64_t j, uint32_t bits) { \
    for (int u = 0; u < 32; u++) { o[j] = x[u]; j += (bits >> u) & 1u; } }
RV_SCALAR_STEP(8) RV_SCALAR_STEP(16) RV_SCALAR_STEP(32) RV_SCALAR_STEP(64)
#if REVEC_X86 && defined(__AVX512VBMI2__) && defined(__AVX512VL__) && defined(__AVX512BW__)
#define RV_CSTEP8(x, o, j, b) ((void)revec_avx512_step8_32((x), (o), (j), (b)))
#define RV_CSTEP16(x, o, j, b) ((void)revec_avx512_step16_32((x), (o), (j), (b)))
#define RV_CSTEP32(x, o, j, b) ((void)revec_avx512_step32_32((x), (o), (j), (b)))
#define RV_CSTEP64(x, o, j, b) ((void)revec_avx512_step64_32((x), (o), (j), (b)))
#elif REVEC_X86 && defined(__AVX2__)
#define RV_CSTEP8(x, o, j, b) ((void)revec_avx2_step8_32((x), (o), (j), (b)))
#define RV_CSTEP16(x, o, j, b) ((void)revec_avx2_step16_32((x), (o), (j), (b)))
#define RV_CSTEP32(x, o, j, b) ((void)revec_avx2_step32_32((x), (o), (j), (b)))
#define RV_CSTEP64(x, o, j, b) ((void)revec_avx2_step64_32((x), (o), (j), (b)))
#else
#define RV_CSTEP8(x, o, j, b) rv_sstep8((x), (o), (j), (b))
#define RV_CSTEP16(x, o, j, b) rv_sstep16((x), (o), (j), (b))
#define RV_CSTEP32(x, o, j, b) rv_sstep32((x), (o), (j), (b))
#define RV_CSTEP64(x, o, j, b) rv_sstep64((x), (o), (j), (b))
#endif
/* A step whose 32 lanes are all kept is a copy, one that keeps none does nothing: blocks
   whose threads agree (every thread of a level inductive, every lane making a spawn) skip
   the compaction; the branch is predictable exactly then. */
#define RV_STEP_(W, x, o, j, b) do { uint32_t b_ = (b);                                   \
    if (b_ == 0xFFFFFFFFu) memcpy((o) + (j), (x), 32 * sizeof(uint##W##_t));           \
    else if (b_) RV_CSTEP##W((x), (o), (j), b_); } while (0)
#define RV_STEP8(x, o, j, b) RV_STEP_(8, x, o, j, b)
#define RV_STEP16(x, o, j, b) RV_STEP_(16, x, o, j, b)
#define RV_STEP32(x, o, j, b) RV_STEP_(32, x, o, j, b)
#define RV_STEP64(x, o, j, b) RV_STEP_(64, x, o, j, b)
"""

# GCC vectorizes with 256-bit vectors on AVX-512 CPUs unless told otherwise (the lower
# clock of 512-bit code costs more than it gains in most programs); the kernel's thread
# loops, 32 threads per step with no scalar code between them, are the case where
# 512-bit vectors pay.  Measured (this Intel Xeon, the eight benchmarks' default sizes,
# best B of 2^8 ... 2^14, medians of 5 interleaved runs, speed-up over the generated
# recursive C): fib 3.49x -> 3.99x, minmax +10%, knapsack +6%, uts +5%, binomial -8%,
# the others within 3%.  The whole module is compiled so; the recursive C is scalar.
WIDE_VECTORS = r"""
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__)
#pragma GCC target("prefer-vector-width=512")
#endif
"""

def drop_unused_labels(text: str) -> str:
    """The kernel ends each thread's body with a label for early returns; a kernel
    without such a return (no ``goto``) gets none (gcc -Wall: unused label)."""
    for label in ("next_thread", "next_thread_b"):
        if f"goto {label};" not in text:
            text = text.replace(f"{label}: ;", ";")
    return text


def generate_c_module(program: ir.Program, task: str) -> str:
    return CModuleGen(program, task).generate()

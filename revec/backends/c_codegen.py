"""Generation of C for one task: the block kernel, the schedule driver and the plain
recursive C of the same program (the ``seq`` baseline a C programmer would write).

The schedule is the numba back end's, statement for statement (see
``revec/runtime/numba_scheduler.py``): the same record stack, thresholds, compaction
of bfs children and statistics, so both back ends report the same numbers.
"""

from __future__ import annotations

from pathlib import Path

from revec import ir
from revec.backends.cexpr import C_PRELUDE, CExprEmitter, cast, ctype
from revec.backends.pyexpr import contains_return
from revec.errors import RevecError
from revec.lib import LIBRARY
from revec.transforms.blocking import to_block_program


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
                return self.gen.reduce(s, ind)
        raise AssertionError(f"unhandled IR statement {type(s).__name__}")


class CModuleGen:
    def __init__(self, program: ir.Program, task: str) -> None:
        self.program = program
        self.bp = to_block_program(program, task)
        self.t = self.bp.task
        self.arrays = sorted(program.arrays)
        self.expr = CExprEmitter(var, self.array_ref, self.helper_call, self.lib_call)
        self.current_helper: ir.HelperDef | None = None
        self.dynamic = self.t.max_spawns is None

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
               f"'{t.name}', C back end.  Do not edit. */", C_PRELUDE,
               "#define rv_idx(i, n) ((int64_t)(i) < 0 ? (int64_t)(i) + (n) : (int64_t)(i))"]
        for name in self.arrays:
            a = self.program.arrays[name]
            out.append(f"static const {ctype(ir.Ty(a.dtype))} *a_{name};")
        for r in self.bp.reducers:
            out.append(f"static {ctype(ir.Ty(r.dtype))} acc_{r.name};")
        for lib in self.program.libs:
            src = LIBRARY[lib].c_source
            if not src.strip():
                raise RevecError(f"library function {lib} has no C version")
            out.append(src)
        for h in self.program.helpers.values():
            out.append(self.helper(h))
        out.append(self.kernel())
        out.append(DRIVER.replace("@COMPACT@", self.compaction()))
        out.append(self.entry())
        out.append(self.seq())
        return "\n\n".join(out) + "\n"

    def locals_decl(self, locals_: dict[str, ir.Ty], ind: str) -> list[str]:
        return [f"{ind}{ctype(ty)} {var(n)} = 0;" for n, ty in sorted(locals_.items())]

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
        t = self.t
        f = self.bp.fields
        L = [f"static {ctype(p.ty)} *c_{p.name}, *b_{p.name}, *q_{p.name};" for p in f]
        L += ["static int64_t cap_frames, scratch_cap, *kcnt, kcap_alloc;", "",
              "static void grow_children(int64_t need_frames, int64_t need_k) {",
              "    if (need_k > kcap_alloc) {",
              "        int64_t k = need_k > 2 * kcap_alloc ? need_k : 2 * kcap_alloc;",
              "        kcnt = (int64_t *)realloc(kcnt, k * sizeof(int64_t));",
              "        memset(kcnt + kcap_alloc, 0, (k - kcap_alloc) * sizeof(int64_t));",
              "        kcap_alloc = k;",
              "    }",
              "    if (need_frames > cap_frames) {",
              "        int64_t c = need_frames > 2 * cap_frames ? need_frames : 2 * cap_frames;"]
        L += [f"        c_{p.name} = ({ctype(p.ty)} *)realloc(c_{p.name}, c * sizeof(*c_{p.name}));"
              for p in f]
        L += ["        cap_frames = c;", "    }", "}", "",
              "static void grow_scratch(int64_t n) {",
              "    if (n <= scratch_cap) return;"]
        for p in f:
            L += [f"    b_{p.name} = ({ctype(p.ty)} *)realloc(b_{p.name}, n * sizeof(*b_{p.name}));",
                  f"    q_{p.name} = ({ctype(p.ty)} *)realloc(q_{p.name}, n * sizeof(*q_{p.name}));"]
        L += ["    scratch_cap = n;", "}", "",
              "/* one block [off, off + n): returns the number of base threads */",
              "static int64_t kernel(int64_t off, int64_t n, int64_t out_base, int64_t *kused_out) {",
              f"    int64_t kused = {t.max_spawns or 0}, nb = 0, ni = 0;"]
        L += [f"    {ctype(p.ty)} {var(p.name)};" for p in f]
        L += self.locals_decl(t.locals, "    ")
        L.append("    /* is-base over all threads; branch-free compaction into base / inductive */")
        L.append("    for (int64_t t = 0; t < n; t++) {")
        L += [f"        {var(p.name)} = c_{p.name}[off + t];" for p in f]
        L.append(f"        int64_t isb = {self.expr(self.bp.is_base)} ? 1 : 0;")
        L += [f"        b_{p.name}[nb] = {var(p.name)}; q_{p.name}[ni] = {var(p.name)};"
              for p in f]
        L += ["        nb += isb; ni += 1 - isb;", "    }"]
        L.append("    for (int64_t j = 0; j < nb; j++) {")
        L += [f"        {var(p.name)} = b_{p.name}[j];" for p in f]
        L += CStmts(self, "kernel").block(self.bp.base, "        ")
        if contains_return(self.bp.base):
            L.append("        next_thread_b: ;")
        L.append("    }")
        L.append("    for (int64_t j = 0; j < ni; j++) {")
        L.append("        int64_t si = 0;")
        L += [f"        {var(p.name)} = q_{p.name}[j];" for p in f]
        L += CStmts(self, "kernel").block(self.bp.inductive, "        ")
        L += ["        next_thread: ;", "        (void)si;", "    }",
              "    *kused_out = kused;", "    return nb;", "}"]
        text = "\n".join(L)
        # a return in the base case jumps to the base loop's own label
        if contains_return(self.bp.base):
            head, sep, tail = text.partition("    for (int64_t j = 0; j < ni; j++) {")
            text = head.replace("goto next_thread;", "goto next_thread_b;") + sep + tail
        return text

    def spawn_kernel(self, s: ir.Spawn, ind: str) -> list[str]:
        f = self.bp.fields
        lines = [f"{ind}{{"]
        if self.dynamic:
            lines += [f"{ind}    if (si >= kused) {{", f"{ind}        kused = si + 1;",
                      f"{ind}        if (kused > kcap_alloc || out_base + kused * n > cap_frames)",
                      f"{ind}            grow_children(out_base + 2 * kused * n, 2 * kused);",
                      f"{ind}    }}"]
        vals = [self.expr(a) for a in s.args]
        lines += [f"{ind}    {ctype(p.ty)} _s{i} = {v};" for i, (p, v) in enumerate(zip(f, vals))]
        lines.append(f"{ind}    int64_t _d = out_base + si * n + kcnt[si];")
        lines += [f"{ind}    c_{p.name}[_d] = _s{i};" for i, p in enumerate(f)]
        lines += [f"{ind}    kcnt[si]++; si++;", f"{ind}}}"]
        return lines

    def reduce(self, s: ir.Reduce, ind: str) -> list[str]:
        decl = self.program.reducers[s.reducer]
        ty = ir.Ty(decl.dtype)
        acc = f"acc_{s.reducer}"
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
        for p in self.bp.fields:
            lines.append(f"                memmove(c_{p.name} + dst, c_{p.name} + src, "
                         f"kcnt[k] * sizeof(*c_{p.name}));")
        return "\n".join(lines)

    # ------------------------------------------------------------------ entry points
    def entry(self) -> str:
        f = self.bp.fields
        red = self.bp.reducers
        L = ["int revec_run(const char *root, int64_t B, int64_t R, int64_t P,",
             "               const void *const *arrays, char *accs, double **lv_out,",
             "               int64_t *nlv, int64_t *st_out) {"]
        for i, name in enumerate(self.arrays):
            a = self.program.arrays[name]
            L.append(f"    a_{name} = (const {ctype(ir.Ty(a.dtype))} *)arrays[{i}];")
        for i, r in enumerate(red):
            L.append(f"    memcpy(&acc_{r.name}, accs + {8 * i}, sizeof(acc_{r.name}));")
        L += ["    cap_frames = 0; scratch_cap = 0; kcap_alloc = 0; kcnt = NULL;"]
        L += [f"    c_{p.name} = NULL; b_{p.name} = NULL; q_{p.name} = NULL;" for p in f]
        L += [f"    grow_children(1024, {max(self.t.max_spawns or 4, 1)});",
              "    grow_scratch(1024);"]
        for i, p in enumerate(f):
            L.append(f"    memcpy(c_{p.name}, root + {8 * i}, sizeof(*c_{p.name}));")
        L += [f"    int rc = run_schedule({self.t.max_spawns if self.t.max_spawns else -1}, "
              "B, R, P, lv_out, nlv, st_out);"]
        for i, r in enumerate(red):
            L.append(f"    memcpy(accs + {8 * i}, &acc_{r.name}, sizeof(acc_{r.name}));")
        L += [f"    free(c_{p.name}); free(b_{p.name}); free(q_{p.name});" for p in f]
        L += ["    free(kcnt);", "    return rc;", "}", "",
              "void revec_free(void *p) { free(p); }"]
        return "\n".join(L)

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


CDEF = """
int revec_run(const char *root, int64_t B, int64_t R, int64_t P,
              const void *const *arrays, char *accs, double **lv_out,
              int64_t *nlv, int64_t *st_out);
void revec_seq(const char *root, const void *const *arrays, char *accs);
void revec_free(void *p);
"""

# The schedule of DESIGN.md section 3, as in revec/runtime/numba_scheduler.py.
DRIVER = r"""
enum { KIND, OFF, N, BASE, END, DEPTH, CUR, NSEG, SB, INIT, REC_COLS };
enum { SP, SEGTOP, MAXDEPTH, VEC, BLOCKS, LIVE, PEAK };
enum { L_TASKS, L_LEAVES, L_REEXP, L_GROWTH, L_RETURNS, LV_COLS };

static void *rv_grow(void *p, int64_t *cap, int64_t need, int64_t row_bytes) {
    if (need <= *cap) return p;
    int64_t c = need > 2 * *cap ? need : 2 * *cap;
    p = realloc(p, c * row_bytes);
    memset((char *)p + *cap * row_bytes, 0, (c - *cap) * row_bytes);
    *cap = c;
    return p;
}

static int run_schedule(int64_t static_k, int64_t B, int64_t R, int64_t P,
                        double **lv_out, int64_t *nlv, int64_t *st) {
    int64_t rcap = 0, scap = 0, lcap = 0;
    int64_t (*rec)[REC_COLS] = rv_grow(NULL, &rcap, 64, sizeof(*rec));
    int64_t (*seg)[2] = rv_grow(NULL, &scap, 64, sizeof(*seg));
    double (*lv)[LV_COLS] = rv_grow(NULL, &lcap, 64, sizeof(*lv));
    memset(st, 0, 12 * sizeof(int64_t));
    rec[0][KIND] = 0; rec[0][OFF] = 0; rec[0][N] = 1; rec[0][BASE] = 1; rec[0][END] = 1;
    st[SP] = 0; st[LIVE] = 1; st[PEAK] = 1;
    for (;;) {
        rec = rv_grow(rec, &rcap, st[SP] + 2, sizeof(*rec));
        int64_t sp = st[SP];
        if (sp < 0) break;
        int64_t off, n, depth, out_base, mode;
        if (rec[sp][KIND] == 1) {
            int64_t cur = rec[sp][CUR];
            if (cur == rec[sp][NSEG]) { st[SEGTOP] = rec[sp][SB]; st[SP] = sp - 1; continue; }
            int64_t s = rec[sp][SB] + cur;
            rec[sp][CUR] = cur + 1;
            n = seg[s][1];
            if (n == 0) continue;
            off = seg[s][0];
            depth = rec[sp][DEPTH];
            if (n < R) {  /* re-expansion: this child block runs in bfs mode */
                int64_t top = rec[sp][END];
                sp += 1;
                rec[sp][KIND] = 0; rec[sp][OFF] = off; rec[sp][N] = n; rec[sp][BASE] = top;
                rec[sp][END] = top; rec[sp][DEPTH] = depth; rec[sp][INIT] = n;
                st[SP] = sp;
                lv[depth][L_REEXP] += 1;
                continue;
            }
            mode = 1;
            out_base = rec[sp][END];
        } else {
            off = rec[sp][OFF]; n = rec[sp][N]; depth = rec[sp][DEPTH]; mode = 0;
            out_base = rec[sp][BASE] > off + n ? rec[sp][BASE] : off + n;
        }
        lv = rv_grow(lv, &lcap, depth + 2, sizeof(*lv));
        grow_scratch(n);
        if (static_k >= 0) grow_children(out_base + static_k * n, static_k);
        memset(kcnt, 0, kcap_alloc * sizeof(int64_t));
        int64_t kused;
        int64_t nb = kernel(off, n, out_base, &kused);
        lv[depth][L_TASKS] += n; lv[depth][L_LEAVES] += nb;
        st[BLOCKS] += 1; st[VEC] += n / P * P;
        if (depth > st[MAXDEPTH]) st[MAXDEPTH] = depth;
        if (mode == 0) {
            int64_t dst = rec[sp][BASE];
            for (int64_t k = 0; k < kused; k++) {
                int64_t src = out_base + k * n;
                if (src != dst) {
@COMPACT@
                }
                dst += kcnt[k];
            }
        }
        seg = rv_grow(seg, &scap, st[SEGTOP] + kused + 1, sizeof(*seg));
        int64_t m = 0;
        for (int64_t k = 0; k < kused; k++) m += kcnt[k];
        int64_t live = st[LIVE] + m;
        if (live > st[PEAK]) st[PEAK] = live;
        st[LIVE] = live - n;
        int64_t segtop = st[SEGTOP];
        if (mode == 1) {
            if (m == 0) continue;
            sp += 1;
            rec[sp][KIND] = 1; rec[sp][CUR] = 0; rec[sp][NSEG] = kused; rec[sp][SB] = segtop;
            rec[sp][END] = out_base + kused * n; rec[sp][DEPTH] = depth + 1; rec[sp][INIT] = 0;
            for (int64_t k = 0; k < kused; k++) {
                seg[segtop + k][0] = out_base + k * n; seg[segtop + k][1] = kcnt[k];
            }
            st[SEGTOP] = segtop + kused; st[SP] = sp;
            continue;
        }
        if (m == 0) { st[SP] = sp - 1; continue; }
        int64_t base = rec[sp][BASE];
        if (m < B) {
            rec[sp][OFF] = base; rec[sp][N] = m; rec[sp][END] = base + m;
            rec[sp][DEPTH] = depth + 1;
            continue;
        }
        if (rec[sp][INIT] > 0) {
            lv[depth + 1][L_GROWTH] += (double)m / (double)rec[sp][INIT];
            lv[depth + 1][L_RETURNS] += 1;
        }
        int64_t pos = base;
        for (int64_t k = 0; k < kused; k++) {
            seg[segtop + k][0] = pos; seg[segtop + k][1] = kcnt[k]; pos += kcnt[k];
        }
        rec[sp][KIND] = 1; rec[sp][CUR] = 0; rec[sp][NSEG] = kused; rec[sp][SB] = segtop;
        rec[sp][END] = base + m; rec[sp][DEPTH] = depth + 1;
        st[SEGTOP] = segtop + kused;
    }
    free(rec); free(seg);
    *lv_out = (double *)lv;
    *nlv = st[MAXDEPTH] + 1;
    return 0;
}
"""


def generate_c_module(program: ir.Program, task: str) -> str:
    return CModuleGen(program, task).generate()

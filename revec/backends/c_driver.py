"""The generated C's schedule driver: the shared driver object and each module's side.

The driver itself -- N worker threads, each running the schedule of DESIGN.md section 3
on its own record stack, balanced by work stealing at block granularity (the protocol:
docs/design.md, "Workers", and the comment at the top of ``csrc/driver.c``) -- is the
same for every program.  It is compiled once per compiler, flags and CPU into an object
that every generated module links (:data:`DRIVER_OBJECT`, built by
:mod:`revec.toolchain.cbuild`), instead of once more inside every module: it was about
70% of a generated module's build at -O3 (gcc 12, 2-core AMD EPYC: gcc -c of the fib
module 0.57-0.64 s with the driver inside, 0.14-0.21 s without).

This module writes the program's side: the ``rvm_*`` hooks of ``csrc/driver.h`` (the
kernel's block call, frame moves, packing for a thief, the accumulators) and the entry
points ``revec_run`` / ``revec_run_from`` (the Python side calls the latter through cffi,
by the address ``revec_entries`` hands out).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from revec import ir
from revec.backends.c_lanes import LoopEmitter
from revec.backends.c_leaves import two_level_blocks
from revec.backends.c_stmts import CGen, CStmts, read_names
from revec.emit.cexpr import cast, ctype
from revec.emit.writer import at
from revec.transforms.kernel_plan import KernelPlan, Split

_CSRC = Path(__file__).with_name("csrc")
DRIVER_H = (_CSRC / "driver.h").read_text()
_INCLUDE = '#include "driver.h"\n'


def _driver_c() -> str:
    """driver.c with driver.h inlined where it is included: one self-contained text
    (the object's cache key is this text)."""
    text = (_CSRC / "driver.c").read_text()
    assert text.count(_INCLUDE) == 1, "driver.c must include driver.h once"
    return text.replace(_INCLUDE, DRIVER_H)


class DriverGen(CGen, Protocol):
    """What the driver needs of the C module generator."""

    loop: LoopEmitter | None
    plan: KernelPlan

    def compaction(self) -> str: ...

    def bind_arrays(self) -> list[str]: ...

    def params_decl(self, params: tuple[ir.Param, ...], read: set[str]) -> list[str]: ...


# The shared driver object: (name, C source) for cbuild's ``objects``.
DRIVER_OBJECT: tuple[str, str] = ("revec_driver", _driver_c())

# What a module's own code needs of the driver (rv_realloc, rv_check_budget, rv_drive)
RUNTIME_PRELUDE = (r"""
#include <setjmp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
""" + DRIVER_H + r"""
/* generated declarations a given program may leave unused (gcc -Wall stays quiet) */
#define RV_MAYBE_UNUSED __attribute__((unused))
""")

# What the Python side calls, declared to cffi as function-pointer types and handed out by
# one function, ``revec_entries``, instead of as functions: cffi writes a Python-call
# wrapper (argument conversion, error paths) for every function of a cdef, and those of
# the five entry points were about a seventh of a generated module's build (gcc -c of a
# generated test program, medians of 8: 0.543 -> 0.473 s, 2-core AMD EPYC, gcc 12).  A
# call through a cffi function pointer converts the same arguments and releases the GIL
# the same way; the Python side makes a handful of such calls per run.
ENTRIES = ("revec_run_from", "revec_seq", "revec_free", "revec_set_interrupt",
           "revec_seq_omp")
CDEF = """
typedef int (*revec_run_from_t)(const char *root, const void *const *cols, int64_t n,
                   int64_t depth, int64_t stop_at, void **front_cols, int64_t *front_n,
                   int64_t *front_depth, int64_t B, int64_t R, int64_t P,
                   const void *const *arrays, char *accs, double **lv_out,
                   int64_t *nlv, int64_t *st_out, int64_t max_bytes,
                   int64_t workers, int64_t *wst_out);
typedef void (*revec_seq_t)(const char *root, const void *const *arrays, char *accs);
typedef void (*revec_free_t)(void *p);
typedef void (*revec_set_interrupt_t)(const int64_t *flag);
/* the OpenMP-tasks peer: NULL in a module built without -fopenmp */
typedef void (*revec_seq_omp_t)(const char *root, const void *const *arrays, char *accs,
                                int64_t cutoff, int64_t threads);
void revec_entries(void **out);
"""

# per-worker statistics (wst_out rows; the W_* enum of csrc/driver.c)
W_TASKS, W_STEALS, W_ATTEMPTS, W_IDLE_NS, W_GIVEN, W_PEAK, W_BLOCKS, W_CPU_NS = range(8)
W_COLS = 8

def _combine(r: ir.ReducerDecl, a: str, b: str) -> str:
    """C statement folding accumulator value ``b`` into ``a`` (same type)."""
    ty = ir.Ty(r.dtype)
    if r.op == "sum":
        if ty.kind == "b":
            return f"{a} = {a} || {b};"
        if ty.kind == "f":
            return f"{a} = ({ctype(ty)})({a} + {b});"
        u = "u" + ctype(ty) if ty.kind == "i" else ctype(ty)
        return f"{a} = ({ctype(ty)})(({u}){a} + ({u}){b});"
    cmp = "<" if r.op == "min" else ">"
    return f"if ({b} {cmp} {a}) {a} = {b};"


def block_in_place_scratch(plan: KernelPlan, line: str) -> list[str]:
    """``line`` (about block_in_place's masks, ``pmask``) where the plan's split has
    the pass (Split.prepass), else nothing."""
    split = plan.step(Split)
    return [line] if isinstance(split, Split) and split.prepass else []


def driver_source(gen: DriverGen) -> str:
    """The program's side of the driver: the ``rvm_*`` hooks of ``csrc/driver.h`` (after
    the kernel, whose state they reach)."""
    f = gen.bp.columns
    red = gen.bp.reducers
    static_k = two_level_blocks(gen.plan, gen.t.max_spawns or 0)
    ncols = max(len(f), 1)  # a program without frame columns keeps one (C arrays)
    widths = ", ".join(str(p.ty.dtype.itemsize) for p in f) or "0"
    L = [f"static const int64_t rv_col_bytes[{ncols}] = {{{widths}}};",
         "static const rv_prog rv_this = {",
         f"    .ncols = {ncols}, .col_bytes = rv_col_bytes,",
         f"    .acc_bytes = {8 * max(len(red), 1)}, .slack = RV_SLACK }};",
         "/* the frontier of an expansion (rvm_export), read by revec_run_from */",
         f"static void *rv_front_cols[{ncols}];",
         "static int64_t rv_front_n, rv_front_depth;",
         "",
         "int64_t rvm_block(int64_t off, int64_t n, int64_t out_base, int64_t *kused,",
         "                  const int64_t **counts, const int64_t **leaves) {",
         "    grow_scratch(n);"]
    if static_k:
        L.append(f"    grow_children(out_base + {static_k} * (n + RV_SLACK), {static_k});")
    # Only the counts the previous block used are cleared, not all kcap_alloc of them:
    # uts's root spawns 2,000 children, so the whole array was a 32 KB memset for every
    # block after it.  A kernel left by longjmp (budget, no memory, Ctrl-C) leaves
    # kdirty = kcap_alloc, so the next block clears everything.
    L += ["    memset(kcnt, 0, kdirty * sizeof(int64_t));"]
    if gen.plan.leaf_inline is not None:
        L.append("    memset(kleaf, 0, sizeof(kleaf));")
    L += ["    kdirty = kcap_alloc;",
          "    int64_t nb = kernel(off, n, out_base, kused);",
          "    kdirty = *kused;  /* the kernel counts children at spawn indices < kused */",
          "    *counts = kcnt;  /* after the kernel: a dynamic kernel may grow it */",
          "    *leaves = " + ("kleaf;  /* the children inlined as leaves */"
                             if gen.plan.leaf_inline is not None else "NULL;"),
          "    return nb;",
          "}",
          "void rvm_move(int64_t src, int64_t dst, int64_t cnt) {",
          gen.compaction(),
          "    (void)src; (void)dst; (void)cnt;",
          "}",
          "void rvm_grow_children(int64_t frames, int64_t k) { grow_children(frames, k); }",
          "void rvm_grow_scratch(int64_t n) { grow_scratch(n); }",
          "void rvm_pack(rv_pkg *pk, int64_t at, int64_t off, int64_t cnt) {"]
    L += [f"    memcpy((char *)pk->cols[{i}] + at * {p.ty.dtype.itemsize}, c_{p.name} + off, "
          f"cnt * sizeof(*c_{p.name}));" for i, p in enumerate(f)]
    L += ["    (void)pk; (void)at; (void)off; (void)cnt;", "}",
          "void rvm_unpack(const rv_pkg *pk) {"]
    L += [f"    memcpy(c_{p.name}, pk->cols[{i}], pk->n * sizeof(*c_{p.name}));"
          for i, p in enumerate(f)]
    L += ["    (void)pk;", "}",
          "void rvm_export(int64_t off, int64_t n, int64_t depth) {",
          "    rv_front_n = n; rv_front_depth = depth;"]
    L += [f"    rv_front_cols[{i}] = rv_realloc(NULL, n * sizeof(*c_{p.name}));\n"
          f"    memcpy(rv_front_cols[{i}], c_{p.name} + off, n * sizeof(*c_{p.name}));"
          for i, p in enumerate(f)]
    L += ["    (void)off;", "}",
          "void rvm_worker_init(const char *accs) {",
          "    cap_frames = 0; scratch_cap = 0; kcap_alloc = 0; kdirty = 0; kcnt = NULL;"]
    L += [f"    c_{p.name} = NULL; b_{p.name} = NULL; q_{p.name} = NULL;" for p in f]
    L += block_in_place_scratch(gen.plan, "    pmask = NULL;")
    L += [f"    memcpy(&acc_{r.name}, accs + {8 * i}, sizeof(acc_{r.name}));"
          for i, r in enumerate(red)]
    L += ["    (void)accs;", "}",
          "void rvm_worker_done(char *accs) {"]
    L += [f"    memcpy(accs + {8 * i}, &acc_{r.name}, sizeof(acc_{r.name}));"
          for i, r in enumerate(red)]
    L += [f"    free(c_{p.name}); free(b_{p.name}); free(q_{p.name});" for p in f]
    L += [f"    c_{p.name} = NULL; b_{p.name} = NULL; q_{p.name} = NULL;" for p in f]
    L += block_in_place_scratch(gen.plan, "    free(pmask); pmask = NULL;")
    if gen.loop is not None:
        L += gen.loop.free()
    L += ["    free(kcnt); kcnt = NULL; kcap_alloc = 0; kdirty = 0; cap_frames = 0;",
          "    scratch_cap = 0;",
          "    (void)accs;", "}",
          "void rvm_load_root(const char *root) {"]
    for i, p in enumerate(gen.bp.fields):
        if p.name not in gen.bp.invariant:
            L.append(f"    memcpy(c_{p.name}, root + {8 * i}, sizeof(*c_{p.name}));")
    L += ["    (void)root;", "}",
          "void rvm_merge_accs_into(char *dst, const char *src) {"]
    for i, r in enumerate(red):
        t = ctype(ir.Ty(r.dtype))
        L += [f"    {{ {t} a, b; memcpy(&a, dst + {8 * i}, sizeof(a)); "
              f"memcpy(&b, src + {8 * i}, sizeof(b));",
              f"      {_combine(r, 'a', 'b')}",
              f"      memcpy(dst + {8 * i}, &a, sizeof(a)); }}"]
    L += ["    (void)dst; (void)src;", "}"]
    return "\n".join(L)


def entry_source(gen: DriverGen) -> str:
    """``revec_run``: set the program's globals, run the shared driver, hand out the
    frontier."""
    ncols = max(len(gen.bp.columns), 1)
    L = ["int revec_run_from(const char *root, const void *const *cols, int64_t n,",
         "                   int64_t depth, int64_t stop_at, void **front_cols,",
         "                   int64_t *front_n, int64_t *front_depth,",
         "                   int64_t B, int64_t R, int64_t P,",
         "                   const void *const *arrays, char *accs, double **lv_out,",
         "                   int64_t *nlv, int64_t *st_out, int64_t max_bytes,",
         "                   int64_t workers, int64_t *wst_out) {",
         "    rv_front_n = 0; rv_front_depth = 0;",
         f"    for (int c = 0; c < {ncols}; c++) rv_front_cols[c] = NULL;"]
    L += gen.bind_arrays()
    for i, p in enumerate(gen.bp.fields):
        if p.name in gen.bp.invariant:
            L.append(f"    memcpy(&u_{p.name}, root + {8 * i}, sizeof(u_{p.name}));")
    # a bound's published value starts at its accumulator's (before the workers start)
    L += [f"    memcpy(&bg_{r.name}, accs + {8 * i}, sizeof(bg_{r.name}));"
          for i, r in enumerate(gen.bp.reducers) if r.bound]
    L += ["    int rc = rv_drive(&rv_this, root, cols, n, depth, stop_at, B, R, P, accs,",
          "                      lv_out, nlv, st_out, max_bytes, workers, wst_out);",
          f"    for (int c = 0; c < {ncols}; c++) front_cols[c] = rv_front_cols[c];",
          "    *front_n = rv_front_n; *front_depth = rv_front_depth;",
          "    (void)arrays;",
          "    return rc;",
          "}", "",
          "int revec_run(const char *root, int64_t B, int64_t R, int64_t P,",
          "              const void *const *arrays, char *accs, double **lv_out,",
          "              int64_t *nlv, int64_t *st_out, int64_t max_bytes,",
          "              int64_t workers, int64_t *wst_out) {",
          f"    void *front[{ncols}]; int64_t fn, fd;",
          "    return revec_run_from(root, NULL, 0, 0, 0, front, &fn, &fd, B, R, P, arrays,",
          "                          accs, lv_out, nlv, st_out, max_bytes, workers, wst_out);",
          "}", "", "void revec_free(void *p) { free(p); }"]
    return "\n".join(L)


# ------------------------------------------------------------------ OpenMP-tasks peer
def omp_source(gen: DriverGen) -> str:
    """The plain recursive C of the program with a ``#pragma omp task`` per spawn above
    depth ``cutoff`` (the way a C programmer parallelizes it with gcc): the multi-core
    peer of the benchmarks' tables.  Reducers accumulate per thread (they are
    thread-local) and are merged at the end.  Compiled only with ``-fopenmp``."""
    t = gen.t
    f = gen.bp.fields
    red = gen.bp.reducers

    class OmpStmts(CStmts):
        def code(self, s: ir.Stmt, ind: str) -> list[str]:
            if not isinstance(s, ir.Spawn):
                return super().code(s, ind)
            lines = [f"{ind}{{"]
            lines += [f"{ind}    {ctype(p.ty)} _a{i} = {cast(gen.expr(a), a.ty, p.ty)};"
                      for i, (p, a) in enumerate(zip(f, s.args))]
            args = ", ".join(f"_a{i}" for i in range(len(f)))
            lines += [f"{ind}    if (_depth < rv_omp_cutoff) {{",
                      "#pragma omp task",
                      f"{ind}        omp_{t.name}({args}{', ' if args else ''}_depth + 1);",
                      f"{ind}    }} else {{",
                      f"{ind}        seq_{t.name}({args});",
                      f"{ind}    }}", f"{ind}}}"]
            return lines

    body = at(t.is_base.loc, [f"    if ({gen.expr(t.is_base)}) {{"])
    body += OmpStmts(gen, "seq").block(t.base, "        ")
    body += ["        return;", "    }"]
    body += OmpStmts(gen, "seq").block(t.inductive, "    ")
    params = ", ".join(gen.params_decl(f, read_names(t, body)) + ["int64_t _depth"])
    L = ["#ifdef _OPENMP", "#include <omp.h>", "static int64_t rv_omp_cutoff;",
         f"static void omp_{t.name}({params});",
         *at(t.loc, [f"static void omp_{t.name}({params}) {{"])]
    L += gen.locals_decl(t.locals, "    ")
    L += body
    L += ["}", "",
          "void revec_seq_omp(const char *root, const void *const *arrays, char *accs,",
          "                   int64_t cutoff, int64_t threads) {"]
    L += gen.bind_arrays()
    L.append("    (void)arrays;")
    args = []
    for i, p in enumerate(f):
        L.append(f"    {ctype(p.ty)} r{i}; memcpy(&r{i}, root + {8 * i}, sizeof(r{i}));")
        args.append(f"r{i}")
    args.append("0")
    L += ["    rv_omp_cutoff = cutoff;",
          f"    char out[{8 * max(len(red), 1)}];",
          "    memcpy(out, accs, sizeof(out));",
          "#pragma omp parallel num_threads((int)threads)",
          "    {"]
    L += [f"        memcpy(&acc_{r.name}, accs + {8 * i}, sizeof(acc_{r.name}));"
          for i, r in enumerate(red)]
    L += ["#pragma omp single", f"        omp_{t.name}({', '.join(args)});",
          "#pragma omp critical", "        {"]
    for i, r in enumerate(red):
        ty = ctype(ir.Ty(r.dtype))
        L += [f"            {{ {ty} a, b = acc_{r.name}; memcpy(&a, out + {8 * i}, sizeof(a));",
              f"              {_combine(r, 'a', 'b')}",
              f"              memcpy(out + {8 * i}, &a, sizeof(a)); }}"]
    L += ["        }", "    }"]
    L += [f"    memcpy(accs + {8 * i}, out + {8 * i}, 8);" for i in range(len(red))]
    L += ["    (void)root;", "}", "#endif"]
    return "\n".join(L)


def entries_source() -> str:
    """``revec_entries``: the addresses of the entry points (:data:`ENTRIES`, in order),
    after every one of them in the module."""
    L = ["void revec_entries(void **out) {"]
    for i, name in enumerate(ENTRIES):
        if name == "revec_seq_omp":
            L += ["#ifdef _OPENMP", f"    out[{i}] = (void *){name};", "#else",
                  f"    out[{i}] = NULL;", "#endif"]
        else:
            L.append(f"    out[{i}] = (void *){name};")
    L.append("}")
    return "\n".join(L)

"""The generated C's schedule driver: N worker threads, each running the schedule of
DESIGN.md section 3 on its own record stack, balanced by work stealing at block
granularity (docs/design.md, "Workers").

The kernel's state (frame columns, scratch, child counters, reducer accumulators) is
thread-local (``RV_TLS``), so every worker runs the same kernel on its own arrays.

Stealing is receiver-initiated with private record stacks: an idle worker (the thief)
posts its id in a victim's ``req`` word (compare-and-swap from 0) and waits; the victim
answers between two blocks (it never stops in the middle of a block) by packing work
into the thief's package and setting the thief's ``resp``.  Only the owner ever reads
or writes its record stack, segments and frames, so the hot path takes no lock: one
relaxed load of ``req`` per block.  What the victim gives: the oldest record with
pending child blocks (the bottom of the stack first, like Cilk's steal of the oldest
continuation), half of its pending child blocks (the last ones); if there is none, half
of the top bfs block when it holds at least ``RV_MIN_SPLIT`` threads.

Termination: ``rv_busy`` counts the workers that hold work.  A worker whose stack
empties decrements it; a victim that gives work increments it on the thief's behalf
*before* answering, while it itself still holds work, so the count never reads 0 while
work exists anywhere (on a stack or in a package on its way).  Every idle or waiting
worker stops once it reads 0.
"""

from __future__ import annotations

from typing import Protocol

from revec import ir
from revec.backends.c_lanes import LoopEmitter
from revec.backends.c_stmts import CGen, CStmts
from revec.backends.cexpr import cast, ctype


class DriverGen(CGen, Protocol):
    """What the driver needs of the C module generator."""

    loop: LoopEmitter | None

    def compaction(self) -> str: ...

# Allocation with a memory budget shared by all workers: failures leave the failing
# worker through its rv_fail (setjmp in its thread) and stop every other worker.
RUNTIME_PRELUDE = r"""
#include <setjmp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#define RV_TLS __thread
/* generated declarations a given program may leave unused (gcc -Wall stays quiet) */
#define RV_MAYBE_UNUSED __attribute__((unused))
static RV_TLS jmp_buf rv_fail;
static RV_TLS int rv_fail_code;
static int64_t rv_budget;           /* bytes of thread frames allowed (all workers); 0 = no limit */
static _Atomic int64_t rv_used;     /* bytes of thread frames held by all workers */
static RV_TLS int64_t rv_mine;      /* ... by this worker */
static _Atomic int rv_stop;         /* set (to a failure code) when a worker fails */
enum { RV_OK = 0, RV_NOMEM = 2, RV_BUDGET = 3, RV_INTERRUPTED = 4 };
static const volatile int64_t *rv_interrupt;  /* nonzero: stop (Ctrl-C) */
void revec_set_interrupt(const int64_t *flag) { rv_interrupt = flag; }

static void *rv_realloc(void *p, int64_t bytes) {
    void *q = realloc(p, bytes > 0 ? (size_t)bytes : 1);
    if (!q) { rv_fail_code = RV_NOMEM; longjmp(rv_fail, 1); }
    return q;
}

/* this worker now holds `bytes` bytes of frames: check the total of all workers */
static void rv_check_budget(int64_t bytes) {
    int64_t d = bytes - rv_mine;
    int64_t total = atomic_fetch_add_explicit(&rv_used, d, memory_order_relaxed) + d;
    rv_mine = bytes;
    if (rv_budget > 0 && total > rv_budget) { rv_fail_code = RV_BUDGET; longjmp(rv_fail, 1); }
}
"""

CDEF = """
int revec_run(const char *root, int64_t B, int64_t R, int64_t P,
              const void *const *arrays, char *accs, double **lv_out,
              int64_t *nlv, int64_t *st_out, int64_t max_bytes,
              int64_t workers, int64_t *wst_out);
int revec_run_from(const char *root, const void *const *cols, int64_t n, int64_t depth,
                   int64_t stop_at, void **front_cols, int64_t *front_n,
                   int64_t *front_depth, int64_t B, int64_t R, int64_t P,
                   const void *const *arrays, char *accs, double **lv_out,
                   int64_t *nlv, int64_t *st_out, int64_t max_bytes,
                   int64_t workers, int64_t *wst_out);
void revec_seq(const char *root, const void *const *arrays, char *accs);
void revec_free(void *p);
void revec_set_interrupt(const int64_t *flag);
"""

# per-worker statistics (wst_out rows)
W_TASKS, W_STEALS, W_ATTEMPTS, W_IDLE_NS, W_GIVEN, W_PEAK, W_BLOCKS, W_CPU_NS = range(8)
W_COLS = 8

DRIVER = r"""
enum { KIND, OFF, N, BASE, END, DEPTH, CUR, NSEG, SB, INIT, REC_COLS };
enum { SP, SEGTOP, MAXDEPTH, VEC, BLOCKS, LIVE, PEAK, ST_COLS = 12 };
enum { L_TASKS, L_LEAVES, L_REEXP, L_GROWTH, L_RETURNS, LV_COLS };
enum { W_TASKS, W_STEALS, W_ATTEMPTS, W_IDLE_NS, W_GIVEN, W_PEAK, W_BLOCKS, W_CPU_NS,
       W_COLS = 8 };
enum { RQ_WAIT = 1, RQ_WORK = 2, RQ_EMPTY = 3 };
#define RV_MIN_SPLIT 64  /* a bfs block is split for a thief from this many threads */

typedef struct {
    int64_t kind, depth, n, nseg;  /* kind 0: a bfs block; 2: a block of B or more
                                      (blocked); 1: nseg child blocks of a blocked level */
    int64_t *counts;               /* kind 1: the child blocks' sizes */
    void *cols[RV_NCOLS];          /* n frames, column by column */
} rv_pkg;

typedef struct {
    int64_t (*rec)[REC_COLS]; int64_t rcap;
    int64_t (*seg)[2]; int64_t scap;
    double (*lv)[LV_COLS]; int64_t lcap;
    int64_t st[ST_COLS];
    int64_t ws[W_COLS];
    char accs[RV_ACC_BYTES];
    int id; uint64_t rng;
    _Atomic int req;   /* a thief's id + 1 waiting for an answer from this worker, or 0 */
    _Atomic int resp;  /* the answer to this worker's own request */
    rv_pkg pkg;        /* work handed to this worker by a victim */
    char pad[64];
} rv_worker;

static rv_worker *rv_workers;
static int rv_nworkers;
static _Atomic int64_t rv_busy;  /* workers holding work or being handed it */
static int64_t rv_static_k, rv_B, rv_R, rv_P;
static const char *rv_root;

static void *rv_grow(void *p, int64_t *cap, int64_t need, int64_t row_bytes) {
    if (need <= *cap) return p;
    int64_t c = need > 2 * *cap ? need : 2 * *cap;
    p = rv_realloc(p, c * row_bytes);
    memset((char *)p + *cap * row_bytes, 0, (c - *cap) * row_bytes);
    *cap = c;
    return p;
}

static int64_t rv_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void rv_pause(int64_t spins) {
    if (spins > 64) { sched_yield(); return; }  /* oversubscribed: let the others run */
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void rv_pkg_free(rv_pkg *pk) {
    for (int c = 0; c < RV_NCOLS; c++) { free(pk->cols[c]); pk->cols[c] = NULL; }
    free(pk->counts); pk->counts = NULL;
    pk->n = 0;
}

static int rv_pkg_alloc(rv_pkg *pk, int64_t n, int64_t nseg) {
    memset(pk, 0, sizeof(*pk));
    pk->n = n; pk->nseg = nseg;
    pk->counts = (int64_t *)malloc((nseg > 0 ? nseg : 1) * sizeof(int64_t));
    int ok = pk->counts != NULL;
    for (int c = 0; c < RV_NCOLS; c++) {
        pk->cols[c] = malloc(n * rv_col_bytes[c] + 1);
        ok = ok && pk->cols[c] != NULL;
    }
    if (!ok) rv_pkg_free(pk);
    return ok;
}

/* Victim side, between two blocks: give part of this worker's work to a thief. */
static int rv_give(rv_worker *w, rv_pkg *pk) {
    int64_t sp = w->st[SP];
    for (int64_t s = 0; s <= sp; s++) {  /* the oldest record with pending child blocks */
        int64_t *r = w->rec[s];
        if (r[KIND] != 1) continue;
        int64_t cur = r[CUR], nseg = r[NSEG];
        while (nseg > cur && w->seg[r[SB] + nseg - 1][1] == 0) nseg--;
        r[NSEG] = nseg;  /* empty child blocks at the end are skipped anyway */
        if (nseg <= cur) continue;
        /* half of the pending child blocks; the top record keeps at least one (the
           owner's next block), a lower one may give its last (work runs above it) */
        int64_t give = s == sp ? (nseg - cur) / 2 : (nseg - cur + 1) / 2;
        if (give == 0) continue;
        int64_t first = nseg - give, total = 0;
        for (int64_t k = first; k < nseg; k++) total += w->seg[r[SB] + k][1];
        if (!rv_pkg_alloc(pk, total, give)) return 0;
        pk->kind = 1; pk->depth = r[DEPTH];
        int64_t at = 0;
        for (int64_t k = first; k < nseg; k++) {
            int64_t cnt = w->seg[r[SB] + k][1];
            rv_pack(pk, at, w->seg[r[SB] + k][0], cnt);
            pk->counts[k - first] = cnt;
            at += cnt;
        }
        r[NSEG] = first;
        w->st[LIVE] -= total;
        return 1;
    }
    if (sp < 0) return 0;
    int64_t *r = w->rec[sp];  /* a large bfs block (or the block of the bfs -> blocked
                                 switch): its second half */
    if (r[KIND] == 1 || r[N] < RV_MIN_SPLIT) return 0;
    int64_t h = r[N] / 2;
    if (!rv_pkg_alloc(pk, h, 0)) return 0;
    pk->kind = r[KIND]; pk->depth = r[DEPTH];
    rv_pack(pk, 0, r[OFF] + r[N] - h, h);
    r[N] -= h;
    w->st[LIVE] -= h;
    return 1;
}

/* Thief side: the package becomes this (empty) worker's record stack. */
static void rv_take(rv_worker *w) {
    rv_pkg *pk = &w->pkg;
    int64_t n = pk->n;
    grow_children(n + 1, 1);
    rv_unpack(pk);
    w->seg = rv_grow(w->seg, &w->scap, pk->nseg + 1, sizeof(*w->seg));
    int64_t *r = w->rec[0];
    memset(r, 0, sizeof(w->rec[0]));
    r[KIND] = pk->kind; r[DEPTH] = pk->depth; r[END] = n;
    if (pk->kind == 1) {
        int64_t at = 0;
        for (int64_t k = 0; k < pk->nseg; k++) {
            w->seg[k][0] = at; w->seg[k][1] = pk->counts[k]; at += pk->counts[k];
        }
        r[CUR] = 0; r[NSEG] = pk->nseg; r[SB] = 0;
    } else {
        r[OFF] = 0; r[N] = n; r[BASE] = n;
    }
    w->st[SEGTOP] = pk->kind == 1 ? pk->nseg : 0;
    w->st[SP] = 0;
    w->st[LIVE] += n;
    if (w->st[LIVE] > w->st[PEAK]) w->st[PEAK] = w->st[LIVE];
    rv_pkg_free(pk);
}

/* Answer a thief waiting on this worker (called between blocks). */
static inline void rv_serve(rv_worker *w, int has_work) {
    int q = atomic_load_explicit(&w->req, memory_order_relaxed);
    if (!q) return;
    q = atomic_load_explicit(&w->req, memory_order_acquire);  /* the thief's writes */
    rv_worker *t = &rv_workers[q - 1];
    if (has_work && rv_give(w, &t->pkg)) {
        atomic_fetch_add(&rv_busy, 1);  /* before the answer: the count never reads 0 */
        w->ws[W_GIVEN] += 1;
        atomic_store(&t->resp, RQ_WORK);
    } else {
        atomic_store(&t->resp, RQ_EMPTY);
    }
    atomic_store(&w->req, 0);
}

/* Idle: ask random victims until one gives work (1) or all work is done (0). */
static int rv_steal(rv_worker *w) {
    int64_t t0 = rv_now_ns(), spins = 0;
    int got = 0;
    while (!atomic_load(&rv_stop) && atomic_load(&rv_busy) > 0) {
        rv_serve(w, 0);
        w->rng ^= w->rng << 13; w->rng ^= w->rng >> 7; w->rng ^= w->rng << 17;
        int v = (int)(w->rng % (uint64_t)(rv_nworkers - 1));
        if (v >= w->id) v++;
        rv_worker *vw = &rv_workers[v];
        int zero = 0;
        if (atomic_load_explicit(&vw->req, memory_order_relaxed) != 0) {
            rv_pause(++spins); continue;
        }
        atomic_store(&w->resp, RQ_WAIT);
        if (!atomic_compare_exchange_strong(&vw->req, &zero, w->id + 1)) {
            rv_pause(++spins); continue;
        }
        w->ws[W_ATTEMPTS] += 1;
        int r, quit = 0;
        int64_t wait = 0;
        while ((r = atomic_load(&w->resp)) == RQ_WAIT) {
            rv_serve(w, 0);
            if (atomic_load(&rv_stop) || atomic_load(&rv_busy) == 0) { quit = 1; break; }
            rv_pause(++wait);
        }
        if (quit) break;
        if (r == RQ_WORK) { got = 1; break; }
        rv_pause(++spins);
    }
    w->ws[W_IDLE_NS] += rv_now_ns() - t0;
    if (got) { w->ws[W_STEALS] += 1; rv_take(w); }
    return got;
}

/* The schedule of DESIGN.md section 3 on this worker's stack, until it is empty. */
static void rv_schedule(rv_worker *w) {
    int64_t static_k = rv_static_k, B = rv_B, R = rv_R, P = rv_P;
    int64_t *st = w->st;
    int64_t (*rec)[REC_COLS] = w->rec;
    int64_t (*seg)[2] = w->seg;
    double (*lv)[LV_COLS] = w->lv;
    for (;;) {
        if (atomic_load_explicit(&rv_stop, memory_order_relaxed)) return;
        /* Ctrl-C: the interrupt flag of revec.runtime.interrupt (set by Python's SIGINT
           handler), checked by every worker once per block record; the failing worker
           stops the others and the caller raises KeyboardInterrupt */
        if (rv_interrupt != NULL && *rv_interrupt != 0) {
            rv_fail_code = RV_INTERRUPTED; longjmp(rv_fail, 1);
        }
        if (rv_stop_at > 0 && st[SP] == 0 && rec[0][KIND] != 1 && rec[0][N] >= rv_stop_at) {
            rv_export(rec[0][OFF], rec[0][N], rec[0][DEPTH]);  /* the frontier */
            st[SP] = -1;
            return;
        }
        rv_serve(w, 1);
        seg = w->seg;
        w->rec = rec = rv_grow(rec, &w->rcap, st[SP] + 2, sizeof(*rec));
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
                w->lv = lv = rv_grow(lv, &w->lcap, depth + 2, sizeof(*lv));
                lv[depth][L_REEXP] += 1;
                continue;
            }
            mode = 1;
            out_base = rec[sp][END];
        } else if (rec[sp][KIND] == 2) {  /* the bfs -> blocked switch: one block, blocked */
            off = rec[sp][OFF]; n = rec[sp][N]; depth = rec[sp][DEPTH]; mode = 1;
            out_base = rec[sp][END];
            rec[sp][KIND] = 1; rec[sp][CUR] = 0; rec[sp][NSEG] = 0; rec[sp][SB] = st[SEGTOP];
        } else {
            off = rec[sp][OFF]; n = rec[sp][N]; depth = rec[sp][DEPTH]; mode = 0;
            out_base = rec[sp][BASE];  /* the kernel reads the block before writing */
        }
        w->lv = lv = rv_grow(lv, &w->lcap, depth + 2, sizeof(*lv));
        grow_scratch(n);
        if (static_k >= 0) grow_children(out_base + static_k * (n + RV_SLACK), static_k);
        memset(kcnt, 0, kcap_alloc * sizeof(int64_t));
        int64_t kused;
        int64_t nb = kernel(off, n, out_base, &kused);
        int64_t ni = n - nb + RV_SLACK;  /* child block k starts at out_base + k * ni */
        lv[depth][L_TASKS] += n; lv[depth][L_LEAVES] += nb;
        st[BLOCKS] += 1; st[VEC] += n / P * P;
        if (depth > st[MAXDEPTH]) st[MAXDEPTH] = depth;
        if (mode == 0) {
            int64_t dst = rec[sp][BASE];
            for (int64_t k = 0; k < kused; k++) {
                int64_t src = out_base + k * ni;
                if (src != dst) {
@COMPACT@
                }
                dst += kcnt[k];
            }
        }
        w->seg = seg = rv_grow(seg, &w->scap, st[SEGTOP] + kused + 1, sizeof(*seg));
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
            rec[sp][END] = out_base + kused * ni; rec[sp][DEPTH] = depth + 1; rec[sp][INIT] = 0;
            for (int64_t k = 0; k < kused; k++) {
                seg[segtop + k][0] = out_base + k * ni; seg[segtop + k][1] = kcnt[k];
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
        /* B or more: the next block runs in blocked mode as one block (DESIGN.md 3) */
        rec[sp][KIND] = 2; rec[sp][OFF] = base; rec[sp][N] = m;
        rec[sp][END] = base + m; rec[sp][DEPTH] = depth + 1;
    }
}

static int64_t rv_cpu_ns(void) {  /* this thread's CPU time */
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *rv_worker_main(void *arg) {
    rv_worker *w = (rv_worker *)arg;
    w->ws[W_CPU_NS] = rv_cpu_ns();
    rv_mine = 0;
    rv_worker_init(w->accs);
    if (setjmp(rv_fail) != 0) {  /* out of memory or over the budget: stop everyone */
        int none = 0;
        atomic_compare_exchange_strong(&rv_stop, &none, rv_fail_code);
        goto out;
    }
    w->rec = rv_grow(NULL, &w->rcap, 64, sizeof(*w->rec));
    w->seg = rv_grow(NULL, &w->scap, 64, sizeof(*w->seg));
    w->lv = rv_grow(NULL, &w->lcap, 64, sizeof(*w->lv));
    w->st[SP] = -1;
    grow_children(1024, rv_static_k > 0 ? rv_static_k : 4);
    grow_scratch(1024);
    if (w->id == 0 && rv_from_n > 0) {  /* given frames: one bfs block */
        rv_pkg *pk = &w->pkg;
        if (!rv_pkg_alloc(pk, rv_from_n, 0)) { rv_fail_code = RV_NOMEM; longjmp(rv_fail, 1); }
        for (int c = 0; c < RV_NCOLS; c++)
            if (rv_from_cols[c]) memcpy(pk->cols[c], rv_from_cols[c], rv_from_n * rv_col_bytes[c]);
        pk->kind = 0; pk->depth = rv_from_depth;
        rv_take(w);
    } else if (w->id == 0) {  /* the root: one bfs record holding one thread at position 0 */
        rv_load_root(rv_root);
        int64_t *r = w->rec[0];
        r[KIND] = 0; r[OFF] = 0; r[N] = 1; r[BASE] = 1; r[END] = 1;
        w->st[SP] = 0; w->st[LIVE] = 1; w->st[PEAK] = 1;
    }
    for (;;) {
        if (w->st[SP] >= 0) {
            rv_schedule(w);
            if (atomic_load(&rv_stop)) break;
            atomic_fetch_sub(&rv_busy, 1);
        }
        if (rv_nworkers < 2 || !rv_steal(w)) break;
    }
  out:
    w->ws[W_CPU_NS] = rv_cpu_ns() - w->ws[W_CPU_NS];
    free(w->rec); w->rec = NULL; free(w->seg); w->seg = NULL;
    rv_worker_done(w->accs);
    atomic_fetch_sub(&rv_used, rv_mine);
    rv_mine = 0;
    return NULL;
}

static int rv_run_workers(int64_t nworkers, char *accs, double **lv_out,
                          int64_t *nlv, int64_t *st_out, int64_t *wst) {
    if (nworkers < 1) nworkers = 1;
    rv_worker *ws = (rv_worker *)calloc((size_t)nworkers, sizeof(rv_worker));
    pthread_t *th = (pthread_t *)calloc((size_t)nworkers, sizeof(pthread_t));
    char *started = (char *)calloc((size_t)nworkers, 1);
    if (!ws || !th || !started) { free(ws); free(th); free(started); return RV_NOMEM; }
    rv_workers = ws; rv_nworkers = (int)nworkers;
    atomic_store(&rv_stop, 0); atomic_store(&rv_busy, 1); atomic_store(&rv_used, 0);
    for (int64_t i = 0; i < nworkers; i++) {
        ws[i].id = (int)i;
        ws[i].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1) | 1;
        memcpy(ws[i].accs, accs, RV_ACC_BYTES);
    }
    for (int64_t i = 1; i < nworkers; i++)
        started[i] = pthread_create(&th[i], NULL, rv_worker_main, &ws[i]) == 0;
    rv_worker_main(&ws[0]);
    for (int64_t i = 1; i < nworkers; i++)
        if (started[i]) pthread_join(th[i], NULL);
    int rc = atomic_load(&rv_stop);
    int64_t maxd = 0;
    for (int64_t i = 0; i < nworkers; i++) {
        if (ws[i].lv && ws[i].st[MAXDEPTH] > maxd) maxd = ws[i].st[MAXDEPTH];
    }
    double (*lv)[LV_COLS] = ws[0].lv;
    int64_t lcap = ws[0].lcap;
    memset(st_out, 0, 12 * sizeof(int64_t));
    if (rc == 0 && lv) {
        lv = rv_grow_plain(lv, &lcap, maxd + 2, sizeof(*lv));
        if (!lv) rc = RV_NOMEM;
        ws[0].lv = lv;
    }
    for (int64_t i = 0; i < nworkers; i++) {
        rv_worker *w = &ws[i];
        int64_t tasks = 0;
        if (w->lv) {
            for (int64_t d = 0; d <= w->st[MAXDEPTH] && d < w->lcap; d++) {
                tasks += (int64_t)w->lv[d][L_TASKS];
                if (i > 0 && rc == 0)
                    for (int c = 0; c < LV_COLS; c++) lv[d][c] += w->lv[d][c];
            }
        }
        if (i > 0) free(w->lv);
        st_out[VEC] += w->st[VEC]; st_out[BLOCKS] += w->st[BLOCKS];
        st_out[PEAK] += w->st[PEAK];
        w->ws[W_TASKS] = tasks; w->ws[W_PEAK] = w->st[PEAK]; w->ws[W_BLOCKS] = w->st[BLOCKS];
        memcpy(wst + i * W_COLS, w->ws, sizeof(w->ws));
        rv_pkg_free(&w->pkg);
    }
    st_out[MAXDEPTH] = maxd;
    if (rc == 0) {
        *lv_out = (double *)lv;
        *nlv = maxd + 1;
        rv_merge_accs(ws, (int)nworkers);
        memcpy(accs, ws[0].accs, RV_ACC_BYTES);
    } else {
        free(lv);
        *lv_out = NULL; *nlv = 0;
    }
    free(ws); free(th); free(started);
    rv_workers = NULL;
    return rc;
}
"""

FRONTIER = r"""
/* a run from given frames (a chunk of a frontier) instead of the root */
static const void *const *rv_from_cols;
static int64_t rv_from_n, rv_from_depth;
/* stop once the (single) bfs block holds this many threads and hand them out */
static int64_t rv_stop_at;
static void *rv_front_cols[RV_NCOLS];
static int64_t rv_front_n, rv_front_depth;
"""

# realloc without the budget's longjmp (the merge runs outside every worker)
GROW_PLAIN = r"""
static void *rv_grow_plain(void *p, int64_t *cap, int64_t need, int64_t row_bytes) {
    if (need <= *cap) return p;
    void *q = realloc(p, need * row_bytes);
    if (!q) { free(p); return NULL; }
    memset((char *)q + *cap * row_bytes, 0, (need - *cap) * row_bytes);
    *cap = need;
    return q;
}
"""


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


def driver_source(gen: DriverGen) -> str:
    """The worker pool and schedule for one program (after its kernel)."""
    f = gen.bp.columns
    red = gen.bp.reducers
    widths = ", ".join(str(p.ty.dtype.itemsize) for p in f) or "0"
    L = [f"#define RV_NCOLS {max(len(f), 1)}",
         f"#define RV_ACC_BYTES {8 * max(len(red), 1)}",
         f"static const int64_t rv_col_bytes[RV_NCOLS] = {{{widths}}};",
         FRONTIER, GROW_PLAIN]
    # rv_pack / rv_unpack need the rv_pkg type: declared after it (placed in DRIVER)
    pack = ["static void rv_pack(rv_pkg *pk, int64_t at, int64_t off, int64_t cnt) {"]
    pack += [f"    memcpy((char *)pk->cols[{i}] + at * {p.ty.dtype.itemsize}, c_{p.name} + off, "
             f"cnt * sizeof(*c_{p.name}));" for i, p in enumerate(f)]
    pack += ["    (void)pk; (void)at; (void)off; (void)cnt;", "}",
             "static void rv_unpack(rv_pkg *pk) {"]
    pack += [f"    memcpy(c_{p.name}, pk->cols[{i}], pk->n * sizeof(*c_{p.name}));"
             for i, p in enumerate(f)]
    pack += ["    (void)pk;", "}",
             "static void rv_export(int64_t off, int64_t n, int64_t depth) {",
             "    rv_front_n = n; rv_front_depth = depth;"]
    pack += [f"    rv_front_cols[{i}] = rv_realloc(NULL, n * sizeof(*c_{p.name}));\n"
             f"    memcpy(rv_front_cols[{i}], c_{p.name} + off, n * sizeof(*c_{p.name}));"
             for i, p in enumerate(f)]
    pack += ["    (void)off;", "}"]
    init = ["static void rv_worker_init(const char *accs) {",
            "    cap_frames = 0; scratch_cap = 0; kcap_alloc = 0; kcnt = NULL;"]
    init += [f"    c_{p.name} = NULL; b_{p.name} = NULL; q_{p.name} = NULL;" for p in f]
    init += [f"    memcpy(&acc_{r.name}, accs + {8 * i}, sizeof(acc_{r.name}));"
             for i, r in enumerate(red)]
    init += ["    (void)accs;", "}",
             "static void rv_worker_done(char *accs) {"]
    init += [f"    memcpy(accs + {8 * i}, &acc_{r.name}, sizeof(acc_{r.name}));"
             for i, r in enumerate(red)]
    init += [f"    free(c_{p.name}); free(b_{p.name}); free(q_{p.name});" for p in f]
    init += [f"    c_{p.name} = NULL; b_{p.name} = NULL; q_{p.name} = NULL;" for p in f]
    if gen.loop is not None:
        init += gen.loop.free()
    init += ["    free(kcnt); kcnt = NULL; kcap_alloc = 0; cap_frames = 0; scratch_cap = 0;",
             "    (void)accs;", "}",
             "static void rv_load_root(const char *root) {"]
    for i, p in enumerate(gen.bp.fields):
        if p.name not in gen.bp.invariant:
            init.append(f"    memcpy(c_{p.name}, root + {8 * i}, sizeof(*c_{p.name}));")
    init += ["    (void)root;", "}"]
    merge = ["static void rv_merge_accs_into(char *dst, const char *src) {"]
    for i, r in enumerate(red):
        t = ctype(ir.Ty(r.dtype))
        merge += [f"    {{ {t} a, b; memcpy(&a, dst + {8 * i}, sizeof(a)); "
                  f"memcpy(&b, src + {8 * i}, sizeof(b));",
                  f"      {_combine(r, 'a', 'b')}",
                  f"      memcpy(dst + {8 * i}, &a, sizeof(a)); }}"]
    merge += ["    (void)dst; (void)src;", "}"]
    head, sep, tail = DRIVER.partition("static rv_worker *rv_workers;")
    body = (head + "\n".join(pack) + "\n" + "\n".join(init) + "\n" + "\n".join(merge)
            + "\n" + sep + tail)
    body = body.replace("@COMPACT@", gen.compaction())
    merge_all = [
        "static void rv_merge_accs(rv_worker *ws, int n) {",
        "    char *out = ws[0].accs;  /* worker 0's values, then the others' in worker order */",
        "    for (int i = 1; i < n; i++) rv_merge_accs_into(out, ws[i].accs);",
        "}"]
    head2, sep2, tail2 = body.partition("static int rv_run_workers(")
    return "\n".join(L) + "\n" + head2 + "\n".join(merge_all) + "\n\n" + sep2 + tail2


def entry_source(gen: DriverGen) -> str:
    """``revec_run``: set up the shared state, run the workers, merge their results."""
    L = ["int revec_run_from(const char *root, const void *const *cols, int64_t n,",
         "                   int64_t depth, int64_t stop_at, void **front_cols,",
         "                   int64_t *front_n, int64_t *front_depth,",
         "                   int64_t B, int64_t R, int64_t P,",
         "                   const void *const *arrays, char *accs, double **lv_out,",
         "                   int64_t *nlv, int64_t *st_out, int64_t max_bytes,",
         "                   int64_t workers, int64_t *wst_out) {",
         "    rv_from_cols = cols; rv_from_n = n; rv_from_depth = depth;",
         "    rv_stop_at = stop_at; rv_front_n = 0; rv_front_depth = 0;",
         "    for (int c = 0; c < RV_NCOLS; c++) rv_front_cols[c] = NULL;"]
    for i, name in enumerate(gen.arrays):
        a = gen.program.arrays[name]
        if name not in gen.inline_arrays:
            L.append(f"    a_{name} = (const {ctype(ir.Ty(a.dtype))} *)arrays[{i}];")
    for i, p in enumerate(gen.bp.fields):
        if p.name in gen.bp.invariant:
            L.append(f"    memcpy(&u_{p.name}, root + {8 * i}, sizeof(u_{p.name}));")
    L += [f"    rv_static_k = {gen.t.max_spawns if gen.t.max_spawns else -1};",
          "    rv_B = B; rv_R = R; rv_P = P; rv_root = root; rv_budget = max_bytes;",
          "    int rc = rv_run_workers(workers, accs, lv_out, nlv, st_out, wst_out);",
          "    for (int c = 0; c < RV_NCOLS; c++) front_cols[c] = rv_front_cols[c];",
          "    *front_n = rv_front_n; *front_depth = rv_front_depth;",
          "    return rc;",
          "}", "",
          "int revec_run(const char *root, int64_t B, int64_t R, int64_t P,",
          "              const void *const *arrays, char *accs, double **lv_out,",
          "              int64_t *nlv, int64_t *st_out, int64_t max_bytes,",
          "              int64_t workers, int64_t *wst_out) {",
          "    void *front[RV_NCOLS]; int64_t fn, fd;",
          "    return revec_run_from(root, NULL, 0, 0, 0, front, &fn, &fd, B, R, P, arrays,",
          "                          accs, lv_out, nlv, st_out, max_bytes, workers, wst_out);",
          "}", "", "void revec_free(void *p) { free(p); }"]
    return "\n".join(L)


# ------------------------------------------------------------------ OpenMP-tasks peer
CDEF_OMP = CDEF + """
void revec_seq_omp(const char *root, const void *const *arrays, char *accs,
                   int64_t cutoff, int64_t threads);
"""


def omp_source(gen: DriverGen) -> str:
    """The plain recursive C of the program with a ``#pragma omp task`` per spawn above
    depth ``cutoff`` (the way a C programmer parallelizes it with gcc): the multi-core
    peer of the benchmarks' tables.  Reducers accumulate per thread (they are
    thread-local) and are merged at the end.  Compiled only with ``-fopenmp``."""
    t = gen.t
    f = gen.bp.fields
    red = gen.bp.reducers

    class OmpStmts(CStmts):
        def stmt(self, s: ir.Stmt, ind: str) -> list[str]:
            if not isinstance(s, ir.Spawn):
                return super().stmt(s, ind)
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

    params = ", ".join([f"{ctype(p.ty)} {p_var(p.name)}" for p in f] + ["int64_t _depth"])
    L = ["#ifdef _OPENMP", "#include <omp.h>", "static int64_t rv_omp_cutoff;",
         f"static void omp_{t.name}({params});",
         f"static void omp_{t.name}({params}) {{"]
    L += gen.locals_decl(t.locals, "    ")
    L.append(f"    if ({gen.expr(t.is_base)}) {{")
    L += OmpStmts(gen, "seq").block(t.base, "        ")
    L += ["        return;", "    }"]
    L += OmpStmts(gen, "seq").block(t.inductive, "    ")
    L += ["}", "",
          "void revec_seq_omp(const char *root, const void *const *arrays, char *accs,",
          "                   int64_t cutoff, int64_t threads) {"]
    for i, name in enumerate(gen.arrays):
        a = gen.program.arrays[name]
        if name not in gen.inline_arrays:
            L.append(f"    a_{name} = (const {ctype(ir.Ty(a.dtype))} *)arrays[{i}];")
    args = []
    for i, p in enumerate(f):
        L.append(f"    {ctype(p.ty)} r{i}; memcpy(&r{i}, root + {8 * i}, sizeof(r{i}));")
        args.append(f"r{i}")
    args.append("0")
    L += ["    rv_omp_cutoff = cutoff;",
          "    char out[RV_ACC_BYTES];",
          "    memcpy(out, accs, RV_ACC_BYTES);",
          "#pragma omp parallel num_threads((int)threads)",
          "    {"]
    L += [f"        memcpy(&acc_{r.name}, accs + {8 * i}, sizeof(acc_{r.name}));"
          for i, r in enumerate(red)]
    L += ["#pragma omp single", f"        omp_{t.name}({', '.join(args)});",
          "#pragma omp critical", "        {"]
    for i, r in enumerate(red):
        ty = ctype(ir.Ty(r.dtype))
        L += [f"            {{ {ty} a, b = acc_{r.name}; memcpy(&a, out + {8 * i}, sizeof(a));",
              f"              {_combine(r, 'a', 'b')} memcpy(out + {8 * i}, &a, sizeof(a)); }}"]
    L += ["        }", "    }"]
    L += [f"    memcpy(accs + {8 * i}, out + {8 * i}, 8);" for i in range(len(red))]
    L += ["    (void)root;", "}", "#endif"]
    return "\n".join(L)


def p_var(name: str) -> str:
    return f"v_{name}"

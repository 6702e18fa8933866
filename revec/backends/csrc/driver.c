/* revec's schedule driver for generated C modules: N worker threads, each running the
   schedule of DESIGN.md section 3 on its own record stack, balanced by work stealing at
   block granularity (docs/design.md, "Workers").  The same for every program: compiled
   once per compiler, flags and CPU and linked into each module (revec.backends.cbuild),
   which provides the program's kernel and frame columns through the rvm_* hooks of
   driver.h.  revec.backends.c_driver inlines driver.h where it is included below.

   The kernel's state (frame columns, scratch, child counters, reducer accumulators) is
   thread-local in the module, so every worker runs the same kernel on its own arrays.

   Stealing is receiver-initiated with private record stacks: an idle worker (the thief)
   posts its id in a victim's `req` word (compare-and-swap from 0) and waits; the victim
   answers between two blocks (it never stops in the middle of a block) by packing work
   into the thief's package and setting the thief's `resp`.  Only the owner ever reads
   or writes its record stack, segments and frames, so the hot path takes no lock: one
   relaxed load of `req` per block.  What the victim gives: the oldest record with
   pending child blocks (the bottom of the stack first, like Cilk's steal of the oldest
   continuation), half of its pending child blocks (the last ones); if there is none,
   half of the top bfs block when it holds at least RV_MIN_SPLIT threads.

   The schedule policy (the bfs / blocked / re-expansion decisions, B, R and the
   utilization share) is defined once, in revec/transforms/schedule.py; rv_schedule
   restates its comparisons, and tests/test_schedule_policy.py checks every statistic
   of this driver against the policy's trace over each program's task tree.

   Termination: rv_busy counts the workers that hold work.  A worker whose stack empties
   decrements it; a victim that gives work increments it on the thief's behalf *before*
   answering, while it itself still holds work, so the count never reads 0 while work
   exists anywhere (on a stack or in a package on its way).  Every idle or waiting
   worker stops once it reads 0. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "driver.h"

/* Allocation with a memory budget shared by all workers: failures leave the failing
   worker through its rv_fail (setjmp in its thread) and stop every other worker.

   The budget counts every allocation that grows with the run, by kind (the B_* enum,
   revec.runtime.memory.KINDS): the module's thread frames and scratch (B_FRAMES, through
   rv_check_budget), the record stacks and their child-block segments (B_RECORDS), the
   per-level statistics (B_LEVELS), and the rest (B_OTHER: each worker's own state and the
   packages on their way to a thief).  Records and statistics grow with the depth of the
   recursion, not with the frames held: a recursion that never reaches its base case
   holds two frames a level and stops on them. */
enum { B_FRAMES, B_RECORDS, B_LEVELS, B_OTHER, B_KINDS };
static RV_TLS jmp_buf rv_fail;
static RV_TLS int rv_fail_code;
static int64_t rv_budget;           /* bytes the run may hold (all workers); 0 = no limit */
static _Atomic int64_t rv_used;     /* bytes held by all workers */
static _Atomic int64_t rv_used_by[B_KINDS];  /* ... by kind */
static RV_TLS int64_t rv_mine[B_KINDS];      /* this worker's, by kind */
static _Atomic int rv_why;          /* 1 + the kind whose growth first crossed the budget */
static int64_t rv_held[B_KINDS];    /* the bytes of each kind held then */
static _Atomic int rv_stop;         /* set (to a failure code) when a worker fails */
static const volatile int64_t *rv_interrupt;  /* nonzero: stop (Ctrl-C) */
void revec_set_interrupt(const int64_t *flag) { rv_interrupt = flag; }
static RV_TLS int rv_armed;         /* rv_fail is set (this thread runs a worker) */

void rv_no_return(int helper) {
    if (!rv_armed) return;
    rv_fail_code = RV_NO_RETURN + helper; longjmp(rv_fail, 1);
}

void *rv_realloc(void *p, int64_t bytes) {
    void *q = realloc(p, bytes > 0 ? (size_t)bytes : 1);
    if (!q) { rv_fail_code = RV_NOMEM; longjmp(rv_fail, 1); }
    return q;
}

/* `d` more bytes of `kind` (fewer if negative): 0 if that is over the budget (the
   bytes stay counted; the first to cross records what the run held) */
static int rv_add(int kind, int64_t d) {
    int64_t total = atomic_fetch_add_explicit(&rv_used, d, memory_order_relaxed) + d;
    atomic_fetch_add_explicit(&rv_used_by[kind], d, memory_order_relaxed);
    if (d <= 0 || rv_budget <= 0 || total <= rv_budget) return 1;
    int none = 0;
    if (atomic_compare_exchange_strong(&rv_why, &none, kind + 1))
        for (int k = 0; k < B_KINDS; k++) rv_held[k] = atomic_load(&rv_used_by[k]);
    return 0;
}

/* this worker now holds `bytes` bytes of `kind`: leave the worker if over the budget */
static void rv_charge(int kind, int64_t bytes) {
    int64_t d = bytes - rv_mine[kind];
    rv_mine[kind] = bytes;
    if (!rv_add(kind, d)) { rv_fail_code = RV_BUDGET; longjmp(rv_fail, 1); }
}

void rv_check_budget(int64_t bytes) { rv_charge(B_FRAMES, bytes); }

/* PH: a bfs record's inlined leaves (leaf inlining): threads of its block that ran as
   base cases in their parents' lanes, never written; the schedule counts them as the
   block's threads (its size for B, R and the utilization; tasks and leaves of its
   level), so every decision and statistic is the one without inlining */
enum { KIND, OFF, N, BASE, END, DEPTH, CUR, NSEG, SB, INIT, PH, REC_COLS };
/* S_V: 0, or (two levels per call) 1 + the segment of the first of the K grandchild
   blocks of this child block, which the kernel expanded in its parents' lanes (S_N: its
   inductive threads, none written; S_PH: its inlined leaves) */
enum { S_OFF, S_N, S_PH, S_V, SEG_COLS };  /* a child block: offset, frames, inlined leaves */
RV_TLS int64_t rv_two_min = -1, rv_two_k;
RV_TLS const int64_t *rv_two_counts;
/* st_out: the driver's statistics (INLINED: leaves inlined by leaf inlining,
   revec.runtime.workers.ST_INLINED); after a run over the budget, ST_WHY (1 + the kind
   whose growth crossed it) and ST_HELD.. (the bytes of each kind held then):
   revec.backends.c_runner.ST_* */
enum { SP, SEGTOP, MAXDEPTH, VEC, BLOCKS, LIVE, PEAK, INLINED, ST_WHY, ST_HELD,
       ST_COLS = 13 };
_Static_assert(ST_HELD + B_KINDS <= ST_COLS, "st_out holds what the run held");
enum { L_TASKS, L_LEAVES, L_REEXP, L_GROWTH, L_RETURNS, LV_COLS };
/* the columns of wst_out: revec.backends.c_driver.W_* */
enum { W_TASKS, W_STEALS, W_ATTEMPTS, W_IDLE_NS, W_GIVEN, W_PEAK, W_BLOCKS, W_CPU_NS,
       W_COLS = 8 };
enum { RQ_WAIT = 1, RQ_WORK = 2, RQ_EMPTY = 3 };
#define RV_MIN_SPLIT 64  /* a bfs block is split for a thief from this many threads */

typedef struct {
    int64_t (*rec)[REC_COLS]; int64_t rcap;
    int64_t (*seg)[SEG_COLS]; int64_t scap;
    double (*lv)[LV_COLS]; int64_t lcap;
    int64_t st[ST_COLS];
    int64_t ws[W_COLS];
    char *accs;        /* this worker's reducer accumulators (acc_bytes) */
    int id; uint64_t rng;
    _Atomic int req;   /* a thief's id + 1 waiting for an answer from this worker, or 0 */
    _Atomic int resp;  /* the answer to this worker's own request */
    rv_pkg pkg;        /* work handed to this worker by a victim */
    char pad[64];
} rv_worker;

/* the run's shared state (one run at a time per module: revec.backends.c_runner) */
static const rv_prog *rv_p;
static rv_worker *rv_workers;
static int rv_nworkers;
static _Atomic int64_t rv_busy;  /* workers holding work or being handed it */
static int64_t rv_B, rv_R, rv_P;
static const char *rv_root;
/* a run from given frames (a chunk of a frontier) instead of the root */
static const void *const *rv_from_cols;
static int64_t rv_from_n, rv_from_depth;
/* stop once the (single) bfs block holds this many threads and hand them out */
static int64_t rv_stop_at;

/* `p` with room for `need` rows (new rows zeroed), counted as `kind` */
static void *rv_grow(void *p, int64_t *cap, int64_t need, int64_t row_bytes, int kind) {
    if (need <= *cap) return p;
    int64_t c = need > 2 * *cap ? need : 2 * *cap;
    rv_charge(kind, rv_mine[kind] + (c - *cap) * row_bytes);  /* before: no half state */
    p = rv_realloc(p, c * row_bytes);
    memset((char *)p + *cap * row_bytes, 0, (c - *cap) * row_bytes);
    *cap = c;
    return p;
}

/* realloc without the budget's longjmp (the merge runs outside every worker) */
static void *rv_grow_plain(void *p, int64_t *cap, int64_t need, int64_t row_bytes) {
    if (need <= *cap) return p;
    void *q = realloc(p, need * row_bytes);
    if (!q) { free(p); return NULL; }
    memset((char *)q + *cap * row_bytes, 0, (need - *cap) * row_bytes);
    *cap = need;
    return q;
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

/* the bytes of a package of n frames in nseg child blocks (counted as B_OTHER from
   its allocation by the victim to its release by the thief) */
static int64_t rv_pkg_bytes(int64_t n, int64_t nseg) {
    int64_t b = (nseg > 0 ? nseg : 1) * (int64_t)sizeof(int64_t);
    for (int c = 0; c < rv_p->ncols; c++) b += n * rv_p->col_bytes[c] + 1;
    return b;
}

static void rv_pkg_free(rv_pkg *pk) {
    if (pk->cols) {
        for (int c = 0; c < rv_p->ncols; c++) free(pk->cols[c]);
        rv_add(B_OTHER, -rv_pkg_bytes(pk->n, pk->nseg));
    }
    free(pk->cols); pk->cols = NULL;
    free(pk->counts); pk->counts = NULL;
    pk->n = 0;
}

/* 0 if the memory is not there; leaves the (victim's) worker if over the budget */
static int rv_pkg_alloc(rv_pkg *pk, int64_t n, int64_t nseg) {
    if (!rv_add(B_OTHER, rv_pkg_bytes(n, nseg))) {
        rv_add(B_OTHER, -rv_pkg_bytes(n, nseg));
        rv_fail_code = RV_BUDGET; longjmp(rv_fail, 1);
    }
    memset(pk, 0, sizeof(*pk));
    pk->n = n; pk->nseg = nseg;
    pk->counts = (int64_t *)malloc((nseg > 0 ? nseg : 1) * sizeof(int64_t));
    pk->cols = (void **)calloc((size_t)rv_p->ncols, sizeof(void *));
    int ok = pk->counts != NULL && pk->cols != NULL;
    for (int c = 0; ok && c < rv_p->ncols; c++) {
        pk->cols[c] = malloc(n * rv_p->col_bytes[c] + 1);
        ok = pk->cols[c] != NULL;
    }
    if (!pk->cols) rv_add(B_OTHER, -rv_pkg_bytes(n, nseg));  /* rv_pkg_free cannot */
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
        while (nseg > cur && w->seg[r[SB] + nseg - 1][S_N] == 0
               && w->seg[r[SB] + nseg - 1][S_PH] == 0) nseg--;
        r[NSEG] = nseg;  /* empty child blocks at the end are skipped anyway */
        if (nseg <= cur) continue;
        int64_t expanded = 0;  /* child blocks expanded by a two-level kernel stay here */
        for (int64_t k = cur; k < nseg; k++) expanded |= w->seg[r[SB] + k][S_V];
        if (expanded) continue;
        /* half of the pending child blocks; the top record keeps at least one (the
           owner's next block), a lower one may give its last (work runs above it) */
        int64_t give = s == sp ? (nseg - cur) / 2 : (nseg - cur + 1) / 2;
        if (give == 0) continue;
        int64_t first = nseg - give, total = 0, ph = 0;
        for (int64_t k = first; k < nseg; k++) {
            total += w->seg[r[SB] + k][S_N]; ph += w->seg[r[SB] + k][S_PH];
        }
        /* the given child blocks' inlined leaves stay here: counted now, as tasks and
           leaves of their level (the thief gets the written frames); the levels grow
           before the package is allocated (over the budget: no package half made) */
        w->lv = rv_grow(w->lv, &w->lcap, r[DEPTH] + 2, sizeof(*w->lv), B_LEVELS);
        if (!rv_pkg_alloc(pk, total, give)) return 0;
        w->lv[r[DEPTH]][L_TASKS] += ph; w->lv[r[DEPTH]][L_LEAVES] += ph;
        w->st[INLINED] += ph;
        pk->kind = 1; pk->depth = r[DEPTH];
        int64_t at = 0;
        for (int64_t k = first; k < nseg; k++) {
            int64_t cnt = w->seg[r[SB] + k][S_N];
            rvm_pack(pk, at, w->seg[r[SB] + k][S_OFF], cnt);
            pk->counts[k - first] = cnt;
            at += cnt;
        }
        r[NSEG] = first;
        w->st[LIVE] -= total + ph;
        return 1;
    }
    if (sp < 0) return 0;
    int64_t *r = w->rec[sp];  /* a large bfs block (or the block of the bfs -> blocked
                                 switch): its second half */
    if (r[KIND] == 1 || r[N] < RV_MIN_SPLIT) return 0;
    int64_t h = r[N] / 2;
    if (!rv_pkg_alloc(pk, h, 0)) return 0;
    pk->kind = r[KIND]; pk->depth = r[DEPTH];
    rvm_pack(pk, 0, r[OFF] + r[N] - h, h);
    r[N] -= h;
    w->st[LIVE] -= h;
    return 1;
}

/* Thief side: the package becomes this (empty) worker's record stack. */
static void rv_take(rv_worker *w) {
    rv_pkg *pk = &w->pkg;
    int64_t n = pk->n;
    rvm_grow_children(n + 1, 1);
    rvm_unpack(pk);
    w->seg = rv_grow(w->seg, &w->scap, pk->nseg + 1, sizeof(*w->seg), B_RECORDS);
    int64_t *r = w->rec[0];
    memset(r, 0, sizeof(w->rec[0]));
    r[KIND] = pk->kind; r[DEPTH] = pk->depth; r[END] = n;
    if (pk->kind == 1) {
        int64_t at = 0;
        for (int64_t k = 0; k < pk->nseg; k++) {
            w->seg[k][S_OFF] = at; w->seg[k][S_N] = pk->counts[k]; w->seg[k][S_PH] = 0;
            w->seg[k][S_V] = 0;
            at += pk->counts[k];
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
    int64_t B = rv_B, R = rv_R, P = rv_P, slack = rv_p->slack;
    int64_t *st = w->st;
    int64_t (*rec)[REC_COLS] = w->rec;
    int64_t (*seg)[SEG_COLS] = w->seg;
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
            rvm_export(rec[0][OFF], rec[0][N], rec[0][DEPTH]);  /* the frontier */
            /* its inlined leaves are counted here (the frontier's runs get the frames) */
            lv[rec[0][DEPTH]][L_TASKS] += rec[0][PH]; lv[rec[0][DEPTH]][L_LEAVES] += rec[0][PH];
            st[INLINED] += rec[0][PH];
            st[SP] = -1;
            return;
        }
        rv_serve(w, 1);
        seg = w->seg;
        w->rec = rec = rv_grow(rec, &w->rcap, st[SP] + 2, sizeof(*rec), B_RECORDS);
        int64_t sp = st[SP];
        if (sp < 0) break;
        int64_t off, n, depth, out_base, mode, ph;
        if (rec[sp][KIND] == 1) {
            int64_t cur = rec[sp][CUR];
            if (cur == rec[sp][NSEG]) { st[SEGTOP] = rec[sp][SB]; st[SP] = sp - 1; continue; }
            int64_t s = rec[sp][SB] + cur;
            rec[sp][CUR] = cur + 1;
            n = seg[s][S_N]; ph = seg[s][S_PH];
            if (n + ph == 0) continue;
            off = seg[s][S_OFF];
            depth = rec[sp][DEPTH];
            if (seg[s][S_V]) {  /* expanded by a two-level kernel: counted as executed */
                int64_t g = seg[s][S_V] - 1, kk = rec[sp][INIT], nf = n + ph;
                w->lv = lv = rv_grow(lv, &w->lcap, depth + 2, sizeof(*lv), B_LEVELS);
                lv[depth][L_TASKS] += nf; lv[depth][L_LEAVES] += ph;
                st[BLOCKS] += 1; st[VEC] += nf / P * P;
                st[INLINED] += ph;
                if (depth > st[MAXDEPTH]) st[MAXDEPTH] = depth;
                int64_t mf = 0;
                for (int64_t k = 0; k < kk; k++) mf += seg[g + k][S_N] + seg[g + k][S_PH];
                int64_t live = st[LIVE] + mf;
                if (live > st[PEAK]) st[PEAK] = live;
                st[LIVE] = live - nf;
                if (mf == 0) continue;
                int64_t top = st[SEGTOP], end = rec[sp][END];
                w->seg = seg = rv_grow(seg, &w->scap, top + kk + 1, sizeof(*seg), B_RECORDS);
                memcpy(seg[top], seg[g], (size_t)kk * sizeof(*seg));
                sp += 1;
                rec[sp][KIND] = 1; rec[sp][CUR] = 0; rec[sp][NSEG] = kk; rec[sp][SB] = top;
                rec[sp][END] = end; rec[sp][DEPTH] = depth + 1; rec[sp][INIT] = 0;
                st[SEGTOP] = top + kk; st[SP] = sp;
                continue;
            }
            /* child_block_reexpands (revec/transforms/schedule.py) */
            if (n + ph < R) {  /* re-expansion: this child block runs in bfs mode */
                int64_t top = rec[sp][END];
                sp += 1;
                rec[sp][KIND] = 0; rec[sp][OFF] = off; rec[sp][N] = n; rec[sp][BASE] = top;
                rec[sp][END] = top; rec[sp][DEPTH] = depth; rec[sp][INIT] = n + ph;
                rec[sp][PH] = ph;
                st[SP] = sp;
                w->lv = lv = rv_grow(lv, &w->lcap, depth + 2, sizeof(*lv), B_LEVELS);
                lv[depth][L_REEXP] += 1;
                continue;
            }
            mode = 1;
            out_base = rec[sp][END];
        } else if (rec[sp][KIND] == 2) {  /* the bfs -> blocked switch: one block, blocked */
            off = rec[sp][OFF]; n = rec[sp][N]; depth = rec[sp][DEPTH]; mode = 1;
            ph = rec[sp][PH];
            out_base = rec[sp][END];
            rec[sp][KIND] = 1; rec[sp][CUR] = 0; rec[sp][NSEG] = 0; rec[sp][SB] = st[SEGTOP];
        } else {
            off = rec[sp][OFF]; n = rec[sp][N]; depth = rec[sp][DEPTH]; mode = 0;
            ph = rec[sp][PH];
            out_base = rec[sp][BASE];  /* the kernel reads the block before writing */
        }
        w->lv = lv = rv_grow(lv, &w->lcap, depth + 2, sizeof(*lv), B_LEVELS);
        int64_t kused = 0, nb = 0;
        const int64_t *kcnt = NULL, *kleaf = NULL;
        rv_two_min = mode == 1 ? R : -1;
        if (n > 0) nb = rvm_block(off, n, out_base, &kused, &kcnt, &kleaf);
        int64_t two = rv_two_k;  /* K: the kernel expanded its K child blocks */
        rv_two_k = 0;
        int64_t ni = n - nb + slack;  /* child block k starts at out_base + k * ni */
        /* the block as without leaf inlining: its frames and its inlined leaves (PH) */
        int64_t nf = n + ph;
        lv[depth][L_TASKS] += nf; lv[depth][L_LEAVES] += nb + ph;
        st[BLOCKS] += 1; st[VEC] += nf / P * P;  /* utilization_share (schedule.py) */
        st[INLINED] += ph;
        if (depth > st[MAXDEPTH]) st[MAXDEPTH] = depth;
        if (mode == 0) {
            int64_t dst = rec[sp][BASE];
            for (int64_t k = 0; k < kused; k++) {
                int64_t src = out_base + k * ni;
                if (src != dst) rvm_move(src, dst, kcnt[k]);
                dst += kcnt[k];
            }
        }
        w->seg = seg = rv_grow(seg, &w->scap, st[SEGTOP] + kused + two + 1, sizeof(*seg),
                                B_RECORDS);
        int64_t m = 0, mph = 0;  /* children written, children inlined as leaves */
        if (two) {  /* the children: the K expanded child blocks (none written) */
            for (int64_t k = 0; k < two; k++) {
                m += rv_two_counts[2 * k]; mph += rv_two_counts[2 * k + 1];
            }
        } else {
            for (int64_t k = 0; k < kused; k++) m += kcnt[k];
            if (kleaf) for (int64_t k = 0; k < kused; k++) mph += kleaf[k];
        }
        int64_t mf = m + mph;
        int64_t live = st[LIVE] + mf;
        if (live > st[PEAK]) st[PEAK] = live;
        st[LIVE] = live - nf;
        int64_t segtop = st[SEGTOP];
        if (mode == 1 && two) {  /* the K child blocks, then their K * K blocks */
            if (mf == 0) continue;
            sp += 1;
            rec[sp][KIND] = 1; rec[sp][CUR] = 0; rec[sp][NSEG] = two; rec[sp][SB] = segtop;
            rec[sp][END] = out_base + kused * ni; rec[sp][DEPTH] = depth + 1;
            rec[sp][INIT] = two;  /* (a record of expanded child blocks: K) */
            for (int64_t k = 0; k < two; k++) {
                seg[segtop + k][S_OFF] = 0; seg[segtop + k][S_N] = rv_two_counts[2 * k];
                seg[segtop + k][S_PH] = rv_two_counts[2 * k + 1];
                seg[segtop + k][S_V] = 1 + segtop + two + k * two;
            }
            for (int64_t k = 0; k < kused; k++) {
                int64_t *g = seg[segtop + two + k];
                g[S_OFF] = out_base + k * ni; g[S_N] = kcnt[k];
                g[S_PH] = kleaf ? kleaf[k] : 0; g[S_V] = 0;
            }
            st[SEGTOP] = segtop + two + kused; st[SP] = sp;
            continue;
        }
        if (mode == 1) {
            if (mf == 0) continue;
            sp += 1;
            rec[sp][KIND] = 1; rec[sp][CUR] = 0; rec[sp][NSEG] = kused; rec[sp][SB] = segtop;
            rec[sp][END] = out_base + kused * ni; rec[sp][DEPTH] = depth + 1; rec[sp][INIT] = 0;
            for (int64_t k = 0; k < kused; k++) {
                seg[segtop + k][S_OFF] = out_base + k * ni; seg[segtop + k][S_N] = kcnt[k];
                seg[segtop + k][S_PH] = kleaf ? kleaf[k] : 0;
                seg[segtop + k][S_V] = 0;
            }
            st[SEGTOP] = segtop + kused; st[SP] = sp;
            continue;
        }
        if (mf == 0) { st[SP] = sp - 1; continue; }
        int64_t base = rec[sp][BASE];
        rec[sp][PH] = mph;
        if (mf < B) {  /* next_block_stays_bfs (revec/transforms/schedule.py) */
            rec[sp][OFF] = base; rec[sp][N] = m; rec[sp][END] = base + m;
            rec[sp][DEPTH] = depth + 1;
            continue;
        }
        if (rec[sp][INIT] > 0) {
            lv[depth + 1][L_GROWTH] += (double)mf / (double)rec[sp][INIT];
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
    memset(rv_mine, 0, sizeof(rv_mine));
    rvm_worker_init(w->accs);
    if (setjmp(rv_fail) != 0) {  /* out of memory or over the budget: stop everyone */
        int none = 0;
        atomic_compare_exchange_strong(&rv_stop, &none, rv_fail_code);
        goto out;
    }
    rv_armed = 1;
    /* this worker's own state (its slot, thread, accumulators) */
    rv_charge(B_OTHER, (int64_t)sizeof(rv_worker) + (int64_t)sizeof(pthread_t)
                       + rv_p->acc_bytes);
    w->rec = rv_grow(NULL, &w->rcap, 64, sizeof(*w->rec), B_RECORDS);
    w->seg = rv_grow(NULL, &w->scap, 64, sizeof(*w->seg), B_RECORDS);
    w->lv = rv_grow(NULL, &w->lcap, 64, sizeof(*w->lv), B_LEVELS);
    w->st[SP] = -1;
    rvm_grow_children(1024, 4);
    rvm_grow_scratch(1024);
    if (w->id == 0 && rv_from_n > 0) {  /* given frames: one bfs block */
        rv_pkg *pk = &w->pkg;
        if (!rv_pkg_alloc(pk, rv_from_n, 0)) { rv_fail_code = RV_NOMEM; longjmp(rv_fail, 1); }
        for (int c = 0; c < rv_p->ncols; c++)
            if (rv_from_cols[c])
                memcpy(pk->cols[c], rv_from_cols[c], rv_from_n * rv_p->col_bytes[c]);
        pk->kind = 0; pk->depth = rv_from_depth;
        rv_take(w);
    } else if (w->id == 0) {  /* the root: one bfs record holding one thread at position 0 */
        rvm_load_root(rv_root);
        int64_t *r = w->rec[0];
        r[KIND] = 0; r[OFF] = 0; r[N] = 1; r[BASE] = 1; r[END] = 1; r[PH] = 0;
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
    rv_armed = 0;
    w->ws[W_CPU_NS] = rv_cpu_ns() - w->ws[W_CPU_NS];
    free(w->rec); w->rec = NULL; free(w->seg); w->seg = NULL;
    rvm_worker_done(w->accs);
    /* all but the per-level statistics, which stay counted until they are merged */
    for (int k = 0; k < B_KINDS; k++)
        if (k != B_LEVELS) { rv_add(k, -rv_mine[k]); rv_mine[k] = 0; }
    return NULL;
}

static int rv_run_workers(int64_t nworkers, char *accs, double **lv_out,
                          int64_t *nlv, int64_t *st_out, int64_t *wst) {
    if (nworkers < 1) nworkers = 1;
    int64_t acc_bytes = rv_p->acc_bytes;
    rv_worker *ws = (rv_worker *)calloc((size_t)nworkers, sizeof(rv_worker));
    pthread_t *th = (pthread_t *)calloc((size_t)nworkers, sizeof(pthread_t));
    char *started = (char *)calloc((size_t)nworkers, 1);
    char *wacc = (char *)calloc((size_t)nworkers, (size_t)acc_bytes);
    if (!ws || !th || !started || !wacc) {
        free(ws); free(th); free(started); free(wacc);
        return RV_NOMEM;
    }
    rv_workers = ws; rv_nworkers = (int)nworkers;
    atomic_store(&rv_stop, 0); atomic_store(&rv_busy, 1); atomic_store(&rv_used, 0);
    for (int k = 0; k < B_KINDS; k++) { atomic_store(&rv_used_by[k], 0); rv_held[k] = 0; }
    atomic_store(&rv_why, 0);
    for (int64_t i = 0; i < nworkers; i++) {
        ws[i].id = (int)i;
        ws[i].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1) | 1;
        ws[i].accs = wacc + i * acc_bytes;
        memcpy(ws[i].accs, accs, acc_bytes);
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
    memset(st_out, 0, ST_COLS * sizeof(int64_t));
    if (rc == 0 && lv && maxd + 2 > lcap) {
        /* the merged statistics: worker 0's rows, grown to the deepest worker's depth
           while the others' are still held */
        if (!rv_add(B_LEVELS, (maxd + 2 - lcap) * (int64_t)sizeof(*lv))) {
            rc = RV_BUDGET;
        } else {
            lv = rv_grow_plain(lv, &lcap, maxd + 2, sizeof(*lv));
            if (!lv) rc = RV_NOMEM;
            ws[0].lv = lv;
        }
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
        st_out[PEAK] += w->st[PEAK]; st_out[INLINED] += w->st[INLINED];
        w->ws[W_TASKS] = tasks; w->ws[W_PEAK] = w->st[PEAK]; w->ws[W_BLOCKS] = w->st[BLOCKS];
        memcpy(wst + i * W_COLS, w->ws, sizeof(w->ws));
        rv_pkg_free(&w->pkg);
    }
    st_out[MAXDEPTH] = maxd;
    if (rc == RV_BUDGET) {  /* what the run held (revec.runtime.memory.BudgetUse) */
        st_out[ST_WHY] = atomic_load(&rv_why);
        for (int k = 0; k < B_KINDS; k++) st_out[ST_HELD + k] = rv_held[k];
    }
    if (rc == 0) {
        *lv_out = (double *)lv;
        *nlv = maxd + 1;
        /* worker 0's values, then the others' in worker order */
        for (int64_t i = 1; i < nworkers; i++) rvm_merge_accs_into(ws[0].accs, ws[i].accs);
        memcpy(accs, ws[0].accs, acc_bytes);
    } else {
        free(lv);
        *lv_out = NULL; *nlv = 0;
    }
    free(ws); free(th); free(started); free(wacc);
    rv_workers = NULL;
    return rc;
}

int rv_drive(const rv_prog *prog, const char *root, const void *const *from_cols,
             int64_t from_n, int64_t from_depth, int64_t stop_at, int64_t B, int64_t R,
             int64_t P, char *accs, double **lv_out, int64_t *nlv, int64_t *st_out,
             int64_t max_bytes, int64_t workers, int64_t *wst_out) {
    rv_p = prog;
    rv_root = root;
    rv_from_cols = from_cols; rv_from_n = from_n; rv_from_depth = from_depth;
    rv_stop_at = stop_at;
    rv_B = B; rv_R = R; rv_P = P; rv_budget = max_bytes;
    return rv_run_workers(workers, accs, lv_out, nlv, st_out, wst_out);
}

/* The interface between revec's schedule driver (driver.c) and a generated C module.

   The driver (worker threads, work stealing, the schedule of DESIGN.md section 3) is
   the same for every program: it is compiled once per compiler, flags and CPU into an
   object linked into every generated module (revec.backends.cbuild, "shared objects").
   What differs between programs -- the frame columns, the kernel, the reducers -- the
   module provides through the rvm_* hooks below.  Both sides are linked into one shared
   object and every symbol here is hidden: two modules loaded in one process never see
   each other's driver.

   Text of this header is placed at the top of both translation units (after the
   system headers): types, constants and prototypes only, no definitions of functions
   or data. */
#ifndef REVEC_DRIVER_H
#define REVEC_DRIVER_H
#include <stdint.h>

#define RV_HIDDEN __attribute__((visibility("hidden")))
#define RV_TLS __thread

/* work handed from a victim to a thief: n frames, column by column (ncols columns) */
typedef struct {
    int64_t kind, depth, n, nseg;  /* kind 0: a bfs block; 2: a block of B or more
                                      (blocked); 1: nseg child blocks of a blocked level */
    int64_t *counts;               /* kind 1: the child blocks' sizes */
    void **cols;                   /* ncols columns of n frames */
} rv_pkg;

/* what the driver needs to know of a program */
typedef struct {
    int ncols;                 /* frame columns (at least 1) */
    const int64_t *col_bytes;  /* bytes per frame of each column */
    int64_t acc_bytes;         /* bytes of the reducers' accumulators (8 per reducer) */
    int64_t slack;             /* room after each child block (RV_SLACK) */
} rv_prog;

/* failure codes of revec_run (revec.backends.c_runner) */
enum { RV_OK = 0, RV_NOMEM = 2, RV_BUDGET = 3, RV_INTERRUPTED = 4 };
/* RV_NO_RETURN + k: the program's helper k reached the end of its body without
   returning a value (rv_no_return) */
enum { RV_NO_RETURN = 16 };

/* ---- provided by the driver ---- */
/* realloc, leaving the worker (and stopping all others) when it fails */
RV_HIDDEN void *rv_realloc(void *p, int64_t bytes);
/* this worker now holds `bytes` bytes of frames: check the total of all workers */
RV_HIDDEN void rv_check_budget(int64_t bytes);
/* run the schedule on `workers` threads, from the root or from `from_n` given frames;
   stop early once a single bfs block holds `stop_at` threads (rvm_export) */
RV_HIDDEN int rv_drive(const rv_prog *prog, const char *root, const void *const *from_cols,
                       int64_t from_n, int64_t from_depth, int64_t stop_at,
                       int64_t B, int64_t R, int64_t P, char *accs, double **lv_out,
                       int64_t *nlv, int64_t *st_out, int64_t max_bytes, int64_t workers,
                       int64_t *wst_out);
void revec_set_interrupt(const int64_t *flag);
/* helper k of the program fell off its end: leave the worker (stopping all others) with
   RV_NO_RETURN + k; outside a run of the schedule (the plain recursive C), return */
RV_HIDDEN void rv_no_return(int helper);

/* ---- provided by the generated module (called on the worker's own thread) ---- */
/* one block [off, off + n), children from out_base: grows the child and scratch
   frames, clears the child counters and runs the kernel; returns the number of base
   threads, the child blocks used and their counts, and (leaf inlining; NULL without)
   per child block the children that ran as base cases in their parent's lane: they
   belong to the child block (tasks and leaves of its level) but are not written */
RV_HIDDEN int64_t rvm_block(int64_t off, int64_t n, int64_t out_base, int64_t *kused,
                            const int64_t **kcnt, const int64_t **kleaf);
/* two levels per call (kernel_plan leaf_two_levels): before each block the driver sets
   rv_two_min to R when the block runs blocked (its child blocks run blocked iff they
   hold R threads or more), else to -1; a kernel that expands its children in their
   parents' lanes (allowed only then, and only when each child block holds ni >= R
   threads) sets rv_two_k to K (its child blocks) and rv_two_counts to K pairs (the
   child block's inductive children, its inlined leaves); its kused = K * K grandchild
   blocks (child k's site-k' children at k * K + k').  The driver counts each child
   block as executed when it reaches it (DESIGN.md 4: every statistic as with one
   level per call). */
extern RV_HIDDEN RV_TLS int64_t rv_two_min, rv_two_k;
extern RV_HIDDEN RV_TLS const int64_t *rv_two_counts;
/* move cnt frames from src to dst (bfs compaction of the child blocks) */
RV_HIDDEN void rvm_move(int64_t src, int64_t dst, int64_t cnt);
RV_HIDDEN void rvm_grow_children(int64_t frames, int64_t k);
RV_HIDDEN void rvm_grow_scratch(int64_t n);
RV_HIDDEN void rvm_pack(rv_pkg *pk, int64_t at, int64_t off, int64_t cnt);
RV_HIDDEN void rvm_unpack(const rv_pkg *pk);
RV_HIDDEN void rvm_export(int64_t off, int64_t n, int64_t depth);
RV_HIDDEN void rvm_worker_init(const char *accs);
RV_HIDDEN void rvm_worker_done(char *accs);
RV_HIDDEN void rvm_load_root(const char *root);
RV_HIDDEN void rvm_merge_accs_into(char *dst, const char *src);
#endif

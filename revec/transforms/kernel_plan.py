"""The kernel of one task as a typed plan, built once and walked by every back end.

A block kernel (see :mod:`.blocking`) is a short sequence of steps over the block's
SoA columns: read the level-uniform fields once, split the block by the is-base mask,
run the base case over the base threads, run the inductive case (in one of four
shapes), store the reducers.  Which shape the inductive case takes, which columns each
step reads and moves, how many lanes a step handles at a time, which fast paths a
step has (a uniform 32-lane group is a copy or nothing instead of a compaction) and
whether a side keeps copies of its columns or a list of arena indices are decided
here, once, from the IR; an emitter (``revec/backends/c_codegen.py``,
``revec/backends/numba_codegen.py``) walks :attr:`KernelPlan.steps` in order and emits
code for each step, recording the ids of the steps it consumed.

``revec transform FILE --plan`` prints :meth:`KernelPlan.render`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from revec import ir
from revec.errors import RevecError
from revec.transforms import lanes as lanes_mod
from revec.transforms.blocking import (
    BlockProgram,
    assigned_names,
    contains_return,
    spawn_stmts,
    straight_spawns,
    strip_final_return,
    to_block_program,
    used_vars,
    written_arrays,
)
from revec.transforms.lanes import (
    Fold,
    LaneBody,
    LeafInline,
    MakeSpawn,
    SpawnSite,
    if_convert,
    if_convertible,
    rename_expr,
)
from revec.transforms.show import expr as show_expr
from revec.transforms.spawn_loops import SpawnLoop, loop_state, spawn_loop

LANES = 32  # threads per vector step of every lane step (one 32-bit mask)
SPLIT_MODES = ("vector", "scalar")
INT64 = ir.Ty(np.dtype(np.int64))
INT32 = ir.Ty(np.dtype(np.int32))
BYTE = ir.Ty(np.dtype(np.uint8))


@dataclass(frozen=True)
class Target:
    """What one back end's kernels do best, as measured there: the plan decides the
    kernel's shape for one target, and that back end's emitter follows every decision
    (none is re-derived or ignored by an emitter)."""

    name: str
    # a lock-step spawn loop's prefix and iterations as if-converted lane code, 32
    # threads at a time (C: gcc vectorizes it); else thread by thread over the active
    # list (numba: LLVM leaves such lane code scalar, see docs/backends.md)
    loop_lanes: bool
    # a base case summing a narrow column into a 64-bit sum: 32-bit runs (C); numba
    # measured slower than its plain widening loop (fib(40) reexp 0.32 -> 0.41 s)
    narrow_sum: bool
    # thread-by-thread spawns into two child blocks keep both counters in locals
    # (numba: parentheses(16) 0.545 -> 0.463 s; with three it was slower)
    counts_in_locals: bool
    # phase B of a lock-step loop stores back only the state an iteration changes, in
    # place, and compacts the list (numba); else every lane stages its whole state and
    # the staged state is compacted into the next list (C)
    state_in_place: bool
    # conditional spawns' lane code as passes over the full 32-thread steps, each storing
    # one column (a site's masks, a child block's arguments) into scratch, and the mask
    # bytes of the split and the active lists in scratch (numba: LLVM vectorizes a loop
    # with one store, not the C form, one loop storing every site's lane arrays, which
    # measured 2x slower there); else per-chunk lane arrays on the stack (C)
    lane_passes: bool
    # leaf inlining by default where it applies (KernelPlan.leaf_inline), unless
    # leaf_unprofitable finds a reason against it for the program; REVEC_PLAN_ON=
    # leaf_inline switches it on regardless, REVEC_PLAN_OFF=leaf_inline off.  numba: off
    # (measured on a 2-core AMD EPYC Zen 4, AVX-512, loaded: CPU seconds, medians of 5-9
    # interleaved runs, reexp, on vs off: fib(35) 1.46x and graphcol 1.85x faster,
    # binomial(26, 13) 0.55x and parentheses(15) 0.75-0.78x slower), until its lane
    # passes ran as one loop into stack arrays with narrow per-lane sums (lane_buffers):
    # since then on where leaf_unprofitable finds nothing against it (CPU seconds, Zen 4
    # AVX-512, loaded, medians of 5 interleaved, reexp default size, on vs off: fib
    # 0.0257 vs 0.0404 s, binomial 0.0229 vs 0.0241 s; parentheses, which that rule
    # leaves off, 0.0261 vs 0.0230 s).  C: on, as one pass
    # (leaf_fused; figures at leaf_unprofitable and docs/backends.md)
    leaf_inline: bool = False
    # lane spawns write their children by spawn site (KernelPlan.site_note, SiteBlocks):
    # each site compacts its lanes straight from the input columns into the child block
    # of their spawn index, no select of the sites' lane arrays per child block (C)
    site_blocks: bool = False
    # the steps over lane arrays a lane loop just stored move 16- and 32-bit columns in
    # 256-bit pieces (KernelPlan.staged_steps; C on AVX-512: gcc's lane loops store them
    # 256 bits at a time, and a 512-bit load of two such stores misses store forwarding)
    staged_steps: bool = False
    # uniform_base (Split.once / Split.in_place): an is-base test that reads only
    # level-uniform and invariant fields decided once per block, the block's columns read
    # in place instead of split into copies.  C: knapsack reexp, see docs/backends.md
    uniform_base: bool = False
    # base_fold (BaseCase.fold): a base case of reductions under conditions as one
    # branch-free loop of masked partials (C)
    base_fold: bool = False
    # leaf inlining as one pass (:class:`CountBase`, ``LaneSpawns.fused``): the base
    # threads counted first (with inlining only the root has any), a block without them
    # read in place, every inductive thread as lane code (the last partial step too),
    # masks straight to bits, narrow lane sums (C); else the split, the base case and
    # lane spawns whose last partial step writes every child (numba)
    leaf_fused: bool = False
    # with lane passes: the passes as one lane loop per 32-thread step into stack arrays
    # (LaneSpawns.buffers; numba: LLVM vectorizes such a loop, whose stores it can tell
    # apart from the loads, and per-lane partial sums avoid a horizontal sum per step)
    lane_buffers: bool = False
    # leaf_level (StraightSpawns.leaf_level, :class:`LeafLevel`): where the children's
    # is-base test is level-uniform, a block whose children are all leaves runs their
    # base cases in its threads' loop and writes no child block (C and numba: knapsack;
    # numba reexp 0.0218 s vs 0.0360 s off, docs/backends.md)
    leaf_level: bool = False
    # site_leaves (LaneSpawns.site_leaves): where leaf inlining as one pass is left off
    # because several spawn sites fill a child block, leaf inlining through the site
    # blocks instead (C: graphcol, see site_leaf_decision); numba (no site blocks): the
    # same test once per block, else the lane spawns by child block without leaf code
    # (graphcol(20) reexp AVX2 0.199 -> 0.065 s with the bit-operation picks, C 0.050 s)
    site_leaves: bool = False
    # narrow_partials (BaseFold.run): a folded base case's sums of small values
    # accumulated in runs of narrow (16- or 32-bit) partials, each run widened once (C:
    # gcc widens a 64-bit partial per lane, 4 lanes per 256-bit add; numba: LLVM's
    # vectorized reduction likewise, numba_codegen.base_fold)
    narrow_partials: bool = False
    # fold_in_split (BaseFold.in_split): a folded base case of sums evaluated in the
    # split's pass over every thread, masked by the is-base test: no copies of the base
    # threads, no base loop (C; numba: in the is-base pass, numba_codegen.split_fold)
    fold_in_split: bool = False
    # wide_flags (KernelPlan.wide_flags): a spawn loop's lane flags as 32-bit ints where
    # its lane body calls a library function (C: gcc's vectorization factor)
    wide_flags: bool = False
    # sched_pressure (KernelPlan.sched_pressure): the kernel compiled with gcc's
    # register-pressure aware scheduling before allocation where its spawn loop's lane
    # body is heavy (C)
    sched_pressure: bool = False
    # block_in_place (Split.prepass): before a vector split, one pass over the is-base
    # test (its masks stored, ORed and ANDed, 32 threads per step) so a block whose threads
    # all agree -- all inductive or all base, as in parentheses, where is-base holds
    # exactly at one depth -- is read in place instead of split into copies; a mixed
    # block is split on the masks the pass stored (C; numba: the split's own mask pass
    # ORs and ANDs the test as it stores the masks; docs/backends.md)
    block_in_place: bool = False
    # narrow_state (KernelPlan.narrow_state): a spawn loop's counter and bound as 32-bit
    # active-list columns where the loop's bounds fit (numba: LLVM vectorizes by the
    # widest type loaded or stored, int64 state made the uts lane loop 4 lanes wide)
    narrow_state: bool = False
    # const_leaves (LaneSpawns.const_leaves): with lane buffers, an integer sum of a
    # constant by every inlined leaf of a spawn site every lane makes, alone in its child
    # block (binomial's reduce(count, 1)): not a per-lane partial in the lane loop but
    # the constant times the leaves the step counts anyway, once per block (numba; C's
    # fused pass does the same)
    const_leaves: bool = False
    # column_loops (StraightSpawns.column_loops): a straight inductive case whose body is
    # its spawns alone written as one loop per frame column (that column of every spawn),
    # not one loop storing every column of every spawn (numba: LLVM vectorizes each with
    # a runtime overlap check of two or three pointers instead of one over six stores and
    # two loads per block, and a uniform column becomes a fill)
    column_loops: bool = False
    # sentinel_partials (LeafLevel.sentinel): leaf_level's masked min / max partials
    # without the per-lane "any child reduced" flag in the threads' loop (three vector
    # operations per partial and 16 lanes on numba); a partial that ends at its identity
    # (no child reduced, or one reduced exactly the identity) runs the loop again with
    # the flags
    sentinel_partials: bool = False


TARGETS = {
    "c": Target("c", loop_lanes=True, narrow_sum=True, counts_in_locals=False,
                state_in_place=False, lane_passes=False, leaf_inline=True, leaf_fused=True,
                site_blocks=True, staged_steps=True, uniform_base=True, base_fold=True,
                leaf_level=True, site_leaves=True, narrow_partials=True,
                fold_in_split=True, wide_flags=True, sched_pressure=True,
                block_in_place=True),
    "numba": Target("numba", loop_lanes=False, narrow_sum=False, counts_in_locals=True,
                    state_in_place=True, lane_passes=True,
                    leaf_inline=True, uniform_base=True, base_fold=True, lane_buffers=True,
                    narrow_state=True, leaf_level=True, site_leaves=True,
                    narrow_partials=True, fold_in_split=True, const_leaves=True,
                    block_in_place=True, column_loops=True, sentinel_partials=True),
}

# Plan techniques a user may switch off (``REVEC_PLAN_OFF=leaf_inline``, a comma list)
# or on where a back end's Target leaves them off (``REVEC_PLAN_ON``; off wins): each is
# a decision of the plan that changes the kernels, never the results or the statistics.
# The built-module caches key on the generated source, which differs.
PLAN_OFF_ENV = "REVEC_PLAN_OFF"
PLAN_ON_ENV = "REVEC_PLAN_ON"
TECHNIQUES = ("leaf_inline", "uniform_base", "base_fold", "site_blocks", "staged_steps",
              "lane_buffers", "leaf_level", "site_leaves", "narrow_partials",
              "fold_in_split", "wide_flags", "sched_pressure",
              "block_in_place", "narrow_state",
              "leaf_two_levels", "const_leaves", "column_loops", "sentinel_partials")


def plan_off(spec: str | None = None, env: str = PLAN_OFF_ENV) -> frozenset[str]:
    """The techniques switched off (``env``: :data:`PLAN_ON_ENV`, on): ``spec`` or, when
    None, those :func:`plan_switches` set in this context (``--plan-off`` /
    ``--plan-on``, ``Task.run(plan_off=...)``), else the environment variable (a comma
    list of :data:`TECHNIQUES`; empty: none)."""
    if spec is None:
        chosen = dict(_SWITCHED.get()).get(env)
        if chosen is not None:
            return chosen
    text = os.environ.get(env, "") if spec is None else spec
    return parse_techniques(text, env)


def plan_on(spec: str | None = None) -> frozenset[str]:
    """The techniques switched on (:data:`PLAN_ON_ENV`)."""
    return plan_off(spec, PLAN_ON_ENV)


def parse_techniques(spec: str | Iterable[str], what: str) -> frozenset[str]:
    """A comma list (or an iterable) of :data:`TECHNIQUES`; ``what`` names the option
    or variable in the message about an unknown name."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    names = frozenset(str(x).strip() for x in items if str(x).strip())
    unknown = sorted(names - set(TECHNIQUES))
    if unknown:
        raise RevecError(f"{what}: unknown plan technique "
                         f"{', '.join(map(repr, unknown))}; expected a comma list of "
                         f"{', '.join(TECHNIQUES)}")
    return names


# the switches plan_switches set: {PLAN_OFF_ENV / PLAN_ON_ENV: techniques}; a variable
# not in it is read from the environment
_SWITCHED: ContextVar[tuple[tuple[str, frozenset[str]], ...]] = ContextVar(
    "revec_plan_switches", default=())


@contextmanager
def plan_switches(off: str | Iterable[str] | None = None,
                  on: str | Iterable[str] | None = None,
                  names: tuple[str, str] = ("plan_off", "plan_on")) -> Iterator[None]:
    """Within the block, plans are built with ``off`` / ``on`` (a comma list or an
    iterable of :data:`TECHNIQUES`) instead of :data:`PLAN_OFF_ENV` / :data:`PLAN_ON_ENV`
    (None: that variable as it is).  ``names``: the two options' names in messages.  A
    technique named in both is an error (in the environment, off wins)."""
    chosen = dict(_SWITCHED.get())
    given: dict[str, frozenset[str]] = {}
    for env, spec, name in ((PLAN_OFF_ENV, off, names[0]), (PLAN_ON_ENV, on, names[1])):
        if spec is not None:
            given[env] = chosen[env] = parse_techniques(spec, name)
    both = sorted(given.get(PLAN_OFF_ENV, frozenset()) & given.get(PLAN_ON_ENV, frozenset()))
    if both:
        raise RevecError(f"{names[0]} and {names[1]} both name {', '.join(both)}: switch "
                         "a technique off or on, not both")
    token = _SWITCHED.set(tuple(chosen.items()))
    try:
        yield
    finally:
        _SWITCHED.reset(token)


# more passes than this run as one loop: each vectorized loop costs compile time.
# Measured (graphcol, 9 passes; revec.bench.compile_times and numba reexp at the default
# size, B = 4096, medians of 10, load 2-3): one loop per pass 2.70 s compile, 0.31-0.34 s
# run; one loop 2.31 s, 0.41-0.45 s (C reexp 0.40 s).  The one loop, for the
# compile-time margin (target: under 3 s per program); parentheses has 5 passes, one
# loop each
FUSE_ABOVE = 6


# ---------------------------------------------------------------- the plan's parts
@dataclass(frozen=True)
class Column:
    name: str
    ty: ir.Ty

    @property
    def bits(self) -> int:
        return 8 * self.ty.dtype.itemsize

    def render(self) -> str:
        return f"{self.name}:{self.ty.dtype.name}"


@dataclass(frozen=True)
class Scratch:
    """An array a kernel needs for one block besides the frame columns: ``per_thread``
    elements of ``ty`` per thread of the block plus ``fixed`` more (room for the last
    32-lane step's full-width stores)."""

    name: str
    kind: str  # "copy" / "index" (the split's sides), "active" (lock-step loop), "mask",
    #            "pass", "fill" (lane passes)
    ty: ir.Ty
    per_thread: int
    fixed: int
    what: str

    def render(self) -> str:
        size = f"{self.per_thread} x n" + (f" + {self.fixed}" if self.fixed else "")
        return f"{self.name}:{self.ty.dtype.name} [{size}]  {self.what}"


@dataclass(frozen=True)
class LanePass:
    """One pass of a :class:`LaneSpawns` step over the full 32-thread steps of the
    inductive threads (targets with ``lane_passes``): the lane body sliced to what it
    stores, one column: ``"mask"``, whether the lane makes spawn site ``index``, or
    ``"value"``, the argument of column ``column`` of the lane's spawn ``index``
    (a child block)."""

    kind: str  # "mask" / "leaf" (a site's inlined leaves) / "value"
    name: str  # its scratch column
    index: int  # the spawn site (mask) or the child block (value)
    column: str | None
    ty: ir.Ty | None  # None: mask bytes


@dataclass(frozen=True)
class LaneFill:
    """A value the same in every lane of the block (an expression of level-uniform and
    invariant fields, the same at every site that can make the spawn): 32 copies in a
    scratch column, filled once per block."""

    name: str
    value: ir.Expr
    ty: ir.Ty


@dataclass(frozen=True)
class Side:
    """What the split writes for one side (``base`` / ``inductive``): a dense copy of
    each column the side reads (``copy``), or the threads' arena indices (``index``)."""

    side: str
    columns: tuple[Column, ...]
    keep: str  # "copy" / "index"

    def render(self) -> str:
        if self.keep == "index":
            return f"{self.side} <- arena indices (reads {_names(self.columns)})"
        return f"{self.side} <- {_names(self.columns)} (copies)"


@dataclass(frozen=True)
class NarrowSum:
    """A base case that only sums a narrow integer column into a 64-bit sum reducer:
    summed in 32-bit runs of at most 2^20 threads (cannot overflow)."""

    column: str
    reducer: str


@dataclass(frozen=True)
class Step:
    id: str

    @property
    def kind(self) -> str:
        return _KINDS[type(self)]

    @property
    def writes(self) -> tuple[str, ...]:
        """The output arrays the step stores into (its effects besides spawns and
        reductions): one element per thread and store, no element shared between
        threads, so a step's stores need no order and no synchronisation."""
        stmts = getattr(self, "stmts", None)
        if stmts is None:
            shape = getattr(self, "shape", None)
            if isinstance(self, LoopPrefix) and shape is not None:
                stmts = shape.prefix
            elif shape is not None:
                stmts = shape.loop.body
        return written_arrays(tuple(stmts)) if stmts else ()

    def rendered(self) -> list[str]:
        """:meth:`detail`, and the step's writes when it has any."""
        extra = [f"writes (output stores, thread by thread): {', '.join(self.writes)}"]
        return self.detail() + (extra if self.writes else [])

    def detail(self) -> list[str]:
        raise NotImplementedError


@dataclass(frozen=True)
class UniformLoad(Step):
    """Level-uniform fields (blocking.uniform_params): read once, at the first thread."""

    columns: tuple[Column, ...]

    def detail(self) -> list[str]:
        return [f"read once per block: {_names(self.columns)}"]


@dataclass(frozen=True)
class Split(Step):
    """The is-base mask over every thread, then the stream compaction of the block into
    its dense base and inductive threads, ``lanes`` threads per step; the threads past
    the last full step are split one by one (branch-free)."""

    mask: ir.Expr
    reads: tuple[Column, ...]
    lanes: int
    base: Side
    inductive: Side
    fast_paths: tuple[str, ...]
    # uniform_base: the mask reads only level-uniform and invariant fields, so every
    # thread of a block agrees: it is evaluated once, at the block's first thread, and the
    # block is all base or all inductive (no mask, no compaction)
    once: bool = False
    # ... and the side that runs reads the block's columns in place (the base side, which
    # spawns nothing, always); when the inductive side reads a copy (memcpy) of its
    # columns instead: "bfs" where the children overwrite the block (bfs mode:
    # out_base < off + n), "always" in a kernel that grows its columns while it spawns
    # (the block may move), "never" where the inductive case reads its columns before it
    # writes any child (a lock-step spawn loop's phase A: only the active lists after it)
    inductive_copy: str = ""
    # block_in_place: a pass over the is-base test first (its masks stored); a block
    # whose threads all agree is read in place (the inductive side: a copy where
    # ``inductive_copy`` says), a mixed one is split as above on the stored masks
    prepass: bool = False
    # ... the pass stores its masks for the split of a mixed block (an is-base test
    # that calls or reads memory: evaluated once per thread); else (a cheap test) the
    # pass ORs and ANDs mask bytes lane by lane, stops at a mixed first step, and a
    # mixed block's split evaluates the test again
    prepass_store: bool = True

    @property
    def in_place(self) -> bool:
        """The inductive side reads the block in place (where it needs no copy)."""
        return self.once and self.inductive_copy != "always"

    def detail(self) -> list[str]:
        if self.once:
            how = {"bfs": "in place; the inductive side a copy where the children "
                          "overwrite the block (bfs: out_base < off + n)",
                   "never": "in place (the inductive case reads its columns before it "
                            "writes a child: no copy in any mode)",
                   "always": "the base side in place, the inductive side a copy (memcpy: "
                             "the columns may move when the kernel grows them, or a "
                             "lock-step loop reads them by index after it wrote children)"
                   }[self.inductive_copy]
            return [f"mask: {show_expr(self.mask)}  (reads only level-uniform and "
                    "invariant fields)",
                    "decided once per block, at its first thread: all base or all inductive",
                    f"base reads {_names(self.base.columns)}; inductive reads "
                    f"{_names(self.inductive.columns)}: {how}"]
        pre = [] if not self.prepass else [
            f"first: the mask, {self.lanes} threads per step, " + (
                "stored" if self.prepass_store else "any / all (a mixed first step stops "
                "it)") + "; all inductive or "
            "all base -> the block read in place, no split (" + {
                "bfs": "the inductive side a copy where the children overwrite the block "
                       "(bfs: out_base < off + n)",
                "never": "no copy in any mode",
                "always": "the inductive side a copy: the columns may move when the kernel "
                          "grows them"}[self.inductive_copy] + (
                              "); else, on the stored masks:" if self.prepass_store
                              else "); else:")]
        return pre + [f"mask: {show_expr(self.mask)}  (reads {_names(self.reads)})",
                      f"lanes: {self.lanes}, rest one by one",
                      self.base.render(), self.inductive.render(),
                      "fast paths: " + "; ".join(self.fast_paths)]


@dataclass(frozen=True)
class FoldTerm:
    """One reduction of a folded base case: ``value`` into reducer ``reducer``'s
    partial where every condition of ``conds`` (an expression and whether it must
    hold) holds."""

    reducer: str
    conds: tuple[tuple[ir.Expr, bool], ...]
    value: ir.Expr  # in the partial's type


@dataclass(frozen=True)
class FoldPartial:
    """A reducer's partial of a folded base case, in ``ty``: the reducer's own type, or
    for a min / max of a widened narrower integer (knapsack's int32 ``value`` into an
    int64 max) the narrower type, whose order the widening keeps."""

    reducer: str
    op: str  # sum / min / max
    ty: ir.Ty
    # narrow_partials: a sum's partial per run of BaseFold.run threads, in this narrower
    # integer type (None: ``ty`` throughout); see narrow_partials_decision
    run_ty: ir.Ty | None = None


@dataclass(frozen=True)
class BaseFold:
    """base_fold: a base case of reductions under conditions (no assignments, stores,
    calls under a condition or returns) as one branch-free loop: every value loaded and
    every condition evaluated unconditionally (each is safe where the program would
    not evaluate it: a top-level condition is evaluated by every base thread anyway,
    the rest are speculable), each reduction a masked update of its reducer's partial
    (a min / max with a flag of whether any thread reduced), merged into the reducer
    once per block.  Integer reducers only: their sums, mins and maxes are the same in
    any order."""

    terms: tuple[FoldTerm, ...]
    partials: tuple[FoldPartial, ...]
    # narrow_partials: the loop runs over runs of this many threads, the partials with a
    # run_ty summed per run in it and widened once per run (0: one loop, no runs)
    run: int = 0
    # fold_in_split: evaluated in the split's lane loop for every thread, each update
    # masked by the is-base test (per-lane partials, in run_ty where given, widened every
    # ``run`` steps of 32 threads); the split copies no base thread
    in_split: bool = False

    def render(self) -> str:
        parts = ", ".join(f"{p.reducer} ({p.op}, {p.ty.dtype.name})" for p in self.partials)
        return (f"branch-free: every load and condition unconditional, masked partials "
                f"{parts} merged once per block ({len(self.terms)} reductions)")


@dataclass(frozen=True)
class CountBase(Step):
    """Leaf inlining as one pass (Target.leaf_fused): the block's base threads counted
    first (the is-base mask, ``lanes`` threads per step, a popcount).  With leaf
    inlining no kernel writes a base case, so only the root block can hold one: a block
    without base threads skips the split and the base case below and the inductive case
    reads its columns in place (in bfs mode a copy: the children overwrite the level);
    a block with base threads runs them."""

    mask: ir.Expr
    reads: tuple[Column, ...]
    lanes: int

    def detail(self) -> list[str]:
        return [f"count: {show_expr(self.mask)}  (reads {_names(self.reads)}), "
                f"{self.lanes} threads per step",
                "none (every block but the root): no split, no base case; the inductive "
                "case reads the block in place (bfs: a copy, the children overwrite the "
                "level)", "else the split and the base case below"]


@dataclass(frozen=True)
class BaseCase(Step):
    """The base case over the base threads (a thread loop)."""

    stmts: tuple[ir.Stmt, ...]
    reads: tuple[Column, ...]
    narrow_sum: NarrowSum | None
    returns: bool  # a ``return`` inside: the thread body ends early
    fold: BaseFold | None = None  # base_fold: the loop branch-free (BaseFold)

    def detail(self) -> list[str]:
        out = [f"reads {_names(self.reads)}"]
        if self.fold is not None:
            out.append(self.fold.render())
        if self.narrow_sum is not None:
            out.append(f"narrow sum: {self.narrow_sum.column} into "
                       f"{self.narrow_sum.reducer} in 32-bit runs of 2^20 threads")
        if self.returns:
            out.append("early returns")
        return out


@dataclass(frozen=True)
class LeafLevel:
    """leaf_level: leaf inlining of a whole child level (with straight spawns whose
    children's is-base test reads only level-uniform and invariant fields).  ``tests``:
    per spawn site, the child's is-base on its arguments, one value for the whole block
    (the arguments of those fields are block-wide).  When every site's test holds, every
    child of the block is a leaf: the kernel runs, for each inductive thread, each
    spawn's base case on the child's arguments (the lane variables of
    :class:`LeafInline`) in the thread's loop, counts the children as tasks and leaves of
    their level (child block k: its inlined leaves) and writes no child block; else it
    spawns as without inlining.  Every base case runs exactly where the program runs it
    (nothing speculated but what ``fold`` evaluates unconditionally, as base_fold does for
    a base block), so a base case may read arrays.  ``fold``: the base case as masked
    partials (base_fold), else its statements as they are."""

    tests: tuple[ir.Expr, ...]  # (sites passing the fields alike: one test)
    fold: BaseFold | None
    # sentinel_partials: the threads' loop keeps no "any child reduced" flag per min /
    # max partial; only a partial ending at its identity runs the loop again for it
    sentinel: bool = False

    def render(self) -> list[str]:
        tests = " and ".join(f"({show_expr(t)})" for t in self.tests)
        return [f"leaf_level: the children all leaves iff {tests} (once per block): each "
                "thread runs its children's base cases " + (
                    "as masked partials (base_fold)" if self.fold is not None
                    else "as they are") + "; no child block written, child block k's "
                "inlined leaves = the inductive threads; else the spawns below"] + (
                    ["sentinel_partials: no per-lane any-reduced flags; a min / max "
                     "partial ending at its identity runs the loop again with them"]
                    if self.sentinel else [])


@dataclass(frozen=True)
class StraightSpawns(Step):
    """Every inductive thread makes every spawn: spawn k of thread j goes to slot j of
    child block k (no counters; the threads are independent)."""

    stmts: tuple[ir.Stmt, ...]
    reads: tuple[Column, ...]
    spawns: int
    leaf_level: LeafLevel | None = None  # the whole child level inlined where all leaves
    # column_loops: one loop per frame column (that column of every spawn), see Target
    column_loops: bool = False

    def detail(self) -> list[str]:
        out = [f"reads {_names(self.reads)}"]
        if self.leaf_level is not None:
            out += self.leaf_level.render()
        return out + [f"{self.spawns} spawns per thread into fixed slots (child block k, "
                      "slot j)" + (", one loop per column (column_loops)"
                                   if self.column_loops else "")]


@dataclass(frozen=True)
class SiteBlocks:
    """A lane-spawns step's children written by spawn site (technique ``site_blocks``):
    per 32-lane chunk, for each pair (site s, spawn index k) in ``pairs`` (in the body's
    order), the lanes that make site s as their k-th spawn are appended to child block k
    by one compaction step per column, straight from the column's source at that site:
    ``input``, the inductive threads' copy (an argument passing a field on unchanged),
    ``fill``, a value the same in every lane of the block (32 copies stored, no
    compaction), or ``lane``, the site's argument staged per lane.  The lanes' spawn
    indices come from the sites' 32-bit masks (bit-sliced counters), not per lane.
    Every child block holds the same children as with one select per child block; within
    a block they are ordered by chunk, then site (not thread by thread): the plan takes
    it only where the order of the children cannot change a result (no float reducer,
    no output array)."""

    pairs: tuple[tuple[int, int], ...]
    sources: tuple[tuple[int, str, str], ...]  # (site, column, input / fill / lane)

    def source(self, site: int, column: str) -> str:
        return next(src for s, c, src in self.sources if s == site and c == column)

    def render(self) -> list[str]:
        sites = sorted({s for s, _ in self.pairs})
        out = [f"by spawn site: (site, child block) {', '.join(f'({s}, {k})' for s, k in self.pairs)}"]
        for s in sites:
            parts = [f"{c} <- {src}" for ss, c, src in self.sources if ss == s]
            out.append(f"site {s}: {', '.join(parts)}")
        return out


@dataclass(frozen=True)
class SiteLeaves:
    """Leaf inlining through the site blocks (technique ``site_leaves``): the lane body
    (``LaneSpawns.body``) tests each site's child and runs a leaf in the parent's lane;
    per (site, spawn index) pair only the children that are not leaves are compacted
    (``SiteBlocks``), the leaves are counted as child block k's inlined leaves.

    ``uniform``: the children's is-base test reads only fields every site sets to the
    same block-wide value (level-uniform and invariant fields: graphcol's ``v + 1 ==
    n``): ``temps`` (the child's lane variables, set once per block from those values)
    and ``test`` decide it once per block: every child a leaf (the lane body's masks
    and leaf base cases, counted per pair, nothing compacted) or none (``plain``, the
    lane body without leaf inlining, by site as without it).  Else (``test`` None) one
    pass tests every lane's children (the C back end emits it; the plan does not take
    it: measured slower, :func:`site_leaf_decision`)."""

    temps: tuple[tuple[str, ir.Expr], ...] = ()
    test: ir.Expr | None = None
    plain: LaneBody | None = None
    # the children written by spawn site when not all leaves (SiteBlocks, C); else by
    # child block, the lane passes of ``plain`` (numba: no site blocks there)
    by_site: bool = True

    def render(self) -> list[str]:
        if self.test is None:
            return ["site leaves: each site's children tested per lane; a leaf runs in the "
                    "lane and is counted (child block k's inlined leaves), only the others "
                    "compacted"]
        sets = ", ".join(f"{t} = {show_expr(v)}" for t, v in self.temps)
        return [f"site leaves: the children's is-base decided once per block ({sets}; "
                f"{show_expr(self.test)}): all leaves -> one loop over the threads, their "
                "base cases in the lanes, child block k's inlined leaves the threads with "
                "more than k spawns, nothing written; none -> "
                f"{'by site' if self.by_site else 'by child block'} without leaf code"]


@dataclass(frozen=True)
class ConstLeaf:
    """const_leaves: the reduction at ``op`` (its position in the lane body's operations)
    adds the constant ``value`` to the integer sum ``reducer`` for each inlined leaf of
    spawn site ``site``, which every lane makes and which alone fills child block
    ``block``: its sum is ``value`` times that block's inlined leaves."""

    op: int
    reducer: str
    value: int
    site: int
    block: int


@dataclass(frozen=True)
class LaneSpawns(Step):
    """The inductive case ``lanes`` threads at a time as if-converted lane code: each
    spawn site records per lane whether it spawned, its spawn index and arguments; then
    each child block's new children are appended by one compaction step per column.
    The threads past the last full step run one by one."""

    stmts: tuple[ir.Stmt, ...]
    reads: tuple[Column, ...]
    lanes: int
    body: LaneBody  # the statements if-converted (revec/transforms/lanes.py)
    child_blocks: tuple[int, ...]
    fast_paths: tuple[str, ...]
    # run thread by thread instead (a back end without lane code), two child blocks:
    # their counters may live in registers
    counts_in_locals: bool = False
    # targets with lane passes: the passes and fills, and per (child block, column) where
    # the children's values come from: "q_<column>" (the inductive threads' copy, a field
    # passed on unchanged), a fill's or a value pass's scratch column
    passes: tuple[LanePass, ...] = ()
    fills: tuple[LaneFill, ...] = ()
    sources: tuple[tuple[int, str, str], ...] = ()
    # leaf inlining (KernelPlan.leaf_inline): every site tests its child and runs a
    # child that is a base case in the lane; each child block counts those children
    leaves: bool = False
    # children written by spawn site (technique site_blocks), else by child block
    by_site: SiteBlocks | None = None
    # leaf inlining as one pass (Target.leaf_fused, after a :class:`CountBase` step):
    # every inductive thread as lane code, the last partial step too (its missing lanes
    # make no spawn), so no child is a base case
    fused: bool = False
    # targets with lane passes and lane buffers (Target.lane_buffers): the passes as one
    # lane loop per 32-thread step storing every pass into 32-element arrays on the stack
    # (which alias nothing), integer reductions into per-lane partials merged once
    buffers: bool = False
    # leaf inlining through the site blocks (technique site_leaves; needs by_site)
    site_leaves: SiteLeaves | None = None
    # technique leaf_two_levels (needs fused): in a block the driver runs blocked whose
    # child blocks would run blocked too (each holds R threads or more), every inductive
    # child runs in its parent's lane as well; K * K grandchild blocks
    two_levels: bool = False
    # technique const_leaves (needs buffers): the reductions of a constant by the
    # inlined leaves of an every-lane site alone in its child block, each summed once per
    # block as the constant times that child block's inlined leaves (not in the lane loop)
    const_leaves: tuple[ConstLeaf, ...] = ()

    def pass_loops(self) -> tuple[tuple[LanePass, ...], ...]:
        """The passes grouped into loops: one store per loop (LLVM vectorizes such a
        loop), all in one loop when there are more than :data:`FUSE_ABOVE`; without
        passes, one loop of the reductions alone."""
        if len(self.passes) > FUSE_ABOVE:
            return (self.passes,)
        return tuple((p,) for p in self.passes) or ((),)

    def fill(self, name: str) -> LaneFill:
        return next(f for f in self.fills if f.name == name)

    def source(self, k: int, column: str) -> str:
        return next(src for kk, c, src in self.sources if kk == k and c == column)

    @property
    def sites(self) -> tuple[SpawnSite, ...]:
        return self.body.sites

    def detail(self) -> list[str]:
        sites = ", ".join(f"#{s.index} k in {{{', '.join(map(str, sorted(s.kset)))}}}"
                          + (" conditional" if s.conditional else "") for s in self.sites)
        out = [f"reads {_names(self.reads)}", f"lanes: {self.lanes}",
               f"spawn sites: {sites}"]
        if self.by_site is not None:
            out += self.by_site.render()
        if self.site_leaves is not None:
            out += self.site_leaves.render()
        else:
            out.append(f"child blocks: {', '.join(map(str, self.child_blocks))} (one "
                       "compaction step per column each)")
        out.append("fast paths: " + "; ".join(self.fast_paths))
        if self.leaves and self.site_leaves is None:
            out.append("leaf inlining: a child whose is-base test holds runs its base case "
                       "in the lane, keeps its spawn index and is counted (child block k's "
                       "inlined leaves), not written; " + (
                           "one pass over every inductive thread (the last partial step as "
                           "lane code: its missing lanes make no spawn, its children stored "
                           "exactly: no slack), so no child is a base case; a child block "
                           "with one site takes its masks straight to bits and that site's "
                           "arguments; a sum of bytes per 32 lanes by a vector sum of "
                           "absolute differences, of other narrow values in 16- or 32-bit "
                           "lane sums; a constant every leaf of an every-lane site reduces: "
                           "once per block, times its leaves" if self.fused else
                           "the threads past the last full step write every child"))
        if self.fused:
            out += [f"child block {k}'s {c}: {show_expr(self.fill(src).value)} in every "
                    "child (filled after the pass, not staged or compacted)"
                    for k, c, src in self.sources]
        elif self.buffers:
            out.append("passes as one lane loop per 32-thread step into stack arrays: "
                       f"{', '.join(p.name for p in self.passes) or '-'}; integer "
                       "reductions into per-lane partials (narrow values in 32-bit lanes), "
                       "merged once")
            out += [f"reduce({c.reducer}, {c.value}) by each inlined leaf of site "
                    f"#{c.site}: once per block, {c.value} x child block {c.block}'s "
                    "inlined leaves (const_leaves)" for c in self.const_leaves]
            out += [f"fill {f.name} = {show_expr(f.value)}" for f in self.fills]
        elif self.passes or self.fills:
            loops = "; ".join(", ".join(p.name for p in g) for g in self.pass_loops())
            out.append(f"passes (one loop each: {loops})")
            out += [f"fill {f.name} = {show_expr(f.value)}" for f in self.fills]
        if self.counts_in_locals:
            out.append("the threads past the last full step: two counters in locals")
        return out


@dataclass(frozen=True)
class ThreadSpawns(Step):
    """The inductive case thread by thread: a thread's k-th spawn goes to child block k
    through a per-block counter."""

    stmts: tuple[ir.Stmt, ...]
    reads: tuple[Column, ...]
    dynamic: bool  # the number of child blocks grows at run time
    counts_in_locals: bool  # two child blocks: their counters may live in registers
    reason: str  # why no lane shape fits

    def detail(self) -> list[str]:
        out = [f"reads {_names(self.reads)}", f"thread by thread: {self.reason}"]
        if self.dynamic:
            out.append("child blocks grown at run time")
        if self.counts_in_locals:
            out.append("two child blocks: counters in locals")
        return out


@dataclass(frozen=True)
class LoopPrefix(Step):
    """Phase A of a lock-step spawn loop: the prefix of every inductive thread; the
    threads whose loop runs at least once keep their loop state in a dense active list
    (one compaction step per state column, ``lanes`` threads per step)."""

    shape: SpawnLoop
    reads: tuple[Column, ...]
    state: tuple[Column, ...]
    lanes: int  # threads whose prefix runs in lock step (1: thread by thread)
    body: LaneBody | None  # the prefix if-converted (lanes > 1)
    fast_paths: tuple[str, ...]

    def detail(self) -> list[str]:
        how = (f"prefix as lane code, {self.lanes} lanes" if self.lanes > 1
               else "prefix thread by thread")
        return [f"reads {_names(self.reads)}", how,
                f"active list <- {_names(self.state)} (compaction per state column)",
                "fast paths: " + "; ".join(self.fast_paths)]


@dataclass(frozen=True)
class LoopIterate(Step):
    """Phase B: one iteration of every active thread per pass, ``lanes`` at a time as
    if-converted lane code; iteration ``it`` writes child block ``it`` densely (one
    child per active thread), the threads whose loop goes on are compacted into the
    next active list."""

    shape: SpawnLoop
    state: tuple[Column, ...]
    by_index: tuple[str, ...]  # read-only fields read from the block through ``_idx``
    # the state columns an iteration stores back (in place: those it changes; staged:
    # all of them)
    updated: tuple[str, ...]
    lanes: int  # active threads per pass as lane code (1: thread by thread)
    body: LaneBody | None  # the loop body if-converted (lanes > 1)
    dynamic: bool
    fast_paths: tuple[str, ...]

    @property
    def sites(self) -> tuple[SpawnSite, ...]:
        return self.body.sites if self.body is not None else ()

    def detail(self) -> list[str]:
        how = (f"lanes: {self.lanes}, spawn sites: {len(self.sites)}" if self.lanes > 1
               else "active threads one by one")
        out = [how,
               f"state an iteration stores back: {', '.join(self.updated) or '-'}",
               "iteration it -> child block it, one child per active thread (dense)",
               f"next active list <- {_names(self.state)} (compaction per state column)"]
        if self.by_index:
            out.append(f"read through the thread's index: {', '.join(self.by_index)}")
        if self.dynamic:
            out.append("child blocks grown at run time")
        return out + ["fast paths: " + "; ".join(self.fast_paths)]


@dataclass(frozen=True)
class StoreReducers(Step):
    reducers: tuple[str, ...]

    def detail(self) -> list[str]:
        return [f"store {', '.join(self.reducers) or '-'}; return the base threads' count"]


_KINDS: dict[type, str] = {UniformLoad: "uniform-load", Split: "split", BaseCase: "base",
                           CountBase: "count-base",
                           StraightSpawns: "straight-spawns", LaneSpawns: "lane-spawns",
                           ThreadSpawns: "thread-spawns", LoopPrefix: "loop-prefix",
                           LoopIterate: "loop-iterate", StoreReducers: "store-reducers"}

COMPACTION_FAST = ("all lanes kept -> copy", "no lane kept -> skip",
                   "else one compaction step per column")


@dataclass(frozen=True)
class KernelPlan:
    task: str
    source: str
    bp: BlockProgram
    target: Target
    split_mode: str  # "vector" (compaction steps) / "scalar" (branch-free scalar steps)
    columns: tuple[Column, ...]  # the fields that vary between threads
    invariant: tuple[Column, ...]
    uniform: tuple[Column, ...]
    steps: tuple[Step, ...]
    slack: int  # room after each child block for the lane steps' full-width stores
    # the kernel's arrays besides the frame columns, in order
    scratch: tuple[Scratch, ...] = ()
    # bounds (ir.ReducerDecl.bound): each read (ir.BoundRead) as the better of the
    # worker's accumulator and the value the workers published, loaded at the kernel's
    # start; the kernel publishes an improved one when it stores the reducers
    bounds: tuple[str, ...] = ()
    # leaf inlining: the children's is-base test and base case at every spawn site
    # (None: not applied, ``leaf_note`` says why)
    leaf_inline: LeafInline | None = None
    leaf_note: str = ""
    # technique site_blocks: whether lane spawns write their children by spawn site
    # (empty: no lane spawns)
    site_note: str = ""
    # technique staged_steps: the compaction steps over staged lane arrays of 16- and
    # 32-bit columns (a spawn loop's state, a site's arguments) in 256-bit pieces
    staged_steps: bool = False
    staged_note: str = ""
    # uniform_base and base_fold: the lines ``--plan`` prints about them (applied or why not)
    uniform_note: str = ""
    fold_note: str = ""
    # lane_buffers: the line ``--plan`` prints about it (applied or why not)
    lane_buffers_note: str = ""
    # technique leaf_level (StraightSpawns.leaf_level): the line ``--plan`` prints
    level_note: str = ""
    # technique site_leaves: the line ``--plan`` prints (applied or why not)
    site_leaves_note: str = ""
    # technique narrow_partials: the line ``--plan`` prints about it (applied or why not)
    narrow_partials_note: str = ""
    # technique fold_in_split: the line ``--plan`` prints about it (applied or why not)
    fold_in_split_note: str = ""
    # technique wide_flags: the spawn loop's lane flags (its loop condition, its spawn
    # masks and indices, its lane conditions) as 32-bit ints (wide_flags_decision)
    wide_flags: bool = False
    wide_flags_note: str = ""
    # technique sched_pressure: the kernel compiled with register-pressure aware
    # scheduling before register allocation (sched_pressure_decision)
    sched_pressure: bool = False
    sched_pressure_note: str = ""
    # block_in_place: the line ``--plan`` prints about it (applied or why not)
    block_in_place_note: str = ""
    # technique narrow_state: the spawn loop's counter and bound kept in 32-bit active
    # lists (narrow_state_decision)
    narrow_state: bool = False
    narrow_state_note: str = ""
    # technique leaf_two_levels (LaneSpawns.two_levels): the line ``--plan`` prints
    leaf_two_levels_note: str = ""
    # technique const_leaves (LaneSpawns.const_leaves): the line ``--plan`` prints
    const_leaves_note: str = ""
    # technique column_loops (StraightSpawns.column_loops): the line ``--plan`` prints
    column_loops_note: str = ""
    # technique sentinel_partials (LeafLevel.sentinel): the line ``--plan`` prints
    sentinel_partials_note: str = ""

    @property
    def step_ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.steps)

    @property
    def writes(self) -> tuple[str, ...]:
        """Every output array the kernel stores into (see :attr:`Step.writes`)."""
        return tuple(sorted({a for s in self.steps for a in s.writes}))

    def step(self, kind: type[Step]) -> Step | None:
        return next((s for s in self.steps if isinstance(s, kind)), None)

    @property
    def loop(self) -> tuple[LoopPrefix, LoopIterate] | None:
        a, b = self.step(LoopPrefix), self.step(LoopIterate)
        if isinstance(a, LoopPrefix) and isinstance(b, LoopIterate):
            return a, b
        return None

    def render(self) -> str:
        L = [f"kernel plan of task {self.task} ({self.source}) for the {self.target.name} "
             "back end",
             f"columns: {_names(self.columns)}",
             f"invariant (one value per tree): {_names(self.invariant)}",
             f"level-uniform (one value per block): {_names(self.uniform)}",
             f"split mode: {self.split_mode}; child-block slack: {self.slack} (child "
             "block k at out_base + k * (inductive threads + slack))",
             "scratch:"]
        L += [f"  {x.render()}" for x in self.scratch] or ["  -"]
        if self.bounds:
            L.append(f"bounds (read as at block start; published at store-reducers): "
                     f"{', '.join(self.bounds)}")
        L.append(f"leaf inlining: {self.leaf_note}")
        if self.site_note:
            L.append(f"site blocks: {self.site_note}")
        if self.staged_note:
            L.append(f"staged steps: {self.staged_note}")
        if self.lane_buffers_note and self.step(LaneSpawns) is not None:
            L.append(f"lane buffers (lane_buffers): {self.lane_buffers_note}")
        if self.uniform_note:
            L.append(f"uniform is-base (uniform_base): {self.uniform_note}")
        if self.fold_note:
            L.append(f"branch-free base case (base_fold): {self.fold_note}")
        if self.level_note:
            L.append(f"leaf inlining per level (leaf_level): {self.level_note}")
        if self.site_leaves_note:
            L.append(f"leaf inlining through site blocks (site_leaves): "
                     f"{self.site_leaves_note}")
        if self.leaf_two_levels_note:
            L.append(f"two levels per call (leaf_two_levels): {self.leaf_two_levels_note}")
        if self.narrow_partials_note:
            L.append(f"narrow partials (narrow_partials): {self.narrow_partials_note}")
        if self.fold_in_split_note:
            L.append(f"base case in the split (fold_in_split): {self.fold_in_split_note}")
        if self.wide_flags_note and not self.wide_flags_note.startswith("not applied"):
            # (where it does not apply, only the techniques' list says why: kernels
            # without a heavy spawn loop keep their plan text)
            L.append(f"wide lane flags (wide_flags): {self.wide_flags_note}")
        if self.sched_pressure_note and not self.sched_pressure_note.startswith(
                "not applied"):
            L.append(f"pressure-aware scheduling (sched_pressure): "
                     f"{self.sched_pressure_note}")
        if self.block_in_place_note:
            L.append(f"blocks in place (block_in_place): {self.block_in_place_note}")
        if self.narrow_state_note and not self.narrow_state_note.startswith("not applied"):
            L.append(f"32-bit loop counter (narrow_state): {self.narrow_state_note}")
        if self.const_leaves_note and not self.const_leaves_note.startswith("not applied"):
            L.append(f"constant leaf sums (const_leaves): {self.const_leaves_note}")
        if self.column_loops_note and not self.column_loops_note.startswith("not applied"):
            L.append(f"one loop per column (column_loops): {self.column_loops_note}")
        if self.sentinel_partials_note and not self.sentinel_partials_note.startswith(
                "not applied"):
            L.append(f"sentinel partials (sentinel_partials): {self.sentinel_partials_note}")
        L.append("steps:")
        for s in self.steps:
            L.append(f"  {s.id} {s.kind}")
            L += [f"      {x}" for x in s.rendered()]
        return "\n".join(L) + "\n"


def _names(cols: tuple[Column, ...]) -> str:
    return ", ".join(c.render() for c in cols) if cols else "-"


# ---------------------------------------------------------------- building
def build_plan(program: ir.Program, task: str, split_mode: str = "vector",
               target: Target | str = "c", off: frozenset[str] | None = None,
               on: frozenset[str] | None = None) -> KernelPlan:
    """The kernel plan of ``task`` for ``target`` (a :class:`Target` or the name of one
    of :data:`TARGETS`).  ``split_mode`` ``scalar``: the split and the active lists use
    branch-free scalar steps (the numba back end's ``compaction="scalar"``); then a side
    reading three or more columns keeps arena indices, and a lock-step loop's read-only
    fields are read through the thread's index (fewer stores per thread: the store port
    is the scalar steps' bottleneck).  ``off`` / ``on``: the techniques switched off /
    on (None: those :func:`plan_off` / :func:`plan_on` read from the environment); off
    wins, and a technique neither names follows the target."""
    if split_mode not in SPLIT_MODES:
        raise ValueError(f"split mode {split_mode!r}")
    tg = TARGETS[target] if isinstance(target, str) else target
    bp = to_block_program(program, task)
    t = bp.task
    cols = tuple(Column(p.name, p.ty) for p in bp.columns)
    uniform = tuple(c for c in cols if c.name in bp.uniform)
    varying = tuple(c for c in cols if c.name not in bp.uniform)
    invariant = tuple(Column(p.name, p.ty) for p in bp.fields if p.name in bp.invariant)
    scalar = split_mode == "scalar"
    inductive = strip_final_return(bp.inductive)
    off = plan_off() if off is None else off
    on = plan_on() if on is None else on
    tests, level_note = level_decision(program, bp, inductive, off, tg)
    leaf, leaf_note = leaf_decision(program, bp, inductive, off | (
        frozenset() if "leaf_inline" in on else {"default"} if tg.leaf_inline
        else {"target"}), tg, tests is not None)
    if leaf is None and tests is not None:
        tests, level_note = None, "not applied: leaf inlining is off (see above)"
    if leaf is not None:  # the lane variables of the inlined children
        extra = {v: p.ty for p in t.params for k, v in leaf.temps.items() if k == p.name}
        extra |= {v: t.locals[k] for k, v in leaf.locals.items()}
        t = dataclasses.replace(t, locals={**t.locals, **extra})
        bp = dataclasses.replace(bp, task=t)

    def reads(stmts: tuple[ir.Stmt, ...] | ir.Expr) -> tuple[Column, ...]:
        used = used_vars(stmts)
        return tuple(c for c in varying if c.name in used)

    def side(name: str, stmts: tuple[ir.Stmt, ...]) -> Side:
        r = reads(stmts)
        return Side(name, r, "index" if scalar and len(r) >= 3 else "copy")

    def lanes(stmts: tuple[ir.Stmt, ...], inline: LeafInline | None = None) -> LaneBody:
        return if_convert(stmts, tuple(c.name for c in cols), tuple(p.name for p in bp.fields),
                          inline)

    steps: list[Step] = []
    n = 0

    def sid(kind: str) -> str:
        nonlocal n
        n += 1
        return f"{n}.{kind}"

    if uniform:
        steps.append(UniformLoad(sid("uniform"), uniform))
    base_side, ind_side = side("base", bp.base), side("inductive", bp.inductive)
    dynamic = bp.max_spawns is None
    site_leaf, site_leaves_note = None, ""
    if leaf is None:  # leaf inlining through the site blocks (technique site_leaves)
        cand, site_leaf, site_leaves_note = site_leaf_decision(program, bp, inductive,
                                                               ind_side, off, tg)
        if cand is not None and site_leaf is not None:
            leaf = cand
            leaf_note = ("through the site blocks (site_leaves, below); as one pass off by "
                         f"default for this program: {leaf_unprofitable(program, bp, inductive)}"
                         f"; {PLAN_ON_ENV}=leaf_inline switches that on")
            extra = {v: p.ty for p in t.params for k, v in leaf.temps.items() if k == p.name}
            extra |= {v: t.locals[k] for k, v in leaf.locals.items()}
            t = dataclasses.replace(t, locals={**t.locals, **extra})
            bp = dataclasses.replace(bp, task=t)
    fused = (leaf is not None and tests is None and site_leaf is None
             and tg.leaf_fused
             and ind_side.keep == "copy" and not dynamic and if_convertible(inductive))
    mask_reads = reads((ir.ExprStmt(t.loc, bp.is_base),))
    if fused:
        steps.append(CountBase(sid("count"), bp.is_base, mask_reads, LANES))
        once, uniform_note = False, ("not applied: leaf inlining as one pass counts the "
                                     "base threads instead (only the root block has any)")
    else:
        once, uniform_note = uniform_decision(bp, mask_reads, off, tg)
    nsum = narrow_sum(program, bp, base_side) if tg.narrow_sum else None
    fold, fold_note = fold_decision(program, bp, off, tg, nsum)
    fold, narrow_note = narrow_partials_decision(program, fold, base_side.columns, off, tg)
    fold, in_split_note = fold_in_split_decision(bp, fold, once or fused or scalar, off, tg)
    split_base = Side("base", (), "copy") if fold is not None and fold.in_split else base_side
    steps.append(Split(sid("split"), bp.is_base, mask_reads,
                       LANES, split_base, ind_side,
                       ("all base -> copies", "all inductive -> copies",
                        "else one compaction step per moved column and side"),
                       once, "bfs" if once else ""))
    steps.append(BaseCase(sid("base"), bp.base, base_side.columns, nsum,
                          contains_return(bp.base), fold))
    slack = 0
    site_note = ""  # (shown for lane spawns only)
    two_note = ""  # (shown for lane spawns only)
    col_note = ""  # (shown for straight spawns only)
    sent_note = ""  # (shown for leaf_level only)
    buffers_note = ""  # (shown for lane spawns only)
    const_note = ""  # (lane spawns only)
    if straight_spawns(inductive) and (leaf is None or tests is not None):
        level = None if tests is None else LeafLevel(
            tests, fold_decision(program, bp, off, tg, None)[0])
        if level is not None:
            sent, sent_note = sentinel_decision(level.fold, off, tg)
            level = dataclasses.replace(level, sentinel=sent)
        by_col, col_note = column_loops_decision(bp, ind_side, off, tg)
        steps.append(StraightSpawns(sid("straight"), bp.inductive, ind_side.columns,
                                    bp.max_spawns or 0, level, by_col))
    elif not dynamic and if_convertible(inductive):
        body = lanes(inductive, leaf)
        sites = body.sites
        blocks = tuple(sorted(set().union(*(s.kset for s in sites)))) if sites else ()
        # (site_leaves by child block: the passes of the lane body without leaf code,
        # which the kernel runs unless the children are all leaves)
        plain = site_leaf.plain if site_leaf is not None and not site_leaf.by_site else None
        passes, fills, sources = (lane_passes(bp, plain or body, blocks, ind_side, inductive)
                                  if tg.lane_passes else ((), (), ()))
        buffers, buffers_note = buffers_decision(tg, fused, off, on)
        if fused:  # (C) a child column every lane's spawn sets alike: filled per block
            _, fills, sources = lane_passes(bp, body, blocks, ind_side, inductive)
            sources = tuple(x for x in sources if x[2].startswith("fill"))
            by_site, site_note = None, ("not applied: leaf inlining as one pass writes the "
                                        "child blocks")
        else:
            by_site, site_note = site_decision(program, bp, body, ind_side, inductive,
                                               off, tg)
        steps.append(LaneSpawns(sid("lanes"), inductive, ind_side.columns, LANES, body,
                                blocks, ("a compaction step per full step (no tests)",)
                                if fused else ("a child block's 32 lanes all spawn -> copy",
                                               "none spawns -> skip"),
                                tg.counts_in_locals and len(blocks) == 2,
                                passes, fills, sources, leaf is not None, by_site, fused,
                                buffers, site_leaf if by_site is not None
                                or plain is not None else None))
        two, two_note = two_levels_decision(program, bp, body, blocks, sources, fused, off)
        if two:
            ls = steps[-1]
            assert isinstance(ls, LaneSpawns)
            steps[-1] = dataclasses.replace(ls, two_levels=True)
        ls = steps[-1]
        assert isinstance(ls, LaneSpawns)
        consts, const_note = const_leaves_decision(program, ls, off, on, tg)
        if consts:
            steps[-1] = dataclasses.replace(ls, const_leaves=consts)
        slack = 0 if fused else LANES  # (fused: the last partial step stores exactly)
    elif (shape := spawn_loop(inductive, if_convertible)) is not None:
        state = tuple(Column(nm, ty)
                      for nm, ty in loop_state(shape, _params(bp, varying), t.locals))
        if isinstance(shape.loop, ir.For):
            state += (Column("_stop", INT64),)
        narrow_st, narrow_st_note = narrow_state_decision(shape, off, on, tg)
        if narrow_st:  # (the counter and the bound in 32-bit active lists)
            assert isinstance(shape.loop, ir.For)
            state = tuple(Column(c.name, INT32) if c.name in (shape.loop.var, "_stop")
                          else c for c in state)
        by_index: tuple[str, ...] = ()
        if scalar:
            written = assigned_names(shape.loop.body)
            names = {c.name for c in varying}
            ro = tuple(c.name for c in state if c.name in names and c.name not in written)
            if len(ro) >= 2:
                by_index = ro
                state = (Column("_idx", INT64),) + tuple(c for c in state if c.name not in ro)
        prefix_lanes = tg.loop_lanes and if_convertible(shape.prefix)
        steps.append(LoopPrefix(sid("loop-prefix"), shape, ind_side.columns, state,
                                LANES if prefix_lanes else 1,
                                lanes(shape.prefix) if prefix_lanes else None,
                                COMPACTION_FAST))
        changed = assigned_names(shape.loop.body) | (
            {shape.loop.var} if isinstance(shape.loop, ir.For) else set())
        updated = tuple(c.name for c in state
                        if c.name in changed or not tg.state_in_place)
        steps.append(LoopIterate(sid("loop-iterate"), shape, state, by_index, updated,
                                 LANES if tg.loop_lanes else 1,
                                 lanes(shape.loop.body) if tg.loop_lanes else None,
                                 dynamic, COMPACTION_FAST))
        slack = LANES
    else:
        if dynamic:
            reason = "the number of child blocks grows at run time"
        elif not if_convertible(inductive):
            reason = ("loops, returns or non-speculable code under a condition: "
                      "not if-convertible")
        else:
            reason = "no lane shape fits"
        steps.append(ThreadSpawns(sid("threads"), bp.inductive, ind_side.columns, dynamic,
                                  tg.counts_in_locals and bp.max_spawns == 2, reason))
    prepass, prepass_note = prepass_decision(once, fused, split_mode, base_side, ind_side,
                                             off, tg, fold is not None and fold.in_split)
    if once or prepass:  # when the inductive side reads a copy: its shape decides
        at = next(i for i, st in enumerate(steps) if isinstance(st, Split))
        # (a lock-step loop whose iterations read fields through the thread's index,
        # scalar split mode, reads them after it wrote children and maybe grew the
        # columns: a copy)
        by_index_reads = any(isinstance(st, LoopIterate) and st.by_index for st in steps)
        copy = ("never" if any(isinstance(st, LoopPrefix) for st in steps)
                and not by_index_reads else "always" if dynamic or by_index_reads else "bfs")
        split_step = steps[at]
        assert isinstance(split_step, Split)
        # (numba: the pass is the split's own mask pass, its masks stored, ORed and ANDed
        # as it goes: a mixed block is compacted on them)
        steps[at] = dataclasses.replace(split_step, inductive_copy=copy, prepass=prepass,
                                        prepass_store=tg.name == "numba"
                                        or not ir.speculable(bp.is_base))
    steps.append(StoreReducers(sid("store"), tuple(r.name for r in bp.reducers)))
    staged, staged_note = staged_decision(steps, cols, off, tg)
    wide, wide_note = wide_flags_decision(steps, cols, t.locals, off, tg)
    sched, sched_note = sched_pressure_decision(steps, off, tg)
    if not any(isinstance(st, LoopIterate) for st in steps):
        narrow_st, narrow_st_note = False, ""
    return KernelPlan(task, Path(program.path).name, bp, tg, split_mode, cols, invariant,
                      uniform, tuple(steps), slack, scratch_of(tg, steps),
                      tuple(r.name for r in bp.reducers if r.bound), leaf, leaf_note,
                      site_note, staged, staged_note, uniform_note, fold_note,
                      lane_buffers_note=buffers_note, level_note=level_note,
                      site_leaves_note=site_leaves_note,
                      narrow_partials_note=narrow_note, fold_in_split_note=in_split_note,
                      wide_flags=wide, wide_flags_note=wide_note, sched_pressure=sched,
                      sched_pressure_note=sched_note,
                      block_in_place_note=prepass_note, narrow_state=narrow_st,
                      narrow_state_note=narrow_st_note, leaf_two_levels_note=two_note,
                      const_leaves_note=const_note,
                      column_loops_note=col_note, sentinel_partials_note=sent_note)


def const_leaf_candidates(program: ir.Program, step: LaneSpawns
                          ) -> tuple[ConstLeaf, ...]:
    """The reductions of a lane-spawns step that const_leaves sums once per block: an
    integer sum (no bound) of an integer constant of the reducer's type, directly in the
    base case of an inlined leaf of a spawn site every lane makes (not conditional) and
    that alone fills its child block (its spawn index is always that block's)."""
    ops = step.body.ops
    single: dict[int, int] = {}  # site -> the child block it alone fills
    for k in step.child_blocks:
        fill = [st for st in step.sites if k in st.kset]
        if len(fill) == 1 and fill[0].kset == frozenset({k}) and not fill[0].conditional:
            single[fill[0].index] = k
    leaf_site = {op.leaf: op.site.index for op in ops
                 if isinstance(op, MakeSpawn) and op.leaf is not None
                 and op.site.index in single}
    out = []
    for n, op in enumerate(ops):
        if not (isinstance(op, Fold) and op.guard in leaf_site):
            continue
        decl = program.reducers[op.stmt.reducer]
        v = op.stmt.value
        c = v.operand if isinstance(v, ir.Cast) else v
        if decl.op == "sum" and decl.dtype.kind in "iu" and not decl.bound \
                and isinstance(c, ir.Const) and isinstance(c.value, int | np.integer) \
                and not isinstance(c.value, bool | np.bool_) and v.ty.dtype == decl.dtype \
                and (decl.dtype.kind == "i" or c.value >= 0):
            site = leaf_site[op.guard]
            out.append(ConstLeaf(n, op.stmt.reducer, int(c.value), site, single[site]))
    return tuple(out)


def const_leaves_decision(program: ir.Program, step: LaneSpawns, off: frozenset[str],
                          on: frozenset[str], tg: Target) -> tuple[tuple[ConstLeaf, ...], str]:
    """const_leaves: the constant sums of inlined leaves (:func:`const_leaf_candidates`)
    a buffered lane loop leaves out, each added once per block as the constant times the
    inlined leaves of its child block, which the steps count anyway (not a per-lane
    partial updated in every lane of every step), and the line ``--plan`` prints.
    Measured on numba (binomial reexp, C(30, 13)): docs/backends.md, "Lane buffers"."""
    if not tg.lane_passes or not step.leaves:
        return (), ""
    if step.site_leaves is not None:
        return (), "not applied: leaf inlining through the site blocks"
    cands = const_leaf_candidates(program, step)
    if not cands:
        return (), ("not applied: no inlined leaf of an every-lane site alone in its child "
                    "block sums a constant into an integer reducer")
    if not step.buffers:
        return (), "not applied: the lane passes run without lane buffers (lane_buffers)"
    if "const_leaves" in off:
        return (), f"switched off ({PLAN_OFF_ENV}=const_leaves); it would apply"
    if not tg.const_leaves and "const_leaves" not in on:
        return (), f"off by default on the {tg.name} back end; it would apply"
    what = ", ".join(f"{c.reducer} += {c.value} per leaf of site #{c.site}" for c in cands)
    return cands, (f"on: {what}: once per block, the constant times the child block's "
                   "inlined leaves the lane steps count (no per-lane partial)")


def two_levels_decision(program: ir.Program, bp: BlockProgram, body: LaneBody,
                        blocks: tuple[int, ...], sources: tuple[tuple[int, str, str], ...],
                        fused: bool, off: frozenset[str]) -> tuple[bool, str]:
    """leaf_two_levels: a fused lane pass that also runs every inductive child in its
    parent's lane (two levels per kernel call, K * K grandchild blocks), where the
    schedule's decisions about the child level are known before the kernel runs: a
    block the driver runs blocked whose K child blocks each hold ni >= R threads (they
    run blocked: DESIGN.md 3), which needs every site to spawn unconditionally into its
    own child block (each child block then holds exactly the ni inductive threads) and
    no base thread in the block (only the root has any).  The driver counts each child
    block when it reaches it, as if it ran: every statistic is the one-level one.
    Measured (fib(40) reexp, CPU-time medians of 11-15 interleaved with it off, shared
    2-core Zen 4, load 5-8): AVX2 build (-march=znver3) B = 2^16 1.05-1.08x, 2^15 1.09x,
    2^14 1.05x (once 0.97x); native AVX-512 0.99-1.06x.  A hand-written kernel of the
    same schedule (reports/prototypes/fib_two_levels, "gated") measured 1.12-1.14x."""
    if not fused:
        return False, ""
    if "leaf_two_levels" in off:
        return False, "off (switched off)"
    sites = body.sites
    why = ""
    if sources:
        why = "a child column every lane sets alike (filled per child block)"
    elif bp.uniform:
        why = "level-uniform values (the grandchildren's would be the next level's)"
    elif not sites or len(sites) != len(blocks) or any(
            st.conditional or len(st.kset) != 1 for st in sites):
        why = "a spawn site that is conditional or shares its child block"
    elif any(isinstance(op, lanes_mod.Plain) for op in body.ops):
        why = "a statement every lane runs as it is (not speculable on a leaf's values)"
    elif any(isinstance(op, lanes_mod.MakeSpawn)
             and (op.leaf is None or op.guard is not None
                  or len(op.args) != len(bp.columns)) for op in body.ops):
        why = "a spawn without its leaf test or with a column passed on unchanged"
    elif not all(ir.speculable(e) for e in _lane_exprs(body)):
        why = "a value that is not speculable (a call or an array read)"
    elif any(isinstance(op, lanes_mod.Fold)
             and (program.reducers[op.stmt.reducer].dtype.kind not in "iub"
                  or program.reducers[op.stmt.reducer].bound
                  or isinstance(op.stmt.value, ir.Const)
                  or isinstance(op.stmt.value, ir.Cast)
                  and isinstance(op.stmt.value.operand, ir.Const)) for op in body.ops):
        why = ("a float, bound or constant reduction (float sums would change order; a "
               "constant is counted once per block)")
    if why:
        return False, f"not applied: {why}"
    return True, ("on: in a block the driver runs blocked whose child blocks each hold R "
                  "threads or more (they would run blocked), and no base thread, every "
                  "inductive child runs in its parent's lane too: its leaves reduced "
                  "there, its children written to child block k * K + k' (two levels per "
                  "call); each child block counted by the driver when it reaches it, as "
                  "a block of its level (statistics as with one level)")


def _lane_exprs(body: LaneBody) -> list[ir.Expr]:
    out: list[ir.Expr] = []
    for op in body.ops:
        match op:
            case lanes_mod.SetVar(value=v):
                out.append(v)
            case lanes_mod.Cond(cond=c):
                out.append(c)
            case lanes_mod.MakeSpawn(args=args):
                out += [a for _, a in args]
            case lanes_mod.Fold(stmt=r):
                out.append(r.value)
    return out


def buffers_decision(tg: Target, fused: bool, off: frozenset[str], on: frozenset[str]
                     ) -> tuple[bool, str]:
    """lane_buffers: whether a lane-spawns step of a target with lane passes runs them as
    one lane loop per 32-thread step into stack arrays (:attr:`LaneSpawns.buffers`), and
    the line ``--plan`` prints about it.  Measured on numba (CPU seconds, Zen 4 AVX-512,
    loaded, medians of 5 interleaved, reexp default size, against the passes over whole
    columns): parentheses 0.0229 vs 0.0425 s, graphcol 0.1007 vs 0.121 s, and with
    leaf inlining fib 0.0257 vs 0.062 s."""
    if not tg.lane_passes:
        return False, ""
    if fused:
        return False, "not applied: leaf inlining as one pass"
    if "lane_buffers" in off:
        return False, f"switched off ({PLAN_OFF_ENV}=lane_buffers); it would apply"
    if not tg.lane_buffers and "lane_buffers" not in on:
        return False, f"off by default on the {tg.name} back end; it would apply"
    return True, ("on: the lane passes as one lane loop per 32-thread step into stack "
                  "arrays, integer reductions into per-lane partials")


def heavy_loop_body(body: tuple[ir.Stmt, ...]) -> bool:
    """Whether a spawn loop's body calls a library function (uts's SHA-1: 80 rounds of
    straight-line code in every lane) and neither reduces nor loops: the C back end runs
    its partial chunks as 32 clamped lanes (c_lanes.LoopEmitter), and wide_flags
    applies to it."""
    nodes = list(ir.walk_nodes(body))
    return any(isinstance(n, ir.LibCall) for n in nodes) and not any(
        isinstance(n, ir.Reduce | ir.For | ir.While) for n in nodes)


def sched_pressure_decision(steps: list[Step], off: frozenset[str], tg: Target
                            ) -> tuple[bool, str]:
    """Whether the kernel is compiled with gcc's register-pressure aware instruction
    scheduling before register allocation (technique ``sched_pressure``: x86 gcc
    schedules only after allocation by default), and the line ``--plan`` prints.  Where
    the spawn loop's lane body is heavy (:func:`heavy_loop_body`: uts's SHA-1, its
    rounds' values spilled): uts T3 reexp, on vs off interleaved in one process (medians
    of 9, loaded 2-core Zen 4, 2026-11-28), C time 13-20% lower on the AVX2 build
    (-march=znver3; one run of 5 showed no difference), 3-20% on AVX-512.  Other kernels
    are compiled as before."""
    it = next((st for st in steps if isinstance(st, LoopIterate)), None)
    if it is None or it.lanes <= 1 or it.body is None:
        return False, ""
    if not heavy_loop_body(it.shape.loop.body):
        return False, ("not applied: the spawn loop's body calls no library function or "
                       "reduces (a light lane loop)")
    if "sched_pressure" in off:
        return False, f"switched off ({PLAN_OFF_ENV}=sched_pressure); it would apply"
    if not tg.sched_pressure:
        return False, f"not on the {tg.name} back end; it would apply"
    return True, ("on: the kernel is scheduled before register allocation, pressure-aware "
                  "(gcc: its heavy lane body's values spill less)")


def fits_int32(e: ir.Expr) -> bool:
    """Whether every value of integer expression ``e`` fits a signed 32-bit int by its
    type alone: a constant in range, a value of a signed type of 32 bits or fewer or an
    unsigned one of 16 bits or fewer, or such a value widened (a cast to a wider
    signed int)."""
    if isinstance(e, ir.Const):
        return isinstance(e.value, int | np.integer) and not isinstance(e.value, bool) \
            and -(1 << 31) <= int(e.value) < (1 << 31)
    kind, size = e.ty.kind, e.ty.dtype.itemsize
    if kind == "i" and size <= 4 or kind in "ub" and size <= 2:
        return True
    return isinstance(e, ir.Cast) and kind == "i" and \
        size >= e.operand.ty.dtype.itemsize and fits_int32(e.operand)


def narrow_state_decision(shape: SpawnLoop, off: frozenset[str], on: frozenset[str],
                          tg: Target) -> tuple[bool, str]:
    """Whether a lock-step spawn loop ``for v in range(start, stop, +-1)`` keeps its
    counter ``v`` and its bound in 32-bit active-list columns (technique
    ``narrow_state``), and the line ``--plan`` prints.  Only where ``start`` and ``stop``
    fit in 32 bits by their types (:func:`fits_int32`), the step is +1 or -1 and the
    body does not assign ``v``: its values then lie between the two while the loop runs
    (and equal ``stop`` when it ends); the kernel widens them back when it loads them.

    LLVM vectorizes a loop by the widest type it loads or stores: uts's phase B loop,
    its counter and bound int64, ran its SHA-1 (32-bit words) 4 lanes per 128-bit
    register on AVX2; 32-bit state gives 8 lanes per 256-bit register.  Measured (uts
    T3 reexp B = 2^15, CPU seconds, interleaved medians of 7, loaded 2-core Zen 4,
    2026-11-28): numba with real AVX2 (NUMBA_CPU_FEATURES without AVX-512) 0.157 s off,
    0.094 s on (C reexp -march=znver3: 0.083 s), AVX-512 host 1.12x faster on.  C: off by
    default (gcc goes by the narrowest type, see wide_flags_decision; on (counter only)
    vs off 0.083 s both, AVX2 build)."""
    loop = shape.loop
    if not isinstance(loop, ir.For):
        return False, "not applied: the spawn loop is a while loop (no counter)"
    if not (isinstance(loop.step, ir.Const) and int(loop.step.value) in (1, -1)):
        return False, "not applied: the loop's step is not +1 or -1"
    if loop.var in assigned_names(loop.body):
        return False, "not applied: the loop body assigns its counter"
    if not (fits_int32(loop.start) and fits_int32(loop.stop)):
        return False, "not applied: the loop's bounds may not fit in 32 bits"
    if "narrow_state" in off:
        return False, f"switched off ({PLAN_OFF_ENV}=narrow_state); it would apply"
    if not tg.narrow_state and "narrow_state" not in on:
        return False, f"off by default on the {tg.name} back end; it would apply"
    return True, (f"on: the loop's counter {loop.var} and bound in 32-bit active lists "
                  f"(LLVM vectorizes the lane loop by its widest type)")


def wide_flags_decision(steps: list[Step], columns: tuple[Column, ...],
                        local_types: dict[str, ir.Ty], off: frozenset[str], tg: Target
                        ) -> tuple[bool, str]:
    """Whether a spawn loop's phase B lane loop keeps its per-lane flags (the loop
    condition ``go``, the sites' masks and spawn indices, the lane conditions) as 32-bit
    ints instead of bytes (technique ``wide_flags``), and the line ``--plan`` prints.

    gcc vectorizes a loop by its narrowest type: byte flags next to 32-bit values make
    it 32 lanes per iteration, each 32-bit value four 256-bit registers.  A heavy lane
    body (:func:`heavy_loop_body`: uts's SHA-1, about 20 values live at once) then
    spills most of them (uts, AVX2 build: 3,729 stack accesses in the kernel, 1,611
    with 32-bit flags); with 32-bit flags gcc takes 8 lanes per 256-bit vector.  Only
    where every value of the lane loop (the loop state, the frame's columns, the
    task's locals) is 32 bits or wider: a narrower one sets the factor anyway.  Light
    bodies keep byte flags (no spills at 32 lanes; their kernels unchanged)."""
    it = next((st for st in steps if isinstance(st, LoopIterate)), None)
    if it is None or it.lanes <= 1 or it.body is None:
        return False, ""
    if not heavy_loop_body(it.shape.loop.body):
        return False, ("not applied: the spawn loop's body calls no library function or "
                       "reduces (byte flags: a light lane loop does not spill)")
    narrow = sorted({c.render() for c in (*it.state, *columns) if c.bits < 32}
                    | {f"{n}:{ty.dtype.name}" for n, ty in local_types.items()
                       if ty.dtype.itemsize < 4})
    if narrow:
        return False, (f"not applied: values narrower than 32 bits in the lane loop "
                       f"({', '.join(narrow)}) set gcc's vectorization factor anyway")
    if "wide_flags" in off:
        return False, f"switched off ({PLAN_OFF_ENV}=wide_flags); it would apply"
    if not tg.wide_flags:
        return False, f"not on the {tg.name} back end; it would apply"
    return True, ("on: the spawn loop's lane flags are 32-bit ints (gcc vectorizes its "
                  "heavy lane body 8 lanes per 256-bit vector, not 32: fewer spills)")



def prepass_decision(once: bool, fused: bool, split_mode: str, base: Side, ind: Side,
                     off: frozenset[str], tg: Target, in_split: bool = False
                     ) -> tuple[bool, str]:
    """block_in_place: whether a vector split first runs a pass over the
    is-base test (:attr:`Split.prepass`), and the line ``--plan`` prints about it.  A
    block whose threads all agree then skips the split: all base, its base case reads
    the block in place; all inductive, the inductive case reads it in place (a copy
    where Split.inductive_copy says).  The pass stores its masks, so a block whose
    threads are mixed is split on them (the test still evaluated once per thread; the
    pass adds a store, an OR and an AND per 32 threads).  Blocks agree where the is-base test follows the depth (parentheses:
    closed == n holds at depth 2n only) or where whole blocks of a level are inductive.
    Measured: see docs/backends.md (block_in_place)."""
    if once:
        return False, ""  # (uniform_base decides the block with one test)
    if fused:
        return False, ("not applied: leaf inlining as one pass counts the base threads "
                       "instead (only the root block has any)")
    if split_mode != "vector" or base.keep != "copy" or ind.keep != "copy":
        return False, "not applied: the split keeps arena indices (scalar split mode)"
    if in_split:
        return False, ("not applied: the base case is folded in the split (fold_in_split: "
                       "no base copies to save)")
    if "block_in_place" in off:
        return False, f"switched off ({PLAN_OFF_ENV}=block_in_place); it would apply"
    if not tg.block_in_place:
        return False, f"not on the {tg.name} back end; it would apply"
    return True, ("on: a pass over the is-base test first (masks stored); a block whose "
                  "threads all agree is read in place, not split into copies")


def staged_decision(steps: list[Step], columns: tuple[Column, ...], off: frozenset[str],
                    tg: Target) -> tuple[bool, str]:
    """Whether the compaction steps over lane arrays a lane loop has just stored (a spawn
    loop's staged state in both phases, a by-site lane step's staged arguments) move
    16- and 32-bit columns in 256-bit pieces (technique ``staged_steps``), and the line
    ``--plan`` prints.  gcc's lane loops over 32 lanes mixing byte masks with wider
    columns store the wider ones 256 bits at a time; the AVX-512 steps load 512 bits,
    which misses store forwarding when it spans two such stores (minmax's phase A and B
    copies of the state).  Only AVX-512 builds change: AVX2's steps load 256 bits."""
    staged: set[int] = set()
    for st in steps:
        if isinstance(st, LoopPrefix) and st.lanes > 1 or isinstance(st, LoopIterate) \
                and st.lanes > 1:
            staged |= {c.bits for c in st.state}
        elif isinstance(st, LaneSpawns) and st.by_site is not None:
            cols = {c.name: c for c in columns}
            staged |= {cols[c].bits for _, c, src in st.by_site.sources if src == "lane"}
    if not staged & {16, 32}:
        return False, ""
    if "staged_steps" in off:
        return False, f"switched off ({PLAN_OFF_ENV}=staged_steps); it would apply"
    if not tg.staged_steps:
        return False, f"not on the {tg.name} back end; it would apply"
    return True, ("on: 16- and 32-bit lane arrays a lane loop just stored are moved in "
                  "256-bit pieces (AVX-512 builds: store forwarding)")


def site_decision(program: ir.Program, bp: BlockProgram, body: LaneBody, ind: Side,
                  stmts: tuple[ir.Stmt, ...], off: frozenset[str], tg: Target
                  ) -> tuple[SiteBlocks | None, str]:
    """Whether a lane-spawns step writes its children by spawn site (:class:`SiteBlocks`),
    and the line ``--plan`` prints about it.

    Each child block gets the same children either way (the lanes whose k-th spawn a
    site makes), so the schedule's blocks and every statistic are unchanged; only their
    order inside a block differs (by chunk, then site).  That order decides nothing but
    the order in which the children's own code runs, which matters to a float reducer
    (rounding) and to stores into output arrays (which write lands last): with either,
    not applied."""
    spawns = [op for op in body.ops if isinstance(op, MakeSpawn)]
    if not spawns:
        return None, "not applied: no spawn"
    floats = sorted(r.name for r in bp.reducers if r.dtype.kind not in "iub")
    if floats:
        return None, (f"not applied: float reducers ({', '.join(floats)}): the order of "
                      "the children in a block would change their rounding")
    if program.outputs or written_arrays(bp.task.inductive + bp.task.base):
        return None, "not applied: output arrays (the order of the children's stores)"
    if "site_blocks" in off:
        return None, f"switched off ({PLAN_OFF_ENV}=site_blocks); it would apply"
    if not tg.site_blocks:
        return None, f"not on the {tg.name} back end; it would apply"
    assigned = assigned_names(stmts)
    moved = {c.name for c in ind.columns} if ind.keep == "copy" else set()
    block_wide = set(bp.uniform) | set(bp.invariant)
    pairs: list[tuple[int, int]] = []
    sources: list[tuple[int, str, str]] = []
    for op in spawns:
        s = op.site.index
        pairs += [(s, k) for k in sorted(op.site.kset)]
        for name, a in op.args:
            used = used_vars(a)
            if isinstance(a, ir.Var) and a.name == name and name not in assigned \
                    and name in moved:
                sources.append((s, name, "input"))
            elif used <= block_wide and not used & assigned:
                sources.append((s, name, "fill"))
            else:
                sources.append((s, name, "lane"))
    sb = SiteBlocks(tuple(pairs), tuple(sources))
    return sb, ("on: each spawn site compacts its lanes into the child block of their "
                "spawn index, straight from the input columns (no select per child block)")


def site_leaf_decision(program: ir.Program, bp: BlockProgram, inductive: tuple[ir.Stmt, ...],
                       ind: Side, off: frozenset[str], tg: Target
                       ) -> tuple[LeafInline | None, SiteLeaves | None, str]:
    """site_leaves: leaf inlining through the site blocks (:class:`SiteLeaves`), where
    leaf inlining applies but the target leaves it off for the program because several
    spawn sites fill a child block (:func:`leaf_unprofitable`: as one pass each such
    block selects per lane, measured slower) and the children are written by spawn site
    (:func:`site_decision`).  Returns the leaf inlining, the site leaves and the line
    ``--plan`` prints (empty: leaf inlining as one pass is on, or lane spawns are not
    the shape).

    Each lane's children that are base cases run in the lane and are counted as child
    block k's inlined leaves (the driver counts them as tasks and leaves of their level
    and sizes the child blocks with them: every decision and statistic as without
    inlining); only the others are compacted, by site.  When the children's is-base
    test reads only fields every spawn site sets to one block-wide value (the children's
    level-uniform and invariant fields), it is decided once per block: all leaves (the
    children below the last inductive level: none is written, graphcol's 60M
    colourings) or none (the kernel without leaf code).  Measured (graphcol(20), C
    reexp B = 2^11, AVX2 build -march=znver3 on the Zen 4, interleaved medians of 7,
    CPU seconds): 0.126 s off, 0.056 s on (3.3x plain C); docs/backends.md."""
    if not tg.site_leaves:
        return None, None, ""
    leaf, _ = leaf_decision(program, bp, inductive, off, tg)
    if leaf is not None and GUARDED_MEASURED in leaf_decision(
            program, bp, inductive, off | {"default"}, tg)[1]:
        # (a base case reading arrays, guarded in every lane: measured slower; the leaf
        # inlining line says so)
        return None, None, ""
    if leaf is None or bp.max_spawns is None or not if_convertible(inductive):
        # (REVEC_PLAN_OFF=leaf_inline switches off both; the leaf inlining line says why)
        return None, None, ""
    cols = tuple(p.name for p in bp.columns)
    fields = tuple(p.name for p in bp.fields)
    body = if_convert(inductive, cols, fields, leaf)
    by_site, site_note = site_decision(program, bp, body, ind, inductive, off, tg)
    # (numba, lane passes and no site blocks: the children by child block, the leaves
    # counted per child block all the same)
    by_block = tg.lane_passes and not tg.site_blocks
    if by_site is None and not by_block:
        return None, None, f"not applied: no site blocks ({site_note})"
    if "site_leaves" in off:
        return None, None, f"switched off ({PLAN_OFF_ENV}=site_leaves); it would apply"
    # the children's is-base test on block-wide values, the same at every site
    block_wide = set(bp.uniform) | set(bp.invariant)
    assigned = assigned_names(inductive)
    read = used_vars(leaf.is_base)
    spawns = list(spawn_stmts(inductive))
    temps: list[tuple[str, ir.Expr]] = []
    uniform = ir.speculable(leaf.is_base)
    for i, p in enumerate(leaf.params):
        if not uniform or p.name not in read or p.name not in leaf.temps:
            continue  # (an invariant field: the parent's own value)
        args = [sp.args[i] for sp in spawns]
        a = args[0]
        used = used_vars(a)
        if len({show_expr(x) for x in args}) != 1 or not ir.speculable(a) \
                or not used <= block_wide or used & assigned:
            uniform = False
            continue
        temps.append((leaf.temps[p.name], a if a.ty == p.ty else ir.Cast(a.loc, p.ty, a)))
    if uniform:
        sl = SiteLeaves(tuple(temps), rename_expr(leaf.is_base, leaf.temps),
                        if_convert(inductive, cols, fields), by_site is not None)
        return leaf, sl, ("on: the children's is-base reads only values every site sets "
                          "alike per block: decided once per block, all leaves counted "
                          "(nothing compacted) or none (no leaf code)")
    # per lane (each site's leaves counted, the others compacted: SiteLeaves without a
    # test, which the C back end emits) measured slower: parentheses(16) C reexp
    # B = 2^14, AVX2 build, 0.53x of site_leaves off (interleaved medians of 7)
    return None, None, ("not applied: the children's is-base test reads values that vary "
                        "between the lanes or the sites (tested per lane: measured slower, "
                        "parentheses 0.53x)")


def uniform_decision(bp: BlockProgram, mask_reads: tuple[Column, ...], off: frozenset[str],
                     tg: Target) -> tuple[bool, str]:
    """uniform_base: whether the split decides the is-base test once per block, and the
    line ``--plan`` prints about it.  It applies when the test reads no column that
    varies between the threads of a block: only level-uniform fields (every spawn passes
    ``p + c``: blocking.uniform_params; the root block has one thread and a block never
    mixes levels) and invariant ones, so every thread of a block gets the same answer.
    The sides then read the block in place (no split copy): the base side always (it
    spawns nothing), the inductive side unless the children overwrite the block (bfs
    mode), where it reads a copy."""
    if mask_reads:
        return False, ("not applied: the is-base test reads fields that vary between the "
                       f"threads of a block: {_names(mask_reads)}")
    if not tg.uniform_base:
        return False, f"not on the {tg.name} back end"
    if "uniform_base" in off:
        return False, f"switched off ({PLAN_OFF_ENV}=uniform_base); it would apply"
    return True, (f"on: {show_expr(bp.is_base)} reads only level-uniform and invariant "
                  "fields: decided once per block, the block's columns read in place "
                  "(split step: where the inductive side reads a copy)")


def fold_decision(program: ir.Program, bp: BlockProgram, off: frozenset[str], tg: Target,
                  nsum: NarrowSum | None) -> tuple[BaseFold | None, str]:
    """base_fold: the base case as one branch-free loop of masked partials
    (:class:`BaseFold`), and the line ``--plan`` prints about it.  It applies to a base
    case made only of reductions and ifs, whose reducers are integer sums, mins and
    maxes (no bounds), whose conditions and values under a condition are speculable (no
    memory reads or calls: evaluated where the program would not; a top-level one is
    evaluated by every base thread as before, in the same thread, and the base case
    assigns and stores nothing, so their order does not matter), and
    that has a branch to remove (an if, or a min / max); a narrow sum keeps its own
    loop."""
    if nsum is not None:
        return None, ""
    terms: list[FoldTerm] = []

    def walk(stmts: tuple[ir.Stmt, ...], conds: tuple[tuple[ir.Expr, bool], ...]) -> str:
        for s in stmts:
            match s:
                case ir.Reduce(reducer=r, value=v):
                    decl = program.reducers[r]
                    if decl.bound or decl.dtype.kind not in "iu" or decl.op not in (
                            "sum", "min", "max"):
                        return f"reducer {r} is not an integer sum, min or max"
                    if conds and not ir.speculable(v):
                        return "a value under a condition reads memory or calls"
                    terms.append(FoldTerm(r, conds, v))
                case ir.If(cond=c, then=a, orelse=b):
                    if conds and not ir.speculable(c):
                        return "a nested condition reads memory or calls"
                    why = walk(a, conds + ((c, True),)) or walk(b, conds + ((c, False),))
                    if why:
                        return why
                case _:
                    return "the base case has statements other than reductions and ifs"
        return ""

    why = walk(bp.base, ())
    if why:
        return None, f"not applied: {why}"
    if not terms:
        return None, "not applied: no reduction"
    if not any(tm.conds for tm in terms) and all(
            program.reducers[tm.reducer].op == "sum" for tm in terms):
        return None, "not applied: the base case has no branch"
    partials: list[FoldPartial] = []
    for r in dict.fromkeys(tm.reducer for tm in terms):
        decl = program.reducers[r]
        rty = ir.Ty(decl.dtype)
        narrow = {_narrow(tm.value, rty) for tm in terms if tm.reducer == r}
        ty = rty
        if decl.op != "sum" and len(narrow) == 1 and None not in narrow:
            ty = next(x for x in narrow if x is not None)
        partials.append(FoldPartial(r, decl.op, ty))
    by_name = {p.reducer: p for p in partials}
    terms = [dataclasses.replace(tm, value=tm.value.operand)
             if by_name[tm.reducer].ty != ir.Ty(program.reducers[tm.reducer].dtype)
             and isinstance(tm.value, ir.Cast) else tm for tm in terms]
    if not tg.base_fold:
        return None, f"not on the {tg.name} back end"
    if "base_fold" in off:
        return None, f"switched off ({PLAN_OFF_ENV}=base_fold); it would apply"
    fold = BaseFold(tuple(terms), tuple(partials))
    return fold, "on: " + fold.render()


# the narrowest partial narrow_partials uses (gcc's lane loops over 8-bit columns still
# compute in at least 16 bits here), and the fewest threads (32-thread steps in the
# split) a run must cover: shorter runs would widen about as often as they add
NARROW_PARTIAL_BITS = 16
NARROW_PARTIAL_MIN_RUN = 64


def narrow_partials_decision(program: ir.Program, fold: BaseFold | None,
                             reads: tuple[Column, ...], off: frozenset[str], tg: Target
                             ) -> tuple[BaseFold | None, str]:
    """narrow_partials: a folded base case's sum partials of values known to be small
    (constants, or integers widened from a narrower type) kept per run of threads in a
    narrow integer, widened into the reducer's partial once per run, and the line
    ``--plan`` prints about it.  The narrow type is as wide as the widest column the
    loop reads (at least 16 bits; narrower than the reducer), so the lane loop computes
    its partials at the width of its data; a run of R threads with values of magnitude
    at most M keeps R * M < 2^(w-1): the run's sum, computed modulo 2^w and read as a
    signed w-bit number, is exact, and the reducer's total is the same in any order
    (integer sums).  minmax: three counts of leaves (x wins, o wins, draws) in 16-bit
    runs beside its 16-bit boards, instead of three 64-bit sums (see docs/backends.md)."""
    if fold is None:
        return fold, ""
    sums = [p for p in fold.partials if p.op == "sum"]
    if not sums:
        return fold, "not applied: no sum among the folded reductions"
    width = max([NARROW_PARTIAL_BITS] + [8 * c.ty.dtype.itemsize for c in reads
                                         if c.ty.kind != "b"])
    runs: dict[str, tuple[ir.Ty, int]] = {}
    why = ""
    for p in sums:
        if 8 * p.ty.dtype.itemsize <= width:
            why = why or f"{p.reducer}'s partial is no wider than the columns ({width} bits)"
            continue
        most = [_magnitude(tm.value) for tm in fold.terms if tm.reducer == p.reducer]
        if any(m is None for m in most):
            why = why or f"a value of {p.reducer} is not known to be small"
            continue
        bound = max(1, *(m for m in most if m is not None))
        run = ((1 << (width - 1)) - 1) // bound
        if run < NARROW_PARTIAL_MIN_RUN:
            why = why or f"the values of {p.reducer} are too large for {width}-bit runs"
            continue
        runs[p.reducer] = (ir.Ty(np.dtype(f"int{width}")), run)
    if not runs:
        return fold, f"not applied: {why}"
    if not tg.narrow_partials:
        return fold, f"not on the {tg.name} back end"
    if "narrow_partials" in off:
        return fold, f"switched off ({PLAN_OFF_ENV}=narrow_partials); it would apply"
    run = min(r for _, r in runs.values())
    partials = tuple(dataclasses.replace(p, run_ty=runs[p.reducer][0])
                     if p.reducer in runs else p for p in fold.partials)
    names = ", ".join(f"{r} ({t.dtype.name})" for r, (t, _) in runs.items())
    return (dataclasses.replace(fold, partials=partials, run=run),
            f"on: sums {names} kept per run of {run} threads, widened once per run")


def fold_in_split_decision(bp: BlockProgram, fold: BaseFold | None, other_split: bool,
                           off: frozenset[str], tg: Target) -> tuple[BaseFold | None, str]:
    """fold_in_split: the folded base case evaluated in the split's lane loop for every
    thread of the block, each update masked by the is-base test, and the line ``--plan``
    prints about it.  The split then copies no base thread and no base loop runs (the
    base threads are still counted).  Its sums are the same (integer sums, any order).
    It evaluates the fold's conditions and values for the inductive threads too: each
    must be speculable (no memory reads, no calls) or an expression the is-base test
    evaluates for every thread anyway (minmax's ``has_line(...)``, the first operand of
    its ``or``); gcc computes that once per lane.  Sums only (a min / max would need a
    per-lane flag), each with a narrow run type (narrow_partials: 64-bit per-lane
    partials cost what the copies save); the vector split only (not uniform_base's,
    leaf inlining's count or the scalar split's index lists)."""
    if fold is None:
        return fold, ""
    if other_split:
        return fold, "not applied: the block is not split by the vector split"
    if any(p.op != "sum" for p in fold.partials):
        return fold, "not applied: a folded reduction is a min or max"
    if any(p.run_ty is None for p in fold.partials):
        # 64-bit per-lane partials cost what the base copies save (minmax, AVX2 build,
        # narrow_partials off: 0.099 s in the split, 0.097 s as a base loop)
        return fold, ("not applied: a sum has no narrow run type (narrow_partials): "
                      "64-bit per-lane partials in the split measured no faster")
    always = {(show_expr(e), e.ty) for e in _always_evaluated(bp.is_base)}
    for tm in fold.terms:
        for e in (tm.value, *(c for c, _ in tm.conds)):
            if not ir.speculable(e) and (show_expr(e), e.ty) not in always:
                return fold, ("not applied: a condition or value of the base case reads "
                              "memory or calls where the is-base test does not")
    if not tg.fold_in_split:
        return fold, f"not on the {tg.name} back end"
    if "fold_in_split" in off:
        return fold, f"switched off ({PLAN_OFF_ENV}=fold_in_split); it would apply"
    return (dataclasses.replace(fold, in_split=True),
            "on: the base case's sums evaluated in the split for every thread, masked by "
            "the is-base test (per-lane partials); no base copies, no base loop")


def _always_evaluated(e: ir.Expr) -> list[ir.Expr]:
    """``e`` and the sub-expressions evaluating ``e`` always evaluates (an ``and`` /
    ``or``'s first operand, a conditional expression's condition, every operand of the
    other operators and calls)."""
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        out.append(x)
        match x:
            case ir.BoolOp(left=a):
                stack.append(a)
            case ir.IfExp(cond=c):
                stack.append(c)
            case ir.BinOp() | ir.Compare() | ir.UnaryOp() | ir.Cast() | ir.Call() | \
                    ir.LibCall():
                for v in vars(x).values():
                    stack += [y for y in (v if isinstance(v, tuple) else (v,))
                              if isinstance(y, ir.Expr)]
    return out


def _magnitude(v: ir.Expr) -> int | None:
    """A bound on the magnitude of integer expression ``v`` (its value as its own type
    reads it, or for a widening cast as the narrower operand's type reads it: the same
    residue modulo the reducer's width), where it is a constant or a widened narrower
    integer (None: not known)."""
    if isinstance(v, ir.Const):
        return abs(int(v.value)) if isinstance(v.value, int | bool | np.integer) else None
    if not isinstance(v, ir.Cast) or v.ty.kind not in "iu" or v.operand.ty.kind not in "iub":
        return None
    src = v.operand.ty
    inner = _magnitude(v.operand)
    if src.kind == "b":
        return 1 if inner is None else min(1, inner)
    if src.dtype.itemsize >= v.ty.dtype.itemsize and src != v.ty:
        return None  # a narrowing cast or a change of sign: the operand's bound may not hold
    info = np.iinfo(src.dtype)
    whole = max(abs(int(info.min)), int(info.max))
    return whole if inner is None else min(whole, inner)


def _narrow(v: ir.Expr, rty: ir.Ty) -> ir.Ty | None:
    """The narrower integer type a min / max value widens from, where the widening keeps
    the order (same signedness, or unsigned into signed): its partial may stay narrow."""
    if not isinstance(v, ir.Cast):
        return None
    src = v.operand.ty
    if src.kind not in "iu" or rty.kind not in "iu" \
            or src.dtype.itemsize >= rty.dtype.itemsize:
        return None
    if src.kind == rty.kind or (src.kind == "u" and rty.kind == "i"):
        return src
    return None


def leaf_decision(program: ir.Program, bp: BlockProgram, inductive: tuple[ir.Stmt, ...],
                  off: frozenset[str], tg: Target, level: bool = False
                  ) -> tuple[LeafInline | None, str]:
    """Whether the kernel inlines leaves, and the line ``--plan`` prints about it.

    At every spawn site the child's is-base test runs on the child's arguments; a child
    that is a base case runs its base case (its reductions, and so a return-value
    task's result: the hidden result reducer receives the child's weighted value, see
    revec/transforms/returns.py) in the parent's lane, keeps its spawn index and is
    counted as a task and a leaf of the child's level instead of written.  It applies
    when the inductive case is lane code (if-convertible, a static number of child
    blocks), the base case is if-convertible without a condition's limits (assignments,
    reductions and ifs, everything speculable: no stores, calls, array reads or
    returns) and, at a spawn under a condition, the is-base test is speculable too;
    not with bounds (a leaf run early would read the bound at another time).  ``level``:
    the whole child level is inlined instead (:func:`level_decision` applies): nothing is
    speculated, so the base case need only be assignments, reductions and ifs (it may
    read arrays and call).  ``off``
    holds ``leaf_inline`` (switched off), ``target`` (the target's default is off and
    nothing switched it on) or ``default`` (the target's default is on where
    :func:`leaf_unprofitable` finds nothing against it, and nothing switched it on)."""
    t = bp.task
    if bp.max_spawns is None:
        return None, "not applied: the number of child blocks grows at run time"
    if not any(True for _ in spawn_stmts(inductive)):
        return None, "not applied: no spawn"
    if not if_convertible(inductive):
        return None, ("not applied: the inductive case is not lane code (loops, returns "
                      "or non-speculable code under a condition)")
    if any(r.bound for r in bp.reducers):
        return None, "not applied: bounds (a leaf run early would read the bound early)"
    base = strip_final_return(bp.base)
    if contains_return(base) or not if_convertible(base, top=False):
        # inlined in lane code, the base case runs under the lane condition "the child
        # is a leaf", evaluated in every lane: its array reads then take guarded indices
        # (guard_reads); a whole level inlined runs it only where the program does
        if not _plain(base) or not (level or _lane_safe(guard_reads(base, program.arrays))):
            return None, ("not applied: the base case is not side-effect-free speculable "
                          "code (stores, calls, loops or returns)")
        guarded = not level
        if guarded:
            base = guard_reads(base, program.arrays)
    else:
        guarded = False
    if (used_vars(base) - assigned_names(base)) & set(t.locals) \
            or used_vars(bp.is_base) & set(t.locals):
        return None, "not applied: the base case or the is-base test reads a task local"
    if not straight_spawns(inductive) and not ir.speculable(bp.is_base):
        return None, ("not applied: a spawn under a condition and an is-base test that "
                      "reads memory or calls")
    taken = set(t.locals) | {p.name for p in t.params}
    temps: dict[str, str] = {}  # the child's fields its test or base case reads
    read = used_vars(bp.is_base) | used_vars(base)
    for p in t.params:
        if p.name not in bp.invariant and p.name in read:
            temps[p.name] = ir.fresh_name(f"_lf_{p.name}", taken)
            taken.add(temps[p.name])
    names: dict[str, str] = {}
    for x in sorted(assigned_names(base)):
        if x in temps:
            continue  # (a parameter the base case assigns: its temporary)
        names[x] = ir.fresh_name(f"_lf_{x}", taken)
        taken.add(names[x])
    if "leaf_inline" in off:
        return None, (f"switched off ({PLAN_OFF_ENV}=leaf_inline, or a back end without "
                      "it); it would apply")
    if "target" in off:
        return None, (f"off by default on the {tg.name} back end (measured: mixed); "
                      f"{PLAN_ON_ENV}=leaf_inline switches it on; it would apply")
    if "default" in off:
        why = GUARDED_MEASURED if guarded else leaf_unprofitable(program, bp, inductive)
        if why:
            return None, (f"off by default for this program on the {tg.name} back end: "
                          f"{why}; {PLAN_ON_ENV}=leaf_inline switches it on; it would apply")
    leaf = LeafInline(t.params, bp.is_base, base, temps, names)
    if level:
        return leaf, (f"on, per level (leaf_level): the children's is-base "
                      f"({show_expr(bp.is_base)}) reads only level-uniform and invariant "
                      "fields; a block whose children are all leaves runs their base cases "
                      "in its threads' loop and counts them as tasks and leaves of their "
                      "level, no child written")
    return leaf, (f"on: at each spawn the child's is-base ({show_expr(bp.is_base)}) on its "
                  "arguments; a leaf runs its base case in the parent's lane and is "
                  "counted as a task and leaf of its level, not written")


# lane-code leaf inlining of a base case that reads arrays (its reads guarded in every
# lane, guard_reads): measured slower (C reexp, AVX2 build, medians of 5-7 interleaved,
# loaded machine): knapsack with leaf_level off 0.52 s vs 0.087 s without inlining
# (B = 2^11), findmax 0.20 s vs 0.14 s (B = 2^12)
GUARDED_MEASURED = ("the base case reads arrays (guarded reads in every lane: measured "
                    "slower, knapsack 6x, findmax 1.4x)")


def _plain(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Assignments, reductions and ifs only (what a leaf's base case inlined as it is
    may hold: no stores, returns, loops or statement calls)."""
    for s in stmts:
        match s:
            case ir.Assign() | ir.Reduce():
                pass
            case ir.If(then=a, orelse=b):
                if not (_plain(a) and _plain(b)):
                    return False
            case _:
                return False
    return True


def guard_reads(stmts: tuple[ir.Stmt, ...], arrays: dict[str, np.ndarray]
                ) -> tuple[ir.Stmt, ...]:
    """A base case inlined into lane code runs in every lane, its child a leaf or not
    (its results kept only where it is): its array reads take guarded indices, each
    ``i`` as ``i if -n <= i < n else 0`` (``n``: the dimension's length), which read
    the same element wherever the program reads one (a valid index) and never outside
    the array elsewhere.  Assignments, reductions and ifs (:func:`_plain`)."""
    def guard(e: ir.Expr) -> ir.Expr:
        done: dict[int, ir.Expr] = {}
        stack: list[tuple[ir.Expr, bool]] = [(e, False)]
        while stack:
            x, ready = stack.pop()
            if id(x) in done:
                continue
            kids = [v for f in dataclasses.fields(x)
                    for v in ((getattr(x, f.name),) if isinstance(getattr(x, f.name), ir.Expr)
                              else getattr(x, f.name) if isinstance(getattr(x, f.name), tuple)
                              else ()) if isinstance(v, ir.Expr)]
            if not ready:
                stack.append((x, True))
                stack += [(k, False) for k in kids if id(k) not in done]
                continue
            changes: dict[str, object] = {}
            for f in dataclasses.fields(x):
                v = getattr(x, f.name)
                if isinstance(v, ir.Expr):
                    changes[f.name] = done[id(v)]
                elif isinstance(v, tuple) and v and all(isinstance(y, ir.Expr) for y in v):
                    changes[f.name] = tuple(done[id(y)] for y in v)
            y = dataclasses.replace(x, **changes) if changes else x  # type: ignore[arg-type]
            if isinstance(y, ir.ArrayRef):
                shape = arrays[y.array].shape
                y = dataclasses.replace(y, indices=tuple(
                    _guarded(i, int(shape[d])) for d, i in enumerate(y.indices)))
            done[id(x)] = y
        return done[id(e)]

    out: list[ir.Stmt] = []
    for s in stmts:
        match s:
            case ir.Assign(value=v):
                out.append(dataclasses.replace(s, value=guard(v)))
            case ir.Reduce(value=v):
                out.append(dataclasses.replace(s, value=guard(v)))
            case ir.If(cond=c, then=a, orelse=b):
                out.append(dataclasses.replace(s, cond=guard(c), then=guard_reads(a, arrays),
                                               orelse=guard_reads(b, arrays)))
            case _:
                raise AssertionError(f"guard_reads: {type(s).__name__}")
    return tuple(out)


def _guarded(i: ir.Expr, n: int) -> ir.Expr:
    x = i if i.ty.dtype == np.int64 else ir.Cast(i.loc, INT64, i)
    ok = ir.BoolOp(i.loc, ir.BOOL, "and",
                   ir.Compare(i.loc, ir.BOOL, ">=", x, ir.Const(i.loc, INT64, -n)),
                   ir.Compare(i.loc, ir.BOOL, "<", x, ir.Const(i.loc, INT64, n)))
    return ir.IfExp(i.loc, INT64, ok, x, ir.Const(i.loc, INT64, 0))


def _guarded_index(i: ir.Expr) -> bool:
    match i:
        case ir.IfExp(cond=ir.BoolOp(op="and", left=ir.Compare(op=">=", left=a),
                                     right=ir.Compare(op="<", left=b)),
                      then=c, orelse=ir.Const()) if a == b == c:
            return True
    return False


def _speculable_guarded(e: ir.Expr) -> bool:
    """:func:`ir.speculable`, array reads with guarded indices (:func:`guard_reads`)
    allowed."""
    stack = [e]
    while stack:
        x = stack.pop()
        match x:
            case ir.ArrayRef(indices=idx):
                if not all(_guarded_index(i) for i in idx):
                    return False
            case ir.Call() | ir.LibCall() | ir.Pick():
                return False
        stack += [v for f in dataclasses.fields(x)
                  for v in ((getattr(x, f.name),) if isinstance(getattr(x, f.name), ir.Expr)
                            else getattr(x, f.name) if isinstance(getattr(x, f.name), tuple)
                            else ()) if isinstance(v, ir.Expr)]
    return True


def _lane_safe(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Every value and condition of a base case (:func:`_plain`) speculable once its
    reads are guarded."""
    for s in stmts:
        match s:
            case ir.Assign(value=v) | ir.Reduce(value=v):
                if not _speculable_guarded(v):
                    return False
            case ir.If(cond=c, then=a, orelse=b):
                if not (_speculable_guarded(c) and _lane_safe(a) and _lane_safe(b)):
                    return False
            case _:
                return False
    return True


def substitute_expr(e: ir.Expr, env: dict[str, ir.Expr]) -> ir.Expr:
    """``e`` with the variables of ``env`` replaced by expressions (iterative, children
    first: a 1,000-term expression nests deeper than Python's recursion limit)."""
    done: dict[int, ir.Expr] = {}
    stack: list[tuple[ir.Expr, bool]] = [(e, False)]
    while stack:
        x, ready = stack.pop()
        if id(x) in done:
            continue
        if isinstance(x, ir.Var):
            done[id(x)] = env.get(x.name, x)
            continue
        singles = {f.name: v for f in dataclasses.fields(x)
                   if isinstance(v := getattr(x, f.name), ir.Expr)}
        tuples = {f.name: v for f in dataclasses.fields(x)
                  if isinstance(v := getattr(x, f.name), tuple) and v
                  and all(isinstance(y, ir.Expr) for y in v)}
        kids = list(singles.values()) + [y for v in tuples.values() for y in v]
        if not ready:
            stack.append((x, True))
            stack += [(k, False) for k in kids if id(k) not in done]
            continue
        changes: dict[str, object] = {k: done[id(v)] for k, v in singles.items()}
        changes |= {k: tuple(done[id(y)] for y in v) for k, v in tuples.items()}
        done[id(x)] = dataclasses.replace(x, **changes) if changes else x  # type: ignore[arg-type]
    return done[id(e)]


def level_decision(program: ir.Program, bp: BlockProgram, inductive: tuple[ir.Stmt, ...],
                   off: frozenset[str], tg: Target
                   ) -> tuple[tuple[ir.Expr, ...] | None, str]:
    """leaf_level (:class:`LeafLevel`): the children's is-base test per spawn site on the
    children's arguments when the whole child level can be inlined, and the line
    ``--plan`` prints (the tests of sites that pass the fields alike once).  It applies
    with straight spawns (every inductive thread makes
    every spawn, at the top level), an is-base test that reads only level-uniform and
    invariant fields (whose arguments at every spawn are block-wide: the test is one
    value per site and block, so a block's children are all leaves or none of a site's
    are), a base case of assignments, reductions and ifs, and integer reducers (the
    children's reductions run in another order) without bounds.  Then no base case is
    speculated (each runs where the program runs it), so it may read arrays.
    Measured (C reexp, AVX2 build): see :data:`LEVEL_MEASURED`."""
    spawns = [s for s in inductive if isinstance(s, ir.Spawn)]
    if bp.max_spawns is None or not spawns or not straight_spawns(inductive):
        return None, ""
    block_wide = set(bp.uniform) | set(bp.invariant)
    if not used_vars(bp.is_base) <= block_wide:
        return None, ""
    if any(r.bound or program.reducers[r.name].dtype.kind not in "iub" for r in bp.reducers):
        return None, ("not applied: a float reducer or a bound (the children's reductions "
                      "would run in another order, or early)")
    if not _plain(strip_final_return(bp.base)):
        return None, ("not applied: the base case has statements other than assignments, "
                      "reductions and ifs")
    assigned = assigned_names(inductive)
    read = used_vars(bp.is_base)
    tests: list[ir.Expr] = []
    for s in spawns:
        env: dict[str, ir.Expr] = {}
        for p, a in zip(bp.task.params, s.args):
            if p.name in read and p.name not in bp.invariant:
                used = used_vars(a)
                if not used <= block_wide or used & assigned or not ir.speculable(a):
                    return None, (f"not applied: the argument of {p.name} is not one value "
                                  "per block")
                env[p.name] = a if a.ty == p.ty else ir.Cast(a.loc, p.ty, a)
        test = substitute_expr(bp.is_base, env)
        if all(show_expr(t) != show_expr(test) for t in tests):  # (sites passing alike)
            tests.append(test)
    if "leaf_level" in off:
        return None, f"switched off ({PLAN_OFF_ENV}=leaf_level); it would apply"
    if not tg.leaf_level:
        return None, f"not on the {tg.name} back end; it would apply"
    return tuple(tests), ("on: " + " and ".join(f"({show_expr(t)})" for t in tests)
                          + " decided once per block: all its children leaves (inlined, "
                          "no child block written) or spawned as without inlining; "
                          + (LEVEL_MEASURED_NUMBA if tg.name == "numba" else LEVEL_MEASURED))


# what leaf_level measured where it applies (the note ``--plan`` prints): knapsack(26) C
# reexp against plain C, medians of 7 interleaved, 2-core Zen 4 at load 8-9, AVX2 build
# B = 2^10..2^14: 4.82-5.33x with it, 2.77-3.10x without; native build 5.60-5.73x
# against 3.45-3.65x (docs/backends.md)
LEVEL_MEASURED = ("measured faster (knapsack C reexp: 4.8-5.3x plain C with it, 2.8-3.1x "
                  "without, AVX2 build)")
# the numba kernels' (NumbaModuleGen.leaf_level): knapsack(26) numba reexp B = 2^12, CPU
# seconds, medians of 7 interleaved, load 7: native 0.0218 s with it, 0.0360 s without;
# AVX2 build 0.0221 s against 0.0372 s (docs/backends.md)
LEVEL_MEASURED_NUMBA = ("measured faster (knapsack numba reexp: 0.022 s with it, 0.036-0.037 "
                        "s without, native and AVX2 build)")


def leaf_unprofitable(program: ir.Program, bp: BlockProgram,
                      inductive: tuple[ir.Stmt, ...]) -> str:
    """Why a target whose default is leaf inlining (C, as one pass) leaves it off for
    this program ("" when nothing): a child block that several spawn sites can fill
    (its lanes select the site per lane, then every kept child is staged again: measured
    on the AVX-512 build parentheses(16) 0.41x and graphcol(20) 0.61x of inlining off,
    while fib(40) and binomial(30, 13), one site per child block, ran 1.21x and 1.24x
    faster; C reexp, best of B = 2^13..2^15, medians interleaved in one process; on the
    AVX2 build fib 1.57x, binomial 1.16x, graphcol 1.02x, parentheses 0.65x: the table in
    docs/backends.md), or a float reducer (inlined leaves reduce in their parents' lanes,
    another order of a float sum)."""
    floats = sorted(r.name for r in bp.reducers
                    if program.reducers[r.name].dtype.kind not in "iub")
    if floats:
        return (f"the float reducer {floats[0]} (inlined leaves would sum it in another "
                "order)")
    body = if_convert(inductive, tuple(p.name for p in bp.columns),
                      tuple(p.name for p in bp.fields))
    for k in sorted(set().union(*(s.kset for s in body.sites))):
        fill = [s for s in body.sites if k in s.kset]
        if len(fill) > 1 or fill[0].kset != frozenset({k}):
            return (f"child block {k} can be filled by several spawn sites (a select per "
                    "lane; measured slower)")
    return ""


def scratch_of(tg: Target, steps: list[Step]) -> tuple[Scratch, ...]:
    """The kernel's arrays besides the frame columns, from its steps: the split's copies
    (``b_``/``q_``) or index lists (``bi``/``qi``), the lock-step loop's two active lists
    per state column, and with lane passes the mask bytes and the passes' and fills'
    columns."""
    out: list[Scratch] = []
    for step in steps:
        match step:
            case Split(base=base, inductive=ind, once=once, inductive_copy=copy):
                for side, tag in ((base, "b"), (ind, "q")):
                    if once and (side is base or copy == "never"):
                        continue  # (read in place: a base block spawns nothing)
                    if side.keep == "index" and not once:  # (once: a copy, memcpy)
                        out.append(Scratch(f"{tag}i", "index", INT64, 1, 0,
                                           f"the {side.side} threads' arena indices"))
                    else:
                        out += [Scratch(f"{tag}_{c.name}", "copy", c.ty, 1, 0,
                                        f"the {side.side} threads' {c.name}")
                                for c in side.columns]
    loop = next((st for st in steps if isinstance(st, LoopPrefix)), None)
    if loop is not None:
        for c in loop.state:
            out += [Scratch(f"sa_{c.name}", "active", c.ty, 1, LANES, "active list"),
                    Scratch(f"sb_{c.name}", "active", c.ty, 1, LANES,
                            "active list (the next one)")]
    # (no mask bytes where nothing stores them: a split decided once per block
    # (uniform_base) and no lock-step loop)
    masks = any(isinstance(st, Split) and not st.once or isinstance(st, LoopPrefix)
                for st in steps)
    if tg.lane_passes:
        if masks:
            out.append(Scratch("mb", "mask", BYTE, 1, LANES,
                               "mask bytes (split, active lists)"))
        lane = next((st for st in steps if isinstance(st, LaneSpawns)), None)
        if lane is not None:
            if not lane.buffers:  # (buffers: the passes' arrays on the stack)
                out += [Scratch(p.name, "pass", BYTE if p.ty is None else p.ty, 1, LANES,
                                f"pass: site {p.index}'s masks" if p.kind == "mask" else
                                f"pass: site {p.index}'s inlined leaves" if p.kind == "leaf"
                                else f"pass: child block {p.index}'s {p.column}")
                        for p in lane.passes]
            out += [Scratch(f.name, "fill", f.ty, 0, LANES, "fill") for f in lane.fills]
    return tuple(out)


def lane_passes(bp: BlockProgram, body: LaneBody, blocks: tuple[int, ...], ind: Side,
                stmts: tuple[ir.Stmt, ...]
                ) -> tuple[tuple[LanePass, ...], tuple[LaneFill, ...],
                           tuple[tuple[int, str, str], ...]]:
    """The passes of a lane-spawns step for targets with lane passes: a mask pass per
    conditional spawn site, and per child block k and column the source of the
    children's values: the inductive threads' copy of a field every site that can make
    a lane's k-th spawn passes on unchanged (and nothing assigns), a fill for a value
    every lane shares, else a value pass storing the argument of the site that makes
    the lane's k-th spawn."""
    spawns = [op for op in body.ops if isinstance(op, MakeSpawn)]
    assigned = assigned_names(stmts)
    moved = {c.name for c in ind.columns} if ind.keep == "copy" else set()
    block_wide = set(bp.uniform) | set(bp.invariant)
    passes = [LanePass("mask", f"ms{op.site.index}", op.site.index, None, None)
              for op in spawns if op.site.conditional]
    passes += [LanePass("leaf", f"ml{op.site.index}", op.site.index, None, None)
               for op in spawns if op.leaf is not None]
    fills: dict[str, LaneFill] = {}  # the value's text -> its fill
    sources: list[tuple[int, str, str]] = []
    for k in blocks:
        cand = [dict(op.args) for op in spawns if k in op.site.kset]
        for p in bp.columns:
            args = [a[p.name] for a in cand]
            plain = all(isinstance(a, ir.Var) and a.name == p.name for a in args)
            texts = {show_expr(a) for a in args}
            used = set().union(*(used_vars(a) for a in args))
            if plain and p.name not in assigned and p.name in moved:
                sources.append((k, p.name, f"q_{p.name}"))
            elif len(texts) == 1 and used <= block_wide and not used & assigned:
                text = texts.pop()
                if text not in fills:
                    fills[text] = LaneFill(f"fill{len(fills)}", args[0], p.ty)
                sources.append((k, p.name, fills[text].name))
            else:
                name = f"ak{k}_{p.name}"
                sources.append((k, p.name, name))
                passes.append(LanePass("value", name, k, p.name, p.ty))
    return tuple(passes), tuple(fills.values()), tuple(sources)


def _params(bp: BlockProgram, cols: tuple[Column, ...]) -> tuple[ir.Param, ...]:
    names = {c.name for c in cols}
    return tuple(p for p in bp.columns if p.name in names)


def narrow_sum(program: ir.Program, bp: BlockProgram, base: Side) -> NarrowSum | None:
    """A base case that only sums a narrow integer column into a 64-bit sum reducer
    (fib's ``reduce(count, n)``): summed in 32-bit runs of up to 2^20 threads, which
    cannot overflow and vectorizes 4x wider than widening every element to 64 bits."""
    match bp.base:
        case (ir.Reduce(reducer=r, value=ir.Cast(operand=ir.Var(name=name) as v, ty=ty)),):
            pass
        case _:
            return None
    decl = program.reducers[r]
    if decl.op != "sum" or ty.kind != "i" or ty.dtype.itemsize != 8 \
            or v.ty.kind not in "iu" or v.ty.dtype.itemsize > 2 \
            or base.keep != "copy" or name not in {c.name for c in base.columns}:
        return None  # (a level-uniform field has no base column)
    return NarrowSum(name, r)


def column_loops_decision(bp: BlockProgram, side: Side, off: frozenset[str], tg: Target
                          ) -> tuple[bool, str]:
    """column_loops: whether a straight inductive case runs as one loop per frame column
    (each storing that column of every spawn), and the line ``--plan`` prints.  Only a
    body of spawns alone (no reducer, store or local a loop per column would run more than
    once) whose threads are read from dense copies or in place (not through arena
    indices: a later column's loop would read a column an earlier loop wrote)."""
    stmts = bp.inductive
    while stmts and isinstance(stmts[-1], ir.Return):
        stmts = stmts[:-1]
    if not stmts or not all(isinstance(s, ir.Spawn) for s in stmts):
        return False, "not applied: the inductive case is not its spawns alone"
    if side.keep == "index":
        return False, "not applied: the inductive threads are read through arena indices"
    if "column_loops" in off:
        return False, f"switched off ({PLAN_OFF_ENV}=column_loops); it would apply"
    if not tg.column_loops:
        return False, f"not applied: the {tg.name} back end's default (off)"
    return True, (f"on: {len(stmts)} spawns, each frame column's children written by a "
                  "loop of its own (knapsack numba reexp B = 4096, CPU time of the run: "
                  "0.0196-0.0199 s -> 0.0174-0.0178 s, AVX-512 build)")


def sentinel_decision(fold: BaseFold | None, off: frozenset[str], tg: Target
                      ) -> tuple[bool, str]:
    """sentinel_partials: whether leaf_level's threads' loop keeps its min / max partials
    without the per-lane flag saying whether any child reduced into them (a partial left
    at its identity is then ambiguous, and only then the loop runs again with the flags),
    and the line ``--plan`` prints."""
    if fold is None or not any(
            tm.conds and next(p for p in fold.partials if p.reducer == tm.reducer).op != "sum"
            for tm in fold.terms):
        return False, "not applied: no conditional min / max among the inlined base cases"
    if "sentinel_partials" in off:
        return False, f"switched off ({PLAN_OFF_ENV}=sentinel_partials); it would apply"
    if not tg.sentinel_partials:
        return False, f"not applied: the {tg.name} back end's default (off)"
    return True, ("on: the inlined leaves' min / max partials without per-lane flags; one "
                  "that ends at its identity runs the threads' loop again with them")

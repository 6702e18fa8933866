"""Types from the root call: a Python task's unannotated parameters take the types of
the root call's values, as numba types them (a Python int is int64, a float float64, a
list of ints an int64 array; command-line text: ``40`` an int, ``2.5`` a float, a file
an array), and are then narrowed by the value-range analysis of the recursion
(:mod:`revec.frontend.python.ranges`): ``fib(n)`` called with 40 only ever sees ``n`` in
[0, 40], so ``n`` is an int8 (32 lanes of AVX2 instead of 4).

Narrowing never changes a result: the program is checked again with the narrow types,
and kept only if every value it computes provably equals the root-typed program's
(:func:`same_values`: the two checked programs side by side, node by node; where
their types differ, both nodes' values are exact, i.e. no wraparound, by the
analysis, or congruent modulo ``2**m`` and in one interval of ``2**m`` integers; a
value whose every use sees only its low ``k`` bits need only be congruent modulo
``2**k``, so a parameter may be held in an unsigned type that wraps: nqueens'
diagonal ``(d1 | bit) << 1``, only ever read through ``& ((1 << n) - 1)``, in a
uint16).  Otherwise the root call's types stay.  Annotations always win: only
unannotated parameters are typed here.
"""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict
from typing import Any

import numpy as np

from revec import ir
from revec.errors import RevecError
from revec.frontend.python.ranges import (
    ALL_BITS,
    Interval,
    Ranges,
    analyse,
    bitwise,
    demanded,
    narrow_candidates,
    within,
)
from revec.frontend.python.signature import RootArray, TypeSpec, value_spec

_CACHE: OrderedDict[tuple[Any, ...], tuple[ir.Program, ir.Program]] = OrderedDict()
_CACHE_MAX = 32


def text_spec(text: str) -> TypeSpec:
    """The type command-line text gives an unannotated parameter: an integer
    (``40``, ``0x10``) int64, a number (``2.5``, ``1e3``) float64, ``true``/``false``
    bool; anything else names an array file (its values' type)."""
    try:
        value = int(text, 0)
        return np.dtype(np.uint64 if value > np.iinfo(np.int64).max else np.int64)
    except ValueError:
        pass
    try:
        float(text)
        return np.dtype(np.float64)
    except ValueError:
        pass
    if text.strip().lower() in ("true", "false"):
        return np.dtype(np.bool_)
    from revec.frontend.inputs import load_array_file

    arr = load_array_file(text, "argument")
    if arr.ndim == 2 and arr.shape[0] == 1 and not text.endswith(".npy"):
        arr = arr.reshape(-1)  # one line of numbers: a list (as Python's [10, 20, 30])
    spec = value_spec(arr)
    assert spec is not None
    return spec


def _positions(t: ir.TaskDef) -> list[str]:
    """The task's parameter names in the caller's argument order."""
    taken = {ap.position: ap.name for ap in t.arrays} | {
        pa.position: pa.name for pa in t.private}
    scalars = iter(p.name for p in t.user_params)
    return [taken[i] if i in taken else next(scalars) for i in range(t.arity)]


def root_typed(program: ir.Program, task: str, args: tuple[Any, ...] | list[Any],
               narrow: bool = True) -> ir.Program:
    """``program`` checked with its task's unannotated parameters typed by the root
    call's ``args`` (and narrowed when ``narrow``, by the value-range analysis of the
    recursion, where that provably changes no result).  The same program object is
    returned for the same types, so compiled code is reused."""
    t = program.tasks.get(task)
    untyped = program.untyped.get(task)
    if t is None or not untyped or program.specialize is None:
        return program
    names = _positions(t)
    specs: dict[str, TypeSpec] = dict(untyped)
    for name, value in zip(names, args):
        if name not in untyped:
            continue
        spec = text_spec(value) if isinstance(value, str) else value_spec(value)
        if spec is None:
            raise RevecError(f"argument '{name}': {value!r} has no type revec supports (the "
                             "unannotated parameter takes its root value's type: an int, a "
                             "float, a bool, a NumPy scalar, or a list, tuple or NumPy "
                             "array of numbers)")
        specs[name] = spec
    ref = _checked(program, task, specs, _sizes(t, names, args))
    if not narrow:
        return ref
    try:
        return _narrowed(ref, task, specs, args)
    except RecursionError:  # a program too deep for the analysis: not narrowed
        return ref


def _sizes(t: ir.TaskDef, names: list[str], args: tuple[Any, ...] | list[Any]
           ) -> dict[tuple[str, str], int] | None:
    """The capacities the root call gives the task's private arrays bounded by a
    parameter (``len(board) == n``: n's root value), where one differs from the
    program's (the program is checked with them before its values are analysed: the
    binding would check it again with them, without the narrowing); None otherwise."""
    from revec.frontend.inputs import MAX_CAPACITY

    given = dict(zip(names, args))
    defaults = {p.name: p.default for p in t.user_params if p.has_default}
    sizes: dict[tuple[str, str], int] = {}
    for pa in t.private:
        if pa.bound is None:
            continue
        raw = given.get(pa.bound, defaults.get(pa.bound))
        if raw is None:
            return None
        try:
            value = int(raw, 0) if isinstance(raw, str) else int(raw)
        except (TypeError, ValueError):
            return None  # (the binding says why)
        if not 0 <= value <= MAX_CAPACITY:
            return None
        sizes[(t.name, pa.bound)] = value
    if all(pa.capacity == max(sizes.get((t.name, pa.bound or ""), pa.capacity), 1)
           for pa in t.private):
        return None
    return sizes


def _checked(program: ir.Program, task: str, specs: dict[str, TypeSpec],
             sizes: dict[tuple[str, str], int] | None = None) -> ir.Program:
    if specs == program.untyped.get(task) and sizes is None:
        return program
    key = (id(program), task, tuple(sorted(specs.items(), key=lambda kv: kv[0])),
           tuple(sorted((sizes or {}).items())))
    hit = _CACHE.get(key)
    if hit is not None and hit[1] is program:
        _CACHE.move_to_end(key)
        return hit[0]
    new = program.specialize(sizes, {(task, k): v for k, v in specs.items()})
    _remember(key, new, program)
    return new


def _remember(key: tuple[Any, ...], new: ir.Program, old: ir.Program) -> None:
    _CACHE[key] = (new, old)
    while len(_CACHE) > _CACHE_MAX:
        _CACHE.popitem(last=False)


def _root_intervals(t: ir.TaskDef, names: list[str], args: tuple[Any, ...] | list[Any]
                    ) -> dict[str, Interval]:
    """The root's integer (and bool) scalar parameters' values, as intervals."""
    given = dict(zip(names, args))
    out: dict[str, Interval] = {}
    for p in t.user_params:  # (hidden fields: boards, lengths, paths: unbounded here)
        if p.ty.kind not in "iub":
            continue
        if p.name in given:
            raw = given[p.name]
        elif p.has_default:
            raw = p.default
        else:
            continue
        try:
            v = int(raw, 0) if isinstance(raw, str) else int(raw)
        except (TypeError, ValueError):
            if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
                v = int(raw.strip().lower() == "true")
            else:
                continue
        out[p.name] = (v, v)
    for pa in t.private:  # a board's slots: the root's elements, zero-padded (a list
        raw = given.get(pa.name, ())  # not given starts empty), and its length
        if isinstance(raw, str):
            continue
        try:
            board = np.asarray(raw)
        except ValueError:
            continue
        if board.ndim != 1 or len(board) > len(pa.fields) or (
                board.size and board.dtype.kind not in "iub"):
            continue
        for k, f in enumerate(pa.fields):
            v = int(board[k]) if k < len(board) else 0
            out[f] = (v, v)
        if pa.length is not None:
            out[pa.length] = (len(board), len(board))
    for ap in t.arrays:  # a view starts at 0 and ends at the array's length
        out[ap.offset] = (0, 0)
        value = given.get(ap.name)
        if ap.end is not None and value is not None and not isinstance(value, str):
            try:
                length = len(value)
            except TypeError:
                continue
            out[ap.end] = (length, length)
    return out


def _narrowed(ref: ir.Program, task: str, specs: dict[str, TypeSpec],
              args: tuple[Any, ...] | list[Any]) -> ir.Program:
    t = ref.tasks[task]
    names = _positions(t)
    roots = _root_intervals(t, names, args)
    arrays = _input_arrays(t, names, args)
    ranges = analyse(ref, task, roots, arrays)
    # each unannotated int64 parameter: the integer types holding its interval, from
    # the narrowest up to 32 bits (the signed type of a width where it holds the
    # interval, else the unsigned one)
    # (an operand of bitwise operators: the unsigned type of a width first; a parameter
    # whose uses see only its low k bits: also the unsigned type of k bits, which may
    # wrap: nqueens' diagonals, shifted left past the board, in a uint16)
    options: dict[str, list[TypeSpec]] = {}
    demand = demanded(ref, task, ranges)
    bits_ops = bitwise(t)
    boards = {pa.name: pa for pa in t.private}
    for name, spec in specs.items():
        if isinstance(spec, RootArray):  # a board of ints: the type of its slots' values
            pa = boards.get(name)
            if pa is None or spec.ndim != 1 or spec.dtype != np.dtype(np.int64):
                continue
            slots = [ranges.params.get(f) for f in pa.fields]
            if not slots or any(x is None or not all(math.isfinite(v) for v in x)
                                for x in slots):
                continue
            lo = min(x[0] for x in slots if x is not None)
            hi = max(x[1] for x in slots if x is not None)
            options[name] = [RootArray(dt, 1, spec.sequence)
                             for dt in narrow_candidates((lo, hi))]
            if not options[name]:
                del options[name]
            continue
        if spec != np.dtype(np.int64):
            continue
        got = ranges.params.get(name)
        candidates: list[np.dtype[Any]] = []
        if got is not None and all(math.isfinite(x) for x in got):
            candidates = narrow_candidates(got, unsigned=name in bits_ops)
        wrap = _wrap_type(demand.get(name, ALL_BITS), roots.get(name))
        if wrap is not None and (not candidates or candidates[0].itemsize > wrap.itemsize):
            candidates = [wrap, *(c for c in candidates if c.itemsize > wrap.itemsize)]
        if candidates:
            options[name] = list(candidates)
    if not options:
        return ref
    # all at their narrowest; else one parameter at a time, each at the narrowest type
    # that keeps every value (1 << n needs n wider than n's own range: nqueens)
    best = _attempt(ref, task, specs, {k: v[0] for k, v in options.items()}, roots,
                    arrays, ranges)
    if best is not None:
        return best
    chosen: dict[str, TypeSpec] = {}
    found = ref
    for name in sorted(options, key=lambda k: _itemsize(options[k][0])):
        for ty in options[name]:
            got_p = _attempt(ref, task, specs, {**chosen, name: ty}, roots, arrays, ranges)
            if got_p is not None:
                chosen[name], found = ty, got_p
                break
    return found


def _itemsize(spec: TypeSpec) -> int:
    return spec.dtype.itemsize if isinstance(spec, RootArray) else spec.itemsize


def _wrap_type(bits: int, root: Interval | None) -> np.dtype[Any] | None:
    """The unsigned type of at least ``bits`` bits (at most 32) holding the root value,
    or None."""
    if root is None or bits > 32:
        return None
    for ty in (np.uint8, np.uint16, np.uint32):
        info = np.iinfo(ty)
        if info.bits >= bits:
            return np.dtype(ty) if info.min <= root[0] and root[1] <= info.max else None
    return None


def _input_arrays(t: ir.TaskDef, names: list[str], args: tuple[Any, ...] | list[Any]
                  ) -> dict[str, np.ndarray]:
    """The root call's read-only arrays (their elements bound what tasks read)."""
    given = dict(zip(names, args))
    out: dict[str, np.ndarray] = {}
    for ap in t.arrays:
        value = given.get(ap.name)
        if value is None or ap.fields or ap.output or isinstance(value, str):
            continue
        try:
            arr = np.asarray(value)
        except ValueError:
            continue
        if arr.dtype.kind in "iub" and arr.size:
            out[ap.array] = arr
    return out


def _attempt(ref: ir.Program, task: str, specs: dict[str, TypeSpec],
             narrow: dict[str, TypeSpec], roots: dict[str, Interval],
             arrays: dict[str, np.ndarray], ranges: Ranges) -> ir.Program | None:
    """``ref`` checked again with the parameters ``narrow`` narrowed, if every value it
    computes is ``ref``'s; else None."""
    t = ref.tasks[task]
    boards = {pa.name: pa for pa in t.private}
    for name, spec in narrow.items():  # (the root's values convert exactly)
        if isinstance(spec, RootArray):
            pa = boards.get(name)
            if pa is None or not all(
                    f in roots and within(roots[f], ir.Ty(spec.dtype)) for f in pa.fields):
                return None
        elif name not in roots or not within(roots[name], ir.Ty(np.dtype(spec))):
            return None
    key = (id(ref), task, "narrow", tuple(sorted((k, str(v)) for k, v in narrow.items())))
    hit = _CACHE.get(key)
    if hit is not None and hit[1] is ref:  # checked with these types before (one
        _CACHE.move_to_end(key)           # program object: its build is reused)
        new = hit[0]
    else:
        given: dict[tuple[str, str], Any] = {
            (task, k): v for k, v in {**specs, **narrow}.items()}
        if t.result is not None:  # the result keeps its type
            given[(task, "")] = ref.reducers[t.result].dtype
        try:
            new = ref.specialize(None, given)
        except RevecError:
            return None  # the narrow types do not type-check
        new.root_types = {**ref.root_types, task: {k: specs[k] for k in narrow}}
        _remember(key, new, ref)
    # whether the values stay the same depends on this root call's values: always
    # checked
    if not same_values(ref, new, task, ranges, analyse(new, task, roots, arrays)):
        return None
    return new


# --------------------------------------------------------------------------- checking
def wrapping(ref: ir.Program, new: ir.Program, task: str) -> dict[str, int]:
    """The integer parameters ``new`` holds in another type than ``ref``, each with
    its type's bits ``k``: what is known of such a parameter at every task is that its
    value is congruent to ``ref``'s modulo ``2**k`` (nqueens' diagonal ``d1``, shifted
    left past 16 bits, in a uint16); where both values lie in one interval of at most
    ``2**k`` integers (by the analyses), they are equal."""
    out: dict[str, int] = {}
    for pa, pb in zip(ref.tasks[task].params, new.tasks[task].params):
        if pa.ty.dtype != pb.ty.dtype and pa.ty.kind in "iu" and pb.ty.kind in "iu":
            out[pa.name] = _bits(pb.ty)
    return out


def same_values(ref: ir.Program, new: ir.Program, task: str, rr: Ranges, rn: Ranges
                ) -> bool:
    """Every value ``new`` (narrow types) computes for ``task`` equals the one ``ref``
    computes, but a narrowed parameter's, congruent modulo ``2**k`` (:func:`wrapping`)
    and where needed equal: the two checked programs have one shape; where a node's
    type differs, both nodes' values are exact integers (no wraparound, by the analysis),
    or they are congruent modulo ``2**m`` and both lie in one interval of at most
    ``2**m`` integers; a cast only one of them has keeps its operand's value.

    Congruence modulo ``2**k`` (a node whose uses only see its low ``k`` bits): through
    ``+ - * & | ^ ~`` and unary ``-`` computed in at least ``k`` bits, the left side of
    ``<<`` (a count both sides hold, inside both types' widths), integer casts to at
    least ``k`` bits (a narrower cast: equal types, its operand modulo its width) and
    the branches of a conditional; each spawn passes a wrapping parameter's value
    modulo its bits (by induction over the tree: the root value fits, so at every task
    the narrowed parameters are congruent, every other value equal).  Anything else -- a
    comparison, a division, a right shift, an index, a call's argument, a returned or
    reduced value -- needs the whole value."""
    a, b = ref.tasks[task], new.tasks[task]
    if [p.name for p in a.params] != [p.name for p in b.params]:
        return False
    if {k: d.dtype for k, d in ref.reducers.items()} != \
            {k: d.dtype for k, d in new.reducers.items()}:
        return False
    check = _Align(ref, new, rr, rn, wrapping(ref, new, task), [p.name for p in a.params])
    return (check.stmts(a.prologue, b.prologue) and check.expr(a.is_base, b.is_base)
            and check.stmts(a.base, b.base) and check.stmts(a.inductive, b.inductive))


_SKIP = {"loc", "ty"}
_CONGRUENT = ("+", "-", "*", "&", "|", "^")


def _bits(ty: ir.Ty) -> int:
    return ty.dtype.itemsize * 8


def _strip(e: ir.Expr, k: int) -> ir.Expr:
    """``e`` under its integer casts to at least ``k`` bits (they keep its value modulo
    ``2**k``)."""
    while isinstance(e, ir.Cast) and e.ty.kind in "iu" and e.operand.ty.kind in "iu" \
            and _bits(e.ty) >= k:
        e = e.operand
    return e


class _Align:
    def __init__(self, ref: ir.Program, new: ir.Program, rr: Ranges, rn: Ranges,
                 wraps: dict[str, int], params: list[str]) -> None:
        self.ref, self.new, self.rr, self.rn = ref, new, rr, rn
        self.helpers: set[tuple[str, str]] = set()
        self.wraps = wraps  # the narrowed parameters (none inside a helper)
        self.params = params  # the task's parameters, in the order spawns pass them
        self.memo: dict[tuple[int, int, int | None], bool] = {}

    def stmts(self, xs: tuple[ir.Stmt, ...], ys: tuple[ir.Stmt, ...]) -> bool:
        return len(xs) == len(ys) and all(self.node(x, y) for x, y in zip(xs, ys))

    def node(self, x: Any, y: Any) -> bool:
        if isinstance(x, ir.Expr) and isinstance(y, ir.Expr):
            return self.expr(x, y)
        if type(x) is not type(y):
            return False
        if isinstance(x, ir.Unpack) and isinstance(y, ir.Unpack) and \
                [t.dtype for t in x.target_tys] != [t.dtype for t in y.target_tys]:
            return False
        if isinstance(x, ir.Spawn) and isinstance(y, ir.Spawn):
            return self.passed(x.args, y.args)
        return self.fields(x, y)

    def passed(self, xs: tuple[ir.Expr, ...], ys: tuple[ir.Expr, ...]) -> bool:
        """A spawn's (or a recursive call's) arguments: equal, a narrowed parameter's
        modulo its bits."""
        if len(xs) != len(ys):
            return False
        if len(xs) != len(self.params):
            return not self.wraps and all(self.expr(x, y) for x, y in zip(xs, ys))
        return all(self.expr(x, y, self.wraps.get(name))
                   for name, x, y in zip(self.params, xs, ys))

    def fields(self, x: Any, y: Any) -> bool:
        for f in dataclasses.fields(x):
            if f.name in _SKIP:
                continue
            u, v = getattr(x, f.name), getattr(y, f.name)
            if f.name == "func" and isinstance(x, ir.Call):
                if not self.helper(u, v):
                    return False
            elif f.name == "target_tys":
                continue
            elif isinstance(u, ir.Expr | ir.Stmt) or isinstance(v, ir.Expr | ir.Stmt):
                if not self.node(u, v):
                    return False
            elif isinstance(u, tuple) and isinstance(v, tuple) and (
                    any(isinstance(e, ir.Expr | ir.Stmt) for e in (*u, *v))):
                if len(u) != len(v) or not all(self.node(p, q) for p, q in zip(u, v)):
                    return False
            elif f.name == "result_tys":
                if [t.dtype for t in u] != [t.dtype for t in v]:
                    return False
            elif u != v:
                return False
        return True

    def helper(self, f: str, g: str) -> bool:
        """Two specialisations of one helper compute the same values."""
        if (f, g) in self.helpers:
            return True
        self.helpers.add((f, g))
        hf, hg = self.ref.helpers.get(f), self.new.helpers.get(g)
        if hf is None or hg is None or [p.name for p in hf.params] != [
                p.name for p in hg.params]:
            return False
        if len(hf.result_tys) != len(hg.result_tys) or any(
                a.dtype != b.dtype and (a.kind not in "iu" or b.kind not in "iu")
                for a, b in zip(hf.result_tys, hg.result_tys)):
            return False  # (integer results of other widths: each return is checked)
        wraps, self.wraps = self.wraps, {}  # (a helper's names are its own)
        try:
            return self.stmts(hf.body, hg.body)
        finally:
            self.wraps = wraps

    def cast_keeps(self, c: ir.Cast, ranges: Ranges) -> bool:
        """The cast ``c`` keeps its operand's value (by the analysis)."""
        o = c.operand
        if o.ty.kind == "b":
            return c.ty.kind in "iub"
        if o.ty.kind not in "iu" or c.ty.kind == "b":
            return o.ty.dtype == c.ty.dtype
        x = ranges.exact(o)
        if x is None:
            return False
        if c.ty.kind in "iu":
            info = np.iinfo(c.ty.dtype)
            return info.min <= x[0] and x[1] <= info.max
        mant = np.finfo(c.ty.dtype).nmant + 1  # integers exactly representable
        return -(2 ** mant) <= x[0] and x[1] <= 2 ** mant

    def expr(self, x: ir.Expr, y: ir.Expr, k: int | None = None) -> bool:
        """``x``'s value equals ``y``'s (``k`` None), or is congruent modulo ``2**k``."""
        key = (id(x), id(y), k)
        got = self.memo.get(key)
        if got is None:
            self.memo[key] = False  # (expressions are trees: never asked again inside)
            # equal (so congruent modulo 2**k) where congruent modulo 2**m and both in
            # one interval of 2**m values
            m = self.span(x, y)
            if m is not None and (k is None or m < k):
                k = m
            got = (k is not None and self.congruent(x, y, k)) or self.equal(x, y)
            self.memo[key] = got
        return got

    def span(self, x: ir.Expr, y: ir.Expr) -> int | None:
        """The least ``m`` such that ``x``'s and ``y``'s values (by the analyses) lie in
        one interval of at most ``2**m`` integers, ``m`` below 64; None otherwise."""
        if x.ty.kind not in "iu" or y.ty.kind not in "iu":
            return None
        a, b = self.rr.nodes.get(id(x)), self.rn.nodes.get(id(y))
        if a is None or b is None:
            return None
        lo, hi = min(a[0][0], b[0][0]), max(a[0][1], b[0][1])
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return None
        m = max(int(hi - lo).bit_length(), 1)
        return m if m < 64 else None

    def count(self, e: ir.Expr, ranges: Ranges, ty: ir.Ty) -> bool:
        """``e`` (a shift count) is in [0, bits of ``ty``), by the analysis."""
        got = ranges.nodes.get(id(e))
        return got is not None and got[0][0] >= 0 and got[0][1] < _bits(ty)

    def congruent(self, x: ir.Expr, y: ir.Expr, k: int) -> bool:
        """``x``'s value is congruent to ``y``'s modulo ``2**k``."""
        x, y = _strip(x, k), _strip(y, k)
        if x.ty.kind not in "iu" or y.ty.kind not in "iu" or type(x) is not type(y):
            return False
        wide = _bits(x.ty) >= k and _bits(y.ty) >= k
        match x, y:
            case ir.Const(value=u), ir.Const(value=v):
                return (int(u) - int(v)) % (1 << k) == 0
            case ir.Var(name=u), ir.Var(name=v):
                if u != v:
                    return False
                bits = self.wraps.get(u)
                return k <= bits if bits is not None else self.equal(x, y)
            case ir.Cast(), ir.Cast():  # casts to fewer than k bits: one type
                assert isinstance(x, ir.Cast) and isinstance(y, ir.Cast)
                return (x.ty.dtype == y.ty.dtype and x.operand.ty.kind in "iu"
                        and y.operand.ty.kind in "iu"
                        and self.expr(x.operand, y.operand, _bits(x.ty)))
            case ir.BinOp(op=op, left=p, right=q), ir.BinOp(op=op2, left=r, right=s):
                if op != op2 or not wide:
                    return False
                if op in _CONGRUENT:
                    return self.expr(p, r, k) and self.expr(q, s, k)
                if op == "<<":
                    return (self.count(q, self.rr, x.ty) and self.count(s, self.rn, y.ty)
                            and self.expr(q, s) and self.expr(p, r, k))
                return False
            case ir.UnaryOp(op=op, operand=p), ir.UnaryOp(op=op2, operand=r):
                return op == op2 and op in ("~", "-", "+") and wide and self.expr(p, r, k)
            case ir.IfExp(cond=c, then=p, orelse=q), ir.IfExp(cond=d, then=r, orelse=s):
                return (wide and all(b.ty.dtype == a.ty.dtype for a, bs in
                                     ((x, (p, q)), (y, (r, s))) for b in bs)
                        and self.expr(c, d) and self.expr(p, r, k) and self.expr(q, s, k))
        return False

    def equal(self, x: ir.Expr, y: ir.Expr) -> bool:
        """``x``'s value equals ``y``'s, node by node."""
        while type(x) is not type(y) or (isinstance(x, ir.Cast) and isinstance(y, ir.Cast)
                                         and x.ty.dtype != y.ty.dtype):
            if isinstance(y, ir.Cast) and self.cast_keeps(y, self.rn):
                y = y.operand
            elif isinstance(x, ir.Cast) and self.cast_keeps(x, self.rr):
                x = x.operand
            else:
                return False
        if isinstance(x, ir.Var) and x.name in self.wraps:
            return False  # (congruent modulo its bits: equal only as span shows)
        if x.ty.dtype != y.ty.dtype:
            if x.ty.kind not in "iu" or y.ty.kind not in "iu":
                return False
            if self.rr.exact(x) is None or self.rn.exact(y) is None:
                return False
        if isinstance(x, ir.Recur) and isinstance(y, ir.Recur):
            return self.passed(x.args, y.args)
        return self.fields(x, y)

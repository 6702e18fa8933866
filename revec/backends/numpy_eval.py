"""IR expressions and statements run over many threads at once, with NumPy.

The numpy back end (:mod:`revec.backends.numpy_backend`) runs the statements of a plan
step for all of the step's threads together: the threads are *lanes*, every variable is
a 1-D NumPy array with one element per lane, and each IR node is one NumPy operation over
the lanes that reach it.

Lanes and masks.  :class:`Threads` runs statements for the lanes of a boolean mask:

* ``if c: A else: B`` runs ``A`` for the lanes where ``c`` holds and ``B`` for the others;
* ``while`` and ``for`` run an iteration while any lane is still in the loop;
* ``break``, ``continue`` and ``return`` take their lanes out (:class:`Flow`): out of the
  loop, out of the rest of the iteration, out of the thread (or of the helper call);
* ``spawn`` and ``reduce`` are handed to the caller (the kernel step that runs the
  statements decides where a child goes and which accumulator a value folds into).

An expression is evaluated only on the lanes where the program evaluates it
(:class:`Lanes` gathers their values): the right operand of ``and`` / ``or`` only where
the left one does not decide, each branch of ``a if c else b`` only for its lanes, a
statement only for the lanes that reach it.  So an array index, a division or a helper
call never runs where the thread-by-thread program would not run it.

Exact values.  Every expression has its NumPy type (``e.ty.dtype``) and is computed in
exactly that type (the front end already converted the operands): integer arithmetic
wraps at its width (NumPy arrays wrap; warnings are off, see :func:`exact`), ``//`` and
``%`` are NumPy's (Python's floor semantics: the Cilk C front end builds C's truncating
division out of them, ``revec/frontend/c_lower.py: _trunc_divmod``), casts are C casts
(``astype``: wraparound, truncation toward zero), array indices follow Python (negative
ones count from the end).  :meth:`Evaluator.expr` checks each result's dtype against the
IR's type.

Helpers (``ir.Call``) run their bodies over the calling lanes the same way.  A
:mod:`revec.lib` function (``ir.LibCall``) is called lane by lane through its Python
version (``LIBRARY[name].py``, the one the sequential reference calls).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from revec import ir
from revec.errors import RevecError
from revec.runtime.no_return import no_return_error

Values = npt.NDArray[Any]  # one value per lane
Mask = npt.NDArray[np.bool_]  # one flag per lane

BINARY: dict[str, Callable[[Values, Values], Values]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
    "//": np.floor_divide, "%": np.remainder, "**": np.power,
    "<<": np.left_shift, ">>": np.right_shift,
    "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
}
COMPARE: dict[str, Callable[[Values, Values], Mask]] = {
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal,
}
MATH: dict[str, Callable[[Values], Values]] = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil, "abs": np.abs,
}


def exact() -> np.errstate:
    """Fixed-width wraparound without NumPy's warnings (overflow, and the operations the
    language leaves undefined: integer division by zero, out-of-range conversions)."""
    return np.errstate(all="ignore")


@functools.lru_cache(maxsize=4096)
def scalar(value: int | float | bool, dtype: np.dtype[Any]) -> np.generic:
    """``value`` converted to ``dtype`` as a C cast would."""
    with exact():
        out: Any = np.array(value).astype(dtype)[()]  # (a 0-d index: a NumPy scalar)
        return out


def constant(value: int | float | bool, dtype: np.dtype[Any], n: int) -> Values:
    """``n`` lanes holding ``value`` converted to ``dtype`` as a C cast would."""
    return np.full(n, scalar(value, dtype), dtype)


def cast(values: Values, dtype: np.dtype[Any]) -> Values:
    """C-cast semantics: integers wrap, floats truncate toward zero, nonzero -> True
    (called under :func:`exact`)."""
    if values.dtype == dtype:
        return values
    return values.astype(dtype)


class Lanes:
    """Some lanes of an environment: ``index`` are their positions in the environment's
    arrays.  A variable's values on these lanes are gathered once per expression."""

    __slots__ = ("env", "index", "_got")

    def __init__(self, env: dict[str, Values], index: npt.NDArray[np.intp]) -> None:
        self.env = env
        self.index = index
        self._got: dict[str, Values] = {}

    def __len__(self) -> int:
        return len(self.index)

    def var(self, name: str) -> Values:
        got = self._got.get(name)
        if got is None:
            if name not in self.env:
                raise AssertionError(
                    f"variable {name!r} is read but the plan does not give it to this step "
                    f"(it has: {', '.join(sorted(self.env)) or '-'})")
            got = self._got[name] = self.env[name][self.index]
        return got

    def subset(self, mask: Mask) -> Lanes:
        """The lanes of these where ``mask`` (one flag per lane of these) holds."""
        return Lanes(self.env, self.index[mask])


def lanes_of(env: dict[str, Values], mask: Mask) -> Lanes:
    return Lanes(env, np.flatnonzero(mask))


def scatter(mask: Mask, values: Mask) -> Mask:
    """A full-length mask: ``values`` (one per set lane of ``mask``) at those lanes."""
    out = np.zeros(len(mask), np.bool_)
    out[mask] = values
    return out


class Evaluator:
    """Evaluates IR expressions over lanes (see the module docstring)."""

    def __init__(self, program: ir.Program) -> None:
        self.program = program
        # the bounds' values as the current block started (ir.BoundRead), set by the
        # kernel at every block
        self.bounds: dict[str, np.generic] = {}

    def expr(self, e: ir.Expr, lanes: Lanes) -> Values:
        out = self._expr(e, lanes)
        assert out.dtype == e.ty.dtype and out.shape == (len(lanes),), (
            f"{type(e).__name__} computed {out.dtype}{out.shape}, the IR says "
            f"{e.ty.dtype}[{len(lanes)}]")
        return out

    def _expr(self, e: ir.Expr, lanes: Lanes) -> Values:
        n = len(lanes)
        dt = e.ty.dtype
        match e:
            case ir.Const(value=v):
                return constant(v, dt, n)
            case ir.Var(name=name):
                return lanes.var(name)
            case ir.BoundRead(reducer=r):
                return constant(self.bounds[r].item(), dt, n)
            case ir.Cast(operand=x):
                return cast(self.expr(x, lanes), dt)
            case ir.BinOp(op=op, left=a, right=b):
                # both operands already have the computing type: the result wraps there
                return BINARY[op](self.expr(a, lanes), self.expr(b, lanes))
            case ir.UnaryOp(op="not", operand=a):
                return np.logical_not(self.expr(a, lanes))
            case ir.UnaryOp(op="~", operand=a):
                return np.invert(self.expr(a, lanes))  # on bool: logical not
            case ir.UnaryOp(op="-", operand=a):
                return np.negative(self.expr(a, lanes))
            case ir.UnaryOp(op="+", operand=a):
                return self.expr(a, lanes)
            case ir.Compare(op=op, left=a, right=b):
                return COMPARE[op](self.expr(a, lanes), self.expr(b, lanes))
            case ir.BoolOp(op=op, left=a, right=b):
                # short circuit: the right side only on the lanes the left does not decide
                left = self.expr(a, lanes)
                undecided = left if op == "and" else ~left
                out = left.copy()
                if undecided.any():
                    out[undecided] = self.expr(b, lanes.subset(undecided))
                return out
            case ir.IfExp(cond=c, then=a, orelse=b):
                cond = self.expr(c, lanes)
                out = np.empty(n, dt)
                if cond.any():
                    out[cond] = cast(self.expr(a, lanes.subset(cond)), dt)
                if not cond.all():
                    out[~cond] = cast(self.expr(b, lanes.subset(~cond)), dt)
                return out
            case ir.Pick(index=i, elements=els):
                index = np.asarray(self.expr(i, lanes)).astype(np.int64)
                stacked = np.stack([np.broadcast_to(self.expr(x, lanes), (n,)) for x in els])
                return cast(stacked[index, np.arange(n)], dt)
            case ir.ArrayRef(array=name, indices=idx):
                table = self.program.arrays[name]
                # NumPy's fancy indexing counts negative indices from the end, as Python
                return table[tuple(self.expr(i, lanes) for i in idx)]
            case ir.MathCall(func="minimum", args=(a, b)):
                return np.minimum(self.expr(a, lanes), self.expr(b, lanes))
            case ir.MathCall(func="maximum", args=(a, b)):
                return np.maximum(self.expr(a, lanes), self.expr(b, lanes))
            case ir.MathCall(func=f, args=(a,)):
                return cast(MATH[f](self.expr(a, lanes)), dt)
            case ir.Call() | ir.LibCall():
                values = self.call(e, lanes)
                assert len(values) >= 1, f"{e.func} returns no value"
                return cast(values[0], dt)
        raise AssertionError(f"unhandled IR expression {type(e).__name__}")

    # ------------------------------------------------------------------ calls
    def call(self, e: ir.Call | ir.LibCall, lanes: Lanes) -> tuple[Values, ...]:
        """The results of a helper or library call on ``lanes`` (one array each)."""
        args = [self.expr(a, lanes) for a in e.args]
        if isinstance(e, ir.LibCall):
            return self.lib_call(e, args, len(lanes))
        return self.helper(self.program.helpers[e.func], args, len(lanes))

    def lib_call(self, e: ir.LibCall, args: list[Values], n: int) -> tuple[Values, ...]:
        """A :mod:`revec.lib` function, lane by lane through its Python version (the
        sequential reference's)."""
        from revec.lib import LIBRARY, _load_all

        _load_all()
        fn = LIBRARY[e.func].py
        out = [np.empty(n, t.dtype) for t in e.result_tys]
        for lane in range(n):
            got = fn(*(a[lane] for a in args))
            got = got if isinstance(got, tuple) else (got,)
            for o, v in zip(out, got):
                o[lane] = v
        return tuple(out)

    def helper(self, h: ir.HelperDef, args: list[Values], n: int) -> tuple[Values, ...]:
        """A helper's body over ``n`` calling lanes: its parameters hold the arguments
        (already converted by the front end), its locals start at zero, and a lane's
        ``return`` stores its values and ends that lane's call."""
        env = {p.name: cast(a, p.ty.dtype) for p, a in zip(h.params, args)}
        env.update(zero_locals(h.locals, n, skip=env))
        results = [np.zeros(n, t.dtype) for t in h.result_tys]
        returned = np.zeros(n, bool)

        def on_return(s: ir.Return, live: Mask, lanes: Lanes) -> None:
            returned[live] = True
            for r, v in zip(results, s.values):
                r[live] = cast(self.expr(v, lanes), r.dtype)

        Threads(self, env, n, on_return=on_return).run(h.body)
        if h.result_tys and not returned.all():  # a lane fell off the helper's end
            raise no_return_error(self.program, h.name)
        return tuple(results)


def zero_locals(locals_: dict[str, ir.Ty], n: int, skip: dict[str, Values] | None = None
                ) -> dict[str, Values]:
    """Every local at zero in every lane (as the compiled kernels start a thread)."""
    return {name: np.zeros(n, ty.dtype) for name, ty in sorted(locals_.items())
            if skip is None or name not in skip}


# ---------------------------------------------------------------------- statements
class Flow:
    """The lanes that left the statements being run, and how: ``returned`` (the thread,
    or the helper call, is over: shared by every loop level), ``broke`` (out of the
    innermost loop) and ``continued`` (out of the innermost loop's iteration)."""

    def __init__(self, n: int, returned: Mask | None = None) -> None:
        self.returned = np.zeros(n, np.bool_) if returned is None else returned
        self.broke = np.zeros(n, np.bool_)
        self.continued = np.zeros(n, np.bool_)

    def live(self, active: Mask) -> Mask:
        return active & ~(self.returned | self.broke | self.continued)

    def loop_body(self) -> Flow:
        """The flow of one iteration of a loop inside this one."""
        return Flow(len(self.returned), self.returned)


SpawnHook = Callable[[ir.Spawn, Mask, Lanes], None]
ReduceHook = Callable[[str, Values], None]
ReturnHook = Callable[[ir.Return, Mask, Lanes], None]


class Threads:
    """Statements run in lock step over the ``n`` lanes of ``env`` (see the module
    docstring).  ``on_spawn(stmt, lanes_mask, lanes)`` and ``on_reduce(reducer,
    values)`` receive the spawns and reductions; ``on_return`` a helper's returns."""

    def __init__(self, ev: Evaluator, env: dict[str, Values], n: int,
                 on_spawn: SpawnHook | None = None, on_reduce: ReduceHook | None = None,
                 on_return: ReturnHook | None = None) -> None:
        self.ev = ev
        self.env = env
        self.n = n
        self.on_spawn = on_spawn
        self.on_reduce = on_reduce
        self.on_return = on_return

    def run(self, stmts: tuple[ir.Stmt, ...], active: Mask | None = None) -> Flow:
        """Run ``stmts`` for the lanes of ``active`` (default: all); the returned flow
        says which lanes returned."""
        flow = Flow(self.n)
        with exact():
            self.block(stmts, np.ones(self.n, np.bool_) if active is None else active, flow)
        return flow

    def block(self, stmts: tuple[ir.Stmt, ...], active: Mask, flow: Flow) -> None:
        for s in stmts:
            live = flow.live(active)
            if not live.any():
                return
            self.stmt(s, live, flow)

    def lanes(self, live: Mask) -> Lanes:
        return lanes_of(self.env, live)

    def value(self, e: ir.Expr, live: Mask) -> Values:
        """``e`` on the lanes of ``live`` (one value per set lane)."""
        return self.ev.expr(e, self.lanes(live))

    def test(self, e: ir.Expr, live: Mask) -> Mask:
        """The lanes of ``live`` where the condition ``e`` holds (full length)."""
        return scatter(live, self.value(e, live))

    def assign(self, name: str, live: Mask, values: Values) -> None:
        """``name = values`` on the lanes of ``live``.  A variable the environment does
        not hold yet (a local a lock-step iteration assigns before it reads it, so the
        plan does not carry it from one iteration to the next) is made here."""
        target = self.env.get(name)
        if target is None:
            target = self.env[name] = np.zeros(self.n, values.dtype)
        assert target.dtype == values.dtype, (name, target.dtype, values.dtype)
        target[live] = values

    def stmt(self, s: ir.Stmt, live: Mask, flow: Flow) -> None:
        match s:
            case ir.Assign(target=t, value=v):
                self.assign(t, live, self.value(v, live))
            case ir.Unpack(targets=ts, call=call, target_tys=tys):
                results = self.ev.call(call, self.lanes(live))
                for name, ty, got in zip(ts, tys, results):
                    self.assign(name, live, cast(got, ty.dtype))
            case ir.If(cond=c, then=a, orelse=b):
                yes = self.test(c, live)
                self.block(a, yes, flow)
                self.block(b, live & ~yes, flow)
            case ir.While(cond=c, body=body):
                running = live.copy()
                while True:
                    running &= ~flow.returned
                    if not running.any():
                        break
                    running = self.test(c, running)
                    if not running.any():
                        break
                    inner = flow.loop_body()
                    self.block(body, running, inner)
                    running &= ~inner.broke
            case ir.For(var=v, start=a, stop=b, step=c, body=body):
                self.for_loop(v, a, b, c, body, live, flow)
            case ir.Break():
                flow.broke |= live
            case ir.Continue():
                flow.continued |= live
            case ir.Return():
                if self.on_return is not None:
                    self.on_return(s, live, self.lanes(live))
                flow.returned |= live
            case ir.ExprStmt(value=v):
                self.value(v, live)
            case ir.Spawn():
                if self.on_spawn is None:
                    raise AssertionError("a spawn in statements that cannot spawn")
                self.on_spawn(s, live, self.lanes(live))
            case ir.Store(array=name, indices=idx, value=v):
                self.store(name, idx, v, live)
            case ir.Reduce(reducer=r, value=v):
                if self.on_reduce is None:
                    raise AssertionError("a reduce in statements that cannot reduce")
                self.on_reduce(r, self.value(v, live))
            case _:
                raise AssertionError(f"unhandled IR statement {type(s).__name__}")

    def store(self, name: str, indices: tuple[ir.Expr, ...], value: ir.Expr,
              live: Mask) -> None:
        """``out[i, ...] = value`` on the lanes of ``live``: a scatter in lane order (no
        two tasks share an element, so the order does not matter).  An index out of
        range (negative ones count from the end, except the first, already shifted by
        the task's view) is an error."""
        table = self.ev.program.arrays[name]
        lanes = self.lanes(live)
        idx = []
        for d, i in enumerate(indices):
            at = cast(self.ev.expr(i, lanes), np.dtype(np.int64))
            if d:
                at = np.where(at < 0, at + table.shape[d], at)
            bad = (at < 0) | (at >= table.shape[d])
            if bad.any():
                raise RevecError(f"a task stored into an output at index {int(at[bad][0])}, "
                                 f"outside its shape {tuple(table.shape)}")
            idx.append(at)
        table[tuple(idx)] = cast(self.ev.expr(value, lanes), table.dtype)

    def for_loop(self, var: str, start: ir.Expr, stop: ir.Expr, step: ir.Expr,
                 body: tuple[ir.Stmt, ...], live: Mask, flow: Flow) -> None:
        """``for var in range(start, stop, step)``: the range is evaluated once per lane
        (Python's semantics: the body assigning ``var`` does not change the iterations)."""
        n = self.n
        cur, end, inc = (np.zeros(n, np.int64) for _ in range(3))
        lanes = self.lanes(live)
        for arr, e in ((cur, start), (end, stop), (inc, step)):
            arr[live] = cast(self.ev.expr(e, lanes), np.dtype(np.int64))
        if (inc[live] == 0).any():
            raise RevecError("range() step must not be zero")
        running = live.copy()
        while True:
            running &= ~flow.returned & np.where(inc > 0, cur < end, cur > end)
            if not running.any():
                break
            self.assign(var, running, cast(cur[running], self.env[var].dtype))
            inner = flow.loop_body()
            self.block(body, running, inner)
            cur[running] += inc[running]
            running &= ~inner.broke

"""Emission of IR expressions and statements as numba-compilable Python source.

Every operation is written with an explicit conversion to the type the front end
computed, so numba computes exactly in NumPy's types (integer results wrap at
their width; float32 stays float32).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from revec import ir
from revec.emit.chains import binop_chain, boolop_chain, ifexp_chain
from revec.emit.writer import at
from revec.ir import speculable
from revec.transforms.blocking import contains_return

BIN_SYMBOL = {"+": "+", "-": "-", "*": "*", "/": "/", "//": "//", "%": "%", "**": "**",
              "<<": "<<", ">>": ">>", "&": "&", "|": "|", "^": "^"}


# NumPy's scalar types by name.  The numba back end imports them into its generated
# modules and writes ``int8(x)`` (namespace "") instead of ``np.int8(x)``: numba turns
# ``np.int8`` into two IR instructions (the global ``np``, then its attribute), which
# were a quarter of a generated kernel's IR, and numba's compile time grows with the IR
# (27 generated programs: 24.2 -> 22.2 s CPU, 2-core AMD EPYC, 2026-11-27).  Other
# users (the Cilk front end's sequential reference) keep the ``np.`` namespace, where
# a C variable may be called ``int8``.
TYPE_NAMES: tuple[str, ...] = ("int8", "int16", "int32", "int64", "uint8", "uint16",
                               "uint32", "uint64", "float32", "float64", "bool_")


def np_type(ty: ir.Ty, ns: str = "np.") -> str:
    return f"{ns}bool_" if ty.kind == "b" else f"{ns}{ty.dtype.name}"


def literal(value: int | float | bool, ty: ir.Ty, ns: str = "np.") -> str:
    if ty.kind == "b":
        return "True" if value else "False"
    if ty.kind == "f":
        v = float(value)
        text = "np.inf" if v == math.inf else "-np.inf" if v == -math.inf else (
            "np.nan" if math.isnan(v) else repr(v))
        return text if ty.weak or ty.dtype == np.float64 else f"{ns}float32({text})"
    v = int(value)
    if ty.weak or ty.dtype == np.int64:
        return str(v) if v >= 0 else f"({v})"
    return f"{np_type(ty, ns)}({v})"


def cast(text: str, src: ir.Ty, dst: ir.Ty, ns: str = "np.") -> str:
    if dst.kind == "b":
        return text if src.kind == "b" else f"({text} != 0)"
    return f"{np_type(dst, ns)}({text})"


class ExprEmitter:
    """Turns IR expressions into Python source text for numba."""

    def __init__(self, var: Callable[[str], str], array: Callable[[str], str],
                 helper_call: Callable[[str, list[str]], str],
                 lib_call: Callable[[str, list[str]], str], wrap_signed: bool = True,
                 ns: str = "np.") -> None:
        self.ns = ns  # where NumPy's scalar types are found (see TYPE_NAMES)
        # int64 + - * are computed in uint64 and converted back: numba gives signed
        # integer + - * LLVM's 'nsw' flag (overflow is assumed impossible), so LLVM
        # folds, e.g., a sign test of a wrapped sum away; unsigned arithmetic wraps by
        # definition (as the C back end's does).  Narrower signed types need nothing:
        # numba computes them in int64, where they cannot overflow, and the explicit
        # conversion back wraps; negation and << carry no 'nsw'.  CPython on NumPy
        # scalars (the sequential reference) wraps either way.
        self.wrap_signed = wrap_signed
        self.var = var
        self.array = array
        self.helper_call = helper_call
        self.lib_call = lib_call
        # boards held in a named tuple (a helper's board parameters, built once at its
        # entry): the elements' names -> the tuple
        self.picks: dict[tuple[str, ...], str] = {}
        # a bound's value at block start (ir.BoundRead): the kernel's bd_<r>
        self.bound: Callable[[str], str] = lambda r: f"bd_{r}"

    def __call__(self, e: ir.Expr) -> str:
        flat = self.flat(e)
        if flat is not None:
            return flat
        match e:
            case ir.BoundRead(reducer=r):
                return self.bound(r)
            case ir.Const(value=v, ty=ty):
                return literal(v, ty, self.ns)
            case ir.Var(name=name):
                return self.var(name)
            case ir.Cast(operand=op, ty=ty):
                return cast(self(op), op.ty, ty, self.ns)
            case ir.BinOp(op=op, left=a, right=b, ty=ty) if (
                    self.wrap_signed and ty.dtype == np.int64 and not ty.weak
                    and op in ("+", "-", "*")):
                ns = self.ns
                return f"{ns}int64({ns}uint64({self(a)}) {op} {ns}uint64({self(b)}))"
            case ir.BinOp(op=op, left=a, right=b, ty=ty):
                text = f"({self(a)} {BIN_SYMBOL[op]} {self(b)})"
                if ty.weak:
                    return text
                if ty.kind == "b":
                    return f"(({text}) != 0)"
                return f"{np_type(ty, self.ns)}{text}"
            case ir.UnaryOp(op="not", operand=a):
                return f"(not {self(a)})"
            case ir.UnaryOp(op="~", operand=a, ty=ty) if ty.kind == "b":
                return f"(not {self(a)})"
            case ir.UnaryOp(op=op, operand=a, ty=ty):
                text = f"({op}{self(a)})"
                return text if ty.weak else f"{np_type(ty, self.ns)}{text}"
            case ir.Compare(op=op, left=a, right=b):
                return f"({self(a)} {op} {self(b)})"
            case ir.BoolOp(op=op, left=a, right=b) if speculable(b):
                # nothing to skip: both sides always, without a branch (a short circuit
                # on a data-dependent condition mispredicts, e.g. binomial's is-base test)
                return f"({self(a)} {'&' if op == 'and' else '|'} {self(b)})"
            case ir.BoolOp(op=op, left=a, right=b):
                return f"({self(a)} {op} {self(b)})"
            case ir.IfExp(cond=c, then=a, orelse=b):
                return f"({self(a)} if {self(c)} else {self(b)})"
            case ir.ArrayRef(array=name, indices=idx):
                return f"{self.array(name)}[{', '.join(self(i) for i in idx)}]"
            case ir.Pick(index=i, elements=els):
                named = self.picks.get(tuple(x.name for x in els))
                if named is not None:
                    return f"{named}[{self(i)}]"
                # a tuple of one type: numba indexes it at run time without a heap array
                return f"({', '.join(self(x) for x in els)},)[{self(i)}]"
            case ir.Call(func=f, args=args):
                return self.helper_call(f, [self(a) for a in args])
            case ir.LibCall(func=f, args=args):
                return self.lib_call(f, [self(a) for a in args])
            case ir.MathCall(func=f, args=args, ty=ty):
                parts = [self(a) for a in args]
                if f == "minimum":
                    text = f"min({parts[0]}, {parts[1]})"
                elif f == "maximum":
                    text = f"max({parts[0]}, {parts[1]})"
                elif f == "abs":
                    text = f"abs({parts[0]})"
                else:
                    text = f"np.{f}({parts[0]})"
                return text if ty.weak else cast(text, ty, ty, self.ns)
        raise AssertionError(f"unhandled IR expression {type(e).__name__}")

    def flat(self, e: ir.Expr) -> str | None:
        """A long chain of one operator written flat (:mod:`revec.emit.chains`), else
        None."""
        ns = self.ns
        if isinstance(e, ir.BinOp) and (chain := binop_chain(e)) is not None:
            first, rest = chain
            if e.ty.kind in "iu" and self.wrap_signed and not e.ty.weak:
                # numba: uint64 arithmetic wraps (see __init__), whatever the width
                text = f"{ns}uint64({self(first)})" + "".join(
                    f" {op} {ns}uint64({self(x)})" for op, x in rest)
            else:  # NumPy scalars of the chain's type (or Python numbers): as nested
                text = self(first) + "".join(f" {op} {self(x)}" for op, x in rest)
            return f"({text})" if e.ty.weak else f"{np_type(e.ty, ns)}({text})"
        if isinstance(e, ir.BoolOp) and (operands := boolop_chain(e)) is not None:
            if all(speculable(x) for x in operands[1:]):  # nothing to skip (see __call__)
                sym = "&" if e.op == "and" else "|"
            else:
                sym = e.op
            return "(" + f" {sym} ".join(self(x) for x in operands) + ")"
        if isinstance(e, ir.IfExp) and (arms := ifexp_chain(e)) is not None:
            pairs, last = arms
            return "(" + "".join(f"{self(v)} if {self(c)} else " for c, v in pairs) + \
                f"{self(last)})"
        return None


class StmtEmitter:
    """Emits statements; task-specific statements (spawn, reduce, thread return) are
    delegated to callbacks so tasks and helpers share everything else."""

    def __init__(self, expr: ExprEmitter, var: Callable[[str], str],
                 spawn: Callable[[ir.Spawn, str], list[str]] | None = None,
                 reduce: Callable[[ir.Reduce, str], list[str]] | None = None,
                 in_task: bool = True, positions: bool = False,
                 store: Callable[[ir.Store, str], list[str]] | None = None) -> None:
        # tag each statement's lines with its source position (revec.emit.writer.at)
        self.positions = positions
        self.expr = expr
        self.var = var
        self.spawn = spawn
        self.reduce = reduce
        self.store = store  # a store to an output array (ir.Store)
        self.in_task = in_task

    def block(self, stmts: tuple[ir.Stmt, ...], ind: str, loop_depth: int) -> list[str]:
        out: list[str] = []
        for s in stmts:
            out.extend(self.stmt(s, ind, loop_depth))
        if not out:
            out.append(f"{ind}pass")
        return out

    def stmt(self, s: ir.Stmt, ind: str, depth: int) -> list[str]:
        lines = self._stmt(s, ind, depth)
        return at(s.loc, lines) if self.positions else lines

    def _stmt(self, s: ir.Stmt, ind: str, depth: int) -> list[str]:
        e = self.expr
        match s:
            case ir.Assign(target=t, value=v):
                return [f"{ind}{self.var(t)} = {e(v)}"]
            case ir.Unpack(targets=ts, call=call, target_tys=tys):
                tmp = [f"_u{i}" for i in range(len(ts))]
                lines = [f"{ind}{', '.join(tmp)} = {e(call)}"]
                rtys = call.result_tys if isinstance(call, ir.LibCall) else None
                for name, t, ty, i in zip(ts, tmp, tys, range(len(ts))):
                    src = rtys[i] if rtys else ty
                    text = t if src.dtype == ty.dtype else cast(t, src, ty, self.expr.ns)
                    lines.append(f"{ind}{self.var(name)} = {text}")
                return lines
            case ir.If(cond=c, then=a, orelse=b):
                lines = [f"{ind}if {e(c)}:", *self.block(a, ind + "    ", depth)]
                if b:
                    lines += [f"{ind}else:", *self.block(b, ind + "    ", depth)]
                return lines
            case ir.For(var=v, start=a, stop=b, step=c, body=body):
                lines = [f"{ind}for {self.var(v)} in range({e(a)}, {e(b)}, {e(c)}):",
                         *self.block(body, ind + "    ", depth + 1)]
                return lines + self.after_loop(body, ind)
            case ir.While(cond=c, body=body):
                lines = [f"{ind}while {e(c)}:", *self.block(body, ind + "    ", depth + 1)]
                return lines + self.after_loop(body, ind)
            case ir.Break():
                return [f"{ind}break"]
            case ir.Continue():
                return [f"{ind}continue"]
            case ir.Return(values=vals):
                if not self.in_task:
                    if not vals:
                        return [f"{ind}return"]
                    return [f"{ind}return {', '.join(e(v) for v in vals)}"]
                # A thread ends: leave the per-thread wrapper loop (see run_thread_body).
                if depth == 0:
                    return [f"{ind}break"]
                return [f"{ind}_ret = True", f"{ind}break"]
            case ir.ExprStmt(value=v):
                return [f"{ind}{e(v)}"]
            case ir.Spawn():
                assert self.spawn is not None
                return self.spawn(s, ind)
            case ir.Reduce():
                assert self.reduce is not None
                return self.reduce(s, ind)
            case ir.Store():
                assert self.store is not None, "a store where outputs cannot be written"
                return self.store(s, ind)
        raise AssertionError(f"unhandled IR statement {type(s).__name__}")

    def after_loop(self, body: tuple[ir.Stmt, ...], ind: str) -> list[str]:
        if self.in_task and contains_return(body):
            return [f"{ind}if _ret:", f"{ind}    break"]
        return []


def zero_of(ty: ir.Ty, ns: str = "np.") -> str:
    if ty.kind == "b":
        return "False"
    if ty.weak:
        return "0.0" if ty.kind == "f" else "0"
    return f"{np_type(ty, ns)}(0)"


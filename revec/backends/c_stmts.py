"""Statement emission of the generated C, shared by the kernel, the plain recursive C,
the helpers (``revec/backends/c_codegen.py``), the lane code (``c_lanes.py``) and the
OpenMP peer (``c_driver.py``).  ``spawn`` / ``reduce`` / a thread's ``return`` are
supplied by the generator (:class:`CGen`) per context.  The lines of a statement are
tagged with its source position (:func:`revec.emit.writer.at`): the module's final pass
writes them out as ``#line`` directives.
"""

from __future__ import annotations

import re
from typing import Protocol

from revec import ir
from revec.emit.cexpr import (
    CExprEmitter,
    blend,
    cast,
    ctype,
    masked,
    truth,
    utype,
)
from revec.emit.names import var
from revec.emit.writer import at, untag
from revec.ir import speculable
from revec.transforms.blocking import BlockProgram


class CGen(Protocol):
    """What statement emission and the driver need of a C module generator."""

    program: ir.Program
    bp: BlockProgram
    t: ir.TaskDef
    expr: CExprEmitter
    tmp: int
    current_helper: ir.HelperDef | None
    arrays: list[str]
    inline_arrays: set[str]

    def spawn_kernel(self, s: ir.Spawn, ind: str) -> list[str]: ...

    def spawn_seq(self, s: ir.Spawn, ind: str) -> list[str]: ...

    def reduce(self, s: ir.Reduce, ind: str, prefix: str = "acc_") -> list[str]: ...

    def store(self, s: ir.Store, ind: str) -> list[str]: ...

    def locals_decl(self, locals_: dict[str, ir.Ty], ind: str) -> list[str]: ...


def read_names(func: ir.TaskDef | ir.HelperDef, code: list[str]) -> set[str]:
    """The variables a task (its is-base test and both cases) or a helper reads that its
    C ``code`` still names (the emitter writes the value of a comparison its operands'
    form decides, dropping them): its C function marks the parameters it does not read
    (RV_MAYBE_UNUSED)."""
    parts = ((func.is_base, func.base, func.inductive) if isinstance(func, ir.TaskDef)
             else func.body)
    named = set(re.findall(r"\bv_(\w+)", untag("\n".join(code))))
    return {n.name for n in ir.walk_nodes(parts) if isinstance(n, ir.Var)} & named


class CStmts:
    """Statement emission; ``spawn``/``reduce``/thread return are supplied per context."""

    def __init__(self, gen: CGen, mode: str, exit_label: str = "next_thread") -> None:
        self.gen = gen
        self.mode = mode  # "kernel" / "seq" / "helper"
        self.e = gen.expr
        # in the kernel a thread's ``return`` jumps to the end of its loop body, at this
        # label; ``jumped``: a jump was emitted (the caller then places the label)
        self.exit_label = exit_label
        self.jumped = False

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
        lines = [f"{ind}uint8_t _p{k} = {c if pc is None else f'{pc} & {c}'};"]
        if s.orelse:
            lines.append(f"{ind}uint8_t _q{k} = {f'!_p{k}' if pc is None else f'{pc} & !_p{k}'};")
        for x in s.then:
            lines += at(x.loc, self.predicated(x, f"_p{k}", ind))
        for x in s.orelse:
            lines += at(x.loc, self.predicated(x, f"_q{k}", ind))
        return lines

    def stmt(self, s: ir.Stmt, ind: str) -> list[str]:
        """The C of ``s``, its lines tagged with its source position."""
        return at(s.loc, self.code(s, ind))

    def code(self, s: ir.Stmt, ind: str) -> list[str]:
        """The C of ``s`` (nested statements tagged with their own positions)."""
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
                other = e(els[0].value) if els and isinstance(els[0], ir.Assign) else var(t)
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
                # the stop is named for the loop's variable: a nested loop's (or the lane
                # loop's _stop) is not shadowed (-Wshadow)
                stop = f"_stop_{var(v)}"
                cond = (f"({step} > 0 ? {var(v)} < {stop} : {var(v)} > {stop})"
                        if not isinstance(c, ir.Const) else
                        (f"{var(v)} < {stop}" if c.value > 0 else f"{var(v)} > {stop}"))
                return [f"{ind}{{", f"{ind}    int64_t {stop} = {e(b)};",
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
                self.jumped = True
                return [f"{ind}goto {self.exit_label};"]
            case ir.ExprStmt(value=v):
                return [f"{ind}(void)({e(v)});"]
            case ir.Spawn():
                return self.gen.spawn_kernel(s, ind) if self.mode == "kernel" else \
                    self.gen.spawn_seq(s, ind)
            case ir.Reduce():
                return self.gen.reduce(s, ind, "la_" if self.mode == "kernel" else "acc_")
            case ir.Store():
                return self.gen.store(s, ind)
        raise AssertionError(f"unhandled IR statement {type(s).__name__}")

"""The checked program as readable Python in the spawn/reduce language.

``revec transform FILE --spawn-form`` prints what the passes derived (return values
turned into spawns and reducers, the prologue moved into both cases), as a program
the front end accepts again: hidden frame fields become parameters with defaults,
hidden result reducers become module-level ``Reducer`` declarations.
"""

from __future__ import annotations

from revec import ir
from revec.transforms.bounds import PRUNED

PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8,
        "+": 9, "-": 9, "*": 10, "/": 10, "//": 10, "%": 10, "unary": 11, "**": 12}
MATH = {"minimum": "np.minimum", "maximum": "np.maximum", "abs": "abs"}


def ty_name(ty: ir.Ty) -> str:
    return "np.bool_" if ty.kind == "b" else f"np.{ty.dtype.name}"


def expr(e: ir.Expr, outer: int = 0) -> str:
    text, prec = _expr(e)
    return f"({text})" if prec < outer else text


def _expr(e: ir.Expr) -> tuple[str, int]:
    match e:
        case ir.Const(value=v, ty=ty):
            if ty.weak or ty.kind == "b" or (ty.kind == "i" and ty.dtype.itemsize == 8) or (
                    ty.kind == "f" and ty.dtype.itemsize == 8):
                return repr(v), 99 if not (isinstance(v, (int, float)) and v < 0) else 11
            return f"{ty_name(ty)}({v!r})", 99
        case ir.Var(name=n):
            return n, 99
        case ir.ArrayRef(array=a, indices=ix):
            return f"{a}[{', '.join(expr(i) for i in ix)}]", 99
        case ir.Pick(index=i, elements=els):
            return f"({', '.join(expr(x) for x in els)},)[{expr(i)}]", 99
        case ir.Cast(operand=o, ty=ty):
            return f"{ty_name(ty)}({expr(o)})", 99
        case ir.BinOp(op=op, left=a, right=b):
            p = PREC[op]
            return f"{expr(a, p)} {op} {expr(b, p + 1)}", p
        case ir.UnaryOp(op="not", operand=o):
            return f"not {expr(o, 3)}", 3
        case ir.UnaryOp(op=op, operand=o):
            return f"{op}{expr(o, 11)}", 11
        case ir.Compare(op=op, left=a, right=b):
            return f"{expr(a, 5)} {op} {expr(b, 5)}", 4
        case ir.BoolOp(op=op, left=a, right=b):
            p = PREC[op]
            return f"{expr(a, p)} {op} {expr(b, p + 1)}", p
        case ir.IfExp(cond=c, then=a, orelse=b):
            return f"{expr(a, 1)} if {expr(c, 1)} else {expr(b, 1)}", 0
        case ir.Call(func=f, args=args) | ir.LibCall(func=f, args=args):
            return f"{f}({', '.join(expr(a) for a in args)})", 99
        case ir.MathCall(func=f, args=args):
            return f"{MATH.get(f, 'np.' + f)}({', '.join(expr(a) for a in args)})", 99
        case ir.BoundRead(reducer=r):
            return f"{r}.value", 99
        case ir.Recur(args=args):
            return f"<call>({', '.join(expr(a) for a in args)})", 99
    return f"<{type(e).__name__}>", 99


def stmts(body: tuple[ir.Stmt, ...], task: str, ind: str,
          bounds: dict[str, str] | None = None) -> list[str]:
    """``bounds``: the bounds' update methods (raise_to / lower_to)."""
    bounds = bounds or {}
    out: list[str] = []
    for s in body:
        match s:
            case ir.Assign(target=t, value=v):
                out.append(f"{ind}{t} = {expr(v)}")
            case ir.Unpack(targets=ts, call=c):
                out.append(f"{ind}{', '.join(ts)} = {expr(c)}")
            case ir.If(cond=c, then=a, orelse=b):
                out.append(f"{ind}if {expr(c)}:")
                out += stmts(a, task, ind + "    ", bounds) or [ind + "    pass"]
                if b:
                    out.append(f"{ind}else:")
                    out += stmts(b, task, ind + "    ", bounds)
            case ir.For(var=v, start=a, stop=b, step=c, body=body_):
                out.append(f"{ind}for {v} in range({expr(a)}, {expr(b)}, {expr(c)}):")
                out += stmts(body_, task, ind + "    ", bounds) or [ind + "    pass"]
            case ir.While(cond=c, body=body_):
                out.append(f"{ind}while {expr(c)}:")
                out += stmts(body_, task, ind + "    ", bounds) or [ind + "    pass"]
            case ir.Break():
                out.append(f"{ind}break")
            case ir.Continue():
                out.append(f"{ind}continue")
            case ir.Return(values=vs):
                out.append(f"{ind}return {', '.join(expr(v) for v in vs)}".rstrip())
            case ir.ExprStmt(value=v):
                out.append(f"{ind}{expr(v)}")
            case ir.Spawn(args=args):
                out.append(f"{ind}spawn({task}, {', '.join(expr(a) for a in args)})")
            case ir.Reduce(reducer=r) if r == PRUNED:
                out.append(f"{ind}# pruned (counted in the run's statistics)")
            case ir.Reduce(reducer=r, value=v) if r in bounds:
                out.append(f"{ind}{r}.{bounds[r]}({expr(v)})")
            case ir.Reduce(reducer=r, value=v):
                out.append(f"{ind}reduce({r}, {expr(v)})")
            case ir.Store(array=a, indices=ix, value=v):
                out.append(f"{ind}{a}[{', '.join(expr(i) for i in ix)}] = {expr(v)}")
    return out


def show_task(program: ir.Program, name: str) -> str:
    """The task ``name`` (after the passes) as readable spawn/reduce Python."""
    t = program.tasks[name]
    lines: list[str] = []
    bounds = {r.name: "raise_to" if r.op == "max" else "lower_to"
              for r in program.reducers.values() if r.bound}
    for r in program.reducers.values():
        if r.bound:
            start = "" if r.start is None else f", {r.start!r}"
            lines += [f"{r.name} = Bound(np.{r.dtype.name}, {r.op!r}{start})  # a bound", ""]
        if r.hidden and r.name == t.result:
            lines += [f"{r.name} = Reducer(np.{r.dtype.name}, {r.op!r})  # the returned value",
                      ""]
    lines += ["@task", f"def {name}("]
    for p in t.params:
        if p.hidden:
            lines.append("    # derived: " + ("the weight of the path from the root"
                                             if p.default == 1 else
                                             "the sum of the local terms on the path"))
        text = f"{p.name}: {ty_name(p.ty)}"
        if p.has_default:
            text += f" = {p.default!r}"
        lines.append(f"    {text},")
    lines += ["):", f"    if {expr(t.is_base)}:"]
    lines += stmts(t.base, name, " " * 8, bounds) or ["        pass"]
    lines.append("    else:")
    lines += stmts(t.inductive, name, " " * 8, bounds) or ["        pass"]
    return "\n".join(lines) + "\n"

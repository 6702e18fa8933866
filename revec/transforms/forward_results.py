"""Results combined through locals -> results combined where they are used.

A task often names its calls' results and combines them in a local before returning
it, as C programmers write:

    x = cilk_spawn f(n - 1);  y = f(n - 2);  cilk_sync;
    tmp = x + y;              # or: best = x > y ? x : y;   or: x = x + y;
    return tmp;

:mod:`revec.transforms.returns` turns a task's results into reductions where
they are combined into the returned value; it accepts locals that only accumulate
results (``total += f(...)``).  This pass, run first, moves a result-holding local's
value into its one use: an assignment ``v = e`` whose value holds the task's calls
(or locals holding them) is dropped and ``e`` replaces ``v`` where it is read, when

- that read is the only one this value of ``v`` reaches (the next assignment of ``v``
  in the same block ends it; without one, it is ``v``'s only read and this its only
  assignment in the case);
- it is in a later statement of the same block, an assignment or a ``return`` (not in a
  condition, a loop or a branch, which would run the calls a different number of times);
- nothing in between assigns ``v`` or a name ``e`` reads or leaves the block
  (``return``, ``break``, ``continue``), and the block is not a loop's body (whose next
  iteration could read the value).

The calls then happen once each, with the same arguments, as in the program as written
(the order of spawns does not matter).  Anything else is left as it is, for the
return-value pass to accept or reject with its messages.
"""

from __future__ import annotations

import dataclasses

from revec import ir
from revec.transforms.blocking import assigned_names


def forward_results(t: ir.TaskDef) -> ir.TaskDef:
    """``t`` with its result-holding temporaries moved into their uses."""
    if t.result_ty is None:
        return t
    base = _Section(t.base, t.result_ty).run()
    ind = _Section(t.inductive, t.result_ty).run()
    if base == t.base and ind == t.inductive:
        return t
    return dataclasses.replace(t, base=base, inductive=ind)


def _reads(node: ir.Stmt | ir.Expr | tuple[ir.Stmt, ...], name: str) -> int:
    return sum(1 for x in ir.walk_nodes(node) if isinstance(x, ir.Var) and x.name == name)


def _replace(e: ir.Expr, name: str, value: ir.Expr) -> ir.Expr:
    """``e`` with its reads of ``name`` replaced by ``value``."""
    if isinstance(e, ir.Var):
        if e.name != name:
            return e
        # located where the local is read: a message about the combination points at
        # the use the programmer wrote, not at the call that filled the local
        value = dataclasses.replace(value, loc=e.loc)
        return value if value.ty == e.ty else ir.Cast(e.loc, e.ty, value)
    changes: dict[str, object] = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, ir.Expr):
            changes[f.name] = _replace(v, name, value)
        elif isinstance(v, tuple) and v and all(isinstance(x, ir.Expr) for x in v):
            changes[f.name] = tuple(_replace(x, name, value) for x in v)
    return dataclasses.replace(e, **changes) if changes else e  # type: ignore[arg-type]


class _Section:
    """One case of the task (its base or inductive statements)."""

    def __init__(self, stmts: tuple[ir.Stmt, ...], result: ir.Ty) -> None:
        self.stmts = stmts
        self.result = result
        self.holders: set[str] = set()  # locals assigned results of calls

    def holds(self, e: ir.Expr) -> bool:
        return any(isinstance(x, ir.Recur) or (isinstance(x, ir.Var) and x.name in self.holders)
                   for x in ir.walk_exprs(e))

    def keeps(self, ty: ir.Ty) -> bool:
        """A local of type ``ty`` holds the task's results exactly (else the return-value
        pass rejects the narrowing where it happens, at the assignment)."""
        return ty.kind == self.result.kind and ty.dtype.itemsize >= self.result.dtype.itemsize

    def run(self) -> tuple[ir.Stmt, ...]:
        changed = True
        while changed:
            changed = False
            for x in ir.walk_nodes(self.stmts):
                if isinstance(x, ir.Assign) and x.target not in self.holders and \
                        self.holds(x.value):
                    self.holders.add(x.target)
                    changed = True
        out = self.stmts
        while True:
            new = self.block(out, in_loop=False, section=out)
            if new == out:
                return out
            out = new

    def block(self, stmts: tuple[ir.Stmt, ...], in_loop: bool,
              section: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        """One substitution in ``stmts`` or a block nested in them (the same tuple when
        there is none)."""
        for i, s in enumerate(stmts):
            match s:
                case ir.If(then=a, orelse=b):
                    na = self.block(a, in_loop, section)
                    nb = self.block(b, in_loop, section) if na == a else b
                    if na != a or nb != b:
                        return (*stmts[:i], dataclasses.replace(s, then=na, orelse=nb),
                                *stmts[i + 1:])
                case ir.For(body=body) | ir.While(body=body):
                    nbody = self.block(body, True, section)
                    if nbody != body:
                        return (*stmts[:i], dataclasses.replace(s, body=nbody),
                                *stmts[i + 1:])
        if in_loop:
            return stmts
        for i, s in enumerate(stmts):
            if isinstance(s, ir.Assign) and self.holds(s.value) and self.keeps(s.value.ty):
                new = self.forward(stmts, i, s, section)
                if new is not None:
                    return new
        return stmts

    def forward(self, stmts: tuple[ir.Stmt, ...], i: int, s: ir.Assign,
                section: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...] | None:
        v = s.target
        rest = stmts[i + 1:]
        kill = next((k for k, x in enumerate(rest) if isinstance(x, ir.Assign)
                     and x.target == v), None)
        region = rest if kill is None else rest[:kill + 1]
        if _reads(region, v) != 1:
            return None
        if kill is None and (_reads(section, v) != 1 or v in assigned_names(
                (*stmts[:i], *rest)) or sum(isinstance(x, ir.Assign) and x.target == v
                                            for x in ir.walk_nodes(section)) != 1):
            return None  # read elsewhere too (after this block), or assigned elsewhere
        j = next(k for k, x in enumerate(region) if _reads(x, v))
        use = region[j]
        names = {x.name for x in ir.walk_exprs(s.value) if isinstance(x, ir.Var)} | {v}
        if assigned_names(region[:j]) & names or any(
                isinstance(x, (ir.Return, ir.Break, ir.Continue))
                for x in ir.walk_nodes(region[:j])):
            return None  # the value changes, or a path leaves before the use
        match use:
            case ir.Assign(value=e):
                new: ir.Stmt = dataclasses.replace(use, value=_replace(e, v, s.value))
            case ir.Return(values=(e,)):
                new = dataclasses.replace(use, values=(_replace(e, v, s.value),))
            case _:
                return None
        k = i + 1 + j
        return (*stmts[:i], *stmts[i + 1:k], new, *stmts[k + 1:])

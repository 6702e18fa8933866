"""Inductive cases shaped ``<prefix without spawns>; <loop making one spawn per
iteration>`` (nqueens, minmax, uts): both back ends run such loops in lock step.

Every path through the loop body makes exactly one spawn, so iteration ``it`` of a
thread makes the thread's spawn ``it``: child block ``it`` holds one child per thread
whose loop ran ``it + 1`` times, in thread order, which is exactly the order of the
thread-by-thread execution.  A back end can therefore run the prefix of every thread,
keep the threads whose loop runs in an *active list* (their loop state), and then run
one iteration of every active thread per pass, writing child block ``it`` densely,
with no per-spawn counter and no per-spawn room check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from revec import ir
from revec.transforms.blocking import contains_return, contains_spawn, used_vars


def exact_spawns(stmts: tuple[ir.Stmt, ...]) -> int | None:
    """The number of spawns every path through ``stmts`` makes (None if it varies or
    ``stmts`` hold loops, returns, breaks or continues)."""
    total = 0
    for s in stmts:
        match s:
            case ir.Spawn():
                total += 1
            case ir.If(then=a, orelse=b):
                ka, kb = exact_spawns(a), exact_spawns(b)
                if ka is None or ka != kb:
                    return None
                total += ka
            case ir.Assign() | ir.Reduce() | ir.Unpack() | ir.ExprStmt() | ir.Store():
                pass
            case _:
                return None
    return total


@dataclass(frozen=True)
class SpawnLoop:
    """An inductive case ``<prefix without spawns>; <loop>`` whose loop body makes exactly
    one spawn per iteration: iteration ``it`` of every thread makes its spawn ``it``."""

    prefix: tuple[ir.Stmt, ...]
    loop: ir.While | ir.For


def spawn_loop(stmts: tuple[ir.Stmt, ...],
               body_ok: Callable[[tuple[ir.Stmt, ...]], bool] = lambda _: True
               ) -> SpawnLoop | None:
    """``stmts`` as a :class:`SpawnLoop` (None if they do not have that shape, or the
    back end's ``body_ok`` rejects the loop body)."""
    if not stmts or not isinstance(stmts[-1], (ir.While, ir.For)):
        return None
    prefix, loop = stmts[:-1], stmts[-1]
    if contains_spawn(prefix) or contains_return(prefix):
        return None
    if isinstance(loop, ir.For) and not isinstance(loop.step, ir.Const):
        return None
    if exact_spawns(loop.body) != 1 or not body_ok(loop.body):
        return None
    return SpawnLoop(prefix, loop)


def live_in(body: tuple[ir.Stmt, ...]) -> set[str]:
    """Names an iteration of ``body`` may read before assigning them itself (a
    conservative answer: only unconditional top-level assignments define)."""
    defined: set[str] = set()
    out: set[str] = set()
    for st in body:
        match st:
            case ir.Assign(target=t, value=v):
                out |= used_vars(v) - defined
                defined.add(t)
            case ir.Unpack(targets=ts, call=call):
                out |= used_vars(call) - defined
                defined.update(ts)
            case _:
                out |= used_vars(st) - defined
    return out


def loop_header(loop: ir.While | ir.For) -> tuple[ir.Stmt, ...]:
    """The loop's own per-iteration expressions as statements (for :func:`used_vars`)."""
    if isinstance(loop, ir.While):
        return (ir.ExprStmt(loop.loc, loop.cond),)
    return (ir.ExprStmt(loop.loc, loop.step),)


def loop_state(shape: SpawnLoop, fields: tuple[ir.Param, ...],
               locals_: dict[str, ir.Ty]) -> list[tuple[str, ir.Ty]]:
    """What an active thread carries from one iteration to the next: the frame fields
    the loop reads, the locals an iteration reads before assigning them, and the loop
    variable of a ``for`` (its stop is the back end's own)."""
    loop = shape.loop
    used = used_vars(loop.body) | used_vars(loop_header(loop))
    state = [(p.name, p.ty) for p in fields if p.name in used]
    carried = live_in(loop.body) | used_vars(loop_header(loop))
    state += [(n, ty) for n, ty in sorted(locals_.items())
              if n in carried or (isinstance(loop, ir.For) and n == loop.var)]
    return state

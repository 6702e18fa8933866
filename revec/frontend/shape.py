"""The task shape, found once for every source language.

A task body is ``if <is-base>: <base case> else: <inductive case>``, or
``if <is-base>: <base case>; return`` followed by the inductive case, optionally after
statements without spawns (the prologue) (DESIGN.md section 2).  The is-base ``if`` is
the first top-level ``if`` that has no ``else`` and whose body ends with a ``return``,
or that has an ``else`` and ends the function.  The syntax adapter says what a
statement is (:class:`IfParts`) and when a block ends with a ``return``; the splitter
knows nothing of either syntax.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

S = TypeVar("S")  # a statement node of the source syntax
E = TypeVar("E")  # an expression node of the source syntax


@dataclass(frozen=True)
class IfParts(Generic[S, E]):
    """A top-level ``if`` statement: its test, its body, its ``else`` branch (None:
    there is none; an ``elif`` is a one-statement ``else``)."""

    test: E
    then: Sequence[S]
    orelse: Sequence[S] | None


@dataclass(frozen=True)
class TaskShape(Generic[S, E]):
    """The parts of a task body, as statements of the source syntax."""

    prologue: Sequence[S]
    test: E
    base: Sequence[S]
    inductive: Sequence[S]
    has_else: bool  # the inductive case is the is-base if's else (not the statements after it)


def split_task(stmts: Sequence[S], as_if: Callable[[S], IfParts[S, E] | None],
               ends_with_return: Callable[[Sequence[S]], bool]) -> TaskShape[S, E] | None:
    """The shape of the task body ``stmts``; None if it has none (the caller reports
    the language's wording of the shape at the body's first statement)."""
    for i, node in enumerate(stmts):
        parts = as_if(node)
        if parts is None:
            continue
        if parts.orelse is None and ends_with_return(parts.then):
            return TaskShape(stmts[:i], parts.test, parts.then, stmts[i + 1:], False)
        if parts.orelse is not None and i == len(stmts) - 1:
            return TaskShape(stmts[:i], parts.test, parts.then, parts.orelse, True)
    return None


def shape_breaker(stmts: Sequence[S], as_if: Callable[[S], IfParts[S, E] | None]
                  ) -> tuple[S, str] | None:
    """Where a body without the task shape breaks it, and how (for the error's caret):
    the last top-level ``if`` is taken as the intended is-base test; the statement after
    it if it has an ``else`` (the inductive case is that ``else``), else the ``if``
    itself (its branch does not end with ``return``).  None: the body has no ``if``."""
    last = None
    for i, node in enumerate(stmts):
        parts = as_if(node)
        if parts is not None:
            last = (i, node, parts)
    if last is None:
        return None
    i, node, parts = last
    if parts.orelse is not None and i + 1 < len(stmts):
        return stmts[i + 1], ("this statement follows the if/else taken as the is-base "
                              "test, whose else is the inductive case: move it into a "
                              "branch")
    return node, ("this 'if' is taken as the is-base test, but its branch does not end "
                  "with 'return'")

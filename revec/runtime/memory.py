"""The memory budget of a run: the bytes a compiled run may hold.

A bfs schedule keeps a whole tree level live, so a wide tree can need more memory than
the machine has; a deep recursion (one that never reaches its base case) keeps a record
and a row of statistics per level.  The drivers count every allocation that grows with
the run -- thread frames and scratch, record stacks and child-block segments, per-level
statistics, each worker's own state and the packages on their way to a thief -- against
the budget and stop the run with :class:`MemoryBudgetError` instead of exhausting the
machine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from revec.errors import RevecError


def machine_memory() -> int:
    """Physical memory of this machine in bytes (0 if the OS does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0


def default_budget() -> int:
    """Half of the machine's memory (0, meaning no limit, if it is unknown)."""
    return machine_memory() // 2


def gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:.3g} GiB"


def size(nbytes: int) -> str:
    """``nbytes`` in the largest binary unit it reaches: '352 B', '5.9 KiB', '320 MiB'."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes / (1 << shift):.3g} {unit}"
    return f"{nbytes} B"


# What the drivers count, in the order of their counters (csrc/driver.c's B_* enum,
# revec.runtime.numba_support's K_*): thread frames and the kernel's scratch, the record
# stacks with their child-block segments, the per-level statistics, and the rest (each
# worker's own state, work-stealing packages)
KINDS = ("frames", "records", "levels", "other")


@dataclass(frozen=True)
class BudgetUse:
    """What a run held when it went over its budget: the bytes of each of :data:`KINDS`
    (all workers together), the kind whose growth crossed the budget, the deepest tree
    level reached, and the run's variant and workers (for what helps)."""

    held: tuple[int, ...]
    grew: str = "frames"
    depth: int = 0
    variant: str = ""
    workers: int = 1

    @classmethod
    def of(cls, held: Sequence[int], why: int, depth: int, variant: str,
           workers: int) -> BudgetUse:
        """From a driver's counters: ``why`` is 1 + the index in :data:`KINDS` of the
        kind that grew (0: unknown, taken as frames)."""
        grew = KINDS[why - 1] if 1 <= why <= len(KINDS) else "frames"
        return cls(tuple(int(b) for b in held), grew, int(depth), variant, int(workers))

    def bytes_of(self, kind: str) -> int:
        i = KINDS.index(kind)
        return self.held[i] if i < len(self.held) else 0

    def culprit(self) -> str:
        """What holds the most: "frames", "depth" (records and statistics together,
        both a row per level) or "other"."""
        parts = {"frames": self.bytes_of("frames"),
                 "depth": self.bytes_of("records") + self.bytes_of("levels"),
                 "other": self.bytes_of("other")}
        if not any(parts.values()):
            return "depth" if self.grew in ("records", "levels") else self.grew
        return max(parts, key=lambda k: parts[k])


def _what(use: BudgetUse) -> str:
    """What went over the budget, in words."""
    culprit = use.culprit()
    if culprit == "frames":
        if use.variant == "bfs":
            return f"the thread frames of a bfs level (level {use.depth:,}) do not fit"
        return f"the thread blocks held down to level {use.depth:,} do not fit"
    if culprit == "depth":
        levels = use.depth + 1
        return (f"the per-level records and statistics of a recursion {levels:,} "
                f"level{'s' if levels > 1 else ''} deep do not fit (does it reach its "
                "base case?)")
    return (f"the state of {use.workers} worker{'s' if use.workers > 1 else ''} and "
            "their work-stealing packages do not fit")


def _helps(use: BudgetUse) -> str:
    """What may help, for what went over."""
    culprit = use.culprit()
    helps: list[str] = []
    if culprit == "frames":
        helps.append("use --variant blocked or reexp" if use.variant == "bfs"
                     else "use a smaller --block-size")
    if use.workers > 1:
        helps.append("fewer --workers")
    helps.append("raise the budget with --max-memory")
    return ", ".join(helps[:-1]) + (" or " if len(helps) > 1 else "") + helps[-1]


_NAMES = {"frames": "thread frames", "records": "records", "levels": "level statistics",
          "other": "other state"}


def budget_message(budget: int, use: BudgetUse | None) -> str:
    """The message of a run over ``budget``: what exceeded it, what the run asked for
    (the bytes it held and the growth that crossed the budget) and what helps."""
    head = f"the run needs more than its memory budget of {gib(budget)}"
    if use is None:  # a driver that counts its thread frames only
        return (f"{head} for its thread frames; use a smaller --block-size, --variant "
                "blocked or reexp, or raise the budget with --max-memory")
    parts = sorted(((use.bytes_of(k), _NAMES[k]) for k in KINDS if use.bytes_of(k)),
                   reverse=True)
    asked = [f"{size(b)} of {name}" for b, name in parts]
    listed = (", ".join(asked[:-1]) + " and " + asked[-1]) if len(asked) > 1 else \
        "".join(asked)
    tail = f"; it asked for {listed}" if listed else ""
    return f"{head}: {_what(use)}{tail}; {_helps(use)}"


class MemoryBudgetError(RevecError):
    """A run needed more memory than its budget allows."""

    def __init__(self, budget: int, use: BudgetUse | None = None) -> None:
        self.budget = budget
        self.use = use
        super().__init__(budget_message(budget, use))


def out_of_memory(backend: str, budget: int) -> RevecError:
    """The error of a run whose allocation failed before it reached its budget (the
    machine, or the process's limits, have less memory than the budget)."""
    within = (f"its memory budget of {gib(budget)} is more than the memory there is; "
              "lower it with --max-memory") if budget > 0 else \
        "it ran without a memory budget; give it one with --max-memory"
    return RevecError(f"out of memory: the {backend} back end could not allocate what the "
                      f"run holds ({within}, and the run stops with what it needed)")


def parse_size(text: str) -> int:
    """'8G', '512M', '1.5GiB', '1000000' -> bytes (a user error for anything else)."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    try:
        if t and t[-1] in scale:
            value = float(t[:-1]) * scale[t[-1]]
        else:
            value = float(t)
    except ValueError:
        raise RevecError(f"cannot read memory size {text!r} (e.g. 8G, 512M, 1000000)") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise RevecError(f"cannot read memory size {text!r} (e.g. 8G, 512M, 1000000)")
    if value < 0:
        raise RevecError(f"memory size must not be negative, got {text!r}")
    check_budget(int(value), text)
    return int(value)


# the largest budget the drivers can count (their byte counts are signed 64-bit)
MAX_BUDGET = 2**63 - 1


def check_budget(value: int, spelled: str | None = None) -> None:
    """A memory budget the drivers can hold; a larger one is a user error (0: none)."""
    if value > MAX_BUDGET:
        shown = spelled if spelled is not None else str(value)
        raise RevecError(f"memory size {shown} is more than revec can count (at most "
                         f"{MAX_BUDGET} bytes, 8 EiB); pass 0 for no limit")

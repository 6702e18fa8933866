"""The memory budget of a run: thread frames may use at most this many bytes.

A bfs schedule keeps a whole tree level live, so a wide tree can need more memory than
the machine has; the drivers check every growth of the frame arrays against the budget
and stop the run with :class:`MemoryBudgetError` instead of exhausting the machine.
"""

from __future__ import annotations

import os

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


class MemoryBudgetError(RevecError):
    """A run needed more memory for its thread frames than its budget allows."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        super().__init__(
            f"the run needs more than its memory budget of {gib(budget)} for thread frames "
            "(a bfs level is too wide); use --variant blocked or reexp, a smaller "
            "--block-size, or raise the budget with --max-memory")


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

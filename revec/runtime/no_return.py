"""A helper that reaches the end of its body without returning a value.

Python returns ``None`` there; a compiled helper has no such value.  The checker accepts
a helper with such a path (a chain of ``if``/``elif`` whose last case has no ``else``)
because the path may never be taken; when a run takes it, the run stops with a located
error at the helper: the numba helper raises :class:`NoReturnValue`, the C helper
leaves its worker through the driver (``rv_no_return``, failure code ``RV_NO_RETURN``
plus the helper's index), and the NumPy back end checks its lanes.
"""

from __future__ import annotations

from revec import ir
from revec.errors import RevecError

RV_NO_RETURN = 16  # csrc/driver.h: the C driver's failure code of helper 0


class NoReturnValue(Exception):
    """Raised by a compiled numba helper that fell off its end; ``args[0]`` is the
    helper's key in :attr:`revec.ir.Program.helpers`."""


def no_return_error(program: ir.Program, key: str) -> RevecError:
    """The located error of the helper ``key`` reaching its end without a value."""
    h = program.helpers[key]
    name = key.split("__")[0] or key  # a specialization's key: name__types
    return RevecError(f"'{name}' reached the end of its body without returning a value: "
                      "a path through it has no 'return' (return a value on every path)",
                      h.loc)


def helper_index(program: ir.Program, key: str) -> int:
    """The helper's number in the C driver's failure code."""
    return list(program.helpers).index(key)


def c_no_return_error(program: ir.Program, rc: int) -> RevecError | None:
    """The error of the C driver's failure code ``rc``, if it is a helper's."""
    k = rc - RV_NO_RETURN
    keys = list(program.helpers)
    if 0 <= k < len(keys):
        return no_return_error(program, keys[k])
    return None

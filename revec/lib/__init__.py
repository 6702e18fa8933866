"""Runtime-library functions callable from task programs.

A program imports them by name (``from revec.lib import sha1_spawn``).  Each
:class:`LibFunction` carries the same function three times: a plain-Python
version (the sequential reference calls it), a numba-compilable version (the
numba back end calls it) and a C definition (the C back end pastes it).  The
front end types calls from ``arg_types`` / ``result_types``; a function with
more than one result returns a tuple and is called as ``a, b = f(...)``.

C convention: ``static inline`` definition named ``revec_lib_<name>``; one
result is returned, several are written through trailing pointer arguments in
order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class LibFunction:
    name: str
    arg_types: tuple[np.dtype[Any], ...]
    result_types: tuple[np.dtype[Any], ...]
    py: Callable[..., Any]
    numba: Callable[..., Any]
    c_source: str


LIBRARY: dict[str, LibFunction] = {}


def register(fn: LibFunction) -> Callable[..., Any]:
    """Add ``fn`` to the library; returns its Python version for module-level export."""
    LIBRARY[fn.name] = fn
    return fn.py


def _load_all() -> None:
    # Library modules register themselves on import.
    from importlib import import_module

    for mod in ("uts",):
        try:
            import_module(f"revec.lib.{mod}")
        except ModuleNotFoundError as err:  # module not written yet
            if err.name != f"revec.lib.{mod}":
                raise


def __getattr__(name: str) -> Any:
    _load_all()
    if name in LIBRARY:
        return LIBRARY[name].py
    raise AttributeError(name)

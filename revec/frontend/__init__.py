"""Front end: a program file (Python, or Cilk C) -> checked :class:`revec.ir.Program`.

Two syntax adapters, :mod:`revec.frontend.python` (libcst) and :mod:`revec.frontend.c`
(pycparser), walk their trees and call one core: the IR builder
(:mod:`revec.frontend.builder`: sections, locals, the spawn / reduce / recursion /
call checks), the task-shape splitter (:mod:`revec.frontend.shape`), each language's
type rules (:mod:`revec.frontend.rules`) and the program assembly with the passes every
front end shares and the depth guard (:mod:`revec.frontend.assemble`).
"""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np

from revec import ir
from revec.errors import RevecError
from revec.frontend.python import load_python_program, load_python_source
from revec.frontend.user_file import C_SUFFIXES

__all__ = ["arg_value", "load_program", "load_program_source"]


def load_program(path: str | Path) -> ir.Program:
    """Check a program file.  A ``.c`` (or Cilk-5 ``.cilk``) file is a Cilk C program
    (:mod:`revec.frontend.c`), any other a Python one (:mod:`revec.frontend.python`: its
    module level is executed once, in a fresh module)."""
    if Path(path).suffix in C_SUFFIXES:
        from revec.frontend.c import load_c_program

        return load_c_program(path)
    return load_python_program(path)


def load_program_source(name: str, text: str, namespace: types.ModuleType) -> ir.Program:
    """Check a program whose module is already live (a task imported from a package,
    defined in a script or in a notebook cell): ``text`` is its source (from
    ``inspect``/``linecache``), ``namespace`` its globals; nothing is executed."""
    return load_python_source(name, text, namespace)


def arg_value(param: ir.Param, text: str) -> object:
    """Parse a command-line root argument for ``param`` (range-checked)."""
    dt = param.ty.dtype
    try:
        if dt.kind == "b":
            low = text.strip().lower()
            if low not in ("true", "false", "0", "1"):
                raise ValueError(text)
            return np.bool_(low in ("true", "1"))
        if dt.kind == "f":
            return dt.type(float(text))
        value = int(text, 0)
    except ValueError:
        raise RevecError(f"argument '{param.name}': {text!r} is not a valid "
                         f"{dt.name} value") from None
    info = np.iinfo(dt)
    if not info.min <= value <= info.max:
        raise RevecError(f"argument '{param.name}': {value} is out of range for {dt.name} "
                         f"[{info.min}, {info.max}]")
    return dt.type(value)


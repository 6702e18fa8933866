"""The Python front end: a libcst syntax adapter on the front-end core.

:mod:`.source` parses (Python's parser for syntax errors, then libcst with positions)
and executes the module level once; :mod:`.module` reads the reducer declarations and
lowers each ``@task`` function with :mod:`.lower`, which walks libcst trees and calls the
core's IR builder (:mod:`revec.frontend.builder`) with NumPy 2's type rules.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

from revec import ir
from revec.frontend.assemble import depth_guard
from revec.frontend.python.module import check_module, static_reducer_checks
from revec.frontend.python.source import parse_source, read_source

TOO_DEEP = ("the program nests too deeply for the checker (expressions or chains of helper "
            "calls thousands of levels deep); split long expressions into statements")


Sizes = dict[tuple[str, str], int]


# the types of unannotated task parameters: (task, parameter) -> type
Types = dict[tuple[str, str], Any]


def load_python_program(path: str | Path, sizes: Sizes | None = None,
                        types_: Types | None = None) -> ir.Program:
    """Check a Python program file: its module level is executed once (a fresh module).
    ``sizes``: the root values of the parameters that bound task-private lists;
    ``types_``: the types of unannotated task parameters (the program specialised for
    a root call, :attr:`revec.ir.Program.specialize`)."""
    with depth_guard(path, TOO_DEEP):
        src = read_source(path)
        static_reducer_checks(src)
        program = check_module(src, None, sizes, types_)

    def again(new: Sizes | None = None, new_types: Types | None = None) -> ir.Program:
        return load_python_program(path, sizes if new is None else new,
                                   types_ if new_types is None else new_types)

    program.specialize = again
    return program


def load_python_source(name: str, text: str, namespace: types.ModuleType) -> ir.Program:
    """Check a program whose module is already live: ``text`` is its source, ``namespace``
    its globals; nothing is executed."""
    return _live(name, text, namespace, None, None)


def _live(name: str, text: str, namespace: types.ModuleType, sizes: Sizes | None,
          types_: Types | None) -> ir.Program:
    with depth_guard(name, TOO_DEEP):
        src = parse_source(name, text)
        static_reducer_checks(src)
        program = check_module(src, namespace, sizes, types_)

    def again(new: Sizes | None = None, new_types: Types | None = None) -> ir.Program:
        return _live(name, text, namespace, sizes if new is None else new,
                     types_ if new_types is None else new_types)

    program.specialize = again
    return program

"""The module a Python task program lives in, as its functions' lowering sees it."""

from __future__ import annotations

import types
from typing import Any

import libcst as cst

from revec import ir
from revec.frontend.builder import ProgramBuilder
from revec.frontend.python.source import ParsedSource


class ProgramContext(ProgramBuilder):
    """The parsed file, its executed module (constants, arrays, reducers, task
    objects), its module-level functions and its reducers."""

    def __init__(self, src: ParsedSource, module: types.ModuleType,
                 functions: dict[str, cst.FunctionDef],
                 reducers: dict[str, ir.ReducerDecl]) -> None:
        super().__init__(src.loc)
        self.src = src
        self.module = module
        self.functions = functions
        self.reducers = reducers
        # unannotated task parameters: their types given by a root call
        # ((task, parameter) -> type), and the types each task's were checked with
        self.types: dict[tuple[str, str], Any] = {}
        self.untyped: dict[str, dict[str, Any]] = {}

    def globals(self) -> dict[str, Any]:
        return self.module.__dict__

    def text(self, node: cst.CSTNode) -> str:
        """The source text of ``node`` (for messages)."""
        return self.src.module.code_for_node(node)

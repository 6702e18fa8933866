"""The file a Cilk C program lives in, as its functions' lowering sees it: its
functions, prototypes, typedefs and file-scope variables, and which functions are
tasks (filled in by :mod:`revec.frontend.c.file_scope`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from pycparser import c_ast

from revec import ir
from revec.errors import SourceLoc
from revec.frontend.builder import ProgramBuilder
from revec.frontend.c.source import CSource
from revec.frontend.c.typenames import from_specifiers
from revec.ir import Ty
from revec.lib import LIBRARY, LibFunction


@dataclasses.dataclass
class Global:
    """A file-scope variable: a scalar constant or an array."""

    name: str
    ty: Ty
    loc: SourceLoc
    value: Any = None  # scalar constant value
    array: np.ndarray | None = None
    const: bool = True


class CProgramContext(ProgramBuilder):
    def __init__(self, src: CSource) -> None:
        super().__init__(src.loc)
        self.src = src
        self.functions: dict[str, c_ast.FuncDef] = {}
        self.protos: dict[str, c_ast.Decl] = {}
        self.globals: dict[str, Global] = {}
        self.typedefs: dict[str, Ty | None] = {}
        self.tasks: set[str] = set()
        # bounds (revec.frontend.c.bounds): their reducers, the ifs that update them
        self.bounds: dict[str, ir.ReducerDecl] = {}
        self.bound_updates: set[int] = set()

    def type_of(self, tnode: c_ast.Node, what: str) -> Ty | None:
        """A scalar type (None: void) of a declaration's type node."""
        if isinstance(tnode, c_ast.PtrDecl):
            self.error(f"pointers are not supported ({what}); pass values, return results",
                       tnode)
        if isinstance(tnode, c_ast.TypeDecl):
            inner = tnode.type
            if isinstance(inner, c_ast.IdentifierType):
                names = list(inner.names)
                if len(names) == 1 and names[0] in self.typedefs:
                    return self.typedefs[names[0]]
                try:
                    return from_specifiers(names)
                except ValueError as err:
                    self.error(str(err), tnode)
            kind = type(inner).__name__.lower()
            self.error(f"{kind} types are not supported ({what})", tnode)
        if isinstance(tnode, c_ast.Typename):
            return self.type_of(tnode.type, what)
        self.error(f"this type is not supported ({what})", tnode)

    def lib(self, name: str) -> LibFunction | None:
        """The revec.lib function a prototype of this file declares."""
        if name not in self.protos:
            return None
        import revec.lib as lib_pkg

        lib_pkg._load_all()
        return LIBRARY.get(name)

"""The file a Cilk C program lives in, as its functions' lowering sees it: its
functions, prototypes, typedefs and file-scope variables, and which functions are
tasks (filled in by :mod:`revec.frontend.c.file_scope`)."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import numpy as np
from pycparser import c_ast

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.frontend.builder import ProgramBuilder
from revec.frontend.c.source import CSource
from revec.frontend.c.typenames import from_specifiers
from revec.ir import Ty
from revec.lib import LIBRARY, LibFunction


@dataclasses.dataclass
class Global:
    """A file-scope variable: a scalar constant, an array, or a pointer that ``main``
    fills (an input of the program, supplied by the caller)."""

    name: str
    ty: Ty | None
    loc: SourceLoc
    value: Any = None  # scalar constant value
    array: np.ndarray | None = None
    const: bool = True
    # a pointer: its input's key (scalar elements), or its struct's fields and their
    # inputs' keys (an array of structs, read as a structure of arrays)
    input: str | None = None
    fields: tuple[tuple[str, str], ...] = ()
    struct: str = ""  # the struct's spelling in messages ("struct item")
    # why a task cannot read it (a message for where one does, or the located error
    # found in its declaration): a struct value, a pointer to pointers, ... that only
    # main may use
    unusable: str | RevecError | None = None

    @property
    def pointer(self) -> bool:
        return self.input is not None or bool(self.fields)


@dataclasses.dataclass(frozen=True)
class StructField:
    name: str
    ty: Ty


class CProgramContext(ProgramBuilder):
    def __init__(self, src: CSource) -> None:
        super().__init__(src.loc)
        self.src = src
        self.functions: dict[str, c_ast.FuncDef] = {}
        self.protos: dict[str, c_ast.Decl] = {}
        self.globals: dict[str, Global] = {}
        self.typedefs: dict[str, Ty | None] = {}
        # typedefs of types revec cannot read: the error, raised where one is used
        self.bad_typedefs: dict[str, RevecError] = {}
        self.tasks: set[str] = set()
        # the tasks that must be in the subset (the others, serial variants, are left
        # out if they are not), and the functions the tasks reach
        self.roots: set[str] = set()
        self.reachable: set[str] = set()
        # bounds (revec.frontend.c.bounds): their reducers, the ifs that update them
        self.bounds: dict[str, ir.ReducerDecl] = {}
        self.bound_updates: set[int] = set()
        # statements counting with a global nothing the tasks run reads (counters.py)
        self.counter_stmts: set[int] = set()
        # struct and union definitions by tag ("struct item"), typedef names of them
        self.structs: dict[str, c_ast.Struct | c_ast.Union] = {}
        self.struct_typedefs: dict[str, c_ast.Struct | c_ast.Union] = {}

    def snapshot(self) -> dict[str, Any]:
        """Copies of the context's tables (to undo a function's lowering)."""
        return {k: copy.copy(v) for k, v in vars(self).items()
                if isinstance(v, (dict, set, list))}

    def restore(self, saved: dict[str, Any]) -> None:
        for k, v in saved.items():
            setattr(self, k, v)

    # ------------------------------------------------------------------ structs
    def record(self, node: c_ast.Struct | c_ast.Union) -> None:
        """Note a struct (union) definition met anywhere in a declaration."""
        if node.decls is not None and node.name is not None:
            self.structs.setdefault(_tag(node), node)

    def struct_of(self, tnode: c_ast.Node) -> c_ast.Struct | c_ast.Union | None:
        """The struct (or union) type a declaration's type node names (``struct item``,
        a typedef of one), with its fields; None when it names another type."""
        if isinstance(tnode, c_ast.Typename):
            tnode = tnode.type
        if not isinstance(tnode, c_ast.TypeDecl):
            return None
        inner = tnode.type
        if isinstance(inner, c_ast.IdentifierType) and len(inner.names) == 1:
            inner = self.struct_typedefs.get(inner.names[0], inner)
        if not isinstance(inner, (c_ast.Struct, c_ast.Union)):
            return None
        self.record(inner)
        if inner.decls is None:
            found = self.structs.get(_tag(inner)) if inner.name is not None else None
            if found is None:
                self.error(f"{_tag(inner)} is declared but not defined in this file; revec "
                           "needs its fields", tnode)
            return found
        return inner

    def struct_fields(self, node: c_ast.Struct | c_ast.Union, where: c_ast.Node,
                      spelled: str) -> list[StructField]:
        """The fields of a struct read as a structure of arrays: scalars only (nested
        structs, unions, pointers, arrays and bit-fields are located errors)."""
        if isinstance(node, c_ast.Union):
            self.error(f"{spelled} is a union; unions are not supported (an array of "
                       "structs with scalar fields is)", where)
        if not node.decls:
            self.error(f"{spelled} has no fields", where)
        out: list[StructField] = []
        for d in node.decls:
            what = f"field '{d.name}' of {spelled}"
            if d.bitsize is not None:
                self.error(f"{what} is a bit-field; bit-fields are not supported", d)
            if isinstance(d.type, c_ast.PtrDecl):
                self.error(f"{what} is a pointer; a struct read as arrays has scalar "
                           "fields only (no pointers)", d)
            if isinstance(d.type, c_ast.ArrayDecl):
                self.error(f"{what} is an array; a struct read as arrays has scalar fields "
                           "only", d)
            inner = self.struct_of(d.type) if isinstance(d.type, c_ast.TypeDecl) else None
            if inner is not None or isinstance(getattr(d.type, "type", None),
                                               (c_ast.Struct, c_ast.Union)):
                kind = "a union" if isinstance(inner, c_ast.Union) else "a struct"
                self.error(f"{what} is {kind}; nested structs are not supported (give "
                           "the outer struct the inner one's scalar fields)", d)
            ty = self.type_of(d.type, what)
            if ty is None:
                self.error(f"{what} has type void", d)
            out.append(StructField(d.name, ty))
        return out

    def type_of(self, tnode: c_ast.Node, what: str) -> Ty | None:
        """A scalar type (None: void) of a declaration's type node."""
        if isinstance(tnode, c_ast.PtrDecl):
            self.error(f"pointers are not supported ({what}); pass values, return results",
                       tnode)
        struct = self.struct_of(tnode)
        if struct is not None:
            if isinstance(struct, c_ast.Union):
                self.error(f"unions are not supported ({what})", tnode)
            self.error(f"struct values are not supported ({what}); an array of structs is "
                       f"read through a pointer (const {spelling(tnode)} *e)", tnode)
        if isinstance(tnode, c_ast.TypeDecl):
            inner = tnode.type
            if isinstance(inner, c_ast.IdentifierType):
                names = list(inner.names)
                if len(names) == 1 and names[0] in self.typedefs:
                    return self.typedefs[names[0]]
                if len(names) == 1 and names[0] in self.bad_typedefs:
                    err = self.bad_typedefs[names[0]]
                    where = f" (at line {err.loc.line})" if err.loc is not None else ""
                    self.error(f"{what}: its type '{names[0]}'{where}: {err.message}", tnode)
                try:
                    return from_specifiers(names)
                except ValueError as err:
                    self.error(str(err), tnode)
            kind = type(inner).__name__.lower()
            self.error(f"{kind} types are not supported ({what})", tnode)
        if isinstance(tnode, c_ast.Typename):
            return self.type_of(tnode.type, what)
        if isinstance(tnode, (c_ast.Struct, c_ast.Union)):  # a declaration of the type only
            kind = "struct" if isinstance(tnode, c_ast.Struct) else "union"
            tag = _tag(tnode) if tnode.name else f"{kind} S"
            self.error(f"{kind} types are declared at file scope: revec reads structs only as "
                       f"arrays of structs passed by pointer (const {tag} *e, "
                       "e[i].field), with the struct defined outside the functions", tnode)
        if isinstance(tnode, c_ast.Enum):
            self.error("enum types are not supported; name the constants with #define",
                       tnode)
        self.error(f"this type is not supported ({what})", tnode)

    def lib(self, name: str) -> LibFunction | None:
        """The revec.lib function a prototype of this file declares."""
        if name not in self.protos:
            return None
        import revec.lib as lib_pkg

        lib_pkg._load_all()
        return LIBRARY.get(name)


def _tag(node: c_ast.Struct | c_ast.Union) -> str:
    return f"{'union' if isinstance(node, c_ast.Union) else 'struct'} {node.name}"


def spelling(tnode: c_ast.Node) -> str:
    """A struct type as the declaration spells it: ``struct item`` or ``item_t``."""
    inner = getattr(tnode, "type", None)
    if isinstance(inner, c_ast.IdentifierType):
        return " ".join(inner.names)
    if isinstance(inner, (c_ast.Struct, c_ast.Union)):
        return _tag(inner) if inner.name is not None else (
            f"{'union' if isinstance(inner, c_ast.Union) else 'struct'} {{...}}")
    return "struct"

"""Typedefs of array and pointer types, written out where they are used.

``typedef int row_t[8]; row_t b;`` declares the array ``int b[8]``, and
``typedef const int *cursor; long f(cursor p)`` the pointer parameter ``const int *p``:
the lowering reads arrays and pointers from the declaration's own type nodes, so each
use of such a typedef name gets a copy of the typedef's type (its declared name and
qualifiers the use's; its positions the use's, so a message about the type points at
the use).  Typedefs of scalar and struct types stay names
(:class:`revec.frontend.c.context.CProgramContext` reads them).
"""

from __future__ import annotations

import copy

from pycparser import c_ast

from revec.frontend.c.syntax import walk

_DERIVED = (c_ast.ArrayDecl, c_ast.PtrDecl, c_ast.FuncDecl)


def expand_typedefs(ast: c_ast.FileAST) -> None:
    """Write out the file-scope typedefs of array, pointer and function types in
    ``ast`` (in place)."""
    table: dict[str, c_ast.Node] = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.Typedef):
            ext.type = _expand(ext.type, table)
            if isinstance(ext.type, _DERIVED):
                table[ext.name] = ext.type
        else:
            for node in walk(ext):
                if isinstance(node, (c_ast.Decl, c_ast.Typename, c_ast.Typedef)):
                    node.type = _expand(node.type, table)


def _expand(t: c_ast.Node, table: dict[str, c_ast.Node]) -> c_ast.Node:
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and \
            len(t.type.names) == 1 and t.type.names[0] in table:
        new = copy.deepcopy(table[t.type.names[0]])
        for n in walk(new):
            n.coord = t.coord
        inner = new
        while isinstance(inner, _DERIVED):
            if isinstance(inner, c_ast.ArrayDecl):
                inner.dim_quals = list(inner.dim_quals or [])
            inner = inner.type
        if isinstance(inner, c_ast.TypeDecl):
            inner.declname = t.declname
            # qualifiers of the use: of the pointer for a pointer type, of the elements
            # for an array type (C11 6.7.3p9)
            if isinstance(new, c_ast.PtrDecl):
                new.quals = [*(new.quals or []), *(q for q in t.quals or []
                                                   if q not in (new.quals or []))]
            else:
                inner.quals = [*(inner.quals or []), *(q for q in t.quals or []
                                                       if q not in (inner.quals or []))]
        return new
    if isinstance(t, _DERIVED):
        t.type = _expand(t.type, table)
    return t

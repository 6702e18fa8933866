"""A Cilk C file's top level: typedefs, functions and prototypes, file-scope constants
and arrays (their initializers evaluated as C constant expressions), and which
functions are tasks (those that spawn or call themselves)."""

from __future__ import annotations

from typing import Any

import numpy as np
from pycparser import c_ast

from revec import ir
from revec.frontend.c.context import CProgramContext, Global
from revec.frontend.c.lower import CFunction
from revec.frontend.c.source import SPAWN_TYPES, SYNC_NAMES
from revec.frontend.c.syntax import is_spawn, walk
from revec.frontend.rules.c99 import I64
from revec.ir import Ty

# names the front end's prelude declares (<stdint.h>, the Cilk keywords)
PRELUDE_NAMES = {"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
                 "uint32_t", "uint64_t", "bool", "size_t", "ptrdiff_t", "intptr_t",
                 "uintptr_t", *SPAWN_TYPES, *SYNC_NAMES}


def read_file_scope(ctx: CProgramContext) -> None:
    """Fill ``ctx`` from the file's top level."""
    for ext in ctx.src.ast.ext:
        if isinstance(ext, c_ast.Typedef):
            if ext.name in PRELUDE_NAMES:
                continue
            ctx.typedefs[ext.name] = ctx.type_of(ext.type, f"typedef {ext.name}")
        elif isinstance(ext, c_ast.FuncDef):
            name = ext.decl.name
            if name in ctx.functions:
                ctx.error(f"function '{name}' is defined twice", ext)
            ctx.functions[name] = ext
        elif isinstance(ext, c_ast.Decl):
            if ext.name in SYNC_NAMES:
                continue
            if isinstance(ext.type, c_ast.FuncDecl):
                ctx.protos[ext.name] = ext
            else:
                _global_decl(ctx, ext)
        elif isinstance(ext, c_ast.Pragma):
            continue
        else:
            ctx.error("this file-scope construct is not supported", ext)
    for name, fdef in ctx.functions.items():
        if name == "main":
            continue
        nodes = walk(fdef.body)
        if any(is_spawn(n) for n in nodes) or any(
                isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)
                and n.name.name == name for n in nodes):
            ctx.tasks.add(name)


def _global_decl(ctx: CProgramContext, d: c_ast.Decl) -> None:
    const = "const" in (d.quals or [])
    t = d.type
    if isinstance(t, c_ast.ArrayDecl):
        dims: list[c_ast.Node | None] = []
        while isinstance(t, c_ast.ArrayDecl):
            dims.append(t.dim)
            const = const or "const" in (t.type.quals or []) if isinstance(
                t.type, c_ast.TypeDecl) else const
            t = t.type
        ty = ctx.type_of(t, f"array '{d.name}'")
        if ty is None:
            ctx.error("arrays of void", d)
        const = const or "const" in (getattr(t, "quals", None) or [])
        values = _init_values(ctx, d.init, ty, len(dims), d)
        shape = _array_shape(ctx, dims, values, d)
        arr = np.zeros(shape, dtype=ty.dtype)
        _fill(ctx, arr, values, d)
        arr.setflags(write=False)
        ctx.globals[d.name] = Global(d.name, ty, ctx.src.loc(d), array=arr, const=const)
        return
    ty = ctx.type_of(t, f"'{d.name}'")
    if ty is None:
        ctx.error("a variable of type void", d)
    const = const or "const" in (getattr(t, "quals", None) or [])
    value: Any = 0
    if d.init is not None:
        value = _const_value(ctx, d.init, ty)
    ctx.globals[d.name] = Global(d.name, ty, ctx.src.loc(d), value=value, const=const)


def _const_value(ctx: CProgramContext, node: c_ast.Node, ty: Ty) -> Any:
    lowerer = CFunction(ctx, None, "const")
    e = lowerer.convert(lowerer.expr(node), ty)
    if not isinstance(e, ir.Const):
        ctx.error("a file-scope initializer must be a constant expression", node)
    return e.value


def _init_values(ctx: CProgramContext, init: c_ast.Node | None, ty: Ty, ndim: int,
                 d: c_ast.Node) -> Any:
    if init is None:
        return []
    if ndim == 0:
        return _const_value(ctx, init, ty)
    if not isinstance(init, c_ast.InitList):
        ctx.error("an array is initialized with { ... }", init)
    return [_init_values(ctx, x, ty, ndim - 1, d) for x in init.exprs]


def _array_shape(ctx: CProgramContext, dims: list[c_ast.Node | None], values: Any,
                 d: c_ast.Node) -> tuple[int, ...]:
    shape = []
    level = values
    for dim in dims:
        if dim is None:
            n = len(level) if isinstance(level, list) else 0
        else:
            n = int(_const_value(ctx, dim, I64))
        if n <= 0:
            ctx.error(f"array '{getattr(d, 'name', '')}' needs a positive size", d)
        shape.append(n)
        level = level[0] if isinstance(level, list) and level else []
    return tuple(shape)


def _fill(ctx: CProgramContext, arr: np.ndarray, values: Any, d: c_ast.Node,
          prefix: tuple[int, ...] = ()) -> None:
    if not isinstance(values, list):
        arr[prefix] = values
        return
    if len(values) > arr.shape[len(prefix)]:
        ctx.error("too many initializers for the array", d)
    for i, v in enumerate(values):
        _fill(ctx, arr, v, d, (*prefix, i))

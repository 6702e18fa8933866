"""A Cilk C file's top level: typedefs, functions and prototypes, file-scope constants
and arrays (their initializers evaluated as C constant expressions), and which
functions are tasks (those that spawn or call themselves).

Only what the tasks reach is checked: a typedef or a file-scope variable revec cannot
read is an error where a task or helper uses it (``main``, printing and other code the
tasks never call may use anything), and the declarations of revec's own headers
(``<stdio.h>``, ...) are read for their typedefs and prototypes only."""

from __future__ import annotations

from typing import Any

import numpy as np
from pycparser import c_ast

from revec import ir
from revec.errors import RevecError
from revec.frontend.c.context import CProgramContext, Global, spelling
from revec.frontend.c.lower import CFunction
from revec.frontend.c.syntax import SPAWN_TYPES, SYNC_NAMES, is_spawn, walk
from revec.frontend.c.typenames import TYPEDEFS
from revec.frontend.rules.c99 import I64
from revec.ir import Ty

# names the front end's prelude declares (<stdint.h>, the Cilk keywords)
PRELUDE_NAMES = {*TYPEDEFS, *SPAWN_TYPES, *SYNC_NAMES}


def read_file_scope(ctx: CProgramContext) -> None:
    """Fill ``ctx`` from the file's top level."""
    for ext in ctx.src.ast.ext:
        if isinstance(ext, c_ast.Typedef):
            if ext.name in PRELUDE_NAMES or isinstance(
                    ext.type, (c_ast.ArrayDecl, c_ast.PtrDecl, c_ast.FuncDecl)):
                continue  # the prelude's, or written out where used (.typedefs)
            inner = getattr(ext.type, "type", None)
            if isinstance(ext.type, c_ast.TypeDecl) and isinstance(
                    inner, (c_ast.Struct, c_ast.Union)):
                ctx.record(inner)
                ctx.struct_typedefs[ext.name] = inner
                continue
            try:
                ctx.typedefs[ext.name] = ctx.type_of(ext.type, f"typedef {ext.name}")
            except RevecError as err:  # an error where a task or helper uses it
                ctx.bad_typedefs[ext.name] = err
        elif ctx.src.is_revec_header(ext) and not (
                isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl)):
            continue  # stdin, stdout, ...: for main
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
            elif ext.name is None and isinstance(ext.type, (c_ast.Struct, c_ast.Union)):
                ctx.record(ext.type)  # a struct definition (or a forward declaration)
            else:
                try:
                    _global_decl(ctx, ext)
                except RevecError as err:  # an error where a task or helper reads it
                    ctx.globals[ext.name] = Global(ext.name, None, ctx.src.loc(ext),
                                                   unusable=err)
        elif isinstance(ext, c_ast.Pragma):
            continue
        else:
            ctx.error("this file-scope construct is not supported", ext)
    for g in ctx.globals.values():
        for _, key in g.fields:
            if key in ctx.globals:
                ctx.error(f"the input of field '{key[len(g.name) + 1:]}' of '{g.name}' would "
                          f"be named '{key}', which the file already uses", ctx.globals[key].loc)
    spawning: set[str] = set()
    recursive: set[str] = set()
    for name, fdef in ctx.functions.items():
        if name == "main":
            continue
        if any(is_spawn(n) for n in walk(fdef.body)):
            spawning.add(name)
        if name in calls(fdef):
            recursive.add(name)
    ctx.tasks = spawning | recursive
    # the tasks that must be in the subset: the recursive functions that spawn (in a
    # file without any, the recursive functions).  The others are left out when they
    # are not in the subset: serial variants (recursive, no spawns), root callers that
    # spawn the task (BOTS's fib0, a driver)
    ctx.roots = (spawning & recursive) or recursive
    ctx.reachable = reachable(ctx, ctx.tasks)


def calls(fdef: c_ast.FuncDef) -> set[str]:
    """The names of the functions ``fdef`` calls."""
    return {n.name.name for n in walk(fdef.body)
            if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)}


def reachable(ctx: CProgramContext, start: set[str]) -> set[str]:
    """The functions of the file that ``start`` calls, directly or through others (and
    ``start``), ``main`` aside."""
    seen: set[str] = set()
    todo = [n for n in start if n in ctx.functions]
    while todo:
        name = todo.pop()
        if name in seen or name == "main":
            continue
        seen.add(name)
        todo += [c for c in calls(ctx.functions[name]) if c in ctx.functions]
    return seen


def _global_decl(ctx: CProgramContext, d: c_ast.Decl) -> None:
    const = "const" in (d.quals or [])
    t = d.type
    base = t
    while isinstance(base, (c_ast.ArrayDecl, c_ast.PtrDecl)):
        base = base.type
    if isinstance(getattr(base, "type", None), (c_ast.Struct, c_ast.Union)):
        ctx.record(base.type)  # struct item { ... } *items;
    if isinstance(t, c_ast.PtrDecl):
        _pointer_global(ctx, d)
        return
    if ctx.struct_of(base) is not None:
        ctx.globals[d.name] = Global(d.name, None, ctx.src.loc(d), unusable=(
            f"'{d.name}' is a file-scope struct variable, which revec does not read; a "
            "task reads an array of structs through a pointer main fills "
            f"(static {spelling(base)} *{d.name};)"))
        return
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


def _pointer_global(ctx: CProgramContext, d: c_ast.Decl) -> None:
    """A file-scope pointer (``static int *matrix;``) that ``main`` fills: an input of
    the program the caller supplies (a pointer to structs: one input per field,
    ``<name>_<field>``).  A pointer a task cannot read that way is an error where a
    task reads it (``main`` may use it as it likes)."""
    loc = ctx.src.loc(d)
    inner = d.type.type
    if d.init is not None and not _null(d.init):
        ctx.globals[d.name] = Global(d.name, None, loc, unusable=(
            f"'{d.name}' is initialized in its declaration; a file-scope pointer that tasks "
            "read is filled by main and supplied by the caller (declare it without an "
            "initializer, or make it a const array)"))
        return
    if isinstance(inner, (c_ast.PtrDecl, c_ast.ArrayDecl, c_ast.FuncDecl)):
        ctx.globals[d.name] = Global(d.name, None, loc, unusable=(
            f"'{d.name}' is a pointer to pointers (or arrays); a file-scope input is one "
            "flat array: index it m[i * n + j]"))
        return
    try:
        struct = ctx.struct_of(inner)
        if struct is not None:
            fields = ctx.struct_fields(struct, d, spelling(inner))
            keys = []
            for f in fields:
                key = f"{d.name}_{f.name}"
                ctx.inputs[key] = ir.InputDecl(key, f.ty.dtype, 1, loc, None, d.name, f.name)
                ctx.arrays[key] = np.zeros(0, f.ty.dtype)
                keys.append((f.name, key))
            ctx.globals[d.name] = Global(d.name, None, loc, const=False, fields=tuple(keys),
                                         struct=spelling(inner))
            return
        ty = ctx.type_of(inner, f"the elements of '{d.name}'")
    except RevecError as err:
        ctx.globals[d.name] = Global(d.name, None, loc, unusable=err)
        return
    if ty is None:
        ctx.globals[d.name] = Global(d.name, None, loc, unusable=(
            f"'{d.name}' points to void; give the elements a type"))
        return
    ctx.inputs[d.name] = ir.InputDecl(d.name, ty.dtype, 1, loc, None, d.name)
    ctx.arrays[d.name] = np.zeros(0, ty.dtype)
    ctx.globals[d.name] = Global(d.name, ty, loc, const=False, input=d.name)


def _null(node: c_ast.Node) -> bool:
    """``0``, ``NULL`` or ``(void *)0``: a pointer that points nowhere yet."""
    if isinstance(node, c_ast.Cast):
        node = node.expr
    return (isinstance(node, c_ast.Constant) and node.value == "0") or (
        isinstance(node, c_ast.ID) and node.name == "NULL")


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

"""Binding a program's read-only array inputs to the caller's arrays: a task's array
parameters (the root call's arguments) and a C file's file-scope pointers that ``main``
fills (``inputs={"matrix": array}``, ``--input matrix=FILE``).

The checked program holds a zero-length placeholder for each input
(:attr:`revec.ir.Program.inputs`); a run binds the caller's arrays into a copy of the
program (:func:`bind_inputs`), whose back-end code depends on the arrays' element
types and shapes only (inputs are never written into generated source), so a second
run with arrays of the same shapes reuses the built module.  Where the arrays come
from: the Python API passes lists, tuples or NumPy arrays; the command line names a
``.npy`` file or a whitespace-separated text file (one row per line) in the argument's
place (:func:`load_array_file`).  An array of C structs is one input per field (read
as a structure of arrays): the caller passes a NumPy structured array with those fields,
a dict of one array per field, or on the command line a structured ``.npy`` file or a
text file with one row per struct and one column per field (:func:`struct_value`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from revec import ir
from revec.errors import RevecError
from revec.frontend.buffers import new_buffer

# bound programs, newest last: a run with the same arrays reuses its program (and so
# the compiled task the API caches per program)
_BOUND: OrderedDict[tuple[Any, ...], tuple[ir.Program, Any]] = OrderedDict()
_BOUND_MAX = 16
# the most elements a task-private array bounded by a parameter may hold (each is a
# frame field: a column of the thread blocks)
MAX_CAPACITY = 1024


def load_array_file(path: str, what: str) -> np.ndarray:
    """An array from a ``.npy`` file, or from a text file of whitespace-separated
    numbers (one row per line: a 2-D array when there are several columns)."""
    p = Path(path)
    if p.is_dir():
        raise RevecError(f"{what}: '{path}' is a directory, not an array file")
    if not p.is_file():
        raise RevecError(f"{what}: no such file '{path}' (an array argument is a .npy file "
                         "or a text file of whitespace-separated numbers)")
    try:
        if p.suffix == ".npy":
            return np.asarray(np.load(p, allow_pickle=False))
        text = p.read_text()
        rows = [line.split() for line in text.splitlines() if line.strip()
                and not line.lstrip().startswith("#")]
        if not rows:
            return np.zeros(0, np.int64)
        if any(len(r) != len(rows[0]) for r in rows):
            raise ValueError("rows of different lengths")
        flat = [x for r in rows for x in r]
        try:
            values: np.ndarray = np.array([int(x, 0) for x in flat], np.int64)
        except ValueError:
            values = np.array([float(x) for x in flat], np.float64)
        return values if len(rows[0]) == 1 else values.reshape(len(rows), len(rows[0]))
    except (OSError, ValueError) as err:
        raise RevecError(f"{what}: cannot read '{path}' as an array: {err}") from None


def one_row_as_list(path: str, arr: np.ndarray, ndim: int) -> np.ndarray:
    """A text file of one line of numbers (``10 20 30``) given for a 1-D input: that
    list (a text file is otherwise one row per line, a 2-D array of one row)."""
    if ndim == 1 and arr.ndim == 2 and arr.shape[0] == 1 and Path(path).suffix != ".npy":
        return arr.reshape(-1)
    return arr


def input_value(decl: ir.InputDecl, value: Any, what: str) -> np.ndarray:
    """``value`` (list, tuple, NumPy array; a file name on the command line) as the
    input's element type, checked: its dimensions, and every element representable."""
    if isinstance(value, str | Path):
        value = one_row_as_list(str(value), load_array_file(str(value), what), decl.ndim)
    try:
        raw = np.asarray(value)
    except ValueError as err:  # a ragged nested list
        raise RevecError(f"{what}: not a rectangular array ({err})") from None
    if raw.dtype == object or raw.dtype.kind not in "biuf":
        raise RevecError(f"{what}: expected an array of numbers, got {raw.dtype} values")
    if raw.ndim != decl.ndim:
        raise RevecError(f"{what}: expected a {decl.ndim}-D array, got {raw.ndim}-D "
                         f"(shape {raw.shape})")
    dt = decl.dtype
    if raw.dtype != dt:
        if dt.kind in "iu" and raw.size:
            if raw.dtype.kind == "f" and not np.all(np.isfinite(raw) & (raw == np.round(raw))):
                raise RevecError(f"{what}: the elements are {dt.name}; got non-integer values")
            info = np.iinfo(dt)
            lo, hi = raw.min(), raw.max()
            if lo < info.min or hi > info.max:
                raise RevecError(f"{what}: the elements are {dt.name} [{info.min}, "
                                 f"{info.max}]; got values in [{lo}, {hi}]")
        if dt.kind == "b" and raw.dtype.kind != "b" and raw.size and not np.all(
                (raw == 0) | (raw == 1)):
            raise RevecError(f"{what}: the elements are booleans; got other values")
        if dt.kind in "iub" and raw.dtype.kind == "f" and raw.size == 0:
            raw = raw.astype(np.int64)
    out: np.ndarray = np.ascontiguousarray(raw, dtype=dt)
    return out


def load_struct_file(path: str, fields: list[str], what: str) -> Any:
    """An array of structs from a file: a ``.npy`` file (a structured array), or a text
    file with one row per struct and one whitespace-separated column per field, in the
    struct's declaration order ``fields`` (a dict of one array per field)."""
    p = Path(path)
    if p.suffix == ".npy" or not p.is_file():
        return load_array_file(path, what)
    rows = [line.split() for line in p.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
    for i, r in enumerate(rows):
        if len(r) != len(fields):
            raise RevecError(f"{what}: row {i + 1} of '{path}' has {len(r)} column(s); a "
                             f"struct has {len(fields)} ({', '.join(fields)}), one column "
                             "each in that order")
    out: dict[str, np.ndarray] = {}
    for j, f in enumerate(fields):
        col = [r[j] for r in rows]
        try:
            out[f] = np.array([int(x, 0) for x in col], np.int64)
        except ValueError:
            try:
                out[f] = np.array([float(x) for x in col], np.float64)
            except ValueError as err:
                raise RevecError(f"{what}: cannot read column {j + 1} ({f}) of '{path}': "
                                 f"{err}") from None
    return out


def struct_value(decls: list[ir.InputDecl], value: Any, what: str) -> dict[str, np.ndarray]:
    """An array of structs (the inputs ``decls``, one per field in declaration order)
    from a NumPy structured array (any field order, other fields ignored), a dict of one
    1-D array per field, or a file name (:func:`load_struct_file`): each field checked
    as :func:`input_value` checks an array, all of one length."""
    fields = [str(d.field) for d in decls]
    if isinstance(value, str | Path):
        value = load_struct_file(str(value), fields, what)
    if isinstance(value, Mapping):
        columns: Mapping[str, Any] = value
        got = ", ".join(map(str, value)) or "none"
    else:
        raw = np.asarray(value)
        if raw.dtype.names is None:
            if raw.ndim == 2 and raw.shape[1] == len(fields) and raw.dtype.kind in "biuf":
                columns = {f: raw[:, j] for j, f in enumerate(fields)}  # columns in order
            else:
                raise RevecError(f"{what}: an array of structs is a NumPy structured array "
                                 f"with the fields {', '.join(fields)} (or a dict of one "
                                 f"array per field); got a {raw.dtype} array of shape "
                                 f"{raw.shape}")
        else:
            if raw.ndim != 1:
                raise RevecError(f"{what}: expected a 1-D structured array, got "
                                 f"{raw.ndim}-D (shape {raw.shape})")
            columns = {n: raw[n] for n in raw.dtype.names}
        got = ", ".join(columns)
    out: dict[str, np.ndarray] = {}
    length: int | None = None
    for d, f in zip(decls, fields):
        if f not in columns:
            raise RevecError(f"{what}: no field '{f}' (the struct's fields: "
                             f"{', '.join(fields)}; got: {got})")
        arr = input_value(d, columns[f], f"{what}, field '{f}'")
        if length is not None and len(arr) != length:
            raise RevecError(f"{what}: the fields have different lengths ({fields[0]}: "
                             f"{length}, {f}: {len(arr)})")
        length = len(arr)
        out[d.name] = arr
    return out


def global_inputs(program: ir.Program) -> dict[str, list[ir.InputDecl]]:
    """The file-scope pointers the caller supplies: their names -> their inputs (one,
    or one per struct field in declaration order)."""
    out: dict[str, list[ir.InputDecl]] = {}
    for d in program.inputs.values():
        if d.task is None:
            out.setdefault(str(d.param), []).append(d)
    return out


def used_globals(program: ir.Program, task: str) -> list[str]:
    """The file-scope pointers the task reads (itself or through its helpers), in the
    order of their declarations."""
    t = program.tasks[task]
    seen: set[str] = set()
    arrays: set[str] = set()
    todo: list[Any] = [t.prologue, t.is_base, t.base, t.inductive]
    while todo:
        for node in ir.walk_nodes(todo.pop()):
            if isinstance(node, ir.ArrayRef):
                arrays.add(node.array)
            elif isinstance(node, ir.Call) and node.func not in seen and \
                    node.func in program.helpers:
                seen.add(node.func)
                todo.append(program.helpers[node.func].body)
    return [name for name, decls in global_inputs(program).items()
            if any(d.name in arrays for d in decls)]


def bind_inputs(program: ir.Program, task: str, args: tuple[Any, ...] | list[Any],
                inputs: Mapping[str, Any] | None = None, fresh: bool = False
                ) -> tuple[ir.Program, tuple[Any, ...], tuple[Any, ...]]:
    """The program with the task's array inputs bound to the arrays among ``args`` and
    its file-scope pointers to ``inputs`` (name -> array; every one the task reads is
    needed), and, for task-private arrays, specialised for the root call's capacities
    with their fields' root values set; the scalar arguments; and the caller's
    arguments (the caller's own objects for a Python program, whose functions take
    them).  ``fresh``: a new bound program (own output buffers), not one a run with the
    same arrays made before."""
    t = program.tasks.get(task)
    inputs = dict(inputs or {})
    pointers = global_inputs(program)
    for name in inputs:
        if name not in pointers:
            known = (f"its file-scope inputs: {', '.join(pointers)}" if pointers else
                     "it has none; a file-scope pointer that main fills is one")
            raise RevecError(f"inputs: '{name}' is not a file-scope input of "
                             f"{program.path} ({known})")
    if t is None:
        return program, tuple(args), tuple(args)
    missing = [n for n in used_globals(program, task) if n not in inputs]
    if missing:
        name = missing[0]
        raise RevecError(f"task '{task}' reads the file-scope pointer '{name}', which the "
                         f"caller supplies: pass inputs={{'{name}': array}} (command line: "
                         f"--input {name}=FILE)")
    if not (t.arrays or t.private) and not inputs:
        return program, tuple(args), tuple(args)
    need = max((ap.position + 1 for ap in t.arrays), default=0)
    if len(args) < need:
        names = _signature(t)
        raise RevecError(f"task '{task}' needs at least {need} argument(s) ({names}), got "
                         f"{len(args)}; an array argument has no default")
    # a task-private list not given starts empty (the root has placed nothing yet)
    args = list(args)
    for missing_pa in sorted(t.private, key=lambda a: a.position):
        if missing_pa.position >= len(args):
            if missing_pa.position > len(args):
                raise RevecError(f"task '{task}': argument '{missing_pa.name}' comes after "
                                 f"arguments that were not given ({_signature(t)})")
            args.append([])
    program, t = _specialised(program, t, args)
    by_pos = {ap.position: ap for ap in t.arrays}
    private = {pa.position: pa for pa in t.private}
    arrays: dict[str, np.ndarray] = {}
    boards: dict[str, np.ndarray] = {}
    scalars: list[Any] = []
    for pos, value in enumerate(args):
        pa = private.get(pos)
        if pa is not None:
            decl = ir.InputDecl(pa.name, pa.ty.dtype, 1, pa.loc)
            board = input_value(decl, value, f"argument '{pa.name}'")
            if len(board) > pa.capacity:
                limit = f" (its bound '{pa.bound}')" if pa.bound else ""
                raise RevecError(f"argument '{pa.name}': {len(board)} elements, but the "
                                 f"task's list holds at most {pa.capacity}{limit}")
            boards[pa.name] = board
            continue
        ap = by_pos.get(pos)
        if ap is None:
            scalars.append(value)
        elif ap.fields:
            arrays.update(struct_value([program.inputs[k] for k in ap.keys], value,
                                       f"argument '{ap.name}'"))
        else:
            decl = program.inputs[ap.array]
            arrays[ap.array] = input_value(decl, value, f"argument '{ap.name}'")
    for name, value in inputs.items():
        decls = pointers[name]
        if decls[0].field is not None:
            arrays.update(struct_value(decls, value, f"input '{name}'"))
        else:
            arrays[decls[0].name] = input_value(decls[0], value, f"input '{name}'")
    # an output's key is its shape alone: its bound buffer is reused (each run copies
    # the caller's values in, revec.frontend.outputs.OutputRun)
    key = (id(program), task, tuple(
        (name, a.dtype.str, a.shape, "output" if name in program.inputs and
         program.inputs[name].output else hashlib.sha1(a.tobytes()).hexdigest())
        for name, a in sorted({**arrays, **{f"@{n}": b for n, b in boards.items()}}.items())))
    hit = None if fresh else _BOUND.get(key)
    if hit is not None and hit[1] is program:
        _BOUND.move_to_end(key)
        return hit[0], tuple(scalars), tuple(args)
    for name, a in arrays.items():
        if program.inputs[name].output:  # the working buffer the back ends write in place
            arrays[name] = new_buffer(a.dtype, a.shape)
    roots: dict[str, Any] = {ap.end: len(arrays[ap.array]) for ap in t.arrays
                             if ap.end is not None}
    for pa in t.private:
        board = boards[pa.name]
        for k, f in enumerate(pa.fields):
            roots[f] = board[k].item() if k < len(board) else 0
        if pa.length is not None:
            roots[pa.length] = len(board)
    params = tuple(dataclasses.replace(p, default=roots[p.name]) if p.name in roots else p
                   for p in t.params)
    bound = dataclasses.replace(
        program, arrays={**program.arrays, **arrays}, boards=boards,
        tasks={**program.tasks, task: dataclasses.replace(t, params=params)})
    rebind = getattr(program.module, "__revec_rebind__", None)
    if rebind is not None:  # a generated reference (C): its globals hold the arrays
        bound.module = rebind(bound.arrays)
    _BOUND[key] = (bound, program)
    while len(_BOUND) > _BOUND_MAX:
        _BOUND.popitem(last=False)
    return bound, tuple(scalars), tuple(args)


_SPECIALISED: OrderedDict[tuple[Any, ...], tuple[ir.Program, ir.Program]] = OrderedDict()


def _specialised(program: ir.Program, t: ir.TaskDef, args: tuple[Any, ...] | list[Any]
                 ) -> tuple[ir.Program, ir.TaskDef]:
    """The program checked again with the capacities the root call gives the task's
    private arrays bounded by parameters (``len(board) == n``: n's root value)."""
    if not any(pa.bound for pa in t.private):
        return program, t
    taken = {ap.position for ap in t.arrays} | {pa.position for pa in t.private}
    positions = [i for i in range(t.arity) if i not in taken]
    by_name = {p.name: args[i] for p, i in zip(t.user_params, positions)}
    sizes: dict[tuple[str, str], int] = {}
    for pa in t.private:
        if pa.bound is None:
            continue
        try:
            value = int(by_name[pa.bound])
        except (TypeError, ValueError):
            raise RevecError(f"argument '{pa.bound}': {by_name[pa.bound]!r} is not an "
                             "integer") from None
        if value < 0 or value > MAX_CAPACITY:
            raise RevecError(f"argument '{pa.bound}' = {value} bounds the task-private "
                             f"list '{pa.name}'; revec holds such lists of at most "
                             f"{MAX_CAPACITY} elements")
        sizes[(t.name, pa.bound)] = value
    if all(pa.capacity == max(sizes.get((t.name, pa.bound or ""), pa.capacity), 1)
           for pa in t.private):
        return program, t
    if program.specialize is None:
        raise RevecError(f"task '{t.name}' needs its program checked for these list "
                         "sizes, which this program cannot be")
    key = (id(program), tuple(sorted(sizes.items())))
    hit = _SPECIALISED.get(key)
    if hit is not None and hit[1] is program:
        return hit[0], hit[0].tasks[t.name]
    new = program.specialize(sizes)
    _SPECIALISED[key] = (new, program)
    while len(_SPECIALISED) > _BOUND_MAX:
        _SPECIALISED.popitem(last=False)
    return new, new.tasks[t.name]


def _signature(t: ir.TaskDef) -> str:
    names = [p.name for p in t.user_params]
    arrays = [(ap.position, ap.name) for ap in t.arrays] + [
        (pa.position, pa.name) for pa in t.private]
    for pos, name in sorted(arrays):
        names.insert(pos, f"{name}[]")
    return ", ".join(names)

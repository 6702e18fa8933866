"""Binding a task's read-only array inputs (its array parameters) to the root call's
arrays.

The checked program holds a zero-length placeholder for each input
(:attr:`revec.ir.Program.inputs`); a run binds the caller's arrays into a copy of the
program (:func:`bind_inputs`), whose back-end code depends on the arrays' element
types and shapes only (inputs are never written into generated source), so a second
run with arrays of the same shapes reuses the built module.  Where the arrays come
from: the Python API passes lists, tuples or NumPy arrays; the command line names a
``.npy`` file or a whitespace-separated text file (one row per line) in the argument's
place (:func:`load_array_file`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from revec import ir
from revec.errors import RevecError

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


def input_value(decl: ir.InputDecl, value: Any, what: str) -> np.ndarray:
    """``value`` (list, tuple, NumPy array; a file name on the command line) as the
    input's element type, checked: its dimensions, and every element representable."""
    if isinstance(value, str | Path):
        value = load_array_file(str(value), what)
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


def bind_inputs(program: ir.Program, task: str, args: tuple[Any, ...] | list[Any]
                ) -> tuple[ir.Program, tuple[Any, ...], tuple[Any, ...]]:
    """The program with the task's array inputs bound to the arrays among ``args`` (and,
    for task-private arrays, specialised for the root call's capacities, their fields'
    root values set); the scalar arguments; and the caller's arguments."""
    t = program.tasks.get(task)
    if t is None or not (t.arrays or t.private):
        return program, tuple(args), tuple(args)
    if len(args) < t.arity:
        names = _signature(t)
        raise RevecError(f"task '{task}' needs {t.arity} argument(s) ({names}), got "
                         f"{len(args)}; an array argument has no default")
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
                bound = f" (its bound '{pa.bound}')" if pa.bound else ""
                raise RevecError(f"argument '{pa.name}': {len(board)} elements, but the "
                                 f"task's list holds at most {pa.capacity}{bound}")
            boards[pa.name] = board
            continue
        ap = by_pos.get(pos)
        if ap is None:
            scalars.append(value)
            continue
        decl = program.inputs[ap.array]
        arrays[ap.array] = input_value(decl, value, f"argument '{ap.name}'")
    key = (id(program), task, tuple(
        (k, a.dtype.str, a.shape, hashlib.sha1(a.tobytes()).hexdigest())
        for k, a in sorted({**arrays, **{f"@{n}": b for n, b in boards.items()}}.items())))
    hit = _BOUND.get(key)
    if hit is not None and hit[1] is program:
        _BOUND.move_to_end(key)
        return hit[0], tuple(scalars), tuple(args)
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
        program, arrays={**program.arrays, **arrays},
        tasks={**program.tasks, task: dataclasses.replace(t, params=params)})
    bound.boards = boards  # type: ignore[attr-defined]
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

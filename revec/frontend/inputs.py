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
from revec.frontend.outputs import new_buffer

# bound programs, newest last: a run with the same arrays reuses its program (and so
# the compiled task the API caches per program)
_BOUND: OrderedDict[tuple[Any, ...], tuple[ir.Program, Any]] = OrderedDict()
_BOUND_MAX = 16


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


def bind_inputs(program: ir.Program, task: str, args: tuple[Any, ...] | list[Any],
                fresh: bool = False) -> tuple[ir.Program, tuple[Any, ...], tuple[Any, ...]]:
    """The program with the task's array inputs bound to the arrays among ``args``; the
    scalar arguments; and the arguments for the plain reference run (the caller's own
    objects for a Python program, whose functions take them).  ``fresh``: a new bound
    program (own output buffers), not one a run with the same arrays made before."""
    t = program.tasks.get(task)
    if t is None or not t.arrays:
        return program, tuple(args), tuple(args)
    by_pos = {ap.position: ap for ap in t.arrays}
    if len(args) < t.arity:
        names = _signature(program, t)
        raise RevecError(f"task '{task}' needs {t.arity} argument(s) ({names}), got "
                         f"{len(args)}; an array argument has no default")
    arrays: dict[str, np.ndarray] = {}
    scalars: list[Any] = []
    for pos, value in enumerate(args):
        ap = by_pos.get(pos)
        if ap is None:
            scalars.append(value)
            continue
        decl = program.inputs[ap.array]
        arrays[ap.array] = input_value(decl, value, f"argument '{ap.name}'")
    # an output's key is its shape alone: its bound buffer is reused (each run copies
    # the caller's values in, revec.frontend.outputs.OutputRun)
    key = (id(program), task, tuple(
        (k, a.dtype.str, a.shape, "output" if program.inputs[k].output
         else hashlib.sha1(a.tobytes()).hexdigest())
        for k, a in sorted(arrays.items())))
    hit = None if fresh else _BOUND.get(key)
    if hit is not None and hit[1] is program:
        _BOUND.move_to_end(key)
        return hit[0], tuple(scalars), tuple(args)
    for k, a in arrays.items():
        if program.inputs[k].output:  # the working buffer the back ends write in place
            arrays[k] = new_buffer(a.dtype, a.shape)
    ends = {ap.end: len(arrays[ap.array]) for ap in t.arrays if ap.end is not None}
    params = tuple(dataclasses.replace(p, default=ends[p.name]) if p.name in ends else p
                   for p in t.params)
    bound = dataclasses.replace(
        program, arrays={**program.arrays, **arrays},
        tasks={**program.tasks, task: dataclasses.replace(t, params=params)})
    rebind = getattr(program.module, "__revec_rebind__", None)
    if rebind is not None:  # a generated reference (C): its globals hold the arrays
        bound.module = rebind(bound.arrays)
    _BOUND[key] = (bound, program)
    while len(_BOUND) > _BOUND_MAX:
        _BOUND.popitem(last=False)
    return bound, tuple(scalars), tuple(args)


def _signature(program: ir.Program, t: ir.TaskDef) -> str:
    names = [p.name for p in t.user_params]
    for ap in sorted(t.arrays, key=lambda a: a.position):
        names.insert(ap.position, f"{ap.name}[]")
    return ", ".join(names)

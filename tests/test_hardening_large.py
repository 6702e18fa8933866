"""Large sources: a module with hundreds of thousands of module-level constants is
checked without libcst parsing the constants (see revec.frontend.python.source.skeleton), with
every location still right."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from revec.api import run_program
from revec.errors import RevecError
from revec.frontend import load_program
from revec.frontend.python.source import SKELETON_BYTES, read_source, skeleton

HEAD = """\
import numpy as np

from revec import Reducer, reduce, spawn, task

count = Reducer(np.int64, "sum")
DOC = \"\"\"
X = 1
\"\"\"
"""
TASK = """
@task
def t(n: np.int32 = 6):
    if n < 1:
        reduce(count, C{k} + LOOK)
    else:
        spawn(t, n - 1)
"""


def _big(lines: int, task_error: bool = False) -> str:
    body = [HEAD]
    body += [f"C{i} = {i % 97}" for i in range(lines // 2)]
    # look-alikes that are not module-level constants stay in the parsed skeleton
    body += ["LOOK = dict(", "a = 1", ")['a']"]
    body += [f"C{i} = {i % 97}  # a comment" for i in range(lines // 2, lines)]
    task = TASK.format(k=lines - 1)
    if task_error:
        task = task.replace("spawn(t, n - 1)", "spawn(t, n - 1) @ 2")
    return "\n".join(body) + "\n" + task


def test_large_module_runs_with_its_constants(write_program: Callable[..., Path]) -> None:
    lines = 60_000
    path = write_program(_big(lines))
    assert path.stat().st_size > SKELETON_BYTES
    r = run_program(path, "t", (), variant="seq")
    assert r.reducers["count"] == (lines - 1) % 97 + 1
    r = run_program(path, "t", (), variant="bfs", backend="c")
    assert r.reducers["count"] == (lines - 1) % 97 + 1


def test_large_module_errors_are_located(write_program: Callable[..., Path]) -> None:
    text = _big(60_000, task_error=True)
    path = write_program(text)
    with pytest.raises(RevecError) as info:
        load_program(path)
    loc = info.value.loc
    assert loc is not None
    want = next(n for n, ln in enumerate(text.splitlines(), 1) if "@ 2" in ln)
    assert loc.line == want and "@" in loc.source_line


def test_skeleton_drops_only_module_constants(tmp_path: Path) -> None:
    text = _big(20)
    path = tmp_path / "m.py"
    path.write_text(text)
    code = compile(text, str(path), "exec")
    out, kept = skeleton(text, code)
    lines = text.splitlines()
    dropped = {n for n in range(1, len(lines) + 1)} - set(kept)
    assert {lines[n - 1].split()[0] for n in dropped} == {f"C{i}" for i in range(20)}
    assert "X = 1" in out and "a = 1" in out  # in a string, in a call: kept
    assert out.splitlines() == [lines[n - 1] for n in kept]
    src = read_source(path)
    assert src.module.code == text  # small sources are parsed whole

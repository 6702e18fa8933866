"""Uses of a task's results that revec cannot turn into reductions are rejected with one
located message (file:line:col, source line, caret), exit status 2 and no output file."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.rejections import assert_located_rejection

HEAD = """\
import numpy as np
from revec import task, spawn


def h(x):
    return x + 1


"""

# (name, source after HEAD, message fragment, the text the caret points at)
CASES = [
    ("product", """
@task
def f(n: np.int32) -> np.int64:
    if n < 2:
        return n
    return f(n - 1) * f(n - 2)
""", "a product of two results", "f(n - 1) * f(n - 2)"),
    ("condition", """
@task
def f(n: np.int32) -> np.int64:
    if n < 2:
        return n
    if f(n - 1) > 3:
        return 1
    return 0
""", "is used in a condition", "f(n - 1) > 3"),
    ("max_mixed_with_sum", """
@task
def f(n: np.int32) -> np.int64:
    if n < 3:
        return n
    return f(n - 1) + max(f(n - 2), f(n - 3))
""", "max/min of results mixed with a sum", "max(f(n - 2)"),
    ("sum_and_max_returns", """
@task
def f(n: np.int32) -> np.int64:
    if n < 3:
        return n
    if n % 2 == 0:
        return f(n - 1) + f(n - 2)
    return 1 + max(f(n - 1), f(n - 2))
""", "combined by", "f(n - 1), f(n - 2))"),
    ("helper_argument", """
@task
def f(n: np.int32) -> np.int64:
    if n < 2:
        return n
    return h(f(n - 1))
""", "is passed to a function", "h(f(n - 1))"),
    ("overwritten", """
@task
def f(n: np.int32) -> np.int64:
    if n < 2:
        return n
    x = f(n - 1)
    x = f(n - 2)
    return x
""", "overwrites 'x'", "f(n - 2)\n"),
    ("dropped", """
@task
def f(n: np.int32) -> np.int64:
    if n < 2:
        return n
    t = f(n - 1)
    if n > 5:
        return 0
    return t
""", "this return drops 't'", "0\n"),
    ("spawn_in_returning_task", """
@task
def f(n: np.int32) -> np.int64:
    if n < 2:
        return n
    spawn(f, n - 1)
    return 0
""", "recurses by using its own calls' results", "spawn(f, n - 1)"),
    ("recursion_in_base", """
@task
def f(n: np.int32) -> np.int64:
    if n < 2:
        return f(n + 2)
    return f(n - 1)
""", "in the first branch of the is-base test", "f(n + 2)"),
    ("missing_return", """
@task
def f(n: np.int32) -> np.int64:
    if n < 2:
        return n
    x = f(n - 1)
    if n > 3:
        return x
""", "can end without 'return'", "if n > 3:"),
    ("prologue_spawn", """
@task
def g(n: np.int32):
    spawn(g, n - 1)
    if n < 2:
        return
    spawn(g, n - 2)
""", "the prologue", "spawn(g, n - 1)"),
    ("helper_type_conflict", """
def k(x):
    x = 1.5
    return x

@task
def f(n: np.int32) -> np.int64:
    if n < 2:
        return n
    return f(n - 1) + k(n)
""", "helper 'k' called with (x: int32) does not type-check", "k(n)"),
    ("bad_result_type", """
@task
def f(n: np.int32) -> bool:
    if n < 2:
        return True
    return f(n - 1)
""", "result type must be an integer or floating", "bool:"),
]


def _where(source: str, needle: str) -> tuple[int, int]:
    at = source.index(needle)
    line = source.count("\n", 0, at) + 1
    col = at - (source.rfind("\n", 0, at) + 1) + 1
    return line, col


@pytest.mark.parametrize("name, body, message, needle", CASES, ids=[c[0] for c in CASES])
def test_rejected_with_location(write_program, tmp_path, capsys, name, body, message,
                                needle):
    source = HEAD + textwrap.dedent(body).lstrip("\n")
    path = write_program(source)
    source = path.read_text()
    line, col = _where(source, needle)
    assert_located_rejection(path, message, line, col, tmp_path / "out.py", (), capsys)


def test_cli_exit_2_without_traceback(write_program, tmp_path):
    """One case through a real process: exit status 2 and no traceback."""
    name, body, message, needle = CASES[0]
    path = write_program(HEAD + textwrap.dedent(body).lstrip("\n"))
    line, col = _where(path.read_text(), needle)
    out = tmp_path / "out.py"
    proc = subprocess.run([sys.executable, "-m", "revec", "transform", str(path), "-o",
                           str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"{path}:{line}:{col}: error: {message}")
    assert not out.exists()

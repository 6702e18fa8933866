"""Every rule violation is rejected with one located message (file:line:col)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from revec.errors import RevecError
from revec.frontend import load_program

HEAD = """\
import numpy as np
from revec import task, spawn, reduce, Reducer

count = Reducer(np.int64, "sum")
"""

# (name, task source after HEAD, expected message fragment, line, col)
CASES = [
    ("spawn_in_base", """
@task
def f(n: np.int32):
    if n < 2:
        spawn(f, n - 1)
    else:
        spawn(f, n - 1)
""", "spawn in the first branch of the is-base test", 9, 9),
    ("spawn_other_function", """
@task
def g(n: np.int32):
    if n < 2:
        reduce(count, 1)
    else:
        spawn(g, n - 1)

@task
def f(n: np.int32):
    if n < 2:
        reduce(count, 1)
    else:
        spawn(g, n - 1)
""", "spawning another function 'g'", 18, 15),
    ("spawn_value_used", """
@task
def f(n: np.int32):
    if n < 2:
        reduce(count, 1)
    else:
        x = spawn(f, n - 1)
""", "the value of spawn(...) cannot be used", 11, 13),
    ("return_value", """
@task
def f(n: np.int32):
    if n < 2:
        return n
    else:
        spawn(f, n - 1)
""", "this task returns a value: it recurses by using its own calls' results", 11, 9),
    ("plain_recursion", """
@task
def f(n: np.int32):
    if n < 2:
        reduce(count, 1)
    else:
        f(n - 1)
""", "recursion by a plain call", 11, 9),
    # (an unannotated parameter is typed by the root call; its default must be a value
    # of the type revec checks it with)
    ("unannotated_param_bad_default", """
@task
def f(n="ten"):
    if n < 2:
        reduce(count, 1)
    else:
        spawn(f, n - 1)
""", "the default 'ten' of parameter 'n' is not an integer", 7, 9),
    ("non_scalar_param", """
@task
def f(n: list):
    if n < 2:
        reduce(count, 1)
    else:
        spawn(f, n - 1)
""", "not a scalar type", 7, 10),
    ("undeclared_reducer", """
@task
def f(n: np.int32):
    if n < 2:
        reduce(total, 1)
    else:
        spawn(f, n - 1)
""", "'total' is not a declared reducer", 9, 16),
    ("write_global", """
LIMIT = 3

@task
def f(n: np.int32):
    global LIMIT
    if n < 2:
        reduce(count, 1)
    else:
        spawn(f, n - 1)
""", "writing a module-level global", 10, 5),
    ("write_global_array", """
A = np.zeros(4, np.int32)

@task
def f(n: np.int32):
    if n < 2:
        A[0] = 1
    else:
        spawn(f, n - 1)
""", "read-only", 11, 9),
    ("yield", """
@task
def f(n: np.int32):
    if n < 2:
        yield n
    else:
        spawn(f, n - 1)
""", "yield is not allowed", 9, 9),
    ("try", """
@task
def f(n: np.int32):
    if n < 2:
        try:
            reduce(count, 1)
        except ValueError:
            pass
    else:
        spawn(f, n - 1)
""", "try statements are not allowed", 9, 9),
    ("with", """
@task
def f(n: np.int32):
    if n < 2:
        with open("x") as fh:
            reduce(count, 1)
    else:
        spawn(f, n - 1)
""", "with statements are not allowed", 9, 9),
    ("lambda", """
@task
def f(n: np.int32):
    if n < 2:
        g = lambda x: x
        reduce(count, 1)
    else:
        spawn(f, n - 1)
""", "lambda is not allowed", 9, 13),
    ("nested_function", """
@task
def f(n: np.int32):
    if n < 2:
        def g(x):
            return x
        reduce(count, 1)
    else:
        spawn(f, n - 1)
""", "nested functions are not allowed", 9, 9),
    ("spawn_arity", """
@task
def f(n: np.int32, m: np.int32):
    if n < 2:
        reduce(count, 1)
    else:
        spawn(f, n - 1)
""", "passes 1 argument, but f takes 2", 11, 9),
    ("helper_spawns", """
def h(n: np.int32) -> np.int32:
    spawn(f, n)
    return n

@task
def f(n: np.int32):
    if n < 2:
        reduce(count, 1)
    else:
        spawn(f, h(n))
""", "helpers cannot spawn", 7, 5),
    ("body_shape", """
@task
def f(n: np.int32):
    x = n
    spawn(f, n - 1)
""", "a task body must be", 8, 5),
    ("type_conflict", """
@task
def f(n: np.int32, m: np.int16):
    if n < 2:
        x = n
        x = m * np.int64(2)
        reduce(count, x)
    else:
        spawn(f, n - 1, m)
""", "holds int32 values but is assigned a int64 value", 10, 9),
    ("literal_range", """
@task
def f(n: np.int8):
    if n < 2:
        reduce(count, n + 300)
    else:
        spawn(f, n - 1)
""", "integer literal 300 is out of range for int8", 9, 27),
]


@pytest.mark.parametrize("name, body, message, line, col", CASES, ids=[c[0] for c in CASES])
def test_rejected_with_location(write_program, name, body, message, line, col):
    path = write_program(HEAD + textwrap.dedent(body))
    with pytest.raises(RevecError) as info:
        load_program(path)
    err = info.value
    assert message in err.message
    assert err.loc is not None
    assert (err.loc.line, err.loc.col) == (line, col), err.format()
    text = err.format()
    assert text.startswith(f"{path}:{line}:{col}: error: ")
    # the source line and a caret under the column
    lines = text.splitlines()
    assert lines[1].strip() == path.read_text().splitlines()[line - 1].strip()
    assert lines[2].index("^") == 4 + col - 1


def test_unknown_reducer_operation(write_program):
    path = write_program("""
        import numpy as np
        from revec import task, spawn, reduce, Reducer

        total = Reducer(np.int64, "prod")

        @task
        def f(n: np.int32):
            if n < 2:
                reduce(total, 1)
            else:
                spawn(f, n - 1)
    """)
    with pytest.raises(RevecError) as info:
        load_program(path)
    assert "unknown reducer operation 'prod'" in info.value.message
    assert (info.value.loc.line, info.value.loc.col) == (4, 27)


def test_syntax_error(write_program):
    path = write_program("""
        import numpy as np
        from revec import task

        @task
        def f(n: np.int32)
            pass
    """)
    with pytest.raises(RevecError) as info:
        load_program(path)
    assert info.value.message.startswith("syntax error")
    assert info.value.loc.line == 5


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "revec", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("name, body, message, line, col",
                         [CASES[0], CASES[3], CASES[10]], ids=["spawn_in_base", "return_value",
                                                               "yield"])
def test_cli_check_exit_2_no_traceback(write_program, tmp_path, name, body, message, line, col):
    path = write_program(HEAD + textwrap.dedent(body))
    out = tmp_path / "out.py"
    for argv in (("check", str(path)), ("transform", str(path), "-o", str(out))):
        proc = _cli(*argv)
        assert proc.returncode == 2
        assert "Traceback" not in proc.stderr
        assert proc.stderr.startswith(f"{path}:{line}:{col}: error: {message}")
        assert "^" in proc.stderr
    assert not out.exists(), "a rejected program must not leave an output file"
    assert list(tmp_path.iterdir()) == [path]


def test_cli_check_ok(write_program):
    path = write_program(HEAD + textwrap.dedent(CASES[0][1]).replace(
        "        spawn(f, n - 1)\n    else", "        reduce(count, n)\n    else", 1))
    proc = _cli("check", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "task f(n: int32): ok" in proc.stdout


@pytest.mark.parametrize("argv, fragment", [
    (("run", "missing.py", "f"), "no such file"),
    (("run", "{fib}", "nope"), "no task 'nope'"),
    (("run", "{fib}", "fib", "1", "2"), "takes 1 argument(s), got 2"),
    (("run", "{fib}", "fib", "3000000000"), "out of range for int32"),
    (("run", "{fib}", "fib", "abc"), "not a valid int32 value"),
    (("run", "{fib}", "fib", "--block-size", "0"), "--block-size must be at least 1"),
])
def test_cli_bad_input(argv, fragment):
    from pathlib import Path

    fib = str(Path(__file__).parent / "programs" / "fib.py")
    proc = _cli(*(a.replace("{fib}", fib) for a in argv))
    assert proc.returncode == 2
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr

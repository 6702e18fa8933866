"""User-facing messages say what the program wrote, in plain words.

No internal names (a C local ``from`` or ``with`` is renamed ``from_c`` / ``with_c`` in
the IR, a second ``max_current`` in another block ``max_current_2``); a struct or enum
declared inside a function gets a message about structs; a result converted to a
narrower type is said plainly; ``A.shape[k]`` and ``len(A)`` of a module-level array
work (and a non-constant ``k`` says what to write); the task-shape error's caret points
at the statement that breaks the shape; a recursive first branch is called the first
branch of the is-base test, not "cilk_spawn in the base case".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from revec.api import get_program, run_loaded
from revec.errors import RevecError

C_HEAD = "#include <cilk/cilk.h>\n#include <stdint.h>\n\n"
PY_HEAD = "import numpy as np\nfrom revec import task, spawn, reduce, Reducer\n\n"


def _where(source: str, needle: str) -> tuple[int, int]:
    at = source.index(needle)
    return source.count("\n", 0, at) + 1, at - (source.rfind("\n", 0, at) + 1) + 1


def _error(tmp_path: Path, name: str, source: str) -> RevecError:
    path = tmp_path / name
    path.write_text(source)
    with pytest.raises(RevecError) as info:
        get_program(path)
    err = info.value
    assert err.loc is not None and err.loc.file == str(path), err.format()
    return err


# (name, C source, the name the message must use, the internal name it must not, where)
C_NAMES = [
    ("from", C_HEAD + """\
int64_t f(int64_t n) {
    if (n < 2) return n;
    int64_t from = cilk_spawn f(n - 1);
    int64_t to = f(n - 2);
    cilk_sync;
    int64_t s = from + 1;
    s = s + to;
    return s + from;
}
""", "'from'", "from_c", "from;\n}"),
    ("with", C_HEAD + """\
int64_t knap(int64_t n, int64_t cap) {
    if (n == 0 || cap <= 0) return 0;
    int64_t with = cilk_spawn knap(n - 1, cap - n);
    int64_t without = knap(n - 1, cap);
    cilk_sync;
    return without + 1;
}
""", "'with'", "with_c", "without + 1"),
    ("max_current", C_HEAD + """\
int64_t mc(int64_t n) {
    if (n < 2) return n;
    {
        int64_t max_current = 1;
        n += max_current;
    }
    int64_t max_current = cilk_spawn mc(n - 3);
    int64_t b = mc(n - 4);
    cilk_sync;
    max_current = b;
    return max_current;
}
""", "'max_current'", "max_current_2", "b;\n    return"),
]


@pytest.mark.parametrize("case", C_NAMES, ids=[c[0] for c in C_NAMES])
def test_c_locals_are_named_as_written(tmp_path, case):
    name, source, shown, internal, needle = case
    err = _error(tmp_path, f"{name}.c", source)
    assert shown in err.message and internal not in err.message, err.format()
    assert (err.loc.line, err.loc.col) == _where(source, needle), err.format()


@pytest.mark.parametrize("decl, says", [
    ("struct pt { int64_t x; int64_t y; };", "struct types are declared at file scope"),
    ("struct pt;", "struct types are declared at file scope"),
    ("union u { int64_t x; double y; };", "union types are declared at file scope"),
    ("enum color { RED, GREEN };", "enum types are not supported"),
])
def test_a_struct_declared_in_a_function(tmp_path, decl, says):
    source = C_HEAD + f"""\
int64_t f(int64_t n) {{
    if (n < 2) return n;
    {decl}
    return f(n - 1) + n;
}}
"""
    err = _error(tmp_path, "st.c", source)
    assert says in err.message and "None" not in err.message, err.format()
    assert err.loc.line == _where(source, decl)[0], err.format()


@pytest.mark.parametrize("lang", ["py", "c"])
def test_a_narrowed_result_is_said_plainly(tmp_path, lang):
    if lang == "py":
        source = PY_HEAD + """\
@task
def f(n: np.int32) -> np.int64:
    if n < 2:
        return n
    return np.int32(f(n - 1)) + f(n - 2)
"""
        needle = "f(n - 1)"
    else:
        source = C_HEAD + """\
int64_t f(int32_t n) {
    if (n < 2) return n;
    int32_t x = cilk_spawn f(n - 1);
    int64_t y = f(n - 2);
    cilk_sync;
    return x + y;
}
"""
        needle = "f(n - 1)"
    err = _error(tmp_path, f"narrow.{lang}", source)
    assert err.message.startswith("'f' returns int64, but this result of its call is "
                                  "converted to int32 here, which would change its value"), \
        err.format()
    assert "computed with here" not in err.message
    assert (err.loc.line, err.loc.col) == _where(source, needle), err.format()


NUMS_PROGRAM = PY_HEAD + """\
NUMS = np.array([3, 1, 4, 1, 5, 9, 2, 6], dtype=np.int64)
GRID = np.arange(12, dtype=np.int64).reshape(3, 4)
total = Reducer(np.int64, "sum")


@task
def walk(i: np.int64):
    if i >= NUMS.shape[0]:
        return
    reduce(total, NUMS[i] * GRID.shape[1] + GRID.shape[-2])
    spawn(walk, i + 1)


@task
def suffix(i: np.int64) -> np.int64:
    if i >= len(NUMS):
        return 0
    return NUMS[i] + suffix(i + 1)
"""


def _module(path: Path, source: str) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "nums_twin"}
    exec(compile(source, str(path), "exec"), ns)  # noqa: S102 - the test's own program
    return ns


def test_module_array_shape_and_len(tmp_path):
    path = tmp_path / "nums.py"
    path.write_text(NUMS_PROGRAM)
    program = get_program(path)
    ns = _module(path, NUMS_PROGRAM)
    expected_suffix = int(ns["suffix"](2))
    expected_total = int(sum(int(v) * 4 + 3 for v in ns["NUMS"]))  # plain Python
    got = run_loaded(program, "suffix", (2,), variant="bfs", backend="numpy")
    assert got.result == expected_suffix
    walked = run_loaded(program, "walk", (0,), variant="bfs", backend="numpy")
    assert walked.reducers["total"] == expected_total


@pytest.mark.parametrize("expr, says", [
    ("NUMS.shape[i]", "index its shape with a constant, NUMS.shape[0]"),
    ("NUMS.shape[1]", "index its shape with a constant, NUMS.shape[0]"),
    ("NUMS.strides[0]", "a module-level array's size is A.shape[k] or len(A)"),
])
def test_module_array_shape_says_what_to_write(tmp_path, expr, says):
    source = PY_HEAD + f"""\
NUMS = np.array([3, 1, 4], dtype=np.int64)
total = Reducer(np.int64, "sum")


@task
def walk(i: np.int64):
    if i >= {expr}:
        return
    reduce(total, NUMS[i])
    spawn(walk, i + 1)
"""
    err = _error(tmp_path, "nums.py", source)
    assert says in err.message, err.format()
    assert (err.loc.line, err.loc.col) == _where(source, expr), err.format()


# (name, source, the statement the caret must point at, what the message says)
SHAPES = [
    ("after_if_else.py", PY_HEAD + """\
c = Reducer(np.int64, "sum")


@task
def f(n: np.int64):
    m = n
    if m > 10:
        m = 10
    if m < 2:
        reduce(c, 1)
    else:
        spawn(f, m - 1)
        spawn(f, m - 2)
    reduce(c, m)
""", "reduce(c, m)", "this statement follows the if/else"),
    ("no_return.py", PY_HEAD + """\
c = Reducer(np.int64, "sum")


@task
def f(n: np.int64):
    k = n * 2
    if n < 2:
        reduce(c, 1)
    spawn(f, n - 1)
    spawn(f, n - 2)
""", "if n < 2", "its branch does not end with 'return'"),
    ("after_if_else.c", C_HEAD + """\
int64_t total;

void f(int64_t n) {
    if (n < 2) {
        total += 1;
    } else {
        cilk_spawn f(n - 1);
        f(n - 2);
        cilk_sync;
    }
    total += n;
}
""", "total += n", "this statement follows the if/else"),
]


@pytest.mark.parametrize("case", SHAPES, ids=[c[0] for c in SHAPES])
def test_shape_error_points_at_the_statement_that_breaks_it(tmp_path, case):
    name, source, needle, says = case
    err = _error(tmp_path, name, source)
    assert "a task body must be" in err.message and says in err.message, err.format()
    assert (err.loc.line, err.loc.col) == _where(source, needle), err.format()


@pytest.mark.parametrize("lang", ["py", "c"])
def test_a_recursive_first_branch(tmp_path, lang):
    """(Both branches recurse: no reading of the body finds a base case.)"""
    if lang == "py":
        source = PY_HEAD + """\
@task
def tak(x: np.int64, y: np.int64, z: np.int64) -> np.int64:
    if y < x:
        return tak(x - 1, y, z) + tak(y - 1, z, x)
    return tak(z, x, y) + 1
"""
        needle, what = "tak(x - 1", "recursive call of 'tak'"
    else:
        source = C_HEAD + """\
int64_t tak(int64_t x, int64_t y, int64_t z) {
    if (y < x) {
        int64_t a = cilk_spawn tak(x - 1, y, z);
        int64_t b = tak(y - 1, z, x);
        cilk_sync;
        return a + b;
    }
    return tak(z, x, y) + 1;
}
"""
        needle, what = "tak(x - 1", "cilk_spawn"
    err = _error(tmp_path, f"tak.{lang}", source)
    assert err.message.startswith(f"{what} in the first branch of the is-base test"), \
        err.format()
    assert "in the base case" not in err.message
    assert "test for the base case first" in err.message
    assert (err.loc.line, err.loc.col) == _where(source, needle), err.format()


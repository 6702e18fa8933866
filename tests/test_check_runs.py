"""Nothing passes ``revec check`` that cannot run.

Programs as published: nested recursion (Ackermann, tak, Hofstadter's Q, McCarthy's 91),
products of results (Catalan, Motzkin numbers), negamax and minimax, written in Python
and in Cilk C, are located errors of ``check``, ``run`` and ``transform`` (exit 2,
``file:line:col``, the caret, no output file, no traceback) naming the supported forms.
SICP's count-change, whose ``first_denomination`` has a path returning nothing, runs on
both back ends with plain Python's answer while that path is not taken, and stops with a
located error at the helper when it is.  A sweep of generated programs
(``tests/progen_unrunnable.py``) checks that every program is rejected with a located
error or runs with the answer of its plain-Python twin (and of gcc's serial elision of
its C twin).
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from revec.api import get_program, run_loaded
from revec.cli import main
from revec.errors import RevecError
from tests import cilk_oracle
from tests.progen_unrunnable import Program, programs

PY_HEAD = "import numpy as np\nfrom revec import task\n\n\n"
C_HEAD = "#include <cilk/cilk.h>\n#include <stdint.h>\n\n"

# (name, source, task, args, the located token, what the message names)
PUBLISHED: list[tuple[str, str, str, tuple[int, ...], str, str]] = [
    ("ackermann_py", PY_HEAD + """\
@task
def ack(m: np.int64, n: np.int64) -> np.int64:
    if m == 0:
        return n + 1
    if n == 0:
        return ack(m - 1, 1)
    return ack(m - 1, ack(m, n - 1))
""", "ack", (2, 3), "ack(m, n - 1))", "nested recursion"),
    ("ackermann_c", C_HEAD + """\
int64_t ack(int64_t m, int64_t n) {
    if (m == 0) return n + 1;
    if (n == 0) return ack(m - 1, 1);
    int64_t x = cilk_spawn ack(m, n - 1);
    cilk_sync;
    return ack(m - 1, x);
}
""", "ack", (2, 3), "x);", "nested recursion"),
    ("tak_py", PY_HEAD + """\
@task
def tak(x: np.int64, y: np.int64, z: np.int64) -> np.int64:
    if y >= x:
        return z
    return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y))
""", "tak", (8, 4, 2), "tak(x - 1", "nested recursion"),
    ("tak_c", C_HEAD + """\
int64_t tak(int64_t x, int64_t y, int64_t z) {
    if (y >= x) return z;
    int64_t a = cilk_spawn tak(x - 1, y, z);
    int64_t b = cilk_spawn tak(y - 1, z, x);
    int64_t c = tak(z - 1, x, y);
    cilk_sync;
    return tak(a, b, c);
}
""", "tak", (8, 4, 2), "a, b, c);", "nested recursion"),
    ("hofstadter_q_py", PY_HEAD + """\
@task
def q(n: np.int64) -> np.int64:
    if n <= 2:
        return 1
    return q(n - q(n - 1)) + q(n - q(n - 2))
""", "q", (10,), "q(n - 1)", "nested recursion"),
    ("hofstadter_q_c", C_HEAD + """\
int64_t q(int64_t n) {
    if (n <= 2) return 1;
    int64_t a = cilk_spawn q(n - 1);
    int64_t b = q(n - 2);
    cilk_sync;
    int64_t x = cilk_spawn q(n - a);
    int64_t y = q(n - b);
    cilk_sync;
    return x + y;
}
""", "q", (10,), "a);", "nested recursion"),
    ("mccarthy91_py", PY_HEAD + """\
@task
def m91(n: np.int64) -> np.int64:
    if n > 100:
        return n - 10
    return m91(m91(n + 11))
""", "m91", (87,), "m91(n + 11)", "nested recursion"),
    ("mccarthy91_c", C_HEAD + """\
int64_t m91(int64_t n) {
    if (n > 100) return n - 10;
    return m91(m91(n + 11));
}
""", "m91", (87,), "m91(n + 11)", "nested recursion"),
    ("catalan_py", PY_HEAD + """\
@task
def catalan(n: np.int64) -> np.int64:
    if n <= 1:
        return 1
    total = 0
    for i in range(n):
        total += catalan(i) * catalan(n - 1 - i)
    return total
""", "catalan", (6,), "catalan(i) *", "product of two results"),
    ("catalan_c", C_HEAD + """\
int64_t catalan(int64_t n) {
    if (n <= 1) return 1;
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t a = cilk_spawn catalan(i);
        int64_t b = catalan(n - 1 - i);
        cilk_sync;
        total += a * b;
    }
    return total;
}
""", "catalan", (6,), "a * b", "product of two results"),
    ("motzkin_py", PY_HEAD + """\
@task
def motzkin(n: np.int64) -> np.int64:
    if n <= 1:
        return 1
    total = motzkin(n - 1)
    for i in range(n - 1):
        total += motzkin(i) * motzkin(n - 2 - i)
    return total
""", "motzkin", (6,), "motzkin(i) *", "product of two results"),
    ("motzkin_c", C_HEAD + """\
int64_t motzkin(int64_t n) {
    if (n <= 1) return 1;
    int64_t total = motzkin(n - 1);
    for (int64_t i = 0; i <= n - 2; i++)
        total += motzkin(i) * motzkin(n - 2 - i);
    return total;
}
""", "motzkin", (6,), "motzkin(i) *", "product of two results"),
    ("negamax_py", PY_HEAD + """\
@task
def negamax(depth: np.int64, pos: np.int64) -> np.int64:
    if depth == 0:
        return pos % 13 - 6
    return max(-negamax(depth - 1, pos * 3 + 1), -negamax(depth - 1, pos * 5 + 2))
""", "negamax", (4, 1), "-negamax(depth - 1, pos * 3", "negamax"),
    ("negamax_c", C_HEAD + """\
int64_t negamax(int64_t depth, int64_t pos) {
    if (depth == 0) return pos % 13 - 6;
    int64_t a = cilk_spawn negamax(depth - 1, pos * 3 + 1);
    int64_t b = negamax(depth - 1, pos * 5 + 2);
    cilk_sync;
    return -a > -b ? -a : -b;
}
""", "negamax", (4, 1), "a : -b", "negamax"),
    ("minimax_py", PY_HEAD + """\
@task
def minimax(depth: np.int64, pos: np.int64) -> np.int64:
    if depth == 0:
        return pos % 13
    if depth % 2 == 0:
        return max(minimax(depth - 1, pos * 3 + 1), minimax(depth - 1, pos * 5 + 2))
    return min(minimax(depth - 1, pos * 3 + 1), minimax(depth - 1, pos * 5 + 2))
""", "minimax", (4, 1), "minimax(depth - 1, pos * 3 + 1), minimax(depth - 1, pos * 5 + 2))\n",
     "minimax"),
    ("minimax_c", C_HEAD + """\
int64_t minimax(int64_t depth, int64_t pos) {
    if (depth == 0) return pos % 13;
    int64_t a = cilk_spawn minimax(depth - 1, pos * 3 + 1);
    int64_t b = minimax(depth - 1, pos * 5 + 2);
    cilk_sync;
    if (depth % 2 == 0) return a > b ? a : b;
    return a < b ? a : b;
}
""", "minimax", (4, 1), "a : b;\n}", "minimax"),
]


def _where(source: str, needle: str, last: bool = False) -> tuple[int, int]:
    at = source.rindex(needle) if last else source.index(needle)
    line = source.count("\n", 0, at) + 1
    col = at - (source.rfind("\n", 0, at) + 1) + 1
    return line, col


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / (name + (".c" if name.endswith("_c") else ".py"))
    path.write_text(source)
    return path


@pytest.mark.parametrize("case", PUBLISHED, ids=[c[0] for c in PUBLISHED])
def test_published_unrunnable_programs_are_located_errors(tmp_path, capsys, case):
    name, source, task, args, needle, names = case
    path = _write(tmp_path, name, source)
    # (the minimax cases point at the later, min, combination)
    line, col = _where(source, needle, last=name.startswith("minimax"))
    with pytest.raises(RevecError) as info:
        get_program(path)
    err = info.value
    assert names in err.message and "supported results" in err.message, err.format()
    assert err.loc is not None and (err.loc.line, err.loc.col) == (line, col), err.format()
    out = tmp_path / "out.txt"
    for argv in (["check", str(path)],
                 ["run", str(path), task, *map(str, args), "--backend", "c"],
                 ["transform", str(path), "--backend", "c", "-o", str(out)]):
        capsys.readouterr()
        code = main(argv)
        captured = capsys.readouterr()
        assert code == 2, captured
        assert captured.err.startswith(f"{path}:{line}:{col}: error: "), captured.err
        assert "\n    " + " " * (col - 1) + "^" in captured.err, captured.err
        assert "Traceback" not in captured.err
        assert not out.exists()


@pytest.mark.parametrize("lang", ["py", "c"])
def test_published_rejection_in_a_process(tmp_path, lang):
    """`revec check` and `revec run` as processes: exit 2, no traceback."""
    name, source, task, args, needle, _ = next(c for c in PUBLISHED
                                               if c[0] == f"ackermann_{lang}")
    path = _write(tmp_path, name, source)
    line, col = _where(source, needle)
    for argv in (["check", str(path)], ["run", str(path), task, *map(str, args)]):
        proc = subprocess.run([sys.executable, "-m", "revec", *argv], capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert proc.stderr.startswith(f"{path}:{line}:{col}: error: "), proc.stderr


# ------------------------------------------------------------------ a helper's missing return
COUNT_CHANGE_PY = PY_HEAD + """\
def first_denomination(kinds: np.int64) -> np.int64:
    if kinds == 1:
        return 1
    elif kinds == 2:
        return 5
    elif kinds == 3:
        return 10
    elif kinds == 4:
        return 25
    elif kinds == 5:
        return 50


@task
def cc(amount: np.int64, kinds: np.int64) -> np.int64:
    if amount == 0:
        return 1
    if amount < 0 or kinds == 0:
        return 0
    return cc(amount, kinds - 1) + cc(amount - first_denomination(kinds), kinds)
"""

COUNT_CHANGE_C = C_HEAD + """\
static int64_t first_denomination(int64_t kinds) {
    if (kinds == 1) return 1;
    else if (kinds == 2) return 5;
    else if (kinds == 3) return 10;
    else if (kinds == 4) return 25;
    else if (kinds == 5) return 50;
}

int64_t cc(int64_t amount, int64_t kinds) {
    if (amount == 0) return 1;
    if (amount < 0 || kinds == 0) return 0;
    int64_t a = cilk_spawn cc(amount, kinds - 1);
    int64_t b = cc(amount - first_denomination(kinds), kinds);
    cilk_sync;
    return a + b;
}
"""


def _plain_python(source: str, path: Path, task: str, args: tuple[int, ...]) -> Any:
    """The task's value by plain Python recursion (the module executed as written)."""
    ns: dict[str, Any] = {"__name__": f"twin_{abs(hash(source))}"}
    exec(compile(source, str(path), "exec"), ns)  # noqa: S102 - the test's own program
    return int(ns[task](*args))


def _elision(tmp_path: Path, source: str, task: str, args: tuple[int, ...]) -> int:
    """The task's value by gcc's serial elision of the C source."""
    src = tmp_path / f"elision_{task}.c"
    call = f"{task}({', '.join(map(str, args))})"
    src.write_text(source + f'\n#include <stdio.h>\nint main(void) {{ printf("%lld\\n", '
                            f"(long long){call}); return 0; }}\n")
    exe = cilk_oracle.build([src], tmp_path / f"elision_{task}")
    return int(cilk_oracle.run(exe)[0])


@pytest.mark.skipif(cilk_oracle.gcc() is None, reason="needs gcc")
@pytest.mark.parametrize("lang", ["py", "c"])
@pytest.mark.parametrize("backend", ["c", "numba"])
def test_helper_with_a_path_returning_nothing(tmp_path, capsys, lang, backend):
    source = COUNT_CHANGE_PY if lang == "py" else COUNT_CHANGE_C
    path = tmp_path / f"count_change.{lang}"
    path.write_text(source)
    twin = tmp_path / "count_change_twin.py"
    twin.write_text(COUNT_CHANGE_PY)
    expected = _plain_python(COUNT_CHANGE_PY, twin, "cc", (100, 5))
    if lang == "c":
        assert _elision(tmp_path, source, "cc", (100, 5)) == expected
    capsys.readouterr()
    assert main(["check", str(path)]) == 0
    variant = "reexp" if lang == "py" else "blocked"
    code = main(["run", str(path), "cc", "100", "5", "--backend", backend,
                 "--variant", variant, "--block-size", "16"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"result = {expected}\n" in captured.out, captured.out


@pytest.mark.skipif(cilk_oracle.gcc() is None, reason="needs gcc")
def test_helper_path_returning_nothing_taken(tmp_path):
    """kinds = 6 takes the path without a return (plain Python fails on the None): on
    both back ends, 1 and 2 workers, a located error at the helper, exit 2.  In one
    process with a time limit and a memory budget: a helper returning 0 there (as
    before) makes the tree infinite."""
    twin = tmp_path / "count_change_twin.py"
    twin.write_text(COUNT_CHANGE_PY)
    with pytest.raises(TypeError):
        _plain_python(COUNT_CHANGE_PY, twin, "cc", (100, 6))
    runs, expected = [], []
    for lang, source in (("py", COUNT_CHANGE_PY), ("c", COUNT_CHANGE_C)):
        path = tmp_path / f"count_change.{lang}"
        path.write_text(source)
        line = source.count("\n", 0, source.index("first_denomination(")) + 1
        col = _where(source, "first_denomination(")[1] if lang == "c" else 1
        for backend, workers in itertools.product(("c", "numba"), ("1", "2")):
            variant = ("bfs", "blocked", "reexp")[len(runs) % 3]
            runs.append(["run", str(path), "cc", "100", "6", "--backend", backend,
                         "--variant", variant, "--block-size", "16", "--workers", workers,
                         "--max-memory", "256M"])
            expected.append(f"{path}:{line}:{col}: error: 'first_denomination' reached the "
                            "end of its body without returning a value: a path through it "
                            "has no 'return'")
    script = ("import sys\nfrom revec.cli import main\n"
              f"for argv in {runs!r}:\n"
              "    code = main(argv)\n"
              "    print(f'exit {code}', file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "result =" not in proc.stdout, proc.stdout
    parts = proc.stderr.split("exit ")
    assert [p.split("\n")[0] for p in parts[1:]] == ["2"] * len(runs), proc.stderr
    errors = [parts[0]] + [p.split("\n", 1)[1] for p in parts[1:-1]]
    for err, want in zip(errors, expected):
        assert err.startswith(want), (want, proc.stderr)


# ------------------------------------------------------------------ the sweep
def _check_generated(tmp_path: Path, p: Program, backend: str) -> str:
    """Check ``p``; run it if accepted.  Returns what happened (for the counts)."""
    path = tmp_path / (p.name.replace("-", "_") + (".py" if p.lang == "py" else ".c"))
    path.write_text(p.source)
    nlines = p.source.count("\n")
    try:
        program = get_program(path)
    except RevecError as err:
        assert err.loc is not None and err.loc.file == str(path), err.format()
        assert 1 <= err.loc.line <= nlines and err.loc.col >= 1, err.format()
        assert err.loc.source_line.strip(), err.format()
        assert "supported results" in err.message, err.format()
        return "rejected"
    assert not p.unrunnable, f"{p.name} passes check:\n{p.source}"
    twin = tmp_path / (p.name.replace("-", "_") + "_twin.py")
    try:
        expected: int | None = _plain_python(p.twin, twin, "f", p.args)
    except TypeError:  # the helper's None: the path without a return is taken
        expected = None
    if expected is not None and p.lang == "c":
        assert _elision(tmp_path, p.source, "f", p.args) == expected, p.source
    variant = ("bfs", "blocked", "reexp")[len(p.name) % 3]
    try:
        res = run_loaded(program, "f", p.args, variant=variant, backend=backend,
                         block_size=4)
    except RevecError as err:
        assert expected is None, f"{p.name}: {err.format()}"
        helper_line = p.source.count("\n", 0, p.source.index(" h(")) + 1
        assert err.loc is not None and err.loc.line == helper_line, err.format()
        assert "without returning a value" in err.message
        return "run-time error"
    assert expected is not None, f"{p.name} ran where plain Python fails:\n{p.source}"
    assert res.result == expected, (p.name, backend, res.result, expected)
    return "ran"


PROGRAMS = programs()
# the default run: every program check rejects (cheap) and a fixed sample of the
# accepted ones, each built once on one back end (alternating)
SAMPLE_ACCEPTED = [p for p in PROGRAMS if not p.unrunnable][::4]
DEFAULT = [p for p in PROGRAMS if p.unrunnable] + SAMPLE_ACCEPTED
SLOW = [p for p in PROGRAMS if p not in DEFAULT]


@pytest.mark.skipif(cilk_oracle.gcc() is None, reason="needs gcc")
def test_generated_programs_pass_check_only_if_they_run(tmp_path):
    seen: dict[str, int] = {}
    for i, p in enumerate(DEFAULT):
        what = _check_generated(tmp_path, p, ("c", "numba")[i % 2])
        seen[what] = seen.get(what, 0) + 1
    assert len(DEFAULT) >= 100
    # the sample holds each outcome (the property is not vacuous)
    assert seen.get("rejected", 0) >= 100 and seen.get("ran", 0) >= 5 and \
        seen.get("run-time error", 0) >= 1, seen


@pytest.mark.slow
@pytest.mark.skipif(cilk_oracle.gcc() is None, reason="needs gcc")
@pytest.mark.parametrize("backend", ["c", "numba"])
def test_generated_programs_all(tmp_path, backend):
    for p in SLOW + SAMPLE_ACCEPTED:
        _check_generated(tmp_path, p, backend)


def test_helper_path_returning_nothing_taken_in_the_plain_run(tmp_path, capsys):
    """``--variant seq`` runs the program as written: the helper's None reaches the
    subtraction and Python raises TypeError there.  That is one located error at the
    program's line (exit 2), not a traceback through revec's frames; a path not taken
    runs as plain Python does."""
    path = _write(tmp_path, "count_change", COUNT_CHANGE_PY)
    assert main(["run", str(path), "cc", "30", "5", "--variant", "seq"]) == 0
    assert "result = 18\n" in capsys.readouterr().out
    code = main(["run", str(path), "cc", "30", "6", "--variant", "seq"])
    err = capsys.readouterr().err
    line, col = _where(COUNT_CHANGE_PY, "amount - first_denomination", last=True)
    assert code == 2, err
    assert err.startswith(f"{path}:{line}:{col}: error: the plain Python run of 'cc' raised "
                          "TypeError: unsupported operand type(s) for -"), err
    assert "Traceback" not in err and err.rstrip().endswith("^"), err

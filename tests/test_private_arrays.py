"""Task-private arrays (issue 33 item 2): boards copied from the parent and changed, in
Python (lists and tuples: ``board + [c]``, ``(*board, c)``, ``list(board)``) and Cilk C
(Cilk-5's ``alloca`` + ``memcpy`` + ``b[j] = c``, fixed local arrays), read by helpers.

Generated programs (tests/progen_private.py) are checked against independent oracles:
the Python ones against the plain-Python run of the same file, the C ones against gcc's
serial elision.  The default run checks 100 of each on every variant on the NumPy plan
interpreter, 25 of each on the C back end and 12 on numba (some with 2 workers);
``pytest -m slow`` runs all of them on every back end.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from revec.api import run_program
from revec.bench.answers import nqueens
from revec.errors import RevecError
from revec.frontend import load_program
from tests import cilk_oracle
from tests.progen_private import PrivateProgram, private_program
from tests.rejections import assert_located_rejection, where
from tests.support.generated_runs import VARIANTS, check_c, check_python

SEEDS = range(100)


def _backends(seed: int) -> list[str]:
    out = ["numpy"]
    if seed % 4 == 1:
        out.append("c")
    if seed % 8 == 1:
        out.append("numba")
    return out


def _check_python(p: PrivateProgram, path: Path, backends: list[str]) -> None:
    check_python(p.python, path, p.py_args, p.seed, backends, p.seed % 16 == 1)


def _check_c(p: PrivateProgram, folder: Path, backends: list[str]) -> None:
    check_c(p.c, p.c_main, folder, p.c_args, p.seed, backends, p.seed % 16 == 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_python(seed: int, tmp_path: Path) -> None:
    _check_python(private_program(seed), tmp_path / "prog.py", _backends(seed))


@pytest.mark.skipif(cilk_oracle.gcc() is None, reason="no C compiler for the serial elision")
@pytest.mark.parametrize("seed", SEEDS)
def test_generated_c(seed: int, tmp_path: Path) -> None:
    _check_c(private_program(seed), tmp_path, _backends(seed))


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_generated_every_backend(seed: int, tmp_path: Path) -> None:
    p = private_program(seed)
    _check_python(p, tmp_path / "prog.py", ["numpy", "c", "numba"])
    if cilk_oracle.gcc() is not None:
        _check_c(p, tmp_path, ["c", "numba"])


def test_generator_covers_every_form() -> None:
    python = "".join(private_program(s).python for s in SEEDS)
    c = "".join(private_program(s).c for s in SEEDS)
    for form in ("board + [c]", "[*board, c]", "child = list(board)", "board + (c,)",
                 "(*board, c)", "board[:len(board)] + (c,)", "tuple[", "list[",
                 "len(board) >= n", "== len(board)", "child[-1]", "board[-1]"):
        assert form in python, form
    for form in ("alloca((j + 1) * sizeof(", "b[8];", "memcpy(b, a, j * sizeof(",
                 "score(j + 1, b)", "char", "short", "int *a"):
        assert form in c, form


# --------------------------------------------------------------------------- published styles
CILK5_NQUEENS = '''\
#include <stdio.h>
#include <string.h>
#include <alloca.h>
#include <cilk/cilk.h>

/* the Cilk-5 check: no two queens of the first n rows attack each other */
int ok(int n, char *a) {
    int i, j;
    char p, q;
    for (i = 0; i < n; i++) {
        p = a[i];
        for (j = i + 1; j < n; j++) {
            q = a[j];
            if (q == p || q == p - (j - i) || q == p + (j - i))
                return 0;
        }
    }
    return 1;
}

int nqueens(int n, int j, char *a) {
    char *b;
    int i;
    int solNum = 0;
    if (n == j)
        return 1;
    for (i = 0; i < n; i++) {
        b = (char *) alloca((j + 1) * sizeof(char));
        memcpy(b, a, j * sizeof(char));
        b[j] = (char) i;
        if (ok(j + 1, b))
            solNum += cilk_spawn nqueens(n, j + 1, b);
    }
    cilk_sync;
    return solNum;
}

int main(int argc, char *argv[]) {
    int n = 8;
    char *a = (char *) alloca(n * sizeof(char));
    printf("%d\\n", nqueens(n, 0, a));
    return 0;
}
'''

PY_QUEENS = '''\
import numpy as np
from revec import task, spawn, reduce, Reducer

solutions = Reducer(np.int64, "sum")


def safe(board, row, col):
    for r in range(row):
        c = board[r]
        if c == col or c - col == row - r or col - c == row - r:
            return False
    return True


@task
def queens(n: int, board: list[int]):
    if len(board) == n:
        reduce(solutions, 1)
    else:
        for col in range(n):
            if safe(board, len(board), col):
                spawn(queens, n, board + [col])


@task
def queens_count(n: int, board: tuple[int, ...]) -> int:
    if len(board) >= n:
        return 1
    total = 0
    for col in range(n):
        if safe(board, len(board), col):
            total += queens_count(n, (*board, col))
    return total
'''


def test_cilk5_nqueens_elision_oracle(tmp_path: Path) -> None:
    """The program itself, built by gcc as its serial elision, answers nqueens(8); so
    does revec's sequential run of it (every back end and variant on n = 8: -m slow)."""
    path = tmp_path / "nqueens.c"
    path.write_text(CILK5_NQUEENS)
    if cilk_oracle.gcc() is not None:
        exe = cilk_oracle.build([path], tmp_path / "elision")
        assert int(cilk_oracle.run(exe)[0]) == nqueens(8)
    board = np.zeros(8, np.int8)
    assert run_program(path, "nqueens", (8, 0, board), variant="seq").result == nqueens(8)


# n = 8 (92 solutions, about 2,000 tasks at B = 4: 37 s, mostly the numpy back end) under
# -m slow: the default suite's time budget; n = 6 runs the same paths by default
@pytest.mark.parametrize("n", [1, 4, 6, pytest.param(8, marks=pytest.mark.slow)])
def test_cilk5_nqueens_verbatim_style(n: int, tmp_path: Path) -> None:
    path = tmp_path / "nqueens.c"
    path.write_text(CILK5_NQUEENS)
    if n == 8 and cilk_oracle.gcc() is not None:
        exe = cilk_oracle.build([path], tmp_path / "elision")
        assert int(cilk_oracle.run(exe)[0]) == nqueens(8)
    board = np.zeros(n, np.int8)
    assert run_program(path, "nqueens", (n, 0, board), variant="seq").result == nqueens(n)
    for backend in ("c", "numba", "numpy"):
        for variant in VARIANTS:
            got = run_program(path, "nqueens", (n, 0, board), variant=variant,
                              backend=backend, block_size=4)
            assert got.result == nqueens(n), (backend, variant)
    got = run_program(path, "nqueens", (n, 0, board), backend="c", block_size=2, workers=2)
    assert got.result == nqueens(n)


@pytest.mark.parametrize("n", [4, 6, 7])
def test_python_queens_lists_and_tuples(n: int, tmp_path: Path) -> None:
    path = tmp_path / "queens.py"
    path.write_text(PY_QUEENS)
    for backend in ("c", "numba", "numpy"):
        for variant in VARIANTS:
            got = run_program(path, "queens", (n, []), variant=variant, backend=backend,
                              block_size=3)
            assert got.reducers["solutions"] == nqueens(n), (backend, variant)
            got = run_program(path, "queens_count", (n, ()), variant=variant,
                              backend=backend, block_size=3)
            assert got.result == nqueens(n), (backend, variant)
    got = run_program(path, "queens", (n, []), backend="numba", block_size=2, workers=2)
    assert got.reducers["solutions"] == nqueens(n)


def test_capacity_follows_the_root_value(tmp_path: Path) -> None:
    """A board bounded by a parameter is specialised for its root value: the fields of a
    run hold exactly n elements, for every n."""
    path = tmp_path / "queens.py"
    path.write_text(PY_QUEENS)
    from revec.frontend.inputs import bind_inputs
    program = load_program(path)
    for n in (3, 5, 9):
        bound = bind_inputs(program, "queens", (n, []))[0]
        (pa,) = bound.tasks["queens"].private
        assert pa.capacity == n and pa.bound == "n"
    with pytest.raises(RevecError, match="3 elements, but the task's list holds at most 2"):
        run_program(path, "queens", (2, [0, 1, 2]), variant="seq")


def test_root_board_is_the_start(tmp_path: Path) -> None:
    """The root call's list is the board so far: a partial placement counts its own
    completions (queens in rows 0 and 1 at columns 1 and 3 of a 6-board: 1 solution)."""
    path = tmp_path / "queens.py"
    path.write_text(PY_QUEENS)
    ref = run_program(path, "queens", (6, [1, 3]), variant="seq").reducers
    assert ref["solutions"] == 1
    for backend in ("c", "numba", "numpy"):
        assert run_program(path, "queens", (6, [1, 3]), backend=backend).reducers == ref


# --------------------------------------------------------------------------- rejections
C_HEAD = "#include <string.h>\n#include <alloca.h>\n#include <cilk/cilk.h>\n"
C_REJECTIONS = [
    ("unbounded_alloca", """\
long f(int n, int j, char *a) {
    if (j > n) return 1;
    long t = 0;
    char *b = alloca((j + 1) * sizeof(char));
    memcpy(b, a, j);
    b[j] = 1;
    t += cilk_spawn f(n, j + 2, b);
    cilk_sync;
    return t;
}
""", "cannot bound the size of 'b'", "j + 1) * sizeof(char));"),
    ("own_board_written", """\
long f(int n, int j, char *a) {
    if (j == n) return 1;
    long t = 0;
    char b[8];
    memcpy(b, a, j);
    a[0] = 2;
    t += cilk_spawn f(n, j + 1, b);
    cilk_sync;
    return t;
}
""", "'a' is the board this function was given; copy it", "a[0] = 2;"),
    ("memcpy_into_own_board", """\
long f(int n, int j, char *a) {
    if (j == n) return 1;
    long t = 0;
    char b[8];
    memcpy(a, b, j);
    t += cilk_spawn f(n, j + 1, b);
    cilk_sync;
    return t;
}
""", "'a' is the board this task was given", "a, b, j);"),
    ("board_as_value", """\
long f(int n, int j, char *a) {
    if (j == n) return 1;
    long t = 0;
    char b[8];
    memcpy(b, a, j);
    long q = b;
    t += cilk_spawn f(n, j + 1, b);
    cilk_sync;
    return t + q;
}
""", "'b' is a board (a task-private array): index it", "b;"),
    ("memset_not_constant", """\
long f(int n, int j, char *a) {
    if (j == n) return 1;
    long t = 0;
    char b[8];
    memset(b, j, 8);
    t += cilk_spawn f(n, j + 1, b);
    cilk_sync;
    return t;
}
""", "memset fills a board with a constant byte", "j, 8);"),
]


@pytest.mark.parametrize("name, body, message, snippet", C_REJECTIONS,
                         ids=[r[0] for r in C_REJECTIONS])
def test_c_rejections(name: str, body: str, message: str, snippet: str, tmp_path: Path,
                      capsys: pytest.CaptureFixture[str]) -> None:
    src = C_HEAD + body
    path = tmp_path / "bad.c"
    path.write_text(src)
    line, col = where(src, snippet)
    assert_located_rejection(path, message, line, col, tmp_path / "out.c",
                             ("--backend", "c"), capsys)


def test_boards_count_in_frame_bytes(tmp_path: Path) -> None:
    """A board's elements are frame fields: a frame of queens(n, board) holds n int64
    elements and the int64 length (n itself is passed on unchanged: held once), and the
    peak in bytes is the peak of frames times that."""
    path = tmp_path / "queens.py"
    path.write_text(PY_QUEENS)
    for n in (4, 6):
        r = run_program(path, "queens", (n, []), backend="c", block_size=4)
        assert r.stats.frame_bytes == 8 * n + 8
        assert r.stats.peak_live_bytes == r.stats.peak_live * (8 * n + 8) > 0
        assert r.stats.to_json()["peak_live_bytes"] == r.stats.peak_live_bytes

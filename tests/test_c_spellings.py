"""Every common spelling of a Cilk C task, as published (issue 34, item 2): OpenCilk's
``cilk_scope`` and ``cilk_for``, Cilk Plus's ``_Cilk_spawn``/``_Cilk_sync``/``_Cilk_for``,
MIT Cilk-5's ``cilk``/``spawn``/``sync`` with ``<cilk-lib.cilkh>`` and ``Cilk_alloca``,
and OpenMP tasks in BOTS's style (``#pragma omp task`` statements and blocks,
``taskwait``, ``taskgroup``, the ``parallel``/``single`` wrapper of the root caller).

Each program is a whole file with its own ``main`` (which revec does not read), built by
gcc as its serial elision (the keywords defined away, the pragmas ignored: an oracle
without revec) and run; revec's sequential reference and a compiled back end (C for
some programs, numba for the others; both for every program under ``pytest -m slow``)
must print the same number.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from revec.frontend import load_program
from tests import cilk_oracle
from tests.rejections import assert_located_rejection, where
from tests.support.elision_runs import assert_runs_match

needs_gcc = pytest.mark.skipif(cilk_oracle.gcc() is None,
                               reason="no C compiler for the serial elision")

# the serial elision of every spelling (gcc without -fopenmp ignores the omp pragmas)
ELISION = ("-Dcilk_for=for", "-Dcilk_scope=", "-D_Cilk_spawn=", "-D_Cilk_sync=",
           "-D_Cilk_for=for", "-D_Cilk_scope=")
CILK5_LIB = "#include <alloca.h>\n#define Cilk_alloca alloca\n"


@dataclass(frozen=True)
class Program:
    source: str
    task: str
    args: tuple[int, ...]
    board: int = 0  # > 0: the root call also passes a zeroed int8 board of this size
    backend: str = "c"  # the compiled back end of the default run
    cilk5: bool = False


PROGRAMS: dict[str, Program] = {
    "opencilk_scope": Program("""\
#include <cilk/cilk.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int64_t fib(int32_t n) {
    if (n < 2)
        return n;
    int64_t x, y;
    cilk_scope {
        x = cilk_spawn fib(n - 1);
        y = fib(n - 2);
    }
    return x + y;
}

int main(int argc, char *argv[]) {
    int n = argc > 1 ? atoi(argv[1]) : 21;
    printf("%ld\\n", fib(n));
    return 0;
}
""", "fib", (21,)),
    "opencilk_for": Program("""\
#include <cilk/cilk.h>
#include <stdio.h>

#define WIDTH 4

long tree(int depth, int seed) {
    if (depth == 0)
        return seed % 7;
    long part[WIDTH];
    cilk_for (int i = 0; i < WIDTH; i++) {
        part[i] = tree(depth - 1, seed * 3 + i);
    }
    long total = 0;
    for (int i = 0; i < WIDTH; i++)
        total += part[i];
    return total + depth;
}

int main(void) {
    printf("%ld\\n", tree(5, 1));
    return 0;
}
""", "tree", (5, 1), backend="numba"),
    "cilk_plus": Program("""\
#include <cilk/cilk.h>
#include <stdio.h>

long paths(int n, int w) {
    if (n <= 1) return n + w;
    long a = _Cilk_spawn paths(n - 1, w);
    long b = paths(n - 2, w + 1);
    _Cilk_sync;
    return 2 * a + b * (w & 3) + (n & 3);
}

int main(void) {
    printf("%ld\\n", paths(16, 2));
    return 0;
}
""", "paths", (16, 2)),
    "cilk_plus_for": Program("""\
#include <cilk/cilk.h>
#include <stdio.h>

int count(int n, int k) {
    int part[3] = {0};
    if (n < 3) return n + k;
    _Cilk_for (int i = 0; i < 3; i++)
        if (i < n % 4)
            part[i] = count(n - 1 - i, k + i);
    int s = 0;
    for (int i = 0; i < 3; i++)
        s += part[i];
    return s;
}

int main(void) {
    printf("%d\\n", count(13, 0));
    return 0;
}
""", "count", (13, 0), backend="numba"),
    # MIT Cilk-5's nqueens (examples/nqueens.cilk), in its spelling and header
    "cilk5_nqueens": Program("""\
#include <cilk-lib.cilkh>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

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

cilk int nqueens(int n, int j, char *a) {
    char *b;
    int i;
    int count[16];
    int solNum = 0;
    int k = 0;
    if (n == j)
        return 1;
    for (i = 0; i < n; i++) {
        b = Cilk_alloca((j + 1) * sizeof(char));
        memcpy(b, a, j * sizeof(char));
        b[j] = i;
        if (ok(j + 1, b))
            count[k++] = spawn nqueens(n, j + 1, b);
    }
    sync;
    for (i = 0; i < k; i++)
        solNum += count[i];
    return solNum;
}

cilk int main(int argc, char *argv[]) {
    int n = 7, res;
    char *a = Cilk_alloca(n * sizeof(char));
    res = spawn nqueens(n, 0, a);
    sync;
    printf("%d\\n", res);
    return 0;
}
""", "nqueens", (7, 0), board=7, cilk5=True),
    # BOTS's fib (omp-tasks/fib/fib.c): tasks as statements, the root caller's
    # parallel/single wrapper
    "bots_fib": Program("""\
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

long long res;

long long fib(int n) {
    long long x, y;
    if (n < 2) return n;
#pragma omp task untied firstprivate(n) shared(x)
    x = fib(n - 1);
#pragma omp task untied firstprivate(n) shared(y)
    y = fib(n - 2);
#pragma omp taskwait
    return x + y;
}

void fib0(int n) {
#pragma omp parallel
#pragma omp single
#pragma omp task untied
    res = fib(n);
}

int main(void) {
    fib0(20);
    printf("%lld\\n", res);
    return 0;
}
""", "fib", (20,), backend="numba"),
    # BOTS's nqueens (omp-tasks/nqueens, the untied version): a task block copying
    # the board, the count through &csols[i]
    "bots_nqueens": Program("""\
#include <stdlib.h>
#include <stdio.h>
#include <memory.h>
#include <alloca.h>
#include <omp.h>

#define MAX_SIZE 16

static int ok(int n, char *a) {
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

void nqueens(int n, int j, char *a, int *solutions) {
    int csols[MAX_SIZE] = {0};
    int i;
    if (n == j) {
        *solutions = 1;
        return;
    }
    *solutions = 0;
    for (i = 0; i < n; i++) {
#pragma omp task untied
        {
            char *b = alloca(n * sizeof(char));
            memcpy(b, a, j * sizeof(char));
            b[j] = (char) i;
            if (ok(j + 1, b))
                nqueens(n, j + 1, b, &csols[i]);
        }
    }
#pragma omp taskwait
    for (i = 0; i < n; i++)
        *solutions += csols[i];
}

void find_queens(int size) {
    int total_count = 0;
#pragma omp parallel
    {
#pragma omp single
        {
            char *a;
            a = alloca(size * sizeof(char));
            nqueens(size, 0, a, &total_count);
        }
    }
    printf("%d\\n", total_count);
}

int main(void) {
    find_queens(7);
    return 0;
}
""", "nqueens", (7, 0), board=7),
    "omp_taskgroup": Program("""\
#include <stdio.h>

int walk(int n, int d) {
    int a, b, c;
    if (n < 3) return d * n + 1;
#pragma omp taskgroup
    {
#pragma omp task shared(a)
        a = walk(n - 1, d + 1);
#pragma omp task shared(b)
        b = walk(n - 2, d);
        c = walk(n - 3, d + 2);
    }
    return a + b - c + (n & 1);
}

int main(void) {
    printf("%d\\n", walk(19, 0));
    return 0;
}
""", "walk", (19, 0), backend="numba"),
}


def oracle(folder: Path, spec: Program) -> int:
    """The number gcc's serial elision of the program prints."""
    prog = folder / "prog.c"
    prog.write_text(spec.source)
    (cilk_oracle.include_dir(folder) / "cilk-lib.cilkh").write_text(CILK5_LIB)
    exe = cilk_oracle.build([prog], folder / "elision", cilk5=spec.cilk5, extra=ELISION)
    return int(cilk_oracle.run(exe)[0])


def check(folder: Path, name: str, backends: tuple[str, ...]) -> None:
    spec = PROGRAMS[name]
    expected = oracle(folder, spec)
    assert_runs_match(folder / "prog.c", spec.task, spec.args, spec.board, backends,
                      expected, name)


@needs_gcc
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_spelling_matches_serial_elision(tmp_path, name):
    check(tmp_path, name, (PROGRAMS[name].backend,))


@needs_gcc
@pytest.mark.slow
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_spelling_matches_serial_elision_both_back_ends(tmp_path, name):
    check(tmp_path, name, ("c", "numba"))


def test_spellings_are_the_same_task(tmp_path):
    """cilk_scope, _Cilk_spawn, Cilk-5 and omp task spellings of one fib check as the
    same task (the C spelling's result type, one spawn site each)."""
    bodies = {
        "scope": "cilk_scope { x = cilk_spawn fib(n - 1); y = fib(n - 2); }",
        "plus": "x = _Cilk_spawn fib(n - 1); y = fib(n - 2); _Cilk_sync;",
        "omp": "\n#pragma omp task shared(x)\nx = fib(n - 1);\ny = fib(n - 2);\n"
               "#pragma omp taskwait\n",
    }
    for key, body in bodies.items():
        path = tmp_path / f"{key}.c"
        path.write_text("#include <cilk/cilk.h>\nlong fib(int n) {\n  long x, y;\n"
                        f"  if (n < 2) return n;\n  {body}\n  return x + y;\n}}\n")
        program = load_program(path)
        assert list(program.tasks) == ["fib"], key
        assert program.tasks["fib"].max_spawns == 2, key


# (name, source, message fragment, the text the caret points at)
ERRORS = [
    ("task_pragma_without_statement", """\
long f(int n) {
  long x;
  if (n < 2) return n;
  x = f(n - 1);
  {
#pragma omp task
  }
  return x;
}
""", "'#pragma omp task' needs a statement after it", "#pragma omp task"),
    ("taskloop_of_a_while", """\
void f(int n) {
  if (n < 2) return;
#pragma omp taskloop
  while (n > 0) n--;
  f(n - 1);
}
""", "#pragma omp taskloop needs a for loop", "#pragma omp taskloop"),
    ("cilk_reducer", """\
#include <cilk/cilk.h>
long f(int n) {
  long cilk_reducer(0, 0) total = 0;
  if (n < 2) return n;
  return f(n - 1);
}
""", "cilk_reducer hyperobjects are not supported", "cilk_reducer"),
    ("read_before_taskwait", """\
long f(int n) {
  long x, y;
  if (n < 2) return n;
#pragma omp task shared(x)
  x = f(n - 1);
  y = x + f(n - 2);
#pragma omp taskwait
  return y;
}
""", "'x' holds the value of a spawned call and is read before cilk_sync", "x + f"),
    ("read_inside_taskgroup", """\
long f(int n) {
  long x, y;
  if (n < 2) return n;
#pragma omp taskgroup
  {
#pragma omp task shared(x)
    x = f(n - 1);
    y = x + f(n - 2);
  }
  return y;
}
""", "'x' holds the value of a spawned call and is read before cilk_sync", "x + f"),
    ("read_in_cilk_scope", """\
#include <cilk/cilk.h>
long f(int n) {
  long x, y;
  if (n < 2) return n;
  cilk_scope {
    x = cilk_spawn f(n - 1);
    y = x + f(n - 2);
  }
  return y;
}
""", "'x' holds the value of a spawned call and is read before cilk_sync", "x + f"),
]


@pytest.mark.parametrize("name, source, message, needle", ERRORS, ids=[e[0] for e in ERRORS])
def test_spelling_errors_are_located(tmp_path, capsys, name, source, message, needle):
    path = tmp_path / "prog.c"
    path.write_text(source)
    line, col = where(source, needle)
    assert_located_rejection(path, message, line, col, tmp_path / "out.c",
                             ("--backend", "c"), capsys)

"""Cilk C through the system preprocessor (issue 34, items 1 and 4, and the macro defect).

A macro's text is substituted exactly as C substitutes it (``#define LEAF 2 + 1`` then
``LEAF * 2`` is 2 + 1 * 2, as gcc computes; revec once read the body as one
parenthesised value and answered 534 where gcc's program prints 356); function-like
macros, type macros, typedefs of arrays, ``<limits.h>``, ``<math.h>``, ``<stdbool.h>``,
``#if`` on character constants and ``#include "local.h"`` work; a published file's
``main``, printing and serial variants do not stop its task from being checked and run.
Every program is checked against gcc's serial elision of the same file (its own
``main`` prints the answer); errors inside macro expansions are located at the macro's
use in the user's file, with exit status 2, a caret and no output file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from revec.api import get_program, run_loaded
from revec.cli import main
from revec.errors import RevecError
from revec.frontend import load_program
from tests import cilk_oracle
from tests.rejections import assert_located_rejection, where

needs_gcc = pytest.mark.skipif(cilk_oracle.gcc() is None,
                               reason="no C compiler for the serial elision")

# (file name -> text) of each program; "prog.c" is the program, its main prints the
# answer of the call (task, args)
PROGRAMS: dict[str, tuple[dict[str, str], str, tuple[int, ...], str]] = {
    # the user's report, and other macro bodies that are not one value
    "macro_precedence": ({"prog.c": """\
#include <cilk/cilk.h>
#include <stdio.h>

#define LEAF 2 + 1
#define NEG -3
#define HALF(x) x / 2
#define SQ(x) x * x
#define TWICE(e) (e) + (e)

long f(int n) {
    if (n < 2) return LEAF * 2;
    long x = cilk_spawn f(n - 1);
    long y = f(n - 2);
    cilk_sync;
    return x + y - NEG + HALF(n + 1) + SQ(n + 1) % 5 + TWICE(n) * 2;
}

int main(void) {
    printf("%ld\\n", f(15));
    return 0;
}
"""}, "f", (15,), "c"),
    "macros_types_headers": ({"params.h": """\
#ifndef PARAMS_H
#define PARAMS_H
#define WIDTH 3
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
""", "prog.c": """\
#include <cilk/cilk.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include "params.h"

#define REAL double
typedef long acc_t;
typedef acc_t part_t[WIDTH];

#if 'A' == 65 && INT_MAX > 65535 && defined(MAX)
#define OFFSET (LONG_MAX % 1000 + INT_MIN / 65536)
#else
#define OFFSET 1000000
#endif

static acc_t leaf(int seed) {
    REAL r = sqrt((REAL)(seed % 50)) + fabs(-0.25 * seed);
    return (acc_t)floor(r * 10.0) + MAX(seed % 7, 3);
}

acc_t tree(int depth, int seed) {
    if (depth == 0)
        return leaf(seed) + OFFSET;
    part_t part;
    int k = 0;
    acc_t total = 0;
    bool odd = seed & 1;
    for (int i = 0; i < WIDTH; i++)
        part[k++] = cilk_spawn tree(depth - 1, seed * 5 + i);
    cilk_sync;
    for (int i = 0; i < k; i++)
        total += part[i];
    return total + (odd ? CHAR_BIT : 0);
}

int main(void) {
    printf("%ld\\n", tree(5, 2));
    return 0;
}
"""}, "tree", (5, 2), "numba"),
    # a file as published: timing and printing in main, a serial variant outside the
    # subset, file-scope declarations only main uses
    "published_file": ({"prog.c": """\
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef long double wide_t;
typedef int (*compare_fn)(const void *, const void *);
static FILE *log_file;
static wide_t total_time;
static struct timeval started;

long fib_serial(int n) {
    long *memo = malloc(sizeof(long));
    if (n < 2) return n;
    *memo = fib_serial(n - 1) + fib_serial(n - 2);
    return *memo;
}

long fib(int n) {
    if (n < 2) return n;
    long x = cilk_spawn fib(n - 1);
    long y = fib(n - 2);
    cilk_sync;
    return x + y;
}

static double seconds(struct timeval *a, struct timeval *b) {
    return (b->tv_sec - a->tv_sec) + (b->tv_usec - a->tv_usec) * 1e-6;
}

static void report(const char *what, long value, double t) {
    fprintf(log_file ? log_file : stderr, "%s: %ld in %f s\\n", what, value, t);
}

int main(int argc, char **argv) {
    struct timeval stop;
    int n = argc > 1 ? atoi(argv[1]) : 22;
    log_file = NULL;
    gettimeofday(&started, NULL);
    long r = fib(n);
    gettimeofday(&stop, NULL);
    total_time = seconds(&started, &stop);
    report("fib", r, (double)total_time);
    printf("%ld\\n", r);
    return 0;
}
"""}, "fib", (22,), "c"),
}


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder / "prog.c"


@needs_gcc
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_matches_serial_elision(tmp_path, name):
    files, task, args, backend = PROGRAMS[name]
    path = write(tmp_path, files)
    expected = int(cilk_oracle.run(cilk_oracle.build([path], tmp_path / "elision"))[0])
    program = get_program(path)
    got = {"seq": run_loaded(program, task, args, variant="seq").result,
           backend: run_loaded(program, task, args, variant="reexp", backend=backend,
                               block_size=8, reexp_threshold=4).result}
    assert {k: int(v) for k, v in got.items()} == dict.fromkeys(got, expected), got


@needs_gcc
def test_the_reported_macro_answer(tmp_path, capsys):
    """The report: ``#define LEAF 2 + 1`` and ``return LEAF * 2;`` as gcc: 356."""
    files, task, _, _ = PROGRAMS["macro_precedence"]
    path = write(tmp_path, {"prog.c": files["prog.c"].replace(
        "return x + y - NEG + HALF(n + 1) + SQ(n + 1) % 5 + TWICE(n) * 2;",
        "return x + y;").replace("f(15)", "f(10)")})
    expected = cilk_oracle.run(cilk_oracle.build([path], tmp_path / "elision"))[0]
    assert expected == "356"
    assert main(["run", str(path), task, "10", "--variant", "seq"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "result = 356"


def test_only_the_spawning_task_is_checked(tmp_path, capsys):
    """The serial variant (outside the subset), main and printing leave `check` alone."""
    files, _, _, _ = PROGRAMS["published_file"]
    path = write(tmp_path, files)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "task fib(n: int32) -> int64" in out
    assert "fib_serial" not in out and "report" not in out


HEAD = "#include <cilk/cilk.h>\n"

# (name, files besides prog.c, prog.c after HEAD, message fragment, the text the caret
# points at in prog.c (or, "file.h|text", in that file))
CASES = [
    ("pointer_in_function_like_macro", {}, """\
#define DEREF(v) (*(&(v)))
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + DEREF(n);
}
""", "pointers are not supported", "n);"),  # as without the macro: at the operand
    ("pointer_in_object_like_macro", {}, """\
#define SELF (*(&n))
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + SELF;
}
""", "pointers are not supported", "SELF;"),
    ("unknown_call_in_object_like_macro", {}, """\
#define NOISE jitter(n)
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + NOISE;
}
""", "call of unknown function 'jitter'", "NOISE;"),
    ("after_an_expansion_on_the_line", {}, """\
#define MAX(a, b) ((a) > (b) ? (a) : (b))
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + MAX(n,   2) + bad(n);
}
""", "call of unknown function 'bad'", "bad(n)"),
    ("after_a_macro_call_over_lines", {}, """\
#define ADD(a, b) ((a) + (b))
long f(int n) {
  if (n < 2) return n;
  long x = ADD(n,
               1) + oops(n);
  return f(n - 1) + x;
}
""", "call of unknown function 'oops'", "oops(n)"),
    ("unsupported_typedef_used", {}, """\
typedef long double wide_t;
long f(int n) {
  wide_t w = n;
  if (n < 2) return n;
  return f(n - 1);
}
""", "its type 'wide_t' (at line 2): long double is not supported", "w = n"),
    ("error_in_a_local_header", {"helpers.h": """\
static int twice(int v) {
  int *p = &v;
  return 2 * v;
}
"""}, """\
#include "helpers.h"
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + twice(n);
}
""", "pointers are not supported", "helpers.h|*p = &v"),
    ("error_directive", {}, """\
#ifdef __REVEC__
#error this program is not for revec
#endif
long f(int n) { return n; }
""", "#error this program is not for revec", "#error"),
    ("missing_system_header", {}, """\
#include <pthread.h>
long f(int n) { if (n < 2) return n; return f(n - 1); }
""", "#include <pthread.h>: revec does not provide this header", "#include <pthread"),
    ("missing_local_header", {}, """\
#include "nowhere.h"
long f(int n) { if (n < 2) return n; return f(n - 1); }
""", "#include \"nowhere.h\": no such file next to prog.c", "#include \"nowhere"),
    ("unterminated_macro_call", {}, """\
#define MAX(a, b) ((a) > (b) ? (a) : (b))
long f(int n) { if (n < 2) return n; return f(n - 1) + MAX(n, 2; }
""", "unterminated argument list invoking macro \"MAX\"", "MAX(n, 2;"),
]


@pytest.mark.parametrize("name, files, body, message, needle", CASES,
                         ids=[c[0] for c in CASES])
def test_rejected_at_the_use(tmp_path, capsys, name, files, body, message, needle):
    path = write(tmp_path, {**files, "prog.c": HEAD + body})
    file, _, text = needle.rpartition("|")
    at = tmp_path / file if file else path
    line, col = where(at.read_text(), text)
    with pytest.raises(RevecError) as info:
        load_program(path)
    assert info.value.loc is not None and info.value.loc.file == str(at), info.value.format()
    if file:
        assert (info.value.loc.line, info.value.loc.col) == (line, col), info.value.format()
        assert message in info.value.message
        return
    assert_located_rejection(path, message, line, col, tmp_path / "out.c",
                             ("--backend", "c"), capsys)


def test_macro_error_through_a_process(tmp_path):
    """exit status 2, file:line:col of the macro's use, the caret, no traceback and no
    output file."""
    _, _, body, message, needle = CASES[1]
    path = write(tmp_path, {"prog.c": HEAD + body})
    line, col = where(HEAD + body, needle)
    out = tmp_path / "out.c"
    proc = subprocess.run([sys.executable, "-m", "revec", "transform", str(path), "--backend",
                           "c", "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"{path}:{line}:{col}: error: {message}")
    assert proc.stderr.splitlines()[2] == "    " + " " * (col - 1) + "^"
    assert not out.exists()


def test_no_compiler_is_a_clear_error(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, {"prog.c": HEAD + "long f(int n) { if (n < 2) return n; "
                                             "return f(n - 1); }\n"})
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "needs a C compiler for its preprocessor" in err
    assert "/nonexistent/bin/cc" in err and "gcc" in err and "CC" in err
    assert "Traceback" not in err

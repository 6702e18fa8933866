"""Cilk C task shapes as programmers write them (issue 34, item 3), against gcc's serial
elision of the same file: a shared ``return`` after ``if``/``else``, the recursive branch
first, guard ``if``s with early returns, results combined through locals (``tmp = l +
r; return tmp;``, ``best = a > b ? a : b; return best;``, the expanded ``MAX`` macro,
``x += child`` after the sync), collecting arrays with the accumulator declared after
the spawns or summed over the filling loop's bound, the serial-cutoff idiom, and
Cilk-5's knapsack with its bound raised after the sync.

Every task of ``SHAPES`` (one file, one gcc build) runs on the C and numba back ends
in bfs, blocked and reexp (one build per task and back end, one root argument) and must
give the elision's result and its number of calls of the task.  Unsupported variations
are located errors (exit 2, file:line:col, caret, no output file).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from revec.api import get_program, run_loaded
from revec.cli import main
from revec.errors import RevecError
from revec.frontend import load_program
from tests import cilk_oracle
from tests.progen_shapes import generate
from tests.rejections import assert_located_rejection, where

pytestmark = pytest.mark.skipif(cilk_oracle.gcc() is None, reason="no C compiler for the "
                                "serial elision")

SHAPES = r"""
#include <cilk/cilk.h>
#include <stdint.h>

#define CUTOFF 6
static const int cutoff = 5;

/* a shared return after if / else */
long shared(int n) {
    long x, y;
    if (n < 2) {
        x = n;
    } else {
        x = cilk_spawn shared(n - 1);
        y = shared(n - 2);
        cilk_sync;
        x = x + y;
    }
    return x;
}

/* the recursive branch first, with else */
long rfirst(int n) {
    if (n >= 2) {
        long x = cilk_spawn rfirst(n - 1);
        long y = cilk_spawn rfirst(n - 2);
        cilk_sync;
        return x + y + 1;
    } else return n;
}

/* the recursive branch first, the base case after it */
int64_t rfirst_noelse(int32_t n, int32_t a) {
    if (n > 0) {
        int64_t l = cilk_spawn rfirst_noelse(n - 1, a * 3 + 1);
        int64_t r = rfirst_noelse(n - 2, a + 7);
        cilk_sync;
        int64_t best = l > r ? l : r;
        return best;
    }
    return a % 17;
}

/* guard ifs with early returns and no else, before and after the is-base test */
long guard(int n, int a) {
    if (a % 7 == 3)
        return 2;
    if (n < 2) return n;
    if (n % 5 == 3)
        return 7;
    long x = cilk_spawn guard(n - 1, a + 1);
    long y = guard(n - 2, a + 2);
    cilk_sync;
    long tmp = x + y;
    return tmp;
}

/* best = with > without ? with : without; return best; */
int knap(int n, int v) {
    int with, without, best;
    if (n == 0)
        return v % 23;
    without = cilk_spawn knap(n - 1, v);
    with = cilk_spawn knap(n - 1, v + n * 5);
    cilk_sync;
    best = with > without ? with : without;
    return best;
}

/* MAX(left, right) as a function-like macro expands it: the ternary of parentheses */
long macro_max(int n, int a) {
    if (n <= 0) return (a * 13) % 31;
    long left = cilk_spawn macro_max(n - 1, a + 3);
    long right = cilk_spawn macro_max(n - 2, a * 2);
    cilk_sync;
    long m = ((left) > (right) ? (left) : (right));
    return m + 1;
}

/* min through a local */
long lowest(int n, int a) {
    if (n <= 0) return (a * 7) % 19;
    long l = cilk_spawn lowest(n - 1, a + 5);
    long r = lowest(n - 1, a * 3);
    cilk_sync;
    long low = l < r ? l : r;
    return low;
}

/* x += child after the sync, x declared before the is-base test */
long plus_after(int n) {
    long x = 1;
    if (n < 2) return n;
    long c = cilk_spawn plus_after(n - 1);
    long d = plus_after(n - 2);
    cilk_sync;
    x += c;
    x += d;
    return x;
}

/* the accumulator declared after the spawns (k++ filling) */
long collect_late(int n) {
    long part[8];
    int k = 0;
    if (n < 2) return n;
    for (int i = 0; i < 3; i++)
        part[k++] = cilk_spawn collect_late(n - 1 - i);
    cilk_sync;
    long total = 0;
    for (int i = 0; i < k; i++) total += part[i];
    return total;
}

/* k++ filling summed over the filling loop's bound */
long collect_bound(int n, int w) {
    long part[8];
    int k = 0;
    if (n < 2) return n + w;
    for (int i = 0; i < w; i++)
        part[k++] = cilk_spawn collect_bound(n - 1 - i, w);
    cilk_sync;
    long total = 1;
    for (int i = 0; i < w; i++) total += part[i];
    return total;
}

/* the serial cutoff: a #define, and a const global */
long fib_seq(int n) {
    if (n < 2) return n;
    long x = fib_seq(n - 1);
    long y = fib_seq(n - 2);

    return x + y;
}
long fib(int n) {
    if (n < 2) return n;
    if (n < CUTOFF) return fib_seq(n);
    long x = cilk_spawn fib(n - 1);
    long y = fib(n - 2);
    cilk_sync;
    return x + y;
}
long fib_plain(int n) {
    if (n < 2) return n;
    long x = cilk_spawn fib_plain(n - 1);
    long y = fib_plain(n - 2);
    cilk_sync;
    return x + y;
}
long pairs_seq(int n, int a) {
    if (n <= 0) return a & 7;
    long l = pairs_seq(n - 1, a + 1);
    long r = pairs_seq(n - 1, a * 2);
    return l > r ? l : r;
}
long pairs(int n, int a) {
    if (n < cutoff) return pairs_seq(n, a);
    if (n <= 0) return a & 7;
    long l = cilk_spawn pairs(n - 1, a + 1);
    long r = cilk_spawn pairs(n - 1, a * 2);
    cilk_sync;
    return l > r ? l : r;
}
long pairs_plain(int n, int a) {
    if (n <= 0) return a & 7;
    long l = cilk_spawn pairs_plain(n - 1, a + 1);
    long r = cilk_spawn pairs_plain(n - 1, a * 2);
    cilk_sync;
    return l > r ? l : r;
}
"""

# (task, root arguments, the task whose calls count the tree: the cutoff's task runs the
# whole tree, as its plain twin does)
RUNS = [("shared", (13,), None), ("rfirst", (12,), None), ("rfirst_noelse", (9, 1), None),
        ("guard", (13, 1), None), ("knap", (8, 3), None), ("macro_max", (10, 2), None),
        ("lowest", (8, 4), None), ("plus_after", (12,), None), ("collect_late", (9,), None),
        ("collect_bound", (7, 3), None), ("fib", (14,), "fib_plain"),
        ("pairs", (7, 1), "pairs_plain")]
VARIANTS = (("bfs", None, None), ("blocked", 3, None), ("reexp", 4, 2))


def main_source(runs: list[tuple[str, tuple[int, ...], str | None]]) -> str:
    """A main for the serial elision: per run, the result and the calls of the task
    (gcc's -finstrument-functions hooks count them)."""
    lines = ["", "#include <stdio.h>", "static void *rv_task; static long rv_calls;",
             "__attribute__((no_instrument_function)) void __cyg_profile_func_enter("
             "void *fn, void *site) { (void)site; if (fn == rv_task) rv_calls++; }",
             "__attribute__((no_instrument_function)) void __cyg_profile_func_exit("
             "void *fn, void *site) { (void)fn; (void)site; }", "int main(void) {"]
    for name, args, counted in runs:
        arglist = ", ".join(map(str, args))
        lines.append(f"    printf(\"%lld \", (long long){name}({arglist}));")
        lines.append(f"    rv_task = (void *){counted or name}; rv_calls = 0; "
                     f"(void){counted or name}({arglist}); printf(\"%ld\\n\", rv_calls);")
    return "\n".join([*lines, "    return 0;", "}", ""])


def elision(source: str, runs: list[tuple[str, tuple[int, ...], str | None]],
            folder: Path) -> list[tuple[int, int]]:
    """(result, calls) per run, from gcc's serial elision of ``source`` with a main."""
    prog = folder / "elision.c"
    prog.write_text(source + main_source(runs))
    exe = cilk_oracle.build([prog], folder / "elision", extra=("-finstrument-functions",))
    words = cilk_oracle.run(exe)
    return [(int(words[i]), int(words[i + 1])) for i in range(0, len(words), 2)]


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, int]]]:
    folder = tmp_path_factory.mktemp("shapes")
    expected = elision(SHAPES, RUNS, folder)
    (folder / "prog.c").write_text(SHAPES)
    return folder / "prog.c", expected


@pytest.mark.parametrize("index", range(len(RUNS)), ids=[r[0] for r in RUNS])
def test_shape_matches_serial_elision(shapes, index):
    path, expected = shapes
    name, args, _ = RUNS[index]
    value, calls = expected[index]
    program = get_program(path)
    assert int(run_loaded(program, name, args, variant="seq").result) == value
    for backend in ("c", "numba"):
        for variant, b, r in VARIANTS:
            res = run_loaded(program, name, args, variant=variant, block_size=b,
                             reexp_threshold=r, backend=backend)
            where_ = (name, backend, variant)
            assert int(res.result) == value, (*where_, res.result, value)
            assert res.stats.tasks == calls, (*where_, res.stats.tasks, calls)


# ---------------------------------------------------------------------------- knapsack
# Cilk-5's branch-and-bound knapsack in its published shape (Cilk-5 spelling, items as
# structs, the bound raised with 'best' after the sync, 'best = ...; return best;'),
# written here with the examples' data
KNAPSACK = r"""
#include <stdio.h>
#include <stdlib.h>

#define INT_MIN (-2147483647 - 1)

struct item {
    int value;
    int weight;
};

int best_so_far = INT_MIN;

cilk int knapsack(struct item *e, int c, int n, int v)
{
    int with, without, best;
    double ub;

    /* nothing fits, or nothing left */
    if (c < 0)
        return INT_MIN;
    if (n == 0 || c == 0)
        return v;

    ub = (double) v + c * e->value / e->weight;
    if (ub < best_so_far) {
        /* pruned */
        return INT_MIN;
    }
    without = spawn knapsack(e + 1, c, n - 1, v);
    with = spawn knapsack(e + 1, c - e->weight, n - 1, v + e->value);
    sync;

    best = with > without ? with : without;
    if (best > best_so_far)
        best_so_far = best;
    return best;
}
"""
ROOT = Path(__file__).resolve().parents[1]
KNAPSACK_DATA = ROOT / "benchmarks" / "data"


def knapsack_items(example: int) -> tuple[np.ndarray, int]:
    """The Cilk-5 example's items sorted as its main sorts them (by value / weight,
    best first; a stable sort) and its capacity."""
    lines = (KNAPSACK_DATA / f"cilk5-example{example}.input").read_text().split("\n")
    n, capacity = map(int, lines[0].split())
    rows = [tuple(map(int, x.split())) for x in lines[1:n + 1]]
    rows.sort(key=lambda r: -r[0] / r[1])
    items = np.array(rows, dtype=[("value", np.int32), ("weight", np.int32)])
    return items, capacity


def test_cilk5_knapsack_as_published(tmp_path):
    items, capacity = knapsack_items(2)
    n = 16
    items = items[:n]
    rows = ", ".join(f"{{{v}, {w}}}" for v, w in items.tolist())
    prog = tmp_path / "elision.c"
    prog.write_text(KNAPSACK + f"static struct item items[] = {{{rows}}};\n"
                    f"int main(void) {{ printf(\"%d\\n\", knapsack(items, {capacity}, {n}, 0));"
                    " return 0; }\n")
    exe = cilk_oracle.build([prog], tmp_path / "elision", cilk5=True)
    value = int(cilk_oracle.run(exe)[0])
    path = tmp_path / "knapsack.c"
    path.write_text(KNAPSACK)
    program = get_program(path)
    assert int(run_loaded(program, "knapsack", (items, capacity, n, 0), variant="seq").result) \
        == value
    for backend in ("c", "numba"):
        for variant, b, r in VARIANTS:
            res = run_loaded(program, "knapsack", (items, capacity, n, 0), variant=variant,
                             block_size=b, reexp_threshold=r, backend=backend)
            assert int(res.result) == value, (backend, variant, res.result, value)


# ---------------------------------------------------------------------------- Python
PY_TWINS = '''\
import numpy as np
from revec import task


@task
def tmp(n: np.int32) -> np.int64:
    if n < 2:
        return n
    left = tmp(n - 1)
    right = tmp(n - 2)
    total = left + right
    return total


@task
def best(n: np.int32, a: np.int32) -> np.int64:
    if n <= 0:
        return a % 13
    x = best(n - 1, a + 3)
    y = best(n - 1, a * 2)
    m = max(x, y)
    return m
'''


def test_python_results_through_locals(tmp_path):
    """The shared pass: Python's ``total = left + right; return total`` and
    ``m = max(x, y); return m``, against plain Python."""
    import importlib.util

    path = tmp_path / "twins.py"
    path.write_text(PY_TWINS)
    spec = importlib.util.spec_from_file_location("twins", path)
    assert spec is not None and spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    program = get_program(path)
    for name, args in (("tmp", (12,)), ("best", (7, 2))):
        value = int(getattr(plain, name)(*args))  # the task called as plain Python
        for backend in ("c", "numba"):
            res = run_loaded(program, name, args, variant="reexp", block_size=4,
                             reexp_threshold=2, backend=backend)
            assert int(res.result) == value, (name, backend, res.result, value)


# ---------------------------------------------------------------------------- rejections
HEAD = "#include <cilk/cilk.h>\n#include <stdint.h>\n\n"
FIB_SEQ = """\
long fib_seq(int n) {
  if (n < 2) return n;
  long x = fib_seq(n - 1);
  long y = fib_seq(n - 2);
  return %s;
}
"""
FIB = """\
long fib(int n) {
  if (n < 2) return n;
  if (%s) return fib_seq(%s);
  long x = cilk_spawn fib(n - 1);
  long y = fib(n - 2);
  cilk_sync;
  return x + y;
}
"""
REJECTED = [
    ("cutoff_not_the_elision", FIB_SEQ % "y + x" + FIB % ("n < 10", "n"),
     "'fib_seq' differs from fib's serial elision at line 8: 'y' where the elision has "
     "'x'", "fib_seq(n);"),
    ("cutoff_serial_body_longer", FIB_SEQ.replace("  return %s;", "  x++;\n  return %s;")
     % "x + y" + FIB % ("n < 10", "n"),
     "'fib_seq' differs from fib's serial elision at line 8: 'x++' where the elision has "
     "'return x + y;'", "fib_seq(n);"),
    ("cutoff_other_arguments", FIB_SEQ % "x + y" + FIB % ("n < 10", "n - 1"),
     "the serial cutoff calls 'fib_seq' with the task's own parameters, in order: "
     "fib_seq(n)", "fib_seq(n - 1);\n  long x = cilk_spawn"),
    ("cutoff_test_with_effect", FIB_SEQ % "x + y" + FIB % ("n++ < 10", "n"),
     "the test of a serial cutoff has an effect", "n++"),
    ("bound_raised_with_another_value", """\
int best_so_far = -1;
long f(int n) {
  if (n < 2) return n;
  long l = cilk_spawn f(n - 1);
  long r = f(n - 2);
  cilk_sync;
  long best = l > r ? l : r;
  if (best + 1 > best_so_far) best_so_far = best + 1;
  return best;
}
""", "revec accepts only the local the task returns", "if (best + 1"),
    ("bound_raised_on_some_paths", """\
int best_so_far = -1;
long f(int n) {
  if (n < 2) return n;
  long l = cilk_spawn f(n - 1);
  long r = f(n - 2);
  cilk_sync;
  long best = l > r ? l : r;
  if (n > 4) {
    if (best > best_so_far) best_so_far = best;
  }
  return best;
}
""", "on some paths only", "if (best > best_so_far)"),
    ("local_twice_in_a_sum", """\
long f(int n) {
  if (n < 2) return n;
  long x = cilk_spawn f(n - 1);
  long y = f(n - 2);
  cilk_sync;
  long tmp = x + y;
  return tmp + x;
}
""", "'x' holds results of the task's calls and is a term of this sum more than once",
     "x;\n}"),
    ("summed_over_another_bound", """\
long f(int n) {
  long part[8];
  int k = 0;
  if (n < 2) return n;
  for (int i = 0; i < 3; i++)
    if (i < n) part[k++] = cilk_spawn f(n - 1 - i);
  cilk_sync;
  long total = 0;
  for (int i = 0; i < 3; i++) total += part[i];
  return total;
}
""", "the loop summing 'part' must add every element it was filled with", "for (int i = 0; i < 3; i++) total"),
]


@pytest.mark.parametrize("name, body, message, needle", REJECTED,
                         ids=[c[0] for c in REJECTED])
def test_shape_rejected_with_location(tmp_path, capsys, name, body, message, needle):
    source = HEAD + body
    path = tmp_path / "prog.c"
    path.write_text(source)
    line, col = where(source, needle)
    assert_located_rejection(path, message, line, col, tmp_path / "out.c", ("--backend", "c"),
                             capsys)


# ---------------------------------------------------------------------------- the sweep
SWEEP_GROUPS, PER_GROUP = 10, 10  # 100 generated programs by default


def sweep(folder: Path, seed: int, count: int, capsys: pytest.CaptureFixture[str]) -> None:
    """``count`` generated programs: each one ``check`` accepts runs (on one back end,
    alternating, one variant, one small root call, one build) and gives gcc's result
    and number of calls; each one it rejects is one located error (exit 2,
    file:line:col, caret).  gcc builds the accepted programs' elision once."""
    rng = random.Random(seed)
    accepted = []
    rejected = 0
    for i in range(count):
        p = generate(rng, f"f{seed}_{i}")
        path = folder / f"{p.name}.c"
        source = HEAD + p.source
        path.write_text(source)
        try:
            program = load_program(path)
        except RevecError as err:
            assert err.loc is not None, (p.source, err.format())
            located_check(path, err, p.source, capsys)
            rejected += 1
            continue
        accepted.append((p, program))
    print(f"sweep {seed}: {len(accepted)} accepted, {rejected} rejected")
    if not accepted:
        return
    runs = [(p.name, p.args, p.counted) for p, _ in accepted]
    source = HEAD + "".join(p.source + p.twin for p, _ in accepted)
    expected = elision(source, runs, folder)
    for k, ((p, program), (value, calls)) in enumerate(zip(accepted, expected, strict=True)):
        backend = ("c", "numba")[(seed + k) % 2]
        variant, b, r = VARIANTS[(seed + k) % 3]
        seq = run_loaded(program, p.name, p.args, variant="seq")
        assert int(seq.result) == value, (p.source, p.args, "seq", seq.result, value)
        res = run_loaded(program, p.name, p.args, variant=variant, block_size=b,
                         reexp_threshold=r, backend=backend)
        where_ = (p.source, p.args, backend, variant)
        assert int(res.result) == value, (*where_, res.result, value)
        assert res.stats.tasks == calls, (*where_, res.stats.tasks, calls)


def located_check(path: Path, err: RevecError, source: str,
                  capsys: pytest.CaptureFixture[str]) -> None:
    """``revec check`` on a rejected program: exit 2, the error at its position with
    the source line and a caret, no traceback."""
    assert err.loc is not None
    capsys.readouterr()
    code = main(["check", str(path)])
    stderr = capsys.readouterr().err
    assert code == 2, (source, stderr)
    assert stderr.startswith(f"{path}:{err.loc.line}:{err.loc.col}: error: "), (source, stderr)
    assert stderr.splitlines()[2].index("^") == 4 + err.loc.col - 1, stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize("group", range(SWEEP_GROUPS))
def test_generated_shapes_check_then_run(tmp_path, capsys, group):
    sweep(tmp_path, group, PER_GROUP, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("group", range(SWEEP_GROUPS, SWEEP_GROUPS + 40))
def test_generated_shapes_check_then_run_long(tmp_path, capsys, group):
    sweep(tmp_path, group, PER_GROUP, capsys)

"""Out-parameters (revec/frontend/c/outparams.py): a ``void`` Cilk C task returning its
result through a pointer parameter is the same program as the one returning the value.

Each accepted program is checked against gcc's serial elision (tests/cilk_oracle.py; its
main passes ``&r`` and prints ``r``) on every variant and both compiled back ends, and
against its twin written with return values; each misuse of an out-parameter is one
located error.  Generated programs (tests/progen_cilk.py's ``outparam_files``) are the
generated value-returning tasks rewritten into out-parameter form.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from revec.api import get_program, run_loaded
from revec.errors import RevecError
from revec.frontend import load_program
from tests import cilk_oracle
from tests.progen_cilk import outparam_files
from tests.rejections import assert_located_rejection, where

needs_gcc = pytest.mark.skipif(cilk_oracle.gcc() is None,
                               reason="no C compiler for the serial elision")
HEAD = "#include <cilk/cilk.h>\n#include <stdint.h>\n\n"

# name -> (out-parameter program, its twin with return values, task, C result type,
#          root arguments (without the out-parameter))
PROGRAMS: dict[str, tuple[str, str, str, str, tuple[int, ...]]] = {
    "fib_early_return": (HEAD + """\
void fib(int n, long *res) {
  if (n < 2) { *res = n; return; }
  long x, y;
  cilk_spawn fib(n - 1, &x);
  fib(n - 2, &y);
  cilk_sync;
  *res = x + y;
}
""", HEAD + """\
long fib(int n) {
  if (n < 2) return n;
  long x, y;
  x = cilk_spawn fib(n - 1);
  y = fib(n - 2);
  cilk_sync;
  return x + y;
}
""", "fib", "long", (17,)),
    "fib_if_else_index0": (HEAD + """\
void fib(int32_t n, int64_t *res) {
  if (n < 2)
    res[0] = n;
  else {
    int64_t x, y;
    cilk_spawn fib(n - 1, &x);
    cilk_spawn fib(n - 2, &y);
    cilk_sync;
    res[0] = x + y;
  }
}
""", HEAD + """\
int64_t fib(int32_t n) {
  if (n < 2)
    return n;
  else {
    int64_t x, y;
    x = cilk_spawn fib(n - 1);
    y = cilk_spawn fib(n - 2);
    cilk_sync;
    return x + y;
  }
}
""", "fib", "long", (16,)),
    "weighted_sum": (HEAD + """\
void paths(int n, int w, long *out) {
  if (n <= 1) { *out = n + w; return; }
  long a, b;
  cilk_spawn paths(n - 1, w, &a);
  cilk_spawn paths(n - 2, w + 1, &b);
  cilk_sync;
  *out = 2 * a + b * w + (n & 3);
}
""", HEAD + """\
long paths(int n, int w) {
  if (n <= 1) return n + w;
  long a, b;
  a = cilk_spawn paths(n - 1, w);
  b = cilk_spawn paths(n - 2, w + 1);
  cilk_sync;
  return 2 * a + b * w + (n & 3);
}
""", "paths", "long", (14, 3)),
    "max_local_term": (HEAD + """\
void height(int n, int *h) {
  if (n < 3) {
    *h = n;
  } else {
    int l, r;
    cilk_spawn height(n / 2, &l);
    cilk_spawn height(n - 1 - n / 3, &r);
    cilk_sync;
    *h = 1 + (l > r ? l : r);
  }
}
""", HEAD + """\
int height(int n) {
  if (n < 3) {
    return n;
  } else {
    int l, r;
    l = cilk_spawn height(n / 2);
    r = cilk_spawn height(n - 1 - n / 3);
    cilk_sync;
    return 1 + (l > r ? l : r);
  }
}
""", "height", "int", (300,)),
    "min_local_term": (HEAD + """\
void cheapest(int n, int c, int *best) {
  if (n < 2) { *best = c % 7; return; }
  int x, y;
  cilk_spawn cheapest(n - 1, c * 3 + 1, &x);
  cheapest(n - 2, c + 5, &y);
  cilk_sync;
  *best = (n % 3) + (x < y ? x : y);
}
""", HEAD + """\
int cheapest(int n, int c) {
  if (n < 2) return c % 7;
  int x, y;
  x = cilk_spawn cheapest(n - 1, c * 3 + 1);
  y = cheapest(n - 2, c + 5);
  cilk_sync;
  return (n % 3) + (x < y ? x : y);
}
""", "cheapest", "int", (15, 2)),
    # BOTS nqueens style: C89 loop index, an element per iteration (0 where pruned),
    # the result set after cilk_sync and accumulated
    "bots_count": (HEAD + """\
#define N 8
static int free_at(unsigned cols, unsigned d1, unsigned d2, int i) {
  return (((cols | d1 | d2) >> i) & 1) == 0;
}
void queens(int n, int j, unsigned cols, unsigned d1, unsigned d2, int *solutions) {
  int i;
  if (j == n) { *solutions = 1; return; }
  int csols[N];
  for (i = 0; i < n; i++) {
    if (free_at(cols, d1, d2, i))
      cilk_spawn queens(n, j + 1, cols | (1u << i), (d1 | (1u << i)) << 1,
                        (d2 | (1u << i)) >> 1, &csols[i]);
    else
      csols[i] = 0;
  }
  cilk_sync;
  *solutions = 0;
  for (i = 0; i < n; i++)
    *solutions += csols[i];
}
""", HEAD + """\
#define N 8
static int free_at(unsigned cols, unsigned d1, unsigned d2, int i) {
  return (((cols | d1 | d2) >> i) & 1) == 0;
}
int queens(int n, int j, unsigned cols, unsigned d1, unsigned d2) {
  int i;
  if (j == n) return 1;
  int csols[N];
  for (i = 0; i < n; i++) {
    if (free_at(cols, d1, d2, i))
      csols[i] = cilk_spawn queens(n, j + 1, cols | (1u << i), (d1 | (1u << i)) << 1,
                                   (d2 | (1u << i)) >> 1);
    else
      csols[i] = 0;
  }
  cilk_sync;
  int s = 0;
  for (i = 0; i < n; i++)
    s += csols[i];
  return s;
}
""", "queens", "int", (7, 0, 0, 0, 0)),
    # zeroed array, spawns only where allowed, loop-declared index; a local term
    "zeroed_tree_count": (HEAD + """\
#define W 4
void trees(int d, uint32_t mask, long *count) {
  if (d == 0) { *count = 1; return; }
  long part[W] = {0};
  for (int i = 0; i < W; i++)
    if (((mask >> i) & 3) != 3)
      cilk_spawn trees(d - 1, (mask << 1) ^ (uint32_t)i, &part[i]);
  cilk_sync;
  *count = d & 1;
  for (int i = 0; i < W; i++)
    *count += part[i];
}
""", HEAD + """\
#define W 4
long trees(int d, uint32_t mask) {
  if (d == 0) return 1;
  long part[W] = {0};
  for (int i = 0; i < W; i++)
    if (((mask >> i) & 3) != 3)
      part[i] = cilk_spawn trees(d - 1, (mask << 1) ^ (uint32_t)i);
  cilk_sync;
  long total = d & 1;
  for (int i = 0; i < W; i++)
    total += part[i];
  return total;
}
""", "trees", "long", (6, 5)),
    # Cilk-5 nqueens style (counts[k++]), the result accumulated after sync
    "counter_accumulate": (HEAD + """\
#define MAXK 16
void nq(int n, int row, uint16_t cols, uint16_t d1, uint16_t d2, int64_t *out) {
  if (row == n) { *out = 1; return; }
  int64_t counts[MAXK];
  int k = 0;
  uint16_t avail = ~(cols | d1 | d2) & ((1 << n) - 1);
  while (avail != 0) {
    uint16_t bit = avail & -avail;
    avail ^= bit;
    cilk_spawn nq(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1, &counts[k++]);
  }
  cilk_sync;
  *out = 0;
  for (int i = 0; i < k; i++)
    *out += counts[i];
}
""", HEAD + """\
#define MAXK 16
int64_t nq(int n, int row, uint16_t cols, uint16_t d1, uint16_t d2) {
  if (row == n) return 1;
  int64_t counts[MAXK];
  int k = 0;
  int64_t total = 0;
  uint16_t avail = ~(cols | d1 | d2) & ((1 << n) - 1);
  while (avail != 0) {
    uint16_t bit = avail & -avail;
    avail ^= bit;
    counts[k++] = cilk_spawn nq(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
  }
  cilk_sync;
  for (int i = 0; i < k; i++)
    total += counts[i];
  return total;
}
""", "nq", "long", (7, 0, 0, 0, 0)),
    # *out = e0, then *out += ... (a hidden local)
    "accumulate_scalar": (HEAD + """\
void acc(int n, unsigned *out) {
  if (n < 2) { *out = 3u * n + 1; return; }
  unsigned a, b;
  cilk_spawn acc(n - 1, &a);
  cilk_spawn acc(n - 3, &b);
  cilk_sync;
  *out = n & 5;
  *out += a;
  *out += 2 * b;
}
""", HEAD + """\
unsigned acc(int n) {
  if (n < 2) return 3u * n + 1;
  unsigned a, b;
  a = cilk_spawn acc(n - 1);
  b = cilk_spawn acc(n - 3);
  cilk_sync;
  return (n & 5) + a + 2 * b;
}
""", "acc", "unsigned", (22,)),
    "cilk5_spelling": ("""\
#include <stdint.h>
cilk void fib(int n, long *res) {
  if (n < 2)
    *res = n;
  else {
    long x, y;
    spawn fib(n - 1, &x);
    spawn fib(n - 2, &y);
    sync;
    *res = x + y;
  }
}
""", """\
#include <stdint.h>
cilk long fib(int n) {
  if (n < 2)
    return n;
  else {
    long x, y;
    x = spawn fib(n - 1);
    y = spawn fib(n - 2);
    sync;
    return x + y;
  }
}
""", "fib", "long", (16,)),
}


def _main(name: str, source: str, ctype: str, args: tuple[int, ...]) -> str:
    """A main for the serial elision: the task's prototype (from its definition's
    line), the call with ``&r``, ``r`` printed."""
    proto = next(line for line in source.splitlines() if "void" in line and "(" in line)
    proto = proto.replace("cilk ", "").rstrip(" {") + ";"
    call = ", ".join([*map(str, args), "&r"])
    return (f"#include <stdio.h>\n#include <stdint.h>\n{proto}\nint main(void) {{\n"
            f"  {ctype_of(proto)} r;\n  {name}({call});\n"
            f"  printf(\"%lld\\n\", (long long)r);\n  return 0;\n}}\n")


def ctype_of(proto: str) -> str:
    """The pointee type of the last parameter of a prototype."""
    last = proto.rsplit(",", 1)[-1] if "," in proto else proto.split("(", 1)[1]
    return last.split("*")[0].strip()


def oracle(folder: Path, source: str, task: str, ctype: str, args: tuple[int, ...]) -> int:
    prog, main = folder / "prog.c", folder / "main.c"
    prog.write_text(source)
    main.write_text(_main(task, source, ctype, args))
    exe = cilk_oracle.build([prog, main], folder / "elision", cilk5="cilk void" in source)
    return int(cilk_oracle.run(exe)[0])


def run_all(path: Path, task: str, args: tuple[int, ...], configs: list[tuple[str, str]]
            ) -> dict[tuple[str, str], int]:
    program = get_program(path)
    return {(v, b): int(run_loaded(program, task, args, variant=v, backend=b, block_size=8,
                                   reexp_threshold=4).result)
            for v, b in configs}


ALL = [("seq", "python"), *[(v, b) for v in ("bfs", "blocked", "reexp")
                            for b in ("c", "numba")]]


@needs_gcc
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_out_parameter_matches_elision_and_twin(tmp_path, name):
    src, twin, task, ctype, args = PROGRAMS[name]
    expected = oracle(tmp_path, src, task, ctype, args)
    out_path, twin_path = tmp_path / "out.c", tmp_path / "twin.c"
    out_path.write_text(src)
    twin_path.write_text(twin)
    # the rewritten task takes the root arguments without the out-parameter
    program = get_program(out_path)
    assert program.tasks[task].result_ty is not None or program.reducers
    got = run_all(out_path, task, args, ALL)
    assert all(v == expected for v in got.values()), (expected, got)
    # the twin: the same results (by the oracle) on every variant and back end
    twin_got = run_all(twin_path, task, args, ALL)
    assert twin_got == got, (twin_got, got)


@needs_gcc
def test_two_workers(tmp_path):
    src, _, task, ctype, args = PROGRAMS["bots_count"]
    expected = oracle(tmp_path, src, task, ctype, args)
    path = tmp_path / "prog.c"
    path.write_text(src)
    program = get_program(path)
    for backend in ("c", "numba"):
        res = run_loaded(program, task, args, variant="reexp", backend=backend,
                         block_size=4, reexp_threshold=2, workers=2)
        assert int(res.result) == expected


def test_root_call_takes_the_other_parameters(tmp_path):
    """The root call names only the value parameters; the result is the task's."""
    src, _, task, _, _ = PROGRAMS["weighted_sum"]
    path = tmp_path / "prog.c"
    path.write_text(src)
    program = load_program(path)
    assert [p.name for p in program.tasks[task].user_params] == ["n", "w"]

    def paths(n: int, w: int) -> int:
        if n <= 1:
            return n + w
        return 2 * paths(n - 1, w) + paths(n - 2, w + 1) * w + (n & 3)

    assert int(run_loaded(program, task, (9, 2), variant="seq").result) == paths(9, 2)
    with pytest.raises(RevecError):
        run_loaded(program, task, (5, 2, 0), variant="seq")


def test_read_only_pointer_is_an_input_not_an_out_parameter(tmp_path):
    """A pointer parameter only read is not an out-parameter: it stays in the
    signature as a read-only array input (tests/test_array_inputs.py)."""
    src = HEAD + """\
long f(const int *a, int n) {
  if (n < 2) return a[n];
  return f(a, n - 1) + f(a, n - 2);
}
"""
    path = tmp_path / "prog.c"
    path.write_text(src)
    program = load_program(path)
    assert [ap.name for ap in program.tasks["f"].arrays] == ["a"]
    values = np.array([7, 11], np.int32)

    def count(n: int) -> tuple[int, int]:  # (f(0) leaves, f(1) leaves) under f(n)
        return (1, 0) if n == 0 else (0, 1) if n == 1 else tuple(
            x + y for x, y in zip(count(n - 1), count(n - 2)))  # type: ignore[return-value]
    zeros, ones = count(6)
    got = run_loaded(program, "f", (values, 6), variant="reexp", backend="c").result
    assert got == 7 * zeros + 11 * ones


# (name, source after HEAD, message fragment, the text the caret points at)
ERRORS = [
    ("read_before_written", """\
void f(int n, int *out) {
  if (n < 2) { *out = n; return; }
  int x, y;
  int t = *out + 1;
  cilk_spawn f(n - 1, &x);
  f(n - 2, &y);
  cilk_sync;
  *out = x + y + t;
}
""", "'*out' is read before it is written", "out + 1"),
    ("written_twice", """\
void f(int n, int *out) {
  if (n < 2) { *out = n; return; }
  int x, y;
  cilk_spawn f(n - 1, &x);
  f(n - 2, &y);
  cilk_sync;
  *out = x;
  *out = x + y;
}
""", "written twice on one path", "out = x + y"),
    ("not_written_on_a_path", """\
void f(int n, int *out) {
  if (n < 2) {
    if (n == 1) *out = 1;
    return;
  }
  int x, y;
  cilk_spawn f(n - 1, &x);
  f(n - 2, &y);
  cilk_sync;
  *out = x + y;
}
""", "on a path that does not write its result '*out'", "return;"),
    ("not_written_at_the_end", """\
void f(int n, int *out) {
  if (n < 2) { *out = n; return; }
  int x, y;
  cilk_spawn f(n - 1, &x);
  f(n - 2, &y);
  cilk_sync;
  if (x > 0) *out = x + y;
}
""", "ends here on a path that does not write its result", "if (x > 0)"),
    # (a written pointer every call passes on unchanged is an output array, not an
    # out-parameter: revec/frontend/c/outputs.py; its '+=' reads an output element)
    ("passed_to_child_unchanged", """\
void f(int n, int *out) {
  if (n < 2) { *out = n; return; }
  cilk_spawn f(n - 1, out);
  cilk_sync;
  *out += 1;
}
""", "'+=' on an element of the output array 'out' reads it", "out += 1"),
    ("passed_to_child_unchanged_besides_an_address", """\
void f(int n, int *out) {
  if (n < 2) { *out = n; return; }
  int x;
  cilk_spawn f(n - 1, &x);
  cilk_spawn f(n - 2, out);
  cilk_sync;
  *out += x;
}
""", "passed to a call of 'f' unchanged", "out);"),
    ("address_stored", """\
void f(int n, int *out) {
  int **keep = &out;
  if (n < 2) { *out = n; return; }
  int x;
  cilk_spawn f(n - 1, &x);
  cilk_sync;
  *out = x;
}
""", "the address of the out-parameter 'out' is taken", "out;"),
    ("passed_to_helper", """\
static int peek(int *p) { return 0; }
void f(int n, int *out) {
  if (n < 2) { *out = n; return; }
  int x;
  cilk_spawn f(n - 1, &x);
  cilk_sync;
  *out = x + peek(out);
}
""", "the out-parameter 'out' is passed to 'peek'", "out);"),
    ("written_into_caller_array", """\
void f(int n, int *out) {
  if (n < 2) { out[1] = n; return; }
  int x;
  cilk_spawn f(n - 1, &x);
  cilk_sync;
  *out = x;
}
""", "it is indexed here", "out[1]"),
    ("pointer_arithmetic", """\
void f(int n, int *out) {
  if (n < 2) { *(out + 1) = n; return; }
  int x;
  cilk_spawn f(n - 1, &x);
  cilk_sync;
  *out = x;
}
""", "it is used here as a pointer", "out + 1"),
    ("written_in_a_loop", """\
void f(int n, int *out) {
  if (n < 2) { *out = n; return; }
  int x;
  cilk_spawn f(n - 1, &x);
  cilk_sync;
  for (int i = 0; i < 2; i++)
    *out = x + i;
}
""", "is written in a loop", "out = x + i"),
    ("two_out_parameters", """\
void f(int n, int *out, int *count) {
  if (n < 2) { *out = n; *count = 1; return; }
  int x, c;
  cilk_spawn f(n - 1, &x, &c);
  cilk_sync;
  *out = x;
  *count = c + 1;
}
""", "writes through two pointer parameters", "*count) {"),
    ("value_returning_with_out_parameter", """\
int f(int n, int *out) {
  if (n < 2) { *out = n; return n; }
  int x;
  cilk_spawn f(n - 1, &x);
  cilk_sync;
  *out = x;
  return x;
}
""", "'f' returns a value and writes '*out'", "*out) {"),
    ("child_result_not_an_address", """\
void f(int n, int *out) {
  if (n < 2) { *out = n; return; }
  int x = 0;
  cilk_spawn f(n - 1, x);
  cilk_sync;
  *out = x;
}
""", "pass the address of a local (&x)", "x);"),
    ("indexed_fill_may_skip", """\
void f(int n, int *out) {
  if (n < 2) { *out = n; return; }
  int part[4];
  for (int i = 0; i < 2; i++)
    if (i < n) cilk_spawn f(n - 1 - i, &part[i]);
  cilk_sync;
  *out = 0;
  for (int i = 0; i < 2; i++)
    *out += part[i];
}
""", "may leave 'part[i]' unwritten", "cilk_spawn f(n - 1 - i"),
    ("indexed_fill_other_bound", """\
void f(int n, int *out) {
  if (n < 2) { *out = n; return; }
  int part[4];
  for (int i = 0; i < 2; i++)
    cilk_spawn f(n - 1 - i, &part[i]);
  cilk_sync;
  *out = 0;
  for (int i = 0; i < 3; i++)
    *out += part[i];
}
""", "must add every element it was filled with", "for (int i = 0; i < 3"),
]


@pytest.mark.parametrize("name, body, message, needle", ERRORS, ids=[e[0] for e in ERRORS])
def test_out_parameter_misuse_is_located(tmp_path, capsys, name, body, message, needle):
    source = HEAD + body
    path = tmp_path / "prog.c"
    path.write_text(source)
    line, col = where(source, needle)
    assert_located_rejection(path, message, line, col, tmp_path / "out.c",
                             ("--backend", "c"), capsys)


# ---------------------------------------------------------------------- generated
SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck),
                phases=[Phase.explicit, Phase.reuse, Phase.generate], database=None,
                derandomize=True)


@needs_gcc
@settings(max_examples=20, **SETTINGS)
@given(data=st.data())
def test_generated_out_parameter_tasks(tmp_path_factory, data):
    """20 generated out-parameter tasks (a fixed sample): gcc's elision, the twin with
    return values, the seq reference and one compiled variant per back end."""
    spec = data.draw(outparam_files(), label="file")
    folder = tmp_path_factory.mktemp("outparam")
    out_path, twin_path = folder / "out.c", folder / "twin.c"
    out_path.write_text(spec.source)
    twin_path.write_text(spec.twin)
    (folder / "main.c").write_text(spec.main)
    exe = cilk_oracle.build([out_path, folder / "main.c"], folder / "elision",
                            cilk5=spec.cilk5)
    expected = [int(w) for w in cilk_oracle.run(exe)]
    variant = data.draw(st.sampled_from(["bfs", "blocked", "reexp"]), label="variant")
    configs = [("seq", "python"), (variant, "c"), (variant, "numba")]
    for (task, args), want in zip(spec.calls, expected, strict=True):
        got = run_all(out_path, task, args, configs)
        assert set(got.values()) == {want}, (task, args, got, want)
        twin = run_all(twin_path, task, args, [("seq", "python")])
        assert set(twin.values()) == {want}

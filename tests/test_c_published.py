"""Programs in the forms published Cilk and OpenMP programs take, run as written
(issue 34, "programs as published"): a collecting array alloca'd and cleared by
``memset`` (Cilk-5's, OpenCilk's and BOTS's nqueens), BOTS's out-parameter form of it,
MIT Cilk-5 ``.cilk`` files with their own ``<getoptions.h>``, a serial variant the task
never calls that revec could not take (BOTS's ``fib_seq`` summing ``long long`` results
in ``int`` locals), and a ``main`` using POSIX headers.

The programs are this project's own, written in the published programs' style (see
reports/corpus/c_published.md for the corpus they were drawn from).  Each is built by
gcc as its serial elision (an oracle without revec) and run; revec's sequential
reference and a compiled back end must print the same number (C for some programs,
numba for the others; both for every program under ``pytest -m slow``).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from revec.cli import main
from revec.errors import RevecError
from revec.frontend import load_program
from tests import cilk_oracle
from tests.rejections import assert_located_rejection, where
from tests.support.elision_runs import assert_runs_match

needs_gcc = pytest.mark.skipif(cilk_oracle.gcc() is None,
                               reason="no C compiler for the serial elision")


@dataclass(frozen=True)
class Program:
    source: str
    task: str
    args: tuple[int, ...]
    board: int = 0  # the root call's starting board (zeros of this length)
    backend: str = "c"
    name: str = "prog.c"
    cilk5: bool = False
    files: dict[str, str] = field(default_factory=dict)  # written next to the program
    oracle_extra: str = ""  # C linked into the serial elision only (a library's body)


# OpenCilk's nqueens form: count proper colourings of a path, the colours so far on a
# board, the children's counts in an alloca'd array cleared by memset, summed over the
# loop's bound
COLOURINGS = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <alloca.h>
#include <cilk/cilk.h>

int fits(int j, char *b) {
  int i;
  for (i = 1; i < j; i++)
    if (b[i] == b[i - 1] || (i >= 2 && b[i] == b[i - 2]))
      return 0;
  return 1;
}

int colourings(int n, int k, int j, char *a) {
  char *b;
  int c;
  int *count;
  int total = 0;

  if (n == j) {
    return 1;
  }

  count = (int *) alloca(k * sizeof(int));
  (void) memset(count, 0, k * sizeof (int));

  for (c = 0; c < k; c++) {
    b = (char *) alloca((j + 1) * sizeof (char));
    memcpy(b, a, j * sizeof (char));
    b[j] = c;
    if (fits(j + 1, b)) {
      count[c] = cilk_spawn colourings(n, k, j + 1, b);
    }
  }
  cilk_sync;

  for (c = 0; c < k; c++) {
    total += count[c];
  }
  return total;
}

int main(int argc, char *argv[]) {
  char board[7];
  memset(board, 0, sizeof board);
  printf("%d\\n", colourings(7, 4, 0, board));
  return 0;
}
"""

# BOTS's form: a void task with an out-parameter, the children's results through
# &parts[i] into an alloca'd array, OpenMP task pragmas, a serial variant beside it
COMPOSITIONS = """\
#include <stdlib.h>
#include <stdio.h>
#include <memory.h>
#include <alloca.h>
#include <omp.h>

void compositions_ser(int left, int biggest, int *ways)
{
	int i, w;
	if (left == 0) {
		*ways = 1;
		return;
	}
	*ways = 0;
	for (i = 1; i <= biggest && i <= left; i++) {
		compositions_ser(left - i, biggest, &w);
		*ways += w;
	}
}

void compositions(int left, int biggest, int *ways)
{
	int *parts;
	int i;

	if (left == 0) {
		*ways = 1;
		return;
	}

	*ways = 0;
	parts = alloca(biggest * sizeof(int));
	memset(parts, 0, biggest * sizeof(int));

	for (i = 0; i < biggest; i++) {
		#pragma omp task untied
		{
			if (i + 1 <= left)
				compositions(left - (i + 1), biggest, &parts[i]);
		}
	}

	#pragma omp taskwait
	for (i = 0; i < biggest; i++) *ways += parts[i];
}

int main(void)
{
	int ways = -1;
	#pragma omp parallel
	#pragma omp single
	compositions(13, 4, &ways);
	printf("%d\\n", ways);
	return 0;
}
"""

# MIT Cilk-5: a .cilk file, the examples' own <getoptions.h> next to it, main a Cilk
# procedure using the timers; a bound raised after the sync, INT_MIN as "none"
GETOPTIONS_H = """\
#ifndef MY_GETOPTIONS_H
#define MY_GETOPTIONS_H
#define INTARG 1
#define BENCHMARK 6
void get_options(int argc, char *argv[], char *specs[], int *types, ...);
#endif
"""
GETOPTIONS_C = "void get_options(int argc, char *argv[], char *specs[], int *types, ...) {}\n"

STAIRS = """\
#include <cilk-lib.cilkh>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <getoptions.h>

int best_so_far = INT_MIN;

/* the largest score of a climb of <n> stairs taking 1 or 2 at a time */
cilk int climb(int n, int score)
{
     int one, two, best;

     if (n < 0)
          return INT_MIN;
     if (n == 0)
          return score;

     one = spawn climb(n - 1, score + (n % 3));
     two = spawn climb(n - 2, score + (n % 5) * 2 - 1);
     sync;

     best = one > two ? one : two;
     if (best > best_so_far)
          best_so_far = best;
     return best;
}

char *specifiers[] = {"-n", "-benchmark", 0};
int opt_types[] = {INTARG, BENCHMARK, 0};

cilk int main(int argc, char *argv[])
{
     int n = 17, benchmark = 0, result;
     Cilk_time tm_begin;

     get_options(argc, argv, specifiers, opt_types, &n, &benchmark);
     tm_begin = Cilk_get_wall_time();
     result = spawn climb(n, 0);
     sync;
     printf("%d\\n", result);
     return 0;
}
"""

# BOTS's fib: the serial variant keeps long long results in int locals, which revec
# cannot take; the task never calls it, so it is left out
FIB_WITH_SERIAL = """\
#include <stdio.h>
#include <omp.h>

long long fib_seq (int n)
{
	int x, y;
	if (n < 2) return n;

	x = fib_seq(n - 1);
	y = fib_seq(n - 2);

	return x + y;
}

long long fib (int n)
{
	long long x, y;
	if (n < 2) return n;

	#pragma omp task untied shared(x) firstprivate(n)
	x = fib(n - 1);
	#pragma omp task untied shared(y) firstprivate(n)
	y = fib(n - 2);

	#pragma omp taskwait
	return x + y;
}

static long long par_res;

void fib0 (int n)
{
	#pragma omp parallel
	#pragma omp single
	par_res = fib(n);
	printf("%lld\\n", par_res);
}

int main(void) { fib0(21); return 0; }
"""

# a main that times and parses its options with POSIX headers (not read by revec)
POSIX_MAIN = """\
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <getopt.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/types.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <cilk/cilk.h>

long paths(int r, int c) {
  if (r == 0 || c == 0)
    return 1;
  long down = cilk_spawn paths(r - 1, c);
  long right = paths(r, c - 1);
  cilk_sync;
  return down + right;
}

int main(int argc, char *argv[]) {
  int opt, r = 8, c = 7;
  struct rusage usage;
  pid_t me = getpid();
  while ((opt = getopt(argc, argv, "r:c:")) != -1) {
    if (opt == 'r' && isdigit(optarg[0])) r = atoi(optarg);
    else if (opt == 'c') c = atoi(optarg);
    else { errno = EINVAL; return 1; }
  }
  getrusage(RUSAGE_SELF, &usage);
  (void) me;
  (void) sysconf(_SC_NPROCESSORS_ONLN);
  printf("%ld\\n", paths(r, c));
  return 0;
}
"""

# BOTS's knapsack counts its tasks in a global for main to print; no task reads it
COUNTED = """\
#include <stdio.h>
#include <limits.h>
#include <omp.h>

int visits;
long work_units;
#pragma omp threadprivate(visits)

int best_gain = INT_MIN;

void gain(int depth, int budget, int acc, int *res)
{
     int left, right, best;

     visits++;
     if (budget < 0) {
          *res = INT_MIN;
          return;
     }
     if (depth == 0) {
          *res = acc;
          return;
     }
     work_units += depth * 2;

     #pragma omp task untied shared(left)
     gain(depth - 1, budget - (depth % 4), acc + depth * 3 % 7, &left);
     #pragma omp task untied shared(right)
     gain(depth - 1, budget - 1, acc + 1, &right);
     #pragma omp taskwait

     best = left > right ? left : right;
     if (best > best_gain) best_gain = best;
     *res = best;
}

int main(void)
{
     int res;
     visits = 0;
     gain(13, 9, 0, &res);
     printf("%d\\n", res);
     fprintf(stderr, "%d visits, %ld units\\n", visits, work_units);
     return 0;
}
"""

PROGRAMS = {
    "alloca_collecting_array": Program(COLOURINGS, "colourings", (7, 4, 0), board=7),
    "bots_out_parameter_alloca": Program(COMPOSITIONS, "compositions", (13, 4),
                                         backend="numba"),
    "cilk5_file_with_getoptions": Program(
        STAIRS, "climb", (17, 0), backend="numba", name="stairs.cilk", cilk5=True,
        files={"getoptions.h": GETOPTIONS_H}, oracle_extra=GETOPTIONS_C),
    "serial_variant_left_out": Program(FIB_WITH_SERIAL, "fib", (21,)),
    "posix_headers_in_main": Program(POSIX_MAIN, "paths", (8, 7), backend="numba"),
    "statistics_counter": Program(COUNTED, "gain", (13, 9, 0)),
}


def write(folder: Path, spec: Program) -> Path:
    prog = folder / spec.name
    prog.write_text(spec.source)
    for name, text in spec.files.items():
        (folder / name).write_text(text)
    return prog


def oracle(folder: Path, spec: Program) -> int:
    """The number gcc's serial elision of the program prints (the system's headers;
    the program's own next to it; OpenMP's pragmas ignored, its library linked)."""
    build = folder / "elision"
    build.mkdir()
    source = build / "prog.c"  # gcc reads a .cilk file as a linker input
    shutil.copy(folder / spec.name, source)
    sources = [source]
    if spec.oracle_extra:
        sources.append(build / "extra.c")
        sources[-1].write_text(spec.oracle_extra)
    inc = cilk_oracle.include_dir(build)
    (inc / "cilk-lib.cilkh").write_text("typedef long Cilk_time;\n"
                                        "#define Cilk_get_wall_time() 0L\n")
    exe = cilk_oracle.build(sources, build / "elision", cilk5=spec.cilk5,
                            extra=("-I", str(folder), "-lgomp"))
    return int(cilk_oracle.run(exe)[0])


def check(folder: Path, name: str, backends: tuple[str, ...]) -> None:
    spec = PROGRAMS[name]
    prog = write(folder, spec)
    expected = oracle(folder, spec)
    assert_runs_match(prog, spec.task, spec.args, spec.board, backends, expected, name)


@needs_gcc
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_published_form_matches_serial_elision(tmp_path, name):
    check(tmp_path, name, (PROGRAMS[name].backend,))


@needs_gcc
@pytest.mark.slow
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_published_form_matches_serial_elision_both_back_ends(tmp_path, name):
    check(tmp_path, name, ("c", "numba"))


def test_cilk_file_runs_from_the_command_line(tmp_path, capsys):
    """``revec run prog.cilk task args``: a .cilk file is Cilk C (not Python)."""
    spec = PROGRAMS["cilk5_file_with_getoptions"]
    prog = write(tmp_path, spec)
    assert main(["check", str(prog)]) == 0
    assert "task climb(n: int32, score: int32) -> int32" in capsys.readouterr().out


def test_a_header_next_to_the_file_is_found_after_revecs(tmp_path):
    """``#include <getoptions.h>`` is found next to the file; revec's own headers come
    first (a <stdio.h> next to the file is not read)."""
    spec = PROGRAMS["cilk5_file_with_getoptions"]
    prog = write(tmp_path, spec)
    (tmp_path / "stdio.h").write_text("#error not revec's stdio.h\n")
    assert list(load_program(prog).tasks) == ["climb"]


def test_a_serial_variant_the_task_calls_is_still_checked(tmp_path):
    """When the task calls fib_seq it is not left out: the call is the located error."""
    source = FIB_WITH_SERIAL.replace(
        "\tx = fib(n - 1);", "\tif (n < 8) return fib_seq(n) + 0 * n;\n\tx = fib(n - 1);")
    prog = tmp_path / "prog.c"
    prog.write_text(source)
    with pytest.raises(RevecError) as info:
        load_program(prog)
    assert "calls the task 'fib_seq'" in info.value.message
    assert info.value.loc is not None
    assert (info.value.loc.line, info.value.loc.col) == where(source, "fib_seq(n) + 0")


ERRORS = [
    ("counter_read_by_the_task",
     COUNTED.replace("     if (depth == 0) {", "     if (depth == 0 || visits > 1000) {"),
     "writes the file-scope variable 'visits'", "visits++"),
    ("void_task_counting_into_a_global", """\
#include <cilk/cilk.h>
long visits;
void walk(int n) {
  visits++;
  if (n < 2) return;
  cilk_spawn walk(n - 1);
  walk(n - 2);
}
""", "writes the file-scope variable 'visits'", "visits++"),
    ("counter_assigned_by_the_task",
     COUNTED.replace("     work_units += depth * 2;", "     work_units = depth * 2;"),
     "writes the file-scope variable 'work_units'", "work_units = depth"),
    ("memset_not_zero",
     COLOURINGS.replace("(void) memset(count, 0,", "(void) memset(count, 1,"),
     "'count' collects results; memset clears it with 0", "memset(count, 1"),
    ("memset_after_the_spawns",
     COLOURINGS.replace("  (void) memset(count, 0, k * sizeof (int));\n", "").replace(
         "  cilk_sync;\n", "  cilk_sync;\n  memset(count, 0, k * sizeof(int));\n"),
     "'count' collects results; clear it before the loop that fills it",
     "memset(count, 0, k"),
    ("memset_short_of_the_bound",
     COLOURINGS.replace("memset(count, 0, k * sizeof (int))",
                        "memset(count, 0, j * sizeof (int))"),
     "may leave 'count[c]' unwritten: write it on every path (e.g. 'else count[c] = 0;') "
     "or clear it first with 'memset(count, 0, <bound> * sizeof(*count))'",
     "count[c] = cilk_spawn"),
    ("memset_of_another_element_size",
     COLOURINGS.replace("memset(count, 0, k * sizeof (int))",
                        "memset(count, 0, k * sizeof (char))"),
     "may leave 'count[c]' unwritten", "count[c] = cilk_spawn"),
    ("not_cleared",
     COLOURINGS.replace("  (void) memset(count, 0, k * sizeof (int));\n", ""),
     "may leave 'count[c]' unwritten", "count[c] = cilk_spawn"),
    ("allocated_twice",
     COLOURINGS.replace("  (void) memset(count, 0, k * sizeof (int));\n",
                        "  (void) memset(count, 0, k * sizeof (int));\n"
                        "  count = (int *) alloca(k * sizeof(int));\n"),
     "'count' collects results; it is given its alloca'd storage once",
     "count = (int *) alloca(k * sizeof(int));\n\n  for"),
    ("allocated_in_the_loop",
     COLOURINGS.replace("  count = (int *) alloca(k * sizeof(int));\n"
                        "  (void) memset(count, 0, k * sizeof (int));\n", "").replace(
         "    b = (char *) alloca", "    count = (int *) alloca(k * sizeof(int));\n"
         "    b = (char *) alloca").replace("if (fits(j + 1, b)) {", "{"),
     "'count' collects results; allocate it once, before the loop that fills it",
     "count = (int *) alloca"),
]


@pytest.mark.parametrize("name, source, message, needle", ERRORS, ids=[e[0] for e in ERRORS])
def test_collecting_array_errors_are_located(tmp_path, capsys, name, source, message,
                                             needle):
    path = tmp_path / "prog.c"
    path.write_text(source)
    line, col = where(source, needle)
    assert_located_rejection(path, message, line, col, tmp_path / "out.c",
                             ("--backend", "c"), capsys)

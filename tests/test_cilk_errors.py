"""Cilk C programs outside the subset are rejected with one located message
(file:line:col, source line, caret), exit status 2 and no output file."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.rejections import assert_located_rejection

HEAD = "#include <cilk/cilk.h>\n#include <stdint.h>\n\n"

# (name, source after HEAD, message fragment, the text the caret points at; a needle
# ending in '@' marks the position just after the text before it)
CASES = [
    ("read_before_sync", """\
long f(int n) {
  if (n < 2) return n;
  long x = cilk_spawn f(n - 1);
  long y = x + f(n - 2);
  cilk_sync;
  return y;
}
""", "'x' holds the value of a spawned call and is read before cilk_sync", "x + f(n - 2)"),
    ("return_before_sync", """\
long f(int n) {
  if (n < 2) return n;
  long x = cilk_spawn f(n - 1);
  long y = f(n - 2);
  return x + y;
}
""", "read before cilk_sync", "x + y"),
    ("sync_in_one_branch_only", """\
long f(int n) {
  if (n < 2) return n;
  long x = cilk_spawn f(n - 1);
  if (n > 5) {
    cilk_sync;
  }
  return x;
}
""", "read before cilk_sync", "x;"),
    ("array_summed_before_sync", """\
long f(int n) {
  if (n < 2) return n;
  long c[4];
  int k = 0;
  long t = 0;
  c[k++] = cilk_spawn f(n - 1);
  for (int i = 0; i < k; i++) t += c[i];
  cilk_sync;
  return t;
}
""", "'c' holds spawned values and is read before cilk_sync", "for (int i"),
    ("spawn_of_another_function", """\
static long g(int n) { return n; }
long f(int n) {
  if (n < 2) return n;
  long x = cilk_spawn g(n);
  long y = f(n - 1);
  cilk_sync;
  return x + y;
}
""", "spawning another function 'g'", "g(n);"),
    ("call_of_another_task", """\
long g(int n) { if (n < 1) return 0; return g(n - 1); }
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + g(n);
}
""", "calls the task 'g'", "g(n);"),
    ("pointer_parameter", """\
int h(int *p) { return 1; }
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + h(0);
}
""", "pointer parameter 'p' is not supported; helpers take scalar", "*p) {"),
    ("input_written", """\
long f(const int *p, int n) {
  if (n < 2) return n;
  p[0] = n;
  return f(p, n - 1);
}
""", "writes the array parameter 'p'; array parameters are read-only", "p[0] = n;"),
    ("input_written_through_star", """\
long f(const int *p, int n) {
  if (n < 2) return n;
  *(p + 1) = n;
  return f(p, n - 1);
}
""", "writes the array parameter 'p'", "p + 1) = n;"),
    ("input_passed_changed", """\
long f(const int *p, int n) {
  if (n < 2) return p[0];
  return f(p * 2, n - 1);
}
""", "argument 1 of 'f' is the array parameter 'p': pass p itself, p + k", "p * 2, n - 1"),
    ("input_as_value", """\
long f(const int *p, int n) {
  if (n < 2) return p[0];
  long q = p;
  return f(p, n - 1) + q;
}
""", "'p' is an array parameter: index it", "p;"),
    ("input_two_dimensional", """\
long f(const int *p, int n) {
  if (n < 2) return p[0][1];
  return f(p, n - 1);
}
""", "array 'p' has 1 dimension(s) but is indexed with 2", "p[0][1];"),
    ("pointer_local", """\
long f(int n) {
  if (n < 2) return n;
  int *q;
  return f(n - 1);
}
""", "pointers are not supported", "*q;"),
    ("address_of", """\
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + *(&n);
}
""", "pointers are not supported", "n);"),
    ("global_write", """\
long total = 0;
void f(int n) {
  if (n < 2) return;
  total += n;
  cilk_spawn f(n - 1);
}
""", "writes the file-scope variable 'total'", "total +="),
    ("global_array_write", """\
const int A[2] = {1, 2};
void f(int n) {
  if (n < 2) return;
  A[0] = n;
  cilk_spawn f(n - 1);
}
""", "writes the file-scope array 'A'", "A[0] ="),
    ("non_const_global_read", """\
int K = 3;
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + K;
}
""", "which is not const", "K;"),
    ("goto", """\
long f(int n) {
  if (n < 2) return n;
  goto done;
  return f(n - 1);
}
""", "goto is not supported", "goto"),
    ("label", """\
long f(int n) {
  if (n < 2) return n;
again:
  return f(n - 1);
}
""", "labels (and goto) are not supported", "again:"),
    ("setjmp", """\
long f(int n) {
  if (n < 2) return n;
  if (setjmp(0)) return 0;
  return f(n - 1);
}
""", "setjmp is not supported", "setjmp("),
    ("unknown_function", """\
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + foo(n);
}
""", "call of unknown function 'foo'", "foo(n)"),
    ("product_of_results", """\
long f(int n) {
  if (n < 2) return n;
  long x = cilk_spawn f(n - 1);
  long y = f(n - 2);
  cilk_sync;
  return x * y;
}
""", "a product of two results", "x * y"),
    ("ternary_not_max", """\
long f(int n) {
  if (n < 2) return n;
  long x = cilk_spawn f(n - 1);
  long y = f(n - 2);
  cilk_sync;
  return x > 3 ? x : y;
}
""", "cannot be turned into a reduction", "x > 3"),
    ("max_mixed_with_sum", """\
long f(int n) {
  if (n < 3) return n;
  long x = cilk_spawn f(n - 1);
  long y = cilk_spawn f(n - 2);
  long z = f(n - 3);
  cilk_sync;
  return x + (y > z ? y : z);
}
""", "max/min of results mixed with a sum", "y > z"),
    ("result_narrowed", """\
long f(int n) {
  if (n < 2) return n;
  int x = cilk_spawn f(n - 1);
  cilk_sync;
  return x + 1;
}
""", "would change its value", "f(n - 1);"),
    ("void_call_as_value", """\
void f(int n) {
  if (n < 2) return;
  long x = f(n - 1);
}
""", "'f' returns void", "f(n - 1);"),
    ("spawn_in_base_case", """\
long f(int n) {
  if (n < 2) {
    long x = cilk_spawn f(n + 2);
    cilk_sync;
    return x;
  }
  return f(n - 1);
}
""", "in the first branch of the is-base test", "(n + 2)@"),
    ("cilk_reducer", """\
long f(int n) {
  long cilk_reducer(0, 0) total = 0;
  if (n < 2) return n;
  return f(n - 1);
}
""", "cilk_reducer hyperobjects are not supported", "cilk_reducer"),
    ("error_inside_function_like_macro", """\
#define SQ(x) ((x) * (x))
long f(int n) {
  if (n < 2) return n;
  return f(n - 1) + SQ(g(n));
}
""", "call of unknown function 'g'", "g(n))"),
    ("local_array_not_summed", """\
long f(int n) {
  if (n < 2) return n;
  long c[4];
  c[0] = cilk_spawn f(n - 1);
  cilk_sync;
  return 1;
}
""", "a local array may only collect spawned results", "c[4]"),
    ("array_summed_partly", """\
long f(int n) {
  if (n < 2) return n;
  long c[4];
  int k = 0;
  long t = 0;
  c[k++] = cilk_spawn f(n - 1);
  c[k++] = cilk_spawn f(n - 2);
  cilk_sync;
  for (int i = 0; i < 1; i++) t += c[i];
  return t;
}
""", "must add every element", "for (int i"),
    ("array_counter_not_from_zero", """\
long f(int n) {
  if (n < 2) return n;
  long c[4];
  int k = 1;
  long t = 0;
  c[k++] = cilk_spawn f(n - 1);
  cilk_sync;
  for (int i = 0; i < k; i++) t += c[i];
  return t;
}
""", "must add every element", "for (int i"),
    ("loop_carried_spawned_value", """\
long f(int n) {
  if (n < 2) return n;
  long x = 0, t = 0;
  for (int i = 0; i < 2; i++) {
    t += x;
    x = cilk_spawn f(n - 1 - i);
  }
  cilk_sync;
  return t + x;
}
""", "read before cilk_sync", "x;\n    x ="),
    ("no_base_case", """\
long f(int n) {
  long x = cilk_spawn f(n - 1);
  cilk_sync;
  return x;
}
""", "a task body must be", "x = cilk_spawn"),
    ("syntax_error", """\
long f(int n) {
  if (n < 2) return n +;
  return f(n - 1);
}
""", "syntax error", ";\n  return f"),
    ("stray_closing_brace", """\
long f(int n) {
  if (n < 2) return n;
  return f(n - 1);
}
  } /* stray */
""", "syntax error before '}'", "} /* stray"),
    ("unsupported_include", """\
#include <pthread.h>
long f(int n) {
  if (n < 2) return n;
  return f(n - 1);
}
""", "#include <pthread.h>", "#include <pthread"),
]


def _where(source: str, needle: str) -> tuple[int, int]:
    after = needle.endswith("@")
    text = needle[:-1] if after else needle
    at = source.index(text) + (len(text) if after else 0)
    if after:  # the position of the call's name: back to the identifier before '('
        at = source.rindex("f(", 0, at)
    line = source.count("\n", 0, at) + 1
    col = at - (source.rfind("\n", 0, at) + 1) + 1
    return line, col


@pytest.mark.parametrize("name, body, message, needle", CASES, ids=[c[0] for c in CASES])
def test_rejected_with_location(tmp_path, capsys, name, body, message, needle):
    source = HEAD + body
    path = tmp_path / "prog.c"
    path.write_text(source)
    line, col = _where(source, needle)
    assert_located_rejection(path, message, line, col, tmp_path / "out.c",
                             ("--backend", "c"), capsys)


def test_cli_exit_2_without_traceback(tmp_path):
    """One case through a real process: exit status 2 and no traceback."""
    name, body, message, needle = CASES[0]
    path = tmp_path / "prog.c"
    path.write_text(HEAD + body)
    line, col = _where(HEAD + body, needle)
    out = tmp_path / "out.c"
    proc = subprocess.run([sys.executable, "-m", "revec", "transform", str(path), "--backend",
                           "c", "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"{path}:{line}:{col}: error: {message}")
    assert not out.exists()

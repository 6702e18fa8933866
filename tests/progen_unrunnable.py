"""Programs at the edge of what revec runs, written in Python and in Cilk C.

Each program has one task ``f(n, k)`` returning an int64 (``n`` decreases on every
call, so the plain recursion ends) whose inductive case combines its own calls in one
of the shapes below, and sometimes a helper ``h`` written as an ``if``/``elif`` chain:

- shapes no reduction computes (nested recursion: a result as an argument of a call,
  directly, through arithmetic or through a local; products, quotients and remainders of
  two results, directly, through locals or in a loop; negated results in max/min;
  max and min alternating by level; a result in a condition or squared);
- near misses that are supported (sums with constant or parameter weights, locals,
  ``1 + max(...)``, a helper's value as an argument or a local term).

A helper is complete (an ``else`` returns), partial with the missing case never taken
(its argument is ``k % 3``), or partial with it taken (its argument runs through every
residue).  Every program exists in both languages with the same meaning, so the Python
twin is the oracle of both (and gcc's serial elision of the C twin the oracle of C).
:func:`programs` enumerates them in a fixed order; the property under test: check
rejects a program with a located error, or every run gives plain Python's answer (a
located run-time error at the helper where plain Python fails on the helper's None).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

# name -> (Python inductive case, C inductive case); the task's calls are written F(...)
# in Python and F(...) / SPAWN F(...) in C
UNRUNNABLE: dict[str, tuple[str, str]] = {
    "nested_arg": (
        "return F(n - 1, F(n - 2, k) % 5)",
        "return F(n - 1, F(n - 2, k) % 5);"),
    "nested_first": (
        "return F(n - 1 - F(n - 2, k) % 2, k) + 1",
        "return F(n - 1 - F(n - 2, k) % 2, k) + 1;"),
    "nested_local": (
        "x = F(n - 2, k)\n    return F(n - 1, x % 7)",
        "int64_t x = F(n - 2, k);\n    return F(n - 1, x % 7);"),
    "nested_spawned": (
        "x = F(n - 2, k)\n    y = F(n - 1, x % 3)\n    return x + y",
        "int64_t x = SPAWN F(n - 2, k);\n    SYNC;\n    int64_t y = F(n - 1, x % 3);\n"
        "    return x + y;"),
    "nested_helper_arg": (
        "return F(n - 1, HELPER(F(n - 2, k)))",
        "return F(n - 1, HELPER(F(n - 2, k)));"),
    "product": (
        "return F(n - 1, k) * F(n - 2, k)",
        "return F(n - 1, k) * F(n - 2, k);"),
    "product_locals": (
        "a = F(n - 1, k)\n    b = F(n - 2, k)\n    return a * b + 1",
        "int64_t a = SPAWN F(n - 1, k);\n    int64_t b = F(n - 2, k);\n    SYNC;\n"
        "    return a * b + 1;"),
    "product_loop": (
        "t = 0\n    for i in range(2):\n        t += F(n - 1 - i, k) * F(n - 2 + i, k)\n"
        "    return t",
        "int64_t t = 0;\n    for (int64_t i = 0; i < 2; i++)\n"
        "        t += F(n - 1 - i, k) * F(n - 2 + i, k);\n    return t;"),
    "square": (
        "a = F(n - 1, k)\n    return a * a",
        "int64_t a = F(n - 1, k);\n    return a * a;"),
    "quotient": (
        "return F(n - 1, k) // (F(n - 2, k) + 1)",
        "return F(n - 1, k) / (F(n - 2, k) + 1);"),
    "remainder": (
        "return F(n - 1, k) % (F(n - 2, k) + 2)",
        "return F(n - 1, k) % (F(n - 2, k) + 2);"),
    "negamax": (
        "return max(-F(n - 1, k), -F(n - 2, k))",
        "int64_t a = SPAWN F(n - 1, k);\n    int64_t b = F(n - 2, k);\n    SYNC;\n"
        "    return -a > -b ? -a : -b;"),
    "negamax_sub": (
        "return max(k - F(n - 1, k), k - F(n - 2, k))",
        "int64_t a = SPAWN F(n - 1, k);\n    int64_t b = F(n - 2, k);\n    SYNC;\n"
        "    return k - a > k - b ? k - a : k - b;"),
    "negated_max": (
        "return -max(F(n - 1, k), F(n - 2, k))",
        "int64_t a = SPAWN F(n - 1, k);\n    int64_t b = F(n - 2, k);\n    SYNC;\n"
        "    return -(a > b ? a : b);"),
    "minimax": (
        "if n % 2 == 0:\n        return max(F(n - 1, k), F(n - 2, k))\n"
        "    return min(F(n - 1, k), F(n - 2, k))",
        "int64_t a = SPAWN F(n - 1, k);\n    int64_t b = F(n - 2, k);\n    SYNC;\n"
        "    if (n % 2 == 0) return a > b ? a : b;\n    return a < b ? a : b;"),
    "result_in_condition": (
        "a = F(n - 1, k)\n    if a > 3:\n        return a + F(n - 2, k)\n    return a",
        "int64_t a = F(n - 1, k);\n    if (a > 3) return a + F(n - 2, k);\n    return a;"),
}

SUPPORTED: dict[str, tuple[str, str]] = {
    "sum": (
        "return F(n - 1, k) + F(n - 2, k)",
        "int64_t a = SPAWN F(n - 1, k);\n    int64_t b = F(n - 2, k);\n    SYNC;\n"
        "    return a + b;"),
    "weighted": (
        "return 2 * F(n - 1, k) + k * F(n - 2, k) - F(n - 2, k) + n",
        "return 2 * F(n - 1, k) + k * F(n - 2, k) - F(n - 2, k) + n;"),
    "max_plus": (
        "return 1 + max(F(n - 1, k + 1), F(n - 2, k))",
        "int64_t a = SPAWN F(n - 1, k + 1);\n    int64_t b = F(n - 2, k);\n    SYNC;\n"
        "    return 1 + (a > b ? a : b);"),
    "helper_arg": (
        "return F(n - 1, HELPER(k + n)) + F(n - 2, k)",
        "int64_t a = SPAWN F(n - 1, HELPER(k + n));\n    int64_t b = F(n - 2, k);\n"
        "    SYNC;\n    return a + b;"),
    "helper_term": (
        "return F(n - 1, k) + F(n - 2, k + 1) + HELPER(k + n)",
        "return F(n - 1, k) + F(n - 2, k + 1) + HELPER(k + n);"),
    "loop_sum": (
        "t = 0\n    for i in range(1, 3):\n        t += F(n - i, k + i)\n"
        "    return t + HELPER(k)",
        "int64_t t = 0;\n    for (int64_t i = 1; i < 3; i++)\n        t += F(n - i, k + i);\n"
        "    return t + HELPER(k);"),
}

# the helper's argument: complete (every case returns), partial but never taken
# (x % 4 == 3 cannot happen for k % 3), partial and taken
HELPERS = ("complete", "partial_untaken", "partial_taken")
# (threshold, the base case's value); the supported shapes take the first two
BASES = (("2", "n + k"), ("1", "k"), ("3", "1"))


@dataclass(frozen=True)
class Program:
    name: str  # shape / helper / base / language
    shape: str
    unrunnable: bool  # a shape no reduction computes (check must reject it)
    helper: str
    lang: str  # "py" or "c"
    source: str
    twin: str  # the Python twin's source (the oracle of both languages)
    args: tuple[int, int]


def _python(body: str, helper: str, threshold: str, base: str) -> str:
    arg = "x % 3" if helper == "partial_untaken" else "x"
    tail = "    else:\n        return 3\n" if helper == "complete" else ""
    return (
        "import numpy as np\nfrom revec import task\n\n\n"
        "def h(x: np.int64) -> np.int64:\n"
        f"    y = {arg}\n"
        "    if y % 4 == 0:\n        return y + 1\n"
        "    elif y % 4 == 1:\n        return 2\n"
        "    elif y % 4 == 2:\n        return 7\n" + tail + "\n\n"
        "@task\n"
        "def f(n: np.int64, k: np.int64) -> np.int64:\n"
        f"    if n < {threshold}:\n        return {base}\n"
        f"    {body.replace('F(', 'f(').replace('HELPER(', 'h(')}\n")


def _c(body: str, helper: str, threshold: str, base: str) -> str:
    arg = "x % 3" if helper == "partial_untaken" else "x"
    tail = "    else return 3;\n" if helper == "complete" else ""
    code = (body.replace("SPAWN ", "cilk_spawn ").replace("SYNC", "cilk_sync")
            .replace("F(", "f(").replace("HELPER(", "h("))
    return (
        "#include <cilk/cilk.h>\n#include <stdint.h>\n\n"
        "static int64_t h(int64_t x) {\n"
        f"    int64_t y = {arg};\n"
        "    if (y % 4 == 0) return y + 1;\n"
        "    else if (y % 4 == 1) return 2;\n"
        "    else if (y % 4 == 2) return 7;\n" + tail + "}\n\n"
        "int64_t f(int64_t n, int64_t k) {\n"
        f"    if (n < {threshold}) return {base};\n"
        f"    {code}\n}}\n")


def programs() -> list[Program]:
    """Every program, in a fixed order (shapes x helpers x bases x languages)."""
    out: list[Program] = []
    shapes = [(n, b, True) for n, b in UNRUNNABLE.items()] + \
        [(n, b, False) for n, b in SUPPORTED.items()]
    for (name, (py, c), bad), helper, (threshold, base) in itertools.product(
            shapes, HELPERS, BASES):
        if not bad and (threshold, base) == BASES[2]:
            continue
        uses_helper = "HELPER(" in py
        if not uses_helper and helper != "complete":
            continue  # the helper is not called: one variant is enough
        twin = _python(py, helper, threshold, base)
        args = (6, 1)
        for lang in ("py", "c"):
            source = twin if lang == "py" else _c(c, helper, threshold, base)
            out.append(Program(f"{name}-{helper}-t{threshold}-{lang}", name, bad, helper,
                               lang, source, twin, args))
    return out

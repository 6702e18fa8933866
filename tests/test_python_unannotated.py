"""Python tasks without annotations: parameters typed by the root call (as numba types
them), narrowed by the value-range analysis of the recursion, and never a different
result for it (plain Python, the int64 program and the narrowed one agree)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from revec.api import get_program, run_loaded
from revec.errors import RevecError
from revec.frontend.python.ranges import analyse
from revec.frontend.python.roots import root_typed

ROOT = Path(__file__).resolve().parents[1]

FIB = """
from revec import task

@task
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
"""

# k * 1000 wraps in int8 although k itself is 5: narrowing k must stop at int16
SCALED = """
from revec import task

@task
def scaled(n, k):
    if n == 0:
        return k * 1000
    return scaled(n - 1, k) + scaled(n - 1, k)
"""

# a read-only list input and a float, both typed from the root call
HALVES = """
from revec import task

@task
def halves(a, lo, hi, w):
    if hi - lo == 1:
        return a[lo] * w
    mid = lo + (hi - lo) // 2
    return halves(a, lo, mid, w) + halves(a, mid, hi, w)
"""

# a task-private tuple built anew for each child, typed from the root's tuple
BOARD = """
from revec import task

@task
def queens(n, board=()):
    if len(board) == n:
        return 1
    total = 0
    for col in range(n):
        ok = True
        for r in range(len(board)):
            c = board[r]
            if c == col or c - col == len(board) - r or col - c == len(board) - r:
                ok = False
        if ok:
            total += queens(n, board + (col,))
    return total
"""


def _module(tmp_path: Path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


def _plain(path: Path, task: str, *args):
    """Plain Python: the module run as written (Python ints, no revec types)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_plain_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, task)(*args)


def _params(program, task):
    return {p.name: p.ty.dtype.name for p in program.tasks[task].user_params}


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    d = tmp_path_factory.mktemp("unannotated")
    return {name: _module(d, name, text) for name, text in
            (("fib", FIB), ("scaled", SCALED), ("halves", HALVES), ("queens", BOARD))}


def test_fib_is_narrowed_from_the_root_value(progs):
    program = get_program(progs["fib"])
    assert _params(program, "fib") == {"n": "int64"}  # what check checks with
    assert _params(root_typed(program, "fib", (40,)), "fib") == {"n": "int8"}
    assert _params(root_typed(program, "fib", (300,)), "fib") == {"n": "int16"}
    assert _params(root_typed(program, "fib", (40,), narrow=False), "fib") == {"n": "int64"}
    ranges = analyse(program, "fib", {"n": (40, 40)})
    assert ranges.params["n"] == (0, 40)


@pytest.mark.parametrize("backend", ["c", "numba"])
def test_unannotated_results_equal_plain_python(progs, backend):
    fib = get_program(progs["fib"])
    assert run_loaded(fib, "fib", (20,), backend=backend).result == _plain(progs["fib"],
                                                                          "fib", 20)
    scaled = get_program(progs["scaled"])
    res = run_loaded(scaled, "scaled", (6, 5), backend=backend)
    assert res.result == _plain(progs["scaled"], "scaled", 6, 5) == 64 * 5000
    values = [3, -7, 11, 2, 40, -1, 9]
    halves = get_program(progs["halves"])
    res = run_loaded(halves, "halves", (values, 0, len(values), 0.5), backend=backend)
    assert res.result == _plain(progs["halves"], "halves", values, 0, len(values), 0.5)
    queens = get_program(progs["queens"])
    res = run_loaded(queens, "queens", (6,), backend=backend)
    assert res.result == _plain(progs["queens"], "queens", 6, ()) == 4


def test_narrowing_keeps_the_values_it_computes(progs):
    """k is 5 at every task, but k * 1000 needs int16: k is narrowed no further."""
    typed = root_typed(get_program(progs["scaled"]), "scaled", (6, 5))
    assert _params(typed, "scaled") == {"n": "int8", "k": "int16"}


def test_values_typed_from_the_root_call(progs):
    typed = root_typed(get_program(progs["halves"]), "halves", ([1, 2, 3], 0, 3, 0.5))
    t = typed.tasks["halves"]
    assert [ap.name for ap in t.arrays] == ["a"]
    assert typed.inputs[t.arrays[0].array].dtype == np.int64
    assert _params(typed, "halves")["w"] == "float64"
    typed = root_typed(get_program(progs["halves"]),
                       "halves", (np.array([1.5, 2.5]), 0, 2, np.float32(2)))
    assert typed.inputs[typed.tasks["halves"].arrays[0].array].dtype == np.float64
    assert _params(typed, "halves")["w"] == "float32"
    with pytest.raises(RevecError, match=r"argument 'w': \{'x': 1\} has no type revec supports"):
        root_typed(get_program(progs["halves"]), "halves", ([1], 0, 1, {"x": 1}))


def test_cli_types_the_arguments_from_their_text(progs):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "revec", "run", *map(str, args)],
                              capture_output=True, text=True, cwd=ROOT,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})

    out = run(progs["fib"], "fib", "15", "--backend", "c", "--workers", "1")
    assert out.returncode == 0, out.stderr
    assert "result = 610" in out.stdout
    values = progs["halves"].parent / "values.txt"
    values.write_text("3\n-7\n11\n2\n")
    out = run(progs["halves"], "halves", values, "0", "4", "2.5", "--backend", "c",
              "--workers", "1")
    assert out.returncode == 0, out.stderr
    assert f"result = {2.5 * (3 - 7 + 11 + 2)}" in out.stdout


# ------------------------------------------------------------------ property: same results
PROPERTY = """
from revec import task

@task
def walk(n, a, b):
    if n < 1:
        return a * 100 + b % 7 - b // 3 + (a << 4)
    x = a - n
    return walk(n - 1, a, b + x) + walk(n - 2, a, b)
"""


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    return _module(tmp_path_factory.mktemp("walk"), "walk", PROPERTY)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 9), a=st.integers(-3000, 3000), b=st.integers(-10**6, 10**6))
def test_narrowed_equals_int64_and_plain_python(walk, n, a, b):
    """The narrowed program (a: int8 or int16 where a * 100 and a << 4 still fit) gives
    the int64 program's result and plain Python's (the NumPy back end: no builds)."""
    program = get_program(walk)
    plain = _plain(walk, "walk", n, a, b)
    wide = run_loaded(program, "walk", (n, a, b), backend="numpy", narrow=False)
    narrow = run_loaded(program, "walk", (n, a, b), backend="numpy")
    assert narrow.result == wide.result == plain
    types = _params(root_typed(program, "walk", (n, a, b)), "walk")
    assert types["n"] == "int8"
    bound = max(abs(a) * 100, abs(a) << 4)
    assert np.iinfo(np.dtype(types["a"])).max >= bound  # wide enough for a's uses


# ------------------------------------------------------------------ the unannotated twins
RETURNED = {"fib": "count", "nqueens": "solutions", "uts": "nodes", "graphcol": "colourings",
            "knapsack": "best", "parentheses": "count", "binomial": "count",
            "minmax": "xwins", "nqueens_board": "solutions", "knapsack_bb": "best",
            "findmax": "largest"}
# what the analysis proves for the quick presets' root calls (knapsack's weight and
# value grow at most 13 levels: the counter i bounds the depth; binomial's n is bounded
# only by k, which intervals do not relate: int64)
NARROWED = {"fib": {"n": "int8"}, "parentheses": {"n": "int8", "opened": "int8",
                                                  "closed": "int8"},
            "binomial": {"n": "int64", "k": "int8"},
            "knapsack": {"example": "int8", "n": "int8", "i": "int8", "weight": "int16",
                         "value": "int16"}}


@pytest.mark.parametrize("name", sorted(RETURNED))
def test_unannotated_twin_gives_the_benchmarks_answer(name):
    """benchmarks/natural/unannotated: the natural twins without annotations give the
    benchmarks' independent answers (NumPy back end: no builds)."""
    from revec.bench.answers import expected
    from revec.bench.presets import PRESETS

    preset = PRESETS[name]["quick"]
    program = get_program(ROOT / "benchmarks" / "natural" / "unannotated" / f"{name}.py")
    res = run_loaded(program, name, preset.root_args, backend="numpy", workers=1)
    want = expected(name, preset.args)
    got = {**res.reducers, RETURNED[name]: res.result}
    assert {k: got[k] for k in want} == want
    if name in NARROWED:
        assert _params(root_typed(program, name, preset.root_args), name) == NARROWED[name]

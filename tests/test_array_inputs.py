"""Read-only array inputs (issue 33 item 1): task parameters that are arrays, in Python
(lists, tuples, NumPy arrays, 1-D and 2-D, slices) and Cilk C (pointers, ``a + k``,
``&a[k]``, ``*a``), bound at the root call (API, command line, ``revec.load``).

Generated programs (tests/progen_arrays.py) are checked against independent oracles:
the Python ones against the plain-Python run of the same file, the C ones against gcc's
serial elision.  The default run checks 100 Python and 100 C programs on every variant
on the NumPy plan interpreter (every block size from the seed), 25 of each on the C back
end and 12 on numba (one of them with 2 workers); ``pytest -m slow`` runs all of them on
every back end.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import revec
from revec.api import run_program
from revec.errors import RevecError
from tests import cilk_oracle
from tests.progen_arrays import ArrayProgram, array_program, c_args
from tests.support.generated_runs import VARIANTS, check_c, check_python

SEEDS = range(100)


def _backends(seed: int) -> list[str]:
    out = ["numpy"]
    if seed % 4 == 0:
        out.append("c")
    if seed % 8 == 0:
        out.append("numba")
    return out


def _check_python(p: ArrayProgram, path: Path, backends: list[str]) -> None:
    check_python(p.python, path, p.args, p.seed, backends, p.seed % 16 == 0)


def _check_c(p: ArrayProgram, folder: Path, backends: list[str]) -> None:
    check_c(p.c, p.c_main, folder, c_args(p), p.seed, backends, p.seed % 16 == 0)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_python(seed: int, tmp_path: Path) -> None:
    _check_python(array_program(seed), tmp_path / "prog.py", _backends(seed))


@pytest.mark.skipif(cilk_oracle.gcc() is None, reason="no C compiler for the serial elision")
@pytest.mark.parametrize("seed", SEEDS)
def test_generated_c(seed: int, tmp_path: Path) -> None:
    _check_c(array_program(seed), tmp_path, _backends(seed))


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_generated_every_backend(seed: int, tmp_path: Path) -> None:
    p = array_program(seed)
    _check_python(p, tmp_path / "prog.py", ["numpy", "c", "numba"])
    if cilk_oracle.gcc() is not None:
        _check_c(p, tmp_path, ["c", "numba"])


def test_generator_covers_every_shape() -> None:
    shapes = {(array_program(s).shape, array_program(s).op) for s in SEEDS}
    assert shapes == {(a, b) for a in ("range", "view", "grid") for b in ("sum", "max")}
    python = "".join(array_program(s).python for s in SEEDS)
    c = "".join(array_program(s).c for s in SEEDS)
    for form in ("a[h:]", "a[:h]", "a[h:n]", "a[-1]", "g[r][c]", "g[r, c]", "NDArray",
                 "list[list[int]]"):
        assert form in python, form
    for form in ("a + h", "&a[h]", "a[]", "const", "g[r * "):
        assert form in c, form


# --------------------------------------------------------------------------- published styles
MATRIX_PY = '''\
import numpy as np
from numpy.typing import NDArray
from revec import task, spawn, reduce, Reducer

paths = Reducer(np.int64, "sum")
cheapest = Reducer(np.int64, "min")


@task
def walk(cost: NDArray[np.int64], r: int, c: int, spent: int):
    """Every monotone path through a cost matrix: the number of paths under a budget,
    and the cheapest."""
    if r == len(cost) - 1 and c == 3:
        reduce(paths, 1 if spent + cost[r, c] <= 40 else 0)
        reduce(cheapest, spent + cost[r, c])
    else:
        if r < len(cost) - 1:
            spawn(walk, cost, r + 1, c, spent + cost[r, c])
        if c < 3:
            spawn(walk, cost, r, c + 1, spent + cost[r, c])
'''

TEACHING_PY = '''\
import numpy as np
from revec import task, spawn, reduce, Reducer

total = Reducer(np.int64, "sum")


@task
def list_sum(xs: list[int]):
    """The textbook recursion: the head plus the sum of the tail."""
    if len(xs) == 0:
        reduce(total, 0)
    else:
        reduce(total, xs[0])
        spawn(list_sum, xs[1:])


@task
def halves(xs: tuple[int, ...]) -> int:
    if len(xs) <= 1:
        return xs[0] if len(xs) == 1 else 0
    mid = len(xs) // 2
    return halves(xs[:mid]) + halves(xs[mid:])
'''

STRUCTLESS_C = '''\
#include <cilk/cilk.h>

/* Cowichan-style: the largest element of a row-major matrix, by halving the range. */
int max_in(const int *m, int n, int lo, int hi) {
    if (hi - lo == 1) return m[lo];
    int mid = lo + (hi - lo) / 2;
    int a = cilk_spawn max_in(m, n, lo, mid);
    int b = max_in(m, n, mid, hi);
    cilk_sync;
    return a > b ? a : b;
}

/* the pointer walks: a child gets the rest of the array */
long weighted(long *w, int n, long k) {
    if (n == 0) return 0;
    long rest = cilk_spawn weighted(w + 1, n - 1, k + 1);
    cilk_sync;
    return *w * k + rest;
}
'''


def test_published_python_styles(tmp_path: Path) -> None:
    path = tmp_path / "styles.py"
    path.write_text(TEACHING_PY)
    xs = [5, -3, 8, 13, 0, 2]
    for variant in ("seq", *VARIANTS):
        backends = ["c", "numba"] if variant != "seq" else ["auto"]
        for backend in backends:
            r = run_program(path, "list_sum", (xs,), variant=variant, backend=backend)
            assert r.reducers["total"] == sum(xs)
            r = run_program(path, "halves", (tuple(xs),), variant=variant, backend=backend)
            assert r.result == sum(xs)
    path.write_text(MATRIX_PY)
    cost = np.arange(12, dtype=np.int64).reshape(3, 4) % 5
    ref = run_program(path, "walk", (cost, 0, 0, 0), variant="seq").reducers
    assert ref["paths"] > 0
    for backend in ("c", "numba"):
        got = run_program(path, "walk", (cost, 0, 0, 0), backend=backend, block_size=2)
        assert got.reducers == ref


def test_published_c_styles(tmp_path: Path) -> None:
    path = tmp_path / "styles.c"
    path.write_text(STRUCTLESS_C)
    m = np.array([3, 41, -2, 7, 19, 40, 0, 12], np.int32)
    w = np.array([4, 1, 9, 2], np.int64)
    prog = revec.load(str(path))
    assert prog.tasks == ["max_in", "weighted"]
    for backend in ("c", "numba"):
        for variant in VARIANTS:
            assert prog.max_in.run(m, 2, 0, 8, backend=backend, variant=variant,
                                   block_size=2).result == 41
            assert prog.weighted.run(w, 4, 1, backend=backend,
                                     variant=variant).result == 4 * 1 + 1 * 2 + 9 * 3 + 2 * 4


def test_same_shapes_reuse_the_module(tmp_path: Path) -> None:
    """Inputs are not written into generated code: other values of the same shape run
    on the module already built (and give their own answers)."""
    path = tmp_path / "s.c"
    path.write_text(STRUCTLESS_C)
    a = np.array([1, 2, 3, 4], np.int32)
    first = run_program(path, "max_in", (a, 2, 0, 4), backend="c")
    second = run_program(path, "max_in", (a[::-1] * 10, 2, 0, 4), backend="c")
    assert (first.result, second.result) == (4, 40)
    # a new bound program, but its C source is the same: the build cache is hit
    from revec.api import compiled_task, get_program
    from revec.frontend.inputs import bind_inputs
    p1 = bind_inputs(get_program(path), "max_in", (a, 2, 0, 4))[0]
    p2 = bind_inputs(get_program(path), "max_in", (a * 3, 2, 0, 4))[0]
    assert compiled_task(p1, "max_in", "c").source == compiled_task(p2, "max_in", "c").source


# --------------------------------------------------------------------------- the root call
def test_command_line_reads_array_files(tmp_path: Path) -> None:
    path = tmp_path / "s.c"
    path.write_text(STRUCTLESS_C)
    np.save(tmp_path / "m.npy", np.array([3, 9, 4], np.int32))
    (tmp_path / "m.txt").write_text("3\n9\n4\n# a comment\n")
    (tmp_path / "grid.txt").write_text("1 2\n3 4\n")
    for name in ("m.npy", "m.txt"):
        out = subprocess.run([sys.executable, "-m", "revec", "run", str(path), "max_in",
                              str(tmp_path / name), "1", "0", "3"], capture_output=True,
                             text=True, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert "result = 9" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "revec", "run", str(path), "max_in",
                          str(tmp_path / "grid.txt"), "1", "0", "3"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "expected a 1-D array, got 2-D" in bad.stderr
    assert "Traceback" not in bad.stderr
    helptext = subprocess.run([sys.executable, "-m", "revec", "run", "--help"],
                              capture_output=True, text=True).stdout
    assert ".npy" in helptext and "whitespace" in helptext


@pytest.mark.parametrize("value, message", [
    ([1, 2, 3.5], "non-integer values"),
    ([1, 2 ** 40], "got values in"),
    ([[1, 2], [3]], "not a rectangular array"),
    ([[1, 2], [3, 4]], "expected a 1-D array, got 2-D"),
    (["a", "b"], "expected an array of numbers"),
])
def test_bad_array_arguments(value: object, message: str, tmp_path: Path) -> None:
    path = tmp_path / "s.c"
    path.write_text(STRUCTLESS_C)
    with pytest.raises(RevecError, match=message):
        run_program(path, "max_in", (value, 1, 0, 2), variant="seq")
    # (the arguments up to the last array one are needed: main's e5ec539)
    with pytest.raises(RevecError, match="needs at least 1 argument"):
        run_program(path, "max_in", (), variant="seq")


# --------------------------------------------------------------------------- rejections
PY_REJECTIONS = [
    ("write", "def f(a: list[int], n: int):\n    if n <= 0:\n        reduce(acc, 0)\n"
     "    else:\n        a[0] = 3\n        spawn(f, a, n - 1)\n",
     "'a' is a read-only input array; a task cannot write it", 5, 9),
    ("assign", "def f(a: list[int], n: int):\n    if n <= 0:\n        reduce(acc, 0)\n"
     "    else:\n        a = 3\n        spawn(f, a, n - 1)\n",
     "'a' is a read-only input array; it cannot be assigned", 5, 9),
    ("value", "def f(a: list[int], n: int):\n    if n <= 0:\n        reduce(acc, a)\n"
     "    else:\n        spawn(f, a, n - 1)\n",
     "'a' is an array parameter: index it", 3, 21),
    ("unbounded_private_list", "def f(a: list[int], n: int):\n    if n <= 0:\n"
     "        reduce(acc, 0)\n    else:\n        spawn(f, [1, 2], n - 1)\n",
     "cannot bound the length of the task-private list 'a'", 2, 8),
    ("private_bound_changes", "def f(a: list[int], n: int):\n    if len(a) == n:\n"
     "        reduce(acc, 0)\n    else:\n        spawn(f, a + [1], n - 1)\n",
     "bounded by 'n', which is neither a constant nor a parameter every spawn", 2, 18),
    ("private_written", "def f(a: list[int], n: int):\n    if len(a) == n:\n"
     "        reduce(acc, 0)\n    else:\n        a[0] = 1\n        spawn(f, a + [1], n)\n",
     "'a' is a list this function was given; it cannot write it", 5, 9),
    ("private_reassigned", "def f(a: list[int], n: int):\n    if len(a) == n:\n"
     "        reduce(acc, 0)\n    else:\n        a = a + [2]\n        spawn(f, a + [1], n)\n",
     "'a' is the list this task was given; build a new list for a child", 5, 9),
    ("step", "def f(a: list[int], n: int):\n    if n <= 0:\n        reduce(acc, 0)\n"
     "    else:\n        spawn(f, a[::2], n - 1)\n",
     "a slice with a step cannot be passed on", 5, 22),
    ("dims", "def f(a: list[int], n: int):\n    if n <= 0:\n        reduce(acc, a[0, 1])\n"
     "    else:\n        spawn(f, a, n - 1)\n",
     "array 'a' has 1 dimension(s) but is indexed with 2", 3, 21),
    ("bare_ndarray", "def f(a: np.ndarray, n: int):\n    if n <= 0:\n        reduce(acc, 0)\n"
     "    else:\n        spawn(f, a, n - 1)\n",
     "an array parameter needs its element type", 1, 10),
    ("helper_array", "def h(a: list[int]) -> int:\n    return a[0]\n\n"
     "def f(n: int):\n    if n <= 0:\n        reduce(acc, h(n))\n"
     "    else:\n        spawn(f, n - 1)\n",
     "only a task's parameters may be arrays so far", 1, 7),
]


@pytest.mark.parametrize("name, body, message, line, col", PY_REJECTIONS,
                         ids=[r[0] for r in PY_REJECTIONS])
def test_python_rejections(name: str, body: str, message: str, line: int, col: int,
                           tmp_path: Path) -> None:
    head = ("import numpy as np\nfrom revec import task, spawn, reduce, Reducer\n"
            "acc = Reducer(np.int64, 'sum')\n\n")
    body = body.replace("def f(", "@task\ndef f(")
    path = tmp_path / "bad.py"
    path.write_text(head + body)
    from revec.frontend import load_program
    with pytest.raises(RevecError) as info:
        load_program(path)
    err = info.value
    assert message in err.message, err.format()
    offset = head.count("\n") + (1 if body.startswith("@task") else 0)
    if name == "helper_array":
        offset = head.count("\n")
    assert err.loc is not None and (err.loc.line, err.loc.col) == (line + offset, col), \
        err.format()

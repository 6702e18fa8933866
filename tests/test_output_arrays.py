"""Output arrays (issue 33 item 5): arrays tasks write at elements no two tasks share,
handed back to the caller (Python ``out: Output[T]``, Cilk C ``long *out`` written
through and passed on as ``out`` / ``out + k``).

Published styles (a Cowichan-style per-row count writing ``count_per_line[row + 1]``
at the leaves over a 2-D input, a divide-and-conquer map ``out[lo] = a[lo] * a[lo]``)
run on every variant, the C, numba and NumPy back ends and 1 and 2 workers, against
NumPy (Python) and gcc's serial elision (C).  Generated programs
(tests/progen_outputs.py) are checked against the plain-Python run (Python) and gcc
(C).  Located errors, the checking mode, the command line and Dask complete it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from revec.api import run_program
from revec.errors import RevecError
from revec.frontend import load_program
from revec.transforms.kernel_plan import build_plan
from tests import cilk_oracle
from tests.progen_outputs import OutputProgram, output_program

VARIANTS = ("bfs", "blocked", "reexp")
BACKENDS = ("c", "numba", "numpy")
needs_gcc = pytest.mark.skipif(cilk_oracle.gcc() is None, reason="no C compiler")

MAP_PY = '''import numpy as np
from numpy.typing import NDArray
from revec import Output, spawn, task


@task
def square(a: NDArray[np.int64], out: Output[np.int64], lo: np.int64, hi: np.int64):
    if hi - lo <= 1:
        if hi > lo:
            out[lo] = a[lo] * a[lo]
    else:
        mid = (lo + hi) // 2
        spawn(square, a, out, lo, mid)
        spawn(square, a, out, mid, hi)
'''

ROWS_PY = '''import numpy as np
from numpy.typing import NDArray
from revec import Output, spawn, task


@task
def count_rows(matrix: NDArray[np.int32], count_per_line: Output[np.int64], ncols: int,
               begin: int, end: int):
    if end - begin == 1:
        count = 0
        for j in range(ncols):
            if matrix[begin, j] > 0:
                count += 1
        count_per_line[begin + 1] = count
    else:
        middle = begin + (end - begin) // 2
        spawn(count_rows, matrix, count_per_line, ncols, begin, middle)
        spawn(count_rows, matrix, count_per_line, ncols, middle, end)
'''

MAP_C = '''#include <stdio.h>
#include <cilk/cilk.h>

void square(const long *a, long *out, long lo, long hi) {
    if (hi - lo <= 1) {
        if (hi > lo)
            out[lo] = a[lo] * a[lo];
        return;
    }
    long mid = (lo + hi) / 2;
    cilk_spawn square(a, out, lo, mid);
    square(a, out, mid, hi);
    cilk_sync;
}

int main(void) {
    long a[23], out[23];
    for (int i = 0; i < 23; i++) { a[i] = 3 * i - 31; out[i] = -1; }
    square(a, out, 0, 23);
    for (int i = 0; i < 23; i++) printf("%ld\\n", out[i]);
    return 0;
}
'''

ROWS_C = '''#include <stdio.h>
#include <cilk/cilk.h>

void count_rows(const int *matrix, int ncols, long *count_per_line, int begin, int end) {
    if (end - begin == 1) {
        long count = 0;
        for (int j = 0; j < ncols; j++)
            if (matrix[begin * ncols + j] > 0)
                count++;
        *(count_per_line + begin + 1) = count;
    } else {
        int middle = begin + (end - begin) / 2;
        cilk_spawn count_rows(matrix, ncols, count_per_line, begin, middle);
        count_rows(matrix, ncols, count_per_line, middle, end);
        cilk_sync;
    }
}

int main(void) {
    static int matrix[11 * 7];
    long count_per_line[12];
    for (int i = 0; i < 11 * 7; i++) matrix[i] = (i * 37) % 11 - 5;
    for (int i = 0; i < 12; i++) count_per_line[i] = 0;
    count_rows(matrix, 7, count_per_line, 0, 11);
    for (int i = 0; i < 12; i++) printf("%ld\\n", count_per_line[i]);
    return 0;
}
'''


def _rows_matrix() -> np.ndarray:
    return ((np.arange(11 * 7) * 37) % 11 - 5).astype(np.int32).reshape(11, 7)


def _every_run(path: Path, task: str, args: tuple, backend: str, out_pos: int,
               expected: np.ndarray) -> None:
    """Every variant and 1 and 2 workers on ``backend``: the caller's array filled in
    place, and the same values in RunResult.outputs."""
    runs = [("seq", 1)] + [(v, w) for v in VARIANTS for w in (1, 2)]
    for variant, workers in runs:
        out = np.array(args[out_pos], copy=True)
        call = args[:out_pos] + (out,) + args[out_pos + 1:]
        got = run_program(path, task, call, variant=variant, workers=workers,
                          block_size=2, **({} if variant == "seq" else {"backend": backend}))
        assert np.array_equal(out, expected), (backend, variant, workers, out, expected)
        (name,) = got.outputs
        assert np.array_equal(got.outputs[name], expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_published_python_map(backend: str, tmp_path: Path) -> None:
    path = tmp_path / "map.py"
    path.write_text(MAP_PY)
    a = np.arange(23, dtype=np.int64) * 3 - 31
    _every_run(path, "square", (a, np.full(23, -1, np.int64), 0, 23), backend, 1, a * a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_published_python_cowichan_rows(backend: str, tmp_path: Path) -> None:
    path = tmp_path / "rows.py"
    path.write_text(ROWS_PY)
    m = _rows_matrix()
    expected = np.concatenate([[0], (m > 0).sum(1)]).astype(np.int64)
    _every_run(path, "count_rows", (m, np.zeros(12, np.int64), 7, 0, 11), backend, 1,
               expected)


@needs_gcc
@pytest.mark.parametrize("backend", BACKENDS)
def test_published_c_map(backend: str, tmp_path: Path) -> None:
    path = tmp_path / "map.c"
    path.write_text(MAP_C)
    oracle = np.array(cilk_oracle.run(cilk_oracle.build([path], tmp_path / "elision")),
                      np.int64)
    a = np.arange(23, dtype=np.int64) * 3 - 31
    assert np.array_equal(oracle, a * a)
    _every_run(path, "square", (a, np.full(23, -1, np.int64), 0, 23), backend, 1, oracle)


@needs_gcc
@pytest.mark.parametrize("backend", BACKENDS)
def test_published_c_cowichan_rows(backend: str, tmp_path: Path) -> None:
    path = tmp_path / "rows.c"
    path.write_text(ROWS_C)
    oracle = np.array(cilk_oracle.run(cilk_oracle.build([path], tmp_path / "elision")),
                      np.int64)
    m = _rows_matrix()
    assert np.array_equal(oracle[1:], (m > 0).sum(1))
    _every_run(path, "count_rows", (m.ravel(), 7, np.zeros(12, np.int64), 0, 11), backend,
               2, oracle)


# ---------------------------------------------------------------- generated programs
SEEDS = range(30)


def _backend(seed: int) -> str:
    return BACKENDS[seed % 3]


def _fresh(p: OutputProgram) -> tuple:
    """The root call's arguments with a fresh copy of the output's initial values."""
    args = list(p.args)
    args[p.out_index] = np.array(args[p.out_index], copy=True)
    return tuple(args)


def _runs(p: OutputProgram, path: Path, expected: np.ndarray, backend: str) -> None:
    for variant in VARIANTS:
        for workers in (1, 2):
            got = run_program(path, "f", _fresh(p), variant=variant, backend=backend,
                              workers=workers, block_size=(1, 2, 4, 4096)[p.seed % 4])
            assert np.array_equal(got.outputs["out"], expected), (
                p.python if path.suffix == ".py" else p.c, backend, variant, workers,
                got.outputs["out"], expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_python(seed: int, tmp_path: Path) -> None:
    p = output_program(seed)
    path = tmp_path / "prog.py"
    path.write_text(p.python)
    args = _fresh(p)
    ref = run_program(path, "f", args, variant="seq").outputs["out"]
    assert np.array_equal(args[p.out_index], ref), "the caller's array is filled in place"
    _runs(p, path, ref, _backend(seed))


@needs_gcc
@pytest.mark.parametrize("seed", SEEDS)
def test_generated_c(seed: int, tmp_path: Path) -> None:
    p = output_program(seed)
    path = tmp_path / "prog.c"
    path.write_text(p.c)
    expected = np.array(cilk_oracle.run(cilk_oracle.build([path], tmp_path / "elision")),
                        p.args[p.out_index].dtype)
    ref = run_program(path, "f", _fresh(p), variant="seq").outputs["out"]
    assert np.array_equal(ref, expected), (p.c, ref, expected)
    _runs(p, path, expected, _backend(seed + 1))


def test_generator_covers_its_shapes() -> None:
    progs = [output_program(s) for s in SEEDS]
    assert {p.shape for p in progs} == {"range", "view"}
    assert any("out[m" in p.python for p in progs), "no inductive-case write"
    assert any("% " in p.python.split("else:")[1] for p in progs), "no gated spawn"
    assert any("&out[" in p.c for p in progs) and any("out + " in p.c for p in progs)


# ---------------------------------------------------------------- handing back
def test_list_argument_and_caller_array(tmp_path: Path) -> None:
    path = tmp_path / "map.py"
    path.write_text(MAP_PY)
    a = list(range(6))
    out = [7] * 8  # two elements no task writes keep their values
    got = run_program(path, "square", (a, out, 0, 6), backend="numpy")
    assert out == [7] * 8  # a list is not changed: the values are in RunResult.outputs
    assert got.outputs["out"].tolist() == [0, 1, 4, 9, 16, 25, 7, 7]
    arr = np.full(8, 7, np.int64)
    run_program(path, "square", (a, arr, 0, 6), backend="numpy")
    assert arr.tolist() == [0, 1, 4, 9, 16, 25, 7, 7]
    # a second run of the same shapes starts again from the caller's values
    arr2 = np.zeros(8, np.int64)
    run_program(path, "square", (a, arr2, 2, 4), backend="numpy")
    assert arr2.tolist() == [0, 0, 4, 9, 0, 0, 0, 0]
    assert "outputs" in got.to_json() and got.to_json()["outputs"]["out"]["sum"] == 69


@pytest.mark.parametrize("backend", BACKENDS)
def test_store_out_of_range_is_an_error(backend: str, tmp_path: Path) -> None:
    path = tmp_path / "map.py"
    path.write_text(MAP_PY)
    with pytest.raises(RevecError, match="outside its shape"):
        run_program(path, "square", (list(range(6)), np.zeros(4, np.int64), 0, 6),
                    backend=backend)


def test_the_plan_says_which_steps_write(tmp_path: Path) -> None:
    path = tmp_path / "map.py"
    path.write_text(MAP_PY)
    plan = build_plan(load_program(path), "square")
    assert plan.writes == ("in_square_out",)
    assert "writes (output stores, thread by thread): in_square_out" in plan.render()
    assert [s.kind for s in plan.steps if s.writes] == ["base"]


def test_command_line_output_files(tmp_path: Path) -> None:
    path = tmp_path / "map.py"
    path.write_text(MAP_PY)
    np.save(tmp_path / "a.npy", np.arange(5, dtype=np.int64))
    (tmp_path / "out.txt").write_text("0\n0\n0\n0\n0\n")
    for target in ("res.npy", "res.txt"):
        proc = subprocess.run(
            [sys.executable, "-m", "revec", "run", str(path), "square",
             str(tmp_path / "a.npy"), str(tmp_path / "out.txt"), "0", "5",
             "--backend", "numpy", "--output", f"out={tmp_path / target}",
             "--check-outputs"], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "output out: int64 (5,)" in proc.stdout
        assert "checked by the sequential reference" in proc.stdout
    assert np.load(tmp_path / "res.npy").tolist() == [0, 1, 4, 9, 16]
    assert (tmp_path / "res.txt").read_text().split() == ["0", "1", "4", "9", "16"]
    helptext = subprocess.run([sys.executable, "-m", "revec", "run", "--help"],
                              capture_output=True, text=True, timeout=300).stdout
    assert "--output NAME=FILE" in helptext and "--check-outputs" in helptext
    bad = subprocess.run([sys.executable, "-m", "revec", "run", str(path), "square",
                          str(tmp_path / "a.npy"), str(tmp_path / "out.txt"), "0", "5",
                          "--output", "a=x.npy"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "not an output array" in bad.stderr


# ---------------------------------------------------------------- the checking mode
CLASH_PY = '''import numpy as np
from revec import Output, spawn, task


@task
def half(out: Output[np.int64], lo: int, hi: int):
    if hi - lo <= 1:
        out[lo // 2] = lo
    else:
        mid = (lo + hi) // 2
        spawn(half, out, lo, mid)
        spawn(half, out, mid, hi)
'''

CLASH_C = '''void half(long *out, int lo, int hi) {
    if (hi - lo <= 1) {
        out[lo / 2] = lo;
        return;
    }
    int mid = (lo + hi) / 2;
    cilk_spawn half(out, lo, mid);
    half(out, mid, hi);
    cilk_sync;
}
'''


@pytest.mark.parametrize("suffix", [".py", ".c"])
def test_check_mode_names_both_tasks(suffix: str, tmp_path: Path) -> None:
    path = tmp_path / f"clash{suffix}"
    path.write_text(CLASH_PY if suffix == ".py" else CLASH_C)
    with pytest.raises(RevecError) as err:
        run_program(path, "half", (np.zeros(8, np.int64), 0, 8), check_outputs=True)
    msg = str(err.value)
    assert "two tasks write out[0]" in msg, msg
    assert "half(" in msg and "lo=0, hi=1" in msg and "lo=1, hi=2" in msg, msg
    # without the check the run completes (the compiled runs do not check)
    run_program(path, "half", (np.zeros(8, np.int64), 0, 8), backend="numpy")
    # a program whose tasks write different elements passes the check
    ok = tmp_path / "map.py"
    ok.write_text(MAP_PY)
    got = run_program(ok, "square", (list(range(4)), np.zeros(4, np.int64), 0, 4),
                      backend="numpy", check_outputs=True)
    assert got.outputs_checked == "the sequential reference"


def test_check_mode_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "clash.py"
    path.write_text(CLASH_PY)
    (tmp_path / "out.txt").write_text("0\n" * 8)
    proc = subprocess.run([sys.executable, "-m", "revec", "run", str(path), "half",
                           str(tmp_path / "out.txt"), "0", "8", "--check-outputs"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "two tasks write out[0]" in proc.stderr, proc.stderr


# ---------------------------------------------------------------- located errors
def _error(tmp_path: Path, name: str, text: str) -> RevecError:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(RevecError) as err:
        load_program(path)
    assert err.value.loc is not None, err.value.message
    return err.value


PY_HEAD = '''import numpy as np
from numpy.typing import NDArray
from revec import Output, spawn, task


'''


@pytest.mark.parametrize("body, message, line", [
    ("    if hi - lo <= 1:\n        out[lo] = out[lo] + 1\n    else:\n"
     "        spawn(f, out, lo, hi - 1)\n", "reads the output array 'out'", 2),
    ("    if hi - lo <= 1:\n        out[lo] += 1\n    else:\n"
     "        spawn(f, out, lo, hi - 1)\n", "'out' is an output array", 2),
    ("    if hi - lo <= 1:\n        out[lo] = 1\n    else:\n"
     "        spawn(f, out[::2], lo, hi - 1)\n", "a slice with a step", 4),
    ("    if hi - lo <= 1:\n        out[lo] = 1\n    else:\n"
     "        spawn(f, out[1], lo, hi - 1)\n", "argument 1 of f is the array parameter", 4),
    ("    k = lo * 2\n    out[lo] = k\n    if hi - lo <= 1:\n        out[lo] = 1\n    else:\n"
     "        spawn(f, out, lo, hi - 1)\n", "before the is-base test", 2),
    ("    if hi - lo <= 1:\n        out[lo] = helper(out)\n    else:\n"
     "        spawn(f, out, lo, hi - 1)\n", "it cannot be read, passed to a helper", 2),
])
def test_python_located_errors(body: str, message: str, line: int, tmp_path: Path) -> None:
    """``line``: the line of the error in the task's body (1: its first line)."""
    text = (PY_HEAD + "def helper(x):\n    return 1\n\n\n@task\n"
            "def f(out: Output[np.int64], lo: int, hi: int):\n" + body)
    err = _error(tmp_path, "bad.py", text)
    assert message in err.message, err.message
    assert err.loc is not None and err.loc.line == line + 11, (err.loc, err.message)


@pytest.mark.parametrize("text, message", [
    ("void f(long *out, int lo, int hi) {\n  if (hi - lo <= 1) { out[lo] = out[lo] + 1; "
     "return; }\n  cilk_spawn f(out, lo, hi - 1);\n  cilk_sync;\n}\n",
     "reads the output array 'out'"),
    ("void f(long *out, int lo, int hi) {\n  if (hi - lo <= 1) { out[lo] += 2; return; }\n"
     "  cilk_spawn f(out, lo, hi - 1);\n  cilk_sync;\n}\n", "reads it"),
    ("void f(long *out, int lo, int hi) {\n  if (hi - lo <= 1) { out[lo] = 1; return; }\n"
     "  cilk_spawn f(out * 2, lo, hi - 1);\n  cilk_sync;\n}\n",
     "argument 1 of 'f' is the array parameter 'out'"),
    ("void g(long *o, int i) { o[i] = 1; }\n"
     "void f(long *out, int lo, int hi) {\n  if (hi - lo <= 1) { g(out, lo); return; }\n"
     "  cilk_spawn f(out, lo, hi - 1);\n  cilk_sync;\n}\n",
     "helper 'g' writes through its pointer parameter 'o'"),
    ("void f(const long *out, int lo, int hi) {\n  if (hi - lo <= 1) { out[lo] = 1; return; }\n"
     "  cilk_spawn f(out, lo, hi - 1);\n  cilk_sync;\n}\n",
     "writes the array parameter 'out'; array parameters are read-only"),
])
def test_c_located_errors(text: str, message: str, tmp_path: Path) -> None:
    err = _error(tmp_path, "bad.c", "#include <cilk/cilk.h>\n" + text)
    assert message in err.message, err.message


def test_c_address_of_a_local_is_not_an_output(tmp_path: Path) -> None:
    """``f(n - 1, &x)``: the out-parameter pattern (revec/frontend/c/outparams.py),
    not an output."""
    text = ("void f(int n, long *res) {\n  if (n < 2) { *res = n; return; }\n  long x;\n"
            "  cilk_spawn f(n - 1, &x);\n  cilk_sync;\n  *res = x;\n}\n")
    path = tmp_path / "outparam.c"
    path.write_text(text)
    program = load_program(path)
    assert not program.outputs and not program.tasks["f"].arrays
    assert run_program(path, "f", (5,), variant="seq").result == 1


# ---------------------------------------------------------------- Dask
def test_dask_chunks_merge_their_outputs(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    from revec.cluster import run_dask

    path = tmp_path / "map.py"
    path.write_text(MAP_PY)
    n = 3000  # a frontier of 4 chunks x 256 threads (revec.cluster.THREADS_PER_CHUNK)
    a = np.arange(n, dtype=np.int64) - 100
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client:
        out = np.full(n + 2, 5, np.int64)
        got = run_dask(path, "square", (a, out, 0, n), client=client, chunks=4, workers=1)
    expected = np.concatenate([a * a, [5, 5]])
    assert np.array_equal(got.outputs["out"], expected)
    assert np.array_equal(out, expected)
    assert len(got.stats.per_worker) > 1, "the tree was not cut into chunks"


# ---------------------------------------------------------------- with the other features
# (output arrays next to out-parameters, arrays of structs, file-scope pointers and
# task-private boards / lists, in one task)
MIXED_C = '''#include <cilk/cilk.h>

struct item { long w; long v; };
static long *scale;  /* main fills it */

void walk(const struct item *e, long *out, long lo, long hi, long *res) {
    if (hi - lo <= 1) {
        long r = 0;
        if (hi > lo) {
            r = e[lo].w * scale[0] + (e + lo)->v;
            out[lo] = r;
        }
        *res = r;
        return;
    }
    long mid = (lo + hi) / 2;
    long x, y;
    cilk_spawn walk(e, out, lo, mid, &x);
    walk(e, out, mid, hi, &y);
    cilk_sync;
    *res = x + y;
}
'''

BOARD_C = '''#include <string.h>
#include <cilk/cilk.h>

void gen(int n, int j, long idx, char *b, long *out) {
    if (j == n) {
        long v = 0, w = 1;
        for (int k = 0; k < n; k++) {
            v += b[k] * w;
            w *= 2;
        }
        out[idx] = v;
        return;
    }
    char c[12];
    memcpy(c, b, j * sizeof(char));
    c[j] = 0;
    cilk_spawn gen(n, j + 1, 2 * idx, c, out);
    char d[12];
    memcpy(d, b, j * sizeof(char));
    d[j] = 1;
    gen(n, j + 1, 2 * idx + 1, d, out + 0);
    cilk_sync;
}
'''

BOARD_PY = '''import numpy as np
from revec import Output, spawn, task


@task
def gen(b: list[int], n: int, idx: int, out: Output[np.int64]):
    if len(b) == n:
        v = 0
        w = 1
        for k in range(n):
            v += b[k] * w
            w *= 2
        out[idx] = v
    else:
        spawn(gen, b + [0], n, 2 * idx, out)
        spawn(gen, b + [1], n, 2 * idx + 1, out)
'''


def _bit_reversed(n: int) -> np.ndarray:
    return np.array([int(format(i, f"0{n}b")[::-1], 2) for i in range(1 << n)], np.int64)


@needs_gcc
@pytest.mark.parametrize("backend", ("c", "numba"))
def test_c_output_with_out_parameter_structs_and_file_scope_pointer(backend: str,
                                                                     tmp_path: Path) -> None:
    """``res`` (children get ``&x``) is the out-parameter, ``out`` (children get
    ``out``) the output, ``e`` an array of structs, ``scale`` a file-scope input."""
    path = tmp_path / "mixed.c"
    path.write_text(MIXED_C)
    program = load_program(path)
    t = program.tasks["walk"]
    assert [ap.name for ap in t.arrays if ap.output] == ["out"]
    assert [ap.name for ap in t.arrays if ap.fields] == ["e"]
    assert [p.name for p in t.user_params] == ["lo", "hi"]
    n = 37
    items = {"w": np.arange(n, dtype=np.int64) % 7, "v": np.arange(n, dtype=np.int64) * 3}
    expected = items["w"] * 4 + items["v"]
    for variant, workers in [("seq", 1)] + [(v, w) for v in VARIANTS for w in (1, 2)]:
        out = np.full(n + 1, -1, np.int64)
        got = run_program(path, "walk", (items, out, 0, n), variant=variant,
                          workers=workers, block_size=2, inputs={"scale": [4]},
                          **({} if variant == "seq" else {"backend": backend}))
        assert np.array_equal(out[:n], expected) and out[n] == -1, (variant, out)
        assert np.array_equal(got.outputs["out"], out)
        assert got.result == expected.sum(), (variant, got.result)


@needs_gcc
@pytest.mark.parametrize("backend", ("c", "numba"))
def test_c_output_with_a_board(backend: str, tmp_path: Path) -> None:
    """``b`` (children get local arrays) is a task-private board, ``out`` (children
    get ``out``, ``out + 0``) the output."""
    path = tmp_path / "board.c"
    path.write_text(BOARD_C)
    program = load_program(path)
    t = program.tasks["gen"]
    assert [pa.name for pa in t.private] == ["b"]
    assert [ap.name for ap in t.arrays if ap.output] == ["out"]
    n = 6
    _every_run(path, "gen", (n, 0, 0, np.zeros(0, np.int8), np.zeros(1 << n, np.int64)),
               backend, 4, _bit_reversed(n))


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_output_with_a_private_list(backend: str, tmp_path: Path) -> None:
    path = tmp_path / "board.py"
    path.write_text(BOARD_PY)
    n = 5
    _every_run(path, "gen", ([], n, 0, np.zeros(1 << n, np.int64)), backend, 3,
               _bit_reversed(n))


@needs_gcc
def test_c_output_and_boards_checked_and_on_the_command_line(tmp_path: Path) -> None:
    """--check-outputs and --output with a board, and a file-scope --input beside an
    output."""
    path = tmp_path / "mixed.c"
    path.write_text(MIXED_C)
    items = tmp_path / "items.txt"
    items.write_text("".join(f"{i % 5} {i}\n" for i in range(9)))
    out = tmp_path / "out.txt"
    out.write_text("0\n" * 9)
    scale = tmp_path / "scale.txt"
    scale.write_text("2\n")
    res = tmp_path / "res.npy"
    proc = subprocess.run([sys.executable, "-m", "revec", "run", str(path), "walk",
                           str(items), str(out), "0", "9", "--input", f"scale={scale}",
                           "--output", f"out={res}", "--check-outputs", "--backend", "c"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(np.load(res), np.arange(9) % 5 * 2 + np.arange(9))
    proc = subprocess.run([sys.executable, "-m", "revec", "check", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "task walk(e: {w: int64, v: int64}[], out: int64[] (output), lo: int64, " \
        "hi: int64) -> int64" in proc.stdout, proc.stdout
    assert "input scale: int64[]" in proc.stdout
    bpath = tmp_path / "board.c"
    bpath.write_text(BOARD_C)
    got = run_program(bpath, "gen", (4, 0, 0, [], np.zeros(16, np.int64)), backend="c",
                      check_outputs=True)
    assert got.outputs_checked and np.array_equal(got.outputs["out"], _bit_reversed(4))


@needs_gcc
def test_dask_chunks_with_a_board_merge_their_outputs(tmp_path: Path) -> None:
    """The chunks bind the root's board and the output's initial values."""
    distributed = pytest.importorskip("distributed")
    from revec.cluster import run_dask

    path = tmp_path / "board.c"
    path.write_text(BOARD_C)
    n = 11
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client:
        out = np.full((1 << n) + 1, 7, np.int64)
        got = run_dask(path, "gen", (n, 0, 0, [], out), client=client, chunks=4, workers=1)
    expected = np.concatenate([_bit_reversed(n), [7]])
    assert np.array_equal(got.outputs["out"], expected)
    assert np.array_equal(out, expected)
    assert len(got.stats.per_worker) > 1, "the tree was not cut into chunks"

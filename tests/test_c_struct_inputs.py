"""Cilk C arrays of structs read as structure-of-arrays, and file-scope pointers that
``main`` fills (issue 33 item 1, C).

A task parameter ``struct item *e`` (``const struct item *e``, ``item_t e[]``) is one
read-only input per field sharing one offset field (``e->value``, ``e[i].weight``,
``(*e).value``, ``(e + k)->value``; a child gets ``e + 1``, ``e + k``, ``&e[k]``); a
file-scope ``static int *matrix;`` is an input of the program the caller supplies
(``inputs={"matrix": array}``, ``--input matrix=FILE``).  The programs here keep their
own ``main`` (revec does not read it), which reads the data from stdin: gcc's serial
elision of the same file, fed the same data, is the oracle.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import revec
from revec.api import run_program
from revec.errors import RevecError
from tests import cilk_oracle
from tests.progen_arrays import StructProgram, struct_program
from tests.rejections import assert_located_rejection, where

VARIANTS = ("bfs", "blocked", "reexp")
BACKENDS = ("c", "numba", "numpy")
needs_gcc = pytest.mark.skipif(cilk_oracle.gcc() is None,
                               reason="no C compiler for the serial elision")

# --------------------------------------------------------------------------- published styles
# MIT Cilk-5's knapsack (examples/knapsack.cilk), in its spelling, without the global
# bound it prunes with: items are structs, a child gets the rest of the array.
KNAPSACK_C = """\
#include <stdio.h>
#include <stdlib.h>

struct item {
    int value;
    int weight;
};

cilk int knapsack(struct item *e, int c, int n, int v)
{
    int with, without;

    /* base case: full knapsack or no items */
    if (c < 0)
        return -1;
    if (n == 0 || c == 0)
        return v;

    without = spawn knapsack(e + 1, c, n - 1, v);
    with = spawn knapsack(e + 1, c - e->weight, n - 1, v + e->value);
    sync;

    return with > without ? with : without;
}

cilk int main(int argc, char *argv[])
{
    int n, capacity, i;
    struct item *items;
    if (scanf("%d %d", &n, &capacity) != 2) return 1;
    items = malloc(n * sizeof(struct item));
    for (i = 0; i < n; i++)
        if (scanf("%d %d", &items[i].value, &items[i].weight) != 2) return 1;
    printf("%d\\n", knapsack(items, capacity, n, 0));
    return 0;
}
"""

# Cowichan-style (the "thresh" kernel's counting half): how many matrix elements exceed
# a threshold, by halving the rows; the matrix is a file-scope pointer main allocates.
COWICHAN_C = """\
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

static int *matrix;

static int above(int r, int c, int ncols, int t) {
    return matrix[r * ncols + c] > t;
}

long count(int nrows, int ncols, int lo, int hi, int t) {
    if (hi - lo == 1) {
        long n = 0;
        for (int c = 0; c < ncols; c++)
            n += above(lo, c, ncols, t);
        return n;
    }
    if (hi <= lo || hi > nrows) return 0;
    int mid = lo + (hi - lo) / 2;
    long a = cilk_spawn count(nrows, ncols, lo, mid, t);
    long b = count(nrows, ncols, mid, hi, t);
    cilk_sync;
    return a + b;
}

long row_max(int ncols, int r, int c) {
    if (c == ncols - 1) return matrix[r * ncols + c];
    long rest = cilk_spawn row_max(ncols, r, c + 1);
    cilk_sync;
    return *(matrix + r * ncols + c) > rest ? *(matrix + r * ncols + c) : rest;
}

int main(void) {
    int nrows, ncols, t;
    if (scanf("%d %d %d", &nrows, &ncols, &t) != 3) return 1;
    matrix = malloc(sizeof(int) * nrows * ncols);
    for (int i = 0; i < nrows * ncols; i++)
        if (scanf("%d", &matrix[i]) != 1) return 1;
    printf("%ld %ld\\n", count(nrows, ncols, 0, nrows, t), row_max(ncols, nrows - 1, 0));
    return 0;
}
"""

ITEMS = np.array([(60, 10), (100, 20), (120, 30), (30, 5), (45, 9), (80, 16), (25, 4),
                  (70, 13), (18, 3), (95, 21), (40, 7), (33, 6), (52, 11), (66, 12)],
                 dtype=[("value", np.int32), ("weight", np.int32)])
CAPACITY = 50


def _elision(source: str, folder: Path, stdin: str, cilk5: bool = False) -> list[str]:
    prog = folder / "elision.c"
    prog.write_text(source)
    exe = cilk_oracle.build([prog], folder / "elision", cilk5=cilk5)
    proc = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def _items_text(items: np.ndarray) -> str:
    return "".join(f"{v} {w}\n" for v, w in zip(items["value"], items["weight"]))


def _matrix(nrows: int, ncols: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out: np.ndarray = rng.integers(-50, 100, nrows * ncols).astype(np.int32)
    return out


@needs_gcc
def test_knapsack_against_the_serial_elision(tmp_path: Path) -> None:
    path = tmp_path / "knapsack.c"
    path.write_text(KNAPSACK_C)
    for n in (0, 1, 5, len(ITEMS)):
        items = ITEMS[:n]
        stdin = f"{n} {CAPACITY}\n{_items_text(items)}"
        expected = int(_elision(KNAPSACK_C, tmp_path, stdin, cilk5=True)[0])
        assert run_program(path, "knapsack", (items, CAPACITY, n, 0),
                           variant="seq").result == expected
        got = run_program(path, "knapsack", (items, CAPACITY, n, 0), backend="c",
                          block_size=4)
        assert got.result == expected, (n, got.result, expected)
    assert expected == 284  # 14 items: the serial elision's answer; by brute force too:
    best = max(sum(int(ITEMS["value"][i]) for i in range(14) if m >> i & 1)
               for m in range(1 << 14)
               if sum(int(ITEMS["weight"][i]) for i in range(14) if m >> i & 1) <= CAPACITY)
    assert best == expected


@needs_gcc
def test_cowichan_count_against_the_serial_elision(tmp_path: Path) -> None:
    path = tmp_path / "thresh.c"
    path.write_text(COWICHAN_C)
    for nrows, ncols, t, seed in ((1, 1, 0, 1), (5, 7, 20, 2), (16, 9, 60, 3)):
        m = _matrix(nrows, ncols, seed)
        stdin = f"{nrows} {ncols} {t}\n" + " ".join(map(str, m)) + "\n"
        count, row_max = map(int, _elision(COWICHAN_C, tmp_path, stdin))
        assert count == int((m > t).sum())
        for variant, backend in (("seq", "auto"), ("reexp", "c"), ("blocked", "numba")):
            got = run_program(path, "count", (nrows, ncols, 0, nrows, t), variant=variant,
                              backend=backend, inputs={"matrix": m})
            assert got.result == count
            got = run_program(path, "row_max", (ncols, nrows - 1, 0), variant=variant,
                              backend=backend, inputs={"matrix": m})
            assert got.result == row_max


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_variant_and_worker_count(backend: str, tmp_path: Path) -> None:
    """One case of each program on every variant, back end and 1 or 2 workers."""
    knap, cow = tmp_path / "knapsack.c", tmp_path / "thresh.c"
    knap.write_text(KNAPSACK_C)
    cow.write_text(COWICHAN_C)
    items = ITEMS[:10]
    m = _matrix(8, 5, 7)
    want_knap = run_program(knap, "knapsack", (items, 30, 10, 0), variant="seq").result
    assert want_knap == 173  # by brute force over the 2^10 subsets
    want_count = int((m > 10).sum())
    for variant in VARIANTS:
        for workers in (1, 2):
            got = run_program(knap, "knapsack", (items, 30, 10, 0), variant=variant,
                              backend=backend, workers=workers, block_size=8)
            assert got.result == want_knap, (variant, workers)
            got = run_program(cow, "count", (8, 5, 0, 8, 10), variant=variant,
                              backend=backend, workers=workers, block_size=2,
                              inputs={"matrix": m})
            assert got.result == want_count, (variant, workers)


# --------------------------------------------------------------------------- every spelling
SPELLINGS_C = """\
#include <cilk/cilk.h>
#include <stdint.h>

typedef struct {
    int64_t id;
    double price;
    unsigned char qty;
    short delta;
} row_t;

struct point { long x; long y; };
typedef struct point point_t;

static const struct point *anchor;

/* sum of (qty * price + delta) over rows, halving with &e[k] and e + k */
double total(const row_t *e, int n) {
    if (n == 1) return e->qty * e[0].price + (*e).delta;
    int h = n / 2;
    double a = cilk_spawn total(e, h);
    double b = total(&e[h], n - h);
    cilk_sync;
    return a + b;
}

/* the largest Manhattan distance from *anchor over points[lo, hi), passing p + 1 */
long far(point_t p[], int n) {
    if (n == 0) return 0;
    long dx = (p + 0)->x - anchor->x, dy = p[0].y - anchor[0].y;
    if (dx < 0) dx = -dx;
    if (dy < 0) dy = -dy;
    long rest = cilk_spawn far(p + 1, n - 1);
    cilk_sync;
    return dx + dy > rest ? dx + dy : rest;
}

/* ids at even positions, reading (e + i)->id and (*(e + i)).id */
long ids(row_t *e, int n, int k) {
    if (n <= k) {
        long s = 0;
        for (int i = 0; i < n; i += 2) s += (e + i)->id - (*(e + i)).id / 2;
        return s;
    }
    long a = cilk_spawn ids(e, k, k);
    long b = cilk_spawn ids(e + k, n - k, k);
    cilk_sync;
    return a + b;
}
"""


def test_every_spelling(tmp_path: Path) -> None:
    path = tmp_path / "spellings.c"
    path.write_text(SPELLINGS_C)
    rows = np.zeros(7, dtype=[("delta", np.int16), ("price", np.float64), ("qty", np.uint8),
                              ("id", np.int64), ("note", "U4")])
    rows["qty"] = [3, 0, 7, 1, 255, 2, 9]
    rows["price"] = [1.25, 99.0, 0.5, -2.0, 0.75, 10.0, 0.125]
    rows["delta"] = [-1, 5, 0, 300, -20, 2, 7]
    rows["id"] = [10, 11, 12, 13, 2 ** 40, 15, 16]
    want_total = float(sum(int(q) * p + int(d) for q, p, d in
                           zip(rows["qty"], rows["price"], rows["delta"])))
    want_ids = sum(int(i) - int(i) // 2 for i in rows["id"][::2])
    pts = {"x": [0, 5, -7, 3], "y": [1, -9, 2, 4]}
    anchor = np.array([(1, 1)], dtype=[("x", np.int64), ("y", np.int64)])
    want_far = max(abs(x - 1) + abs(y - 1) for x, y in zip(pts["x"], pts["y"]))
    prog = revec.load(path)
    assert prog.tasks == ["far", "ids", "total"]
    for variant in ("seq", *VARIANTS):
        for backend in (("auto",) if variant == "seq" else BACKENDS):
            opts: dict[str, Any] = {"variant": variant, "backend": backend}
            assert prog.total.run(rows, 7, **opts).result == want_total
            assert prog.ids.run(rows, 7, 2, **opts).result == want_ids
            assert prog.far.run(pts, 4, inputs={"anchor": anchor}, **opts).result == want_far


# --------------------------------------------------------------------------- the root call
def test_struct_arguments(tmp_path: Path) -> None:
    path = tmp_path / "knapsack.c"
    path.write_text(KNAPSACK_C)
    items = ITEMS[:6]
    want = run_program(path, "knapsack", (items, 40, 6, 0), variant="seq").result
    as_dict = {"weight": list(items["weight"]), "value": items["value"].astype(np.int64)}
    reordered = np.zeros(6, dtype=[("weight", np.int8), ("extra", np.float32),
                                   ("value", np.uint16)])
    reordered["weight"], reordered["value"] = items["weight"], items["value"]
    for value in (as_dict, reordered, np.rec.fromarrays([items["value"], items["weight"]],
                                                        names="value,weight")):
        assert run_program(path, "knapsack", (value, 40, 6, 0), variant="seq").result == want
        assert run_program(path, "knapsack", (value, 40, 6, 0), backend="numpy").result == want


@pytest.mark.parametrize("value, message", [
    ({"value": [1, 2]}, "no field 'weight' (the struct's fields: value, weight; got: value)"),
    ({"value": [1, 2], "weight": [3]}, "the fields have different lengths"),
    ({"value": [1, 2 ** 40], "weight": [1, 2]}, "argument 'e', field 'value': the elements "
     "are int32"),
    ({"value": [1.5], "weight": [1]}, "non-integer values"),
    (np.array([1, 2, 3]), "an array of structs is a NumPy structured array"),
    (np.zeros((2, 2), dtype=[("value", "i4"), ("weight", "i4")]), "expected a 1-D"),
])
def test_bad_struct_arguments(value: Any, message: str, tmp_path: Path) -> None:
    path = tmp_path / "knapsack.c"
    path.write_text(KNAPSACK_C)
    with pytest.raises(RevecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_program(path, "knapsack", (value, 10, 1, 0), variant="seq")


def test_file_scope_inputs_are_named(tmp_path: Path) -> None:
    path = tmp_path / "thresh.c"
    path.write_text(COWICHAN_C)
    m = _matrix(2, 2, 0)
    with pytest.raises(RevecError, match="reads the file-scope pointer 'matrix', which the "
                       r"caller supplies: pass inputs=\{'matrix': array\}"):
        run_program(path, "count", (2, 2, 0, 2, 0), variant="seq")
    with pytest.raises(RevecError, match="'matirx' is not a file-scope input .* matrix"):
        run_program(path, "count", (2, 2, 0, 2, 0), variant="seq",
                    inputs={"matrix": m, "matirx": m})
    with pytest.raises(RevecError, match="input 'matrix': expected a 1-D array"):
        run_program(path, "count", (2, 2, 0, 2, 0), variant="seq",
                    inputs={"matrix": m.reshape(2, 2)})
    with pytest.raises(RevecError, match="input 'matrix': the elements are int32"):
        run_program(path, "count", (2, 2, 0, 2, 0), variant="seq",
                    inputs={"matrix": [1, 2, 3, 2 ** 33]})


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "revec", "run", *argv], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_command_line_struct_files_and_inputs(tmp_path: Path) -> None:
    knap, cow = tmp_path / "knapsack.c", tmp_path / "thresh.c"
    knap.write_text(KNAPSACK_C)
    cow.write_text(COWICHAN_C)
    items = ITEMS[:8]
    want = run_program(knap, "knapsack", (items, 35, 8, 0), variant="seq").result
    swapped = np.zeros(len(items), dtype=[("weight", np.int64), ("value", np.int16)])
    swapped["weight"], swapped["value"] = items["weight"], items["value"]
    np.save(tmp_path / "items.npy", swapped)
    (tmp_path / "items.txt").write_text("# value weight\n" + _items_text(items))
    for name in ("items.npy", "items.txt"):
        out = _cli(str(knap), "knapsack", name, "35", "8", "0", "--variant", "bfs",
                   "--backend", "numpy", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert f"result = {want}" in out.stdout
    (tmp_path / "bad.txt").write_text("1 2\n3\n")
    bad = _cli(str(knap), "knapsack", "bad.txt", "35", "2", "0", "--variant", "seq",
               cwd=tmp_path)
    assert bad.returncode == 2 and "row 2 of 'bad.txt' has 1 column(s)" in bad.stderr
    assert "Traceback" not in bad.stderr
    m = _matrix(4, 3, 5)
    np.save(tmp_path / "m.npy", m)
    (tmp_path / "m.txt").write_text("\n".join(map(str, m)) + "\n")  # one number a line
    for name in ("m.npy", "m.txt"):
        out = _cli(str(cow), "count", "4", "3", "0", "4", "9", "--input", f"matrix={name}",
                   "--backend", "c", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert f"result = {int((m > 9).sum())}" in out.stdout
    missing = _cli(str(cow), "count", "4", "3", "0", "4", "9", cwd=tmp_path)
    assert missing.returncode == 2 and "--input matrix=FILE" in missing.stderr
    malformed = _cli(str(cow), "count", "4", "3", "0", "4", "9", "--input", "m.npy",
                     cwd=tmp_path)
    assert malformed.returncode == 2 and "expected NAME=FILE" in malformed.stderr
    helptext = " ".join(_cli("--help", cwd=tmp_path).stdout.split())
    assert "structured array" in helptext and "--input NAME=FILE" in helptext
    assert "one column per field" in helptext


def test_check_shows_struct_parameters_and_inputs(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from revec.cli import main

    (tmp_path / "knapsack.c").write_text(KNAPSACK_C)
    (tmp_path / "thresh.c").write_text(COWICHAN_C)
    assert main(["check", str(tmp_path / "knapsack.c")]) == 0
    out = capsys.readouterr().out
    assert "task knapsack(e: {value: int32, weight: int32}[], c: int32, n: int32, v: int32)" \
        in out
    assert "frame field e_off" not in out  # the view's offset is not the derived path sum
    assert main(["check", str(tmp_path / "thresh.c")]) == 0
    out = capsys.readouterr().out
    assert "input matrix: int32[] (a file-scope pointer the caller supplies" in out


def test_dask_binds_structs_and_file_scope_inputs(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from revec.cluster import run_dask

    knap, cow = tmp_path / "knapsack.c", tmp_path / "thresh.c"
    knap.write_text(KNAPSACK_C)
    cow.write_text(COWICHAN_C)
    m = _matrix(2000, 3, 11)
    got_knap = run_dask(knap, "knapsack", (ITEMS, CAPACITY, len(ITEMS), 0), local=1,
                        chunks=3, workers=1)
    got_cow = run_dask(cow, "count", (2000, 3, 0, 2000, 30), local=1, chunks=2, workers=1,
                       inputs={"matrix": m})
    assert got_knap.result == 284 and got_knap.stats.per_worker
    assert got_cow.result == int((m > 30).sum()) and got_cow.stats.per_worker


MAIN_ONLY_C = """\
#include <cilk/cilk.h>
#include <stdlib.h>

struct node { int key; struct node *next; };
static struct node *list;
static int **rows;
int *scratch = NULL;
struct node head;
static long *weights;

long f(int n) {
    if (n == 0) return weights[0];
    return f(n - 1) + weights[n];
}

int main(void) {
    rows = malloc(sizeof(int *));
    list = &head;
    return 0;
}
"""


def test_pointers_only_main_uses_need_nothing(tmp_path: Path) -> None:
    """File-scope variables a task does not read (pointers to pointers, structs with
    pointers, struct values) are main's business: no error, no input needed."""
    path = tmp_path / "main_only.c"
    path.write_text(MAIN_ONLY_C)
    for variant, backend in (("seq", "auto"), ("reexp", "c"), ("bfs", "numpy")):
        got = run_program(path, "f", (3,), variant=variant, backend=backend,
                          inputs={"weights": [5, 6, 7, 8]})
        assert got.result == 26
    with pytest.raises(RevecError, match="'list' is not a file-scope input"):
        run_program(path, "f", (3,), variant="seq", inputs={"weights": [1] * 4, "list": []})


# --------------------------------------------------------------------------- generated
STRUCT_SEEDS = range(30)


@needs_gcc
@pytest.mark.parametrize("seed", STRUCT_SEEDS)
def test_generated_struct_programs(seed: int, tmp_path: Path) -> None:
    p: StructProgram = struct_program(seed)
    path = tmp_path / "prog.c"
    path.write_text(p.c)
    expected = int(_elision(p.c, tmp_path, "")[0])
    got = run_program(path, "f", p.args, variant="seq", inputs=p.inputs)
    assert got.result == expected, p.c
    block = (1, 2, 3, 8, 4096)[seed % 5]
    backends = ["numpy"] + (["c"] if seed % 2 == 0 else []) + (["numba"] if seed % 6 == 1
                                                               else [])
    for backend in backends:
        for variant in VARIANTS:
            got = run_program(path, "f", p.args, variant=variant, backend=backend,
                              block_size=block, inputs=p.inputs,
                              workers=2 if seed % 4 == 0 and backend != "numpy" else 1)
            assert got.result == expected, (p.c, backend, variant, got.result, expected)


def test_struct_generator_covers_every_form() -> None:
    progs = [struct_program(s) for s in STRUCT_SEEDS]
    assert {p.shape for p in progs} == {"walk", "knap", "global"}
    forms = {f for p in progs for f in p.forms}
    for form in ("{e}->{f}", "{e}[0].{f}", "(*{e}).{f}", "(({e}) + 0)->{f}", "{e}[{i}].{f}",
                 "({e} + {i})->{f}", "(*({e} + {i})).{f}", "e + h", "&e[h]", "h + e",
                 "e + 1", "&e[1]", "const S *e", "S *e", "S e[]"):
        assert form in forms, form
    text = "".join(p.c for p in progs)
    for spelling in ("typedef struct {", "struct item {", "static item_t *items",
                     "double ", "unsigned char ", "int64_t "):
        assert spelling in text, spelling
    values = [p.inputs["items"] if p.shape == "global" else p.args[0] for p in progs]
    assert any(isinstance(v, dict) for v in values)
    names = [v.dtype.names for v in values if isinstance(v, np.ndarray)]
    assert any("extra" in n for n in names)  # a field the program does not have
    assert any(list(n) != sorted(n) for n in names)


# --------------------------------------------------------------------------- rejections
HEAD = "#include <cilk/cilk.h>\n\n"
ITEM = "struct item { int value; int weight; };\n"
TASK = "long f(struct item *e, int n) {\n  if (n == 0) return 0;\n  BODY\n  " \
       "return f(e + 1, n - 1);\n}\n"
REJECTIONS = [
    ("write_field", ITEM + TASK.replace("BODY", "e->value = 3;"),
     "writes the array parameter 'e'", "e->value = 3"),
    ("write_indexed_field", ITEM + TASK.replace("BODY", "e[1].weight += 2;"),
     "writes the array parameter 'e'", "e[1].weight"),
    ("nested_struct", "struct pos { int x; int y; };\n"
     "struct item { int value; struct pos at; };\n" + TASK.replace("BODY", ""),
     "field 'at' of struct item is a struct; nested structs are not supported", "at;"),
    ("pointer_in_struct", "struct item { int value; int *next; };\n"
     + TASK.replace("BODY", ""),
     "field 'next' of struct item is a pointer", "*next;"),
    ("array_in_struct", "typedef struct { int value; long w[2]; } item_t;\n"
     + TASK.replace("BODY", "").replace("struct item", "item_t"),
     "field 'w' of item_t is an array", "w[2]"),
    ("union", "union item { int value; float weight; };\n"
     + TASK.replace("BODY", "").replace("struct item", "union item"),
     "union item is a union; unions are not supported", "*e, int n"),
    ("struct_by_value", ITEM + "long f(struct item it, int n) {\n  if (n == 0) return "
     "it.value;\n  return f(it, n - 1);\n}\n",
     "parameter 'it' is a struct passed by value", "it, int n"),
    ("unknown_field", ITEM + TASK.replace("BODY", "long q = e->cost;"),
     "struct item has no field 'cost' (its fields: value, weight)", "cost;"),
    ("struct_without_field", ITEM + TASK.replace("BODY", "long q = e[0];"),
     "'e' points to struct item values: read a field (e[i].value", "e[0];"),
    ("undefined_struct", TASK.replace("BODY", ""),
     "struct item is declared but not defined in this file", "e, int n"),
    ("write_file_scope_input", "static int *matrix;\n" + TASK.replace("BODY",
     "matrix[n] = 0;").replace("struct item *e", "const int *e"),
     "writes through the file-scope pointer 'matrix'", "matrix[n] = 0"),
    ("write_file_scope_input_star", "int *matrix;\n" + TASK.replace("BODY",
     "*(matrix + 1) = n;").replace("struct item *e", "const int *e"),
     "writes through the file-scope pointer 'matrix'", "matrix + 1)"),
    ("write_file_scope_struct", ITEM + "static struct item *items;\n" + TASK.replace(
        "BODY", "items[n].value = 1;"),
     "writes through the file-scope pointer 'items'", "items[n].value"),
    ("file_scope_pointer_to_pointers", "static int **rows;\n" + TASK.replace(
        "BODY", "long q = rows[0][n];").replace("struct item *e", "const int *e"),
     "'rows' is a pointer to pointers", "rows[0]"),
    ("initialized_file_scope_pointer", "const int A[2] = {1, 2};\nconst int *p = A;\n"
     + TASK.replace("BODY", "long q = p[n];").replace("struct item *e", "const int *e"),
     "'p' is initialized in its declaration", "p[n]"),
    ("input_name_clash", "struct a { int x_y; };\nstruct b { int y; };\n"
     "long f(struct a *e, struct b *e_x, int n) {\n  if (n == 0) return e->x_y;\n"
     "  return f(e + 1, e_x, n - 1);\n}\n",
     "the input array of parameter 'e_x' would be named 'in_f_e_x_y'", "*e_x"),
    ("file_scope_struct_value", ITEM + "struct item best;\n" + TASK.replace(
        "BODY", "long q = best.value;"),
     "a struct field is read from an array of structs", "best.value"),
]


@pytest.mark.parametrize("name, body, message, needle", REJECTIONS,
                         ids=[r[0] for r in REJECTIONS])
def test_rejected_with_location(name: str, body: str, message: str, needle: str,
                                tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = HEAD + body
    path = tmp_path / "prog.c"
    path.write_text(source)
    line, col = where(source, needle)
    assert_located_rejection(path, message, line, col, tmp_path / "out.c",
                             ("--backend", "c"), capsys)

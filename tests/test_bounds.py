"""Bounds for branch-and-bound (docs/design.md, "Bounds"): a global that tasks only raise
(lower) and read to prune is a max (min) reducer read as at block start.

Differential: each program below, run in every variant, back end, worker count and
block size, gives the answer of the same program without its pruning lines (marked
PRUNE) run as plain Python, the exhaustive answer; blocked runs with small blocks prune
(the count is > 0); two workers give the one-worker answer.  Rejections: every misuse of
a bound is one located error."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from revec import Bound
from revec.api import run_program
from revec.backends import registry
from tests.rejections import assert_located_rejection, where

# ---------------------------------------------------------------------------- programs
PY_KNAPSACK = '''\
import numpy as np
from revec import Bound, Reducer, reduce, spawn, task

V = np.array([5, 4, 3, 7, 2, 6, 8, 1, 9, 4, 3, 5], dtype=np.int32)
W = np.array([3, 2, 4, 5, 1, 3, 6, 1, 7, 2, 3, 4], dtype=np.int32)
REST = np.array([57, 52, 48, 45, 38, 36, 30, 22, 21, 12, 8, 5, 0], dtype=np.int32)
best = Reducer(np.int64, "max")
bound = Bound(np.int64, "max")


@task
def knap(i: np.int8 = 0, room: np.int32 = 19, value: np.int32 = 0):
    if i == 12:
        reduce(best, value)
        bound.raise_to(value)
    else:
        if value + REST[i] <= bound.value:  # PRUNE
            return  # PRUNE
        spawn(knap, i + 1, room, value)
        if W[i] <= room:
            spawn(knap, i + 1, room - W[i], value + V[i])
'''

# a search over a ternary tree for the heaviest root-to-leaf path; a node's weight is a
# hash of its number (0 .. 15), so at most 15 more per level
PY_MAXPATH = '''\
import numpy as np
from revec import Bound, Reducer, reduce, spawn, task

D = 7
best = Reducer(np.int64, "max")
bound = Bound(np.int64, "max", 0)


@task
def path(depth: np.int32 = 0, node: np.int64 = 1, total: np.int64 = 0):
    if depth == D:
        reduce(best, total)
        bound.raise_to(total)
    else:
        room = (D - depth) * 15
        if total + room > bound.value:  # GUARD
            for c in range(3):
                child = node * 3 + c
                spawn(path, depth + 1, child, total + (child * 7919 + 13) % 16)
'''

# the cheapest choice of one option per stage (float costs); LB[s]: the cheapest the
# stages from s on can cost
PY_MINCOST = '''\
import numpy as np
from revec import Bound, Reducer, reduce, spawn, task

COST = np.array([[4.5, 2.25, 7.0], [3.0, 6.5, 1.75], [5.0, 2.5, 4.0], [1.5, 8.0, 3.25],
                 [6.0, 2.0, 2.75], [3.5, 4.25, 1.0], [2.0, 5.5, 3.0]], dtype=np.float64)
LB = np.array([12.75, 10.5, 8.75, 6.25, 4.75, 2.75, 2.0, 0.0], dtype=np.float64)
best = Reducer(np.float64, "min")
bound = Bound(np.float64, "min")


@task
def cost(stage: np.int32 = 0, total: np.float64 = 0.0):
    if stage == 7:
        reduce(best, total)
        bound.lower_to(total)
    else:
        if total + LB[stage] >= bound.value:  # PRUNE
            return  # PRUNE
        spawn(cost, stage + 1, total + COST[stage, 0])
        spawn(cost, stage + 1, total + COST[stage, 1])
        spawn(cost, stage + 1, total + COST[stage, 2])
'''

# Cilk-5 knapsack's shape: best_so_far raised at the leaves, read to prune; the answer
# is the task's returned value
C_KNAPSACK = '''\
#include <cilk/cilk.h>
#include <stdint.h>
#define N 12
static const int32_t V[N] = {5, 4, 3, 7, 2, 6, 8, 1, 9, 4, 3, 5};
static const int32_t W[N] = {3, 2, 4, 5, 1, 3, 6, 1, 7, 2, 3, 4};
static const int32_t REST[N + 1] = {57, 52, 48, 45, 38, 36, 30, 22, 21, 12, 8, 5, 0};
int best_so_far = -2147483647 - 1;

int64_t knap(int8_t i, int32_t room, int32_t value) {
    if (room < 0)
        return 0;
    if (i == N) {
        if (value > best_so_far) best_so_far = value;
        return value;
    }
    if (value + REST[i] <= best_so_far) /* PRUNE */
        return 0; /* PRUNE */
    int64_t without = cilk_spawn knap(i + 1, room, value);
    int64_t with = knap(i + 1, room - W[i], value + V[i]);
    cilk_sync;
    return without > with ? without : with;
}
'''

# items as bit-packed integers: item k's value is bits 4k..4k+3 of VALS
C_MAXPATH = '''\
#include <cilk/cilk.h>
#include <stdint.h>
#define D 11
#define VALS 0x9a3c57e1b42d6f08ULL
int64_t best_so_far = 0;

int64_t path(int32_t depth, uint64_t node, int64_t total) {
    if (depth == D) {
        if (best_so_far < total) best_so_far = total;
        return total;
    }
    if (total + (D - depth) * 15 <= best_so_far) /* PRUNE */
        return -1; /* PRUNE */
    uint64_t left = node * 2, right = node * 2 + 1;
    int64_t a = cilk_spawn path(depth + 1, left, total + (int64_t)((VALS >> ((left * 5) % 61)) & 15));
    int64_t b = cilk_spawn path(depth + 1, right, total + (int64_t)((VALS >> ((right * 5) % 61)) & 15));
    cilk_sync;
    return a > b ? a : b;
}
'''

C_MINCOST = '''\
#include <cilk/cilk.h>
#include <stdint.h>
#define S 11
static const int32_t COST[S][2] = {{9, 4}, {6, 13}, {10, 5}, {3, 16}, {12, 4}, {7, 8},
                                   {4, 11}, {5, 5}, {14, 2}, {6, 9}, {3, 7}};
static const int32_t LB[S + 1] = {48, 44, 38, 33, 30, 26, 19, 15, 10, 8, 3, 0};
int64_t best_cost = 1000000;

int64_t cost(int32_t stage, int64_t total) {
    if (stage == S) {
        if (total < best_cost) best_cost = total;
        return total;
    }
    if (total + LB[stage] >= best_cost) /* PRUNE */
        return 1000000; /* PRUNE */
    int64_t a = cilk_spawn cost(stage + 1, total + COST[stage][0]);
    int64_t b = cost(stage + 1, total + COST[stage][1]);
    cilk_sync;
    return a < b ? a : b;
}
'''

# name -> (suffix, source, task, the answer's key: a reducer's name or "result")
PROGRAMS = {
    "py_knapsack": (".py", PY_KNAPSACK, "knap", "best"),
    "py_maxpath": (".py", PY_MAXPATH, "path", "best"),
    "py_mincost": (".py", PY_MINCOST, "cost", "best"),
    "c_knapsack": (".c", C_KNAPSACK, "knap", "result"),
    "c_maxpath": (".c", C_MAXPATH, "path", "result"),
    "c_mincost": (".c", C_MINCOST, "cost", "result"),
}
ROOTS = {"c_knapsack": (0, 19, 0), "c_maxpath": (0, 1, 0), "c_mincost": (0, 0)}
VARIANTS = ("bfs", "blocked", "reexp")


def unpruned(source: str) -> str:
    """The program without its pruning: the exhaustive search (lines marked PRUNE go, a
    condition marked GUARD becomes True)."""
    return "".join(re.sub(r"if .*:", "if True:", line) if "GUARD" in line else line
                   for line in source.splitlines(keepends=True) if "PRUNE" not in line)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    d = tmp_path_factory.mktemp("bounds")
    out = {}
    for name, (suffix, source, _, _) in PROGRAMS.items():
        pruned, full = d / f"{name}{suffix}", d / f"{name}_full{suffix}"
        pruned.write_text(source)
        full.write_text(unpruned(source))
        out[name] = (pruned, full)
    return out


def answer(res) -> object:
    return res.result if res.has_result else res.reducers["best"]


def backends() -> list[str]:
    return [b for b in ("c", "numba", "numpy") if registry.get(b).unavailable() is None]


# ---------------------------------------------------------------------------- differential
@pytest.mark.parametrize("backend", ["c", "numba", "numpy"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_pruned_answer_equals_exhaustive(files, name, backend):
    if backend not in backends():
        pytest.skip(f"{backend} is not available here")
    _, _, task, _ = PROGRAMS[name]
    pruned, full = files[name]
    args = ROOTS.get(name, ())
    exhaustive = answer(run_program(full, task, args, variant="seq"))
    seq = run_program(pruned, task, args, variant="seq")
    assert answer(seq) == exhaustive, "the plain-Python run with pruning"
    all_tasks = run_program(full, task, args, variant="bfs", backend=backend)
    assert all_tasks.stats.pruned is None  # no bound, no count
    pruned_somewhere = 0
    for variant in VARIANTS:
        for block_size in (4, 256):
            by_workers = {}
            for workers in ((1, 2) if backend != "numpy" else (1,)):
                res = run_program(pruned, task, args, variant=variant, backend=backend,
                                  block_size=block_size, workers=workers)
                where = f"{variant} B={block_size} workers={workers}"
                assert answer(res) == exhaustive, where
                assert res.stats.pruned is not None and res.stats.pruned >= 0, where
                assert res.stats.tasks <= all_tasks.stats.tasks, where
                if res.stats.pruned:
                    assert res.stats.tasks < all_tasks.stats.tasks, where
                by_workers[workers] = answer(res)
                if variant != "bfs" and block_size == 4:
                    assert res.stats.pruned > 0, f"{where}: nothing was pruned"
                pruned_somewhere += res.stats.pruned
            assert len(set(by_workers.values())) == 1, by_workers
    assert pruned_somewhere > 0


def test_the_bound_is_read_at_block_start(files):
    """One worker: every back end sees the same bound at each block's start, so they
    prune the same tasks; and bfs (one block per level, the leaves all on the last)
    prunes nothing in the knapsack, where only leaves raise the bound."""
    pruned, _ = files["py_knapsack"]
    counts = {}
    for backend in backends():
        for variant in VARIANTS:
            res = run_program(pruned, "knap", (), variant=variant, backend=backend,
                              block_size=4, workers=1)
            counts[backend, variant] = (res.stats.tasks, res.stats.pruned)
    for variant in VARIANTS:
        assert len({v for (b, w), v in counts.items() if w == variant}) == 1, counts
    assert counts[backends()[0], "bfs"][1] == 0


def test_unsound_pruning_changes_the_answer(tmp_path):
    """The comparison can fail: pruning that cuts the best subtree gives another
    answer (the documented condition: the answer is the serial one when pruning is
    sound)."""
    path = tmp_path / "unsound.py"
    path.write_text(PY_KNAPSACK.replace("value + REST[i] <= bound.value",
                                        "value + REST[i] - 20 <= bound.value"))
    full = tmp_path / "full.py"
    full.write_text(unpruned(PY_KNAPSACK))
    exhaustive = run_program(full, "knap", (), variant="seq").reducers["best"]
    got = run_program(path, "knap", (), variant="blocked", backend="numpy", block_size=4)
    assert got.reducers["best"] != exhaustive


def test_bound_in_plain_python():
    b = Bound(np.int32, "max")
    assert b.value == np.iinfo(np.int32).min
    b.raise_to(7)
    b.raise_to(3)
    assert b.value == 7 and type(b.value) is np.int32
    with pytest.raises(ValueError):
        b.lower_to(1)
    m = Bound(np.float64, "min", 10.0)
    m.lower_to(12.0)
    assert m.value == 10.0
    m.reset()
    assert m.value == 10.0
    with pytest.raises(ValueError):
        Bound(np.int64, "sum")


def test_check_and_run_report_the_bound(files, capsys):
    from revec.cli import main

    pruned, _ = files["c_knapsack"]
    assert main(["check", str(pruned)]) == 0
    out = capsys.readouterr().out
    assert "bound best_so_far: int32, raised (max), starting at -2147483648" in out
    assert "if pruning is sound" in out
    assert main(["run", str(pruned), "knap", "0", "19", "0", "--backend", "numpy",
                 "--variant", "blocked", "--block-size", "4"]) == 0
    out = capsys.readouterr().out
    assert "pruned tasks " in out and "pruned tasks 0 " not in out
    assert main(["transform", str(pruned), "--spawn-form"]) == 0
    out = capsys.readouterr().out
    assert "best_so_far = Bound(np.int32, 'max', -2147483648)" in out
    assert "best_so_far.raise_to(value)" in out and "<= best_so_far.value:" in out


# ---------------------------------------------------------------------------- generated
def _generated(seed: int) -> tuple[str, str]:
    """A small random branch-and-bound program (max or min, a sound bound from the
    largest / smallest weight) and its exhaustive form."""
    rng = random.Random(seed)
    depth = rng.randint(3, 6)
    fan = rng.randint(2, 3)
    wmax = rng.randint(3, 20)
    op = rng.choice(["max", "min"])
    mul = rng.choice([3, 5, 7, 11])
    prune = (f"total + (D - depth) * {wmax} <= bound.value" if op == "max"
             else "total >= bound.value")
    update = "raise_to" if op == "max" else "lower_to"
    spawns = "\n".join(
        f"        spawn(g, depth + 1, node * {fan} + {c}, "
        f"total + (node * {fan} + {c}) * {mul} % {wmax + 1})" for c in range(fan))
    source = f'''\
import numpy as np
from revec import Bound, Reducer, reduce, spawn, task

D = {depth}
best = Reducer(np.int64, "{op}")
bound = Bound(np.int64, "{op}")


@task
def g(depth: np.int32 = 0, node: np.int64 = 1, total: np.int64 = 0):
    if depth == D:
        reduce(best, total)
        bound.{update}(total)
    else:
        if {prune}:  # PRUNE
            return  # PRUNE
{spawns}
'''
    return source, unpruned(source)


@pytest.mark.parametrize("seed", range(20))
def test_generated_programs(tmp_path, seed):
    source, full_source = _generated(seed)
    pruned, full = tmp_path / "g.py", tmp_path / "g_full.py"
    pruned.write_text(source)
    full.write_text(full_source)
    exhaustive = run_program(full, "g", (), variant="seq").reducers["best"]
    for variant in VARIANTS:
        res = run_program(pruned, "g", (), variant=variant, backend="numpy", block_size=4)
        assert res.reducers["best"] == exhaustive, (variant, source)
    if "c" in backends() and seed % 5 == 0:
        for workers in (1, 2):
            res = run_program(pruned, "g", (), variant="reexp", backend="c", block_size=4,
                              workers=workers)
            assert res.reducers["best"] == exhaustive, (workers, source)


# ---------------------------------------------------------------------------- rejections
PY_HEAD = '''\
import numpy as np
from revec import Bound, Reducer, reduce, spawn, task

best = Reducer(np.int64, "max")
bound = Bound(np.int64, "max")


'''

# (name, task source after PY_HEAD, message fragment, the text the error points at)
PY_CASES = [
    ("raised_and_lowered", '''\
@task
def f(n: np.int32 = 5):
    if n == 0:
        bound.raise_to(n)
        bound.lower_to(n)
    else:
        spawn(f, n - 1)
''', "a bound both raised and lowered", "bound.lower_to"),
    ("added_into_a_reduced_value", '''\
@task
def f(n: np.int32 = 5):
    if n == 0:
        reduce(best, n + bound.value)
    else:
        spawn(f, n - 1)
''', "is folded into the reducer 'best'", "bound.value)"),
    ("passed_to_a_spawn", '''\
@task
def f(n: np.int32 = 5, v: np.int64 = 0):
    if n == 0:
        bound.raise_to(v)
    else:
        spawn(f, n - 1, bound.value)
''', "is passed to a spawn", "bound.value)"),
    ("local_used_otherwise", '''\
@task
def f(n: np.int32 = 5):
    if n == 0:
        b = bound.value
        reduce(best, b)
    else:
        spawn(f, n - 1)
''', "('b' holds its value) is folded into the reducer", "b)"),
    ("guarded_reduce", '''\
@task
def f(n: np.int32 = 5):
    if n == 0:
        if n > bound.value:
            reduce(best, n)
    else:
        spawn(f, n - 1)
''', "whose branch reduces", "bound.value:"),
    ("read_in_is_base", '''\
@task
def f(n: np.int32 = 5):
    if n <= bound.value:
        reduce(best, n)
    else:
        spawn(f, n - 1)
''', "read in the is-base test", "bound.value:"),
    ("used_as_a_reducer", '''\
@task
def f(n: np.int32 = 5):
    if n == 0:
        reduce(bound, n)
    else:
        spawn(f, n - 1)
''', "is a Bound, not an ordinary reducer", "bound, n)"),
    ("bare_name", '''\
@task
def f(n: np.int32 = 5):
    if n == 0:
        reduce(best, bound)
    else:
        spawn(f, n - 1)
''', "read its value as bound.value", "bound)"),
    ("read_in_a_helper", '''\
def h(x):
    return x + bound.value


@task
def f(n: np.int32 = 5):
    if n == 0:
        reduce(best, h(n))
    else:
        spawn(f, n - 1)
''', "is read in the helper", "bound.value"),
]

C_HEAD = "#include <cilk/cilk.h>\n#include <stdint.h>\nint best_so_far = -1;\n\n"

C_CASES = [
    ("raised_and_lowered", '''\
int64_t f(int32_t n) {
    if (n == 0) {
        if (n > best_so_far) best_so_far = n;
        if (n < best_so_far) best_so_far = n;
        return n;
    }
    int64_t a = cilk_spawn f(n - 1);
    cilk_sync;
    return a;
}
''', "is raised at line 7 and lowered here", "if (n < best_so_far)"),
    ("added_into_the_result", '''\
int64_t f(int32_t n) {
    if (n == 0) {
        if (n > best_so_far) best_so_far = n;
        return n + best_so_far;
    }
    int64_t a = cilk_spawn f(n - 1);
    cilk_sync;
    return a;
}
''', "the bound 'best_so_far' is returned", "best_so_far;"),
    ("passed_to_a_spawn", '''\
int64_t f(int32_t n) {
    if (n == 0) {
        if (n > best_so_far) best_so_far = n;
        return n;
    }
    int64_t a = cilk_spawn f(best_so_far - 1);
    cilk_sync;
    return a;
}
''', "is passed to a spawn", "best_so_far - 1"),
    ("assigned_in_a_task", '''\
int64_t f(int32_t n) {
    if (n == 0) {
        if (n > best_so_far) best_so_far = n;
        return n;
    }
    best_so_far = 0;
    int64_t a = cilk_spawn f(n - 1);
    cilk_sync;
    return a;
}
''', "writes the bound 'best_so_far' other than by if (v > best_so_far)",
     "best_so_far = 0"),
    ("incremented", '''\
int64_t f(int32_t n) {
    if (n == 0) {
        if (n > best_so_far) best_so_far = n;
        return n;
    }
    best_so_far++;
    int64_t a = cilk_spawn f(n - 1);
    cilk_sync;
    return a;
}
''', "writes the bound 'best_so_far' other than by", "best_so_far++"),
]


@pytest.mark.parametrize("name, body, message, needle", PY_CASES, ids=[c[0] for c in PY_CASES])
def test_python_rejections(tmp_path, capsys, name, body, message, needle):
    source = PY_HEAD + body
    path = tmp_path / "prog.py"
    path.write_text(source)
    line, col = where(source, needle)
    assert_located_rejection(path, message, line, col, tmp_path / "out.py",
                             ("--backend", "numba"), capsys)


@pytest.mark.parametrize("name, body, message, needle", C_CASES, ids=[c[0] for c in C_CASES])
def test_c_rejections(tmp_path, capsys, name, body, message, needle):
    source = C_HEAD + body
    path = tmp_path / "prog.c"
    path.write_text(source)
    line, col = where(source, needle)
    assert_located_rejection(path, message, line, col, tmp_path / "out.c",
                             ("--backend", "c"), capsys)


def test_c_modules_are_warning_free(files):
    """The bounds' C (shared cells, their atomics, the block-start reads) compiles under
    gcc -Wall -Wextra -Wshadow -Werror, as every generated module does."""
    from tests import test_c_strict as strict

    if strict.CC is None:
        pytest.skip("needs gcc")
    strict._check_all(list(strict._modules([p for p, _ in files.values()])))


def test_dask_chunks_start_from_the_frontiers_bound(files):
    """On Dask the frontier is expanded first; each chunk's bound starts where the
    frontier's was, and the answer is still the exhaustive one."""
    distributed = pytest.importorskip("distributed")
    if "c" not in backends():
        pytest.skip("Dask runs use the C back end")
    from revec.cluster import run_dask

    pruned, full = files["c_maxpath"]
    exhaustive = answer(run_program(full, "path", ROOTS["c_maxpath"], variant="seq"))
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        got = run_dask(pruned, "path", ROOTS["c_maxpath"], client=client, chunks=4,
                       workers=1, variant="blocked", block_size=4)
    finally:
        client.close()
        cluster.close()
    assert answer(got) == exhaustive
    assert got.stats.pruned is not None  # (wide chunks of 256 frames may prune nothing)

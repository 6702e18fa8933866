"""Several workers with work stealing (C back end's threads, numba's nogil threads):
the same reducers as one worker and the sequential reference, for every worker count;
statistics merged; the memory budget covers all workers; the C driver under
ThreadSanitizer (pytest -m tsan)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from revec.api import get_program, root_args, run_loaded
from revec.backends.c_codegen import generate_c_module
from revec.backends.c_driver import DRIVER_OBJECT
from revec.bench.presets import BENCHMARKS, PRESETS
from revec.cli import main
from revec.runtime.memory import MemoryBudgetError

ROOT = Path(__file__).resolve().parent.parent
SKEW = ROOT / "tests" / "programs" / "skew.py"
BACKENDS = ("numba", "c")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmarks_any_worker_count(backend: str, name: str) -> None:
    pre = PRESETS[name]["quick"]
    program = get_program(pre.path)
    one = run_loaded(program, pre.task, pre.root_args, backend=backend, block_size=8,
                     reexp_threshold=8)
    for workers in (2, 3):
        many = run_loaded(program, pre.task, pre.root_args, backend=backend, block_size=8,
                          reexp_threshold=8, workers=workers)
        assert many.reducers == one.reducers, (workers, many.reducers, one.reducers)
        assert many.stats.tasks_per_level == one.stats.tasks_per_level
        assert many.stats.leaves_per_level == one.stats.leaves_per_level
        assert many.stats.workers == workers
        rows = many.stats.per_worker
        assert len(rows) == workers
        assert sum(r["tasks"] for r in rows) == one.stats.tasks
        assert many.stats.peak_live == sum(r["peak_live"] for r in rows)
        assert all(r["idle_seconds"] >= 0 for r in rows)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stress_unbalanced_500_runs(backend: str) -> None:
    """A small unbalanced tree (children n - 1 and n - 3), 500 runs on 2 workers with
    small blocks: the same integer, min and max results every time."""
    program = get_program(SKEW)
    args = root_args(program, "skew", (26, 0))
    ref = run_loaded(program, "skew", args, variant="seq").reducers
    steals = 0
    for i in range(500):
        res = run_loaded(program, "skew", args, backend=backend, block_size=8,
                         reexp_threshold=8, workers=2)
        assert res.reducers == ref, (i, res.reducers, ref)
        steals += sum(r["steals"] for r in res.stats.per_worker)
    assert steals > 0  # the runs did balance work between the workers


@pytest.mark.parametrize("backend", BACKENDS)
def test_budget_covers_all_workers(backend: str) -> None:
    """A bfs run over the budget stops with every worker count; with the budget a
    one-worker reexp run needs, workers share it (no failure needed for that: the
    driver counts every worker's frames against one total)."""
    program = get_program(ROOT / "benchmarks" / "nqueens.py")
    for workers in (1, 2, 3):
        with pytest.raises(MemoryBudgetError):
            run_loaded(program, "nqueens", (11,), variant="bfs", backend=backend,
                       max_memory=1 << 18, workers=workers)



def test_numba_budget_counts_every_workers_bytes() -> None:
    """The numba driver's check: this worker's bytes plus the others' against the one
    budget; unchanged bytes are not re-checked (nor written to the shared slots)."""
    from numba import typed

    from revec.runtime.numba_support import over_budget

    frame, scratch = np.zeros(100, np.uint8), np.zeros(50, np.uint8)
    cols = typed.List([frame, scratch])  # one frame column of 1 byte, one scratch column
    itemsizes = np.array([1], np.int64)
    used = np.array([1000, 0], np.int64)  # worker 0 holds 1000 bytes
    ints = typed.List([np.zeros(4, np.int64), np.array([1100, 0, 1], np.int64), used,
                       np.zeros(8, np.int64)])  # budget 1100, this is worker 1
    assert not over_budget(ints, cols, itemsizes, 40)  # 40 + 50 + 1000 <= 1100
    assert used[1] == 90 and ints[1][1] == 0
    assert not over_budget(ints, cols, itemsizes, 40)  # unchanged
    assert over_budget(ints, cols, itemsizes, 60)  # 60 + 50 + 1000 > 1100
    assert ints[1][1] == 1 and used[1] == 90
    used[0] = 0
    assert not over_budget(ints, cols, itemsizes, 60)  # alone it fits
    assert used[1] == 110

def test_cli_workers_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(ROOT / "benchmarks" / "fib.py"), "fib", "24", "--backend", "c",
                 "--workers", "2", "--block-size", "16", "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["reducers"] == {"count": 46368}
    assert doc["workers"] == doc["stats"]["workers"] == 2
    assert len(doc["stats"]["per_worker"]) == 2
    assert {"tasks", "steals", "idle_seconds"} <= set(doc["stats"]["per_worker"][0])


def test_cli_zero_workers_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(ROOT / "benchmarks" / "fib.py"), "fib", "10",
                 "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


def test_workers_table_quick(tmp_path: Path) -> None:
    """revec bench --workers: every implementation verified against plain C's answer
    for each worker count, per-worker detail of the 2-worker C run, the table written."""
    from revec.bench.workers_table import run_workers_table

    res = run_workers_table(["binomial"], "quick", [1, 2], 1, 1 << 30, tmp_path,
                            progress=False)
    rows = res[0]["rows"]
    assert [r["workers"] for r in rows] == [1, 2]
    assert all(r["verified"] for r in rows)
    assert res[0]["omp_cutoff"] in res[0]["omp_cutoff_sweep"]
    pre = PRESETS["binomial"]["quick"]
    one = run_loaded(get_program(pre.path), pre.task, pre.root_args, backend="c")
    assert sum(w["tasks"] for w in rows[1]["c_workers"]) == one.stats.tasks
    text = (tmp_path / "workers.md").read_text()
    assert "| binomial | 1 |" in text and "| binomial | 2 |" in text
    assert "- binomial, N = 2: " in text
    doc = json.loads((tmp_path / "workers.json").read_text())
    assert doc[0]["rows"][1]["c_reexp"] > 0
    # one repeat: the median is the one timed run kept beside it
    assert doc[0]["rows"][1]["runs"]["c"] == [doc[0]["rows"][1]["c_reexp"]]


def test_workers_table_without_a_folder_is_shown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """revec bench --workers --no-report: the table on standard output, no file."""
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "binomial", "--size", "quick", "--workers", "1", "--repeats", "1",
                 "--no-report", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| binomial | 1 |" in out and "Geometric means" in out
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- ThreadSanitizer
TSAN_MAIN = r"""
#include <stdio.h>
int main(void) {
    static const unsigned char root[] = {@ROOT@};
    static const unsigned char acc0[] = {@ACCS@};
    const void *arrays[1] = {0};
    for (int rep = 0; rep < 3; rep++) {
        for (int workers = 2; workers <= 3; workers++) {
            char accs[sizeof(acc0)];
            memcpy(accs, acc0, sizeof(acc0));
            double *lv; int64_t nlv, st[12], wst[3 * 8];
            int rc = revec_run((const char *)root, @B@, @B@, 16, arrays, accs, &lv, &nlv, st,
                               0, workers, wst);
            if (rc) { printf("rc %d\n", rc); return 1; }
            for (size_t i = 0; i < sizeof(accs); i++) printf("%02x", (unsigned char)accs[i]);
            printf("\n");
            revec_free(lv);
        }
    }
    return 0;
}
"""

TSAN_CASES = [("fib", "benchmarks/fib.py", (22,), 16),
              ("skew", "tests/programs/skew.py", (22, 0), 8),
              ("nqueens", "benchmarks/nqueens.py", (8,), 8),
              ("binomial", "benchmarks/binomial.py", (16, 7), 8),
              # loops of spawns in lock step (thread-local lane state), floats, min/max
              ("branches", "tests/programs/lanes.py", (), 8),
              ("whiles", "tests/programs/lanes.py", (), 8),
              ("fors", "tests/programs/lanes.py", (), 8),
              ("walk", "tests/programs/uniform.py", (), 8),
              ("pairs", "tests/programs/uniform.py", (), 8)]


def _bytes(values: list[bytes]) -> str:
    return ", ".join(str(b) for v in values for b in v) or "0"


@pytest.mark.slow
@pytest.mark.tsan
@pytest.mark.parametrize("task,path,args,b", TSAN_CASES)
def test_c_driver_under_thread_sanitizer(tmp_path: Path, task: str, path: str,
                                         args: tuple[int, ...], b: int) -> None:
    cc = shutil.which("gcc")
    if cc is None:
        pytest.skip("no gcc")
    program = get_program(ROOT / path)
    rargs = root_args(program, task, args)
    params = program.tasks[task].params
    root = [np.array([a], p.ty.dtype).tobytes().ljust(8, b"\0") for p, a in zip(params, rargs)]
    reducers = list(program.reducers.values())
    accs = [np.array([r.identity()], r.dtype).tobytes().ljust(8, b"\0") for r in reducers]
    src = generate_c_module(program, task)
    main_c = (TSAN_MAIN.replace("@ROOT@", _bytes(root)).replace("@ACCS@", _bytes(accs))
              .replace("@B@", str(b)))
    (tmp_path / "prog.c").write_text(src + main_c)
    (tmp_path / "driver.c").write_text(DRIVER_OBJECT[1])  # the shared schedule driver
    exe = tmp_path / "prog"
    build = subprocess.run([cc, "-O1", "-g", "-fsanitize=thread", "-pthread", "-fwrapv",
                            "-march=native", str(tmp_path / "prog.c"),
                            str(tmp_path / "driver.c"), "-o", str(exe), "-lm"],
                           capture_output=True, text=True)
    if build.returncode != 0 and "sanitize" in build.stderr:
        pytest.skip(f"gcc cannot build with -fsanitize=thread: {build.stderr[:200]}")
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert "ThreadSanitizer" not in run.stderr, run.stderr[:4000]
    assert run.returncode == 0, run.stdout + run.stderr[:2000]
    ref = run_loaded(program, task, rargs, variant="seq").reducers
    lines = run.stdout.split()
    assert len(lines) == 6
    for line in lines:
        got = np.frombuffer(bytes.fromhex(line), np.uint8)
        for i, r in enumerate(reducers):
            value = got[8 * i: 8 * i + r.dtype.itemsize].view(r.dtype)[0].item()
            if r.dtype.kind == "f":
                assert value == pytest.approx(ref[r.name], rel=1e-9), (r.name, value)
            else:
                assert value == ref[r.name], (r.name, value, ref[r.name])


def test_per_worker_arrays_have_cache_lines_of_their_own() -> None:
    """The numba workers' small per-block arrays (child counters, kernel meta,
    accumulators) are padded so that no other allocation shares their cache lines
    (adjacent 64-byte arrays made two workers' blocks bounce one line: numba fib on 2
    workers took as long per worker as on 1)."""
    from revec.backends.numba_runner import _own_lines

    for n, dtype in ((4, np.int64), (8, np.int64), (24, np.uint8)):
        a = _own_lines(n, dtype)
        assert a.shape == (n,) and a.dtype == dtype and not a.any()
        base = a.base
        while base.base is not None:
            base = base.base
        start = a.ctypes.data - base.ctypes.data
        assert start >= 128 and base.nbytes - (start + a.nbytes) >= 128

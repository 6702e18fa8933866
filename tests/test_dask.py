"""Dask runs: a breadth-first frontier cut into chunks, one pure Dask task each, on a
LocalCluster; the results equal a single process's, also when a worker process is
killed in the middle of the run (Dask runs its lost chunks again)."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from revec.api import run_program
from revec.bench.presets import PRESETS
from revec.cli import main
from revec.cluster import run_dask

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parent.parent
FIB = ROOT / "benchmarks" / "fib.py"


@pytest.fixture(scope="module")
def client() -> Any:
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.mark.parametrize("name", ["fib", "uts", "minmax", "knapsack"])
def test_dask_equals_one_process(client: Any, name: str) -> None:
    pre = PRESETS[name]["quick"]
    one = run_program(pre.path, pre.task, pre.root_args, backend="c")
    got = run_dask(pre.path, pre.task, pre.root_args, client=client, chunks=5, workers=2)
    assert got.reducers == one.reducers
    assert got.stats.tasks_per_level == one.stats.tasks_per_level
    assert got.stats.leaves_per_level == one.stats.leaves_per_level


def test_dask_value_returning_task(client: Any) -> None:
    """A task that returns its value: the Dask run reports the result, not the hidden
    reducer, as a single process does."""
    natural = ROOT / "benchmarks" / "natural" / "fib.py"
    one = run_program(natural, "fib", (22,), backend="c")
    got = run_dask(natural, "fib", (22,), client=client, chunks=3, workers=1)
    assert one.has_result and got.has_result
    assert got.result == one.result == 17711  # F(22), OEIS A000045
    assert got.reducers == one.reducers == {}
    assert got.args == one.args == (22,)


def test_dask_tree_smaller_than_the_frontier(client: Any) -> None:
    got = run_dask(FIB, "fib", (5,), client=client)
    assert got.reducers == {"count": 5}
    assert got.stats.per_worker == []  # finished during the expansion: no chunks


def test_killed_worker_chunks_rerun(client: Any, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    """Kill a worker process that is running a chunk; Dask reruns its chunks
    elsewhere (the nanny restarts the process) and the result is unchanged.  The run
    says so on stderr: which worker left with how many chunks."""
    one = run_program(FIB, "fib", (38,), backend="c", workers=1)
    killed: list[int] = []

    def kill_one(done: int, total: int, c: Any) -> None:
        if killed:
            return
        busy = [w for w, keys in c.processing().items() if keys]
        if not busy:
            return
        pid = c.run(os.getpid, workers=[busy[0]])[busy[0]]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    got = run_dask(FIB, "fib", (38,), client=client, chunks=24, workers=1,
                   on_chunk=kill_one)
    assert killed, "no worker was busy when the first chunk finished"
    assert got.reducers == one.reducers
    assert got.stats.tasks == one.stats.tasks
    assert len(got.stats.per_worker) == 24
    said = re.findall(r"^revec: Dask worker (\S+) left with (\d+) chunks? not done; Dask "
                      r"runs (?:them|it) again$", capsys.readouterr().err, re.M)
    assert said and 1 <= int(said[0][1]) < 24, said


def test_cli_dask_local(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(FIB), "fib", "25", "--dask-local", "2", "--workers", "1"]) == 0
    out = capsys.readouterr()
    assert "count = 75025" in out.out
    assert "chunks done" in out.err


def test_cli_dask_numba_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(FIB), "fib", "25", "--dask-local", "2", "--backend",
                 "numba"]) == 2
    assert "Dask runs use the C back end" in capsys.readouterr().err

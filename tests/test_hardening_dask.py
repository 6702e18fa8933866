"""Dask runs and worker counts under the conditions a user meets: a scheduler with no
workers, a cluster that loses its last worker, an unreachable scheduler, far more
workers than cores, and `revec bench`'s progress lines.

The Dask tests run a real scheduler on a free localhost port (a ``LocalCluster`` in
this process, with no worker or one), and time each wait from the moment revec says it
waits, so the interpreter's start-up does not count."""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from revec.api import compiled_task, get_program, run_program
from revec.cli import main
from revec.cluster import FETCH, run_dask
from revec.errors import RevecError
from revec.runtime.workers import MAX_WORKERS, PER_WORKER_LINES, default_workers, max_workers

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parent.parent
FIB = str(ROOT / "benchmarks" / "fib.py")
MARGIN = 4.0  # seconds a timeout may be overrun by (a loaded 2-core machine)


def fib_leaves(n: int) -> int:
    """The oracle: benchmarks/fib.py counts the leaves of fib's call tree, F(n)."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return max(a, 1)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def warm() -> None:
    """fib compiled for the C back end before any timing."""
    compiled_task(get_program(FIB), "fib", "c")


@pytest.fixture(scope="module")
def empty_scheduler() -> Iterator[str]:
    """A real Dask scheduler on a free localhost port, with no worker."""
    cluster = distributed.LocalCluster(n_workers=0, dashboard_address=None,
                                       host="127.0.0.1")
    yield str(cluster.scheduler_address)
    cluster.close()


class Stamped:
    """A ``revec`` process whose standard error is read as it comes, each line (``\\n``
    or ``\\r`` ended) with the time it arrived."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "revec", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=_env(), cwd=ROOT, start_new_session=True)
        self.lines: list[tuple[float, str]] = []
        self.raw = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        part = b""
        while chunk := os.read(self.proc.stderr.fileno(), 4096):
            self.raw += chunk
            part += chunk
            *done, part = re.split(rb"[\r\n]", part)
            now = time.monotonic()
            self.lines += [(now, ln.decode()) for ln in done if ln]

    def wait_for(self, text: str, timeout: float = 120) -> float:
        """The time the first line holding ``text`` arrived."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for t, ln in list(self.lines):
                if text in ln:
                    return t
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.02)
        raise AssertionError(f"no line with {text!r}; stderr: {self.raw.decode()!r}")

    def finish(self, timeout: float = 120) -> tuple[int, float, str, str]:
        """Exit status, the time it exited, standard output and error."""
        try:
            self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        ended = time.monotonic()
        self._reader.join(10)
        assert self.proc.stdout is not None
        return self.proc.returncode, ended, self.proc.stdout.read().decode(), \
            self.raw.decode()


# ------------------------------------------------------------ item 3: no worker at all
def test_scheduler_without_workers_says_so_and_gives_up(empty_scheduler: str) -> None:
    """A scheduler with no worker: revec says on stderr that it waits, and after
    --worker-timeout gives up with one located line and exit status 2 (it waited
    forever, silently)."""
    run = Stamped("run", FIB, "fib", "20", "--scheduler", empty_scheduler,
                  "--worker-timeout", "1.5")
    try:
        said = run.wait_for("waiting for a Dask worker", timeout=60)
    except AssertionError:
        run.proc.kill()  # (it waited silently, forever)
        run.finish()
        raise
    code, ended, out, err = run.finish(60)
    assert code == 2, err
    assert out == ""
    lines = err.splitlines()
    assert lines == [
        f"revec: waiting for a Dask worker to join the scheduler at {empty_scheduler} "
        "(giving up after 1.5 s; --worker-timeout)",
        f"revec: error: no Dask worker joined the scheduler at {empty_scheduler} within "
        f"1.5 s (--worker-timeout SECONDS); start one with 'dask worker "
        f"{empty_scheduler}'"]
    assert 1.4 <= ended - said < 1.5 + MARGIN


# ------------------------------------------------- item 3: the last worker leaves mid-run
def test_last_worker_lost_mid_run_is_said_and_ends_the_run(
        warm: None, capsys: pytest.CaptureFixture[str]) -> None:
    """The only worker leaves while chunks are left: revec says which worker left with
    how many chunks, that the cluster has no worker, and gives up after
    --worker-timeout (it waited forever)."""
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                       dashboard_address=None, protocol="tcp",
                                       host="127.0.0.1")
    client = distributed.Client(cluster)
    times: dict[str, float] = {}

    def retire(done: int, total: int, c: Any) -> None:
        if not times:
            times["retired"] = time.monotonic()
            cluster.scale(0)

    try:
        with pytest.raises(RevecError) as info:
            run_dask(FIB, "fib", (32,), client=client, chunks=24, workers=1,
                     on_chunk=retire, worker_timeout=1.0, progress=True)
        ended = time.monotonic()
    finally:
        client.close()
        cluster.close()
    assert times, "no chunk finished"
    msg = info.value.message
    assert re.fullmatch(rf"no Dask worker at {re.escape(str(cluster.scheduler_address))} "
                        r"for 1 s, with (\d+) of 24 chunks not done \(--worker-timeout "
                        r"SECONDS\); giving up", msg), msg
    assert int(msg.split(" with ")[1].split()[0]) >= 1
    err = capsys.readouterr().err
    assert "revec: 1/24 chunks done" in err
    assert f"revec: the Dask cluster at {cluster.scheduler_address} has no worker left; " \
           "waiting for one (giving up after 1 s; --worker-timeout)" in err
    # + a fetch that ran out (a chunk that finished as the worker left)
    assert ended - times["retired"] < 1.0 + FETCH + MARGIN


# --------------------------------------------------------- item 4: unreachable scheduler
def test_connect_timeout_is_honoured(warm: None, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    """Nothing listens on the port: revec gives up after --connect-timeout (not Dask's
    22 s), one line, exit status 2."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    t0 = time.monotonic()
    code = main(["run", FIB, "fib", "20", "--scheduler", address, "--connect-timeout",
                 "1"])
    took = time.monotonic() - t0
    err = capsys.readouterr().err
    assert code == 2, err
    assert 0.9 <= took < 1.0 + MARGIN
    assert err.count("\n") == 1
    assert err.startswith(f"revec: error: cannot reach the Dask scheduler at {address} "
                          "within 1 s (--connect-timeout SECONDS): ")


@pytest.mark.parametrize("argv, message", [
    (["--connect-timeout", "0", "--dask-local", "1"],
     "--connect-timeout must be a positive number of seconds, got 0"),
    (["--worker-timeout", "soon", "--dask-local", "1"],
     "--worker-timeout must be a number of seconds, got 'soon'"),
    (["--worker-timeout", "inf", "--dask-local", "1"],
     "--worker-timeout must be a positive number of seconds, got inf"),
    (["--worker-timeout", "5"],
     "--worker-timeout applies to Dask runs: add --scheduler ADDRESS or --dask-local N"),
])
def test_timeout_options_are_checked(argv: list[str], message: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", FIB, "fib", "5", *argv]) == 2
    assert capsys.readouterr().err == f"revec: error: {message}\n"


def test_timeout_options_are_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--connect-timeout SECONDS" in text and "(default 20)" in text
    assert "--worker-timeout SECONDS" in text and "(default 60)" in text


# -------------------------------------------------------------- item 11: worker counts
def test_workers_beyond_the_cap_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """--workers 10000 ran for 24 s (C) and printed 10,000 lines: now one line, exit 2,
    before anything runs; the API refuses too."""
    cap = max_workers()
    assert cap == max(MAX_WORKERS, default_workers())
    t0 = time.monotonic()
    assert main(["run", FIB, "fib", "25", "--workers", "10000"]) == 2
    assert time.monotonic() - t0 < 5
    assert capsys.readouterr() == ("", f"revec: error: --workers must be at most {cap}, "
                                   "got 10000 (this machine lets this process use "
                                   f"{default_workers()} cores; more workers than cores "
                                   "only share them)\n")
    assert main(["run", FIB, "fib", "25", "--dask-local", str(cap + 1)]) == 2
    assert capsys.readouterr().err.startswith(
        f"revec: error: --dask-local must be at most {cap}, got {cap + 1}")
    with pytest.raises(RevecError, match=f"workers must be at most {cap}, got {cap + 1}"):
        run_program(FIB, "fib", (5,), backend="c", workers=cap + 1)
    assert main(["bench", "fib", "--workers", f"1,{cap + 1}", "--no-report"]) == 2
    assert capsys.readouterr().err.startswith(
        f"revec: error: --workers must be at most {cap}, got {cap + 1}")


def test_more_workers_than_cores_warns_and_summarises(
        warm: None, capsys: pytest.CaptureFixture[str]) -> None:
    """Above the usable cores: a warning; beyond a handful of workers: one summary line
    instead of a line per worker (the JSON keeps every worker)."""
    n = max(default_workers() + 1, PER_WORKER_LINES + 4)
    assert main(["run", FIB, "fib", "18", "--backend", "c", "--workers", str(n)]) == 0
    out, err = capsys.readouterr()
    assert err == (f"revec: warning: --workers {n}: more workers than the "
                   f"{default_workers()} cores this process may use "
                   "(os.sched_getaffinity); the extra workers share cores and make the "
                   "run no faster\n")
    assert f"count = {fib_leaves(18)}" in out
    assert not re.search(r"^\s+worker \d+:", out, re.M)
    summary = [ln for ln in out.splitlines() if ln.startswith(f"workers {n}")]
    assert len(summary) == 1, out
    m = re.fullmatch(rf"workers {n} \(per worker; --json lists every worker\): "
                     r"tasks min (\d+)  median ([\d.]+)  max (\d+); "
                     r"steals min (\d+)  median ([\d.]+)  max (\d+); "
                     r"idle seconds min ([\d.]+)  median ([\d.]+)  max ([\d.]+)",
                     summary[0])
    assert m, summary[0]
    tasks = int(re.search(r"^tasks (\d+)", out, re.M).group(1))  # type: ignore[union-attr]
    lo, mid, hi = int(m[1]), float(m[2]), int(m[3])
    assert lo <= mid <= hi <= tasks and hi * n >= tasks  # the busiest did >= its share
    assert main(["run", FIB, "fib", "18", "--backend", "c", "--workers", str(n),
                 "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert len(data["stats"]["per_worker"]) == n
    assert sum(w["tasks"] for w in data["stats"]["per_worker"]) == data["stats"]["tasks"]


def test_a_handful_of_workers_are_listed(warm: None,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    n = min(PER_WORKER_LINES, max_workers())
    assert main(["run", FIB, "fib", "18", "--backend", "c", "--workers", str(n)]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^  worker (\d+): tasks (\d+)", out, re.M)
    assert [int(i) for i, _ in rows] == list(range(n))
    assert sum(int(t) for _, t in rows) == int(
        re.search(r"^tasks (\d+)", out, re.M).group(1))  # type: ignore[union-attr]


# ------------------------------------------------------------ item 14: bench progress
BENCH = ["bench", "fib", "--size", "quick", "--no-report", "--repeats", "1",
         "--block-sizes", "64", "--backends", "c"]


def test_bench_progress_final_line_once_and_a_stable_total() -> None:
    """`revec bench`'s progress (stderr, here not a terminal): the suite bar's final
    line is drawn once (it was drawn twice), and the benchmark's bar shows one total
    from its first line on (it showed 0/1, then the plan's total)."""
    # numba's on-disk cache on, as for a user (the suite turns it off for its hundreds
    # of generated programs): the numba runtime is not compiled again in this process
    proc = subprocess.run([sys.executable, "-m", "revec", *BENCH], capture_output=True,
                          text=True, env={**_env(), "REVEC_NUMBA_CACHE": "1"}, cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "| fib |" in proc.stdout
    draws = [d.strip() for d in re.split(r"[\r\n]", proc.stderr) if d.strip()]
    final = [d for d in draws if d.startswith("revec bench (quick): 100%")]
    assert len(final) == 1, draws
    assert "1/1" in final[0]
    inner = [re.search(r"\d+/(\d+) \[", d) for d in draws if d.startswith("fib:")]
    totals = {m.group(1) for m in inner if m}
    assert len(inner) >= 1 and len(totals) == 1, draws


def test_bench_inner_bar_counts_to_its_total(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    """Every step the benchmark's bar counts is planned: it ends at its total (it
    ended one short of it when the best reexp size was one of the scalar sizes)."""
    from dataclasses import replace

    import tqdm

    from revec.bench import suite
    from revec.bench.sweep import SweepPlan

    bars: list[Any] = []

    class Recorded(tqdm.tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kw: Any) -> None:
            kw["disable"] = False
            kw["file"] = io.StringIO()
            super().__init__(*args, **kw)
            self.first_total = self.total
            bars.append(self)

        def close(self) -> None:
            self.final = (self.n, self.total)
            super().close()

    monkeypatch.setattr(suite, "tqdm", Recorded)
    plan = replace(SweepPlan(), repeats=2, c_sizes=(64,), numba_sizes=(64,),
                   scalar_sizes=(64,), backends=("c",))
    recs = suite.run_suite(["fib"], "quick", plan, tmp_path, 1 << 30, progress=True,
                           write=False)
    assert recs[0]["verified"] is True
    assert [b.desc for b in bars] == ["revec bench (quick)", "fib"]
    for b in bars:
        assert b.final == (b.first_total, b.first_total), (b.desc, b.final)


def test_many_dask_chunks_are_summarised(warm: None, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A Dask run's per-chunk rows (4 chunks per cluster core: hundreds on a large
    cluster) are summarised the same way beyond a handful."""
    import revec.cluster

    rows = [{"chunk": i, "frames": 256 + (i % 2), "tasks": 10 * i, "seconds": 0.5 * i}
            for i in range(12)]

    def fake_run_dask(path: str, task: str, args: tuple[Any, ...], **kw: Any) -> Any:
        result = run_program(path, task, args, backend="c", workers=1)
        result.stats.workers, result.stats.per_worker = 3, rows
        return result

    monkeypatch.setattr(revec.cluster, "run_dask", fake_run_dask)
    assert main(["run", FIB, "fib", "10", "--dask-local", "1"]) == 0
    out = capsys.readouterr().out
    assert f"count = {fib_leaves(10)}" in out
    assert "  chunk" not in out
    # median of 0, 10, ..., 110: 55; of 0, 0.5, ..., 5.5: 2.75
    assert ("workers 3, 12 chunks (per chunk; --json lists every chunk): frames min 256  "
            "median 256.5  max 257; tasks min 0  median 55  max 110; seconds min 0.0000  "
            "median 2.7500  max 5.5000\n") in out

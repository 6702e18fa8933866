"""Ctrl-C during a long compiled run: both drivers look at the interrupt flag between
blocks, so SIGINT 2 s into a run that would take about 30 s ends it within 2 s with one
line and exit status 130, no traceback."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIB = str(ROOT / "benchmarks" / "fib.py")
# blocked schedules with small blocks: many blocks, each short.  Measured on the
# project's 2-core machine: C fib(46) B=64 about 30 s; numba fib(40) B=64 was about 27 s
# until its compaction and driver got faster (2026-11-28: 2.5 s, so the interrupt at 2 s
# could land in the interpreter's shutdown, exit -2), fib(46) 11x that
LONG = {"c": ("46",), "numba": ("46",)}


@pytest.fixture(autouse=True)
def _sigint_not_ignored():
    """A process started in the background by a non-interactive shell (``pytest &``)
    inherits SIGINT ignored, and so would every ``revec run`` it starts: Ctrl-C could
    not reach them.  Here SIGINT gets Python's own handler for the test (a child then
    starts with the default disposition), and the old one back after."""
    old = signal.getsignal(signal.SIGINT)
    if old == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    if old == signal.SIG_IGN:
        signal.signal(signal.SIGINT, old)


def _env(tmp: Path) -> dict[str, str]:
    # numba's cache of the shared runtime stays where the test session's is (compiled
    # once, not again here); the generated kernel's is under the test's own cache
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REVEC_CACHE_DIR": str(tmp / "cache"),
           "REVEC_NUMBA_CACHE": "1"}
    return env


def _cmd(backend: str, n: str) -> list[str]:
    return [sys.executable, "-m", "revec", "run", FIB, "fib", n, "--variant", "blocked",
            "--block-size", "64", "--backend", backend]


@pytest.mark.parametrize("backend", [
    pytest.param("c", marks=pytest.mark.skipif(shutil.which("gcc") is None and
                                               shutil.which("cc") is None,
                                               reason="needs a C compiler")),
    "numba"])
def test_sigint_during_a_long_run(tmp_path: Path, backend: str) -> None:
    env = _env(tmp_path)
    # compile once, and time a start-up that loads the compiled module from the cache
    warm = subprocess.run(_cmd(backend, "5"), capture_output=True, text=True, env=env,
                          timeout=600)
    assert warm.returncode == 0, warm.stderr
    t0 = time.monotonic()
    again = subprocess.run(_cmd(backend, "5"), capture_output=True, text=True, env=env,
                           timeout=600)
    startup = time.monotonic() - t0
    assert again.returncode == 0 and again.stderr == ""
    proc = subprocess.Popen(_cmd(backend, *LONG[backend]), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(startup + 2.0)  # 2 s into the run itself
    assert proc.poll() is None, "the run ended before it was interrupted"
    t_sig = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    waited = time.monotonic() - t_sig
    assert proc.returncode == 130, (proc.returncode, err)
    assert err == "revec: interrupted\n"
    assert out == ""
    assert waited < 2.0, f"the interrupt took {waited:.2f} s"


def test_flag_is_set_by_sigint_in_this_process() -> None:
    """The flag the drivers read is set by Python's own SIGINT handling."""
    from revec.runtime import interrupt

    flag = interrupt.flag()
    if not interrupt.installed():
        pytest.skip("another wakeup fd is in use in this process")
    interrupt.clear()
    assert flag[0] == 0 and not interrupt.interrupted()
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
    assert flag[0] != 0 and interrupt.interrupted()
    interrupt.clear()
    assert flag[0] == 0


def test_sigint_during_a_dask_local_run(tmp_path: Path) -> None:
    """Ctrl-C in a terminal signals the whole process group: the head and the local
    cluster's worker processes.  The run ends with one line, "revec: interrupted", and
    exit status 130: no worker's KeyboardInterrupt traceback (there were four, 68
    lines), no log line of Dask's, and no process of the run left behind."""
    pytest.importorskip("distributed")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the session's compile cache
    cmd = [sys.executable, "-m", "revec", "run", FIB, "fib", "42", "--dask-local", "2",
           "--workers", "1", "--backend", "c"]
    # another cluster's dashboard port taken (as when two runs share a machine): Dask's
    # "Port 8787 is already in use" warning is not the user's business either
    import socket

    held = socket.socket()
    with contextlib.suppress(OSError):
        held.bind(("0.0.0.0", 8787))
        held.listen()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)  # its own process group, as a shell's
    assert proc.stderr is not None and proc.stdout is not None
    err = b""
    try:
        # the first chunk done: the workers are running the others
        while b"chunks done" not in err:
            byte = proc.stderr.read(1)
            assert byte, f"the run ended first: {err!r}"
            err += byte
        os.killpg(proc.pid, signal.SIGINT)
        rest_err, out = proc.stderr.read(), proc.stdout.read()
        proc.wait(60)
    finally:
        held.close()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = (err + rest_err).decode()
    assert proc.returncode == 130, text
    assert out == b""
    lines = [ln for ln in text.replace("\r", "\n").splitlines() if ln]
    assert lines[-1] == "revec: interrupted"
    assert all(re.fullmatch(r"revec: \d+/\d+ chunks done", ln) for ln in lines[:-1]), text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    # the cluster's processes are gone with the run (none of its group still runs)
    deadline = time.monotonic() + 10
    while _running_in_group(proc.pid):
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError("processes of the run outlived it")
        time.sleep(0.1)


def _running_in_group(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that are not zombies (a dead child of the run,
    left to init to reap, is one)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            found.append(int(entry.name))
    return found

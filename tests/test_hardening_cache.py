"""Fault injection into the compile caches: damaged entries are detected, reported once
and rebuilt, in a fresh process, and the run's answer is still right.

C modules live in ``$REVEC_CACHE_DIR/cmod`` (one ``.so`` with a ``.sums`` record);
numba's index and object files in ``$NUMBA_CACHE_DIR`` (with a record beside the
generated module).  Each test builds the entry in one process, damages it, and runs the
program again in a new process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "tests" / "programs" / "fib.py"
ANSWER = "count = 6765"  # fib(20), plain arithmetic


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "REVEC_CACHE_DIR": str(tmp / "cache"), "REVEC_NUMBA_CACHE": "1",
           "PYTHONPATH": str(ROOT)}
    env.pop("REVEC_CFLAGS", None)
    if (tmp / "numba").is_dir():  # the test's own numba cache, the runtime's included
        env["NUMBA_CACHE_DIR"] = str(tmp / "numba")
    else:
        # numba's default places: a generated kernel's cache beside its module (under
        # the test's own REVEC_CACHE_DIR), the shared runtime's in the package, compiled
        # once for the whole test session rather than once per test (about 20 s)
        env.pop("NUMBA_CACHE_DIR", None)
    env.update(extra)
    return env


def _run(tmp: Path, backend: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "revec", "run", str(PROGRAM), "fib", "20",
                           "--backend", backend], capture_output=True, text=True,
                          env=_env(tmp, **extra), timeout=300)


def _truncate(p: Path) -> None:
    with open(p, "r+b") as fh:
        fh.truncate(min(1000, p.stat().st_size // 2))


def _empty(p: Path) -> None:
    p.write_bytes(b"")


def _flip(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0x10
    p.write_bytes(bytes(data))


def _delete(p: Path) -> None:
    p.unlink()


FAULTS: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate, "zero-length": _empty, "bit-flipped": _flip, "deleted": _delete}


def _c_entry(tmp: Path) -> Path:
    (so,) = list((tmp / "cache" / "cmod").glob("_revec_fib_fib_*.so"))
    return so


def _numba_entry(tmp: Path) -> Path:
    gen_dir = os.path.abspath(tmp / "cache" / "numba")
    if (tmp / "numba").is_dir():
        # numba's folder for a source directory D: <basename of D>_<SHA-1 of D>
        folder = tmp / "numba" / f"numba_{hashlib.sha1(gen_dir.encode()).hexdigest()}"
    else:
        folder = Path(gen_dir) / "__pycache__"
    files = sorted(folder.glob("revec_gen_fib_fib_*.kernel-*.nbc"))
    assert files, "numba wrote no cache file for the kernel"
    return files[0]


def _check_rebuilt(tmp: Path, backend: str, what: str) -> None:
    r = _run(tmp, backend)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == ANSWER
    warnings = [ln for ln in r.stderr.splitlines() if "warning" in ln]
    assert len(warnings) == 1 and what in warnings[0] and "rebuilding" in warnings[0], r.stderr
    assert "Traceback" not in r.stderr
    # the rebuilt entry is recorded again: the next process is silent
    r = _run(tmp, backend)
    assert r.returncode == 0 and r.stdout.splitlines()[0] == ANSWER
    assert r.stderr == "", r.stderr


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="needs a C compiler")
@pytest.mark.parametrize("fault", list(FAULTS))
def test_damaged_c_module_is_rebuilt(tmp_path: Path, fault: str) -> None:
    r = _run(tmp_path, "c")
    assert r.returncode == 0 and r.stdout.splitlines()[0] == ANSWER, r.stderr
    assert r.stderr == ""
    FAULTS[fault](_c_entry(tmp_path))
    _check_rebuilt(tmp_path, "c", "cached C module")


NUMBA_FAULTS = [pytest.param(f, marks=[pytest.mark.slow] if f in ("zero-length", "deleted")
                             else []) for f in FAULTS]


@pytest.mark.parametrize("fault", NUMBA_FAULTS)
def test_damaged_numba_cache_is_rebuilt(tmp_path: Path, fault: str) -> None:
    r = _run(tmp_path, "numba")
    assert r.returncode == 0 and r.stdout.splitlines()[0] == ANSWER, r.stderr
    assert r.stderr == ""
    FAULTS[fault](_numba_entry(tmp_path))
    _check_rebuilt(tmp_path, "numba", "numba's cache")


@pytest.mark.slow
def test_damaged_numba_runtime_cache_is_rebuilt(tmp_path: Path) -> None:
    """The shared scheduler's own numba cache is checked before its first import."""
    (tmp_path / "numba").mkdir()  # its own numba cache: the runtime compiles here
    r = _run(tmp_path, "numba")
    assert r.returncode == 0, r.stderr
    (entry,) = list((tmp_path / "numba").glob("*/numba_scheduler.run_schedule-*.nbc"))
    _flip(entry)
    _check_rebuilt(tmp_path, "numba", "revec's scheduler")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_build_killed_half_way_leaves_no_entry(tmp_path: Path) -> None:
    """A process killed while its compiler runs installs nothing a later process loads."""
    killer = tmp_path / "killing-cc"
    # compile, then kill the revec process that ran the compiler (SIGKILL: no cleanup)
    killer.write_text(f'#!/bin/sh\n{shutil.which("gcc")} "$@"\n'
                      f"kill -{int(signal.SIGKILL)} $PPID\n")
    killer.chmod(0o755)
    r = _run(tmp_path, "c", CC=str(killer))
    assert r.returncode == -signal.SIGKILL
    cmod = tmp_path / "cache" / "cmod"
    assert not list(cmod.glob("*.so")) and not list(cmod.glob("*.sums"))
    r = _run(tmp_path, "c")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == ANSWER
    assert r.stderr == ""
    assert len(list(cmod.glob("*.so"))) == 1


@pytest.mark.slow
def test_damaged_numba_workers_cache_is_rebuilt(tmp_path: Path) -> None:
    """The work-stealing driver's numba cache is checked before its first import, and
    recorded again after the first run compiled its lazy helpers."""
    (tmp_path / "numba").mkdir()  # its own numba cache: the runtime compiles here

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "revec", "run", str(PROGRAM), "fib",
                               "20", "--backend", "numba", "--workers", "2"],
                              capture_output=True, text=True, env=_env(tmp_path),
                              timeout=300)

    r = run()
    assert r.returncode == 0 and r.stdout.splitlines()[0] == ANSWER, r.stderr
    r = run()  # loaded from the cache, every file as recorded
    assert r.returncode == 0 and r.stderr == "", r.stderr
    (entry,) = list((tmp_path / "numba").glob("*/numba_workers.run_worker-*.nbc"))
    _flip(entry)
    r = run()
    assert r.returncode == 0 and r.stdout.splitlines()[0] == ANSWER, r.stderr
    warnings = [ln for ln in r.stderr.splitlines() if "warning" in ln]
    assert len(warnings) == 1 and "work-stealing driver" in warnings[0], r.stderr
    assert "Traceback" not in r.stderr
    r = run()
    assert r.returncode == 0 and r.stderr == "", r.stderr

"""The files revec writes, under hostile conditions: output targets that are not regular
files, a full disk under the cache directory, a cache directory that cannot be written.

Everything stays in the test's temporary directory: device nodes are made there with
``mknod`` (``c 1 7`` is a full device like ``/dev/full``, ``c 1 3`` a null device), and the
full disk (a small tmpfs) and the read-only cache (a read-only bind mount) exist only in
a private mount namespace (``unshare -m``) of the one command that uses them, so they
vanish with it.  Root is not denied writes by a directory's mode, but a read-only mount
is read-only for root too (``EROFS``), and a full tmpfs is full for root too
(``ENOSPC``): these are the real faults, not simulations.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import threading
from functools import cache
from pathlib import Path

import pytest

from revec.cli import main
from revec.files import write_atomic

ROOT = Path(__file__).resolve().parent.parent
FIB = ROOT / "tests" / "programs" / "fib.py"
ANSWER = "count = 6765"  # fib(20), plain arithmetic
FULL_DEVICE = (1, 7)  # Linux's major/minor of /dev/full
NULL_DEVICE = (1, 3)  # of /dev/null


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("REVEC_CFLAGS", None)
    env.update(extra)
    return env


@cache
def _generated() -> str:
    """What ``revec transform fib.py`` prints on standard output (the oracle of the
    file written with ``-o``)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["transform", str(FIB)]) == 0
    assert out.getvalue()
    return out.getvalue()


def _mknod(path: Path, dev: tuple[int, int]) -> Path:
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(*dev))
    except PermissionError:
        pytest.skip("mknod needs root")
    return path


def _transform(target: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["transform", str(FIB), "-o", str(target)])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------ item 1: output targets of every kind
def test_regular_file_is_replaced_atomically(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "gen.py"
    target.write_text("old\n")
    target.chmod(0o640)
    before = target.stat().st_ino
    code, out, err = _transform(target, capsys)
    assert (code, err) == (0, ""), err
    assert target.read_text() == _generated()
    st = target.stat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o640
    assert st.st_ino != before  # a new file renamed over the old one, never rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen.py"]  # no temporary


def test_symlink_writes_its_target(tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "gen.py"
    real.write_text("old\n")
    real.chmod(0o600)
    link = tmp_path / "link.py"
    link.symlink_to("real/gen.py")
    code, out, err = _transform(link, capsys)
    assert (code, err) == (0, ""), err
    assert link.is_symlink() and os.readlink(link) == "real/gen.py"
    assert real.read_text() == _generated()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["gen.py"]
    # a link to nothing yet: its target is created, the link kept (as `cat >` would)
    (tmp_path / "real" / "gen.py").unlink()
    code, out, err = _transform(link, capsys)
    assert (code, err) == (0, ""), err
    assert link.is_symlink() and real.read_text() == _generated()


def test_null_device_is_written_in_place(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    null = _mknod(tmp_path / "null", NULL_DEVICE)
    code, out, err = _transform(null, capsys)
    assert (code, err) == (0, ""), err
    st = null.stat()
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(*NULL_DEVICE)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


def test_full_device_fails_with_one_line(tmp_path: Path) -> None:
    """``-o DIR/full``: the usual one-line message for a failed write (status 1, as for a
    full disk on standard output), no traceback, and the device stays a device."""
    full = _mknod(tmp_path / "full", FULL_DEVICE)
    r = subprocess.run([sys.executable, "-m", "revec", "transform", str(FIB), "-o",
                        str(full)], capture_output=True, text=True, env=_env(), timeout=300)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"revec: error: cannot write {full}: No space left on device"], r.stderr
    assert r.stdout == ""  # no "wrote ..."
    st = full.stat()
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(*FULL_DEVICE)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]


def test_fifo_is_written_in_place(tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def reader() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    code, out, err = _transform(fifo, capsys)
    thread.join(timeout=20)
    assert (code, err) == (0, ""), err
    assert got == [_generated().encode()]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def test_socket_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        with pytest.raises(OSError) as info:
            write_atomic(path, "text")
    assert info.value.errno == errno.ENXIO and info.value.filename == str(path)
    assert stat.S_ISSOCK(path.stat().st_mode)


@pytest.mark.parametrize("data", ["text\n", b"\x00bytes\xff"], ids=["str", "bytes"])
def test_every_writer_shares_the_rules(tmp_path: Path, data: str | bytes) -> None:
    """Reports, benchmark records and caches are written by the same function: a link
    to a file, a null device and a full device, with text and with bytes."""
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomic(link, data)
    assert link.is_symlink()
    assert real.read_bytes() == (data if isinstance(data, bytes) else data.encode())
    null = _mknod(tmp_path / "null", NULL_DEVICE)
    write_atomic(null, data)
    assert stat.S_ISCHR(null.stat().st_mode)
    full = _mknod(tmp_path / "full", FULL_DEVICE)
    with pytest.raises(OSError) as info:
        write_atomic(full, data)
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(full)
    assert stat.S_ISCHR(full.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "link.json", "null",
                                                          "real.json"]


# ---------------------------------------- items 7 and 8: a full or read-only cache dir
@cache
def _can_mount() -> bool:
    """Whether this process may make a private mount namespace with a tmpfs and a
    read-only bind mount in it (root in most containers; not a normal user)."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        script = (f"mount -t tmpfs -o size=4k none {d} && mount --bind {d} {d} && "
                  f"mount -o remount,ro,bind {d}")
        r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                           timeout=60)
        return r.returncode == 0


needs_mount = pytest.mark.skipif(not _can_mount(),
                                 reason="needs unshare -m and mount (root)")
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def _in_namespace(mounts: str, cache_dir: Path, cc: Path,
                  env: dict[str, str] | None = None, backend: str = "c"
                  ) -> subprocess.CompletedProcess[str]:
    """``revec run fib.py fib 20 --backend c`` with ``REVEC_CACHE_DIR=cache_dir`` after
    the shell commands ``mounts``, in a private mount namespace."""
    cmd = shlex.join([sys.executable, "-m", "revec", "run", str(FIB), "fib", "20",
                      "--backend", backend])
    return subprocess.run(["unshare", "-m", "sh", "-c", f"{mounts} && exec {cmd}"],
                          capture_output=True, text=True, timeout=300,
                          env=_env(REVEC_CACHE_DIR=str(cache_dir), CC=str(cc),
                                   REVEC_NUMBA_CACHE="1", **(env or {})))


def _logging_cc(folder: Path) -> Path:
    """A compiler that is gcc and logs each of its runs (one line) to ``folder/cc.log``."""
    cc = folder / "logging-cc"
    cc.write_text(f'#!/bin/sh\necho "$@" >> {shlex.quote(str(folder / "cc.log"))}\n'
                  f'exec {shlex.quote(shutil.which("gcc") or "gcc")} "$@"\n')
    cc.chmod(0o755)
    return cc


def _runs(folder: Path) -> int:
    log = folder / "cc.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a cache holding fib's built C module, the logging compiler that built it),
    built once for the tests below, which only read it (read-only, or copied)."""
    if not _can_mount() or shutil.which("gcc") is None:
        pytest.skip("needs unshare -m, mount and gcc")
    folder = tmp_path_factory.mktemp("built")
    cc = _logging_cc(folder)
    r = subprocess.run([sys.executable, "-m", "revec", "run", str(FIB), "fib", "20",
                        "--backend", "c"], capture_output=True, text=True, timeout=300,
                       env=_env(REVEC_CACHE_DIR=str(folder / "cache"), CC=str(cc)))
    assert r.returncode == 0 and r.stdout.splitlines()[0] == ANSWER, r.stderr
    assert _runs(folder) >= 2  # --version and the builds
    return folder / "cache", cc


# item 7: the size of the tmpfs decides which write fails first.  C: one page (the
# first source file written for the compiler), 32 KiB (the compiler's own output: its
# message), 48 KiB (a checksum record).  numba (slow: its import alone is seconds):
# 8 KiB (the generated module), 40 KiB (numba's own cache files, written while it
# compiles)
FULL_DISKS = [("c", "4k"), ("c", "32k"), ("c", "48k"),
              pytest.param("numba", "8k", marks=pytest.mark.slow),
              pytest.param("numba", "40k", marks=pytest.mark.slow)]


@needs_mount
@needs_gcc
@pytest.mark.parametrize(("backend", "size"), FULL_DISKS)
def test_full_cache_disk_names_the_file_and_the_cache(tmp_path: Path, backend: str,
                                                      size: str) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    cc = _logging_cc(tmp_path)
    r = _in_namespace(f"mount -t tmpfs -o size={size} none {cache_dir}", cache_dir, cc,
                      backend=backend)
    assert r.returncode == 1, r.stderr
    assert r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"revec: error: cannot write {cache_dir}/"), line
    assert line.count("No space left on device") == 1, line
    assert f"under revec's cache directory {cache_dir}:" in line, line
    assert "set REVEC_CACHE_DIR to a directory on a disk with room" in line, line
    assert "standard output" not in line


@needs_mount
def test_full_cache_disk_still_serves_built_modules(tmp_path: Path,
                                                    built: tuple[Path, Path]) -> None:
    """A warm cache on a disk that has since filled up: the built module is loaded
    (nothing is written on a warm load)."""
    cache_dir, cc = built
    target = tmp_path / "cache"
    target.mkdir()
    fill = f"(head -c 4M /dev/zero > {target}/filler 2>/dev/null; true)"
    r = _in_namespace(f"mount -t tmpfs -o size=2m none {target} && "
                      f"cp -a {cache_dir}/. {target}/ && {fill} && "
                      f"! (echo x > {target}/probe) 2>/dev/null", target, cc)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == ANSWER
    assert r.stderr == ""


# item 8: a read-only cache directory
@needs_mount
def test_read_only_cache_with_built_module_is_used(tmp_path: Path,
                                                   built: tuple[Path, Path]) -> None:
    cache_dir, cc = built
    runs = _runs(cc.parent)
    r = _in_namespace(f"mount --bind {cache_dir} {cache_dir} && "
                      f"mount -o remount,ro,bind {cache_dir} && "
                      f"! touch {cache_dir}/probe 2>/dev/null", cache_dir, cc,
                      env={"TMPDIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == ANSWER
    assert r.stderr == ""  # no warning: nothing had to be built
    assert _runs(cc.parent) == runs  # no compiler run, not even --version
    assert list(tmp_path.iterdir()) == []  # no private cache


@needs_mount
@needs_gcc
@pytest.mark.parametrize("backend", ["c", pytest.param("numba", marks=pytest.mark.slow)])
def test_read_only_empty_cache_falls_back_to_a_private_one(tmp_path: Path,
                                                          backend: str) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    tmp = tmp_path / "tmp"  # where the private cache goes (and the compiler's files)
    tmp.mkdir()
    cc = _logging_cc(tmp_path)
    r = _in_namespace(f"mount --bind {cache_dir} {cache_dir} && "
                      f"mount -o remount,ro,bind {cache_dir} && "
                      f"! touch {cache_dir}/probe 2>/dev/null", cache_dir, cc,
                      env={"TMPDIR": str(tmp)}, backend=backend)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == ANSWER
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"revec: warning: the cache directory {cache_dir} cannot be "
                           "written (Read-only file system); building in a private "
                           f"temporary cache {tmp}/revec-cache-"), line
    assert line.endswith("(set REVEC_CACHE_DIR to a writable directory to keep what is "
                         "built)"), line
    if backend == "c":
        assert _runs(tmp_path) >= 2  # it was built, not found
    assert list(cache_dir.iterdir()) == []
    assert list(tmp.iterdir()) == []  # the private cache is removed at exit


def test_faults_doc_names_real_tests() -> None:
    """Every test docs/faults.md cites exists (``file.py::test``, or ``::test`` for one
    more in the file cited before it on the line), and every line cites one."""
    import re

    rows = [ln for ln in (ROOT / "docs" / "faults.md").read_text().splitlines()
            if ln.startswith("| ") and not ln.startswith(("| Fault", "|---"))]
    assert rows
    for row in rows:
        cited = re.findall(r"`([\w./]*\.py)?::(\w+)`", row.rsplit("|", 2)[-2])
        assert cited, row
        file = ""
        for name, test in cited:
            file = name or file
            source = (ROOT / "tests" / file).read_text()
            assert re.search(rf"^def {test}\(", source, re.M), f"{file}::{test}"

"""The command line under the conditions a new user meets: closed pipes, full disks,
output paths, and what the commands print."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def revec(*args: str, cwd: Path | None = None, **kw: object
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "revec", *args], capture_output=True,
                          text=True, env=_env(), cwd=cwd or ROOT, timeout=600, **kw)  # type: ignore[call-overload]


# ----------------------------------------------------------------- closed pipe, full disk
CLOSED_PIPE = [
    ["treegen", "sample", "31", "10", "--count", "200000"],
    ["demo"],
    ["run", "tests/programs/fib.py", "fib", "20", "--json", "--variant", "seq"],
]


@pytest.mark.parametrize("cmd", CLOSED_PIPE, ids=lambda c: c[0])
def test_closed_pipe_ends_quietly(cmd: list[str]) -> None:
    """`revec ... | head -1`: the reader goes away after one line."""
    proc = subprocess.Popen([sys.executable, "-m", "revec", *cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(), cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    rc = proc.wait(timeout=600)
    assert first
    assert "Traceback" not in err and "Error" not in err, err
    assert err == ""
    # 141 (as SIGPIPE) when the pipe was closed while writing; 0 if all output fit
    assert rc in (0, 141)


def test_closed_pipe_status_is_141() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "revec", *CLOSED_PIPE[0]],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                            cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    assert proc.wait(timeout=600) == 141
    assert proc.stderr.read() == b""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("cmd", [CLOSED_PIPE[0], CLOSED_PIPE[2],
                                 ["check", "tests/programs/fib.py"]], ids=lambda c: c[0])
def test_full_disk_is_one_line(cmd: list[str]) -> None:
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "revec", *cmd], stdout=full,
                           stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT,
                           timeout=600)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0] == "revec: error: cannot write standard output: No space left on device"


def test_full_disk_output_file_is_one_line(tmp_path: Path) -> None:
    """A failed write of an output file names the file and leaves nothing behind."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    target = tmp_path / "out.py"
    code = ("import sys, revec.cli.common as c\n"
            "real = c.write_atomic\n"
            "def full(path, text):\n"
            "    import errno, os\n"
            "    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))\n"
            "c.write_atomic = full\n"
            "from revec.cli import main\n"
            f"sys.exit(main(['transform', 'tests/programs/fib.py', '-o', {str(target)!r}]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env(), cwd=ROOT, timeout=600)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"revec: error: cannot write {target}: No space left on device"]
    assert not target.exists()

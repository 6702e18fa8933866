"""The command line under the conditions a new user meets: closed pipes, full disks,
output paths, and what the commands print."""

from __future__ import annotations

import json
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


# ----------------------------------------------------------------------- output paths
TWO_TASKS = """\
import numpy as np

from revec import Reducer, reduce, spawn, task

count = Reducer(np.int64, "sum")
other = Reducer(np.int64, "sum")


@task
def fib(n: np.int32 = 10):
    if n < 2:
        reduce(count, n)
    else:
        spawn(fib, n - 1)
        spawn(fib, n - 2)


@task
def down(n: np.int32 = 5):
    if n < 1:
        reduce(other, 1)
    else:
        spawn(down, n - 1)
"""
FIB = str(ROOT / "tests" / "programs" / "fib.py")


def test_transform_output_names_a_file(tmp_path: Path) -> None:
    (tmp_path / "gen").mkdir()
    r = revec("transform", FIB, "-o", "gen/prog_gen.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "gen" / "prog_gen.py").is_file()
    assert "def kernel" in (tmp_path / "gen" / "prog_gen.py").read_text()


def test_transform_missing_parent_is_an_error(tmp_path: Path) -> None:
    r = revec("transform", FIB, "-o", "gen/prog_gen.py", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "revec: error: -o gen/prog_gen.py: directory gen does not exist "
        "(create it, or pass --mkdir)"]
    assert not (tmp_path / "gen").exists()
    r = revec("transform", FIB, "-o", str(tmp_path / "nonexistent" / "x.py"))
    assert r.returncode == 2 and not (tmp_path / "nonexistent").exists()
    r = revec("transform", FIB, "-o", "gen/prog_gen.py", "--mkdir", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "gen" / "prog_gen.py").is_file()


def test_transform_directory_output(tmp_path: Path) -> None:
    prog = tmp_path / "two.py"
    prog.write_text(TWO_TASKS)
    # a trailing '/' names a directory, which must exist
    r = revec("transform", str(prog), "-o", "gen/newdir/", cwd=tmp_path)
    assert r.returncode == 2 and "does not exist" in r.stderr
    assert not (tmp_path / "gen").exists()
    (tmp_path / "out").mkdir()
    r = revec("transform", str(prog), "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["two_down.py",
                                                                    "two_fib.py"]
    # several tasks into something that is not a directory: an error, nothing written
    r = revec("transform", str(prog), "-o", "two_gen.py", cwd=tmp_path)
    assert r.returncode == 2 and "2 tasks" in r.stderr and "--task" in r.stderr
    assert not (tmp_path / "two_gen.py").exists()
    r = revec("transform", str(prog), "--task", "down", "-o", "two_gen.py", cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "two_gen.py").is_file()


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_output_file_mode_follows_umask(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "gen.py"
    r = subprocess.run(
        [sys.executable, "-c", f"import os, sys; os.umask({umask}); from revec.cli import "
         f"main; sys.exit(main(['transform', {FIB!r}, '-o', {str(target)!r}]))"],
        capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_simulate_output_checked_before_running(tmp_path: Path) -> None:
    r = revec("simulate", "--nodes", "31", "--height", "6", "--trials", "10",
              "-o", str(tmp_path / "missing" / "out.json"))
    assert r.returncode == 2 and "does not exist" in r.stderr
    assert not (tmp_path / "missing").exists()


def test_bench_does_not_replace_stored_results(tmp_path: Path) -> None:
    stored = tmp_path / "bench" / "quick" / "results" / "fib.json"
    stored.parent.mkdir(parents=True)
    stored.write_text("{}")
    r = revec("bench", "fib", "--size", "quick", "--out", str(tmp_path), "--no-progress")
    assert r.returncode == 2
    assert "already stored" in r.stderr and "--overwrite" in r.stderr
    assert stored.read_text() == "{}"
    (tmp_path / "compaction.md").write_text("kept")
    r = revec("bench", "compaction", "--out", str(tmp_path), "--no-progress")
    assert r.returncode == 2 and (tmp_path / "compaction.md").read_text() == "kept"


def test_bench_from_the_repository_root_keeps_committed_reports() -> None:
    """The default size from a checkout's root would replace reports/bench: refused."""
    if not (ROOT / "reports" / "bench" / "results" / "fib.json").exists():
        pytest.skip("no committed benchmark results in this checkout")
    before = (ROOT / "reports" / "bench" / "results" / "fib.json").read_bytes()
    r = revec("bench", "fib", "--no-progress", cwd=ROOT)
    assert r.returncode == 2 and "already stored" in r.stderr
    assert (ROOT / "reports" / "bench" / "results" / "fib.json").read_bytes() == before


@pytest.mark.slow
def test_bench_out_dir(tmp_path: Path) -> None:
    r = revec("bench", "fib", "--size", "quick", "--out", str(tmp_path), "--no-progress",
              "--repeats", "1", "--backends", "c")
    assert r.returncode == 0, r.stderr
    res = tmp_path / "bench" / "quick" / "results" / "fib.json"
    assert json.loads(res.read_text())["name"] == "fib"
    assert str(tmp_path / "bench" / "quick") in r.stdout


# ------------------------------------------------------------- what the user reads
def test_version() -> None:
    from revec import __version__

    r = revec("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"revec {__version__}"


def test_bench_list_names_every_benchmark() -> None:
    from revec.bench import names
    from revec.bench.presets import BENCHMARKS

    r = revec("bench", "--list")
    assert r.returncode == 0
    listed = [ln.split()[0] for ln in r.stdout.splitlines()]
    assert listed[: len(BENCHMARKS)] == list(BENCHMARKS)
    assert set(listed) == set(BENCHMARKS) | set(names())


def test_bfs_shows_unbounded_block_size(tmp_path: Path) -> None:
    r = revec("run", FIB, "fib", "10", "--variant", "bfs", "--backend", "c")
    assert r.returncode == 0, r.stderr
    assert "B=unbounded" in r.stdout and str(1 << 62) not in r.stdout
    r = revec("run", FIB, "fib", "10", "--variant", "bfs", "--backend", "c", "--json")
    doc = json.loads(r.stdout)
    assert doc["block_size"] is None and doc["reducers"] == {"count": 55}
    r = revec("run", FIB, "fib", "10", "--variant", "blocked", "--backend", "c", "--json",
              "--block-size", "64")
    assert json.loads(r.stdout)["block_size"] == 64


def test_run_prints_only_the_tasks_own_reducers(tmp_path: Path) -> None:
    prog = tmp_path / "two.py"
    prog.write_text(TWO_TASKS)
    r = revec("run", str(prog), "down", "5", "--variant", "seq")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "other = 1" and "count" not in r.stdout
    r = revec("run", str(prog), "fib", "10", "--backend", "c", "--json")
    assert json.loads(r.stdout)["reducers"] == {"count": 55}


def test_demo_names_its_back_end_and_full_results() -> None:
    r = revec("demo", "--backend", "c")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "c back end" in lines[0]
    rows = [ln for ln in lines if ln.startswith("pathsum")]
    assert len(rows) == 4
    for row in rows:  # three reducers, none cut
        assert "total=" in row and "longest=" in row and "shortest=" in row
        assert row.split()[2] == ("python" if " seq " in row else "c")


def test_compiling_is_announced_on_a_terminal() -> None:
    import io
    import time

    from revec.cli.common import announce_slow

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        with announce_slow("compiling x ...", after=0.05, stream=stream):
            time.sleep(0.5)
    assert tty.getvalue() == "compiling x ...\n" and pipe.getvalue() == ""
    fast = Tty()
    with announce_slow("compiling x ...", after=0.5, stream=fast):
        pass
    time.sleep(0.7)
    assert fast.getvalue() == ""


def test_readme_memory_example_stops(tmp_path: Path) -> None:
    """The README's --max-memory example stops with the budget message."""
    line = next(ln for ln in (ROOT / "README.md").read_text().splitlines()
                if "--max-memory" in ln and ln.startswith("revec run"))
    words = line.split("#")[0].split()
    assert words[:3] == ["revec", "run", "fib.py"]
    (tmp_path / "fib.py").write_text((ROOT / "tests" / "programs" / "fib.py").read_text())
    r = revec(*words[1:], cwd=tmp_path)
    assert r.returncode == 2
    assert "memory budget" in r.stderr and "Traceback" not in r.stderr


def test_no_tracker_references_in_user_text() -> None:
    import re

    pat = re.compile(r"issue [0-9]", re.I)
    hits = []
    for top in ("reports", "docs", "revec", "README.md"):
        base = ROOT / top
        for f in [base] if base.is_file() else base.rglob("*"):
            if f.is_file() and f.suffix in (".md", ".py", ".txt", ".json", ".c", ".h"):
                for i, ln in enumerate(f.read_text(errors="replace").splitlines(), 1):
                    if pat.search(ln):
                        hits.append(f"{f.relative_to(ROOT)}:{i}")
    assert hits == []


def test_simulate_help_explains_columns_and_n_h() -> None:
    r = revec("simulate", "--help")
    assert r.returncode == 0
    for word in ("mean", "std", "occupancy", "wide share", "N must be odd", "height exactly H"):
        assert word in " ".join(r.stdout.split()), word


def test_docs_say_float_sums_agree_up_to_rounding() -> None:
    text = " ".join((ROOT / "docs" / "language.md").read_text().split())
    assert "may differ from the plain-Python run in the last digits" in text
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "bit for bit" not in readme

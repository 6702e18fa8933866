"""Bad input that used to end in a Python traceback (the hostile trial's items 4, 5 and
9): a directory given as the program, memory sizes beyond what the drivers count, and
scheduler addresses that are not addresses.  Each is one line on stderr, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from revec.api import run_program
from revec.cli import main
from revec.errors import RevecError

ROOT = Path(__file__).resolve().parents[1]
FIB = str(ROOT / "benchmarks" / "fib.py")


def _one_line_error(argv: list[str], capsys: pytest.CaptureFixture[str], message: str) -> None:
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert message in err, err
    assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("command", [["check"], ["run"], ["transform", "--backend", "c"]])
def test_a_directory_is_not_a_program(command: list[str], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "adir"
    folder.mkdir()
    argv = [command[0], str(folder), *command[1:]]
    if command[0] == "run":
        argv.append("fib")
    _one_line_error(argv, capsys, f"{folder} is a directory, not a program file")


@pytest.mark.parametrize("size", ["99999999T", "inf", "nan", "1e30"])
def test_memory_sizes_beyond_count(size: str, capsys: pytest.CaptureFixture[str]) -> None:
    message = ("cannot read memory size" if size in ("inf", "nan")
               else "is more than revec can count")
    _one_line_error(["run", FIB, "fib", "10", "--max-memory", size], capsys, message)


def test_api_budget_beyond_count() -> None:
    with pytest.raises(RevecError, match="more than revec can count"):
        run_program(FIB, "fib", (10,), backend="c", max_memory=2**70)


@pytest.mark.parametrize("address, why", [
    ("127.0.0.1", "missing port number"),
    ("foo://bar", "unknown address scheme"),
    ("", "missing port number"),
])
def test_scheduler_addresses(address: str, why: str,
                             capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")
    _one_line_error(["run", FIB, "fib", "10", "--scheduler", address], capsys,
                    f"--scheduler {address!r} is not a Dask scheduler address ({why}")


@pytest.mark.parametrize("option, value, message", [
    ("--workers", "-1", "--workers must be at least 1, got -1"),
    ("--workers", "0", "--workers must be at least 1, got 0"),
    ("--workers", "two", "--workers must be an integer, got 'two'"),
    ("--block-size", "-3", "--block-size must be at least 1, got -3"),
    ("--simd-width", "0", "--simd-width must be at least 1, got 0"),
    ("--reexp-threshold", "-1", "--reexp-threshold must be at least 0, got -1"),
    ("--dask-local", "-2", "--dask-local must be at least 1, got -2"),
])
def test_numeric_options_one_style(option: str, value: str, message: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Every bad number is the same one line (item 13: -1 used to print the usage and
    'must not be negative', 0 'must be at least 1')."""
    _one_line_error(["run", FIB, "fib", "10", option, value], capsys, message)


FIB_BODY = '''import numpy as np
from revec import task, spawn, reduce, Reducer

count = Reducer(np.int64, "sum")


@task
def fib(n: np.int32):
    if n < 2:
        reduce(count, n)
    else:
        spawn(fib, n - 1)
        spawn(fib, n - 2)
'''


@pytest.mark.parametrize("name, data", [
    ("latin1.py", "# -*- coding: latin-1 -*-\n# café\n".encode("latin-1")
     + FIB_BODY.encode()),
    ("bom.py", b"\xef\xbb\xbf" + FIB_BODY.encode()),
])
def test_python_sources_read_as_python_reads_them(name: str, data: bytes,
                                                  tmp_path: Path) -> None:
    """Item 12: a PEP 263 coding line or a UTF-8 byte-order mark (Python runs both)."""
    path = tmp_path / name
    path.write_bytes(data)
    for variant, backend in (("seq", "auto"), ("reexp", "c")):
        r = run_program(path, "fib", (10,), variant=variant, backend=backend)
        assert r.reducers["count"] == 55


@pytest.mark.parametrize("suffix", [".C", ".cpp", ".cc", ".h"])
def test_cpp_suffixes_are_not_programs(suffix: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Item 12: FIB.C is C++ to gcc; revec said a Python syntax error."""
    path = tmp_path / f"FIB{suffix}"
    path.write_text((ROOT / "benchmarks" / "cilk" / "fib.c").read_text())
    _one_line_error(["check", str(path)], capsys,
                    "revec reads Python files (.py) and Cilk C files (.c)")

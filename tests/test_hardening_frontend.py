"""Programs whose meaning would change silently are rejected by `revec check`, with a
location; command-line combinations that would not do what they say are refused."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from revec.api import run_program
from revec.errors import RevecError
from revec.frontend import load_program

ROOT = Path(__file__).resolve().parent.parent

NARROW = """\
import numpy as np

from revec import Reducer, reduce, spawn, task

count = Reducer(np.{rty}, "sum")


@task
def t(n: np.int32 = 4, x: np.float64 = 1.75):
    if n < 1:
        reduce(count, {value})
    else:
        spawn(t, n - 1, x)
"""


@pytest.mark.parametrize("rty", ["int64", "int32", "uint8", "bool_"])
@pytest.mark.parametrize("value", ["x", "x * 2", "np.float32(x)", "0.5"])
def test_float_into_integer_reducer_is_rejected(write_program: Callable[..., Path],
                                                rty: str, value: str) -> None:
    path = write_program(NARROW.format(rty=rty, value=value))
    with pytest.raises(RevecError) as info:
        load_program(path)
    err = info.value
    assert "would truncate" in err.message and "convert explicitly" in err.message
    assert err.loc is not None and (err.loc.line, err.loc.col) == (11, 23)


@pytest.mark.parametrize("value,want", [("np.int64(x)", 1), ("np.int64(x * 2)", 3),
                                        ("np.int64(np.floor(x))", 1)])
def test_explicit_conversion_is_accepted(write_program: Callable[..., Path], value: str,
                                         want: int) -> None:
    path = write_program(NARROW.format(rty="int64", value=value))
    load_program(path)
    r = run_program(path, "t", (), variant="seq")
    assert r.reducers["count"] == want  # one leaf: int64 of 1.75, 3.5, floor(1.75)


def test_float_into_float_reducer_is_fine(write_program: Callable[..., Path]) -> None:
    path = write_program(NARROW.format(rty="float64", value="x"))
    assert run_program(path, "t", (), variant="seq").reducers["count"] == 1.75


DEFAULT = """\
import numpy as np

from revec import Reducer, reduce, spawn, task

count = Reducer(np.int64, "sum")


@task
def t(n: np.{ty} = {default}):
    if n < 1:
        reduce(count, 1)
    else:
        spawn(t, n - 1)
"""


@pytest.mark.parametrize("ty,default", [("int8", "300"), ("int8", "-129"), ("uint8", "-1"),
                                        ("uint16", "65536"), ("int32", "2**31"),
                                        ("int8", "2.5"), ("int32", "'7'")])
def test_default_out_of_range_is_rejected_by_check(write_program: Callable[..., Path],
                                                   ty: str, default: str) -> None:
    path = write_program(DEFAULT.format(ty=ty, default=default))
    with pytest.raises(RevecError) as info:
        load_program(path)
    err = info.value
    assert "default" in err.message and "'n'" in err.message
    assert err.loc is not None and (err.loc.line, err.loc.col) == (9, 7 + len(f"n: np.{ty} = "))


@pytest.mark.parametrize("ty,default", [("int8", "127"), ("int8", "-128"), ("uint8", "255"),
                                        ("int32", "2**31 - 1"), ("int8", "3.0")])
def test_default_in_range_is_accepted(write_program: Callable[..., Path], ty: str,
                                      default: str) -> None:
    path = write_program(DEFAULT.format(ty=ty, default=default))
    load_program(path)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "revec", *args], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
                          timeout=600)


def test_check_command_rejects_default_out_of_range(write_program: Callable[..., Path]
                                                    ) -> None:
    path = write_program(DEFAULT.format(ty="int8", default="300"))
    r = _cli("check", str(path))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.splitlines()[0].endswith(
        "error: the default 300 of parameter 'n' is out of range for int8 [-128, 127]")


def test_seq_with_a_backend_is_refused() -> None:
    r = _cli("run", "tests/programs/fib.py", "fib", "10", "--variant", "seq",
             "--backend", "c")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("revec: error: --variant seq runs the plain recursive Python")
    r = _cli("run", "tests/programs/fib.py", "fib", "10", "--variant", "seq")
    assert r.returncode == 0 and r.stdout.startswith("count = 55")


def test_blocks_smaller_than_the_simd_width_warn() -> None:
    r = _cli("run", "tests/programs/fib.py", "fib", "10", "--variant", "blocked",
             "--block-size", "4", "--simd-width", "8")
    assert r.returncode == 0 and r.stdout.startswith("count = 55")
    assert r.stderr == ("revec: warning: --block-size 4 is smaller than the SIMD width 8: "
                        "every block leaves lanes idle\n")


def test_endless_recursion_in_seq_is_one_line(write_program: Callable[..., Path]) -> None:
    """Found by the mutation fuzzer: a task that never reaches its base case."""
    path = write_program(DEFAULT.format(ty="int32", default="5").replace("n - 1", "n + 1"))
    r = _cli("run", str(path), "t", "--variant", "seq")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("revec: error: the plain Python run of 't' went past")

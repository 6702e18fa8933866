"""Importing revec turns numba's error colouring off unless the user chose (the import
graph checks that were here are package-wide now: tests/test_layering.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_numba_error_colouring_is_off_unless_the_user_asks() -> None:
    """Importing revec turns off numba's colouring of error messages (a cost paid for
    every rejected overload while a kernel is typed), unless the user set it."""
    import os
    import subprocess
    import sys

    code = ("import os, revec, numba.core.errors as e; print(type(e.termcolor()).__name__, "
            "repr(os.environ['NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING']))")
    env = {k: v for k, v in os.environ.items()
           if k != "NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"}
    run = [sys.executable, "-c", code]
    out = subprocess.run(run, capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    assert out.stdout.split() == ["NOPColorScheme", "'1'"]
    env["NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"] = ""  # the user's choice: colours on
    out = subprocess.run(run, capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    assert out.stdout.split()[1] == "''"  # kept (numba colours if colorama is installed)

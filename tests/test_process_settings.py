"""Importing revec changes no process-wide setting, and revec's own numba compiles
format numba's messages without colour only while they run.

Both run in a fresh interpreter: the point is what ``import revec`` does to a process
that has not seen revec yet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _env_without_highlighting_choice() -> dict[str, str]:
    """This environment without NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING: numba colours
    its messages (when colorama is installed), as for a user who did not choose."""
    return {k: v for k, v in os.environ.items()
            if k != "NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"}


def _run(code: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=_env_without_highlighting_choice())
    result: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
    return result


SETTINGS = '''
import json, os, sys
def settings():
    import numba.core.config as config, numba.core.errors as errors
    return {"environ": dict(os.environ), "recursionlimit": sys.getrecursionlimit(),
            "config": {k: repr(v) for k, v in vars(config).items() if k.isupper()},
            "scheme": type(errors.termcolor()).__name__,
            "scheme_attrs": sorted(vars(errors.termcolor()))}
'''


def test_import_revec_changes_no_process_setting() -> None:
    """``import revec`` (and the API and command line on top of it) leaves the
    environment, the recursion limit and numba's configuration as they were, and does
    not import numba itself."""
    code = SETTINGS + '''
env, limit = dict(os.environ), sys.getrecursionlimit()
import revec
numba_loaded = "numba" in sys.modules
same = dict(os.environ) == env and sys.getrecursionlimit() == limit
before = settings()         # numba imported now, after revec
import revec.api, revec.cli
revec.cli.build_parser()
print(json.dumps({"numba_loaded": numba_loaded, "same": same,
                  "unchanged": settings() == before, "scheme": before["scheme"]}))
'''
    got = _run(code)
    assert got["numba_loaded"] is False
    assert got["same"] is True
    assert got["unchanged"] is True

    # numba imported first: its configuration, as numba itself set it up, is kept
    code = SETTINGS + '''
before = settings()
import revec, revec.api, revec.cli
revec.cli.build_parser()
print(json.dumps({"unchanged": settings() == before, "scheme": before["scheme"]}))
'''
    got2 = _run(code)
    assert got2["unchanged"] is True
    assert got2["scheme"] == got["scheme"]


def test_revec_compiles_without_colour_and_restores_it() -> None:
    """A compile through revec's numba pipeline marks up (almost) no message with
    colours, a plain numba compile of the same function still does, and afterwards
    numba's colour scheme is as it was."""
    pytest.importorskip("colorama")
    code = '''
import json
import numpy as np, numba
from numba.core import errors
from revec.runtime.numba_pipeline import njit

scheme = errors.termcolor()
cls = type(scheme)
calls = [0]
real = cls._markup
def counting(self, *a, **k):
    calls[0] += 1
    return real(self, *a, **k)
cls._markup = counting

def f(x, a):
    y = np.int32(x) + np.int64(2)
    return a[y] * np.float32(2.5) + abs(x) + max(x, 3)

def bad(x):
    return x.nonexistent

out = {"scheme": cls.__name__}
for name, jit in (("revec", njit), ("numba", numba.njit)):
    calls[0] = 0
    jit(f)(np.int32(1), np.arange(10.0))
    out[name + "_markups"] = calls[0]
    try:
        jit(bad)(1)
    except errors.TypingError as err:
        out[name + "_escapes"] = str(err).count("\\x1b[")
    out[name + "_after"] = sorted(vars(errors.termcolor()))
out["same_instance"] = errors.termcolor() is scheme
print(json.dumps(out))
'''
    got = _run(code)
    assert got["scheme"] == "HighlightColorScheme"   # colours on: the user did not choose
    # the plain numba compile formats dozens of coloured messages; revec's at most the
    # one for its argument types, outside the pipeline
    assert got["numba_markups"] > 20 and got["revec_markups"] <= 2, got
    assert got["revec_escapes"] == 0 and got["numba_escapes"] > 0, got
    # numba's own compile, after revec's, is coloured: the scheme was restored
    assert "_markup" not in got["revec_after"] and "_markup" not in got["numba_after"]
    assert got["same_instance"] is True

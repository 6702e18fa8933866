"""Shared fixtures: a private compile cache and helpers to write programs to files."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import chunk_cache

# Generated modules go to a per-session cache, so tests never depend on (or fill)
# the user's ~/.cache/revec.
# Hundreds of generated programs are compiled once each: skip numba's on-disk cache
# for them (it changes nothing but start-up time of a later process).
os.environ.setdefault("REVEC_NUMBA_CACHE", "0")
# The suite starts about a hundred Python processes (the CLI, cache and interrupt tests,
# pytest-xdist's workers, Dask's).  Where PYTHONDONTWRITEBYTECODE is set (some container
# images set it), each of them compiled revec's sources from text again: about 0.3 s of a
# 1.0 s `revec run ... --backend c` (2-core AMD EPYC).  The test session writes and
# reuses bytecode (in __pycache__, ignored by git) like a default Python.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
os.environ.setdefault("REVEC_CACHE_DIR", str(Path(__file__).parent / ".." / "build" /
                                             "test-cache"))

# CPython 3.11/3.12 maps and unmaps a 16 KiB stack chunk on every call that crosses a
# chunk boundary; under pytest's deep stacks numba's compiler hits that ~28,000 times
# per generated program (see tests/support/chunk_cache.c).  Measured on one differential
# shard (10 programs, 2-core AMD EPYC): system time 5.4-5.8 s -> 1.4-1.7 s.
chunk_cache.install(Path(os.environ["REVEC_CACHE_DIR"]) / "test-support")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite golden files from the current output")


@pytest.fixture
def write_program(tmp_path: Path) -> Callable[[str, str], Path]:
    def write(source: str, name: str = "prog.py") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source).lstrip())
        return path

    return write

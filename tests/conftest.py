"""Shared fixtures: a private compile cache and helpers to write programs to files."""

from __future__ import annotations

import gc
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
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


# Python's cyclic garbage collector rescans every long-lived object at each full
# collection, and a worker's heap grows with every numba compile (hundreds of kernels,
# and the compiler's own state kept for the process).  pytest ends a session with five
# full collections (its check for unraisable exceptions), which took about 9 s in each
# xdist worker after the whole suite (2-core AMD EPYC).  After each test the survivors
# are moved to the collector's permanent generation (gc.freeze): later collections,
# during the run and at its end, scan only what is newer.  The collection just before
# each freeze frees the garbage so far, so nothing unreachable is kept; an object
# frozen while alive is still freed by reference counting.  Measured on a clean clone
# (`.ci/run`, same machine, 2026-11-27): the suite's CPU time 1,178 s -> 924-934 s and
# pytest 9 min 38 s -> 7 min 33-35 s; peak memory unchanged (1.77 GB).
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield
    gc.collect()
    gc.freeze()


# The differential files' items (shards of 10-25 s each, two thirds of the suite's time)
HEAVY_FILES = frozenset({"tests/test_differential.py", "tests/test_returns_differential.py",
                         "tests/test_cilk_differential.py"})
# Files whose tests (and the processes they start) never load revec's numba runtime
# (checked: run alone in a fresh checkout, they leave no numba cache of
# revec/runtime), about 70 s of work on one core.
NUMBA_FREE_FILES = frozenset({
    "tests/test_frontend_errors.py", "tests/test_cilk_errors.py",
    "tests/test_returns_errors.py", "tests/test_hardening_frontend.py",
    "tests/test_c_steps.py", "tests/test_kernel_plan.py", "tests/test_cbuild.py",
    "tests/test_hardening_cwarn.py", "tests/test_layering.py", "tests/test_frontend_core.py",
    "tests/test_goldens.py"})


# trylast: after `-m` / `-k` deselection, so the halves are those of the items that run
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the items so that each half starts with every other heavy item and ends
    with light ones, the second half after the numba-free files.

    pytest-xdist's worksteal mode gives the first worker the first half of the
    collection and the second worker the rest, and an idle worker steals from the end of
    the other's queue.  In file order, one half held most of the differential shards, so
    the last items to run could be 20-second shards on one core while the other
    idled.  Heavy items first also compile the shared numba runtime early, before the
    subprocess tests that load it.

    A fresh checkout compiles that runtime once (about 20 s), under a file lock
    (revec.backends.numba_runner): a second worker asking for it meanwhile waits, idle,
    and then loads the compiled runtime.  So the second worker starts with the
    numba-free files and reaches its heavy items after the first worker has compiled
    the runtime.  The order is a function of the collection alone, so every worker
    computes the same."""
    def file_of(it: pytest.Item) -> str:
        return it.nodeid.split("::")[0]

    heavy = [it for it in items if file_of(it) in HEAVY_FILES]
    if not heavy:
        return
    free = [it for it in items if file_of(it) in NUMBA_FREE_FILES]
    light = [it for it in items
             if file_of(it) not in HEAVY_FILES and file_of(it) not in NUMBA_FREE_FILES]
    first, second = heavy[0::2], heavy[1::2]
    # the first half's light items; a selection with too few of them lets the numba-free
    # files start in the first half (they need no compiled runtime in either)
    take = min(max(len(items) // 2 - len(first), 0), len(light))
    items[:] = first + light[:take] + free + second + light[take:]


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

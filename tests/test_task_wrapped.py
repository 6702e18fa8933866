"""``@task`` over functools wrappers (lru_cache, cache, any functools.wraps decorator,
also one defined in another module) runs compiled with plain Python's answer, and
``Task.run`` takes ``revec run``'s options, checked by the same code."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from revec.errors import RevecError

ROOT = Path(__file__).resolve().parents[1]

DECORATORS = """
import functools


def traced(fn):
    calls = []

    @functools.wraps(fn)
    def inner(*args):
        calls.append(args)
        return fn(*args)

    inner.calls = calls
    return inner
"""

PROGRAM = """
import functools

import numpy as np

from revec import task
from wrapdeco import traced


@task
@functools.lru_cache(maxsize=None)
def cached(n: np.int64) -> np.int64:
    if n < 2:
        return n
    return cached(n - 1) + cached(n - 2)


@task
@functools.cache
def plain_cache(n):
    if n < 2:
        return 1
    return plain_cache(n - 1) + 2 * plain_cache(n - 3)


@task
@traced
def wrapped(n, k):
    if n <= k:
        return n
    return wrapped(n - 1, k) + wrapped(n - 2, k) + 1
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("wrapped")
    (d / "wrapdeco.py").write_text(textwrap.dedent(DECORATORS))
    (d / "wrapprog.py").write_text(textwrap.dedent(PROGRAM))
    sys.path.insert(0, str(d))
    try:
        for name in ("wrapdeco", "wrapprog"):
            sys.modules.pop(name, None)
        yield importlib.import_module("wrapprog")
    finally:
        sys.path.remove(str(d))


def test_wrapped_tasks_run_with_plain_pythons_answer(prog):
    assert prog.cached.run(30, backend="c").result == prog.cached(30) == 832040
    assert prog.plain_cache.run(25, backend="c").result == prog.plain_cache(25)
    assert prog.wrapped.run(18, 3, backend="c").result == prog.wrapped(18, 3)
    assert prog.wrapped.__wrapped__.calls  # plain Python went through the wrapper


def test_run_takes_the_command_line_options(prog):
    want = prog.cached(24)
    for options in (dict(workers=2, max_memory="256M", variant="blocked", block_size=64,
                         backend="c"),
                    dict(workers=1, max_memory=1 << 28, variant="reexp", block_size=32,
                         reexp_threshold=8, simd_width=4, compaction="scalar",
                         backend="c"),
                    dict(variant="bfs", backend="c", workers=None),
                    dict(variant="seq")):
        res = prog.cached.run(24, **options)
        assert res.result == want, options
    assert prog.cached.run(24, workers=2, backend="c").stats.workers == 2


@pytest.mark.parametrize("options, message", [
    (dict(workers=0), "workers must be at least 1, got 0"),
    (dict(block_size="x"), "block_size must be an integer, got 'x'"),
    (dict(reexp_threshold=-1), "reexp_threshold must be at least 0, got -1"),
    (dict(simd_width=0), "simd_width must be at least 1, got 0"),
    (dict(max_memory="lots"), "cannot read memory size 'lots'"),
    (dict(variant="dfs"), "unknown variant 'dfs'"),
    (dict(compaction="vector"), "unknown compaction 'vector'"),
])
def test_run_options_are_checked_as_the_command_line_checks_them(prog, options, message):
    with pytest.raises(RevecError, match=re.escape(message)):
        prog.cached.run(10, **options)


def test_every_command_line_option_has_a_run_keyword():
    """``revec run --help``'s options: each is a Task.run keyword, or what the result
    holds (--output, --json) or a Dask run (revec.cluster.run_dask) does."""
    import inspect

    from revec import RunnableTask

    out = subprocess.run([sys.executable, "-m", "revec", "run", "--help"],
                         capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    options = set(re.findall(r"--([a-z][a-z-]+)", out.stdout)) - {"help"}
    keywords = set(inspect.signature(RunnableTask.run).parameters) - {"self", "args"}
    from revec.cluster import run_dask

    dask_only = {"scheduler", "dask_local", "connect_timeout", "worker_timeout"}
    dask_keywords = set(inspect.signature(run_dask).parameters) | {"dask_local"}
    assert dask_only <= dask_keywords
    elsewhere = {"output", "json"} | dask_only
    as_keywords = {o.replace("-", "_") for o in options}
    as_keywords = {"inputs" if o == "input" else o for o in as_keywords}
    assert as_keywords - elsewhere <= keywords
    assert {"workers", "max_memory", "variant", "block_size", "backend"} <= keywords

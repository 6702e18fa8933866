"""``task.run(...)``: a task compiled from a live module (imported, or exec'd source
registered in ``linecache`` as a notebook does), and the plain call as the reference."""

from __future__ import annotations

import importlib.util
import linecache
import sys
import textwrap

import pytest

from revec.api import c_compiler_works, resolve_backend

SOURCE = textwrap.dedent('''
    import numpy as np
    from revec import task

    def half(x):
        return x // 2

    @task
    def fib(n: np.int32) -> np.int64:
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    @task
    def depth(n: np.int32):
        k = half(n)
        if n < 2:
            return 0
        return 1 + max(depth(k), depth(n - 1))
''')


def _check(mod) -> None:
    assert mod.fib(20) == 6765  # the plain call: the sequential reference
    for backend in ("numba", "c"):
        for variant in ("seq", "bfs", "reexp"):
            res = mod.fib.run(20, variant=variant, backend=backend, block_size=64)
            assert res.result == 6765 and res.has_result
            assert res.reducers == {}
            if variant != "seq":
                assert res.stats.tasks == 2 * 10946 - 1
        res = mod.depth.run(40, backend=backend, block_size=16)
        assert res.result == mod.depth(40) == 39


def test_task_run_from_an_imported_module(tmp_path):
    path = tmp_path / "user_tasks_mod.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("user_tasks_mod", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["user_tasks_mod"] = mod
    try:
        spec.loader.exec_module(mod)
        _check(mod)
    finally:
        del sys.modules["user_tasks_mod"]


def test_task_run_from_exec_with_linecache():
    """The notebook case: the cell's source lives only in linecache."""
    name = "<revec-test-cell-1>"
    linecache.cache[name] = (len(SOURCE), None, SOURCE.splitlines(True), name)
    g: dict = {"__name__": "__cell__"}
    try:
        exec(compile(SOURCE, name, "exec"), g)
        ns = type("Cell", (), {})()
        ns.__dict__.update(fib=g["fib"], depth=g["depth"])
        _check(ns)
    finally:
        del linecache.cache[name]


def test_task_run_rejects_extra_arguments(tmp_path):
    from revec.errors import RevecError

    path = tmp_path / "user_tasks_mod2.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("user_tasks_mod2", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(RevecError, match="takes 1 argument"):
        mod.fib.run(10, 1, backend="numba")  # the hidden frame fields are not arguments


def test_backend_auto():
    assert resolve_backend("auto") == ("c" if c_compiler_works() else "numba")
    assert resolve_backend("numba") == "numba"


def test_compiled_task_is_built_once_however_it_is_asked_for():
    from pathlib import Path

    from revec.api import compiled_task, get_program

    program = get_program(Path(__file__).resolve().parent.parent / "benchmarks" / "fib.py")
    first = compiled_task(program, "fib", "numba")
    assert compiled_task(program, "fib", "numba", None) is first
    assert compiled_task(program, "fib", "numba", compaction=None) is first
    if resolve_backend("auto") == "numba":
        assert compiled_task(program, "fib", "auto") is first


def test_cli_prints_the_result(tmp_path, capsys):
    import json

    from revec.cli import main

    path = tmp_path / "natfib.py"
    path.write_text(SOURCE)
    assert main(["run", str(path), "fib", "15", "--backend", "numba", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"] == 610 and out["reducers"] == {} and out["args"] == [15]
    assert main(["run", str(path), "fib", "15"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "result = 610"
    assert text.count("--backend auto") == 1  # the choice is said once
    backend = "c" if c_compiler_works() else "numba"
    assert f"on {backend} (--backend auto" in text

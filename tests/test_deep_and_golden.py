"""A 100,000-level task tree in every variant; the golden generated module for fib runs
(tests/test_goldens.py keeps it up to date)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from revec.api import get_program, run_loaded

HERE = Path(__file__).parent
N = 100_000


@pytest.mark.parametrize("variant", ["bfs", "blocked", "reexp"])
def test_hundred_thousand_levels(variant):
    program = get_program(HERE / "programs" / "deep.py")
    res = run_loaded(program, "spine", (N, 0), variant=variant, block_size=64)
    spine_nodes = N + 1
    side_leaves = N // 3  # n = 3, 6, ..., 99999
    assert res.reducers["nodes"] == spine_nodes + side_leaves
    assert res.reducers["weight"] == N * (N + 1) // 2
    assert res.reducers["deepest"] == N
    assert res.stats.levels == N + 1
    assert res.stats.tasks == spine_nodes + side_leaves
    # blocks never exceed a few threads here: live frames stay small, not O(depth)
    assert res.stats.peak_live <= 4


def test_deep_sequential_reference():
    program = get_program(HERE / "programs" / "deep.py")
    res = run_loaded(program, "spine", (N, 0), variant="seq")
    assert res.reducers["nodes"] == N + 1 + N // 3
    assert res.reducers["deepest"] == N


def test_fib_golden_module_runs(tmp_path):
    """The golden module is real code: import it and run its kernel in every schedule."""
    from revec.backends.numba_runner import NumbaTask
    from revec.transforms.schedule import Schedule

    src = (HERE / "golden" / "fib_numba.py").read_text()
    path = tmp_path / "fib_golden_gen.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("fib_golden_gen", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    runner = NumbaTask(get_program(HERE / "programs" / "fib.py"), "fib")
    runner.module = mod
    for strategy, b, r in (("bfs", None, None), ("blocked", 8, None), ("reexp", 8, 8),
                           ("reexp", 1, 1)):
        reducers, stats = runner.run((20,), Schedule.make(strategy, b, r))
        assert reducers == {"count": 6765}
        assert stats.tasks == 21891  # fib(20) makes 21,891 calls

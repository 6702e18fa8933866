"""The C back end's lock-step inductive cases (revec/backends/c_lanes.py) on wide trees:
the same reducers and statistics as the numba back end and the sequential reference
for every variant, with block sizes around the 32-thread chunk."""

from __future__ import annotations

from pathlib import Path

import pytest

from revec.api import compiled_task, get_program, run_loaded

PROGRAM = Path(__file__).parent / "programs" / "lanes.py"
CASES = [("branches", "conditional sites"), ("whiles", "phase B"), ("fors", "phase B")]
CONFIGS = [("bfs", None, None), ("blocked", 31, None), ("blocked", 64, None),
           ("reexp", 33, 33), ("reexp", 1000, 200), ("reexp", 4096, None)]


def close(a: dict, b: dict) -> bool:
    return all(abs(a[k] - b[k]) <= 1e-9 * max(1.0, abs(b[k])) for k in b)


@pytest.mark.parametrize("task,marker", CASES)
def test_lock_step_paths(task: str, marker: str) -> None:
    program = get_program(PROGRAM)
    source = compiled_task(program, task, "c").source
    assert ("j0 + 32 <= ni" in source) if marker == "conditional sites" else (marker in source)
    ref = run_loaded(program, task, (), variant="seq").reducers
    assert ref["total"] != 0
    for variant, b, r in CONFIGS:
        c = run_loaded(program, task, (), variant=variant, backend="c", block_size=b,
                       reexp_threshold=r)
        nb = run_loaded(program, task, (), variant=variant, backend="numba", block_size=b,
                        reexp_threshold=r)
        assert close(c.reducers, ref), (variant, b, r)
        assert close(nb.reducers, ref), (variant, b, r)
        assert c.stats.tasks_per_level == nb.stats.tasks_per_level
        assert c.stats.blocks == nb.stats.blocks
        assert c.stats.peak_live == nb.stats.peak_live
        assert c.stats.utilization == nb.stats.utilization
    assert max(c.stats.tasks_per_level) > 1000  # wide enough for many full chunks


@pytest.mark.parametrize("task", ["branches", "whiles"])
def test_scalar_split_matches_table_split(task: str) -> None:
    """--compaction scalar (the kernel's branch-free scalar split, Fig. 16's 'without')
    gives the table-driven build's reducers and statistics."""
    program = get_program(PROGRAM)
    table = compiled_task(program, task, "c", "table")
    scalar = compiled_task(program, task, "c", "scalar")
    assert table is not scalar
    for variant, b, r in CONFIGS[:4]:
        a = run_loaded(program, task, (), variant=variant, backend="c", block_size=b,
                       reexp_threshold=r, compaction="table")
        s = run_loaded(program, task, (), variant=variant, backend="c", block_size=b,
                       reexp_threshold=r, compaction="scalar")
        assert close(s.reducers, a.reducers)
        assert s.stats.tasks_per_level == a.stats.tasks_per_level
        assert s.stats.peak_live == a.stats.peak_live

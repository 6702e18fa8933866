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


@pytest.mark.parametrize("name,clamped", [("uts", True), ("nqueens", False),
                                          ("minmax", False)])
def test_phase_b_partial_chunks(name: str, clamped: bool) -> None:
    """A phase-B body that calls a library function (uts's SHA-1) has one vectorized copy:
    partial chunks of 8 lanes or more run it on clamped copies, smaller ones a scalar
    loop; cheap bodies keep their vectorized partial loop.  uts on every variant and
    block sizes around the chunk: the exact tree."""
    from revec.bench import answers
    from revec.bench.presets import preset

    p = preset(name, "quick")
    program = get_program(p.path)
    source = compiled_task(program, name, "c").source
    assert ("lanes >= 8" in source and "__asm__" in source) == clamped
    if not clamped:
        return
    want = answers.expected(name, p.args)
    for variant, b, r in [("bfs", None, None), ("blocked", 9, None), ("blocked", 40, None),
                          ("reexp", 7, 3), ("reexp", 33, 20)]:
        res = run_loaded(program, name, p.root_args, variant=variant, backend="c",
                         block_size=b, reexp_threshold=r)
        assert {k: res.reducers[k] for k in want} == want, (variant, b, r)

"""Return-value programs the generator once found wrong, kept as fixed cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from revec.api import run_program

PROGRAMS = Path(__file__).parent / "programs"


@pytest.mark.parametrize("backend", ["c", "numba"])
def test_local_widens_when_the_inferred_result_type_does(backend: str) -> None:
    # the base case returns int32, the inductive case int64: the inferred result is
    # int64, so 'total' (a sum of children's results) must be re-inferred as int64
    path = PROGRAMS / "returns_widen.py"
    seq = run_program(path, "f", (7, 61, 1), variant="seq")
    assert seq.result == 561
    for variant in ("bfs", "blocked", "reexp"):
        got = run_program(path, "f", (7, 61, 1), variant=variant, backend=backend,
                          block_size=4)
        assert got.result == seq.result, variant

"""Return-value programs the generator once found wrong, kept as fixed cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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


def _narrow_reference(d: int, a: int) -> np.int32:
    """tests/programs/returns_inferred_narrow.py by hand, every result taken as int32
    (the inferred result type acting as an annotation), arguments as declared."""
    d, a = np.int16(d), np.uint8(a)

    def mix(x, y):
        t = x * 3 + y
        return t - 20 if t > 20 else t

    if d <= 1:
        return np.int32(mix(d, a % 9)) if (a & 1) == 0 else np.int32(a & 5)
    total = np.int32(3) * _narrow_reference(d - 1, np.uint8(np.int16(a) - d))
    return np.int32(total + mix(d, a % 9))


@pytest.mark.parametrize("backend", ["c", "numba"])
def test_inferred_result_type_acts_as_an_annotation(backend: str) -> None:
    # the returns are int16 and int32: the reference run converts each call's result to
    # the inferred int32, as the compiled runs do (it reported -30868, int16 wrapped)
    import warnings

    path = PROGRAMS / "returns_inferred_narrow.py"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's overflow warnings of the hand version
        want = int(_narrow_reference(23, 47))
    assert want == 41256812
    seq = run_program(path, "f", (23, 47, 3), variant="seq")
    assert seq.result == want
    for variant in ("bfs", "blocked", "reexp"):
        got = run_program(path, "f", (23, 47, 3), variant=variant, backend=backend,
                          block_size=2, reexp_threshold=6)
        assert got.result == want, variant

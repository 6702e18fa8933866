"""Value semantics: wraparound, weak Python scalars, float32, floor division."""

from __future__ import annotations

from pathlib import Path

import pytest

from revec.api import get_program, run_loaded

PROGRAM = Path(__file__).parent / "programs" / "semantics.py"


def test_reference_uses_numpy_types():
    ref = run_loaded(get_program(PROGRAM), "sem", (), variant="seq").reducers
    # the weak comparison is False everywhere: -5 >= uint16 value
    assert ref["weak_cmp"] == 0
    # 64 leaves, each adding a uint8 value: the total is below 64 * 256
    assert 0 <= ref["wraps"] < 64 * 256


@pytest.mark.parametrize("variant, b, r", [("bfs", None, None), ("blocked", 2, None),
                                           ("reexp", 4, 3), ("reexp", 1, 1)])
def test_variants_bit_identical(variant, b, r):
    program = get_program(PROGRAM)
    ref = run_loaded(program, "sem", (), variant="seq").reducers
    got = run_loaded(program, "sem", (), variant=variant, block_size=b,
                     reexp_threshold=r).reducers
    for k in ("wraps", "weak_cmp", "lowest", "floors"):
        assert got[k] == ref[k], k
    # float32 sums differ only by summation order
    assert got["f32"] == pytest.approx(ref["f32"], rel=1e-5)


@pytest.mark.parametrize("backend", ["numba", "c"])
def test_int64_wraparound_is_not_assumed_away(backend):
    # numba marks signed + - * as non-overflowing ('nsw') and LLVM then folded these
    # sign tests of wrapped int64 results to False; answers counted by hand (see the
    # program's docstring)
    program = get_program(Path(__file__).parent / "programs" / "wrap_int64.py")
    want = {"add_wraps": 4, "sub_wraps": 4, "mul_wraps": 4}
    ref = run_loaded(program, "f", (3, 1), variant="seq").reducers
    assert {k: ref[k] for k in want} == want
    for variant in ("bfs", "blocked", "reexp"):
        got = run_loaded(program, "f", (3, 1), variant=variant, block_size=4,
                         reexp_threshold=3, backend=backend).reducers
        assert {k: got[k] for k in want} == want, variant

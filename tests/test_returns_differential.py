"""Differential tests of return-value recursion: every variant and back end returns
the plain Python recursion's value (integers and min/max bit for bit, float sums within
relative 1e-9).

Programs come from ``progen_returns.py`` (every supported shape, prologues, unannotated
helpers, annotated and inferred result types).  The default run checks 200 programs
(5 x 5 of each of the 8 shapes), each compiled once per back end and run as bfs, blocked and reexp
with random block sizes and thresholds, plus the plain recursive C of the derived
spawn/reduce form and the numpy back end on small trees (tests/support/numpy_check.py);
``pytest -m slow`` checks 1,000 more.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, note, reject, settings
from hypothesis import strategies as st

from revec.api import compiled_task, get_program, root_args, run_loaded
from tests.progen_returns import SHAPES, return_programs
from tests.support.numpy_check import check_numpy

SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))
NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]
BLOCK_SIZES = st.sampled_from([1, 2, 3, 4, 7, 16, 64, 256, 5000])


def same(x, y) -> bool:
    if isinstance(x, float):
        return x == y or math.isclose(x, y, rel_tol=1e-9)
    return x == y


def check_program(tmp_path: Path, spec, data) -> None:
    path = tmp_path / f"ret_{abs(hash(spec.source)) % 10**12}.py"
    path.write_text(spec.source)
    note(spec.source)
    note(f"args={spec.args}")
    program = get_program(path)  # every generated program is in the language
    ref = run_loaded(program, spec.task, spec.args, variant="seq")
    assert ref.has_result
    for variant in ("bfs", "blocked", "reexp"):
        b = data.draw(BLOCK_SIZES, label=f"{variant} B")
        r = data.draw(st.integers(0, 2 * b + 2), label=f"{variant} R")
        results = {}
        for backend in ("numba", "c"):
            res = run_loaded(program, spec.task, spec.args, variant=variant, block_size=b,
                             reexp_threshold=r, backend=backend)
            assert same(ref.result, res.result), (backend, variant, b, r, ref.result,
                                                  res.result)
            results[backend] = res
        # the numpy back end (the plan's executable reference) where it can afford the
        # tree: the same value, the numba back end's statistics
        check_numpy(program, spec.task, spec.args, variant, b, r, results["numba"],
                    ref.reducers, ref.result)
    recursive, _ = compiled_task(program, spec.task, "c").run_recursive(
        root_args(program, spec.task, spec.args))
    assert same(ref.result, recursive[program.tasks[spec.task].result]), "recursive C"


# each shape in five parts: pieces small enough that pytest-xdist's workers end together
@pytest.mark.parametrize("part", range(5))
@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=5, phases=NO_SHRINK, **SETTINGS)
@given(data=st.data())
def test_returns_match_plain_recursion(tmp_path_factory, shape, part, data):
    """5 x 5 programs of each of the 8 shapes (200 in all)."""
    # hypothesis tries the all-zero choices (the simplest program) first in every run:
    # passed over, or every part of a shape would check that same program
    if data.draw(st.integers(0, 2**32), label="salt") == 0:
        reject()
    spec = data.draw(return_programs(shape), label="program")
    assert spec.shape == shape
    check_program(tmp_path_factory.mktemp(f"ret_{shape}{part}"), spec, data)


@pytest.mark.slow
@settings(max_examples=1000, **SETTINGS)
@given(spec=return_programs(), data=st.data())
def test_returns_match_plain_recursion_long(tmp_path_factory, spec, data):
    check_program(tmp_path_factory.mktemp("retlong"), spec, data)

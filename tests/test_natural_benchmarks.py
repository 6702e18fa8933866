"""The natural-recursion twins in benchmarks/natural/ give the benchmarks' independent
answers (revec.bench.answers) through the derived spawn/reduce form, C reexp."""

from __future__ import annotations

from pathlib import Path

import pytest

from revec.api import get_program, run_loaded
from revec.bench.answers import expected
from revec.bench.presets import BENCHMARKS, PRESETS

NATURAL = Path(__file__).resolve().parents[1] / "benchmarks" / "natural"
# the original's reducer whose value the twin returns
RETURNED = {"fib": "count", "nqueens": "solutions", "uts": "nodes", "graphcol": "colourings",
            "knapsack": "best", "parentheses": "count", "binomial": "count",
            "minmax": "xwins", "nqueens_board": "solutions", "knapsack_bb": "best",
            "findmax": "largest"}


@pytest.mark.parametrize("name", BENCHMARKS)
def test_natural_twin_gives_the_answer(name):
    preset = PRESETS[name]["quick"]
    program = get_program(NATURAL / f"{name}.py")
    assert program.tasks[name].result is not None
    res = run_loaded(program, name, preset.root_args, variant="reexp", backend="c",
                     block_size=64)
    want = expected(name, preset.args)
    got = {**res.reducers, RETURNED[name]: res.result}
    assert {k: got[k] for k in want} == want

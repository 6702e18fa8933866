"""Level-uniform parameters (revec.transforms.blocking.uniform_params): which are found,
and that kernels reading them once per block agree with the plain recursive program."""

from __future__ import annotations

from pathlib import Path

import pytest

from revec.api import get_program, run_program
from revec.transforms.blocking import to_block_program

HERE = Path(__file__).parent
ROOT = HERE.parent


@pytest.mark.parametrize("path,task,expected", [
    (ROOT / "benchmarks" / "graphcol.py", "graphcol", {"v"}),
    (ROOT / "benchmarks" / "binomial.py", "binomial", {"n"}),   # n - 1 in both spawns
    (ROOT / "benchmarks" / "fib.py", "fib", set()),             # n - 1, n - 2: not uniform
    (ROOT / "benchmarks" / "minmax.py", "minmax", set()),       # constants: not p + c
    (HERE / "programs" / "uniform.py", "walk", {"depth"}),      # left - 1 - i varies
    (HERE / "programs" / "uniform.py", "pairs", {"level"}),
])
def test_uniform_params(path: Path, task: str, expected: set[str]) -> None:
    assert to_block_program(get_program(path), task).uniform == expected


@pytest.mark.parametrize("backend", ["c", "numba"])
@pytest.mark.parametrize("variant,block", [("bfs", None), ("blocked", 4), ("reexp", 8),
                                           ("reexp", 64), ("reexp", 512)])
@pytest.mark.parametrize("task,args", [("walk", (0, 30, 1)), ("walk", (2, 25, 12345)),
                                       ("pairs", (0, 0))])
def test_uniform_kernels_agree(backend: str, variant: str, block: int | None, task: str,
                               args: tuple[int, ...]) -> None:
    path = HERE / "programs" / "uniform.py"
    want = run_program(path, task, args, variant="seq", backend="python")
    got = run_program(path, task, args, variant=variant, backend=backend, block_size=block)
    assert got.reducers == want.reducers
    assert got.stats.levels > 5  # a real tree, several levels deep

"""The memory budget (issue 4): a bfs run too wide for its budget stops with a clear
message on both back ends; blocked / reexp runs of the same tree fit; parse_size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from revec.api import run_program
from revec.errors import RevecError
from revec.runtime.memory import MemoryBudgetError, default_budget, parse_size

ROOT = Path(__file__).resolve().parents[1]
GRAPHCOL = ROOT / "benchmarks" / "graphcol.py"
BUDGET = 1 << 20  # 1 MiB: graphcol(16)'s widest level (59,049 frames) does not fit in bfs


# graphcol: at most three spawns (the driver makes room for the children); nqueens: a
# loop of spawns (numba's lock-step kernel grows the child blocks itself)
CASES = [(GRAPHCOL, "graphcol", 16, BUDGET, 20),
         (ROOT / "benchmarks" / "nqueens.py", "nqueens", 11, 1 << 18, 7)]


@pytest.mark.parametrize("backend", ["numba", "c"])
@pytest.mark.parametrize("path,task,arg,budget,frame_bytes", CASES)
def test_bfs_over_budget_stops(backend: str, path: Path, task: str, arg: int, budget: int,
                               frame_bytes: int) -> None:
    with pytest.raises(MemoryBudgetError, match="memory budget of"):
        run_program(path, task, (arg,), variant="bfs", backend=backend, max_memory=budget)
    # the same tree fits without a budget, and in reexp mode within it
    free = run_program(path, task, (arg,), variant="bfs", backend=backend, max_memory=0)
    fit = run_program(path, task, (arg,), variant="reexp", backend=backend,
                      block_size=256, max_memory=budget)
    assert fit.reducers == free.reducers
    assert free.stats.peak_live * frame_bytes > budget  # the bfs run really needed more


def test_cli_over_budget_is_a_user_error() -> None:
    r = subprocess.run([sys.executable, "-m", "revec", "run", str(GRAPHCOL), "graphcol", "16",
                        "--variant", "bfs", "--backend", "c", "--max-memory", "1M"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "memory budget" in r.stderr and "Traceback" not in r.stderr


def test_parse_size() -> None:
    assert parse_size("1M") == 1 << 20
    assert parse_size("1.5GiB") == 3 << 29
    assert parse_size("4096") == 4096
    assert parse_size("0") == 0
    for bad in ("1X", "", "-1G", "G"):
        with pytest.raises(RevecError):
            parse_size(bad)
    assert default_budget() > 0

"""Dogfooding (paper Sec. 7.2): the task program benchmarks/treebuild.py builds, for the
same root state, the very tree the simulator samples, and the pipeline's utilization
equals the simulator's on it."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from revec.treegen.sampler import tree_summary
from revec.treegen.simulator import Setting, root_states, simulate

api = pytest.importorskip("revec.api", reason="revec.api (the compiled pipeline) is not "
                                              "available yet")

TREEBUILD = str(Path(__file__).resolve().parents[1] / "benchmarks" / "treebuild.py")
CASES = [(101, 10), (151, 9), (201, 14)]
SEED = 77
TRIALS = 3


def run(args: tuple[int, ...], variant: str, **kw: int | str) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # uint64 wraparound in plain Python
        return api.run_program(TREEBUILD, "treebuild", args, variant=variant, **kw)


@pytest.mark.parametrize("n,h", CASES)
def test_same_tree_as_the_sampler(n: int, h: int) -> None:
    for state in root_states(SEED, range(TRIALS)):
        want = tree_summary(n, h, state)
        got = run(((n - 1) // 2, h, 1, state), "seq")
        assert got.reducers == {"nodes": want.nodes, "leaves": want.leaves,
                                "fingerprint": want.fingerprint}


def _settings(switch: str) -> list[Setting]:
    return [Setting("bfs", 8, 4, 4, switch), Setting("blocked", 8, 4, 4, switch),
            Setting("reexp", 8, 4, 4, switch), Setting("reexp", 16, 16, 4, switch),
            Setting("reexp", 32, 8, 8, switch)]


def _compare(n: int, h: int, switch: str, backend: str = "numba") -> None:
    settings = _settings(switch)
    sim = simulate(n, h, settings, trials=TRIALS, seed=SEED, workers=1)
    for t, state in enumerate(root_states(SEED, range(TRIALS))):
        for k, s in enumerate(settings):
            res = run(((n - 1) // 2, h, 1, state), s.strategy, block_size=s.block_size,
                      reexp_threshold=s.reexp_threshold, simd_width=s.simd_width,
                      backend=backend)
            assert res.reducers["nodes"] == n
            assert res.stats.utilization == sim.utilization(k)[t], (t, s)
            assert res.stats.blocks == sim.blocks(k)[t], (t, s)


@pytest.mark.parametrize("n,h", CASES)
def test_utilization_as_design(n: int, h: int) -> None:
    """DESIGN.md section 3: a bfs-mode next block of B or more threads runs as one block
    in blocked mode (the simulator's default 'whole' reading of the switch)."""
    _compare(n, h, "whole")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="the C back end needs gcc")
def test_utilization_c_back_end() -> None:
    if "c" not in getattr(api, "BACKENDS", ()):
        pytest.skip("the C back end is not available")
    _compare(*CASES[0], "whole", backend="c")

"""Every benchmark's quick preset verifies on every variant and back end (issue 4)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from revec.bench import answers
from revec.bench.presets import BENCHMARKS, preset

api = pytest.importorskip("revec.api")

VARIANTS = ("bfs", "blocked", "reexp")


def _backend_available(backend: str) -> bool:
    if backend == "numba":
        return True
    return importlib.util.find_spec("revec.backends.c_runner") is not None


def expected_shape(name: str, args: dict[str, Any], want: dict[str, int]
                   ) -> tuple[int | None, int | None]:
    """(tasks, base-case tasks) of the task tree where an independent count is known."""
    if name == "fib":
        n = int(args["n"])
        return 2 * answers.fib(n + 1) - 1, answers.fib(n + 1)
    if name == "binomial":
        c = answers.binomial(int(args["n"]), int(args["k"]))
        return 2 * c - 1, c
    if name == "knapsack":
        n = int(args["n"])
        return 2 ** (n + 1) - 1, 2 ** n
    if name == "uts":
        return want["nodes"], want["leaves"]
    if name == "minmax":
        pos = answers.tictactoe_4x4(int(args["x"]), int(args["o"]))
        return pos["positions"], want["xwins"] + want["owins"] + want["draws"]
    if name in ("nqueens", "parentheses", "graphcol"):
        return None, next(iter(want.values()))
    return None, None


@pytest.mark.parametrize("backend", ["numba", "c"])
@pytest.mark.parametrize("name", BENCHMARKS)
def test_quick_preset_verifies_on_every_variant(name: str, backend: str) -> None:
    if not _backend_available(backend):
        pytest.skip(f"the {backend} back end is not available yet")
    p = preset(name, "quick")
    want = answers.expected(name, p.args)
    tasks, leaves = expected_shape(name, p.args, want)
    # B = 16 forces blocked mode and re-expansion on every quick tree; the default too
    for variant in VARIANTS:
        for block_size in (16, None):
            r = api.run_program(p.path, name, p.root_args, variant=variant, backend=backend,
                                block_size=block_size)
            got = {k: r.reducers[k] for k in want}
            assert got == want, (variant, block_size)
            if tasks is not None:
                assert r.stats.tasks == tasks, (variant, block_size)
            if leaves is not None:
                assert r.stats.leaves == leaves, (variant, block_size)

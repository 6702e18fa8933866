"""A C program's runs against its serial elision's answer: the sequential reference and
each compiled back end (reexp with small blocks, so the schedule re-expands), for the
tests of C as published (spellings, published forms)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from revec.api import get_program, run_loaded


def assert_runs_match(path: Path, task: str, args: tuple[int, ...], board: int,
                      backends: tuple[str, ...], expected: int, label: str) -> None:
    """Every run of ``task(*args)`` (plus a zeroed int8 board of ``board`` elements
    when ``board`` > 0) gives ``expected``."""
    root = (*args, *([np.zeros(board, np.int8)] if board else []))
    program = get_program(path)
    got = {"seq": run_loaded(program, task, root, variant="seq").result}
    for backend in backends:
        got[backend] = run_loaded(program, task, root, variant="reexp", backend=backend,
                                  block_size=8, reexp_threshold=4).result
    assert {k: int(v) for k, v in got.items()} == dict.fromkeys(got, expected), (label, got)

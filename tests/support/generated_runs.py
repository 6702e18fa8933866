"""One generated program checked on the schedules and back ends against its oracle:
the plain-Python run of the same file (Python), or gcc's serial elision (Cilk C).  Used
by the generated sets of array inputs and task-private arrays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from revec.api import run_program
from tests import cilk_oracle
from tests.support.compare import same

VARIANTS = ("bfs", "blocked", "reexp")
BLOCKS = (1, 2, 3, 4, 16, 4096)  # a program's block size: BLOCKS[seed % 6]


def check_python(source: str, path: Path, args: tuple[Any, ...], seed: int,
                 backends: list[str], two_workers: bool) -> None:
    """Task ``f`` of ``source`` on every variant of each back end (and reexp on 2 workers
    on the compiled ones when ``two_workers``) gives the plain-Python run's reducers."""
    path.write_text(source)
    ref = run_program(path, "f", args, variant="seq").reducers
    for backend in backends:
        for variant in VARIANTS:
            got = run_program(path, "f", args, variant=variant, backend=backend,
                              block_size=BLOCKS[seed % 6])
            assert same(ref, got.reducers), (source, backend, variant, ref, got.reducers)
        if backend in ("c", "numba") and two_workers:
            got = run_program(path, "f", args, variant="reexp", backend=backend,
                              block_size=2, workers=2)
            assert same(ref, got.reducers), (source, backend, "2 workers")


def check_c(source: str, main_source: str, folder: Path, args: tuple[Any, ...], seed: int,
            backends: list[str], two_workers: bool) -> None:
    """Task ``f`` of the C file ``source`` (its serial elision's ``main_source`` prints
    the root call's result) gives gcc's result as the plain reference and on every
    variant of each back end (and reexp on 2 workers when ``two_workers``)."""
    prog, main = folder / "prog.c", folder / "main.c"
    prog.write_text(source)
    main.write_text(main_source)
    expected = int(cilk_oracle.run(cilk_oracle.build([prog, main], folder / "elision"))[0])
    assert run_program(prog, "f", args, variant="seq").result == expected, source
    for backend in backends:
        for variant in VARIANTS:
            got = run_program(prog, "f", args, variant=variant, backend=backend,
                              block_size=BLOCKS[seed % 6])
            assert got.result == expected, (source, backend, variant, expected, got.result)
        if backend in ("c", "numba") and two_workers:
            got = run_program(prog, "f", args, variant="reexp", backend=backend,
                              block_size=2, workers=2)
            assert got.result == expected, (source, backend, "2 workers")

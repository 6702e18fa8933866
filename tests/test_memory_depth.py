"""The memory budget covers what grows with the depth (issue 36, items 2 and 6).

A recursion that never reaches its base case (tests/programs/endless/cyc.py and cyc.c)
holds two thread frames a level but a record, child-block segments and a row of
statistics per level, on every worker.  Under ``--max-memory 256M`` it must stop with
exit status 2 and the budget message -- naming the per-level records and statistics,
not a bfs level -- on both back ends, every variant and 1 or 2 workers, with the
child's peak resident memory under 1 GiB; the default budget (half of the machine's
memory) holds the same way.  Each run is a child process under an address-space limit
(tests/support/limited.py), so a budget that does not hold cannot take the machine down.

By default: the C back end on the Cilk C program and the numba back end on the Python
program, one variant each; the whole matrix is marked slow.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from revec.api import run_program
from revec.runtime.memory import KINDS, BudgetUse, MemoryBudgetError, budget_message
from tests.support.limited import limited_run

ROOT = Path(__file__).resolve().parents[1]
ENDLESS = ROOT / "tests" / "programs" / "endless"
PROGRAMS = {"py": ENDLESS / "cyc.py", "c": ENDLESS / "cyc.c"}
BUDGET = "256M"
PEAK = 1 << 30  # the child's peak resident memory must stay below 1 GiB
# the child's address space: numba reserves far more virtual memory than it touches
# (measured with 2 workers: 768 MiB fails to start the run, 1 GiB is enough); 4 GiB
# leaves it room while a run that ignores its budget fails in seconds instead of
# filling the machine (before the change: the C back end reached 2.6 GB of resident
# memory and failed to allocate at this limit, numba 2.2 GB)
LIMIT = 4 << 30
# the machine memory the default-budget test pretends to have: its budget is half
SMALL_MACHINE = 512 << 20
# a level costs at most a record (80 B), two segments (32 B) and a row of statistics
# (40 B), held with room to double: so many levels fit in 256 MiB before it stops
MIN_LEVELS = (256 << 20) // (2 * 152)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env["REVEC_NUMBA_CACHE"] = "1"  # the kernel of a repeated numba case compiles once
    return env


def _run(program: str, backend: str, variant: str, workers: int,
         block_size: int | None = None, budget: str | None = BUDGET,
         machine_memory: int | None = None) -> dict[str, object]:
    args = ["run", str(PROGRAMS[program]), "cyc", "3", "--backend", backend, "--variant", variant,
            "--workers", str(workers)]
    if budget is not None:
        args += ["--max-memory", budget]
    if block_size is not None:
        args += ["--block-size", str(block_size)]
    if machine_memory is None:
        cmd = [sys.executable, "-m", "revec", *args]
    else:  # the default budget on a machine of machine_memory bytes
        cmd = [sys.executable, "-c",
               "import sys, revec.runtime.memory as m\n"
               f"m.machine_memory = lambda: {machine_memory}\n"
               "from revec.cli import main\n"
               "sys.exit(main(sys.argv[1:]))", *args]
    return limited_run(cmd, LIMIT, timeout=300, env=_env())


def _check_stopped(r: dict[str, object], variant: str, workers: int,
                   budget_text: str = "0.25 GiB") -> None:
    err = str(r["stderr"])
    assert r["returncode"] == 2, r
    assert "Traceback" not in err, err
    assert f"the run needs more than its memory budget of {budget_text}" in err, err
    # what exceeded it: the records and statistics of the recursion, however deep
    found = re.search(r"records and statistics of a recursion ([\d,]+) levels deep", err)
    assert found is not None, err
    assert int(found.group(1).replace(",", "")) >= MIN_LEVELS, err
    assert "does it reach its base case?" in err and "raise the budget with --max-memory" in err
    # item 6: no bfs level blamed, no variant or block size offered for depth
    assert "bfs level" not in err and "--variant" not in err and "--block-size" not in err
    assert ("fewer --workers" in err) == (workers > 1), err
    assert int(r["maxrss"]) < PEAK, r  # type: ignore[call-overload]


# (program, back end, variant, workers, block size)
DEFAULT_CASES = [("c", "c", "reexp", 2, 2), ("py", "numba", "blocked", 1, None)]
MATRIX = [(prog, backend, variant, workers, b)
          for prog in ("py", "c") for backend in ("c", "numba") for workers in (1, 2)
          for variant, b in (("bfs", None), ("blocked", None), ("blocked", 2),
                             ("reexp", None), ("reexp", 2))]


@pytest.mark.parametrize("program,backend,variant,workers,block_size", DEFAULT_CASES)
def test_endless_recursion_stops_at_budget(program: str, backend: str, variant: str,
                                           workers: int, block_size: int | None) -> None:
    _check_stopped(_run(program, backend, variant, workers, block_size), variant, workers)


@pytest.mark.slow
@pytest.mark.parametrize("program,backend,variant,workers,block_size",
                         [c for c in MATRIX if c not in DEFAULT_CASES])
def test_endless_recursion_stops_at_budget_everywhere(
        program: str, backend: str, variant: str, workers: int,
        block_size: int | None) -> None:
    _check_stopped(_run(program, backend, variant, workers, block_size), variant, workers)


@pytest.mark.parametrize("backend", ["c", pytest.param("numba", marks=pytest.mark.slow)])
def test_default_budget_holds(backend: str) -> None:
    """No --max-memory: the budget is half of the machine's memory
    (revec.runtime.memory.default_budget); on a machine of 512 MiB that is 256 MiB,
    and the run stops there the same way."""
    r = _run("c", backend, "bfs", 1, budget=None, machine_memory=SMALL_MACHINE)
    _check_stopped(r, "bfs", 1)


@pytest.mark.parametrize("backend", ["c", pytest.param("numba", marks=pytest.mark.slow)])
def test_frames_under_reexp_name_the_thread_blocks(backend: str) -> None:
    """Item 6: a reexp run over its budget on thread frames names the thread blocks and
    a smaller --block-size, not a bfs level (graphcol(16) at B = 4096 holds more than
    1 MiB of blocks; at B = 256 it fits, tests/test_memory_budget.py)."""
    with pytest.raises(MemoryBudgetError) as err:
        run_program(ROOT / "benchmarks" / "graphcol.py", "graphcol", (16,), variant="reexp",
                    backend=backend, max_memory=1 << 20, workers=1)
    text = str(err.value)
    use = err.value.use
    assert use is not None and use.culprit() == "frames" and use.variant == "reexp"
    assert use.bytes_of("frames") > 1 << 19
    assert "the thread blocks held down to level" in text
    assert "use a smaller --block-size or raise the budget with --max-memory" in text
    assert "bfs" not in text and "--variant" not in text


def test_budget_message_names_what_exceeded() -> None:
    """The message for each kind of excess and variant (what exceeded, what helps)."""
    mib = 1 << 20
    bfs = budget_message(256 * mib, BudgetUse((300 * mib, 0, 4096, 0), "frames", 20, "bfs"))
    assert "the thread frames of a bfs level (level 20) do not fit" in bfs
    assert "it asked for 300 MiB of thread frames and 4 KiB of level statistics" in bfs
    assert bfs.endswith("use --variant blocked or reexp or raise the budget with --max-memory")
    for variant in ("blocked", "reexp"):
        blocks = budget_message(mib, BudgetUse((2 * mib, 512, 0, 0), "records", 7, variant,
                                               workers=2))
        assert "the thread blocks held down to level 7 do not fit" in blocks
        assert blocks.endswith("use a smaller --block-size, fewer --workers or raise the "
                               "budget with --max-memory")
        assert "bfs" not in blocks and "--variant" not in blocks
        deep = budget_message(mib, BudgetUse((4096, 600_000, 400_000, 0), "levels", 99_999,
                                             variant))
        assert "the per-level records and statistics of a recursion 100,000 levels deep" \
            in deep
        assert deep.endswith("raise the budget with --max-memory")
        assert "--block-size" not in deep and "bfs" not in deep
    other = budget_message(mib, BudgetUse((0, 0, 0, 2 * mib), "other", 0, "reexp", 64))
    assert "the state of 64 workers and their work-stealing packages do not fit" in other
    assert other.endswith("fewer --workers or raise the budget with --max-memory")
    assert KINDS == ("frames", "records", "levels", "other")


def test_numba_budget_counts_depth() -> None:
    """The numba driver's counters: records, statistics and other state add to the
    frames of the same worker and to the other workers' bytes; a growth over the budget
    is refused (the array unchanged) and flagged with its kind."""
    import numpy as np
    from numba import typed

    # through the runner: it checks the runtime's numba cache before the import, and
    # the compiles below are recorded after (else the next process to load the runtime
    # would find files it has no record of, delete them all and compile it again)
    from revec.backends.numba_runner import record_runtime
    from revec.runtime.numba_support import (
        F_HELD,
        F_OVER,
        K_LEVELS,
        K_OTHER,
        K_RECORDS,
        N_FLAGS,
        charge,
        grow_counted,
        over_budget,
    )

    flags = np.zeros(N_FLAGS, np.int64)
    flags[0], flags[2] = 10_000, 1  # budget 10,000 bytes; this is worker 1
    used = np.array([1000, 0], np.int64)  # worker 0 holds 1000 bytes
    cols = typed.List([np.zeros(100, np.uint8), np.zeros(50, np.uint8)])
    ints = typed.List([np.zeros(4, np.int64), flags, used, np.zeros(8, np.int64)])
    itemsizes = np.array([1], np.int64)
    assert not over_budget(ints, cols, itemsizes, 40)  # 40 frames + 50 scratch
    assert used[1] == 90 and flags[F_HELD] == 90
    assert charge(ints, K_OTHER, 1000)
    assert used[1] == 1090
    lv = np.zeros((64, 5), np.float64)  # 2,560 bytes: 64 more rows would be 2,560 more
    assert charge(ints, K_LEVELS, lv.size * 8) and used[1] == 3650
    lv[63, 0] = 7.0
    grown = grow_counted(lv, 65, ints, K_LEVELS)  # 3650 + 2560 + 1000 <= 10,000
    assert grown.shape == (128, 5) and grown[63, 0] == 7.0 and flags[F_OVER] == 0
    assert used[1] == 6210 and flags[F_HELD + K_LEVELS] == 5120
    rec = np.zeros((64, 10), np.int64)  # 5,120 bytes of records: over the budget
    assert grow_counted(rec, 65, ints, K_RECORDS) is rec
    assert flags[F_OVER] == 1 + K_RECORDS and used[1] == 6210
    # frames over the budget because of the records and statistics held
    flags[F_OVER] = 0
    assert over_budget(ints, cols, itemsizes, 3000)  # 3050 + 1000 + 5120 + 10240
    assert flags[F_OVER] == 1
    record_runtime()

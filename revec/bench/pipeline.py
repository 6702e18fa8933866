"""The numba back end against the recursions a user would otherwise write.

``python -m revec.bench.pipeline`` measures fib and nqueens under CPython recursion,
numba ``@njit`` recursion and revec's numba back end (bfs, blocked and reexp, each at
its best block size from a sweep), medians of repeated runs in one process, plus
compile times, and writes ``reports/pipeline.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from numba import njit
from tqdm import tqdm

from revec.api import get_program, run_loaded


def fib_py(n: int) -> int:
    return n if n < 2 else fib_py(n - 1) + fib_py(n - 2)


def nqueens_py(n: int, row: int = 0, cols: int = 0, d1: int = 0, d2: int = 0) -> int:
    if row == n:
        return 1
    total = 0
    free = ~(cols | d1 | d2) & ((1 << n) - 1)
    while free:
        bit = free & -free
        free ^= bit
        total += nqueens_py(n, row + 1, cols | bit, ((d1 | bit) << 1), (d2 | bit) >> 1)
    return total


@njit(cache=False)
def fib_njit(n: int) -> int:
    return n if n < 2 else fib_njit(n - 1) + fib_njit(n - 2)


@njit(cache=False)
def nqueens_njit(n: int, row: int, cols: int, d1: int, d2: int) -> int:
    # no default arguments: numba's recursive type inference crashes on them
    if row == n:
        return 1
    total = 0
    free = ~(cols | d1 | d2) & ((1 << n) - 1)
    while free:
        bit = free & -free
        free ^= bit
        total += nqueens_njit(n, row + 1, cols | bit, ((d1 | bit) << 1), (d2 | bit) >> 1)
    return total


def median_seconds(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


CASES = {
    "fib": ("fib.py", "fib", (30,), fib_py, fib_njit, "count"),
    "nqueens": ("nqueens.py", "nqueens", (10,), nqueens_py,
                lambda n: nqueens_njit(n, 0, 0, 0, 0), "solutions"),
}


def measure(name: str, repeats: int, sizes: list[int]) -> dict[str, Any]:
    fname, task, args, py, jit, reducer = CASES[name]
    path = str(resources.files("revec.demos") / fname)
    rows: dict[str, Any] = {"name": f"{task}({', '.join(map(str, args))})"}
    rows["cpython"], expect = median_seconds(lambda: py(*args), repeats)
    t0 = time.perf_counter()
    jit(*args)
    rows["njit_compile"] = time.perf_counter() - t0
    rows["njit"], got = median_seconds(lambda: jit(*args), repeats)
    assert got == expect
    program = get_program(path)
    t0 = time.perf_counter()
    run_loaded(program, task, args, variant="bfs", block_size=1)
    rows["revec_compile"] = time.perf_counter() - t0
    for variant in ("bfs", "blocked", "reexp"):
        best: tuple[float, int] | None = None
        for b in ([0] if variant == "bfs" else sizes):
            def once(variant: str = variant, b: int = b) -> Any:
                r = run_loaded(program, task, args, variant=variant, block_size=b or None)
                assert r.reducers[reducer] == expect
                return r.stats

            samples = [once() for _ in range(repeats)]
            med = statistics.median(s.seconds for s in samples)
            if best is None or med < best[0]:
                best = (med, b)
                rows[f"{variant}_util"] = samples[0].utilization
        assert best is not None
        rows[variant], rows[f"{variant}_B"] = best
    return rows


def render(results: list[dict[str, Any]], repeats: int) -> str:
    out = ["# revec numba back end vs recursion", "",
           f"Medians of {repeats} runs in one process (seconds; compile times are one-off). "
           "Best block size from the sweep; R = B for reexp.", "",
           "| program | CPython recursion | numba @njit recursion | revec bfs | revec blocked "
           "(B) | revec reexp (B) | reexp vs @njit | @njit compile | revec compile |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        out.append(
            f"| {r['name']} | {r['cpython']:.4f} | {r['njit']:.5f} | {r['bfs']:.5f} | "
            f"{r['blocked']:.5f} ({r['blocked_B']}) | {r['reexp']:.5f} ({r['reexp_B']}) | "
            f"{r['njit'] / r['reexp']:.2f}x | {r['njit_compile']:.2f} | "
            f"{r['revec_compile']:.2f} |")
    out.append("")
    out.append("Utilization at the best configuration: " + "; ".join(
        f"{r['name']}: bfs {r['bfs_util']:.3f}, blocked {r['blocked_util']:.3f}, "
        f"reexp {r['reexp_util']:.3f}" for r in results))
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default="reports/pipeline.md")
    args = ap.parse_args(argv)
    # compile times are measured from scratch: no on-disk cache for the generated kernels
    os.environ["REVEC_NUMBA_CACHE"] = "0"
    t0 = time.perf_counter()
    import revec.runtime.numba_scheduler  # noqa: F401  (the shared driver, cached once)

    driver_load = time.perf_counter() - t0
    sizes = [2 ** k for k in range(4, 17, 2)]
    results = [measure(name, args.repeats, sizes) for name in tqdm(CASES, desc="pipeline")]
    text = render(results, args.repeats)
    text += (f"\nThe shared schedule driver loaded in {driver_load:.2f} s (compiled once per "
             "installation, then loaded from numba's cache); compile columns: the program's "
             "kernel and the @njit function, from scratch.\n")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 0




def measure_c(name: str, args: tuple[int, ...], repeats: int, sizes: list[int]
              ) -> dict[str, Any]:
    """C back end: the generated plain recursive C against C bfs / blocked / reexp."""
    from revec.api import compiled_task, root_args

    fname, task, _, _, _, reducer = CASES[name]
    program = get_program(str(resources.files("revec.demos") / fname))
    runner = compiled_task(program, task, "c")
    rargs = root_args(program, task, args)
    row: dict[str, Any] = {"name": f"{task}({', '.join(map(str, args))})"}
    times = []
    expect = None
    for _ in range(repeats):
        values, sec = runner.run_recursive(rargs)
        expect = values[reducer]
        times.append(sec)
    row["recursive"] = statistics.median(times)
    for variant in ("bfs", "blocked", "reexp"):
        best: tuple[float, int, float] | None = None
        for b in ([0] if variant == "bfs" else sizes):
            samples = []
            for _ in range(repeats):
                r = run_loaded(program, task, args, variant=variant, backend="c",
                               block_size=b or None)
                assert r.reducers[reducer] == expect
                samples.append(r.stats)
            med = statistics.median(s.seconds for s in samples)
            if best is None or med < best[0]:
                best = (med, b, samples[0].utilization)
        assert best is not None
        row[variant], row[f"{variant}_B"], row[f"{variant}_util"] = best
    return row


def render_c(rows: list[dict[str, Any]], repeats: int) -> str:
    out = ["# revec C back end vs the generated plain recursive C", "",
           f"gcc -O3 -march=native (plus -ffp-contract=off -fwrapv), medians of {repeats} runs "
           "in one process, seconds. Best block size from the sweep; R = B for reexp.", "",
           "| program | plain recursive C | C bfs | C blocked (B) | C reexp (B) | "
           "reexp speedup | reexp utilization |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['name']} | {r['recursive']:.4f} | {r['bfs']:.4f} | "
                   f"{r['blocked']:.4f} ({r['blocked_B']}) | {r['reexp']:.4f} ({r['reexp_B']}) "
                   f"| {r['recursive'] / r['reexp']:.2f}x | {r['reexp_util']:.3f} |")
    return "\n".join(out) + "\n"


def main_c(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="C back end vs plain recursive C")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="reports/c_backend.md")
    args = ap.parse_args(argv)
    sizes = [2 ** k for k in range(6, 17, 2)]
    rows = [measure_c(name, a, args.repeats, sizes)
            for name, a in tqdm([("fib", (35,)), ("nqueens", (12,))], desc="C back end")]
    text = render_c(rows, args.repeats)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["c"]:
        raise SystemExit(main_c(sys.argv[2:]))
    raise SystemExit(main())

"""A two-program spot check of both back ends against the baselines (superseded by
``revec bench``, kept for its short run time).

``python -m revec.bench.pipeline`` measures fib(30) and nqueens(10) (the programs of
``benchmarks/``) under the baselines of :mod:`revec.bench.baselines` (CPython recursion,
numba ``@njit`` recursion, plain recursive C) and revec's numba back end (bfs, blocked,
reexp at their best block size from a sweep), medians of repeated runs in one process,
plus compile times, and writes ``reports/pipeline.md``; ``python -m revec.bench.pipeline
c`` does the same for the C back end against plain recursive C and writes
``reports/c_backend.md``.  The full suite (eight programs, both back ends, every block
size, figures) is ``revec bench`` (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm import tqdm

from revec.api import compiled_task, get_program, root_args, run_loaded
from revec.bench.baselines import prepare
from revec.bench.presets import ANSWER_REDUCERS, program_path
from revec.files import write_atomic

CASES: dict[str, dict[str, int]] = {"fib": {"n": 30}, "nqueens": {"n": 10}}
C_CASES: dict[str, dict[str, int]] = {"fib": {"n": 35}, "nqueens": {"n": 12}}
STRATEGIES = ("bfs", "blocked", "reexp")


def median_seconds(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _label(name: str, args: dict[str, int]) -> str:
    return f"{name}({', '.join(map(str, args.values()))})"


def measure(name: str, args: dict[str, int], backend: str, repeats: int, sizes: list[int],
            kinds: tuple[str, ...]) -> dict[str, Any]:
    """Baselines ``kinds`` and bfs / blocked / reexp of ``backend`` (best B of ``sizes``)."""
    row: dict[str, Any] = {"name": _label(name, args)}
    reducer = ANSWER_REDUCERS[name][0]
    expect = None
    for kind in kinds:
        t0 = time.perf_counter()
        fn = prepare(name, kind, args)
        row[f"{kind}_compile"] = time.perf_counter() - t0
        row[kind], got = median_seconds(fn, repeats)
        assert expect is None or got[reducer] == expect
        expect = got[reducer]
    program = get_program(program_path(name))
    root = tuple(args.values())
    t0 = time.perf_counter()
    compiled_task(program, name, backend)
    run_loaded(program, name, root, variant="bfs", backend=backend)
    row["revec_compile"] = time.perf_counter() - t0
    if backend == "c":  # the generated plain recursive C of the same program
        runner = compiled_task(program, name, "c")
        times = []
        for _ in range(repeats):
            got, seconds = runner.run_recursive(root_args(program, name, root))
            assert got[reducer] == expect
            times.append(seconds)
        row["c_generated"] = statistics.median(times)
    for variant in STRATEGIES:
        best: tuple[float, int, float] | None = None
        for b in ([0] if variant == "bfs" else sizes):
            samples = []
            for _ in range(repeats):
                r = run_loaded(program, name, root, variant=variant, backend=backend,
                               block_size=b or None)
                assert r.reducers[reducer] == expect
                samples.append(r.stats)
            med = statistics.median(s.seconds for s in samples)
            if best is None or med < best[0]:
                best = (med, b, samples[0].utilization)
        assert best is not None
        row[variant], row[f"{variant}_B"], row[f"{variant}_util"] = best
    return row


def render(rows: list[dict[str, Any]], repeats: int) -> str:
    out = ["# revec numba back end vs recursion", "",
           f"Medians of {repeats} runs in one process (seconds; set-up and compile times are one-off; numba caches compiled code on disk). "
           "Baselines from `benchmarks/baselines/`; best block size from the sweep; R = B "
           "for reexp. The full suite is `revec bench` (reports/bench/).", "",
           "| program | CPython recursion | numba @njit recursion | revec bfs | revec blocked "
           "(B) | revec reexp (B) | reexp vs @njit | @njit set-up + first call | revec compile + first call |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(
            f"| {r['name']} | {r['python']:.4f} | {r['numba']:.5f} | {r['bfs']:.5f} | "
            f"{r['blocked']:.5f} ({r['blocked_B']}) | {r['reexp']:.5f} ({r['reexp_B']}) | "
            f"{r['numba'] / r['reexp']:.2f}x | {r['numba_compile']:.2f} | "
            f"{r['revec_compile']:.2f} |")
    out.append("")
    out.append("Utilization at the best configuration: " + "; ".join(
        f"{r['name']}: bfs {r['bfs_util']:.3f}, blocked {r['blocked_util']:.3f}, "
        f"reexp {r['reexp_util']:.3f}" for r in rows))
    return "\n".join(out) + "\n"


def render_c(rows: list[dict[str, Any]], repeats: int) -> str:
    out = ["# revec C back end vs plain recursive C", "",
           f"Plain recursive C: the hand-written `benchmarks/baselines/*.c` and the one revec "
           f"generates from the same task program (`revec_seq`), both gcc -O3 -march=native. "
           f"Medians of {repeats} runs in one process, seconds. Best block size from the sweep; "
           "R = B for reexp. The full suite is `revec bench` (reports/bench/).", "",
           "| program | hand-written recursive C | generated recursive C | C bfs | C blocked (B) "
           "| C reexp (B) | reexp vs hand-written | reexp vs generated | reexp utilization |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['name']} | {r['c']:.4f} | {r['c_generated']:.4f} | {r['bfs']:.4f} | "
                   f"{r['blocked']:.4f} ({r['blocked_B']}) | {r['reexp']:.4f} ({r['reexp_B']}) "
                   f"| {r['c'] / r['reexp']:.2f}x | {r['c_generated'] / r['reexp']:.2f}x "
                   f"| {r['reexp_util']:.3f} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("backend", nargs="?", choices=("numba", "c"), default="numba")
    ap.add_argument("--repeats", type=int, default=None, help="default 7 (numba), 5 (c)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if args.backend == "numba":
        repeats = args.repeats or 7
        sizes = [2 ** k for k in range(4, 17, 2)]
        rows = [measure(n, a, "numba", repeats, sizes, ("python", "numba"))
                for n, a in tqdm(CASES.items(), desc="numba back end")]
        text, out = render(rows, repeats), args.out or "reports/pipeline.md"
    else:
        repeats = args.repeats or 5
        sizes = [2 ** k for k in range(6, 17, 2)]
        rows = [measure(n, a, "c", repeats, sizes, ("c",))
                for n, a in tqdm(C_CASES.items(), desc="C back end")]
        text, out = render_c(rows, repeats), args.out or "reports/c_backend.md"
    write_atomic(Path(out), text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Natural-recursion twins against their spawn/reduce originals: C reexp, same block size.

``python -m revec.bench.natural [REPEATS] [BLOCK_SIZE] [SIZE]`` compiles both programs of each
benchmark, then times them interleaved (A, B, A, B, ...) and prints the medians and
the ratio twin / original as a Markdown table.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from revec.api import get_program, run_loaded
from revec.bench.presets import PRESETS

ROOT = Path(__file__).resolve().parents[2] / "benchmarks"
NAMES = ("fib", "nqueens", "uts", "graphcol", "knapsack", "parentheses", "binomial", "minmax")


def main(argv: list[str]) -> int:
    repeats = int(argv[0]) if argv else 5
    block = int(argv[1]) if len(argv) > 1 else None
    size = argv[2] if len(argv) > 2 else "default"
    print(f"C reexp, block size {block or 'default'}, --size {size} root arguments; medians "
          f"of {repeats} interleaved wall-clock runs")
    print("| benchmark | original s | natural s | natural / original |")
    print("|---|---|---|---|")
    for name in NAMES:
        orig = get_program(ROOT / f"{name}.py")
        nat = get_program(ROOT / "natural" / f"{name}.py")
        times: dict[str, list[float]] = {"o": [], "n": []}
        values = {}
        args = PRESETS[name][size].root_args
        for k in range(repeats + 1):
            for key, prog in (("o", orig), ("n", nat)):
                t0 = time.perf_counter()
                res = run_loaded(prog, name, args, variant="reexp", backend="c",
                                 block_size=block)
                dt = time.perf_counter() - t0
                values[key] = (res.result, res.reducers)
                if k:  # the first round warms up (compiles, pages in)
                    times[key].append(dt)
        answer = values["o"][1]
        got = {**values["n"][1], "answer": values["n"][0]}
        assert values["n"][0] in answer.values(), (name, answer, got)
        o, n = statistics.median(times["o"]), statistics.median(times["n"])
        print(f"| {name} | {o:.4f} | {n:.4f} | {n / o:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

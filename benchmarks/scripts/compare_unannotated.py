"""Time each natural benchmark against its unannotated twin (benchmarks/natural/
unannotated): the same root call, both back ends, the median of ``--repeats`` runs of
each (alternating, in one process, after a warm-up run that compiles), and the types
the twin's parameters were narrowed to.  Writes a Markdown table.

    PYTHONPATH=$PWD python benchmarks/scripts/compare_unannotated.py \\
        --preset default --repeats 5 -o reports/bench/unannotated.md
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

from revec.api import get_program, run_loaded
from revec.bench.answers import expected
from revec.bench.presets import BENCHMARKS, PRESETS
from revec.frontend.python.roots import root_typed

HERE = Path(__file__).resolve().parent.parent / "natural"  # NAME.py and unannotated/NAME.py
RETURNED = {"fib": "count", "nqueens": "solutions", "uts": "nodes", "graphcol": "colourings",
            "knapsack": "best", "parentheses": "count", "binomial": "count",
            "minmax": "xwins", "nqueens_board": "solutions", "knapsack_bb": "best",
            "findmax": "largest"}


def timed(path: Path, name: str, args: tuple[Any, ...], backend: str) -> tuple[float, Any]:
    res = run_loaded(get_program(path), name, args, variant="reexp", backend=backend,
                     workers=1)
    return res.stats.seconds, {**res.reducers, RETURNED[name]: res.result}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="default")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--backends", default="c,numba")
    ap.add_argument("--only", default="")
    ap.add_argument("-o", "--output", default=None)
    a = ap.parse_args()
    names = [n for n in BENCHMARKS if not a.only or n in a.only.split(",")]
    rows = []
    for name in names:
        preset = PRESETS[name][a.preset]
        args = preset.root_args
        want = expected(name, preset.args)
        ann, una = HERE / f"{name}.py", HERE / "unannotated" / f"{name}.py"
        t = root_typed(get_program(una), name, args).tasks[name]
        narrowed = ", ".join([f"{p.name}: {p.ty.dtype.name}" for p in t.user_params]
                             + [f"{pa.name}: {pa.ty.dtype.name} slots" for pa in t.private])
        for backend in a.backends.split(","):
            times: dict[str, list[float]] = {"ann": [], "una": []}
            for path, key in ((ann, "ann"), (una, "una")):  # warm-up (compiles)
                _, got = timed(path, name, args, backend)
                assert {k: got[k] for k in want} == want, (name, key, got, want)
            for _ in range(a.repeats):
                for path, key in ((ann, "ann"), (una, "una")):
                    times[key].append(timed(path, name, args, backend)[0])
            ma, mu = statistics.median(times["ann"]), statistics.median(times["una"])
            rows.append((name, backend, ma, mu, mu / ma, narrowed))
            print(f"{name:14} {backend:6} annotated {ma:.4f} s  unannotated {mu:.4f} s  "
                  f"ratio {mu / ma:.3f}  ({narrowed})", file=sys.stderr, flush=True)
    lines = [f"# Unannotated twins vs annotated natural benchmarks ({a.preset} preset)", "",
             f"Median of {a.repeats} runs each (alternating, one process, compiled first), "
             "variant reexp, 1 worker, `stats.seconds`.  Produced by "
             "`benchmarks/scripts/compare_unannotated.py`.", "",
             "| benchmark | back end | annotated (s) | unannotated (s) | ratio | "
             "unannotated parameters after narrowing |",
             "|---|---|---:|---:|---:|---|"]
    for name, backend, ma, mu, r, narrowed in rows:
        lines.append(f"| {name} | {backend} | {ma:.4f} | {mu:.4f} | {r:.2f} | {narrowed} |")
    text = "\n".join(lines) + "\n"
    if a.output:
        Path(a.output).parent.mkdir(parents=True, exist_ok=True)
        Path(a.output).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

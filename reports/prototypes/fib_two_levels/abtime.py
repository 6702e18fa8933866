"""Prototype timing (not part of revec): fib's generated C module with a hand-written
two-levels-per-call kernel (two_level_kernel.c) spliced in, timed against the unmodified
module and plain recursive C, interleaved CPU-time medians, one process.

    REVEC_CFLAGS="-O3 -march=znver3" PYTHONPATH=$PWD python \
        reports/prototypes/fib_two_levels/abtime.py B N REPS [ungated|gated|gated2]

ungated: two levels in every kernel call (statistics NOT exact: the skipped levels are not
counted, their blocks never exist for the driver's decisions).
gated:   two levels only in a blocked-mode call with n >= R (there the one-level schedule
runs both child blocks blocked: the statistics could be kept exact by the driver).
gated2:  gated, plus bfs-mode calls with 2 n < B (the child level stays bfs).
The reducer is checked against the unmodified module in every run; the statistics of the
spliced module are not (the one-level driver counts its grandchildren one level up).
"""

import statistics
import sys
import time
from pathlib import Path
from typing import Any

import revec.backends.c_runner as cr
from revec import api
from revec.bench import baselines
from revec.transforms.schedule import Schedule

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
B = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 16
N = int(sys.argv[2]) if len(sys.argv) > 2 else 40
REPS = int(sys.argv[3]) if len(sys.argv) > 3 else 15
MODE = sys.argv[4] if len(sys.argv) > 4 else "ungated"
ORIG = cr.generate_c_module
PROTO = (HERE / "two_level_kernel.c").read_text()

GATE = """static int64_t kernel(int64_t off, int64_t n, int64_t out_base, int64_t *kused_out) {
    if (out_base >= off + n && n >= RV_PROTO_R)  /* blocked (fib: no base thread there) */
        return kernel2(off, n, out_base, kused_out);
%s    return kernel1(off, n, out_base, kused_out);
}
"""
BFS = """    if (out_base < off + n && 2 * n < RV_PROTO_R)  /* bfs: the child level stays bfs */
        return kernel2(off, n, out_base, kused_out);
"""


def spliced(program: Any, task: str, plan: Any) -> str:
    src = ORIG(program, task, plan)
    m0 = src.index("static int64_t kernel(")
    end = src.index("\n}\n", m0) + 3
    body = src[m0:end]
    macros = body[body.index("#ifndef RV_LSTEP8"):body.index("    rv_sad_t sa_count")]
    if MODE == "ungated":
        src = src[:m0] + macros + PROTO + src[end:]
    else:
        k1 = body.replace("static int64_t kernel(", "static int64_t kernel1(", 1)
        k2 = PROTO.replace("static int64_t kernel(", "static int64_t kernel2(", 1)
        gate = GATE % (BFS if MODE == "gated2" else "")
        src = src[:m0] + macros + k1 + k2 + gate + src[end:]
    src = src.replace("#define RV_SLACK 0", f"#define RV_SLACK 32\n#define RV_PROTO_R {B}")
    src = src.replace("static RV_TLS int64_t kleaf[2];", "static RV_TLS int64_t kleaf[4];")
    return src.replace("grow_children(out_base + 2 * (n + RV_SLACK), 2);",
                       "grow_children(out_base + 4 * (n + RV_SLACK), 4);")


def main() -> None:
    prog = api.get_program(ROOT / "benchmarks" / "fib.py")
    cur = cr.CTask(prog, "fib")
    cr.generate_c_module = spliced
    two = cr.CTask(prog, "fib")
    cr.generate_c_module = ORIG
    sched = Schedule.make("reexp", B, B, 16)
    rargs = api.root_args(prog, "fib", (N,))
    plain = baselines.prepare("fib", "c", {"n": N})
    want, _ = cur.run(rargs, sched)
    ts: dict[str, list[float]] = {"plain": [], "cur": [], "two": []}
    for _ in range(REPS):
        c0 = time.process_time()
        ans = plain()
        ts["plain"].append(time.process_time() - c0)
        assert ans["count"] == want["count"], (ans, want)
        for name, ct in (("cur", cur), ("two", two)):
            c0 = time.process_time()
            red, _ = ct.run(rargs, sched)
            ts[name].append(time.process_time() - c0)
            assert red == want, (name, red, want)
    med = {k: statistics.median(v) for k, v in ts.items()}
    print(MODE, f"B={B}", {k: round(v, 4) for k, v in med.items()},
          f"plain/cur {med['plain'] / med['cur']:.2f}",
          f"plain/two {med['plain'] / med['two']:.2f}",
          f"cur/two {med['cur'] / med['two']:.3f}")


if __name__ == "__main__":
    main()

"""``revec bench PROG.c``: a Cilk C program against its serial elision, and against the
Python spawn/reduce program of the same benchmark.

For a ``.c`` file named after a suite benchmark (``benchmarks/cilk/nqueens.c``, or any
``nqueens.c`` with the same task), on the suite's preset inputs:

* the serial elision: the file itself (its ``main``) built by ``gcc -O3 -march=native``
  with ``cilk_spawn``/``cilk_sync`` defined away, timed as a process (median wall time);
  and the same build with ``-fno-ipa-pure-const`` (see ``NO_CONST_MERGE``), interleaved;
* revec's C back end, reexp (R = B), every block size of the sweep once, the best two
  refined to the median of ``repeats`` runs (``RunStats.seconds``, compilation excluded);
* the same for the Python spawn/reduce program ``benchmarks/NAME.py`` and its plain
  recursive C baseline (``revec.bench.baselines``), so that the two speedups come from
  one run; at the best sizes the two programs are re-timed interleaved.

Every run's answer is checked against the benchmark's independent answer.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from revec.api import get_program, run_loaded
from revec.bench import baselines
from revec.bench.cilk_corpus import CORPUS, cilk_args
from revec.bench.presets import preset, program_path
from revec.errors import RevecError

DEFAULT_SIZES = (256, 1024, 4096, 16384, 65536)


def corpus_name(path: Path) -> str:
    name = path.stem
    if name not in CORPUS:
        raise RevecError(f"{path}: revec bench measures a Cilk C program named after a suite "
                         f"benchmark ({', '.join(CORPUS)}), on that benchmark's inputs")
    return name


# gcc marks a task without side effects (fib, binomial, ...) 'const' and, after inlining
# it into itself, merges its repeated calls: fib(40)'s elision then takes 0.005 s instead
# of 0.2 s (gcc 12, -O3), no longer walking the tree; the second elision keeps the calls
NO_CONST_MERGE = ("-fno-ipa-pure-const",)


def build_elision(path: Path, folder: Path, extra: tuple[str, ...] = ()) -> Path:
    from revec.toolchain.cbuild import find_compiler

    cc = find_compiler()
    if cc is None:
        raise RevecError("no C compiler found for the serial elision")
    inc = folder / "include" / "cilk"
    inc.mkdir(parents=True, exist_ok=True)
    (inc / "cilk.h").write_text("/* serial elision */\n")
    exe = folder / (path.stem + "".join(extra))
    cmd = [*cc, "-O3", "-march=native", "-pthread",  # uts.c's main runs on a big-stack thread
           *extra, "-I", str(folder / "include"), "-Dcilk_spawn=", "-Dcilk_sync=", str(path), "-o",
           str(exe), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RevecError(f"the serial elision of {path} does not build:\n{proc.stderr}")
    return exe


def _time_process(exe: Path, args: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RevecError(f"{exe.name} failed: {proc.stderr}")
    return seconds, proc.stdout.strip()


def _median(xs: list[float]) -> float:
    return float(statistics.median(xs))


def _sweep(program: Any, task: str, args: tuple[Any, ...], check: Any, sizes: tuple[int, ...],
           repeats: int) -> tuple[int, dict[int, list[float]]]:
    run_loaded(program, task, args, variant="reexp", backend="c", block_size=4096)  # warm
    times: dict[int, list[float]] = {}
    for b in sizes:
        r = run_loaded(program, task, args, variant="reexp", backend="c", block_size=b)
        check(r)
        times[b] = [float(r.stats.seconds)]
    best = sorted(times, key=lambda b: times[b][0])[:2]
    for b in best:
        for _ in range(repeats - 1):
            r = run_loaded(program, task, args, variant="reexp", backend="c", block_size=b)
            check(r)
            times[b].append(float(r.stats.seconds))
    return min(best, key=lambda b: _median(times[b])), times


def measure(path: Path, size: str = "default", repeats: int = 5,
            sizes: tuple[int, ...] = DEFAULT_SIZES) -> dict[str, Any]:
    name = corpus_name(path)
    p = preset(name, size)
    from revec.bench.suite import expected_answer

    want = expected_answer(p)[0][CORPUS[name][1]]
    cargs = cilk_args(name, size)

    def check_c(r: Any) -> None:
        if int(r.result) != want:
            raise RevecError(f"{path}: revec returned {r.result}, expected {want}")

    with tempfile.TemporaryDirectory(prefix="revec-elision-") as tmp:
        exe = build_elision(path, Path(tmp))
        exe_calls = build_elision(path, Path(tmp), NO_CONST_MERGE)
        words = [str(a) for a in cargs]
        _time_process(exe, words)  # warm (page cache)
        _time_process(exe_calls, words)
        el_times: list[float] = []
        el_calls_times: list[float] = []
        for _ in range(repeats):  # the two builds interleaved
            for binary, times in ((exe, el_times), (exe_calls, el_calls_times)):
                t, out = _time_process(binary, words)
                if int(out.split()[0]) != want:
                    raise RevecError(f"the serial elision of {path} printed {out}, "
                                     f"expected {want}")
                times.append(t)
    cprog = get_program(path)
    c_best, c_times = _sweep(cprog, name, cargs, check_c, sizes, repeats)

    reducer = CORPUS[name][1]

    def check_py(r: Any) -> None:
        if int(r.reducers[reducer]) != want:
            raise RevecError(f"{name}.py: revec gave {r.reducers[reducer]}, expected {want}")

    pprog = get_program(program_path(name))
    py_best, py_times = _sweep(pprog, name, p.root_args, check_py, sizes, repeats)
    fn = baselines.prepare(name, "c", p.args)
    fn()
    base_times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        base_times.append(time.perf_counter() - t0)
    # the two programs at their best sizes, interleaved
    inter_c, inter_py = [], []
    for _ in range(repeats):
        r = run_loaded(cprog, name, cargs, variant="reexp", backend="c", block_size=c_best)
        check_c(r)
        inter_c.append(float(r.stats.seconds))
        r = run_loaded(pprog, name, p.root_args, variant="reexp", backend="c",
                       block_size=py_best)
        check_py(r)
        inter_py.append(float(r.stats.seconds))
    elision = _median(el_times)
    elision_calls = _median(el_calls_times)
    c_reexp = _median(c_times[c_best])
    baseline = _median(base_times)
    py_reexp = _median(py_times[py_best])
    return {
        "name": name, "size": size, "args": list(cargs), "answer": want,
        "elision_seconds": elision, "elision_times": el_times,
        "elision_calls_seconds": elision_calls, "elision_calls_times": el_calls_times,
        "c_best_block": c_best, "c_reexp_seconds": c_reexp,
        "c_reexp_curve": {str(b): _median(v) for b, v in c_times.items()},
        "python_best_block": py_best, "python_reexp_seconds": py_reexp,
        "python_baseline_seconds": baseline,
        "interleaved_c": inter_c, "interleaved_python": inter_py,
        "c_speedup": elision / c_reexp, "c_speedup_calls": elision_calls / c_reexp,
        "python_speedup": baseline / py_reexp,
        "speedup_ratio": (baseline / py_reexp) / (elision / c_reexp),
        "speedup_ratio_calls": (baseline / py_reexp) / (elision_calls / c_reexp),
        "reexp_time_ratio": _median(inter_c) / _median(inter_py),
        "load": os.getloadavg(),
    }


def render(records: list[dict[str, Any]], repeats: int) -> str:
    lines = [
        "# Cilk C corpus: revec against the serial elision",
        "",
        "Each row: a `benchmarks/cilk/` program on the suite's preset inputs. *elision*: the "
        "file built by `gcc -O3 -march=native -pthread -Dcilk_spawn= -Dcilk_sync=` (its own "
        "`main`), median wall time of the process; *elision, calls kept*: the same with "
        "`-fno-ipa-pure-const` (gcc otherwise marks a task without side effects const and "
        "merges the repeated calls of its inlined copies, so fib's elision skips most of "
        "the tree), the two builds run interleaved; *C reexp*: revec's C back end, reexp with R = B at "
        "the best block size of the sweep, median of the run's own time "
        "(`RunStats.seconds`, compilation excluded); *Python*: the spawn/reduce program "
        "`benchmarks/NAME.py`, C reexp at its best block size, against its plain recursive "
        "C baseline (`benchmarks/baselines/`). *speedup ratio*: Python program's speedup "
        "over the C program's (target: at most 1.15), against the elision and against the "
        "elision with its calls kept. *time ratio*: C program's reexp time "
        "over the Python program's, medians of runs interleaved at the best sizes. "
        f"Medians of {repeats} runs.",
        "",
        "| program | size | answer | elision (s) | elision, calls kept (s) | C reexp (s) | "
        "best B | speedup | speedup, calls kept | Python reexp (s) | Python baseline (s) | "
        "Python speedup | speedup ratio | speedup ratio, calls kept | time ratio | "
        "load (1/5/15 min) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        load = "/".join(f"{x:.1f}" for x in r["load"])
        lines.append(
            f"| {r['name']} | {r['size']} | {r['answer']} | {r['elision_seconds']:.3f} | "
            f"{r['elision_calls_seconds']:.3f} | {r['c_reexp_seconds']:.3f} | "
            f"{r['c_best_block']} | {r['c_speedup']:.2f}x | {r['c_speedup_calls']:.2f}x | "
            f"{r['python_reexp_seconds']:.3f} | {r['python_baseline_seconds']:.3f} | "
            f"{r['python_speedup']:.2f}x | {r['speedup_ratio']:.2f} | "
            f"{r['speedup_ratio_calls']:.2f} | {r['reexp_time_ratio']:.2f} | {load} |")
    return "\n".join(lines) + "\n"

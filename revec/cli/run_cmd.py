"""revec run FILE TASK [ARGS...]: run a task with a variant and a back end."""

from __future__ import annotations

import argparse
import io

import numpy as np

from revec import ir
from revec.api import (
    COMPACTIONS,
    COUNTS,
    VARIANTS,
    check_seq_backend,
    cli_spelling,
    output_summary,
    read_count,
    resolve_backend,
    run_program,
)
from revec.backends import registry
from revec.cli.common import (
    add_plan_options,
    announce_slow,
    output_file,
    plan_options,
    print_json,
    warn,
)
from revec.cluster import CONNECT_TIMEOUT, WORKER_TIMEOUT
from revec.errors import RevecError
from revec.files import write_atomic
from revec.runtime.memory import parse_size
from revec.runtime.workers import PER_WORKER_LINES, check_workers, default_workers, summarise
from revec.transforms.schedule import UNBOUNDED


def read_counts(args: argparse.Namespace) -> None:
    """The numeric options as integers, range-checked (None: not given); read after
    parsing, so every bad value gets one message style (the API's check:
    :func:`revec.api.read_count`)."""
    for name in COUNTS:
        setattr(args, name, read_count(name, getattr(args, name), cli_spelling))


# the Dask timeouts (seconds) and their defaults (docs/backends.md, "Workers")
SECONDS = {"connect_timeout": CONNECT_TIMEOUT, "worker_timeout": WORKER_TIMEOUT}


def read_seconds(args: argparse.Namespace) -> None:
    """The timeout options as positive floats (their defaults when not given)."""
    for name, default in SECONDS.items():
        text = getattr(args, name)
        option = "--" + name.replace("_", "-")
        if text is None:
            setattr(args, name, default)
            continue
        if args.scheduler is None and args.dask_local is None:
            raise RevecError(f"{option} applies to Dask runs: add --scheduler ADDRESS or "
                             "--dask-local N")
        try:
            value = float(text)
        except ValueError:
            raise RevecError(f"{option} must be a number of seconds, got {text!r}") from None
        if not value > 0 or value == float("inf"):
            raise RevecError(f"{option} must be a positive number of seconds, got {text}")
        setattr(args, name, value)


def check_worker_counts(args: argparse.Namespace) -> None:
    """At most :func:`max_workers` workers (or local Dask processes); a warning above the
    cores this process may use (a remote cluster's cores are not this machine's)."""
    cores = default_workers()
    for option, n, what in (("--workers", args.workers, "workers"),
                            ("--dask-local", args.dask_local, "Dask worker processes")):
        if n is None:
            continue
        check_workers(n, option)
        if n > cores and (option != "--workers" or args.scheduler is None):
            warn(f"{option} {n}: more {what} than the {cores} cores this process may use "
                 f"(os.sched_getaffinity); the extra {what} share cores and make the run "
                 "no faster")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("run", help="run a task program")
    p.add_argument("file")
    p.add_argument("task")
    p.add_argument("args", nargs="*",
                   help="root arguments (defaults fill the rest); an array parameter's "
                   "argument is a file: a .npy file, or a text file of whitespace-separated "
                   "numbers, one row per line (several columns: a 2-D array); a C array "
                   "of structs: a .npy structured array with the struct's fields, or a "
                   "text file with one row per struct and one column per field in "
                   "declaration order")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                   help="the array of a C file-scope pointer that main fills (static int "
                   "*matrix;), as a file like an array argument's (repeatable)")
    p.add_argument("--variant", choices=VARIANTS, default="reexp")
    p.add_argument("--backend", choices=registry.choices(), default=None,
                   help="auto (default): C when a working C compiler is found, else numba; "
                        "the seq variant is the plain Python program and takes no back end")
    p.add_argument("--block-size", default=None, metavar="B")
    p.add_argument("--reexp-threshold", default=None, metavar="R")
    p.add_argument("--simd-width", default=None, metavar="P")
    p.add_argument("--max-memory", default=None, metavar="SIZE",
                   help="memory budget for everything the run grows (thread frames, record stacks, per-level statistics, per-worker state), e.g. 8G or 512M (default: half of "
                        "the machine's memory; 0: no limit); a run over it stops with a "
                        "message")
    p.add_argument("--compaction", choices=COMPACTIONS, default=None,
                   help="the block split and active lists: table-driven vector "
                        "compaction steps (default) or branch-free scalar steps")
    p.add_argument("--workers", default=None, metavar="N",
                   help="threads running the schedule, balanced by work stealing "
                        "(default: the cores this process may use; 1: one core)")
    dask = p.add_mutually_exclusive_group()
    dask.add_argument("--scheduler", default=None, metavar="ADDRESS",
                      help="run on an existing Dask cluster (e.g. tcp://host:8786): a "
                           "breadth-first frontier is cut into chunks, one Dask task each")
    dask.add_argument("--dask-local", default=None, metavar="N",
                      help="run on a local Dask cluster of N worker processes")
    p.add_argument("--connect-timeout", default=None, metavar="SECONDS",
                   help="Dask: give up connecting to --scheduler after SECONDS "
                        f"(default {CONNECT_TIMEOUT:g})")
    p.add_argument("--worker-timeout", default=None, metavar="SECONDS",
                   help="Dask: give up when the cluster has had no worker for SECONDS, at "
                        f"the start or after its last worker left (default "
                        f"{WORKER_TIMEOUT:g}); the wait is said on standard error")
    p.add_argument("--output", action="append", default=[], metavar="NAME=FILE",
                   help="an output array parameter NAME (Python Output[...], a C pointer "
                   "the tasks write through) is written to FILE after the run (atomically; "
                   ".npy: a NumPy file, else text, one element per line, a 2-D array's rows "
                   "as lines); its argument in ARGS gives its shape and the values of the "
                   "elements no task writes (a .npy or text file, as for an input). Every "
                   "output is summarized on the screen (and is in --json)")
    p.add_argument("--check-outputs", action="store_true",
                   help="first run the sequential reference recording which task writes "
                   "each element of each output array; two tasks writing one element is "
                   "an error naming both (the compiled runs do not check)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_plan_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.scheduler is not None and (args.plan_off is not None or args.plan_on is not None):
        raise RevecError("--plan-off / --plan-on apply to this machine's processes; the "
                         "workers of a Dask cluster at --scheduler build their kernels with "
                         "their own REVEC_PLAN_OFF / REVEC_PLAN_ON (set them there)")
    with plan_options(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    read_counts(args)
    read_seconds(args)
    check_worker_counts(args)
    check_seq_backend(args.variant, args.backend, cli_spelling)
    if args.block_size is not None and args.simd_width is not None and \
            args.block_size < args.simd_width:
        warn(f"--block-size {args.block_size} is smaller than the SIMD width "
             f"{args.simd_width}: every block leaves lanes idle")
    inputs = _inputs(args.input)
    if args.variant != "seq":
        _compile(args)
    max_memory = None if args.max_memory is None else parse_size(args.max_memory)
    files = output_files(args)
    if args.check_outputs and (args.scheduler is not None or args.dask_local is not None):
        raise RevecError("--check-outputs runs on this machine (the sequential reference); "
                         "drop --scheduler / --dask-local to check")
    if args.scheduler is not None or args.dask_local is not None:
        from revec.cluster import run_dask

        result = run_dask(args.file, args.task, tuple(args.args), variant=args.variant,
                          backend=args.backend, block_size=args.block_size,
                          reexp_threshold=args.reexp_threshold, simd_width=args.simd_width,
                          max_memory=max_memory, workers=args.workers,
                          scheduler=args.scheduler, local=args.dask_local,
                          progress=not args.json, inputs=inputs,
                          connect_timeout=args.connect_timeout,
                          worker_timeout=args.worker_timeout)
    else:
        result = run_program(args.file, args.task, tuple(args.args), variant=args.variant,
                             backend=args.backend or "auto", block_size=args.block_size,
                             reexp_threshold=args.reexp_threshold,
                             simd_width=args.simd_width, max_memory=max_memory,
                             compaction=args.compaction, workers=args.workers,
                             inputs=inputs, check_outputs=args.check_outputs)
    for name, path in files.items():
        write_output(path, result.outputs[name])
    # only the reducers this task folds into (a file may hold other tasks' reducers)
    from revec.api import get_program

    own = task_reducers(get_program(args.file).tasks[result.task])
    result.reducers = {k: v for k, v in result.reducers.items() if k in own}
    if args.json:
        print_json(result.to_json())
        return 0
    if result.has_result:
        print(f"result = {result.result}")
    for name, value in result.reducers.items():
        print(f"{name} = {value}")
    for name, arr in result.outputs.items():
        print(output_summary(name, arr) + (f"; written to {files[name]}" if name in files
                                           else ""))
    if result.outputs_checked:
        print(f"outputs checked by {result.outputs_checked}: no element written by two "
              "tasks")
    s = result.stats
    if result.variant == "seq":
        print(f"variant seq (plain Python): {s.seconds:.4f} s")
        return 0
    sch = result.schedule
    assert sch is not None
    shown_b = "unbounded" if sch.block_size >= UNBOUNDED else str(sch.block_size)
    chosen = ("" if args.backend not in (None, "auto") else
              " (--backend auto: a working C compiler was found)" if result.backend == "c"
              else " (--backend auto: no working C compiler, so numba)")
    print(f"variant {result.variant} on {result.backend}{chosen}: B={shown_b} "
          f"R={sch.reexp_threshold} P={sch.simd_width}")
    print(f"tasks {s.tasks}  leaves {s.leaves}  levels {s.levels}  blocks {s.blocks}")
    print(f"SIMD utilization {s.utilization:.4f}  re-expansions {s.reexpansions}  "
          f"peak live frames {s.peak_live} ({s.peak_live_bytes} bytes)  "
          f"time {s.seconds:.4f} s")
    if s.pruned is not None:
        print(f"pruned tasks {s.pruned} (a pruning condition held; the bound read at "
              "block start)")
    if len(s.per_worker) > PER_WORKER_LINES:
        # many workers (or chunks): one summary line, not a line each
        chunks = "chunk" in s.per_worker[0]
        keys = ("frames", "tasks", "seconds") if chunks else ("tasks", "steals",
                                                              "idle_seconds")
        each = "chunk" if chunks else "worker"
        print(f"workers {s.workers}" + (f", {len(s.per_worker)} chunks" if chunks else "")
              + f" (per {each}; --json lists every {each}): "
              + summarise(s.per_worker, keys))
    elif s.per_worker:
        print(f"workers {s.workers}:")
        for i, w in enumerate(s.per_worker):
            if "chunk" in w:
                print(f"  chunk {w['chunk']}: frames {w['frames']}  tasks {w['tasks']}  "
                      f"{w['seconds']:.4f} s")
            else:
                print(f"  worker {i}: tasks {w['tasks']}  steals {w['steals']}  "
                      f"idle {w['idle_seconds']:.4f} s")
    return 0


def output_files(args: argparse.Namespace) -> dict[str, str]:
    """``--output NAME=FILE`` options: each NAME an output array parameter of the task,
    each FILE a file name in an existing directory."""
    from revec.api import get_program

    out: dict[str, str] = {}
    if not args.output:
        return out
    program = get_program(args.file)
    t = program.tasks.get(args.task)
    names = [ap.name for ap in t.arrays if ap.output] if t is not None else []
    for item in args.output:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise RevecError(f"--output {item}: expected NAME=FILE (e.g. out=result.npy)")
        if t is not None and name not in names:
            have = ", ".join(names) if names else "none"
            raise RevecError(f"--output {item}: '{name}' is not an output array of task "
                             f"'{args.task}' (its output arrays: {have})")
        output_file(path, "--output")
        out[name] = path
    return out


def write_output(path: str, arr: np.ndarray) -> None:
    """An output array to ``path`` atomically: ``.npy`` as a NumPy file, else text."""
    if path.endswith(".npy"):
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        write_atomic(path, buf.getvalue())
        return
    text = io.StringIO()
    np.savetxt(text, arr if arr.ndim else arr.reshape(1),
               fmt="%.17g" if arr.dtype.kind == "f" else "%d")
    write_atomic(path, text.getvalue())


def _inputs(specs: list[str]) -> dict[str, str]:
    """``--input NAME=FILE`` options: name -> file."""
    out: dict[str, str] = {}
    for spec in specs:
        name, eq, file = spec.partition("=")
        if not eq or not name.strip() or not file:
            raise RevecError(f"--input {spec}: expected NAME=FILE (e.g. --input "
                             "matrix=matrix.npy)")
        if name.strip() in out:
            raise RevecError(f"--input {name.strip()} is given twice")
        out[name.strip()] = file
    return out


def task_reducers(task: ir.TaskDef) -> set[str]:
    """The reducers a task's statements reduce into."""
    return {n.reducer for n in ir.walk_nodes(list(vars(task).values()))
            if isinstance(n, ir.Reduce)}


def _compile(args: argparse.Namespace) -> None:
    """Compile (or load) the task first, saying so when that takes a while."""
    from revec.api import compiled_task, get_program

    program = get_program(args.file)
    if args.task not in program.tasks or program.tasks[args.task].arrays or program.inputs:
        return  # run_program names the tasks; a program's array inputs are bound first
    backend = resolve_backend(args.backend or "auto")
    with announce_slow(f"compiling {args.file} task {args.task} for the {backend} back end "
                       "(once; later runs load it from the cache) ..."):
        compiled_task(program, args.task, backend, args.compaction)

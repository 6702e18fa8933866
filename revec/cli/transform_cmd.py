"""revec transform FILE [-o OUT] [--backend NAME] [--plan]: write the generated
module(s), or the kernel plan both back ends walk.  The back ends are those of
:mod:`revec.backends.registry`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from revec.backends import registry
from revec.errors import RevecError
from revec.frontend import load_program

if TYPE_CHECKING:
    from revec import ir


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("transform", help="write the generated bfs/blocked/reexp module")
    p.add_argument("file")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="output file (one task), or an existing directory, written with a "
                        "trailing '/' when it does not exist yet (one file per task: "
                        "STEM_TASK.py / .c); default: standard output")
    p.add_argument("--mkdir", action="store_true",
                   help="create the output's missing parent directories")
    p.add_argument("--backend", choices=registry.names(), default="numba",
                   help="the back end whose module is written (default: numba)")
    p.add_argument("--task", help="only this task (default: every task of the file)")
    p.add_argument("--spawn-form", action="store_true",
                   help="write the checked task in the spawn/reduce language instead (what "
                        "revec derived from return values and prologues), as readable Python")
    p.add_argument("--plan", action="store_true",
                   help="write the kernel plan instead: the layout and the steps of the "
                        "block kernel (split, base case, inductive shape, lanes, fast "
                        "paths) that the --backend's code follows, and each plan "
                        "technique's state (on, off or not applicable, and why)")
    from revec.cli.common import add_plan_options

    add_plan_options(p)
    p.set_defaults(func=run)


def generate(program: ir.Program, task: str, backend: str) -> tuple[str, str]:
    """(file suffix, generated text) for ``task`` on ``backend``."""
    b = registry.get(backend)
    return b.suffix, b.generate(program, task)


def run(args: argparse.Namespace) -> int:
    from revec.cli.common import plan_options

    with plan_options(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from revec.cli.common import write_atomic

    program = load_program(args.file)
    tasks = [args.task] if args.task else list(program.tasks)
    for t in tasks:
        if t not in program.tasks:
            raise RevecError(f"no task '{t}' in {args.file}")
    # generate everything before writing anything: no half-written output
    if args.spawn_form and args.plan:
        raise RevecError("--spawn-form and --plan: pick one")
    if args.spawn_form:
        from revec.transforms.show import show_task

        outputs = [(t, ".py", show_task(program, t)) for t in tasks]
    elif args.plan:
        from revec.backends.techniques import render_states, technique_states
        from revec.transforms.kernel_plan import build_plan

        target = registry.get(args.backend).target
        outputs = [(t, ".plan", build_plan(program, t, target=target).render()
                    + render_states(technique_states(program, t, args.backend)))
                   for t in tasks]
    else:
        outputs = [(t, *generate(program, t, args.backend)) for t in tasks]
    if args.output is None:
        for _, _, text in outputs:
            sys.stdout.write(text)
        return 0
    from revec.cli.common import output_dir, output_file

    as_dir = args.output.endswith(("/", os.sep)) or Path(args.output).is_dir()
    if not as_dir:
        if len(outputs) > 1:
            raise RevecError(f"-o {args.output}: {args.file} has {len(outputs)} tasks "
                             f"({', '.join(tasks)}); name a directory (ending in '/') or "
                             "pick one task with --task")
        out = output_file(args.output, mkdir=args.mkdir)
        write_atomic(out, outputs[0][2])
        print(f"wrote {out}")
        return 0
    folder = output_dir(args.output, mkdir=args.mkdir)
    stem = Path(args.file).stem
    for t, suffix, text in outputs:
        path = folder / f"{stem}_{t}{suffix}"
        write_atomic(path, text)
        print(f"wrote {path}")
    return 0

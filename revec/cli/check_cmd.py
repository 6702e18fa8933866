"""revec check FILE: report whether a program is in the language."""

from __future__ import annotations

import argparse

from revec.frontend import load_program


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("check", help="check a task program; exit 0 if it is valid, 2 if not")
    p.add_argument("file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    program = load_program(args.file)
    for t in program.tasks.values():
        params = ", ".join(f"{p.name}: {p.ty}" for p in t.params)
        bound = "data-dependent" if t.max_spawns is None else str(t.max_spawns)
        print(f"{args.file}: task {t.name}({params}): ok (spawns per task: {bound})")
    for r in program.reducers.values():
        print(f"{args.file}: reducer {r.name}: {r.dtype.name} {r.op}")
    return 0

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
        params = ", ".join(f"{p.name}: {p.ty}" for p in t.user_params)
        bound = "data-dependent" if t.max_spawns is None else str(t.max_spawns)
        returns = ""
        if t.result is not None:
            decl = program.reducers[t.result]
            how = "sum" if decl.op == "sum" else f"{decl.op} over path sums"
            derived = [p.name for p in t.params if p.hidden]
            returns = (f" -> {decl.dtype.name} (derived: a {how} reducer"
                       + (f", frame field {derived[0]}" if derived else "") + ")")
        print(f"{args.file}: task {t.name}({params}){returns}: ok (spawns per task: {bound})")
    for r in program.reducers.values():
        if not r.hidden:
            print(f"{args.file}: reducer {r.name}: {r.dtype.name} {r.op}")
        elif r.bound:
            how = "raised (max)" if r.op == "max" else "lowered (min)"
            start = "" if r.start is None else f", starting at {r.start}"
            print(f"{args.file}: bound {r.name}: {r.dtype.name}, {how}{start}, read to prune "
                  "as at block start; the answer equals the serial program's if pruning is "
                  "sound (a pruned subtree never beats the final answer)")
    return 0

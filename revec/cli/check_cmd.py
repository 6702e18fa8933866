"""revec check FILE: report whether a program is in the language."""

from __future__ import annotations

import argparse

from revec import ir
from revec.frontend import load_program
from revec.frontend.inputs import global_inputs


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("check", help="check a task program; exit 0 if it is valid, 2 if not")
    p.add_argument("file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    program = load_program(args.file)
    for t in program.tasks.values():
        shown = [f"{p.name}: {p.ty}" for p in t.user_params]
        placed = [(ap.position, f"{ap.name}: {_elements([program.inputs[k] for k in ap.keys])}"
                   + (" (output)" if ap.output else "")) for ap in t.arrays]
        placed += [(pa.position, f"{pa.name}: {pa.ty}[at most "
                    f"{pa.bound if pa.bound else pa.capacity}] (task-private)")
                   for pa in t.private]
        for pos, text in sorted(placed):
            shown.insert(pos, text)
        params = ", ".join(shown)
        bound = "data-dependent" if t.max_spawns is None else str(t.max_spawns)
        returns = ""
        if t.result is not None:
            decl = program.reducers[t.result]
            how = "sum" if decl.op == "sum" else f"{decl.op} over path sums"
            views = {f for ap in t.arrays for f in (ap.offset, ap.end)} | {
                f for pa in t.private for f in (*pa.fields, pa.length)}
            derived = [p.name for p in t.params if p.hidden and p.name not in views]
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
    for name, decls in global_inputs(program).items():
        print(f"{args.file}: input {name}: {_elements(decls)} (a file-scope pointer the "
              f"caller supplies: inputs={{'{name}': ...}}, --input {name}=FILE)")
    return 0


def _elements(decls: list[ir.InputDecl]) -> str:
    """An input's type: ``int32[]``, ``{value: int32, weight: int32}[]`` (structs)."""
    if decls[0].field is None:
        return f"{decls[0].dtype.name}{'[]' * decls[0].ndim}"
    return "{" + ", ".join(f"{d.field}: {d.dtype.name}" for d in decls) + "}[]"

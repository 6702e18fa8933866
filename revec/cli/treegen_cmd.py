"""revec treegen count|sample: exact tree counts and uniform tree samples."""

from __future__ import annotations

import argparse

from revec.cli.common import print_json


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("treegen", help="full binary trees by size and height: counts, samples")
    tsub = p.add_subparsers(dest="treegen_command", metavar="{count,sample}")
    tsub.required = True
    c = tsub.add_parser("count", help="a(N, H) (height at most H) and e(N, H) (exactly H)")
    c.add_argument("nodes", type=_int, metavar="N")
    c.add_argument("height", type=_int, metavar="H")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=run_count)
    s = tsub.add_parser("sample", help="uniform trees of N nodes and height exactly H, "
                                        "one preorder string per line (1 interior, 0 leaf)")
    s.add_argument("nodes", type=_int, metavar="N")
    s.add_argument("height", type=_int, metavar="H")
    s.add_argument("--count", type=_int, default=1, metavar="K")
    s.add_argument("--seed", type=_int, default=0, metavar="S")
    s.set_defaults(func=run_sample)


def run_count(args: argparse.Namespace) -> int:
    from revec.treegen.counts import check_size_height, count

    check_size_height(args.nodes, args.height)
    c = count(args.nodes, args.height)
    if args.json:
        print_json(c.to_json())
    else:
        print(f"a({c.nodes}, {c.height}) = {c.at_most}")
        print(f"e({c.nodes}, {c.height}) = {c.exact}")
    return 0


def run_sample(args: argparse.Namespace) -> int:
    import sys

    from revec.errors import RevecError
    from revec.treegen.sampler import sample_preorders

    if args.count < 0:
        raise RevecError(f"--count must not be negative, got {args.count}")
    for line in sample_preorders(args.nodes, args.height, args.count, args.seed):
        sys.stdout.write(line + "\n")
    return 0

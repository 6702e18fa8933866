"""The ``revec`` command line.

Each sub-command lives in its own module ``revec/cli/<name>_cmd.py`` that defines
``register(subparsers) -> None``; the parser it adds sets ``func`` to a callable
``(args) -> int``.  Commands are discovered here, so adding a command is adding a
file.  User mistakes (:class:`revec.errors.RevecError`) print one located message
and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from revec.errors import RevecError


class _Parser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors already; keep its message on one line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"revec: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="revec", description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    package = importlib.import_module(__name__)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.endswith("_cmd"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except RevecError as err:
        sys.stderr.write(err.format() + "\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("revec: interrupted\n")
        return 130
    return int(code or 0)


if __name__ == "__main__":
    raise SystemExit(main())

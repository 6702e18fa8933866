"""The ``revec`` command line.

Each sub-command lives in its own module ``revec/cli/<name>_cmd.py`` that defines
``register(subparsers) -> None``; the parser it adds sets ``func`` to a callable
``(args) -> int``.  Commands are discovered here, so adding a command is adding a
file.  User mistakes (:class:`revec.errors.RevecError`) print one located message
and exit with status 2, never a traceback.  A closed output pipe ends the command
quietly (status 141, as a SIGPIPE would); a failed write (e.g. a full disk) is one line
on standard error (status 1); Ctrl-C is one line (status 130).
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
    from revec import __version__

    parser.add_argument("--version", action="version", version=f"revec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    package = importlib.import_module(__name__)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.endswith("_cmd"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as stop:  # --help, --version, usage errors
            sys.stdout.flush()
            return int(stop.code or 0) if not isinstance(stop.code, str) else 2
        code = args.func(args)
        sys.stdout.flush()  # a full disk or closed pipe shows here, not at exit
    except RevecError as err:
        _say(err.format())
        return 2
    except KeyboardInterrupt:
        _say("revec: interrupted")
        return 130
    except BrokenPipeError:
        # the reader went away (e.g. `revec ... | head`): stop quietly, as a program
        # killed by SIGPIPE would
        _silence_stdout()
        return 141
    except OSError as err:
        _silence_stdout()
        where = f"{err.filename}: " if err.filename else "standard output: " \
            if _is_stdout_error(err) else ""
        _say(f"revec: error: cannot write {where}{err.strerror or err}")
        return 1
    return int(code or 0)


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _is_stdout_error(err: OSError) -> bool:
    import errno

    return err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EPIPE, errno.EFBIG)


def _silence_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's final flush of what is
    still buffered cannot fail a second time."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())

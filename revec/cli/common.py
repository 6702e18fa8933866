"""Helpers shared by the sub-commands: output paths, JSON printing and messages.

``write_atomic`` lives in :mod:`revec.files` (library code below the command line uses
it too) and is re-exported here: the sub-commands look it up here when they write, so a
test can replace it in one place.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from revec.files import current_umask, write_atomic

__all__ = ["add_plan_options", "announce_slow", "current_umask", "output_dir", "output_file",
           "plan_options", "print_json", "warn", "write_atomic"]


def output_file(path: str, option: str = "-o", mkdir: bool = False) -> Path:
    """Check a user's output file name: it names a file (not a directory), and its
    directory exists (``mkdir``: create it).  Raises :class:`RevecError` otherwise."""
    from revec.errors import RevecError

    p = Path(path)
    if path.endswith(("/", os.sep)) or p.is_dir():
        raise RevecError(f"{option} {path}: is a directory; {option} names a file")
    parent = p.parent
    if not parent.exists():
        if not mkdir:
            raise RevecError(f"{option} {path}: directory {parent} does not exist "
                             "(create it, or pass --mkdir)")
        parent.mkdir(parents=True, exist_ok=True)
    elif not parent.is_dir():
        raise RevecError(f"{option} {path}: {parent} is not a directory")
    return p


def output_dir(path: str, option: str = "-o", mkdir: bool = False) -> Path:
    """Check a user's output directory: it exists (``mkdir``: create it) and is one."""
    from revec.errors import RevecError

    p = Path(path)
    if p.exists() and not p.is_dir():
        raise RevecError(f"{option} {path}: is a file, not a directory")
    if not p.exists():
        if not mkdir:
            raise RevecError(f"{option} {path}: directory does not exist "
                             "(create it, or pass --mkdir)")
        p.mkdir(parents=True, exist_ok=True)
    return p


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, default=_json_default)
    sys.stdout.write("\n")


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def warn(message: str) -> None:
    """``revec: warning: message`` on standard error."""
    sys.stderr.write(f"revec: warning: {message}\n")
    sys.stderr.flush()


class announce_slow:
    """``with announce_slow("compiling ..."):`` prints the message on ``stream`` (default
    standard error) if the block is still running after ``after`` seconds, and only when
    the stream is a terminal: a first compile can take seconds, a cached one does not."""

    def __init__(self, message: str, after: float = 0.5, stream: Any = None) -> None:
        import threading

        self.message = message
        self.stream = stream if stream is not None else sys.stderr
        self.timer = threading.Timer(after, self._say)
        self.timer.daemon = True
        self.said = False

    def _say(self) -> None:
        try:
            self.stream.write(self.message + "\n")
            self.stream.flush()
            self.said = True
        except (OSError, ValueError):
            pass

    def __enter__(self) -> announce_slow:
        try:
            tty = self.stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        if tty:
            self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.timer.cancel()


def add_plan_options(p: Any) -> None:
    """``--plan-off LIST`` / ``--plan-on LIST``: kernel plan techniques switched off / on
    for this command (instead of ``REVEC_PLAN_OFF`` / ``REVEC_PLAN_ON``)."""
    from revec.transforms.kernel_plan import PLAN_OFF_ENV, PLAN_ON_ENV, TECHNIQUES

    names = ", ".join(TECHNIQUES)
    p.add_argument("--plan-off", default=None, metavar="LIST",
                   help=f"kernel plan techniques switched off, comma-separated ({names}; "
                        f"'' for none); replaces {PLAN_OFF_ENV}.  They change the kernels, "
                        "never the results or the statistics")
    p.add_argument("--plan-on", default=None, metavar="LIST",
                   help="kernel plan techniques switched on where the back end leaves "
                        f"them off by default; replaces {PLAN_ON_ENV}")


@contextlib.contextmanager
def plan_options(args: Any) -> Iterator[None]:
    """The command's ``--plan-off`` / ``--plan-on`` in force for the block: for the plans
    built in this process (:func:`revec.transforms.kernel_plan.plan_switches`) and, through
    the environment variables, in the processes it starts (a local Dask cluster's)."""
    from revec.transforms.kernel_plan import (
        PLAN_OFF_ENV,
        PLAN_ON_ENV,
        parse_techniques,
        plan_switches,
    )

    off, on = getattr(args, "plan_off", None), getattr(args, "plan_on", None)
    with plan_switches(off, on, ("--plan-off", "--plan-on")):
        saved = {k: os.environ.get(k) for k in (PLAN_OFF_ENV, PLAN_ON_ENV)}
        for env, spec, name in ((PLAN_OFF_ENV, off, "--plan-off"),
                                (PLAN_ON_ENV, on, "--plan-on")):
            if spec is not None:
                os.environ[env] = ",".join(sorted(parse_techniques(spec, name)))
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

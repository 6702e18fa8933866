"""Helpers shared by the sub-commands: output paths, JSON printing and messages.

``write_atomic`` lives in :mod:`revec.files` (library code below the command line uses
it too) and is re-exported here: the sub-commands look it up here when they write, so a
test can replace it in one place.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from revec.files import current_umask, write_atomic

__all__ = ["announce_slow", "current_umask", "output_dir", "output_file", "print_json",
           "warn", "write_atomic"]


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

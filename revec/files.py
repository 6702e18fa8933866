"""Small file utilities shared by every layer of revec (the lowest layer above
:mod:`revec.errors`, so a back end, a benchmark and the command line write files the
same way without importing one another).

:func:`write_atomic` is the one way revec writes a file it must never leave
half-written: command output (``revec transform -o``), reports, benchmark records, and
the caches (generated numba modules, compiler identities, build pointers).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], text: str | bytes) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: never half-written.

    ``text`` may be bytes (written as they are).  Missing parent directories are created (callers naming a user's output check it
    first with :func:`revec.cli.common.output_file`).  The file gets the mode an
    ordinary ``open`` would give it (0666 less the umask), or keeps the mode of the file
    it replaces.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except OSError:
            mode = 0o666 & ~current_umask()
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def current_umask() -> int:
    """The process's umask (read without changing it where /proc allows)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask

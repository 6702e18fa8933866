"""Small file utilities shared by every layer of revec (the lowest layer above
:mod:`revec.errors`, so a back end, a benchmark and the command line write files the
same way without importing one another).

:func:`write_atomic` is the one way revec writes a file it must never leave
half-written: command output (``revec transform -o``), reports, benchmark records, and
the caches (generated numba modules, compiler identities, build pointers).  It writes
what the path names the way ``cat > path`` would, never replacing something that is not
a regular file: a symbolic link's target is written, and a device, named pipe or socket
is written in place.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], text: str | bytes) -> None:
    """Write ``text`` to ``path``: a regular file (or a new one) is replaced atomically,
    through a temporary file in its directory and a rename, so it is never half-written.

    ``text`` may be bytes (written as they are).  A symbolic link is followed: its
    target is replaced (or created), the link kept.  A character or block device, a
    named pipe or a socket is written in place (a pipe waits for its reader; a full
    device such as ``/dev/full`` fails), never replaced by a file.  Missing parent
    directories of ``path`` are created (callers naming a user's output check it first
    with :func:`revec.cli.common.output_file`).  A new file gets the mode an ordinary
    ``open`` would give it (0666 less the umask); a replaced one keeps its mode.

    A failure is an :class:`OSError` whose ``filename`` is ``path`` as given (not a
    temporary name), so the message names what the user asked for.
    """
    target = Path(path)
    try:
        _write(target, text)
    except OSError as err:
        if err.filename == str(path) and err.filename2 is None:
            raise
        raise OSError(err.errno, err.strerror or str(err), str(path)) from err


def _write(target: Path, text: str | bytes) -> None:
    try:
        st: os.stat_result | None = os.stat(target)  # through symbolic links
    except FileNotFoundError:
        st = None  # absent, or a link to nothing yet (its target is created)
    if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        _write_in_place(target, text)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    # the file a symbolic link (or a chain of them) names is the one to replace
    real = Path(os.path.realpath(target)) if target.is_symlink() else target
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)
    try:
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~current_umask()
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as fh:
            fh.write(text)
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_in_place(target: Path, text: str | bytes) -> None:
    """Write to a device, pipe or socket the way ``cat > target`` does (no creation,
    no rename: the node stays what it is)."""
    fd = os.open(target, os.O_WRONLY | os.O_TRUNC | os.O_NOCTTY | os.O_CLOEXEC)
    # closing flushes: a full device reports here at the latest, and the file object
    # closes the descriptor even then
    with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as fh:
        fh.write(text)


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

"""Where revec's caches live (``$REVEC_CACHE_DIR``, default ``~/.cache/revec``), and
what happens when that place cannot be written.

* A cache directory that cannot be written (a read-only file system, another user's
  directory) is still read: an entry built there is used as it is.  Only when something
  must be built does revec need a writable place: it then uses a private temporary
  cache for the rest of the process (removed at exit), with one warning naming the
  directory and ``REVEC_CACHE_DIR``.  :func:`configured` is where entries are looked up
  first, :func:`writable` where builds go, :func:`roots` every place to look.
* A full disk (or quota, or file-size limit) under the cache is not a failure of
  standard output or of the user's program: :func:`cache_writes` turns the error into a
  :class:`CacheFullError` naming the file, the cache directory and how to move it.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from revec.toolchain.cache_check import warn_once

# a write that failed for want of room: no space, a quota, a file-size limit
ROOM_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
# the compiler's words for the same (its messages carry strerror's text)
_ROOM_WORDS = tuple(os.strerror(e) for e in sorted(ROOM_ERRNOS))

_lock = threading.Lock()
_private: dict[Path, Path] = {}  # configured root -> the private cache used instead


class CacheFullError(OSError):
    """A write under the cache directory failed for want of room.  An ``OSError`` (its
    errno is the original one, ``filename`` the file), whose ``strerror`` says where
    the cache is and how to move it."""


def configured() -> Path:
    """The cache root the user chose: ``$REVEC_CACHE_DIR`` or ``~/.cache/revec``."""
    env = os.environ.get("REVEC_CACHE_DIR")
    root = Path(env) if env else Path.home() / ".cache" / "revec"
    return root.expanduser().resolve()


def writable() -> Path:
    """Where builds go: :func:`configured` if it can be written, else a private
    temporary cache (one warning per process, the first time it is needed)."""
    root = configured()
    with _lock:
        if root in _private:
            return _private[root]
        try:
            root.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=root).close()  # what a build does first
            return root
        except OSError as err:
            if err.errno in ROOM_ERRNOS:
                raise full_error(err, root, root) from err
            reason = err.strerror or str(err)
        private = Path(tempfile.mkdtemp(prefix="revec-cache-"))
        atexit.register(shutil.rmtree, private, True)
        _private[root] = private
    warn_once(f"cache-root:{root}",
              f"the cache directory {root} cannot be written ({reason}); building in a "
              f"private temporary cache {private} for this run (set REVEC_CACHE_DIR to "
              "a writable directory to keep what is built)")
    return private


def roots() -> list[Path]:
    """Every place an entry may be found: the configured root, then the private
    cache if this process uses one."""
    root = configured()
    with _lock:
        private = _private.get(root)
    return [root] if private is None else [root, private]


def full_error(err: OSError, path: Path | str | None, root: Path) -> CacheFullError:
    """``err`` (a write under ``root`` that failed for want of room) as a
    :class:`CacheFullError` naming ``err.filename`` (else ``path``)."""
    what = err.strerror or os.strerror(err.errno or errno.ENOSPC)
    return CacheFullError(
        err.errno if err.errno is not None else errno.ENOSPC,
        f"{what} (under revec's cache directory {root}: free space there, or set "
        "REVEC_CACHE_DIR to a directory on a disk with room)",
        str(err.filename or path or root))


def full_under(message: str, root: Path) -> str | None:
    """If a tool's message (a compiler's) reports that a write under ``root`` failed
    for want of room, the reason (``strerror``'s text); else None."""
    for line in message.splitlines():
        if str(root) in line:
            for words in _ROOM_WORDS:
                if words in line:
                    return words
    return None


@contextlib.contextmanager
def cache_writes(root: Path, path: Path | str | None = None) -> Iterator[None]:
    """Turn a write under ``root`` that fails for want of room into a
    :class:`CacheFullError` (naming the failing file, else ``path``)."""
    try:
        yield
    except CacheFullError:
        raise
    except OSError as err:
        if err.errno not in ROOM_ERRNOS:
            raise
        raise full_error(err, path, root) from err

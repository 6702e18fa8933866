"""Checksums of compiled cache entries: recorded at install, verified before loading.

A compiled module in a cache (a C extension under ``$REVEC_CACHE_DIR/cmod``, numba's
index and object files) is loaded into the process: a damaged one (a truncated file, a
flipped bit, a half-copied cache) can take the process down with a SIGBUS or SIGSEGV
rather than raise.  Trusted caches (ccache, numba's own index, Triton's cache) verify an
entry before use; so does revec: the size and SHA-256 of each file are written beside
the entry when it is installed, and checked before it is loaded.  A mismatch is
reported once per entry (on standard error) and the entry is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import threading
from pathlib import Path

# mismatch() of an entry without a record (written by an older revec, or by a process
# that died before recording it): rebuilt without a warning
NO_RECORD = "it has no checksum record"
_warned: set[str] = set()
_warn_lock = threading.Lock()


def file_sum(path: Path) -> tuple[int, str]:
    """(size in bytes, SHA-256 hex digest) of a file."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                break
            size += len(chunk)
            h.update(chunk)
    return size, h.hexdigest()


def write_sums(record: Path, files: dict[str, Path]) -> None:
    """Record ``{name: (size, sha256)}`` of ``files`` in ``record`` (atomically)."""
    doc = {name: list(file_sum(p)) for name, p in sorted(files.items())}
    record.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{record.name}.", dir=record.parent)
    except OSError as err:
        raise OSError(err.errno, err.strerror, str(record)) from err
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(doc, fh)
        os.replace(tmp, record)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError) and err.filename is None:  # name the record
            raise OSError(err.errno, err.strerror, str(record)) from err
        raise


def read_sums(record: Path) -> dict[str, tuple[int, str]] | None:
    """The recorded sums, or None if there is no readable record."""
    try:
        doc = json.loads(record.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    out: dict[str, tuple[int, str]] = {}
    for name, v in doc.items():
        if not (isinstance(v, list) and len(v) == 2 and isinstance(v[0], int)
                and isinstance(v[1], str)):
            return None
        out[str(name)] = (v[0], v[1])
    return out


def mismatch(record: Path, files: dict[str, Path]) -> str | None:
    """Why ``files`` do not match ``record`` (None if they do).  Every recorded file
    must exist with the recorded size and hash, and no file may be unrecorded."""
    sums = read_sums(record)
    if sums is None:
        return NO_RECORD if files else None
    for name, (size, digest) in sums.items():
        path = files.get(name)
        if path is None or not path.exists():
            return f"{name} is missing"
        try:
            st_size = path.stat().st_size
            if st_size != size:
                return f"{name} has {st_size} bytes, {size} were recorded"
            if file_sum(path)[1] != digest:
                return f"{name} does not match its recorded SHA-256"
        except OSError as exc:
            return f"{name} cannot be read ({exc.strerror})"
    extra = sorted(set(files) - set(sums))
    if extra:
        return f"{extra[0]} was not recorded"
    return None


def warn_once(key: str, message: str) -> None:
    """Print ``revec: warning: message`` on standard error, once per ``key``."""
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    try:
        sys.stderr.write(f"revec: warning: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass

"""Ctrl-C during compiled code: an interrupt flag in memory that the drivers read
between blocks.

Python's SIGINT handler only sets a flag that the interpreter looks at between bytecodes,
so a long numba or C kernel would run to its end before ``KeyboardInterrupt``.  Python's
C-level handler does one more thing at once: it writes the signal number to the
*wakeup fd* (:func:`signal.set_wakeup_fd`).  Here that fd is a small file that is also
mapped into memory: the byte the handler writes appears in the mapping, which the numba
and C drivers read once per block.  When it is set they stop (the run's results are
discarded) and the runner raises ``KeyboardInterrupt``.  No compiler is needed and
Python's own handling is unchanged (its handler still runs).

Installed lazily, only from the main thread, and only if no other wakeup fd is in use
(e.g. an asyncio loop); otherwise :func:`flag` still returns a flag that stays zero.
"""

from __future__ import annotations

import mmap
import os
import signal
import tempfile
import threading

import numpy as np

_fd = -1
_map: mmap.mmap | None = None
_flag: np.ndarray | None = None
_installed = False
_lock = threading.Lock()


def flag() -> np.ndarray:
    """The int64[1] flag the drivers read (nonzero: stop); installs the wakeup fd."""
    global _fd, _map, _flag, _installed
    with _lock:
        if _flag is None:
            fd, path = tempfile.mkstemp(prefix="revec-interrupt-")
            os.unlink(path)
            os.ftruncate(fd, mmap.PAGESIZE)
            os.set_blocking(fd, False)  # set_wakeup_fd requires it (no effect on files)
            _fd = fd
            _map = mmap.mmap(fd, mmap.PAGESIZE)
            _flag = np.frombuffer(_map, np.int64, count=1)
        if not _installed and threading.current_thread() is threading.main_thread():
            try:
                old = signal.set_wakeup_fd(_fd, warn_on_full_buffer=False)
            except (ValueError, OSError):
                old = -2
            if old == -1:
                _installed = True
            elif old >= 0:  # someone else's wakeup fd: leave it in place
                signal.set_wakeup_fd(old)
        return _flag


def clear() -> None:
    """Reset the flag before a run (the handler writes at the file's offset)."""
    if _map is None:
        return
    _map[:64] = bytes(64)
    os.lseek(_fd, 0, os.SEEK_SET)


def interrupted() -> bool:
    return _map is not None and any(_map[:64])


def installed() -> bool:
    return _installed

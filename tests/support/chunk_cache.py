"""Build and install ``chunk_cache.c`` (see there) in this test process, on CPython
before 3.13 only; a missing compiler just leaves the interpreter as it is."""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("chunk_cache.c")


#: the library once :func:`install` has installed it in this process
INSTALLED: ctypes.PyDLL | None = None


def needed() -> bool:
    return sys.implementation.name == "cpython" and sys.version_info < (3, 13)


def install(cache: Path) -> ctypes.PyDLL | None:
    """The loaded library (installed in the interpreter), or None when not needed or it
    cannot be built."""
    if not needed():
        return None
    code = SOURCE.read_bytes()
    lib = cache / f"chunk_cache-{hashlib.sha256(code).hexdigest()[:16]}.so"
    if not lib.exists():
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=cache)
        os.close(fd)
        cc = os.environ.get("CC", "cc")
        try:
            res = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-pthread", str(SOURCE),
                                  "-o", tmp], capture_output=True)
        except OSError:
            res = None
        if res is None or res.returncode != 0:
            os.unlink(tmp)
            return None
        os.replace(tmp, lib)  # concurrent test workers: each installs a whole file
    dll = ctypes.PyDLL(str(lib))  # PyDLL: called with the GIL held
    dll.chunk_cache_install.restype = ctypes.c_int
    dll.chunk_cache_reused.restype = ctypes.c_int64
    dll.chunk_cache_install()
    global INSTALLED
    INSTALLED = dll
    return dll

"""Reading a user's program file, with the front ends' errors for a missing or
unreadable one (shared by the Python and the C front end).

A Python file is decoded as Python decodes it (PEP 263: a UTF-8 byte-order mark, or a
``# -*- coding: ... -*-`` line; UTF-8 otherwise); a C file as UTF-8 (a byte-order mark
dropped).  revec reads ``.c`` files (and MIT Cilk-5's ``.cilk`` files) as Cilk C and
every other file as Python, except the
suffixes gcc reads as C++ or headers (``.C``, ``.cc``, ``.cpp``, ``.cxx``, ``.h``, ...),
which are refused with the suffixes revec accepts.
"""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

from revec.errors import fail

# suffixes a C toolchain reads as C++ (gcc: .C, .cc, .cp, .cxx, .cpp, .CPP, .c++) or as
# headers: not Cilk C, and not Python either
# suffixes of Cilk C files (MIT Cilk-5 named its programs .cilk)
C_SUFFIXES = (".c", ".cilk")
NOT_A_PROGRAM = {".C", ".cc", ".cp", ".cxx", ".cpp", ".CPP", ".c++", ".h", ".hh", ".hpp"}


def read_user_file(path: str | Path) -> tuple[str, str]:
    """``(name, text)`` of the program file ``path``."""
    p = Path(path)
    if p.is_dir():
        fail(f"{p} is a directory, not a program file (a .py or .c file)")
    if not p.is_file():
        fail(f"no such file: {p}")
    if p.suffix in NOT_A_PROGRAM:
        fail(f"{p}: revec reads Python files (.py) and Cilk C files (.c), and MIT Cilk-5 "
             f"files (.cilk); a '{p.suffix}' file is C++ or a header to a C compiler")
    try:
        data = p.read_bytes()
    except OSError as err:
        fail(f"cannot read {p}: {err}")
    try:
        if p.suffix in C_SUFFIXES:
            return str(p), data.decode("utf-8-sig")
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        return str(p), text.removeprefix("\ufeff")
    except (SyntaxError, LookupError, UnicodeDecodeError) as err:
        fail(f"cannot read {p}: {err}")

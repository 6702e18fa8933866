"""Reading a user's program file, with the front ends' errors for a missing or
unreadable one (shared by the Python and the C front end)."""

from __future__ import annotations

from pathlib import Path

from revec.errors import fail


def read_user_file(path: str | Path) -> tuple[str, str]:
    """``(name, text)`` of the program file ``path``."""
    p = Path(path)
    if p.is_dir():
        fail(f"{p} is a directory, not a program file (a .py or .c file)")
    if not p.is_file():
        fail(f"no such file: {p}")
    try:
        return str(p), p.read_text()
    except (OSError, UnicodeDecodeError) as err:
        fail(f"cannot read {p}: {err}")

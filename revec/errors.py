"""The one error type for user mistakes, with a source location.

Every user-facing mistake (bad program, bad command-line input) is raised as
:class:`RevecError`.  The CLI prints it as ``file:line:col: error: message``
followed by the source line and a caret, and exits with status 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn


@dataclass(frozen=True)
class SourceLoc:
    """A position in a user's source file; ``line`` and ``col`` are 1-based."""

    file: str
    line: int
    col: int
    source_line: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class RevecError(Exception):
    """A user mistake: a program outside the language, or bad command-line input."""

    def __init__(self, message: str, loc: SourceLoc | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc

    def format(self) -> str:
        if self.loc is None:
            return f"revec: error: {self.message}"
        text = f"{self.loc}: error: {self.message}"
        if self.loc.source_line:
            line = self.loc.source_line.rstrip("\n")
            caret = " " * (self.loc.col - 1) + "^"
            text += f"\n    {line}\n    {caret}"
        return text

    def __str__(self) -> str:
        return self.format()


def fail(message: str, loc: SourceLoc | None = None) -> NoReturn:
    """Raise a :class:`RevecError` (the single exit point for user mistakes)."""
    raise RevecError(message, loc)

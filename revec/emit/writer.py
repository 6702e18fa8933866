"""Generated code that maps back to the user's source.

Emitters build their text as lines.  A line that is the code of a user statement carries
the statement's source position as an invisible tag (:func:`at`); the tag survives
indenting (``ind + line``), joining (``"\\n".join``) and re-indenting, so statement
printers can tag what they print and the code around them need not know.  One final
pass, :func:`resolve`, removes the tags and writes the positions out:

* ``style="c"``: a ``#line <n> "<file>"`` directive before a tagged line whose position is
  not the one the preprocessor would give it anyway (the next line of the previous
  statement's), and ``#line <n> "<own>"`` back to the generated text's own numbering
  before the first untagged line after tagged ones.  Compiler diagnostics and debuggers
  then name the user's line for user code and the generated text's line otherwise.
* ``style="comment"`` (languages without line directives, e.g. Python): a comment
  ``<prefix><file>:<line>`` before each run of lines of one position, indented like it.

:class:`Writer` is a small line writer over the same tags (indentation, blocks, the
current position) for emitters that write statement by statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from revec.errors import SourceLoc

# ASCII record / unit separators: never part of generated code
_TAG, _SEP = "\x1e", "\x1f"
_TAG_RE = re.compile(f"{_TAG}([^{_TAG}{_SEP}]*){_SEP}([0-9]+){_TAG}")


def source_name(loc: SourceLoc) -> str:
    """The name a position's file is written under: its base name, as the generated
    module's header names the program, so the text (and a build cache keyed by it) does
    not depend on the folder the program was read from."""
    return Path(loc.file).name


def at(loc: SourceLoc | None, lines: Iterable[str]) -> list[str]:
    """``lines`` as the code of the user statement at ``loc``: each physical line not
    already tagged (a nested statement's code keeps its own position) gets ``loc``'s
    file and line.  ``loc`` None: the lines unchanged."""
    if loc is None:
        return list(lines)
    tag = f"{_TAG}{source_name(loc)}{_SEP}{loc.line}{_TAG}"
    out = []
    for text in lines:
        if _TAG in text and "\n" not in text:
            out.append(text)
        else:
            out.append("\n".join(p if _TAG in p else p + tag for p in text.split("\n")))
    return out


def position(line: str) -> tuple[str, int] | None:
    """The (file, line) a physical line is tagged with, or None."""
    m = _TAG_RE.search(line)
    return None if m is None else (m.group(1), int(m.group(2)))


def untag(text: str) -> str:
    """``text`` without its tags."""
    return _TAG_RE.sub("", text)


def _quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def resolve(text: str, own: str, style: str = "c", prefix: str = "# ") -> str:
    """``text`` with its tags written out as positions (see the module docstring);
    ``own``: the generated file's name (``style="c"``), named by a first line
    ``#line 2 "<own>"``, so the numbering is the text's own also where the text is
    compiled inside another (cffi's wrapper puts its own code before it)."""
    out: list[str] = []
    if style == "comment":
        last: tuple[str, int] | None = None
        for line in text.split("\n"):
            pos = position(line)
            body = untag(line)
            if pos is not None and pos != last:
                indent = body[:len(body) - len(body.lstrip())]
                out.append(f"{indent}{prefix}{pos[0]}:{pos[1]}")
            last = pos
            out.append(body)
        return "\n".join(out)
    assert style == "c", style
    out.append(f"#line 2 {_quoted(own)}")
    # where the next line is, as the preprocessor numbers it: None for the text's own
    # numbering (in step with ``out``), else (file, line)
    here: tuple[str, int] | None = None
    for line in text.split("\n"):
        pos = position(line)
        if pos is not None:
            if pos != here:
                out.append(f"#line {pos[1]} {_quoted(pos[0])}")
            here = (pos[0], pos[1] + 1)
        elif here is not None:
            # the directive is line len(out) + 1, so the next one is len(out) + 2
            out.append(f"#line {len(out) + 2} {_quoted(own)}")
            here = None
        out.append(untag(line))
    return "\n".join(out)


class Writer:
    """Lines of generated code: indentation, blocks and the current source position
    (lines written while a position is set are tagged with it, see :func:`at`)."""

    def __init__(self, indent: str = "    ") -> None:
        self.lines: list[str] = []
        self.unit = indent
        self.depth = 0
        self.loc: SourceLoc | None = None

    def line(self, text: str = "") -> None:
        """One line at the current indentation (an empty one stays empty)."""
        self.lines += at(self.loc, [self.unit * self.depth + text if text else ""])

    def extend(self, lines: Iterable[str]) -> None:
        """Lines already indented (another printer's), tagged with the position if set."""
        self.lines += at(self.loc, lines)

    @contextmanager
    def block(self, head: str, tail: str | None = "}") -> Iterator[None]:
        """``head``, the lines written inside one level deeper, then ``tail`` (None:
        none, as in Python)."""
        self.line(head)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
        if tail is not None:
            self.line(tail)

    @contextmanager
    def source(self, loc: SourceLoc | None) -> Iterator[None]:
        """Tag the lines written inside with ``loc`` (nested: the innermost wins)."""
        old, self.loc = self.loc, loc if loc is not None else self.loc
        try:
            yield
        finally:
            self.loc = old

    def text(self, own: str, style: str = "c") -> str:
        """The lines joined, positions written out (:func:`resolve`)."""
        return resolve("\n".join(self.lines), own, style)

"""Reading a Cilk C file: the system preprocessor (:mod:`.preprocess`: ``gcc -E`` on
revec's own headers, the Cilk keywords rewritten in its output), then pycparser; then
the other spellings of spawn and sync (:mod:`.spellings`) and the typedefs of array
and pointer types (:mod:`.typedefs`) read into the forms the lowering knows.

Every position a node carries is mapped back to the user's file, line and column
(:meth:`CSource.loc`; inside a macro's expansion: the macro's use).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pycparser import c_ast, c_parser
from pycparser.c_parser import Coord, ParseError

from revec.errors import RevecError, SourceLoc
from revec.frontend.c.preprocess import Preprocessed, preprocess
from revec.frontend.c.spellings import read_spellings
from revec.frontend.c.syntax import SPAWN_TYPES, SYNC_NAMES
from revec.frontend.c.typedefs import expand_typedefs
from revec.frontend.user_file import read_user_file
from revec.toolchain.cbuild import compiler_command, find_compiler

__all__ = ["SPAWN_TYPES", "SYNC_NAMES", "CSource", "parse_c", "read_c"]


@dataclass
class CSource:
    path: str
    text: str
    lines: list[str]
    ast: c_ast.FileAST
    cilk5: bool = False
    pre: Preprocessed | None = None

    def at(self, line: int, col: int, file: str | None = None) -> SourceLoc:
        """Line ``line``, column ``col`` of the program's file (or of ``file``, as a line
        marker names it), in the user's columns."""
        if self.pre is not None and file is not None and file != self.path:
            return self.pre.loc(file, line, col)
        if self.pre is not None:
            col = self.pre.column(self.path, line, col)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return SourceLoc(self.path, line, col, text)

    def loc(self, node: c_ast.Node | Coord | None) -> SourceLoc:
        coord = node if isinstance(node, Coord) else getattr(node, "coord", None)
        if coord is None or not coord.line:
            return SourceLoc(self.path, 1, 1, self.lines[0] if self.lines else "")
        loc = self.at(coord.line, coord.column or 1, coord.file or self.path)
        if isinstance(node, c_ast.Pragma):  # the directive's '#'
            text = loc.source_line
            return SourceLoc(loc.file, loc.line, len(text) - len(text.lstrip()) + 1, text)
        return loc

    def is_revec_header(self, node: c_ast.Node) -> bool:
        """``node`` comes from one of revec's own headers (``<stdio.h>``, ...)."""
        coord = getattr(node, "coord", None)
        return self.pre is not None and coord is not None and \
            self.pre.is_revec_header(coord.file)


class _Parser(c_parser.CParser):
    """pycparser, with a position on every syntax error (it leaves a few without)."""

    def _parse_error(self, msg: str, coord: Coord | str | None) -> None:  # type: ignore[override]
        if not isinstance(coord, Coord):
            try:
                tok = self._peek()
                if tok is not None:
                    coord = self._tok_coord(tok)
            except Exception:  # noqa: BLE001 - keep pycparser's own message
                pass
        raise ParseError(f"{coord}: {msg}")

    def _pop_scope(self) -> None:
        """A '}' closes a scope; one with no block open was pycparser's AssertionError
        (a traceback), here a syntax error at that brace."""
        if len(self._scope_stack) <= 1:
            lexer = self.clex
            col = lexer._pos - lexer._line_start  # the lexer is just past the brace
            # (worded as newer pycparser words it: "syntax error before '}'")
            raise ParseError(f"{lexer._filename}:{lexer._lineno}:{max(col, 1)}: before: }}")
        super()._pop_scope()


_ERROR_AT = re.compile(r"^(.*?):(\d+):(\d+): (.*)$", re.S)


def parse_c(path: str, text: str) -> CSource:
    """Preprocess and parse the Cilk C file ``path`` (``text``: its contents)."""
    lines = text.splitlines()
    cc = find_compiler()
    if cc is None:
        raise RevecError(f"reading a C program needs a C compiler for its preprocessor (no "
                         f"C compiler found: {' '.join(compiler_command())!r}): install gcc "
                         "(Debian/Ubuntu: apt-get install gcc) or set CC")
    pre = preprocess(path, cc)
    src = CSource(path, text, lines, c_ast.FileAST([]), pre.cilk5, pre)
    try:
        ast = _Parser().parse(pre.text, path)
    except ParseError as err:
        message = str(err)
        m = _ERROR_AT.match(message)
        if m is None:
            raise RevecError(f"syntax error: {message}", src.at(1, 1)) from None
        what = m.group(4)
        what = f"before '{what[len('before: '):]}'" if what.startswith("before: ") else what
        raise RevecError(f"syntax error {what}" if what.startswith("before") else
                         f"syntax error: {what}",
                         src.at(int(m.group(2)), int(m.group(3)), m.group(1))) from None
    src.ast = ast

    def error(message: str, node: c_ast.Node) -> None:
        raise RevecError(message, src.loc(node))

    read_spellings(ast, error)  # type: ignore[arg-type]
    expand_typedefs(ast)
    return src


def read_c(path: str | Path) -> CSource:
    return parse_c(*read_user_file(path))

"""Reading a program: libcst parse with positions, and loading it as a Python module."""

from __future__ import annotations

import importlib.util
import re
import sys
import traceback
import types
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from revec.errors import RevecError, SourceLoc
from revec.frontend.user_file import read_user_file


@dataclass
class ParsedSource:
    path: str
    text: str
    lines: list[str]
    module: cst.Module
    positions: dict[cst.CSTNode, CodeRange]
    # line n of the parsed module is line line_map[n - 1] of the file (None: the same)
    line_map: list[int] | None = None
    code: types.CodeType | None = None  # the module's code, when already compiled

    def loc(self, node: cst.CSTNode) -> SourceLoc:
        pos = self.positions.get(node)
        if pos is None:
            return SourceLoc(self.path, 1, 1, self.lines[0] if self.lines else "")
        line = pos.start.line
        if self.line_map is not None and 0 < line <= len(self.line_map):
            line = self.line_map[line - 1]
        return self.at(line, pos.start.column + 1)

    def at(self, line: int, col: int) -> SourceLoc:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return SourceLoc(self.path, line, col, text)


def read_source(path: str | Path) -> ParsedSource:
    return parse_source(*read_user_file(path))


def parse_source(name: str, text: str) -> ParsedSource:
    """Parse ``text`` (from a file, or from ``linecache`` for a notebook cell) named
    ``name`` in messages."""
    p = name
    lines = text.splitlines()
    code = None
    try:  # Python's own parser gives the best syntax-error positions and messages
        code = compile(text, str(p), "exec", dont_inherit=True)
    except SyntaxError as err:
        line = err.lineno or 1
        text_line = lines[line - 1] if 0 < line <= len(lines) else ""
        raise RevecError(f"syntax error: {err.msg}",
                         SourceLoc(str(p), line, err.offset or 1, text_line)) from None
    line_map = None
    parsed_text = text
    if len(text) > SKELETON_BYTES:
        parsed_text, line_map = skeleton(text, code)
    try:
        module = cst.parse_module(parsed_text)
    except cst.ParserSyntaxError as err:
        line = err.raw_line
        if line_map is not None and 0 < line <= len(line_map):
            line = line_map[line - 1]
        col = err.raw_column + 1
        text_line = lines[line - 1] if 0 < line <= len(lines) else ""
        message = err.message.splitlines()[0] if err.message else "invalid syntax"
        raise RevecError(f"syntax error: {message}",
                         SourceLoc(str(p), line, col, text_line)) from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = dict(wrapper.resolve(PositionProvider))
    return ParsedSource(str(p), text, lines, module, positions, line_map, code)


_loaded = 0


def load_module(parsed: ParsedSource) -> types.ModuleType:
    """Execute the program's module level (constants, reducers, task objects)."""
    global _loaded
    _loaded += 1
    name = f"_revec_user_{_loaded}_{Path(parsed.path).stem}"
    spec = importlib.util.spec_from_loader(name, loader=None, origin=parsed.path)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = parsed.path
    sys.modules[name] = module  # dataclasses / pickling inside user modules need this
    code = parsed.code or compile(parsed.text, parsed.path, "exec", dont_inherit=True)
    try:
        exec(code, module.__dict__)
    except RevecError:
        raise
    except BaseException as err:  # the user's module-level code failed
        line = 1
        for frame in traceback.extract_tb(err.__traceback__):
            if frame.filename == parsed.path and frame.lineno:
                line = frame.lineno
        raise RevecError(
            f"loading the module failed: {type(err).__name__}: {err}", parsed.at(line, 1)
        ) from None
    return module


# Sources larger than this are parsed by libcst without their plain module-level data
# statements (libcst parses about 0.1 MB/s; a module with 300,000 constant lines took
# minutes; Python's parser needs well under a second).
SKELETON_BYTES = 256 * 1024


def skeleton(text: str, code: types.CodeType) -> tuple[str, list[int]]:
    """``text`` without its module-level constant statements (lines ``NAME = 3``,
    ``NAME = -2.5``, ``NAME = "text"``), so that libcst parses only what the front end
    reads (functions, imports, reducer declarations, aliases, arrays); and the file's line
    number of each kept line (columns are unchanged).  A line is dropped only if the
    module's own bytecode (``code``, compiled from ``text``) stores that constant into that
    name at that line: a look-alike line inside a string or a call stays.  The module
    still runs from the full text."""
    import dis

    src = text.splitlines(keepends=True)
    cands = {}
    for n, line in enumerate(src, 1):
        if line[:1].isalpha() or line[:1] == "_":
            m = _CONST_LINE.match(line)
            if m is not None:
                cands[n] = m.group(1)
    if not cands:
        return text, list(range(1, len(src) + 1))
    starts: dict[int, int] = {}
    for offset, lineno in dis.findlinestarts(code):
        if lineno is not None and lineno in cands and lineno not in starts:
            starts[lineno] = offset
    co, names = code.co_code, code.co_names
    ext, load, store = dis.opmap["EXTENDED_ARG"], dis.opmap["LOAD_CONST"], dis.opmap["STORE_NAME"]
    drop: set[int] = set()
    for lineno, offset in starts.items():
        i = offset
        while i < len(co) and co[i] == ext:
            i += 2
        if i >= len(co) or co[i] != load:
            continue
        i += 2
        arg = 0
        while i < len(co) and co[i] == ext:
            arg = (arg | co[i + 1]) << 8
            i += 2
        if i < len(co) and co[i] == store and names[arg | co[i + 1]] == cands[lineno]:
            drop.add(lineno)
    kept = [n for n in range(1, len(src) + 1) if n not in drop]
    out = "".join(src[n - 1] for n in kept)
    if out and not out.endswith("\n"):
        out += "\n"
    return out, kept


# NAME = <a number or a one-line string literal> [# comment]
_CONST_LINE = re.compile(r"([A-Za-z_]\w*)[ \t]*=[ \t]*(?:[-+]?[ \t]*[0-9][0-9A-Za-z_.+-]*"
                         r"|'[^'\\\n]*'|\"[^\"\\\n]*\")[ \t]*(?:#[^\n]*)?\r?\n?$")

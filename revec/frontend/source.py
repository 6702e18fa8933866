"""Reading a program: libcst parse with positions, and loading it as a Python module."""

from __future__ import annotations

import importlib.util
import sys
import traceback
import types
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from revec.errors import RevecError, SourceLoc, fail


@dataclass
class ParsedSource:
    path: str
    text: str
    lines: list[str]
    module: cst.Module
    positions: dict[cst.CSTNode, CodeRange]

    def loc(self, node: cst.CSTNode) -> SourceLoc:
        pos = self.positions.get(node)
        if pos is None:
            return SourceLoc(self.path, 1, 1, self.lines[0] if self.lines else "")
        return self.at(pos.start.line, pos.start.column + 1)

    def at(self, line: int, col: int) -> SourceLoc:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return SourceLoc(self.path, line, col, text)


def read_source(path: str | Path) -> ParsedSource:
    p = Path(path)
    if not p.is_file():
        fail(f"no such file: {p}")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as err:
        fail(f"cannot read {p}: {err}")
    return parse_source(str(p), text)


def parse_source(name: str, text: str) -> ParsedSource:
    """Parse ``text`` (from a file, or from ``linecache`` for a notebook cell) named
    ``name`` in messages."""
    p = name
    lines = text.splitlines()
    try:  # Python's own parser gives the best syntax-error positions and messages
        compile(text, str(p), "exec", dont_inherit=True)
    except SyntaxError as err:
        line = err.lineno or 1
        text_line = lines[line - 1] if 0 < line <= len(lines) else ""
        raise RevecError(f"syntax error: {err.msg}",
                         SourceLoc(str(p), line, err.offset or 1, text_line)) from None
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as err:
        line = err.raw_line
        col = err.raw_column + 1
        text_line = lines[line - 1] if 0 < line <= len(lines) else ""
        message = err.message.splitlines()[0] if err.message else "invalid syntax"
        raise RevecError(f"syntax error: {message}",
                         SourceLoc(str(p), line, col, text_line)) from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = dict(wrapper.resolve(PositionProvider))
    return ParsedSource(str(p), text, lines, module, positions)


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
    code = compile(parsed.text, parsed.path, "exec", dont_inherit=True)
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

"""Reading a Cilk C file: a small position-preserving preprocessor, then pycparser.

Nothing is substituted into the text, so every line and column pycparser reports is
the file's own:

* comments become spaces (newlines kept);
* directive lines and lines of inactive ``#if`` branches become empty lines;
* ``#include <cilk/cilk.h>``, ``<stdint.h>``, ``<stdbool.h>`` (and the other standard
  headers, which declare nothing the subset can use) are served by the front end's
  prelude; ``#include "file.h"`` is read from the program's folder and spliced in
  between ``#line`` markers;
* ``#define NAME text`` records a constant: the front end reads ``NAME`` where it is
  used and evaluates ``text`` as an expression there (function-like macros are an
  error); ``#ifdef``/``#ifndef``/``#if``/``#else``/``#endif`` choose branches with
  ``__REVEC__`` (and ``__cilk``) defined;
* the Cilk keywords are rewritten in place to C of the same length: ``cilk_spawn``
  becomes the cast ``(__SPAWN_)`` of the call that follows (a type the prelude
  declares), ``cilk_sync`` stays an identifier the prelude declares; in MIT Cilk-5
  spelling (a file that uses the ``cilk`` function keyword), ``spawn`` becomes
  ``(_S5)``, ``sync`` becomes ``_SY_`` and ``cilk`` blanks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pycparser import c_ast, c_parser
from pycparser.c_parser import Coord, ParseError

from revec.errors import RevecError, SourceLoc, fail
from revec.frontend.user_file import read_user_file

SPAWN_TYPES = ("__SPAWN_", "_S5")
SYNC_NAMES = ("cilk_sync", "_SY_")

PRELUDE = """typedef signed char int8_t; typedef short int16_t; typedef int int32_t;
typedef long int64_t; typedef unsigned char uint8_t; typedef unsigned short uint16_t;
typedef unsigned int uint32_t; typedef unsigned long uint64_t; typedef _Bool bool;
typedef unsigned long size_t; typedef long ptrdiff_t; typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef int __SPAWN_; typedef int _S5; extern int cilk_sync; extern int _SY_;
"""

# headers the prelude stands for (the subset uses nothing else from them)
KNOWN_HEADERS = {
    "cilk/cilk.h", "cilk/cilk_api.h", "stdint.h", "stdbool.h", "inttypes.h", "stddef.h",
    "stdio.h", "stdlib.h", "string.h", "limits.h", "assert.h", "cilk.h", "math.h",
    "alloca.h", "memory.h",  # alloca, memcpy, memset on task-private boards
}
UNSUPPORTED_KEYWORDS = {
    "cilk_for": "cilk_for loops are not supported; write the loop with cilk_spawn in "
                "its body",
    "cilk_scope": "cilk_scope is not supported; use cilk_sync",
    "cilk_reducer": "cilk_reducer hyperobjects are not supported; return the values "
                    "instead (revec derives the reducers)",
}
CILK5_UNSUPPORTED = {
    "inlet": "Cilk-5 inlets are not supported",
    "abort": "Cilk-5 abort is not supported",
    "SYNCHED": "Cilk-5 SYNCHED is not supported",
}

_TOKENS = re.compile(r"""
    (?P<block>/\*.*?\*/) | (?P<line>//[^\n]*) |
    (?P<str>"(?:[^"\\\n]|\\.)*") | (?P<chr>'(?:[^'\\\n]|\\.)*') |
    (?P<id>[A-Za-z_]\w*) | (?P<open>/\*)
""", re.S | re.X)


@dataclass
class Macro:
    name: str
    text: str
    loc: SourceLoc


@dataclass
class CSource:
    path: str
    text: str
    lines: list[str]
    ast: c_ast.FileAST
    macros: dict[str, Macro] = field(default_factory=dict)
    cilk5: bool = False
    file_lines: dict[str, list[str]] = field(default_factory=dict)

    def at(self, line: int, col: int, file: str | None = None) -> SourceLoc:
        lines = self.file_lines.get(file or self.path, self.lines)
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return SourceLoc(file or self.path, line, col, text)

    def loc(self, node: c_ast.Node | Coord | None) -> SourceLoc:
        coord = node if isinstance(node, Coord) else getattr(node, "coord", None)
        if coord is None or not coord.line:
            return self.at(1, 1)
        return self.at(coord.line, coord.column or 1, coord.file or self.path)


def _strip_comments(path: str, text: str, lines: list[str]) -> str:
    out: list[str] = []
    pos = 0
    for m in _TOKENS.finditer(text):
        kind = m.lastgroup
        if kind == "open":
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            raise RevecError("unterminated comment",
                             SourceLoc(path, line, col, lines[line - 1]))
        if kind in ("block", "line"):
            out.append(text[pos:m.start()])
            out.append(re.sub(r"[^\n]", " ", m.group()))
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


class _Preprocessor:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.macros: dict[str, Macro] = {"__REVEC__": Macro("__REVEC__", "1", SourceLoc("", 1, 1)),
                                         "__cilk": Macro("__cilk", "200", SourceLoc("", 1, 1))}
        self.file_lines: dict[str, list[str]] = {}
        self.headers: set[str] = set()
        self.depth = 0
        self.cilk5 = False

    def run(self, path: str, text: str) -> str:
        """``text`` with directives applied (same lines, same columns)."""
        lines = text.splitlines()
        self.file_lines[path] = lines
        clean = _strip_comments(path, text, lines).split("\n")
        out: list[str] = []
        splices: dict[int, str] = {}  # line index -> a spliced header (after the rewrite)
        stack: list[tuple[bool, bool, SourceLoc]] = []  # (active, taken, where)
        active = True
        i = 0
        while i < len(clean):
            raw = clean[i]
            n = i + 1
            joined, extra = raw, 0
            while joined.endswith("\\") and i + extra + 1 < len(clean):
                extra += 1
                joined = joined[:-1] + " " + clean[i + extra]
            stripped = joined.lstrip()
            loc = SourceLoc(path, n, len(joined) - len(stripped) + 1,
                            lines[i] if i < len(lines) else "")
            if not stripped.startswith("#"):
                out.append(raw if active else "")
                i += 1
                continue
            directive = stripped[1:].strip()
            word = re.match(r"\w*", directive).group()  # type: ignore[union-attr]
            rest = directive[len(word):].strip()
            out.extend([""] * (extra + 1))
            i += extra + 1
            if word in ("ifdef", "ifndef", "if"):
                value = self.condition(word, rest, loc) if active else False
                stack.append((active, value, loc))
                active = active and value
            elif word in ("elif",):
                if not stack:
                    fail("#elif without #if", loc)
                outer, taken, where = stack[-1]
                value = outer and not taken and self.condition("if", rest, loc)
                stack[-1] = (outer, taken or value, where)
                active = value
            elif word == "else":
                if not stack:
                    fail("#else without #if", loc)
                outer, taken, where = stack[-1]
                active = outer and not taken
                stack[-1] = (outer, True, where)
            elif word == "endif":
                if not stack:
                    fail("#endif without #if", loc)
                active = stack.pop()[0]
            elif not active:
                continue
            elif word == "define":
                self.define(rest, loc)
            elif word == "undef":
                self.macros.pop(rest.split()[0] if rest else "", None)
            elif word == "include":
                spliced = self.include(rest, loc, path, n + extra)
                if spliced:
                    splices[len(out) - 1] = spliced
            elif word in ("pragma", "line", ""):
                continue
            elif word == "error":
                fail(f"#error {rest}", loc)
            else:
                fail(f"the directive #{word} is not supported", loc)
        if stack:
            fail("#if without #endif", stack[-1][2])
        text, cilk5 = _rewrite_keywords(path, "\n".join(out), lines)
        self.cilk5 = self.cilk5 or cilk5
        done = text.split("\n")
        for k, spliced in splices.items():
            done[k] = spliced
        return "\n".join(done)

    def condition(self, word: str, rest: str, loc: SourceLoc) -> bool:
        if word == "ifdef":
            return rest.split()[0] in self.macros if rest else False
        if word == "ifndef":
            return rest.split()[0] not in self.macros if rest else True
        expr = rest
        for m in re.finditer(r"defined\s*\(?\s*(\w+)\s*\)?", rest):
            expr = expr.replace(m.group(), "1" if m.group(1) in self.macros else "0")
        expr = re.sub(r"\b[A-Za-z_]\w*\b",
                      lambda m: self.macros[m.group()].text if m.group() in self.macros
                      else "0", expr)
        py = expr.replace("&&", " and ").replace("||", " or ")
        py = re.sub(r"!(?!=)", " not ", py)
        if not re.fullmatch(r"[\d\s()<>=!+\-*andortn]*", py):
            fail(f"#if {rest}: only integer constants, defined(NAME) and && || ! are "
                 "supported in #if", loc)
        try:
            return bool(eval(py, {"__builtins__": {}}, {}))  # noqa: S307 - checked above
        except Exception:  # noqa: BLE001
            fail(f"#if {rest}: cannot evaluate this condition", loc)

    def define(self, rest: str, loc: SourceLoc) -> None:
        m = re.match(r"([A-Za-z_]\w*)(\(?)", rest)
        if m is None:
            fail("#define needs a name", loc)
        if m.group(2):
            fail(f"function-like macro '{m.group(1)}' is not supported; only constants "
                 "(#define NAME value) are", loc)
        self.macros[m.group(1)] = Macro(m.group(1), rest[m.end():].strip(), loc)

    def include(self, rest: str, loc: SourceLoc, path: str, next_line: int) -> str:
        m = re.fullmatch(r'<([^>]+)>|"([^"]+)"', rest)
        if m is None:
            fail(f"#include {rest}: expected <header> or \"file\"", loc)
        if m.group(1) is not None:
            if m.group(1) not in KNOWN_HEADERS:
                fail(f"#include <{m.group(1)}>: only <cilk/cilk.h>, <stdint.h>, "
                     "<stdbool.h>, <math.h> and declarations-only standard headers "
                     "(stdio.h, stdlib.h, ...) are supported", loc)
            return ""
        target = (Path(path).parent / m.group(2))
        if not target.is_file():
            fail(f"#include \"{m.group(2)}\": no such file next to {Path(path).name}", loc)
        key = str(target)
        if key in self.headers:
            return ""
        self.headers.add(key)
        self.depth += 1
        if self.depth > 20:
            fail("#include nests too deeply", loc)
        try:
            text = target.read_text()
        except (OSError, UnicodeDecodeError) as err:
            fail(f"cannot read {target}: {err}", loc)
        body = self.run(key, text)
        self.depth -= 1
        return f'#line 1 "{key}"\n{body}\n#line {next_line + 1} "{path}"'


def _rewrite_keywords(path: str, text: str, lines: list[str]) -> tuple[str, bool]:
    ids = [(m.start(), m.group()) for m in _TOKENS.finditer(text) if m.lastgroup == "id"]
    cilk5 = any(name == "cilk" for _, name in ids)
    chars = list(text)

    def where(pos: int) -> SourceLoc:
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        return SourceLoc(path, line, col, lines[line - 1] if line <= len(lines) else "")

    def put(pos: int, new: str) -> None:
        chars[pos:pos + len(new)] = list(new)

    for pos, name in ids:
        if name in UNSUPPORTED_KEYWORDS:
            raise RevecError(UNSUPPORTED_KEYWORDS[name], where(pos))
        if name == "cilk_spawn":
            put(pos, "(__SPAWN_)")
        elif cilk5 and name == "spawn":
            put(pos, "(_S5)")
        elif cilk5 and name == "sync":
            put(pos, "_SY_")
        elif cilk5 and name == "cilk":
            put(pos, "    ")
        elif cilk5 and name in CILK5_UNSUPPORTED:
            raise RevecError(CILK5_UNSUPPORTED[name], where(pos))
    return "".join(chars), cilk5


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
    """Preprocess and parse a Cilk C file (``text`` is its contents)."""
    lines = text.splitlines()
    pre = _Preprocessor(Path(path).parent)
    body = pre.run(path, text)
    cilk5 = pre.cilk5
    full = f'{PRELUDE}#line 1 "{path}"\n{body}\n'
    try:
        ast = _Parser().parse(full, path)
    except ParseError as err:
        message = str(err)
        m = _ERROR_AT.match(message)
        src = CSource(path, text, lines, c_ast.FileAST([]), file_lines=pre.file_lines)
        if m is None:
            raise RevecError(f"syntax error: {message}", src.at(1, 1)) from None
        what = m.group(4)
        what = f"before '{what[len('before: '):]}'" if what.startswith("before: ") else what
        raise RevecError(f"syntax error {what}" if what.startswith("before") else
                         f"syntax error: {what}",
                         src.at(int(m.group(2)), int(m.group(3)), m.group(1))) from None
    return CSource(path, text, lines, ast, pre.macros, cilk5, pre.file_lines)


def read_c(path: str | Path) -> CSource:
    return parse_c(*read_user_file(path))

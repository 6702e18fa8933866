"""A Cilk C file through the system preprocessor (``gcc -E``), and the way back from
its output to the file's own lines and columns.

The preprocessor is the C compiler revec builds with (:func:`revec.toolchain.cbuild.
find_compiler`: ``$CC`` or ``cc``), run with ``-nostdinc`` on revec's own small headers
(``include/``: ``<stdio.h>``, ``<stdint.h>``, ``<limits.h>`` with the LP64 values,
``<math.h>``, ``<cilk/cilk.h>``, ``<cilk-lib.cilkh>``, ``<omp.h>``, ...: declarations
pycparser reads, where the system's use GNU extensions it does not) and a prelude
included first (``include/__revec_prelude.h``: the names the Cilk keywords are
rewritten into).  ``__REVEC__`` is defined, so a program may keep code for a C compiler
under ``#ifndef __REVEC__``.  Macros are substituted exactly as C substitutes them.

The output keeps gcc's line markers (``# N "file"``), which pycparser follows, so every
node's file and line are the user's.  Columns move where a line's text changed (a
macro expanded, spaces squeezed): :meth:`Preprocessed.column` aligns the tokens of the
output line with the tokens of the file's line, so a token maps to itself, and a token
a macro produced maps to the macro's name at its use.

The Cilk keywords are rewritten in the output, in place and to text of the same length
(so pycparser's columns are the output's): ``cilk_spawn`` and ``_Cilk_spawn`` become the
cast ``(__SPAWN_)`` of the call that follows, ``_Cilk_sync`` becomes ``cilk_sync``,
``cilk_for`` the labelled loop ``_RVF:for``, ``cilk_scope`` the labelled block
``_RV_SCOPE:`` (:mod:`revec.frontend.c.spellings` reads the labels); in MIT Cilk-5
spelling (a file that uses the ``cilk`` function keyword) ``spawn`` becomes ``(_S5)``,
``sync`` ``_SY_`` and ``cilk`` blanks.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from revec.errors import RevecError, SourceLoc

INCLUDE_DIR = Path(__file__).parent / "include"
PRELUDE_HEADER = INCLUDE_DIR / "__revec_prelude.h"
PROVIDED = ("<cilk/cilk.h>, <cilk/cilk_api.h>, <cilk.h>, <cilk-lib.cilkh>, <omp.h>, "
            "<stdint.h>, <inttypes.h>, <stdbool.h>, <stddef.h>, <limits.h>, <float.h>, "
            "<math.h>, <string.h>, <memory.h>, <alloca.h>, <stdio.h>, <stdlib.h>, "
            "<assert.h>, <time.h>, <sys/time.h>, <sys/types.h>, <sys/resource.h>, "
            "<unistd.h>, <fcntl.h>, <errno.h>, <malloc.h>, <getopt.h>, <ctype.h>; and "
            "headers next to the file")
SPAWN_LABEL = "_RVF"  # cilk_for (...) -> _RVF:for (...)
SCOPE_LABEL = "_RV_SCOPE"  # cilk_scope { ... } -> _RV_SCOPE: { ... }

# same-length rewrites of the Cilk keywords (Cilk Plus / OpenCilk spellings)
REWRITES = {
    "cilk_spawn": "(__SPAWN_)",
    "_Cilk_spawn": "(__SPAWN_) ",
    "_Cilk_sync": "cilk_sync ",
    "cilk_for": f"{SPAWN_LABEL}:for",
    "_Cilk_for": f"{SPAWN_LABEL}:for ",
    "cilk_scope": f"{SCOPE_LABEL}:",
    "_Cilk_scope": f"{SCOPE_LABEL}: ",
}
CILK5_REWRITES = {"spawn": "(_S5)", "sync": "_SY_", "cilk": "    "}
UNSUPPORTED_KEYWORDS = {
    "cilk_reducer": "cilk_reducer hyperobjects are not supported; return the values "
                    "instead (revec derives the reducers)",
    "_Cilk_reducer": "cilk_reducer hyperobjects are not supported; return the values "
                     "instead (revec derives the reducers)",
}
CILK5_UNSUPPORTED = {
    "inlet": "Cilk-5 inlets are not supported",
    "abort": "Cilk-5 abort is not supported",
    "SYNCHED": "Cilk-5 SYNCHED is not supported",
}

# C tokens, as far as aligning two spellings of a line needs: names and numbers,
# string and character constants, any other character on its own
_TOKEN = re.compile(r"""[A-Za-z_0-9.]*[A-Za-z_0-9]|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|\S""")
_COMMENT = re.compile(r"""/\*.*?(?:\*/|\Z)|//[^\n]*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""",
                      re.S)
_MARKER = re.compile(r'#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"')
_DIAGNOSTIC = re.compile(r"^(.*?):(\d+):(\d+): (?:fatal )?error: (.*)$", re.M)
_NAME = re.compile(r"[A-Za-z_]\w*")


def tokens(text: str) -> list[tuple[int, str]]:
    """(0-based column, text) of each token of one line."""
    return [(m.start(), m.group()) for m in _TOKEN.finditer(text)]


def strip_comments(text: str) -> str:
    """``text`` with its comments blanked (newlines kept): the lines as the
    preprocessor's tokens see them."""
    def blank(m: re.Match[str]) -> str:
        s = m.group()
        return re.sub(r"[^\n]", " ", s) if s[0] == "/" else s
    return _COMMENT.sub(blank, text)


@dataclass
class Preprocessed:
    """gcc's output (keywords rewritten) and the way back to the user's files."""

    path: str
    text: str
    # (file, line) of each output line (None: a line marker, or a line of gcc's own)
    origin: list[tuple[str, int] | None]
    # the first output line each (file, line) gave, as gcc wrote it (before the rewrite)
    output_lines: dict[tuple[str, int], str]
    cilk5: bool = False
    file_text: dict[str, str] = field(default_factory=dict)
    clean_text: dict[str, list[str]] = field(default_factory=dict)
    headers: dict[str, bool] = field(default_factory=dict)
    alignments: dict[tuple[str, int], tuple[list[int | None], list[bool]]] = field(
        default_factory=dict)

    def is_revec_header(self, file: str | None) -> bool:
        """``file`` (as a marker names it) is one of revec's own headers."""
        if file is None:
            return False
        if file not in self.headers:
            self.headers[file] = Path(self.real(file)).resolve().is_relative_to(
                INCLUDE_DIR.resolve())
        return self.headers[file]

    def real(self, file: str) -> str:
        """The file a line marker names (``file`` as the marker spells it, which is
        what pycparser reports: quotes and backslashes escaped)."""
        return re.sub(r"\\(.)", r"\1", file)

    def lines_of(self, file: str) -> list[str]:
        """The lines of ``file`` (as a marker names it)."""
        if file not in self.file_text:
            try:
                self.file_text[file] = Path(self.real(file)).read_text(errors="replace")
            except OSError:
                self.file_text[file] = ""
        return self.file_text[file].splitlines()

    def column(self, file: str, line: int, col: int) -> int:
        """The column in the user's line of what is at ``col`` of the output line: the
        same token (a column inside it: the same column inside it), or for a token a
        macro produced, the macro's name at its use; a token with no counterpart maps
        as the token before it."""
        out = self.output_lines.get((file, line))
        if out is None or self.is_revec_header(file):
            return col
        otoks = tokens(out)
        utoks = tokens(self._clean_line(file, line))
        if not otoks or not utoks:
            return col
        at = max((i for i, (c, _) in enumerate(otoks) if c <= col - 1), default=0)
        mapped, exact = self._alignment(file, line, otoks, utoks)
        if exact[at]:
            return mapped[at] + (col - 1 - otoks[at][0]) + 1  # type: ignore[operator]
        for k in [*range(at, -1, -1), *range(at + 1, len(otoks))]:
            if mapped[k] is not None:
                return mapped[k] + 1  # type: ignore[operator]
        return utoks[0][0] + 1

    def _clean_line(self, file: str, line: int) -> str:
        if file not in self.clean_text:
            self.clean_text[file] = strip_comments("\n".join(self.lines_of(file))).split("\n")
        lines = self.clean_text[file]
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def _alignment(self, file: str, line: int, otoks: list[tuple[int, str]],
                   utoks: list[tuple[int, str]]) -> tuple[list[int | None], list[bool]]:
        """For each output token: the user's column it maps to (0-based; None: none),
        and whether it is the same token there."""
        key = (file, line)
        if key not in self.alignments:
            mapped: list[int | None] = [None] * len(otoks)
            exact = [False] * len(otoks)
            matcher = difflib.SequenceMatcher(None, [t for _, t in otoks],
                                              [t for _, t in utoks], autojunk=False)
            for tag, i1, i2, j1, _ in matcher.get_opcodes():
                for k in range(i1, i2):
                    if tag == "equal":
                        mapped[k], exact[k] = utoks[j1 + k - i1][0], True
                    elif tag == "replace" and j1 < len(utoks):
                        mapped[k] = utoks[j1][0]  # a macro's expansion: the macro's name
            self.alignments[key] = (mapped, exact)
        return self.alignments[key]

    def loc(self, file: str, line: int, col: int) -> SourceLoc:
        """The place in the user's file of output line ``line`` of ``file`` (as a line
        marker names it), column ``col``."""
        lines = self.lines_of(file)
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return SourceLoc(self.real(file), line, self.column(file, line, col), text)

    def output_loc(self, index: int, col: int) -> SourceLoc:
        """Where column ``col`` (1-based) of output line ``index`` (0-based) comes from."""
        origin = self.origin[index] if index < len(self.origin) else None
        if origin is None:
            return SourceLoc(self.path, 1, 1)
        return self.loc(origin[0], origin[1], col)


def preprocess(path: str, cc: list[str]) -> Preprocessed:
    """Run the preprocessor ``cc`` on the file ``path``: its output with the Cilk
    keywords rewritten, or the preprocessor's first error at its place in the file."""
    # <header> not among revec's is looked for next to the file (as Cilk-5's examples
    # find <getoptions.h>: their Makefile's -I.)
    cmd = [*cc, "-E", "-x", "c", "-std=c11", "-nostdinc", "-isystem", str(INCLUDE_DIR),
           "-idirafter", str(Path(path).resolve().parent),
           "-include", str(PRELUDE_HEADER), "-D__REVEC__=1", "-D__cilk=200",
           "-fno-diagnostics-color", path]
    env = {k: v for k, v in os.environ.items()
           if k not in ("CPATH", "C_INCLUDE_PATH", "GCC_COLORS")}
    env["LC_ALL"] = "C"
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env,
                              errors="replace")
    except (OSError, subprocess.TimeoutExpired) as err:
        raise RevecError(f"the C preprocessor ({' '.join(cc)} -E) could not run on "
                         f"{path}: {err}") from None
    if proc.returncode != 0:
        raise _preprocessor_error(path, proc.stderr)
    return _read_output(path, proc.stdout)


def _preprocessor_error(path: str, stderr: str) -> RevecError:
    m = _DIAGNOSTIC.search(stderr)
    if m is None:
        detail = stderr.strip()[:500] or "no message"
        return RevecError(f"the C preprocessor failed on {path}: {detail}")
    file, line, col, msg = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
    try:
        lines = Path(file).read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if msg.startswith("#") and text.lstrip().startswith("#"):  # #error: at its '#'
        col = len(text) - len(text.lstrip()) + 1
    macro = re.match(r'unterminated argument list invoking macro "(\w+)"', msg)
    if macro is not None and macro.group(1) in text[:col]:  # at the macro's name
        col = text.rindex(macro.group(1), 0, col) + 1
    missing = re.fullmatch(r"(.+): No such file or directory", msg)
    include = re.match(r"\s*#\s*include\s*([<\"])", text)
    if missing is not None and include is not None:
        col = len(text) - len(text.lstrip()) + 1
        name = missing.group(1)
        if include.group(1) == "<":
            msg = (f"#include <{name}>: revec does not provide this header (it provides "
                   f"{PROVIDED}); keep code that needs other headers (main, printing) "
                   "under #ifndef __REVEC__")
        else:
            msg = f"#include \"{name}\": no such file next to {Path(file).name}"
    return RevecError(msg, SourceLoc(file, line, col, text))


def _read_output(path: str, out: str) -> Preprocessed:
    lines = out.split("\n")
    origin: list[tuple[str, int] | None] = []
    output_lines: dict[tuple[str, int], str] = {}
    file, line = path, 1
    for text in lines:
        m = _MARKER.match(text)
        if m is not None:
            origin.append(None)
            file = m.group(2)
            line = int(m.group(1))
            continue
        if text.startswith("#") and not text.lstrip("#").lstrip().startswith("pragma"):
            origin.append(None)  # a directive gcc passes on (#ident): pycparser's
            line += 1
            continue
        origin.append((file, line))
        output_lines.setdefault((file, line), text)
        line += 1
    pre = Preprocessed(path, out, origin, output_lines)
    pre.text = _rewrite_keywords(pre)
    return pre


def _rewrite_keywords(pre: Preprocessed) -> str:
    """The Cilk keywords of the user's lines rewritten (same lengths)."""
    lines = pre.text.split("\n")
    user = [i for i, o in enumerate(pre.origin)
            if o is not None and not pre.is_revec_header(o[0])]
    names: list[tuple[int, int, str]] = []  # (line index, column, name)
    for i in user:
        clean = _COMMENT.sub(lambda m: " " * len(m.group()), lines[i])
        names += [(i, m.start(), m.group()) for m in _NAME.finditer(clean)]
    pre.cilk5 = any(name == "cilk" for _, _, name in names)
    for i, col, name in names:
        new = REWRITES.get(name)
        if pre.cilk5 and name in CILK5_REWRITES:
            new = CILK5_REWRITES[name]
        elif pre.cilk5 and name in CILK5_UNSUPPORTED:
            raise RevecError(CILK5_UNSUPPORTED[name], _at(pre, i, col))
        if name in UNSUPPORTED_KEYWORDS:
            raise RevecError(UNSUPPORTED_KEYWORDS[name], _at(pre, i, col))
        if new is not None:
            lines[i] = lines[i][:col] + new + lines[i][col + len(name):]
    return "\n".join(lines)


def _at(pre: Preprocessed, index: int, col: int) -> SourceLoc:
    return pre.output_loc(index, col + 1)

"""revec/backends has no import circle: the graph of its modules' imports (every import
statement, at module level, under ``TYPE_CHECKING`` or inside a function) is acyclic."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def import_graph(package: Path, prefix: str) -> dict[str, set[str]]:
    """module -> the modules of the same package it imports (anywhere in its source)."""
    mods = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m in mods:
        tree = ast.parse((package / f"{m}.py").read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module == prefix:  # from revec.backends import c_driver
                    names = [f"{prefix}.{a.name}" for a in node.names]
                else:
                    names = [node.module]
            for name in names:
                if name.startswith(prefix + "."):
                    target = name[len(prefix) + 1:].split(".")[0]
                    if target in mods and target != m:
                        graph[m].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state and (c := visit(n)) is not None:
                return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (c := visit(m)) is not None:
            return c
    return None


def test_backends_import_graph_is_acyclic() -> None:
    graph = import_graph(ROOT / "revec" / "backends", "revec.backends")
    assert "c_codegen" in graph and graph["c_codegen"] >= {"c_lanes", "c_driver"}
    assert find_cycle(graph) is None, f"import circle: {' -> '.join(find_cycle(graph) or [])}"


def test_cycle_detection_sees_function_level_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.c import x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    import pkg.a\n")
    graph = import_graph(pkg, "pkg")
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    (pkg / "c.py").write_text("x = 1\n")
    assert find_cycle(import_graph(pkg, "pkg")) is None


def test_the_command_line_parser_imports_no_compiler() -> None:
    """`revec check` and `--help` start fast: building the parser (every command's
    options) imports neither numba nor libcst.matchers (about 0.5 s and 0.25 s)."""
    import subprocess
    import sys

    code = ("import sys, revec.cli as c; c.build_parser(); "
            "print(sorted(m for m in ('numba', 'libcst.matchers', 'cffi') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.strip()
    assert out == "[]", out


def test_numba_error_colouring_is_off_unless_the_user_asks() -> None:
    """Importing revec turns off numba's colouring of error messages (a cost paid for
    every rejected overload while a kernel is typed), unless the user set it."""
    import os
    import subprocess
    import sys

    code = ("import os, revec, numba.core.errors as e; print(type(e.termcolor()).__name__, "
            "repr(os.environ['NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING']))")
    env = {k: v for k, v in os.environ.items()
           if k != "NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"}
    run = [sys.executable, "-c", code]
    out = subprocess.run(run, capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    assert out.stdout.split() == ["NOPColorScheme", "'1'"]
    env["NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"] = ""  # the user's choice: colours on
    out = subprocess.run(run, capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    assert out.stdout.split()[1] == "''"  # kept (numba colours if colorama is installed)

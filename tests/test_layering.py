"""revec's modules form layers without circles.

Every import statement in ``revec/`` (at module level, under ``TYPE_CHECKING`` and inside
functions; relative or absolute; ``importlib.import_module`` of a literal name) is an
edge of the module graph.  The graph must have no cycle, and no module may import from
a layer above its own (:data:`LAYERS`, lowest first).  A new module or package must be
placed in a layer (:func:`test_every_module_has_a_layer`), so the order is a decision
written down here, not an accident of who imported what first.

The checker is tested on small synthetic packages (a cycle, an upward edge, a sibling
edge, the import forms it must see) so that a green run means something.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Lowest first.  A layer is a tuple of module prefixes (a package or one module); a
# module belongs to the longest prefix that names it or a package holding it.  A module
# may import modules of lower layers and of its own entry (its own package); the entries
# of one layer are independent of each other (neither imports the other).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("revec.errors",),                   # RevecError, SourceLoc: imports nothing of revec
    ("revec.files",),                    # write_atomic: file utilities for every layer
    ("revec.ir",),                       # the typed IR
    ("revec.lang",),                     # task, spawn, reduce, Reducer: the language
    ("revec.lib",),                      # runtime-library functions callable from tasks
    ("revec.transforms",),               # IR -> IR passes, schedules, kernel plans
    ("revec.emit",),                     # the IR's Python and C expression printers
    # The C toolchain (compile with cffi, cache, check the cache; find the compiler): a
    # tool the Cilk C front end (its preprocessor), the runtime's compaction tables, the
    # C back end and the benchmarks share.
    ("revec.toolchain",),
    ("revec.frontend",),                 # source (Python, Cilk C) -> checked IR
    ("revec.runtime", "revec.treegen"),  # schedulers, statistics | tree generator
    ("revec.backends",),                 # generated numba / C code, built and run
    ("revec.api",),                      # check, compile and run programs
    ("revec",),                          # the package: @task's RunnableTask.run -> api
    ("revec.cluster",),                  # runs on a Dask cluster, through the API
    ("revec.bench", "revec.demos"),      # benchmarks | demo programs (user code)
    ("revec.cli",),                      # the command line
    ("revec.__main__",),                 # python -m revec
)

PACKAGE = "revec"


@dataclass(frozen=True)
class Edge:
    """``src`` imports ``dst`` (both module names) at ``line`` of ``src``'s file."""

    src: str
    dst: str
    line: int


def modules_of(root: Path, package: str) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file of ``package`` (a directory under
    ``root``); a package's ``__init__.py`` is the package's own module."""
    out: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module an import of ``name`` loads: ``name`` itself, else its longest prefix
    that is a module (``import a.b.c`` of a non-module ``c``: an attribute of ``a.b``)."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        cand = ".".join(parts[:n])
        if cand in modules:
            return cand
    return None


def _base_of_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute module name of ``from <level dots><target> import ...`` in ``module``."""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[:len(parts) - (level - 1)]
    return ".".join([*parts, *([target] if target else [])])


def imported_names(tree: ast.AST, module: str, is_package: bool,
                   modules: dict[str, Path]) -> Iterable[tuple[str, int]]:
    """(module imported, line) for every import in ``tree``, wherever it stands."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = (node.module or "") if node.level == 0 else \
                _base_of_relative(module, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                # ``from pkg import mod`` loads the submodule; ``from mod import name``
                # (or ``*``) loads mod
                yield (sub if sub in modules else base), node.lineno
        elif isinstance(node, ast.Call) and node.args and \
                isinstance(node.args[0], ast.Constant) and \
                isinstance(node.args[0].value, str):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else \
                f.id if isinstance(f, ast.Name) else ""
            if name == "import_module":
                yield node.args[0].value, node.lineno


def import_edges(root: Path, package: str) -> tuple[dict[str, Path], list[Edge]]:
    """The modules of ``package`` and the import edges between them (self-imports and
    imports of other packages left out)."""
    modules = modules_of(root, package)
    edges: list[Edge] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        for imported, line in imported_names(tree, name, is_package, modules):
            if imported != package and not imported.startswith(package + "."):
                continue
            dst = _owner(imported, modules)
            if dst is not None and dst != name:
                edges.append(Edge(name, dst, line))
    return modules, list(dict.fromkeys(edges))  # one edge per (src, dst, line)


def layer_of(module: str, layers: tuple[tuple[str, ...], ...]) -> tuple[int, str] | None:
    """(layer index, entry) of ``module``: the longest entry naming it or a package
    above it."""
    found: tuple[int, str] | None = None
    for i, entries in enumerate(layers):
        for entry in entries:
            if module == entry or module.startswith(entry + "."):
                if found is None or len(entry) > len(found[1]):
                    found = (i, entry)
    return found


def layer_violations(edges: Iterable[Edge], layers: tuple[tuple[str, ...], ...]
                     ) -> list[str]:
    """Every edge into a higher layer ("upward") or into another entry of the same
    layer ("sibling")."""
    out = []
    for e in edges:
        a, b = layer_of(e.src, layers), layer_of(e.dst, layers)
        if a is None or b is None or a[1] == b[1]:
            continue
        if b[0] > a[0]:
            out.append(f"upward: {e.src} (layer {a[1]}) imports {e.dst} (layer {b[1]}), "
                       f"line {e.line}")
        elif b[0] == a[0]:
            out.append(f"sibling: {e.src} ({a[1]}) imports {e.dst} ({b[1]}) of the same "
                       f"layer, line {e.line}")
    return out


def cycles(edges: Iterable[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative),
    each as a closed path through some of its modules, for the message."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.src, set()).add(e.dst)
        graph.setdefault(e.dst, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    comps: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(_closed_path(sorted(comp), graph))
    return comps


def _closed_path(comp: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A cycle through ``comp[0]`` inside the component (breadth-first, for the message)."""
    members = set(comp)
    start = comp[0]
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [*reversed(path), start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp  # unreachable for a strongly connected component


# ---------------------------------------------------------------------- revec itself
@pytest.fixture(scope="module")
def revec_graph() -> tuple[dict[str, Path], list[Edge]]:
    return import_edges(ROOT, PACKAGE)


def test_the_graph_is_read(revec_graph: tuple[dict[str, Path], list[Edge]]) -> None:
    """The checker sees revec's imports (a function-level and a module-level one)."""
    modules, edges = revec_graph
    pairs = {(e.src, e.dst) for e in edges}
    assert {"revec", "revec.api", "revec.cli", "revec.errors"} <= set(modules)
    assert ("revec.cli.run_cmd", "revec.api") in pairs            # module level
    assert ("revec.cli.run_cmd", "revec.cluster") in pairs        # inside a function
    assert ("revec", "revec.api") in pairs                        # inside a method
    assert ("revec.api", "revec.errors") in pairs


def test_every_module_has_a_layer(revec_graph: tuple[dict[str, Path], list[Edge]]) -> None:
    modules, _ = revec_graph
    missing = sorted(m for m in modules if layer_of(m, LAYERS) is None)
    assert not missing, f"place these modules in LAYERS: {missing}"


def test_no_import_cycle(revec_graph: tuple[dict[str, Path], list[Edge]]) -> None:
    _, edges = revec_graph
    found = cycles(edges)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_upward_import(revec_graph: tuple[dict[str, Path], list[Edge]]) -> None:
    _, edges = revec_graph
    bad = layer_violations(edges, LAYERS)
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


# named rules that hold whatever the order of LAYERS becomes
FORBIDDEN = (
    ("revec.runtime", "revec.api", "the runtime runs under the API, never calls it"),
    ("revec.frontend", "revec.backends", "the front end produces IR, not code"),
    ("revec.lang", "revec.api", "the language surface imports no compiler"),
)


def test_named_rules(revec_graph: tuple[dict[str, Path], list[Edge]]) -> None:
    _, edges = revec_graph

    def under(m: str, p: str) -> bool:
        return m == p or m.startswith(p + ".")

    bad = [f"{e.src} imports {e.dst} (line {e.line}): {why}" for e in edges
           for src, dst, why in FORBIDDEN if under(e.src, src) and under(e.dst, dst)]
    # only the command line imports the command line: no library module does
    bad += [f"{e.src} imports {e.dst} (line {e.line}): a library module imports the "
            "command line" for e in edges
            if under(e.dst, "revec.cli") and not under(e.src, "revec.cli")
            and e.src != "revec.__main__"]
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------------- the checker
def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_checker_finds_a_cycle_through_every_import_form(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",                                  # submodule
        "pkg/b.py": "def f():\n    from pkg.sub.c import x\n",              # in a function
        "pkg/sub/__init__.py": "",
        "pkg/sub/c.py": "from typing import TYPE_CHECKING\n"
                        "if TYPE_CHECKING:\n    from .. import d\n",        # relative
        "pkg/d.py": "import importlib\nimportlib.import_module('pkg.a')\n",  # importlib
        "pkg/e.py": "import pkg.a.nothing\nimport os\n",                    # attribute
    })
    modules, edges = import_edges(root, "pkg")
    assert set(modules) == {"pkg", "pkg.a", "pkg.b", "pkg.sub", "pkg.sub.c", "pkg.d",
                            "pkg.e"}
    assert {(e.src, e.dst) for e in edges} == {
        ("pkg.a", "pkg.b"), ("pkg.b", "pkg.sub.c"), ("pkg.sub.c", "pkg.d"),
        ("pkg.d", "pkg.a"), ("pkg.e", "pkg.a")}
    assert cycles(edges) == [["pkg.a", "pkg.b", "pkg.sub.c", "pkg.d", "pkg.a"]]
    (root / "pkg" / "d.py").write_text("x = 1\n")
    assert cycles(import_edges(root, "pkg")[1]) == []


def test_checker_finds_an_upward_and_a_sibling_edge(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "def f():\n    import pkg.top.cmd\n",      # upward (in a function)
        "pkg/mid/__init__.py": "from pkg.mid import util\n",     # own package: allowed
        "pkg/mid/util.py": "from pkg import low\nfrom pkg.side import y\n",
        "pkg/side.py": "y = 1\n",
        "pkg/top/__init__.py": "",
        "pkg/top/cmd.py": "from pkg.side import y\n",            # downward: allowed
    })
    layers = (("pkg.low",), ("pkg.mid", "pkg.side"), ("pkg.top", "pkg"))
    _, edges = import_edges(root, "pkg")
    assert cycles(edges) == []  # no circle, yet two edges break the layers
    assert layer_violations(edges, layers) == [
        "upward: pkg.low (layer pkg.low) imports pkg.top.cmd (layer pkg.top), line 2",
        "sibling: pkg.mid.util (pkg.mid) imports pkg.side (pkg.side) of the same layer, "
        "line 2",
    ]
    # the longest entry wins: pkg.top's modules are not in the package's entry "pkg"
    assert layer_of("pkg.top.cmd", layers) == (2, "pkg.top")
    assert layer_of("pkg", layers) == (2, "pkg")
    assert layer_of("other", layers) is None


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

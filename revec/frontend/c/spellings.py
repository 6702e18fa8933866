"""Every common spelling of spawn and sync, read as the one form the lowering knows
(a spawn is the cast ``(__SPAWN_)`` of its call, a sync the identifier ``cilk_sync``):

* OpenCilk's ``cilk_scope { ... }`` (``_Cilk_scope``): the block, then a sync;
* ``cilk_for (...) body`` (``_Cilk_for``): the loop with each call of the function
  itself in its body spawned (each iteration's call is a spawn), then a sync;
* OpenMP tasks (BOTS style): ``#pragma omp task [clauses]`` before a statement
  ``x = f(...);``, ``f(...);`` or ``T x = f(...);`` spawns its call; before a block (or
  an ``if``), the calls of the function itself in it; ``#pragma omp taskwait`` is a
  sync; ``#pragma omp taskgroup`` before a block is the block then a sync,
  ``#pragma omp taskloop`` before a loop is ``cilk_for``; the other OpenMP pragmas
  (``parallel``, ``single``, ``master``, ...) are ignored, as in the serial elision.

The preprocessor (:mod:`revec.frontend.c.preprocess`) has turned ``cilk_for`` and
``cilk_scope`` into the labels ``_RVF:`` and ``_RV_SCOPE:``; Cilk Plus's
``_Cilk_spawn``/``_Cilk_sync`` and MIT Cilk-5's ``spawn``/``sync`` into the spawn and
sync forms already.  A sync this module adds in a function that spawns nothing (a
``cilk_for`` over helper calls) is dropped: it would sync nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from pycparser import c_ast

from revec.frontend.c.preprocess import SCOPE_LABEL, SPAWN_LABEL
from revec.frontend.c.syntax import is_spawn, spawn_of, walk

Error = Callable[[str, Any], NoReturn]

# the structured blocks of OpenMP constructs that mean nothing to the serial program
_IGNORED = ("parallel", "single", "master", "masked", "for", "critical", "atomic",
            "barrier", "flush", "simd", "ordered", "section", "sections", "taskyield",
            "declare", "threadprivate", "target", "teams", "distribute", "loop")


def read_spellings(ast: c_ast.FileAST, error: Error) -> None:
    """Rewrite every function of ``ast`` in place (see the module's docstring)."""
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef):
            _Function(ext, error).run()


def _omp(node: c_ast.Node) -> str | None:
    """The directive of ``#pragma omp <directive> ...`` (None: not an OpenMP pragma)."""
    if not isinstance(node, c_ast.Pragma):
        return None
    words = node.string.replace("(", " ( ").split()
    if len(words) < 2 or words[0] != "omp":
        return None
    return words[1]


class _Function:
    def __init__(self, fdef: c_ast.FuncDef, error: Error) -> None:
        self.fdef = fdef
        self.name = fdef.decl.name
        self.error = error
        self.added: set[int] = set()  # the syncs this module added

    def run(self) -> None:
        self.fdef.body = self.stmt(self.fdef.body)
        if self.added and not any(is_spawn(n) for n in walk(self.fdef.body)):
            self.fdef.body = _without(self.fdef.body, self.added)

    def sync(self, where: c_ast.Node) -> c_ast.ID:
        node = c_ast.ID("cilk_sync", where.coord)
        self.added.add(id(node))
        return node

    def stmt(self, node: c_ast.Node) -> c_ast.Node:
        """One statement rewritten (a block where it became several)."""
        out = self.items([node]) if not isinstance(node, c_ast.Compound) else None
        if out is not None:
            return out[0] if len(out) == 1 else c_ast.Compound(out, node.coord)
        node.block_items = self.items(list(node.block_items or []))
        return node

    def items(self, items: list[c_ast.Node]) -> list[c_ast.Node]:
        out: list[c_ast.Node] = []
        i = 0
        while i < len(items):
            node = items[i]
            i += 1
            directive = _omp(node)
            if directive is not None:
                if directive == "taskwait":
                    out.append(self.sync(node))
                    continue
                if directive not in ("task", "taskgroup", "taskloop"):
                    continue
                if i == len(items):
                    self.error(f"'#pragma omp {directive}' needs a statement after it", node)
                body = items[i]
                i += 1
                if directive == "task":
                    out.append(self.task(body))
                elif directive == "taskgroup":
                    out += [self.stmt(body), self.sync(body)]
                else:
                    out += self.parallel_loop(body, node, "#pragma omp taskloop")
                continue
            if isinstance(node, c_ast.Label) and node.name == SPAWN_LABEL:
                out += self.parallel_loop(node.stmt, node, "cilk_for")
            elif isinstance(node, c_ast.Label) and node.name == SCOPE_LABEL:
                out += [self.stmt(node.stmt), self.sync(node)]
            else:
                out.append(self.nested(node))
        return out

    def nested(self, node: c_ast.Node) -> c_ast.Node:
        """The statements inside ``node`` rewritten."""
        match node:
            case c_ast.Compound():
                return self.stmt(node)
            case c_ast.If():
                node.iftrue = self.stmt(node.iftrue) if node.iftrue is not None else None
                node.iffalse = self.stmt(node.iffalse) if node.iffalse is not None else None
            case c_ast.For() | c_ast.While() | c_ast.DoWhile():
                node.stmt = self.stmt(node.stmt) if node.stmt is not None else None
            case c_ast.Label() | c_ast.Case() | c_ast.Default():
                if isinstance(node, c_ast.Label):
                    node.stmt = self.stmt(node.stmt)
                else:
                    node.stmts = self.items(list(node.stmts or []))
            case c_ast.Switch():
                node.stmt = self.stmt(node.stmt)
        return node

    def parallel_loop(self, loop: c_ast.Node, where: c_ast.Node, spelled: str
                      ) -> list[c_ast.Node]:
        """``cilk_for``: the loop with its body's calls of this function spawned, then
        a sync."""
        if not isinstance(loop, c_ast.For):
            self.error(f"{spelled} needs a for loop", where)
        loop.stmt = _spawned(self.stmt(loop.stmt), self.name)
        return [loop, self.sync(loop)]

    def task(self, body: c_ast.Node) -> c_ast.Node:
        """The statement after ``#pragma omp task``: a call statement spawns its call;
        in a block, the calls of this function are spawned."""
        spawned = _spawned(body, None)
        if spawned is not None:
            return spawned
        return _spawned(self.stmt(body), self.name)


def _call_of(node: c_ast.Node, name: str | None) -> bool:
    return isinstance(node, c_ast.FuncCall) and (
        name is None or (isinstance(node.name, c_ast.ID) and node.name.name == name))


def _spawned(node: c_ast.Node, name: str | None) -> Any:
    """``node`` with its calls in spawn places (a call statement, ``x = f(...)``,
    ``x += f(...)``, ``T x = f(...)``) spawned.  ``name`` None: ``node`` is one such
    statement and its call is spawned whatever it calls (None if it is not one);
    otherwise the calls of ``name`` anywhere in the statements of ``node``."""
    if name is None:
        if _call_of(node, None):
            return spawn_of(node)
        if isinstance(node, c_ast.Assignment) and _call_of(node.rvalue, None):
            node.rvalue = spawn_of(node.rvalue)
            return node
        if isinstance(node, c_ast.Decl) and node.init is not None and \
                _call_of(node.init, None):
            node.init = spawn_of(node.init)
            return node
        return None
    match node:
        case c_ast.FuncCall() if _call_of(node, name):
            return spawn_of(node)
        case c_ast.Assignment() if _call_of(node.rvalue, name):
            node.rvalue = spawn_of(node.rvalue)
        case c_ast.Decl() if node.init is not None and _call_of(node.init, name):
            node.init = spawn_of(node.init)
        case c_ast.DeclList():
            node.decls = [_spawned(d, name) for d in node.decls]
        case c_ast.Compound():
            node.block_items = [_spawned(s, name) for s in node.block_items or []]
        case c_ast.If():
            node.iftrue = _spawned(node.iftrue, name) if node.iftrue is not None else None
            node.iffalse = _spawned(node.iffalse, name) if node.iffalse is not None else None
        case c_ast.For() | c_ast.While() | c_ast.DoWhile() | c_ast.Label():
            node.stmt = _spawned(node.stmt, name) if node.stmt is not None else None
    return node


def _without(node: c_ast.Node, drop: set[int]) -> Any:
    """``node`` without the statements whose ids are in ``drop``."""
    if id(node) in drop:
        return c_ast.EmptyStatement(node.coord)
    if isinstance(node, c_ast.Compound):
        node.block_items = [_without(s, drop) for s in node.block_items or []
                            if id(s) not in drop]
        return node
    for attr in ("iftrue", "iffalse", "stmt"):
        child = getattr(node, attr, None)
        if isinstance(child, c_ast.Node):
            setattr(node, attr, _without(child, drop))
    return node

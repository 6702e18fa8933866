"""Out-parameters: a ``void`` Cilk C task that returns its result through a pointer
parameter is rewritten, in its pycparser syntax tree and before lowering, into the
value-returning task the front end already accepts.

    void fib(int n, int *res) {                 long fib(int n) {
      if (n < 2) { *res = n; return; }            if (n < 2) { return n; }
      int x, y;                                   int x, y;
      cilk_spawn fib(n - 1, &x);          ->      x = cilk_spawn fib(n - 1);
      fib(n - 2, &y);                             y = fib(n - 2);
      cilk_sync;                                  cilk_sync;
      *res = x + y;                               return x + y;
    }                                           }

A pointer parameter is an *out-parameter* when the task writes through it (``*p = e``,
``p[0] = e``, ``*p += e``) and is not a board or an output array: a call passing an
address (``&x``) makes it one, a local array passed makes it a board, the parameter
passed on as itself or shifted (``p``, ``p + k``) by every call makes it an output
array (:func:`revec.frontend.c.outputs.is_out_parameter`); a pointer parameter only
read is left alone (read-only inputs are not this module's).  The task must be ``void`` and have one out-parameter;
``*p`` is written exactly once (``=``) on every path that ends the task and read only
after that write (``*p += e`` accumulates into it); the task's own calls pass ``&x``
(a local) or ``&a[i]`` (an element of a local array) where it takes ``p``, and become
``x = f(...)`` / ``a[i] = f(...)`` (spawned or not, as written).  Where every write is
followed by the end of the task the writes become ``return e``; otherwise the value
lives in a hidden local that every ``return`` returns.  Any other use of ``p`` (read
before written, written twice on a path, not written on a path, passed to a child or a
helper, its address taken, stored, pointer arithmetic) is a located error.  The new
nodes keep the positions of the ones they replace.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NoReturn

from pycparser import c_ast

from revec.frontend.c.outputs import is_out_parameter
from revec.frontend.c.syntax import body_items, ends_with_return, is_spawn, walk

Error = Callable[[str, Any], NoReturn]

UNWRITTEN, WRITTEN, MAYBE, DEAD = "unwritten", "written", "maybe", "dead"
LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


def _parents(root: c_ast.Node) -> dict[int, c_ast.Node]:
    out: dict[int, c_ast.Node] = {}
    for n in walk(root):
        for _, c in n.children():
            out[id(c)] = n
    return out


def _replace(parent: c_ast.Node, old: c_ast.Node, new: c_ast.Node) -> None:
    """Put ``new`` where ``old`` is among ``parent``'s children."""
    for name, child in parent.children():
        if child is not old:
            continue
        if "[" in name:
            attr, idx = name[:-1].split("[")
            getattr(parent, attr)[int(idx)] = new
        else:
            setattr(parent, name, new)
        return
    raise AssertionError("not a child")  # pragma: no cover


def _is_zero(node: c_ast.Node) -> bool:
    return isinstance(node, c_ast.Constant) and node.value.rstrip("uUlL") in ("0", "0x0")


def _is_void(tdecl: c_ast.Node) -> bool:
    return (isinstance(tdecl, c_ast.TypeDecl) and isinstance(tdecl.type, c_ast.IdentifierType)
            and tdecl.type.names == ["void"])


class _OutParam:
    def __init__(self, fdef: c_ast.FuncDef, index: int, param: c_ast.Decl,
                 error: Error) -> None:
        self.fdef = fdef
        self.name = fdef.decl.name
        self.index = index
        self.param = param
        self.p = param.name
        self.error = error
        self.star = f"*{self.p}"
        self.parents = _parents(fdef.body)
        self.derefs: dict[int, c_ast.Node] = {}  # id -> a ``*p`` / ``p[0]`` node
        self.writes: dict[int, str] = {}  # id of a writing statement -> its operator
        self.visited: set[int] = set()  # writes seen as statements

    # ------------------------------------------------------------------ uses of p
    def classify(self) -> None:
        """Every use of ``p`` is a ``*p`` read or write; anything else is an error."""
        for n in walk(self.fdef.body):
            if isinstance(n, c_ast.Return) and n.expr is not None:
                self.error(f"'{self.name}' returns void; return without a value", n.expr)
            if isinstance(n, c_ast.Decl) and n.name == self.p:
                self.error(f"'{self.p}' is declared again here, hiding the out-parameter "
                           f"'{self.p}'", n)
            if not (isinstance(n, c_ast.ID) and n.name == self.p):
                continue
            parent = self.parents.get(id(n))
            if isinstance(parent, c_ast.UnaryOp) and parent.op == "*":
                self.deref(parent)
            elif isinstance(parent, c_ast.ArrayRef) and parent.name is n:
                if not _is_zero(parent.subscript):
                    self.error(f"the pointer parameter '{self.p}' is written through, so it "
                               f"is an out-parameter (the task's result), but it is indexed "
                               f"here; an out-parameter holds one value, '*{self.p}' (or "
                               f"'{self.p}[0]'); writing into the caller's array is not "
                               "supported", parent)
                self.deref(parent)
            else:
                self.misuse(n, parent)

    def misuse(self, n: c_ast.Node, parent: c_ast.Node | None) -> NoReturn:
        p, f = self.p, self.name
        if isinstance(parent, c_ast.ExprList):
            call = self.parents.get(id(parent))
            if isinstance(call, c_ast.FuncCall) and isinstance(call.name, c_ast.ID):
                if call.name.name == f:
                    self.error(f"the out-parameter '{p}' is passed to a call of '{f}' "
                               f"unchanged: the child would write the parent's result "
                               f"(aliasing); pass the address of a local (&x) and write "
                               f"'*{p}' once from it after cilk_sync", n)
                self.error(f"the out-parameter '{p}' is passed to '{call.name.name}': "
                           f"'*{p}' is the task's result, written once and not shared", n)
        if isinstance(parent, c_ast.UnaryOp) and parent.op == "&":
            self.error(f"the address of the out-parameter '{p}' is taken; only '*{p}' "
                       "(the task's result) may be used", parent)
        if isinstance(parent, (c_ast.Assignment, c_ast.Decl, c_ast.InitList)):
            self.error(f"the out-parameter '{p}' is stored; only '*{p}' (the task's "
                       "result) may be used", n)
        self.error(f"the pointer parameter '{p}' is written through, so it is an "
                   f"out-parameter (the task's result), but it is used here as a pointer; "
                   f"an out-parameter is only written '*{p} = ...' (once on every path) "
                   f"and read after that", n)

    def deref(self, d: c_ast.Node) -> None:
        self.derefs[id(d)] = d
        parent = self.parents.get(id(d))
        if isinstance(parent, c_ast.Assignment) and parent.lvalue is d:
            self.writes[id(parent)] = parent.op
        elif isinstance(parent, c_ast.UnaryOp) and parent.op in ("p++", "++", "p--", "--"):
            self.writes[id(parent)] = parent.op
        elif isinstance(parent, c_ast.UnaryOp) and parent.op == "&":
            self.error(f"the address of the out-parameter's value '*{self.p}' is taken; it "
                       "is the task's result, written once", parent)

    # ------------------------------------------------------------------ paths
    def reads(self, node: c_ast.Node | None, state: str) -> None:
        """``node`` may read ``*p`` only once it is written on every path here."""
        if node is None or state == WRITTEN:
            return
        for n in walk(node):
            if id(n) in self.derefs:
                parent = self.parents.get(id(n))
                if isinstance(parent, c_ast.Assignment) and parent.lvalue is n and \
                        parent.op == "=":
                    continue
                what = "read before it is written" if state == UNWRITTEN else \
                    "read where it may not be written yet (it is not written on every path)"
                self.error(f"the out-parameter's value '*{self.p}' is {what}; "
                           f"write '*{self.p} = ...' first", n)

    def block(self, items: list[c_ast.Node], state: str, exits: list[str]) -> str:
        for s in items:
            if state == DEAD:
                return DEAD
            state = self.stmt(s, state, exits)
        return state

    def stmt(self, s: c_ast.Node, state: str, exits: list[str]) -> str:
        if isinstance(s, c_ast.Compound):
            return self.block(body_items(s), state, exits)
        if isinstance(s, c_ast.If):
            self.reads(s.cond, state)
            a = self.block(body_items(s.iftrue), state, exits)
            b = self.block(body_items(s.iffalse), state, exits) if s.iffalse else state
            return _join(a, b)
        if isinstance(s, LOOPS):
            for part in ("init", "cond", "next"):
                self.reads(getattr(s, part, None), state)
            inner: list[str] = []
            end = self.block(body_items(s.stmt), state, inner)
            for after in (end, *inner):
                if after not in (DEAD, state):
                    first = next(n for n in walk(s) if id(n) in self.writes)
                    self.error(f"the out-parameter's value '*{self.p}' is written in a loop "
                               "(a second iteration would write it again); write it once, "
                               "after the loop", first)
            return state
        if isinstance(s, (c_ast.Break, c_ast.Continue)):
            exits.append(state)
            return DEAD
        if isinstance(s, c_ast.Return):
            if state != WRITTEN:
                self.not_written(s, state)
            return DEAD
        op = self.writes.get(id(s))
        if op is not None:
            self.visited.add(id(s))
        if op is None:
            self.reads(s, state)
            return state
        if op == "=":
            self.reads(s.rvalue, state)
            if state != UNWRITTEN:
                self.error(f"the out-parameter's value '*{self.p}' is written twice on one "
                           f"path (the task's result is written once; accumulate with "
                           f"'*{self.p} += ...')", s)
            return WRITTEN
        self.reads(s, state)
        return state

    def not_written(self, where: c_ast.Node, state: str) -> NoReturn:
        how = "without writing" if state == UNWRITTEN else "on a path that does not write"
        self.error(f"the task '{self.name}' ends here {how} its result '*{self.p}' (an "
                   "out-parameter is written once on every path)", where)

    def check_paths(self) -> bool:
        """The paths are sound; True if the end of the body is reachable."""
        items = body_items(self.fdef.body)
        end = self.block(items, UNWRITTEN, [])
        for n in walk(self.fdef.body):
            if id(n) in self.writes and id(n) not in self.visited:
                self.error(f"write the out-parameter's value '*{self.p}' as a statement of "
                           "its own", n)
        if end in (UNWRITTEN, MAYBE):
            self.not_written(items[-1] if items else self.fdef.decl, end)
        return end == WRITTEN

    # ------------------------------------------------------------------ calls
    def rewrite_calls(self) -> None:
        for n in walk(self.fdef.body):
            if not (isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)
                    and n.name.name == self.name):
                continue
            args = n.args.exprs if n.args is not None else []
            nparams = len(self.fdef.decl.type.args.params)
            if len(args) != nparams:
                self.error(f"'{self.name}' takes {nparams} arguments, the last of them "
                           f"where the child writes its result", n)
            arg = args[self.index]
            if not (isinstance(arg, c_ast.UnaryOp) and arg.op == "&" and
                    isinstance(arg.expr, (c_ast.ID, c_ast.ArrayRef))):
                self.error(f"a call of '{self.name}' writes its result through this "
                           "argument: pass the address of a local (&x) or of an element of "
                           "a local array (&a[i])", arg)
            del args[self.index]
            stmt = n
            parent = self.parents.get(id(n))
            if parent is not None and is_spawn(parent) and parent.expr is n:
                stmt = parent
                parent = self.parents.get(id(parent))
            if not isinstance(parent, (c_ast.Compound, c_ast.If, *LOOPS, c_ast.Label)) or \
                    getattr(parent, "cond", None) is stmt:
                self.error(f"'{self.name}' writes its result through '&...': call it as "
                           "a statement", n)
            _replace(parent, stmt, c_ast.Assignment("=", arg.expr, stmt, stmt.coord))

    # ------------------------------------------------------------------ the result
    def direct(self, items: list[c_ast.Node], at_end: bool) -> list[c_ast.Node] | None:
        """``items`` with every write followed by the task's end as ``return e``
        (None: a write or ``return`` is elsewhere)."""
        out: list[c_ast.Node] = []
        i = 0
        while i < len(items):
            s = items[i]
            last = i == len(items) - 1
            if self.writes.get(id(s)) == "=":
                # '*p = e0;' then '*p op= e;' statements: one expression, C's conversion
                # to the result type after every step written out
                value, j = s.rvalue, i + 1
                while j < len(items) and isinstance(items[j], c_ast.Assignment) and \
                        self.writes.get(id(items[j]), "=") != "=":
                    if value is s.rvalue:
                        value = self.as_result(value)
                    a = items[j]
                    value = self.as_result(c_ast.BinaryOp(a.op[:-1], value, a.rvalue,
                                                          a.coord))
                    j += 1
                if j < len(items) and isinstance(items[j], c_ast.Return):
                    out.append(c_ast.Return(value, s.coord))
                    i = j + 1
                    continue
                if j == len(items) and at_end:
                    out.append(c_ast.Return(value, s.coord))
                    i = j
                    continue
                return None
            inside = [n for n in walk(s) if id(n) in self.writes or
                      isinstance(n, c_ast.Return)]
            if not inside:
                out.append(s)
            elif isinstance(s, c_ast.Compound):
                sub = self.direct(body_items(s), at_end and last)
                if sub is None:
                    return None
                out.append(c_ast.Compound(sub, s.coord))
            elif isinstance(s, c_ast.If):
                then = self.direct(body_items(s.iftrue), at_end and last)
                els = self.direct(body_items(s.iffalse), at_end and last) \
                    if s.iffalse is not None else None
                if then is None or (s.iffalse is not None and els is None):
                    return None
                out.append(c_ast.If(s.cond, c_ast.Compound(then, s.iftrue.coord),
                                    c_ast.Compound(els, s.iffalse.coord)
                                    if els is not None else None, s.coord))
            else:
                return None
            i += 1
        return out

    def as_result(self, e: c_ast.Node) -> c_ast.Node:
        """``(T)e`` for the result type ``T``."""
        ptype = self.param.type.type
        tdecl = c_ast.TypeDecl(None, [], None, copy.copy(ptype.type), e.coord)
        return c_ast.Cast(c_ast.Typename(None, [], None, tdecl, e.coord), e, e.coord)

    def hidden(self, end_reachable: bool, ptype: c_ast.TypeDecl) -> list[c_ast.Node]:
        """The body with ``*p`` a local that every ``return`` returns."""
        used = {n.name for n in walk(self.fdef.body) if isinstance(n, (c_ast.ID, c_ast.Decl))}
        h = f"{self.p}_result"
        while h in used:
            h += "_"
        for d in list(self.derefs.values()):
            _replace(self.parents[id(d)], d, c_ast.ID(h, d.coord))
        for n in walk(self.fdef.body):
            if isinstance(n, c_ast.Return):
                n.expr = c_ast.ID(h, n.coord)
        tdecl = copy.copy(ptype)
        tdecl.declname = h
        tdecl.quals = [q for q in (tdecl.quals or []) if q != "const"]
        decl = c_ast.Decl(h, [], [], [], [], tdecl, None, None, self.param.coord)
        items = [decl, *body_items(self.fdef.body)]
        if end_reachable:
            _return_at_ends(items, c_ast.Return(c_ast.ID(h, self.param.coord),
                                                self.param.coord))
        return items

    def rewrite(self) -> None:
        fdecl = self.fdef.decl.type
        if not _is_void(fdecl.type):
            self.error(f"'{self.name}' returns a value and writes '*{self.p}': a task with "
                       "an out-parameter returns void", self.param)
        ptype = self.param.type.type
        if not isinstance(ptype, c_ast.TypeDecl):
            self.error(f"the out-parameter '{self.p}' points to a pointer or an array; an "
                       "out-parameter holds one scalar result", self.param)
        self.classify()
        end_reachable = self.check_paths()
        self.rewrite_calls()
        items = self.direct(body_items(self.fdef.body), True)
        if items is None:
            items = self.hidden(end_reachable, ptype)
        self.fdef.body = c_ast.Compound(items, self.fdef.body.coord)
        del fdecl.args.params[self.index]
        result = copy.copy(ptype)
        result.declname = self.name
        result.quals = [q for q in (result.quals or []) if q != "const"]
        fdecl.type = result


def written_through(body: c_ast.Node, name: str) -> bool:
    """The function writes through the pointer ``name``: ``*name = ...``,
    ``name[e] = ...``, ``(*name)++``."""
    for n in walk(body):
        target = None
        if isinstance(n, c_ast.Assignment):
            target = n.lvalue
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("p++", "++", "p--", "--"):
            target = n.expr
        while isinstance(target, (c_ast.UnaryOp, c_ast.ArrayRef)):
            if isinstance(target, c_ast.UnaryOp) and target.op != "*":
                break
            target = target.expr if isinstance(target, c_ast.UnaryOp) else target.name
            if isinstance(target, c_ast.BinaryOp):  # *(p + i) = ...
                target = target.left
            if isinstance(target, c_ast.ID) and target.name == name:
                return True
    return False


def rewrite_out_params(fdef: c_ast.FuncDef, error: Error) -> bool:
    """Rewrite a task with an out-parameter into a value-returning task, in place.
    False (and nothing changed) if it has none."""
    fdecl = fdef.decl.type
    if not isinstance(fdecl, c_ast.FuncDecl) or fdecl.args is None:
        return False
    # (a written pointer the calls pass on as itself or shifted is an output array, one
    # they pass local arrays for a board, unless a call passes an address:
    # revec/frontend/c/outputs.py)
    outs = [(i, p) for i, p in enumerate(fdecl.args.params)
            if isinstance(p, c_ast.Decl) and isinstance(p.type, c_ast.PtrDecl)
            and written_through(fdef.body, p.name) and is_out_parameter(fdef, p.name, i)]
    if not outs:
        return False
    if len(outs) > 1:
        error(f"'{fdef.decl.name}' writes through two pointer parameters ('{outs[0][1].name}' "
              f"and '{outs[1][1].name}'); a task returns one result through one "
              "out-parameter", outs[1][1])
    index, param = outs[0]
    _OutParam(fdef, index, param, error).rewrite()
    return True


def _return_at_ends(items: list[c_ast.Node], ret: c_ast.Return) -> None:
    """Append ``ret`` to every block that ends the function (into both branches of a
    final ``if``/``else``, so that a case's block ends with its return)."""
    if ends_with_return(items):
        return
    last = items[-1] if items else None
    if isinstance(last, c_ast.If) and last.iffalse is not None:
        for attr in ("iftrue", "iffalse"):
            branch = getattr(last, attr)
            inner = body_items(branch)
            _return_at_ends(inner, copy.copy(ret))
            setattr(last, attr, c_ast.Compound(inner, branch.coord))
    elif isinstance(last, c_ast.Compound):
        inner = body_items(last)
        _return_at_ends(inner, ret)
        last.block_items = inner
    elif not isinstance(last, c_ast.Return):
        items.append(ret)


def _join(a: str, b: str) -> str:
    if a == DEAD:
        return b
    if b == DEAD or a == b:
        return a
    return MAYBE

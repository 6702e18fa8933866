"""Which pointer parameters of a Cilk C function are output arrays.

A pointer parameter the function writes through (``out[i] = v;``, ``*(out + i) = v;``,
``*out = v;``) and passes to its own calls unchanged (``out``) or shifted (``out + k``,
``&out[k]``) is an *output array*: the tasks of the tree write its elements, each
element by one task, and the root's caller gets the array back
(revec/frontend/outputs.py).  A pointer parameter whose calls get the address of a
*local* (``f(n - 1, &x)``) is an out-parameter, a different thing (a child hands a
value back to its parent; revec/frontend/c/outparams.py on its own branch): the rule
that keeps the two apart is what the children get — ``&x`` / ``&arr[i]`` of a local:
out-parameter; the parameter itself or the parameter plus k: output array.  A pointer
parameter only read is a read-only input.
"""

from __future__ import annotations

from collections.abc import Callable

from pycparser import c_ast


def pointer_base(node: c_ast.Node, names: set[str]) -> str | None:
    """The pointer among ``names`` a written lvalue goes through: ``p`` of ``p[i]``,
    ``*p``, ``*(p + k)``, ``*(k + p + j)``, ``*(p - k)`` (None for anything else)."""
    if isinstance(node, c_ast.ArrayRef):
        while isinstance(node, c_ast.ArrayRef):
            node = node.name
        return node.name if isinstance(node, c_ast.ID) else None
    if isinstance(node, c_ast.UnaryOp) and node.op == "*":
        found = split_pointer(node.expr, lambda n: n in names)
        return None if found is None else found[0]
    return None


def sum_terms(node: c_ast.Node) -> list[c_ast.Node]:
    """The terms of ``a + b + c`` (any grouping); ``[node]`` for anything else."""
    if isinstance(node, c_ast.BinaryOp) and node.op == "+":
        return sum_terms(node.left) + sum_terms(node.right)
    return [node]


def split_pointer(node: c_ast.Node, is_pointer: Callable[[str], bool]
                  ) -> tuple[str, c_ast.Node] | None:
    """``p + i + j`` (any grouping and order) or ``p - k`` with exactly one term a
    pointer: its name and the element offset (``i + j``; ``0`` for ``p`` alone)."""
    if isinstance(node, c_ast.BinaryOp) and node.op == "-":
        inner = split_pointer(node.left, is_pointer)
        if inner is None:
            return None
        return inner[0], c_ast.BinaryOp("-", inner[1], node.right, node.coord)
    terms = sum_terms(node)
    ptrs = [t for t in terms if isinstance(t, c_ast.ID) and is_pointer(t.name)]
    if len(ptrs) != 1:
        return None
    rest = [t for t in terms if t is not ptrs[0]]
    index: c_ast.Node = c_ast.Constant("int", "0", node.coord)
    for t in rest:
        index = t if isinstance(index, c_ast.Constant) and index.value == "0" else \
            c_ast.BinaryOp("+", index, t, node.coord)
    return ptrs[0].name, index


def written_pointers(fdef: c_ast.FuncDef, names: set[str]) -> set[str]:
    """The names among ``names`` (pointer parameters) that ``fdef`` writes through:
    assigned (``=``, ``+=``, ...) or incremented (``p[i]++``)."""
    out: set[str] = set()

    class Visit(c_ast.NodeVisitor):
        def visit_Assignment(self, node: c_ast.Assignment) -> None:
            base = pointer_base(node.lvalue, names)
            if base in names:
                out.add(base)
            self.generic_visit(node)

        def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
            if node.op in ("++", "--", "p++", "p--"):
                base = pointer_base(node.expr, names)
                if base in names:
                    out.add(base)
            self.generic_visit(node)

    Visit().visit(fdef.body)
    return out


def address_of_local(fdef: c_ast.FuncDef, name: str, position: int,
                     params: set[str]) -> bool:
    """Does a call of the function itself pass ``&x`` (``&arr[i]``) of a local, not of a
    parameter, as argument ``position``: the out-parameter pattern?"""
    fname = fdef.decl.name
    found = False

    class Visit(c_ast.NodeVisitor):
        def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
            nonlocal found
            if isinstance(node.name, c_ast.ID) and node.name.name == fname \
                    and node.args is not None and position < len(node.args.exprs):
                arg = node.args.exprs[position]
                if isinstance(arg, c_ast.UnaryOp) and arg.op == "&":
                    inner = arg.expr
                    while isinstance(inner, c_ast.ArrayRef):
                        inner = inner.name
                    if not (isinstance(inner, c_ast.ID) and inner.name in params):
                        found = True
            self.generic_visit(node)

    Visit().visit(fdef.body)
    return found


def output_params(fdef: c_ast.FuncDef) -> set[str]:
    """The pointer parameters of ``fdef`` that are output arrays (see the module
    docstring): written through, and never given the address of a local by a call of
    the function itself."""
    fdecl = fdef.decl.type
    if not isinstance(fdecl, c_ast.FuncDecl) or fdecl.args is None:
        return set()
    pointers: dict[str, int] = {}
    names: set[str] = set()
    for pos, p in enumerate(fdecl.args.params):
        if isinstance(p, c_ast.Decl):
            names.add(p.name)
            # (a pointer to const stays an input: its writes are rejected where they are)
            if isinstance(p.type, (c_ast.PtrDecl, c_ast.ArrayDecl)) and "const" not in (
                    getattr(p.type.type, "quals", None) or []):
                pointers[p.name] = pos
    written = written_pointers(fdef, set(pointers))
    return {n for n in written if not address_of_local(fdef, n, pointers[n], names)}

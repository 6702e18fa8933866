"""Which pointer parameters of a Cilk C function are output arrays.

A pointer parameter the function writes through (``out[i] = v;``, ``*(out + i) = v;``,
``*out = v;``) and passes to its own calls unchanged (``out``) or shifted (``out + k``,
``&out[k]``) is an *output array*: the tasks of the tree write its elements, each
element by one task, and the root's caller gets the array back
(revec/frontend/outputs.py).  A pointer parameter whose calls get the address of a
*local* (``f(n - 1, &x)``) is an out-parameter, a different thing (a child hands a
value back to its parent; revec/frontend/c/outparams.py): the rule that keeps the
two apart is what the children get — ``&x`` / ``&arr[i]`` of a local: out-parameter;
a local array: a task-private board (revec/frontend/c/boards.py); the parameter itself
or the parameter plus k: output array (:func:`is_out_parameter` decides for the
out-parameter pass).  A pointer parameter only read is a read-only input.
"""

from __future__ import annotations

from collections.abc import Callable

from pycparser import c_ast

from revec.frontend.c.syntax import walk


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


def self_call_args(fdef: c_ast.FuncDef, position: int) -> list[c_ast.Node]:
    """What the function's calls of itself pass as argument ``position``."""
    fname = fdef.decl.name
    out: list[c_ast.Node] = []
    for node in walk(fdef.body):
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
                node.name.name == fname and node.args is not None and \
                position < len(node.args.exprs):
            arg = node.args.exprs[position]
            while isinstance(arg, c_ast.Cast):
                arg = arg.expr
            out.append(arg)
    return out


def local_arrays(fdef: c_ast.FuncDef) -> set[str]:
    """The function's local array and pointer declarations (a board's candidates)."""
    return {n.name for n in walk(fdef.body)
            if isinstance(n, c_ast.Decl) and isinstance(n.type, (c_ast.ArrayDecl,
                                                                 c_ast.PtrDecl))}


def is_out_parameter(fdef: c_ast.FuncDef, name: str, position: int) -> bool:
    """Is the pointer parameter ``name`` (argument ``position``), which the function
    writes through, an out-parameter (revec/frontend/c/outparams.py) rather than a
    task-private board or an output array?  The function's calls of itself decide: a
    call passing an address (``&x``, ``&a[i]``, not of the parameter's own elements)
    makes it an out-parameter; else a local array passed makes it a board; else a
    call passing something made from the parameter (``out``, ``out + k``, ``&out[k]``,
    or a wrong use such as ``out * 2``, the array pass's located error) makes it an
    output array, and so does having no calls of itself; calls passing only other
    values leave it to the out-parameter pass (and its located errors)."""
    args = self_call_args(fdef, position)
    for arg in args:
        if isinstance(arg, c_ast.UnaryOp) and arg.op == "&":
            inner = arg.expr
            while isinstance(inner, c_ast.ArrayRef):
                inner = inner.name
            if not (isinstance(inner, c_ast.ID) and inner.name == name):
                return True
    boards = local_arrays(fdef) - {name}
    if any(isinstance(a, c_ast.ID) and a.name in boards for a in args):
        return False
    if not args:
        return False
    return not any(isinstance(n, c_ast.ID) and n.name == name for a in args for n in walk(a))


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

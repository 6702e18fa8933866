"""The front-end core on its own: the task-shape splitter on a toy syntax, the two
languages' type rules on the same IR, block scopes, the depth guard, the helpers an
assembled program keeps, and the one wording of the section checks both adapters use."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from revec import ir
from revec.errors import RevecError, SourceLoc
from revec.frontend import load_program
from revec.frontend.assemble import RECURSION_LIMIT, depth_guard, used_helpers
from revec.frontend.rules import TypeRuleError
from revec.frontend.rules.c99 import C99
from revec.frontend.rules.nep50 import NEP50
from revec.frontend.scopes import BlockScopes
from revec.frontend.shape import IfParts, split_task

LOC = SourceLoc("t", 1, 1)
I8, I32, I64 = (ir.Ty(np.dtype(t)) for t in (np.int8, np.int32, np.int64))


# ---------------------------------------------------------------- the shape splitter
# a toy syntax: ("if", test, then, orelse-or-None), ("return",), or a string
def _as_if(s: object) -> IfParts[object, object] | None:
    if isinstance(s, tuple) and s[0] == "if":
        return IfParts(s[1], s[2], s[3])
    return None


def _ends(stmts: object) -> bool:
    return bool(stmts) and stmts[-1] == ("return",)  # type: ignore[index]


def test_shape_early_return_form_takes_the_statements_after_it() -> None:
    body = ["a = 1", ("if", "n < 2", ["reduce", ("return",)], None), "spawn", "spawn"]
    shape = split_task(body, _as_if, _ends)
    assert shape is not None
    assert (shape.prologue, shape.test, shape.inductive, shape.has_else) == (
        ["a = 1"], "n < 2", ["spawn", "spawn"], False)
    assert shape.base == ["reduce", ("return",)]


def test_shape_if_else_must_end_the_function() -> None:
    if_else = ("if", "n < 2", ["reduce"], ["spawn"])
    shape = split_task(["a = 1", if_else], _as_if, _ends)
    assert shape is not None and shape.has_else and shape.inductive == ["spawn"]
    # an if/else followed by statements is prologue, and an if without a return is no test
    assert split_task([if_else, "b = 2"], _as_if, _ends) is None
    assert split_task([("if", "c", ["x"], None), "spawn"], _as_if, _ends) is None


def test_shape_the_first_qualifying_if_is_the_test() -> None:
    first = ("if", "first", ["r", ("return",)], None)
    second = ("if", "second", ["r", ("return",)], None)
    shape = split_task([first, second], _as_if, _ends)
    assert shape is not None and shape.test == "first" and shape.inductive == [second]


# ---------------------------------------------------------------- the type rules
def _var(ty: ir.Ty, name: str = "x") -> ir.Var:
    return ir.Var(LOC, ty, name)


def test_the_languages_promote_differently() -> None:
    a, b = _var(I8, "a"), _var(I8, "b")
    assert NEP50.arith("+", a, b, LOC).ty == I8  # NumPy keeps int8
    assert C99.arith("+", a, b, LOC).ty == I32  # C promotes to int
    weak = ir.Const(LOC, ir.WEAK_INT, 1)
    assert NEP50.arith("+", a, weak, LOC).ty == I8  # NEP 50: a Python int is weak


def test_c_folds_with_truncating_division_and_numpy_with_floor_division() -> None:
    seven, two = ir.Const(LOC, I32, -7), ir.Const(LOC, I32, 2)
    folded = C99.arith("/", seven, two, LOC)
    assert isinstance(folded, ir.Const) and folded.value == -3
    w7, w2 = ir.Const(LOC, ir.WEAK_INT, -7), ir.Const(LOC, ir.WEAK_INT, 2)
    folded = NEP50.arith("//", w7, w2, LOC)
    assert isinstance(folded, ir.Const) and folded.value == -4


def test_index_rules_and_their_messages() -> None:
    flag = _var(ir.BOOL)
    assert C99.index(flag).ty == I64  # _Bool is an integer type in C
    with pytest.raises(TypeRuleError, match="array index must be an integer, not bool"):
        NEP50.index(flag)
    with pytest.raises(TypeRuleError, match="an array index must be an integer"):
        C99.index(_var(ir.Ty(np.dtype(np.float64))))


def test_rule_errors_are_type_rule_errors() -> None:
    f = _var(ir.Ty(np.dtype(np.float64)))
    with pytest.raises(TypeRuleError, match="'%' needs integer operands"):
        C99.arith("%", f, _var(I32), LOC)
    with pytest.raises(TypeRuleError):
        NEP50.unary("~", f, LOC)


# ---------------------------------------------------------------- block scopes
def test_block_scopes_give_fresh_ir_names() -> None:
    scopes = BlockScopes(taken=lambda n: n == "helper")
    assert scopes.declare("x") == "x"
    scopes.open()
    assert not scopes.in_block("x") and scopes.declare("x") == "x_2"
    assert scopes.lookup("x") == "x_2"
    assert scopes.declare("range") == "range_c"  # reserved by the generated Python
    assert scopes.declare("helper") == "helper_2"  # a function of the program
    scopes.close()
    assert scopes.lookup("x") == "x" and scopes.lookup("range") is None


# ---------------------------------------------------------------- depth guard
def test_depth_guard_raises_the_limit_and_locates_recursion_errors() -> None:
    old = sys.getrecursionlimit()
    with depth_guard("prog.py", "too deep"):
        assert sys.getrecursionlimit() >= RECURSION_LIMIT
    assert sys.getrecursionlimit() == old
    with pytest.raises(RevecError) as info, depth_guard("prog.py", "too deep"):
        raise RecursionError
    assert info.value.message == "too deep"
    assert info.value.loc == SourceLoc("prog.py", 1, 1)
    assert sys.getrecursionlimit() == old


# ---------------------------------------------------------------- assembly
def test_used_helpers_keeps_what_the_tasks_reach_in_order() -> None:
    def helper(name: str, calls: str | None) -> ir.HelperDef:
        body: tuple[ir.Stmt, ...] = ()
        if calls is not None:
            body = (ir.Return(LOC, (ir.Call(LOC, I64, calls, ()),)),)
        return ir.HelperDef(name, (), {}, body, (I64,), LOC)

    helpers = {"leaf": helper("leaf", None), "stale": helper("stale", "leaf"),
               "mid": helper("mid", "leaf")}
    call = ir.Call(LOC, I64, "mid", ())
    task = ir.TaskDef("t", (), {}, ir.Const(LOC, ir.BOOL, True), (ir.ExprStmt(LOC, call),),
                      (), 0, LOC)
    assert list(used_helpers({"t": task}, helpers)) == ["leaf", "mid"]


# ---------------------------------------------------------------- one wording, two spellings
@pytest.mark.parametrize("suffix, program, message", [
    (".py", "import numpy as np\nfrom revec import task, spawn, reduce, Reducer\n"
            "count = Reducer(np.int64, 'sum')\n\n@task\ndef f(n: np.int64):\n"
            "    spawn(f, n - 1)\n    if n < 2:\n        reduce(count, 1)\n"
            "    else:\n        spawn(f, n - 1)\n",
     "spawn before the is-base test: the prologue (statements before 'if <is-base>:') "
     "cannot spawn"),
    (".c", "void f(long n) {\n  cilk_spawn f(n - 1);\n  if (n < 2) return;\n"
           "  cilk_spawn f(n - 1);\n}\n",
     "cilk_spawn before the is-base test: the prologue (statements before "
     "'if (<is-base>)') cannot spawn"),
])
def test_section_checks_are_worded_once(tmp_path: Path, suffix: str, program: str,
                                        message: str) -> None:
    path = tmp_path / f"prog{suffix}"
    path.write_text(program)
    with pytest.raises(RevecError) as info:
        load_program(path)
    assert info.value.message == message


def test_depth_guard_covers_a_live_module(tmp_path: Path) -> None:
    """A task of a live module (``task.run`` from a script or a notebook cell) whose
    helpers call each other thousands deep is the located 'too deep' error, as it is
    for a file, not a RecursionError traceback."""
    import types

    from revec.frontend import load_program_source

    n = 6000
    lines = ["import numpy as np", "from revec import task, spawn, reduce, Reducer",
             "c = Reducer(np.int64, 'sum')", "def h0(x):", "    return x"]
    for i in range(1, n):
        lines += [f"def h{i}(x):", f"    return h{i - 1}(x)"]
    lines += ["@task", "def f(x: np.int64):", "    if x < 1:", f"        reduce(c, h{n - 1}(x))",
              "    else:", "        spawn(f, x - 1)"]
    text = "\n".join(lines) + "\n"
    path = tmp_path / "deep_live.py"
    module = types.ModuleType("deep_live")
    exec(compile(text, str(path), "exec"), module.__dict__)
    with pytest.raises(RevecError) as info:
        load_program_source(str(path), text, module)
    assert "nests too deeply" in info.value.message
    assert info.value.loc is not None and info.value.loc.line == 1

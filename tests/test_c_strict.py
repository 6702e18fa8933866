"""The generated C compiles warning-free under gcc -Wall -Wextra -Wshadow -Werror, and its
``#line`` directives map user code to the program's lines.

Every module is compiled as revec.toolchain.cbuild builds it: wrapped by cffi (its
prologue with Python.h first, its call glue after), with the back end's flags and
-march=native (the module's intrinsics paths are the CPU's), at -O0 (-c, not
-fsyntax-only: unused static functions are only reported when code is generated), once
without -DRV_SCALAR_SPLIT and with -fopenmp (the OpenMP peer) and once with
-DRV_SCALAR_SPLIT.  The programs: the eight benchmarks, their natural twins, the Cilk
corpus, tests/programs and a fixed, derandomized sample of each differential generator.
The shared driver object (csrc/driver.c) is compiled the way cbuild builds it, at -O2.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sysconfig
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from revec.backends.c_codegen import generate_c_module
from revec.backends.c_driver import CDEF, DRIVER_OBJECT
from revec.backends.c_runner import C_FLAGS
from revec.frontend import load_program
from revec.toolchain import cbuild

ROOT = Path(__file__).resolve().parent.parent
STRICT = ("-Wall", "-Wextra", "-Wshadow", "-Werror")
VARIANTS = (("-fopenmp",), ("-DRV_SCALAR_SPLIT",))
GENERATED = 8  # programs drawn from each differential generator


def _compiler() -> list[str] | None:
    cc = cbuild.find_compiler()
    if cc is None or "Free Software Foundation" not in cbuild.compiler_identity(cc):
        return None
    return cc


CC = _compiler()
_EMIT_LOCK = threading.Lock()
pytestmark = pytest.mark.skipif(CC is None, reason="needs gcc (cbuild's compiler)")


def _programs() -> list[Path]:
    bench = ROOT / "benchmarks"
    out = [p for p in sorted(bench.glob("*.py")) if p.name != "treebuild.py"]
    out += sorted((bench / "natural").glob("*.py")) + sorted((bench / "cilk").glob("*.c"))
    return out + sorted((ROOT / "tests" / "programs").glob("*.py"))


def _modules(paths: list[Path]) -> Iterator[tuple[str, str]]:
    """(name, C module) of every task of every program."""
    for path in paths:
        program = load_program(path)
        for task in program.tasks:
            yield f"{path}:{task}", generate_c_module(program, task)


def _compile(name: str, source: str, folder: Path, variants: tuple[tuple[str, ...], ...],
             opt: str = "-O0") -> list[str]:
    """Compile ``source`` wrapped by cffi as cbuild does, once per variant; the
    compiler's complaints (empty: warning-free)."""
    import cffi

    assert CC is not None
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source("_revec_strict", source + cbuild.GLUE_PRAGMA)
    src = folder / (re.sub(r"\W", "_", name) + ".c")
    # cffi prints "generating ...": redirected under a lock, since two threads each
    # swapping sys.stdout could leave the redirection in place
    with _EMIT_LOCK, contextlib.redirect_stdout(io.StringIO()):
        ffi.emit_c_code(str(src))
    paths = sysconfig.get_paths()
    incs = sorted({f"-I{paths['include']}", f"-I{paths['platinclude']}"})
    fixed = [f for f in cbuild.FIXED_FLAGS if f != "-shared"]
    problems = []
    for variant in variants:
        cmd = [*CC, "-c", "-o", os.devnull, opt, "-march=native", *fixed, *C_FLAGS,
               "-pthread", *STRICT, *variant, *incs, str(src)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or r.stderr.strip():
            program = Path(name.rsplit(":", 1)[0])
            text = program.read_text() if program.is_file() else ""
            problems.append(f"{name} {' '.join(variant)}:\n{r.stderr[:3000]}\n"
                            f"the program:\n{text}")
    return problems


def _check_all(modules: list[tuple[str, str]],
               variants: tuple[tuple[str, ...], ...] = VARIANTS, opt: str = "-O0") -> None:
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        found = pool.map(lambda m: _compile(m[0], m[1], Path(tmp), variants, opt), modules)
        problems = [p for ps in found for p in ps]
    assert not problems, "\n".join(problems)


def test_benchmark_modules_are_warning_free() -> None:
    """The benchmarks, their natural twins, the Cilk corpus and tests/programs."""
    _check_all(list(_modules(_programs())))


def test_benchmark_modules_are_warning_free_as_built() -> None:
    """The suite's benchmarks at the optimization revec builds them with (-O3): gcc's flow
    warnings (-Wmaybe-uninitialized) appear only when it optimizes."""
    from revec.bench.presets import BENCHMARKS

    bench = ROOT / "benchmarks"
    paths = [p for p in sorted(bench.glob("*.py")) if p.name != "treebuild.py"]
    assert sorted(p.stem for p in paths) == sorted(BENCHMARKS)
    _check_all(list(_modules(paths)), ((),), "-O3")


@pytest.mark.parametrize("generator", ["gen", "ret", "cilk"])
def test_generated_modules_are_warning_free(generator: str) -> None:
    """A fixed sample of each differential generator's programs (the fingerprints'
    sample, tests/support/fingerprint.py)."""
    from tests.support import fingerprint

    with tempfile.TemporaryDirectory() as tmp:
        paths = [p for p in fingerprint._generated(GENERATED, Path(tmp))
                 if p.name.startswith(generator)]
        assert len(paths) == GENERATED
        _check_all(list(_modules(paths)), VARIANTS[:1])


@pytest.mark.slow
@pytest.mark.parametrize("generator", ["gen", "ret", "cilk"])
def test_generated_modules_are_warning_free_as_built(generator: str) -> None:
    """A larger sample of each generator's programs (40), at -O3 as revec builds them
    (about 25 s of gcc per generator: pytest -m slow)."""
    from tests.support import fingerprint

    with tempfile.TemporaryDirectory() as tmp:
        paths = [p for p in fingerprint._generated(40, Path(tmp))
                 if p.name.startswith(generator)]
        _check_all(list(_modules(paths)), ((),), "-O3")


def test_driver_object_is_warning_free(tmp_path: Path) -> None:
    """csrc/driver.c (driver.h inlined) as cbuild compiles the shared object."""
    assert CC is not None
    name, text = DRIVER_OBJECT
    src = tmp_path / f"{name}.c"
    src.write_text(text)
    fixed = [f for f in cbuild.FIXED_FLAGS if f != "-shared"]
    cmd = [*CC, "-c", "-o", os.devnull, "-O2", "-march=native", *fixed, *C_FLAGS,
           "-pthread", *STRICT, str(src)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr[:3000]


# ---------------------------------------------------------------- #line directives
def _numbered(text: str, marker: str, file: str) -> list[tuple[str, int, str]]:
    """(file, line, text) of each line of ``text`` that is not a line marker (``marker``:
    its line number and file name as the first two groups), numbered by the markers."""
    out = []
    line = 1
    for raw in text.split("\n"):
        m = re.fullmatch(marker, raw)
        if m:
            file, line = m.group(2), int(m.group(1))
            continue
        out.append((file, line, raw))
        line += 1
    return out


def line_map(text: str) -> list[tuple[str, int, str]]:
    """(file, line, text) of each line of C ``text`` that is not a ``#line`` directive,
    numbered as the preprocessor numbers it."""
    return _numbered(text, r'#line (\d+) "(.*)"', "<text>")


def gcc_line_map(text: str, tmp: Path) -> list[tuple[str, int, str]]:
    """The same, as gcc's preprocessor numbers the lines (its -E linemarkers; with
    -fopenmp, which compiles the OpenMP peer)."""
    assert CC is not None
    src = tmp / "module.c"
    src.write_text(text)
    r = subprocess.run([*CC, "-E", "-march=native", "-fopenmp", str(src)], capture_output=True,
                       text=True, timeout=600, check=True)
    return _numbered(r.stdout, r'# (\d+) "(.*?)"( \d+)*', "")


def _where(lines: list[tuple[str, int, str]], needle: str) -> list[tuple[str, int]]:
    return [(f, n) for f, n, text in lines if needle in text]


def test_line_directives_name_the_user_lines(tmp_path: Path) -> None:
    """fib's module: the C of its statements (kernel, plain recursive C, OpenMP peer) is
    numbered as their lines of fib.py; the generated code around them as the module's own
    lines, under its own name; gcc's preprocessor reads the directives the same way."""
    text = generate_c_module(load_program(ROOT / "benchmarks" / "fib.py"), "fib")
    src = (ROOT / "benchmarks" / "fib.py").read_text().splitlines()

    def line_of(code: str) -> int:
        return 1 + next(i for i, s in enumerate(src) if s.strip() == code)

    is_base, red = line_of("if n < 2:"), line_of("reduce(count, n)")
    spawn1, spawn2 = line_of("spawn(fib, n - 1)"), line_of("spawn(fib, n - 2)")
    ours = line_map(text)
    for lines in (ours, gcc_line_map(text, tmp_path)):
        # the kernel: the count's and the split's is-base test, the narrow sum (the
        # base case), and the one-pass leaf-inlining lane code: the children's arguments
        # at their spawns, the inlined leaves' bytes at the reduction
        assert set(_where(lines, "m[u] = (")) == {("fib.py", is_base)}
        assert set(_where(lines, "part += bp_n[j];")) == {("fib.py", red)}
        assert set(_where(lines, "a0_n[u] = ")) == {("fib.py", spawn1)}
        assert set(_where(lines, "a1_n[u] = ")) == {("fib.py", spawn2)}
        assert set(_where(lines, "[u] = _c0 ? (int8_t)(v__lf_n)")) == {("fib.py", red)}
        assert set(_where(lines, "[u] = _c1 ? (int8_t)(v__lf_n)")) == {("fib.py", red)}
        # the plain recursive C and the OpenMP peer: the test, the reduction, the spawns
        assert set(_where(lines, "acc_count = (int64_t)")) == {("fib.py", red)}
        assert ("fib.py", spawn1) in _where(lines, "seq_fib(((int8_t)")
        assert ("fib.py", spawn2) in _where(lines, "seq_fib(((int8_t)")
        assert len(_where(lines, "if ((v_n < ")) == 2  # seq_fib and omp_fib
        assert set(_where(lines, "if ((v_n < ")) == {("fib.py", is_base)}
    # generated code: its own line of the module, named as revec transform names it
    physical = text.split("\n")
    for needle in ("static int64_t kernel(", "void rvm_move(int64_t src, int64_t dst, "
                   "int64_t cnt) {", "int revec_run_from(", "void revec_entries(",
                   "        nb += c; ni += 32 - c;"):
        (where,) = _where(ours, needle)
        assert where == ("fib_fib.c", 1 + physical.index(next(
            p for p in physical if needle in p))), needle
    # every directive names fib.py or the module, and user lines are fib.py's
    files = {f for f, _, _ in ours}
    assert files == {"fib.py", "fib_fib.c"}
    assert max(n for f, n, _ in ours if f == "fib.py") <= len(src)


def test_comparisons_decided_by_the_operands_bits() -> None:
    """A bit of D that ``a`` can never have decides ``a == D`` (gcc -Wtautological-compare
    reasons the same way after folding ``2 * x & 3`` to ``2 * x & 2``); a bit ``a`` may
    have leaves it open."""
    import numpy as np

    from revec import ir
    from revec.emit.cexpr import decided, maybe_ones
    from revec.errors import SourceLoc

    loc = SourceLoc("prog.py", 1, 1)
    u16 = ir.Ty(np.dtype(np.uint16))

    def c(v: int) -> ir.Const:
        return ir.Const(loc, u16, v)

    x = ir.Var(loc, u16, "x")
    twice = ir.BinOp(loc, u16, "*", c(2), x)
    masked = ir.BinOp(loc, u16, "&", twice, c(3))
    assert maybe_ones(twice) == 0xFFFE and maybe_ones(masked) == 2
    assert decided("==", masked, c(3), "a", "b") is False
    assert decided("!=", masked, c(3), "a", "b") is True
    assert decided("==", masked, c(2), "a", "b") is None
    assert decided("==", ir.BinOp(loc, u16, "<<", x, c(4)), c(8), "a", "b") is False
    assert decided("==", ir.BinOp(loc, u16, "|", x, c(5)), c(4), "a", "b") is False


def test_comparisons_decided_by_the_operands_values() -> None:
    """Value ranges gcc also sees (-Wtype-limits): x ^ x and x - x are 0, a conditional
    expression holds one of its branches' values, maximum/minimum stay within their
    arguments', a non-negative value shifted right by any amount only shrinks."""
    import numpy as np

    from revec import ir
    from revec.emit.cexpr import decided, value_ranges
    from revec.errors import SourceLoc

    loc, loc2 = SourceLoc("prog.py", 1, 1), SourceLoc("prog.py", 1, 9)
    u16, i32 = ir.Ty(np.dtype(np.uint16)), ir.Ty(np.dtype(np.int32))
    x, x2 = ir.Var(loc, u16, "x"), ir.Var(loc2, u16, "x")
    zero = ir.Const(loc, u16, 0)
    assert value_ranges(ir.BinOp(loc, u16, "^", x, x2)) == [(0, 0)]
    assert decided("<", x, ir.BinOp(loc, u16, "^", x, x2), "a", "b") is False
    assert value_ranges(ir.BinOp(loc, u16, "^", x, ir.Var(loc, u16, "y"))) == [(0, 65535)]
    cond = ir.Compare(loc, ir.BOOL, "<", x, zero)
    pick = ir.IfExp(loc, i32, cond, ir.Const(loc, i32, -7), ir.Const(loc, i32, 40))
    assert value_ranges(pick) == [(-7, -7), (40, 40)]
    assert decided("==", pick, ir.Const(loc, i32, 0), "a", "b") is False
    d = ir.Var(loc, i32, "d")
    low = ir.MathCall(loc, i32, "minimum", (ir.Const(loc, i32, 8), d))
    assert decided(">", ir.Const(loc, i32, 38), low, "a", "b") is True
    shifted = ir.BinOp(loc, i32, ">>", ir.Cast(loc, i32, x), d)
    assert decided("==", shifted, ir.Const(loc, i32, 70000), "a", "b") is False

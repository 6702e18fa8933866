"""Golden files of what revec derives from three benchmarks (fib, nqueens, graphcol): the
kernel plan for each back end and the generated numba and C modules.  A change to a plan or to
generated code shows up as a diff of these files in review.

Regenerate them all with one command (then read the diff)::

    pytest tests/test_goldens.py --update-golden
"""

from __future__ import annotations

from pathlib import Path

import pytest

from revec.api import get_program
from revec.backends.c_codegen import generate_c_module
from revec.backends.numba_codegen import generate_numba_module
from revec.transforms import kernel_plan as kp

HERE = Path(__file__).parent
ROOT = HERE.parent
GOLDEN = HERE / "golden"
NAMES = ("fib", "nqueens", "graphcol")


def check(request: pytest.FixtureRequest, name: str, text: str) -> None:
    golden = GOLDEN / name
    if request.config.getoption("--update-golden"):
        golden.write_text(text)
    assert golden.is_file(), f"no golden file {golden}: run pytest --update-golden"
    assert text == golden.read_text(), \
        f"{name} changed: run `pytest tests/test_goldens.py --update-golden` and review the diff"


@pytest.mark.parametrize("target", sorted(kp.TARGETS))
@pytest.mark.parametrize("name", NAMES)
def test_plan(name: str, target: str, request: pytest.FixtureRequest) -> None:
    program = get_program(ROOT / "benchmarks" / f"{name}.py")
    plan = kp.build_plan(program, name, target=target)
    # (the C target's plans keep their first names)
    check(request, f"{name}_plan.txt" if target == "c" else f"{name}_plan_{target}.txt",
          plan.render())


@pytest.mark.parametrize("name", NAMES)
def test_numba_module(name: str, request: pytest.FixtureRequest,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    # the compaction step variant is chosen per CPU; the golden modules pin the generic
    # one (llvm.masked.compressstore: compiles and runs on any CPU)
    monkeypatch.setenv("REVEC_NUMBA_VECTOR", "avx512")
    program = get_program(ROOT / "benchmarks" / f"{name}.py")
    check(request, f"{name}_bench_numba.py", generate_numba_module(program, name))


@pytest.mark.parametrize("name", NAMES)
def test_c_module(name: str, request: pytest.FixtureRequest) -> None:
    """The C module: the same text on every CPU (the preprocessor picks the compaction
    steps where it is compiled)."""
    program = get_program(ROOT / "benchmarks" / f"{name}.py")
    check(request, f"{name}_bench.c", generate_c_module(program, name))


def test_fib_module(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/programs/fib.py's module, which tests/test_deep_and_golden.py also imports
    and runs in every schedule."""
    monkeypatch.setenv("REVEC_NUMBA_VECTOR", "avx512")
    program = get_program(HERE / "programs" / "fib.py")
    check(request, "fib_numba.py", generate_numba_module(program, "fib"))

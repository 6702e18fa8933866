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
from revec.backends.c_codegen import SPLIT_STEPS, generate_c_module
from revec.backends.c_driver import RUNTIME_PRELUDE
from revec.backends.numba_codegen import generate_numba_module
from revec.emit.cexpr import C_PRELUDE
from revec.runtime.compaction import c_source
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


def shared_c_parts() -> dict[str, str]:
    """The texts every C module carries unchanged (the C prelude, the driver's interface,
    the compaction steps), by name: kept once in their own files, not in each golden."""
    return {"C_PRELUDE": C_PRELUDE, "RUNTIME_PRELUDE": RUNTIME_PRELUDE,
            "compaction_c_source()": c_source(), "SPLIT_STEPS": SPLIT_STEPS}


@pytest.mark.parametrize("name", NAMES)
def test_c_module(name: str, request: pytest.FixtureRequest) -> None:
    """The C module (the same text on every CPU: the preprocessor picks the compaction
    steps where it is compiled), each shared part replaced by a line naming it."""
    program = get_program(ROOT / "benchmarks" / f"{name}.py")
    text = generate_c_module(program, name)
    for part, shared in shared_c_parts().items():
        assert text.count(shared) == 1, f"the module does not carry {part} once"
        text = text.replace(shared, f"/* {part}: shared by every module (not kept here) */")
    check(request, f"{name}_bench.c", text)


def test_fib_module(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/programs/fib.py's module, which tests/test_deep_and_golden.py also imports
    and runs in every schedule."""
    monkeypatch.setenv("REVEC_NUMBA_VECTOR", "avx512")
    program = get_program(HERE / "programs" / "fib.py")
    check(request, "fib_numba.py", generate_numba_module(program, "fib"))

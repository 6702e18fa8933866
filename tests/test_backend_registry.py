"""The back-end registry (revec/backends/registry.py): names, lookup, ``auto``, and a new
back end as one module plus one registration line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from revec import api
from revec.backends import registry
from revec.errors import RevecError

ROOT = Path(__file__).resolve().parent.parent
FIB = ROOT / "benchmarks" / "fib.py"


@pytest.fixture
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """MODULES may be changed by the test; the lookups cached meanwhile are dropped."""
    monkeypatch.setattr(registry, "MODULES", dict(registry.MODULES))
    registry.get.cache_clear()
    yield
    registry.get.cache_clear()


def test_names_and_backends() -> None:
    names = registry.names()
    assert names[:2] == ("c", "numba")
    has_numpy = (ROOT / "revec" / "backends" / "numpy_backend.py").exists()
    assert ("numpy" in names) == has_numpy
    assert registry.choices() == ("auto", *names)
    assert api.BACKENDS == registry.choices()
    for name in names:
        b = registry.get(name)
        assert b.name == name and b.suffix.startswith(".")
        assert registry.resolve(name) is b
    assert registry.get("c").suffix == ".c" and registry.get("numba").suffix == ".py"


def test_unknown_names_are_user_errors() -> None:
    with pytest.raises(RevecError, match=r"unknown back end 'fortran'; expected one of c, "
                                         r"numba"):
        registry.get("fortran")
    with pytest.raises(RevecError, match=r"expected one of auto, c, numba"):
        registry.resolve("fortran")
    with pytest.raises(RevecError, match="unknown back end 'auto'"):
        registry.get("auto")  # auto is resolved, not got
    with pytest.raises(RevecError, match="unknown back end 'fortran'"):
        api.resolve_backend("fortran")


def test_auto_is_c_when_it_works_else_numba_never_numpy(
        clean_registry: None, monkeypatch: pytest.MonkeyPatch) -> None:
    want = "c" if registry.get("c").unavailable() is None else "numba"
    assert registry.resolve("auto").name == want == api.resolve_backend("auto")
    c, numba = registry.get("c"), registry.get("numba")
    monkeypatch.setattr(type(c), "unavailable", lambda self: "no compiler (test)")
    assert registry.resolve("auto") is numba
    assert api.c_compiler_works() is False
    monkeypatch.setattr(type(numba), "unavailable", lambda self: "no numba (test)")
    with pytest.raises(RevecError, match=r"no back end is available on this machine "
                                         r"\(c: no compiler \(test\); numba: no numba"):
        registry.resolve("auto")  # not numpy, though it would run


def test_a_missing_module_is_not_a_back_end(clean_registry: None) -> None:
    registry.MODULES["ghost"] = "revec.backends.no_such_back_end"
    assert "ghost" not in registry.names()
    with pytest.raises(RevecError, match="unknown back end 'ghost'"):
        registry.get("ghost")


def test_generate_is_the_back_ends_generator() -> None:
    """``revec transform`` writes what the code generators write (unchanged text)."""
    from revec.backends.c_codegen import generate_c_module
    from revec.backends.numba_codegen import generate_numba_module
    from revec.cli.transform_cmd import generate

    program = api.get_program(FIB)
    assert registry.get("numba").generate(program, "fib") == \
        generate_numba_module(program, "fib")
    assert registry.get("numba").generate(program, "fib", "scalar") == \
        generate_numba_module(program, "fib", "scalar")
    assert registry.get("c").generate(program, "fib") == generate_c_module(program, "fib")
    assert generate(program, "fib", "c") == (".c", generate_c_module(program, "fib"))


def test_a_new_back_end_is_one_module_and_one_line(
        clean_registry: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A back end registered by one line is usable by the API and the command line."""
    (tmp_path / "revec_test_echo_backend.py").write_text(textwrap.dedent('''
        from revec.backends import registry

        class Echo:
            """Generates a comment; builds by the numba back end, and counts builds."""
            name = "echo"
            suffix = ".txt"
            target = "numba"  # the kernel plans it prints (it builds by numba)
            builds = 0

            def unavailable(self):
                return None

            def generate(self, program, task, compaction=None):
                return f"# echo: {task}\\n"

            def build(self, program, task, compaction=None):
                Echo.builds += 1
                return registry.get("numba").build(program, task, compaction)

        BACKEND = Echo()
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.MODULES["echo"] = "revec_test_echo_backend"   # the one line
    assert registry.names()[-1] == "echo"
    res = api.run_program(FIB, "fib", (12,), backend="echo", block_size=16)
    assert res.backend == "echo" and res.reducers == {"count": 144}
    assert registry.get("echo").builds == 1  # type: ignore[attr-defined]

    from revec.cli import main

    assert main(["transform", str(FIB), "--backend", "echo"]) == 0
    assert main(["run", str(FIB), "fib", "10", "--backend", "echo", "--json"]) == 0


def test_listing_the_back_ends_imports_no_compiler() -> None:
    code = ("import sys; from revec.backends import registry; registry.names(); "
            "[registry.get(n) for n in ('c', 'numba')]; "
            "print(sorted(m for m in ('numba', 'cffi', 'libcst', 'revec.backends.c_codegen', "
            "'revec.backends.numba_codegen') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.strip()
    assert out == "[]", out

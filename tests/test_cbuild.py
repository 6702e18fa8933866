"""The cffi build cache: reuse across processes without a compiler run, locking, errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from revec.errors import RevecError
from revec.toolchain import cbuild

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

CDEF = "int add3(int a, int b, int c);"


def _source(tag: int) -> str:
    return f"int add3(int a, int b, int c) {{ return a + b + c + {tag}; }}\n"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("REVEC_CACHE_DIR", str(d))
    monkeypatch.delenv("REVEC_CFLAGS", raising=False)
    monkeypatch.delenv("CC", raising=False)
    cbuild.clear_memo()
    return d


@pytest.fixture
def logging_cc(tmp_path: Path) -> tuple[Path, Path]:
    """A compiler wrapper that appends each invocation to a log, then runs gcc."""
    log = tmp_path / "cc.log"
    script = tmp_path / "logcc"
    script.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {shutil.which("gcc")} "$@"\n')
    script.chmod(0o755)
    return script, log


def _run_child(cache: Path, cc: str, tag: int, cflags: str | None = None) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(f"""
        from revec.toolchain import cbuild
        ffi, lib = cbuild.load_c_module("child", {CDEF!r}, {_source(tag)!r})
        print(lib.add3(1, 2, 3), cbuild.stats.compiles, cbuild.stats.version_queries)
    """)
    env = {**os.environ, "REVEC_CACHE_DIR": str(cache), "CC": cc}
    env.pop("REVEC_CFLAGS", None)
    if cflags is not None:
        env["REVEC_CFLAGS"] = cflags
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)


def _log_lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_build_and_memo(cache: Path) -> None:
    before = cbuild.stats.compiles
    ffi, lib = cbuild.load_c_module("memo", CDEF, _source(10))
    assert lib.add3(1, 2, 3) == 16
    assert cbuild.stats.compiles == before + 1
    ffi2, lib2 = cbuild.load_c_module("memo", CDEF, _source(10))
    assert lib2 is lib and cbuild.stats.compiles == before + 1
    # a different source is a different module
    _, lib3 = cbuild.load_c_module("memo", CDEF, _source(11))
    assert lib3.add3(1, 2, 3) == 17 and cbuild.stats.compiles == before + 2
    assert len(list((cache / "cmod").glob("_revec_memo_*.so"))) == 2


def test_second_process_runs_no_compiler(cache: Path, logging_cc: tuple[Path, Path]) -> None:
    script, log = logging_cc
    first = _run_child(cache, str(script), 20)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["26", "1", "1"]
    calls = _log_lines(log)
    assert any("--version" in c for c in calls) and any("-shared" in c for c in calls)
    # second process, same source and compiler: nothing at all is run
    second = _run_child(cache, str(script), 20)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["26", "0", "0"]
    assert _log_lines(log) == calls
    # even with no compiler at all, the cached build is used
    third = _run_child(cache, "/nonexistent/bin/cc", 20)
    assert third.returncode == 0, third.stderr
    assert third.stdout.split() == ["26", "0", "0"]
    # other flags are another key: the compiler runs again
    fourth = _run_child(cache, str(script), 20, cflags="-O1")
    assert fourth.returncode == 0, fourth.stderr
    assert fourth.stdout.split() == ["26", "1", "0"]
    assert sum("-O1" in c for c in _log_lines(log)) == 1


def test_concurrent_builds_compile_once(cache: Path, logging_cc: tuple[Path, Path]) -> None:
    script, log = logging_cc
    code = textwrap.dedent(f"""
        from revec.toolchain import cbuild
        ffi, lib = cbuild.load_c_module("race", {CDEF!r}, {_source(30)!r})
        print(lib.add3(0, 0, 0))
    """)
    env = {**os.environ, "REVEC_CACHE_DIR": str(cache), "CC": str(script)}
    env.pop("REVEC_CFLAGS", None)
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert all(o[0].strip() == "30" for o in outs)
    assert sum("-shared" in c for c in _log_lines(log)) == 1
    # no temporary build directories are left behind
    assert not [p for p in (cache / "cmod").iterdir() if p.name.startswith(".build-")]


def test_no_compiler_is_a_clear_error(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    with pytest.raises(RevecError) as info:
        cbuild.load_c_module("nocc", CDEF, _source(40))
    msg = str(info.value)
    assert "no C compiler found" in msg and "/nonexistent/bin/cc" in msg
    assert "gcc" in msg and "CC" in msg


def test_compile_error_carries_compiler_message(cache: Path) -> None:
    with pytest.raises(RevecError) as info:
        cbuild.load_c_module("bad", CDEF, "int add3(int a, int b, int c) { return a + zz; }")
    msg = str(info.value)
    assert "compilation" in msg and "zz" in msg and "undeclared" in msg
    assert not [p for p in (cache / "cmod").iterdir() if p.name.startswith(".build-")]


def test_bad_cdef_is_an_error(cache: Path) -> None:
    with pytest.raises(RevecError, match="cannot parse"):
        cbuild.load_c_module("badcdef", "int f(int a", "int f(int a) { return a; }")


def test_flags_and_hooks(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr(cbuild, "compile_hooks", [seen.append])
    cbuild.load_c_module("flags", CDEF, _source(50))
    assert "-O3" in seen[-1] and "-march=native" in seen[-1] and "-fwrapv" in seen[-1]
    monkeypatch.setenv("REVEC_CFLAGS", "-O2 -DX=1")
    _, lib = cbuild.load_c_module("flags", CDEF, _source(50))
    assert "-O2" in seen[-1] and "-DX=1" in seen[-1] and "-O3" not in seen[-1]
    _, lib = cbuild.load_c_module("flags", CDEF, _source(50), cflags=["-O0"],
                                  extra_compile_args=["-DY=2"])
    assert "-O0" in seen[-1] and "-DY=2" in seen[-1]
    assert "-O2" not in seen[-1]
    assert len(seen) == 3 and lib.add3(1, 1, 1) == 53
    assert cbuild.effective_cflags(None) == ["-O2", "-DX=1"]


def _gcc_used_pch(cmd: list[str], src: Path) -> str:
    """gcc's -H report of a module build's command on a copy of its source."""
    args = [a for a in cmd if not a.endswith(".c")]
    args = args[:args.index("-o")] + [str(src), "-fsyntax-only", "-H", "-Winvalid-pch"]
    return subprocess.run(args, capture_output=True, text=True, timeout=120).stderr


@pytest.mark.skipif("Free Software Foundation" not in subprocess.run(
    [shutil.which("gcc") or "gcc", "--version"], capture_output=True, text=True).stdout,
    reason="precompiled headers are used with gcc only")
def test_precompiled_system_headers(cache: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[tuple[list[str], Path]] = []

    def hook(cmd: list[str]) -> None:  # keep the source: the build directory is removed
        copy = tmp_path / f"src{len(seen)}.c"
        shutil.copy(next(a for a in cmd if a.endswith(".c")), copy)
        seen.append((list(cmd), copy))

    monkeypatch.setattr(cbuild, "compile_hooks", [hook])
    monkeypatch.delenv("REVEC_PCH", raising=False)
    # a process's first module is built without (building the header would only slow a
    # lone `revec run` down), its second with the precompiled header
    _, lib = cbuild.load_c_module("pch", CDEF, _source(60))
    assert "-include" not in seen[-1][0] and lib.add3(1, 1, 1) == 63
    _, lib = cbuild.load_c_module("pch", CDEF, _source(61))
    cmd, src = seen[-1]
    header = Path(cmd[cmd.index("-include") + 1])
    gch = header.with_name(header.name + ".gch")
    assert header.parent.parent == cache / "pch" and gch.stat().st_size > 0
    assert lib.add3(1, 1, 1) == 64
    assert f"! {gch}" in _gcc_used_pch(cmd, src)  # gcc really reads the .gch
    # a damaged header cache is reported and rebuilt, and the module still builds
    size = gch.stat().st_size
    with open(gch, "r+b") as fh:
        fh.truncate(size // 3)
    cbuild.clear_memo()
    _, lib = cbuild.load_c_module("pch", CDEF, _source(62))
    _, lib = cbuild.load_c_module("pch", CDEF, _source(63))
    assert "precompiled header" in capsys.readouterr().err
    assert gch.stat().st_size > size // 2 and lib.add3(1, 1, 1) == 66  # rebuilt whole
    assert f"! {gch}" in _gcc_used_pch(*seen[-1])
    # REVEC_PCH=0 turns it off
    monkeypatch.setenv("REVEC_PCH", "0")
    cbuild.clear_memo()
    cbuild.load_c_module("pch", CDEF, _source(64))
    cbuild.load_c_module("pch", CDEF, _source(65))
    assert "-include" not in seen[-1][0]


OBJ_CDEF = "int twice_plus(int a);"
OBJ_HEADER = "__attribute__((visibility(\"hidden\"))) int shared_add(int a, int b);\n"


def _obj_source(tag: int) -> str:
    return f"int shared_add(int a, int b) {{ return a + b + {tag}; }}\n"


def _obj_user(k: int) -> str:
    return OBJ_HEADER + f"int twice_plus(int a) {{ return shared_add(a, a) + {k}; }}\n"


def test_shared_object_built_once_and_linked(cache: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    """Code named in ``objects`` is compiled once and linked into every module naming
    it; a changed object source is a different module; a damaged object is rebuilt."""
    before = cbuild.stats.object_compiles
    obj = [("shared", _obj_source(100))]
    _, lib1 = cbuild.load_c_module("objuser", OBJ_CDEF, _obj_user(1), objects=obj)
    _, lib2 = cbuild.load_c_module("objuser", OBJ_CDEF, _obj_user(2), objects=obj)
    assert (lib1.twice_plus(5), lib2.twice_plus(5)) == (111, 112)
    assert cbuild.stats.object_compiles == before + 1
    objs = list((cache / "cobj").glob("shared-*.o"))
    assert len(objs) == 1
    # the same module text with another object source: rebuilt, linked with the new one
    _, lib3 = cbuild.load_c_module("objuser", OBJ_CDEF, _obj_user(1),
                                   objects=[("shared", _obj_source(200))])
    assert lib3.twice_plus(5) == 211 and cbuild.stats.object_compiles == before + 2
    # a bit-flipped object: reported, rebuilt, and the next module links the good one
    data = bytearray(objs[0].read_bytes())
    data[len(data) // 2] ^= 0xFF
    objs[0].write_bytes(bytes(data))
    cbuild.clear_memo()
    damaged = cbuild.stats.rebuilt_damaged
    _, lib4 = cbuild.load_c_module("objuser", OBJ_CDEF, _obj_user(4), objects=obj)
    assert lib4.twice_plus(5) == 114
    assert cbuild.stats.rebuilt_damaged == damaged + 1
    assert cbuild.stats.object_compiles == before + 3
    assert "damaged" in capsys.readouterr().err


def test_generated_modules_link_the_shared_driver(tmp_path: Path) -> None:
    """The schedule driver is not compiled into each generated module: the module holds
    only the program's hooks, and the driver object defines what they call."""
    from revec.api import get_program
    from revec.backends.c_codegen import generate_c_module
    from revec.backends.c_driver import DRIVER_OBJECT

    root = Path(__file__).resolve().parent.parent
    src = generate_c_module(get_program(root / "benchmarks" / "fib.py"), "fib")
    name, driver = DRIVER_OBJECT
    assert name == "revec_driver"
    for fn in ("static void rv_schedule(", "static int rv_steal(", "static int rv_give(",
               "\nint rv_drive("):  # definitions (driver.h declares rv_drive)
        assert fn in driver and fn not in src
    hook = "\nint64_t rvm_block(int64_t off"  # the kernel's hook: defined by the module
    assert hook in src and hook not in driver
    assert '#include "driver.h"' not in driver  # inlined: one self-contained text

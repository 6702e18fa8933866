"""A uniform way to run the baselines of ``benchmarks/baselines/``.

``run_baseline(name, kind, args)`` runs benchmark ``name``'s baseline ``kind`` (``python``:
CPython recursion on plain ints; ``numba``: ``@njit`` recursion; ``c``: plain recursive C
built with ``gcc -O3 -march=native`` by :func:`revec.toolchain.cbuild.load_c_module`) on the
root arguments ``args`` (by parameter name, as in :mod:`revec.bench.presets`) and returns
``(answers, seconds)``: the reducer values and the time of the recursion alone (loading,
compiling and input set-up are excluded; the numba function is compiled before the timed
call by a first call on the same arguments unless ``warm=False``).
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import time
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any

from revec.bench.presets import BENCH_DIR, check_name
from revec.errors import RevecError

KINDS: tuple[str, ...] = ("python", "numba", "c")
BASELINE_DIR = BENCH_DIR / "baselines"
# CPython recursion on deep trees (UTS T3: depth 1572, T3L: 17844) needs a deep stack.
_STACK_BYTES = 1 << 29
_RECURSION_LIMIT = 200_000


@cache
def baseline_module(name: str) -> ModuleType:
    """``benchmarks/baselines/NAME.py``, loaded once."""
    check_name(name)
    path = BASELINE_DIR / f"{name}.py"
    modname = f"revec_baseline_{name}"
    spec = importlib.util.spec_from_file_location(modname, path)
    if spec is None or spec.loader is None:
        raise RevecError(f"cannot load the baseline {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    return module


@cache
def c_library(name: str) -> tuple[Any, Any]:
    """``(ffi, lib)`` of ``benchmarks/baselines/NAME.c`` (built once per machine)."""
    from revec.toolchain.cbuild import load_c_module

    module = baseline_module(name)
    source = (BASELINE_DIR / f"{name}.c").read_text()
    prefix = getattr(module, "C_PREFIX", "")
    # a baseline module may add build flags (C_FLAGS): see benchmarks/baselines/README.md
    return load_c_module(f"baseline_{name}", module.CDEF, prefix + source, libraries=["m"],
                         extra_compile_args=list(getattr(module, "C_FLAGS", ())))


def _with_deep_stack(fn: Callable[[], Any]) -> Any:
    box: dict[str, Any] = {}

    def body() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # re-raised in the caller's thread
            box["error"] = err

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    try:
        sys.setrecursionlimit(max(old_limit, _RECURSION_LIMIT))
        threading.stack_size(_STACK_BYTES)
        worker = threading.Thread(target=body, name="revec-baseline")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]


def prepare(name: str, kind: str, args: dict[str, Any], warm: bool = True
            ) -> Callable[[], dict[str, int]]:
    """A no-argument callable running the baseline once (set-up and compilation done)."""
    if kind not in KINDS:
        raise RevecError(f"unknown baseline kind {kind!r}; expected one of {', '.join(KINDS)}")
    module = baseline_module(name)
    if kind == "python":
        return lambda: _with_deep_stack(lambda: module.python_run(args))
    if kind == "numba":
        if warm:
            module.numba_run(args)
        return lambda: module.numba_run(args)
    ffi, lib = c_library(name)
    setup = getattr(module, "c_setup", None)
    if setup is not None:
        setup(ffi, lib, args)
    return lambda: module.c_run(ffi, lib, args)


def run_baseline(name: str, kind: str, args: dict[str, Any], warm: bool = True
                 ) -> tuple[dict[str, int], float]:
    """Run one baseline once: ``(answers, seconds)``."""
    fn = prepare(name, kind, args, warm)
    t0 = time.perf_counter()
    answers = fn()
    return answers, time.perf_counter() - t0

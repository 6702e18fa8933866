"""The C back end in the registry (:mod:`revec.backends.registry`): C with SIMD
intrinsics, built by cffi (:mod:`revec.backends.c_codegen`, ``c_runner``, ``cbuild``).

Imports of the code generator, cffi and the compiler happen inside the methods, so
listing the back ends stays cheap.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from revec import ir
    from revec.backends.registry import CompiledTask


@functools.cache
def compiler_problem() -> str | None:
    """None if a C compiler is found and builds a module (a tiny probe, cached on disk
    by cbuild, and for the process here), else what is wrong."""
    from revec.toolchain.cbuild import compiler_command, find_compiler, load_c_module

    if find_compiler() is None:
        return (f"no C compiler found ({compiler_command()[0]!r}: install gcc, or set CC)")
    try:
        _, lib = load_c_module("probe", "int revec_probe(int);",
                               "int revec_probe(int x) { return x + 1; }")
        if lib.revec_probe(1) != 2:
            return "the C compiler builds a probe module that computes a wrong answer"
    except Exception as err:  # noqa: BLE001 - any failure means: no working compiler
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return f"the C compiler does not build a module ({first})"
    return None


class CBackend:
    """Generated C, compiled with the machine's compiler (``-O3 -march=native``)."""

    name = "c"
    target = "c"  # the kernel plans it prints (kernel_plan.TARGETS)
    suffix = ".c"

    def unavailable(self) -> str | None:
        return compiler_problem()

    def generate(self, program: ir.Program, task: str, compaction: str | None = None
                 ) -> str:
        """The C module of ``task``; the same text for every compaction (the scalar
        split is chosen when it is compiled, by ``-DRV_SCALAR_SPLIT``)."""
        from revec.backends.c_codegen import generate_c_module

        return generate_c_module(program, task)

    def build(self, program: ir.Program, task: str, compaction: str | None = None
              ) -> CompiledTask:
        from revec.backends.c_runner import CTask

        return CTask(program, task, compaction or "table")


BACKEND = CBackend()

"""The numba back end in the registry (:mod:`revec.backends.registry`): generated
Python compiled by numba (:mod:`revec.backends.numba_codegen`, ``numba_runner``).

numba and the code generator are imported inside the methods, so listing the back ends
stays cheap (importing numba takes about half a second).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from revec import ir
    from revec.backends.registry import CompiledTask


class NumbaBackend:
    """Generated Python, compiled by numba; needs no C compiler."""

    name = "numba"
    target = "numba"  # the kernel plans it prints (kernel_plan.TARGETS)
    suffix = ".py"

    def unavailable(self) -> str | None:
        if importlib.util.find_spec("numba") is None:
            return "numba is not installed (pip install numba)"
        return None

    def generate(self, program: ir.Program, task: str, compaction: str | None = None
                 ) -> str:
        from revec.backends.numba_codegen import generate_numba_module

        return generate_numba_module(program, task, compaction)

    def build(self, program: ir.Program, task: str, compaction: str | None = None
              ) -> CompiledTask:
        from revec.backends.numba_runner import NumbaTask

        return NumbaTask(program, task, compaction)


BACKEND = NumbaBackend()

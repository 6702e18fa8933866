"""numba's compiler pipeline for generated kernels and helpers: fewer passes, and call
typing resolved once per function type and argument types.

A generated test program's numba compile was about two thirds of the differential
suite's time.  Almost all of it is numba's own Python code, not LLVM (``NUMBA_OPT=0``
cut LLVM's share to a fifth and the whole compile by under a tenth).  Two parts of it
do work a generated kernel does not need:

* **Call typing, again and again.**  Type inference resolves every call site (``ld``,
  ``st``, a cast, an operator) through the callee's typing templates, each time it
  revisits the constraint, although a kernel has a few dozen distinct (callee,
  argument types) pairs among hundreds of calls.  numba keeps no cache of these
  (``BaseContext.resolve_function_type`` only remembers failures).
  :class:`MemoizedTypeInference` answers a repeated question from a table kept for
  the process: 11,389 of 11,931 resolutions in 27 generated kernels.
* **Passes for Python a generated kernel never contains**: ``with`` blocks, closures
  and comprehensions (inlined early), functions marked ``inline="always"``,
  ``literally`` / ``literal_unroll``, parfor diagnostics.  The language of DESIGN.md
  section 2 has none of them (the front end rejects lambdas, comprehensions and
  nested functions), and revec's kernels and helpers are generated from its IR.

Measured (27 generated differential-test programs, one warm process, numba cache off,
interleaved, CPU seconds, 2-core AMD EPYC, numba 0.68.1): memoized call typing alone
26.45 -> 20.94 s (0.79x); see docs/design.md for the pipeline's total.

Why the table is safe: the answer to (function type, argument types, keyword types)
is a function of those types once the callee is registered -- the same question
numba's own dispatchers answer from ``overloads`` keyed by argument types.  Failed
resolutions are not stored (numba reports them).  A new overload of a global
function makes a new function type (numba augments the templates into a new type),
so it is a new key.  Entries are written only while numba's compiler lock is held.
"""

from __future__ import annotations

from typing import Any

from numba.core.compiler import CompilerBase
from numba.core.compiler_machinery import PassManager, register_pass
from numba.core.typed_passes import (
    AnnotateTypes,
    InlineOverloads,
    IRLegalization,
    NativeLowering,
    NoPythonBackend,
    NoPythonSupportedFeatureValidation,
    NopythonTypeInference,
    PreLowerStripPhis,
)
from numba.core.untyped_passes import (
    FixupArgs,
    IRProcessing,
    LiteralPropagationSubPipelinePass,
    ReconstructSSA,
    RewriteDynamicRaises,
    TranslateByteCode,
)

# (id of the typing context, function type, argument types, keyword types) -> signature
_resolved: dict[tuple[Any, ...], Any] = {}


def resolved_count() -> int:
    """How many call typings the table holds (tests)."""
    return len(_resolved)


class _MemoizedCalls:
    """While active, the typing context answers repeated call typings from
    :data:`_resolved` (an attribute on the context instance, removed afterwards)."""

    def __init__(self, typingctx: Any) -> None:
        self.ctx = typingctx
        self.installed = False

    def __enter__(self) -> None:
        ctx = self.ctx
        if "resolve_function_type" in vars(ctx):  # nested compile: already memoized
            return
        resolve = type(ctx).resolve_function_type
        ident = id(ctx)

        def memoized(func: Any, args: Any, kws: Any) -> Any:
            try:
                key = (ident, func, tuple(args), tuple(sorted(kws.items())))
                sig = _resolved.get(key)
            except TypeError:  # an unhashable argument: resolve it as numba does
                return resolve(ctx, func, args, kws)
            if sig is None:
                sig = resolve(ctx, func, args, kws)
                if sig is not None:
                    _resolved[key] = sig
            return sig

        ctx.resolve_function_type = memoized
        self.installed = True

    def __exit__(self, *exc: object) -> None:
        if self.installed:
            del self.ctx.resolve_function_type


@register_pass(mutates_CFG=True, analysis_only=False)
class MemoizedTypeInference(NopythonTypeInference):
    """numba's nopython type inference with call typings memoized (module docstring)."""

    _name = "revec_memoized_type_inference"

    def run_pass(self, state: Any) -> bool:
        with _MemoizedCalls(state.typingctx):
            return bool(super().run_pass(state))


class KernelPipeline(CompilerBase):
    """The nopython pipeline of ``numba.core.compiler.DefaultPassBuilder`` for
    ``no_rewrites=True``, without the passes for Python constructs a generated kernel
    never has, and with :class:`MemoizedTypeInference` (module docstring)."""

    def define_pipelines(self) -> list[PassManager]:
        pm = PassManager("revec_kernel")
        pm.add_pass(TranslateByteCode, "analyzing bytecode")
        pm.add_pass(FixupArgs, "fix up args")
        pm.add_pass(IRProcessing, "processing IR")
        pm.add_pass(RewriteDynamicRaises, "rewrite dynamic raises")
        if self.state.flags.enable_ssa:
            pm.add_pass(ReconstructSSA, "ssa")
        pm.add_pass(LiteralPropagationSubPipelinePass, "Literal propagation")
        pm.add_pass(MemoizedTypeInference, "nopython frontend, memoized call typing")
        pm.add_pass(PreLowerStripPhis, "remove phis nodes")
        pm.add_pass(InlineOverloads, "inline overloaded functions")
        pm.add_pass(NoPythonSupportedFeatureValidation,
                    "ensure features that are in use are in a valid form")
        pm.add_pass(IRLegalization, "ensure IR is legal prior to lowering")
        pm.add_pass(AnnotateTypes, "annotate types")
        pm.add_pass(NativeLowering, "native lowering")
        pm.add_pass(NoPythonBackend, "nopython mode backend")
        pm.finalize()
        return [pm]

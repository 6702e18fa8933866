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

* **Lowering asks numba's slow questions again.**  Native lowering re-resolves every
  operator's signature through its typing templates (``lower_binop`` calls
  ``Function.get_call_type``, about 1.1 ms a call, which type inference already
  answered), and asks LLVM the ABI size of every user variable's type for debug info
  numba then discards (``get_abi_sizeof`` builds and parses an LLVM module per call,
  about 0.55 ms).  :class:`MemoizedNativeLowering` answers both from tables kept for
  the process.

Measured (27 generated differential-test programs, one warm process, numba cache off,
interleaved, CPU seconds, 2-core AMD EPYC, numba 0.68.1): memoized call typing alone
26.45 -> 20.94 s (0.79x); memoized lowering questions on top of the rest 19.36 ->
17.86 s and 18.81 -> 17.14 s (0.92x); see docs/backends.md for the pipeline's total.

Why the table is safe: the answer to (function type, argument types, keyword types)
is a function of those types once the callee is registered -- the same question
numba's own dispatchers answer from ``overloads`` keyed by argument types.  Failed
resolutions are not stored (numba reports them).  A new overload of a global
function makes a new function type (numba augments the templates into a new type),
so it is a new key.  Entries are written only while numba's compiler lock is held.
The lowering tables rest on the same facts: ``Function.get_call_type`` records the
implementation key of each answer on the (interned) function type itself, which the
table keeps alive, so a repeated answer finds it; an LLVM type's ABI size is a function
of its text for literal types, and named (identified) struct types are not stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

import numba
from numba.core import errors, types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import PassManager, register_pass
from numba.core.typed_passes import DumpParforDiagnostics, NativeLowering, NopythonTypeInference
from numba.core.untyped_passes import (
    FindLiterallyCalls,
    InlineClosureLikes,
    InlineInlinables,
    LiteralUnroll,
    MakeFunctionToJitFunction,
    WithLifting,
)

if TYPE_CHECKING:
    from numba.core.dispatcher import Dispatcher

# (id of the typing context, function type, argument types, keyword types) -> signature
_resolved: dict[tuple[Any, ...], Any] = {}


# (function type, id of the typing context, argument types, keyword types) -> signature,
# for lowering's direct calls of ``get_call_type``
_call_types: dict[tuple[Any, ...], Any] = {}
# (id of the target context, text of a literal LLVM type) -> ABI size in bytes
_abi_sizes: dict[tuple[int, str], int] = {}


def resolved_count() -> int:
    """How many call typings the table holds (tests)."""
    return len(_resolved)


def lowering_counts() -> tuple[int, int]:
    """How many lowering call types and ABI sizes the tables hold (tests)."""
    return len(_call_types), len(_abi_sizes)


def forget_resolved() -> None:
    """Empty the tables (a compile measured as a fresh process's first one)."""
    _resolved.clear()
    _call_types.clear()
    _abi_sizes.clear()


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
                # numba passes keyword types as a dict or as (name, type) pairs
                kw = tuple(sorted(kws.items() if isinstance(kws, dict) else kws))
                key = (ident, func, tuple(args), kw)
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


_real_get_call_type = types.functions.BaseFunction.get_call_type


def _install_get_call_type(fn: Callable[..., Any]) -> None:
    """``fn`` as the method ``BaseFunction.get_call_type`` (a patch of numba's class,
    made and undone by :class:`_MemoizedLowering`)."""
    # mypy rejects any assignment to a method; this one is the point
    types.functions.BaseFunction.get_call_type = fn  # type: ignore[method-assign]


def _memoized_get_call_type(self: Any, context: Any, args: Any, kws: Any) -> Any:
    """``BaseFunction.get_call_type`` answered from :data:`_call_types` when asked
    before (installed on the class only during :class:`MemoizedNativeLowering`)."""
    try:
        kw = tuple(sorted(kws.items() if isinstance(kws, dict) else kws))
        key = (self, id(context), tuple(args), kw)
        sig = _call_types.get(key)
    except TypeError:  # an unhashable argument: resolve it as numba does
        return _real_get_call_type(self, context, args, kws)
    if sig is None:
        sig = _real_get_call_type(self, context, args, kws)  # raises when it fails
        if sig is not None:
            _call_types[key] = sig
    return sig


class _MemoizedLowering:
    """While active, ``BaseFunction.get_call_type`` and the target context's
    ``get_abi_sizeof`` answer repeated questions from tables (module docstring)."""

    def __init__(self, targetctx: Any) -> None:
        self.ctx = targetctx
        self.installed = False

    def __enter__(self) -> None:
        ctx = self.ctx
        if "get_abi_sizeof" in vars(ctx):  # nested compile: already memoized
            return
        real_sizeof = type(ctx).get_abi_sizeof
        ident = id(ctx)

        def get_abi_sizeof(ty: Any) -> int:
            text = str(ty)
            if "%" in text:  # a named struct type: its text does not give its layout
                return int(real_sizeof(ctx, ty))
            size = _abi_sizes.get((ident, text))
            if size is None:
                size = _abi_sizes[(ident, text)] = int(real_sizeof(ctx, ty))
            return size

        ctx.get_abi_sizeof = get_abi_sizeof
        _install_get_call_type(_memoized_get_call_type)
        self.installed = True

    def __exit__(self, *exc: object) -> None:
        if self.installed:
            del self.ctx.get_abi_sizeof
            _install_get_call_type(_real_get_call_type)


@register_pass(mutates_CFG=True, analysis_only=False)
class MemoizedNativeLowering(NativeLowering):
    """numba's native lowering with its repeated typing and ABI-size questions
    memoized (module docstring)."""

    _name = "revec_memoized_native_lowering"

    def run_pass(self, state: Any) -> bool:
        with _MemoizedLowering(state.targetctx):
            return bool(super().run_pass(state))


_REPLACED = {NopythonTypeInference: MemoizedTypeInference, NativeLowering: MemoizedNativeLowering}


def _nopython_pipeline(state: Any, skip: frozenset[type] = frozenset()) -> PassManager:
    """numba's own nopython pipeline for ``state``'s flags, with
    :class:`MemoizedTypeInference` for its type inference,
    :class:`MemoizedNativeLowering` for its lowering and without the passes in
    ``skip``."""
    pm = DefaultPassBuilder.define_nopython_pipeline(state)
    pm.passes = [(_REPLACED.get(cls, cls), what) for cls, what in pm.passes
                 if cls not in skip]
    pm.finalize()
    return pm


# What a generated kernel or helper never contains (module docstring)
_NOT_IN_GENERATED_CODE = frozenset({
    WithLifting, InlineClosureLikes, MakeFunctionToJitFunction, InlineInlinables,
    FindLiterallyCalls, LiteralUnroll, DumpParforDiagnostics})


def _unmarked(msg: str, color: Any = None, style: Any = None) -> str:
    return msg


class _PlainErrorMessages:
    """While active, numba formats error messages without terminal colours.

    numba formats a message, coloured by colorama, for each of the hundreds of overload
    candidates and global values it rejects while typing a kernel (about 450 per
    generated program); the colouring alone was about 5% of a kernel's compile (6
    generated programs, 3 interleaved runs each, 2-core AMD EPYC: 5.04-6.33 s -> 4.75-5.05
    s of CPU).  revec reports its own errors, so its own compiles need no colour; but
    revec changes no process-wide setting, so the user's numba code keeps its colours.
    numba 0.68 picks its scheme once (``NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING`` is
    read when ``numba.core.errors`` is imported), every module shares the one instance
    ``errors.termcolor()`` returns, and a colouring scheme marks text up in ``_markup``:
    while active, that instance's ``_markup`` (an instance attribute, deleted on exit)
    returns the text unchanged.  Compiles run under numba's compiler lock, nested ones
    in the same thread, so a depth count restores the scheme at the outermost exit.
    """

    depth = 0

    def __enter__(self) -> None:
        scheme = errors.termcolor()
        if _PlainErrorMessages.depth == 0 and hasattr(type(scheme), "_markup"):
            vars(scheme)["_markup"] = _unmarked
        _PlainErrorMessages.depth += 1

    def __exit__(self, *exc: object) -> None:
        _PlainErrorMessages.depth -= 1
        if _PlainErrorMessages.depth == 0:
            vars(errors.termcolor()).pop("_markup", None)


class _PlainCompiler(CompilerBase):
    """A numba compiler whose whole pipeline runs with :class:`_PlainErrorMessages`."""

    def _compile_core(self) -> Any:
        with _PlainErrorMessages():
            return super()._compile_core()


class KernelPipeline(_PlainCompiler):
    """Generated kernels and helpers: numba's nopython pipeline without the passes for
    Python constructs generated code never has, with call typing memoized and plain
    error messages."""

    def define_pipelines(self) -> list[PassManager]:
        return [_nopython_pipeline(self.state, _NOT_IN_GENERATED_CODE)]


class MemoizedPipeline(_PlainCompiler):
    """The runtime's own functions: numba's nopython pipeline with call typing
    memoized (its first compile in a fresh cache, for fib's run on one and then two
    workers: 22.5-24.1 -> 21.3-22.0 s CPU, 2-core AMD EPYC) and plain error messages."""

    def define_pipelines(self) -> list[PassManager]:
        return [_nopython_pipeline(self.state)]


_F = TypeVar("_F", bound=Callable[..., object])


@overload
def njit(function: _F, /, **options: Any) -> Dispatcher[_F]: ...
@overload
def njit(signature: Any = None, /, **options: Any) -> Callable[[_F], Dispatcher[_F]]: ...


def njit(signature_or_function: Any = None, /, **options: Any) -> Any:
    """``numba.njit`` compiling through :class:`MemoizedPipeline` (the runtime's
    decorator): ``njit(f, ...)`` or ``njit(signature, ...)(f)`` as numba's own."""
    return numba.njit(signature_or_function, pipeline_class=MemoizedPipeline, **options)

"""The generated kernels' numba pipeline (revec.runtime.numba_pipeline): memoized call
typing gives numba's own answers, failures are not remembered, and the typing context
is left as it was."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from numba.core import errors
from numba.core.registry import cpu_target

from revec.runtime import numba_pipeline
from revec.runtime.numba_access import ld, st
from revec.runtime.numba_pipeline import KernelPipeline


@njit(pipeline_class=KernelPipeline, no_cpython_wrapper=False)
def _sum_twice(a):
    s = np.int64(0)
    for i in range(a.size):
        s = np.int64(s + ld(a, i))
    for i in range(a.size):
        st(a, i, np.int32(ld(a, i) * 2))
        s = np.int64(s + ld(a, i))
    return s


@njit(pipeline_class=KernelPipeline)
def _badly_typed(x):
    return ld(x, 0)  # ld of a scalar: no typing


def test_kernel_pipeline_compiles_and_runs() -> None:
    a = np.arange(10, dtype=np.int32)
    assert _sum_twice(a) == 45 + 90
    assert list(a) == list(range(0, 20, 2))
    assert numba_pipeline.resolved_count() > 0


def test_memoized_typings_equal_numbas_own() -> None:
    """Every stored answer is the one numba gives when asked again without the table."""
    _sum_twice(np.arange(3, dtype=np.int32))
    ctx = cpu_target.typing_context
    entries = [(k, v) for k, v in numba_pipeline._resolved.items() if k[0] == id(ctx)]
    assert entries
    for (_, func, args, kws), sig in entries:
        again = type(ctx).resolve_function_type(ctx, func, args, dict(kws))
        assert again == sig, (func, args)


def test_failed_typing_is_reported_every_time_and_context_restored() -> None:
    ctx = cpu_target.typing_context
    for _ in range(2):
        with pytest.raises(errors.TypingError):
            _badly_typed(1.5)
        assert "resolve_function_type" not in vars(ctx)
    assert all(v is not None for v in numba_pipeline._resolved.values())


def test_memoized_lowering_answers_equal_numbas_own() -> None:
    """The lowering tables hold numba's own answers, and the patches are removed after
    each compile."""
    from numba.core import types
    from numba.core.registry import cpu_target

    _sum_twice(np.arange(3, dtype=np.int32))
    calls, sizes = numba_pipeline.lowering_counts()
    assert calls > 0 and sizes > 0
    assert types.functions.BaseFunction.get_call_type is numba_pipeline._real_get_call_type
    assert "get_abi_sizeof" not in vars(cpu_target.target_context)
    for (func, ctx_id, args, kws), sig in list(numba_pipeline._call_types.items()):
        if ctx_id == id(cpu_target.typing_context):
            again = numba_pipeline._real_get_call_type(func, cpu_target.typing_context,
                                                       args, dict(kws))
            assert again == sig, (func, args)
    ctx = cpu_target.target_context
    for lltype in {ctx.get_value_type(t) for t in (types.int8, types.float64,
                                                  types.Array(types.int32, 1, "C"),
                                                  types.UniTuple(types.int64, 3))}:
        key = (id(ctx), str(lltype))
        if key in numba_pipeline._abi_sizes:
            assert numba_pipeline._abi_sizes[key] == type(ctx).get_abi_sizeof(ctx, lltype)


_SOURCE = '''
def twice_{tag}(a):
    s = np.int64(0)
    for i in range(a.size):
        v = ld(a, i)
        s = np.int64(s + np.int64(v) * np.int64(3) - (v >> np.int32(1)))
        st(a, i, np.int32(v * 2))
    return s
'''


def _compiled_ir(tag: str, memoized: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    from numba.core.typed_passes import NativeLowering

    if not memoized:
        monkeypatch.delitem(numba_pipeline._REPLACED, NativeLowering)
    namespace = {"np": np, "ld": ld, "st": st}
    exec(_SOURCE.format(tag=tag), namespace)  # noqa: S102 - a test's own source
    fn = njit(pipeline_class=KernelPipeline)(namespace[f"twice_{tag}"])
    a = np.arange(7, dtype=np.int32)
    assert fn(a) == sum(3 * v - (v >> 1) for v in range(7))
    monkeypatch.undo()
    (ir,) = fn.inspect_llvm().values()
    return ir.replace(f"twice_{tag}", "twice_X")


def test_memoized_lowering_emits_the_same_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """A function lowered with the tables (filled by a first compile) gives the same
    LLVM code as one lowered by numba alone."""
    import re

    _compiled_ir("warm_", True, monkeypatch)  # fills the tables
    plain = _compiled_ir("plain", False, monkeypatch)  # tags of one length
    memo = _compiled_ir("memo_", True, monkeypatch)

    def norm(text: str) -> str:  # numba's unique ids in mangled names
        return re.sub(r"twice_X\w*", "twice_X", text)

    assert norm(plain) == norm(memo)

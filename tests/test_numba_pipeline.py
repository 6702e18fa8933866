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

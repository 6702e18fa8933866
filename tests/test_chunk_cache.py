"""The test process's stack-chunk cache (tests/support/chunk_cache.c) is installed on
CPython before 3.13 and really hands chunks out again."""

from __future__ import annotations

import pytest

from tests.support import chunk_cache


def _down(n: int) -> int:
    return 0 if n == 0 else 1 + _down(n - 1)


@pytest.mark.skipif(not chunk_cache.needed(), reason="CPython 3.13+ caches a chunk itself")
def test_chunks_are_reused_across_a_boundary() -> None:
    dll = chunk_cache.INSTALLED
    assert dll is not None, "the chunk cache was not built or installed (C compiler?)"
    before = dll.chunk_cache_reused()
    # every depth up to 600 frames (a few 16 KiB chunks): the calls cross chunk
    # boundaries back and forth
    for depth in range(0, 600, 3):
        assert _down(depth) == depth
    assert dll.chunk_cache_reused() > before

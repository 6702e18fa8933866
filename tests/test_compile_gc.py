"""The numba loader holds off the cyclic garbage collector while it compiles, and gives
it back exactly as it found it."""

from __future__ import annotations

import gc
import threading

from revec.backends.gc_pause import gc_paused


def test_gc_paused_restores_an_enabled_collector_after_nested_pauses():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled():
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_gc_paused_restores_after_an_error():
    try:
        with gc_paused():
            raise ValueError("compile failed")
    except ValueError:
        pass
    assert gc.isenabled()


def test_gc_paused_from_overlapping_threads():
    # thread A pauses, thread B pauses, A ends: still paused until B ends too
    a_in, b_in, a_out, b_go = (threading.Event() for _ in range(4))
    seen: list[bool] = []

    def a() -> None:
        with gc_paused():
            a_in.set()
            b_in.wait()
        a_out.set()

    def b() -> None:
        a_in.wait()
        with gc_paused():
            b_in.set()
            a_out.wait()
            seen.append(gc.isenabled())
            b_go.wait()

    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start()
    tb.start()
    a_out.wait()
    ta.join()
    b_go.set()
    tb.join()
    assert seen == [False]
    assert gc.isenabled()

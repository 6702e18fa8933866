"""The benchmark suite: task programs, presets, independent answers and baselines."""

from __future__ import annotations

import importlib.util
import inspect
import random
import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from revec.bench import answers
from revec.bench.baselines import KINDS, run_baseline
from revec.bench.presets import ANSWER_REDUCERS, BENCHMARKS, PRESETS, SIZES, preset
from revec.errors import RevecError
from revec.lang import Bound, Reducer, Task

ROOT = Path(__file__).resolve().parents[1]


def load_program(name: str) -> ModuleType:
    """The task program as a plain Python module (the sequential reference)."""
    path = ROOT / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench_prog_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_plain(name: str, args: dict[str, Any]) -> dict[str, int]:
    module = load_program(name)
    task = getattr(module, name)
    assert isinstance(task, Task)
    reducers = {k: v for k, v in vars(module).items() if isinstance(v, Reducer)}
    for r in reducers.values():
        r.reset()
    # a Bound (read to prune) is not one of the answers
    reducers = {k: v for k, v in reducers.items() if not isinstance(v, Bound)}
    # the root call gets every argument: the presets' and then the parameter defaults
    full = [args[p] if p in args else task.defaults[p] for p in task.param_names]
    task(*full)
    return {k: r.value.item() for k, r in reducers.items()}


# --------------------------------------------------------------------------- presets
@pytest.mark.parametrize("name", BENCHMARKS)
def test_presets_name_the_leading_task_parameters(name: str) -> None:
    task = getattr(load_program(name), name)
    for size in SIZES:
        keys = list(PRESETS[name][size].args)
        assert keys == task.param_names[:len(keys)], (name, size)
    module = load_program(name)
    # (a Bound is a reducer tasks read to prune: not one of the answers)
    reducers = {k for k, v in vars(module).items()
                if isinstance(v, Reducer) and not isinstance(v, Bound)}
    assert reducers == set(ANSWER_REDUCERS[name])


def test_paper_sizes_are_table_1() -> None:
    assert preset("fib", "paper").args == {"n": 45}
    assert preset("nqueens", "paper").args == {"n": 13}
    assert preset("parentheses", "paper").args == {"n": 19}
    assert preset("binomial", "paper").args == {"n": 36, "k": 13}
    assert preset("knapsack", "paper").args == {"example": 3, "n": 30}
    assert preset("graphcol", "paper").args == {"n": 38}
    t3 = answers.UTS_TREES["T3"]
    uts = preset("uts", "paper").args
    assert (uts["tree_type"], uts["b0"], uts["q"], uts["m"]) == (t3["t"], t3["b"], t3["q"], t3["m"])
    nv, edges = answers.read_graph()
    assert (nv, len(edges)) == (38, 64)
    assert len({(min(u, v), max(u, v)) for u, v in edges}) == 64
    assert all(u != v and 0 <= u < 38 and 0 <= v < 38 for u, v in edges)


def test_unknown_names_are_user_errors() -> None:
    with pytest.raises(RevecError):
        preset("fibonacci", "quick")
    with pytest.raises(RevecError):
        preset("fib", "huge")
    with pytest.raises(RevecError):
        answers.expected("fibonacci", {"n": 3})
    with pytest.raises(RevecError):
        run_baseline("fib", "java", {"n": 3})


def test_minmax_presets_are_legal_positions() -> None:
    for size in SIZES:
        a = preset("minmax", size).args
        nx, no = bin(a["x"]).count("1"), bin(a["o"]).count("1")
        assert a["x"] & a["o"] == 0
        assert nx - no in (0, 1) and a["x_moves"] == (nx == no)
        assert not any(a["x"] & ln == ln or a["o"] & ln == ln for ln in answers.LINES_4X4)


# --------------------------------------------------------------------------- answers
@pytest.mark.parametrize("name", BENCHMARKS)
def test_quick_preset_plain_python_equals_independent_answer(name: str) -> None:
    args = preset(name, "quick").args
    got = run_plain(name, args)
    want = answers.expected(name, args)
    assert got == want
    assert all(v > 0 for v in want.values()), "a quick preset must exercise every reducer"


@pytest.mark.parametrize("name", BENCHMARKS)
@pytest.mark.parametrize("kind", KINDS)
def test_baselines_quick_equal_answers(name: str, kind: str) -> None:
    args = preset(name, "quick").args
    got, seconds = run_baseline(name, kind, args)
    assert got == answers.expected(name, args)
    assert seconds >= 0.0


def test_c_baselines_build_with_their_modules_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    """A baseline's C_FLAGS (the faster build, benchmarks/baselines/README.md) reach
    the compiler; a baseline without them is built with none added."""
    from revec.bench import baselines

    calls: dict[str, list[str]] = {}

    def fake_load(hint: str, cdef: str, source: str, **kw: Any) -> tuple[str, str]:
        calls[hint] = list(kw.get("extra_compile_args") or [])
        return "ffi", "lib"

    monkeypatch.setattr("revec.toolchain.cbuild.load_c_module", fake_load)
    baselines.c_library.cache_clear()
    try:
        for name in ("knapsack", "parentheses"):
            baselines.c_library(name)
    finally:
        baselines.c_library.cache_clear()
    assert calls["baseline_knapsack"] == ["-fno-semantic-interposition"]
    assert calls["baseline_parentheses"] == []


def test_fib_and_counting_closed_forms() -> None:
    assert [answers.fib(n) for n in range(10)] == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
    assert [answers.catalan(n) for n in range(8)] == [1, 1, 2, 5, 14, 42, 132, 429]
    assert answers.binomial(36, 13) == 2310789600


def _queens_brute(n: int) -> int:
    count = 0
    from itertools import permutations

    for perm in permutations(range(n)):
        if len({perm[i] + i for i in range(n)}) == n and len({perm[i] - i for i in range(n)}) == n:
            count += 1
    return count


def test_nqueens_table_agrees_with_brute_force_for_small_n() -> None:
    assert [answers.nqueens(n) for n in range(1, 9)] == [_queens_brute(n) for n in range(1, 9)]
    with pytest.raises(RevecError):
        answers.nqueens(40)


def test_graph_colourings_two_methods_agree_on_prefixes() -> None:
    nv, edges = answers.read_graph()
    for n in (6, 10, 14, 17):
        sub = answers.induced_prefix(n, edges)
        assert answers.colourings_by_frontier(n, sub) == \
            answers.chromatic_polynomial_value(n, sub, 3)
    # triangle, square and K4 as sanity checks of both methods
    tri = [(0, 1), (1, 2), (0, 2)]
    k4 = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    for method in (lambda n, e: answers.colourings_by_frontier(n, e),
                   lambda n, e: answers.chromatic_polynomial_value(n, e, 3)):
        assert method(3, tri) == 6
        assert method(4, [(0, 1), (1, 2), (2, 3), (3, 0)]) == 18
        assert method(4, k4) == 0


def test_knapsack_dp_against_brute_force() -> None:
    cap, items = answers.read_knapsack(answers.DATA_DIR / "cilk5-example3.input")
    assert len(items) == 30 and cap == 900
    sub = items[:12]
    best = 0
    for mask in range(1 << len(sub)):
        w = sum(it[1] for i, it in enumerate(sub) if mask >> i & 1)
        v = sum(it[0] for i, it in enumerate(sub) if mask >> i & 1)
        if w <= cap:
            best = max(best, v)
    assert answers.knapsack_dp(cap, sub) == best
    assert answers.knapsack(1, 3) == answers.knapsack_dp(*answers.read_knapsack(
        answers.DATA_DIR / "cilk5-example1.input"))


# SHA-256 of the Cilk-5 distribution's knapsack inputs (Cilk 5.4.6,
# examples/knapsack-example{1,2,3}.input), as published; the project's copies in
# benchmarks/data must be these files, byte for byte.
CILK5_KNAPSACK_SHA256 = {
    1: "8bdb691ac9f8220380ff342aeb2d875bd58a60f6b8424fafc64829d18f614950",
    2: "1bcba67e38d8487317959ead0ef1688839a9d65695aef211af4139095d4c239d",
    3: "9272fdd4679d8f9be92098a9630b36c90b4f5c10837c89c110df2be02506a9cc",
}


def test_knapsack_inputs_are_the_cilk5_files() -> None:
    import hashlib

    for k, digest in CILK5_KNAPSACK_SHA256.items():
        path = answers.DATA_DIR / f"cilk5-example{k}.input"
        assert path.parent == ROOT / "benchmarks" / "data"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path
    # and where a shared copy of the originals exists, the bytes are the same
    shared = ROOT.parent / "shared" / "data" / "knapsack"
    for k in CILK5_KNAPSACK_SHA256:
        name = f"cilk5-example{k}.input"
        if (shared / name).is_file():
            assert (answers.DATA_DIR / name).read_bytes() == (shared / name).read_bytes()


def test_tictactoe_counts_small_positions() -> None:
    # one empty cell (15) left, O to move (8 X, 7 O, no line yet): one final position
    x = 0x0377
    o = 0xFFFF & ~x & ~(1 << 15)
    res = answers.tictactoe_4x4(x, o)
    final_o = o | 1 << 15
    assert not any(x & ln == ln or o & ln == ln for ln in answers.LINES_4X4)
    o_wins = any(final_o & ln == ln for ln in answers.LINES_4X4)
    assert res == {"xwins": 0, "owins": int(o_wins), "draws": int(not o_wins), "positions": 2}
    with pytest.raises(RevecError):
        answers.tictactoe_4x4(1, 1)


# --------------------------------------------------------------------------- uts / sha1
def _random_states(rng: random.Random, count: int) -> list[tuple[Any, ...]]:
    out = []
    for _ in range(count):
        h = tuple(np.uint32(rng.getrandbits(32)) for _ in range(5))
        i = np.int32(rng.randint(-2**31, 2**31 - 1) if rng.random() < 0.3 else rng.randint(0, 2000))
        out.append((*h, i))
    return out


def test_sha1_spawn_python_numba_unrolled_agree_with_hashlib() -> None:
    from revec.lib import LIBRARY
    from revec.lib.uts import sha1_spawn, sha1_spawn_numba, sha1_spawn_unrolled

    assert LIBRARY["sha1_spawn"].py is sha1_spawn
    rng = random.Random(20190601)
    for args in _random_states(rng, 300):
        msg = struct.pack(">5Ii", *(int(a) for a in args))
        want = struct.unpack(">5I", __import__("hashlib").sha1(msg).digest())
        for fn in (sha1_spawn, sha1_spawn_numba, sha1_spawn_unrolled):
            got = fn(*args)
            assert tuple(int(w) for w in got) == want, fn
        # the sequential reference gets the library's result types
        assert all(type(w) is np.uint32 for w in sha1_spawn(*args))


def test_sha1_spawn_intrinsic_in_a_thread_loop_agrees_with_hashlib() -> None:
    """The numba kernels call the SHA-1 intrinsic inside their thread loops, which LLVM
    vectorizes across threads: the loop's results (vector body and scalar remainder:
    1001 threads) equal hashlib's, for int32 and narrower (int8) spawn indices."""
    from numba import njit

    from revec.lib.sha1_ir import sha1_spawn_ir

    @njit
    def children(h, idx, out):  # type: ignore[no-untyped-def]
        for t in range(idx.size):
            r = sha1_spawn_ir(h[0, t], h[1, t], h[2, t], h[3, t], h[4, t], idx[t])
            for j in range(5):
                out[j, t] = r[j]

    rng = random.Random(7)
    states = _random_states(rng, 1001)
    h = np.array([[s[j] for s in states] for j in range(5)], np.uint32)
    for idx in (np.array([s[5] for s in states], np.int32),
                np.array([rng.randint(-128, 127) for _ in states], np.int8)):
        out = np.zeros((5, idx.size), np.uint32)
        children(h, idx, out)
        for t in range(idx.size):
            msg = struct.pack(">5Ii", *(int(h[j, t]) for j in range(5)), int(idx[t]))
            want = struct.unpack(">5I", __import__("hashlib").sha1(msg).digest())
            assert tuple(int(w) for w in out[:, t]) == want, (t, idx.dtype)


def test_sha1_spawn_c_agrees() -> None:
    from revec.lib.uts import C_SOURCE, sha1_spawn
    from revec.toolchain.cbuild import load_c_module

    cdef = ("void sha1_spawn_c(uint32_t h0, uint32_t h1, uint32_t h2, uint32_t h3, uint32_t h4,"
            " int32_t i, uint32_t *out);")
    source = ("#include <stdint.h>\n" + C_SOURCE +
              "void sha1_spawn_c(uint32_t h0, uint32_t h1, uint32_t h2, uint32_t h3, "
              "uint32_t h4, int32_t i, uint32_t *out)\n{ revec_lib_sha1_spawn(h0, h1, h2, h3, "
              "h4, i, out, out + 1, out + 2, out + 3, out + 4); }\n")
    ffi, lib = load_c_module("test_sha1_spawn", cdef, source)
    out = ffi.new("uint32_t[5]")
    rng = random.Random(7)
    for args in _random_states(rng, 300):
        lib.sha1_spawn_c(*(int(a) for a in args), out)
        assert tuple(out) == tuple(int(w) for w in sha1_spawn(*args))


def test_uts_root_state_is_sha1_of_the_seed() -> None:
    from revec.lib.uts import uts_root_state

    h = uts_root_state(42)
    assert struct.pack(">5I", *h) == __import__("hashlib").sha1(bytes(16) + bytes([0, 0, 0, 42])).digest()
    p = preset("uts", "paper").args
    assert tuple(p[f"h{j}"] for j in range(5)) == h


def test_uts_default_tree_matches_published_sizes() -> None:
    pub = answers.UTS_PUBLISHED["default"]
    walked = answers.uts_walk(**answers.UTS_TREES["default"])
    assert (walked["nodes"], walked["leaves"]) == (pub["nodes"], pub["leaves"])
    got = run_plain("uts", preset("uts", "quick").args)
    assert got == walked


@pytest.mark.parametrize("tree", ["T1", "T2", "T3", "T4", "T5"])
def test_uts_sample_trees_c_baseline_match_published(tree: str) -> None:
    """The C baseline (the SHA-1 of revec.lib.uts) walks every small published tree in
    under half a second each."""
    p = answers.UTS_TREES[tree]
    args = _uts_args(p)
    got, _ = run_baseline("uts", "c", args)
    assert got == answers.UTS_PUBLISHED[tree]


def _uts_args(p: dict[str, Any]) -> dict[str, Any]:
    from revec.lib.uts import uts_root_state

    h = uts_root_state(p["r"])
    return {"tree_type": p["t"], "b0": p["b"], "gen_mx": p["d"], "shape": p["a"], "q": p["q"],
            "m": p["m"], "shift_depth": 0.5, "height": 0,
            "h0": h[0], "h1": h[1], "h2": h[2], "h3": h[3], "h4": h[4]}


@pytest.mark.slow
@pytest.mark.parametrize("tree", ["T1", "T2", "T3", "T4", "T5"])
def test_uts_sample_trees_walker_and_numba_match_published(tree: str) -> None:
    p = answers.UTS_TREES[tree]
    assert answers.uts_walk(**p) == answers.UTS_PUBLISHED[tree]
    got, _ = run_baseline("uts", "numba", _uts_args(p))
    assert got == answers.UTS_PUBLISHED[tree]


@pytest.mark.slow
@pytest.mark.parametrize("tree", ["T1L", "T2L", "T3L"])
def test_uts_large_sample_trees_c_baseline(tree: str) -> None:
    got, _ = run_baseline("uts", "c", _uts_args(answers.UTS_TREES[tree]))
    assert got == answers.UTS_PUBLISHED[tree]


@pytest.mark.slow
@pytest.mark.parametrize("size", ["default", "paper"])
@pytest.mark.parametrize("name", BENCHMARKS)
def test_large_presets_c_baseline_equals_answer(name: str, size: str) -> None:
    args = preset(name, size).args
    got, _ = run_baseline(name, "c", args)
    if name == "uts":  # the answer walker would take minutes: T3's published sizes
        assert got == answers.UTS_PUBLISHED["T3"]
    else:
        assert got == answers.expected(name, args)


def test_baseline_signatures_are_uniform() -> None:
    from revec.bench.baselines import baseline_module

    for name in BENCHMARKS:
        module = baseline_module(name)
        for fn in ("python_run", "numba_run", "c_run"):
            assert callable(getattr(module, fn)), (name, fn)
        assert isinstance(module.CDEF, str)
        assert len(inspect.signature(module.c_run).parameters) == 3

"""Python tasks without annotations: parameters typed by the root call (as numba types
them), narrowed by the value-range analysis of the recursion, and never a different
result for it (plain Python, the int64 program and the narrowed one agree)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from revec.api import get_program, run_loaded
from revec.errors import RevecError
from revec.frontend.python.ranges import analyse
from revec.frontend.python.roots import root_typed
from tests.support.plain import plain_call

ROOT = Path(__file__).resolve().parents[1]

FIB = """
from revec import task

@task
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
"""

# k * 1000 wraps in int8 although k itself is 5: narrowing k must stop at int16
SCALED = """
from revec import task

@task
def scaled(n, k):
    if n == 0:
        return k * 1000
    return scaled(n - 1, k) + scaled(n - 1, k)
"""

# a read-only list input and a float, both typed from the root call
HALVES = """
from revec import task

@task
def halves(a, lo, hi, w):
    if hi - lo == 1:
        return a[lo] * w
    mid = lo + (hi - lo) // 2
    return halves(a, lo, mid, w) + halves(a, mid, hi, w)
"""

# a task-private tuple built anew for each child, typed from the root's tuple
BOARD = """
from revec import task

@task
def queens(n, board=()):
    if len(board) == n:
        return 1
    total = 0
    for col in range(n):
        ok = True
        for r in range(len(board)):
            c = board[r]
            if c == col or c - col == len(board) - r or col - c == len(board) - r:
                ok = False
        if ok:
            total += queens(n, board + (col,))
    return total
"""


def _module(tmp_path: Path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


def _params(program, task):
    return {p.name: p.ty.dtype.name for p in program.tasks[task].user_params}


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    d = tmp_path_factory.mktemp("unannotated")
    return {name: _module(d, name, text) for name, text in
            (("fib", FIB), ("scaled", SCALED), ("halves", HALVES), ("queens", BOARD))}


def test_fib_is_narrowed_from_the_root_value(progs):
    program = get_program(progs["fib"])
    assert _params(program, "fib") == {"n": "int64"}  # what check checks with
    assert _params(root_typed(program, "fib", (40,)), "fib") == {"n": "int8"}
    assert _params(root_typed(program, "fib", (300,)), "fib") == {"n": "int16"}
    assert _params(root_typed(program, "fib", (40,), narrow=False), "fib") == {"n": "int64"}
    ranges = analyse(program, "fib", {"n": (40, 40)})
    assert ranges.params["n"] == (0, 40)


@pytest.mark.parametrize("backend", ["c", "numba"])
def test_unannotated_results_equal_plain_python(progs, backend):
    fib = get_program(progs["fib"])
    assert run_loaded(fib, "fib", (20,), backend=backend).result == plain_call(progs["fib"],
                                                                          "fib", 20)
    scaled = get_program(progs["scaled"])
    res = run_loaded(scaled, "scaled", (6, 5), backend=backend)
    assert res.result == plain_call(progs["scaled"], "scaled", 6, 5) == 64 * 5000
    values = [3, -7, 11, 2, 40, -1, 9]
    halves = get_program(progs["halves"])
    res = run_loaded(halves, "halves", (values, 0, len(values), 0.5), backend=backend)
    assert res.result == plain_call(progs["halves"], "halves", values, 0, len(values), 0.5)
    queens = get_program(progs["queens"])
    res = run_loaded(queens, "queens", (6,), backend=backend)
    assert res.result == plain_call(progs["queens"], "queens", 6, ()) == 4


def test_narrowing_keeps_the_values_it_computes(progs):
    """k is 5 at every task, but k * 1000 needs int16: k is narrowed no further."""
    typed = root_typed(get_program(progs["scaled"]), "scaled", (6, 5))
    assert _params(typed, "scaled") == {"n": "int8", "k": "int16"}


def test_values_typed_from_the_root_call(progs):
    typed = root_typed(get_program(progs["halves"]), "halves", ([1, 2, 3], 0, 3, 0.5))
    t = typed.tasks["halves"]
    assert [ap.name for ap in t.arrays] == ["a"]
    assert typed.inputs[t.arrays[0].array].dtype == np.int64
    assert _params(typed, "halves")["w"] == "float64"
    typed = root_typed(get_program(progs["halves"]),
                       "halves", (np.array([1.5, 2.5]), 0, 2, np.float32(2)))
    assert typed.inputs[typed.tasks["halves"].arrays[0].array].dtype == np.float64
    assert _params(typed, "halves")["w"] == "float32"
    with pytest.raises(RevecError, match=r"argument 'w': \{'x': 1\} has no type revec supports"):
        root_typed(get_program(progs["halves"]), "halves", ([1], 0, 1, {"x": 1}))


def test_cli_types_the_arguments_from_their_text(progs):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "revec", "run", *map(str, args)],
                              capture_output=True, text=True, cwd=ROOT,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})

    out = run(progs["fib"], "fib", "15", "--backend", "c", "--workers", "1")
    assert out.returncode == 0, out.stderr
    assert "result = 610" in out.stdout
    values = progs["halves"].parent / "values.txt"
    values.write_text("3\n-7\n11\n2\n")
    out = run(progs["halves"], "halves", values, "0", "4", "2.5", "--backend", "c",
              "--workers", "1")
    assert out.returncode == 0, out.stderr
    assert f"result = {2.5 * (3 - 7 + 11 + 2)}" in out.stdout


# ------------------------------------------------------------------ property: same results
PROPERTY = """
from revec import task

@task
def walk(n, a, b):
    if n < 1:
        return a * 100 + b % 7 - b // 3 + (a << 4)
    x = a - n
    return walk(n - 1, a, b + x) + walk(n - 2, a, b)
"""


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    return _module(tmp_path_factory.mktemp("walk"), "walk", PROPERTY)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 9), a=st.integers(-3000, 3000), b=st.integers(-10**6, 10**6))
def test_narrowed_equals_int64_and_plain_python(walk, n, a, b):
    """The narrowed program (a: int8 or int16 where a * 100 and a << 4 still fit) gives
    the int64 program's result and plain Python's (the NumPy back end: no builds)."""
    program = get_program(walk)
    plain = plain_call(walk, "walk", n, a, b)
    wide = run_loaded(program, "walk", (n, a, b), backend="numpy", narrow=False)
    narrow = run_loaded(program, "walk", (n, a, b), backend="numpy")
    assert narrow.result == wide.result == plain
    types = _params(root_typed(program, "walk", (n, a, b)), "walk")
    assert types["n"] == "int8"
    bound = max(abs(a) * 100, abs(a) << 4)
    assert np.iinfo(np.dtype(types["a"])).max >= bound  # wide enough for a's uses


# ------------------------------------------------------------------ property: unsigned
# Each parameter a is non-negative at every task, so an unsigned type of its width is a
# candidate where the signed one does not hold it (a >= 128: uint8, a >= 32768: uint16)
# -- and each task has a use that an unsigned a would compute differently: a - 3
# reaching below zero in a branch (sub), ~a and -a (inv), a compared with negative
# numbers (cmp), a right shift and a difference of two unsigned parameters (shift).
# Without the node-by-node check, the unsigned program would wrap in sub and inv.
UNSIGNED = """
from revec import task

@task
def sub(n, a):
    if n < 1:
        if a < 3:
            return a - 3
        return a + 1
    return sub(n - 1, a) + sub(n - 1, a // 2)

@task
def inv(n, a):
    if n < 1:
        return ~a + (-a) * 2
    return inv(n - 1, a) + inv(n - 1, a // 3)

@task
def cmp(n, a):
    if n < 1:
        r = 0
        if a > -1:
            r += 1
        if a >= -70000:
            r += 2
        if a < -5:
            r += 4
        if a != -1:
            r += 8
        if (a >> 1) <= -3:
            r += 16
        return r
    return cmp(n - 1, a) + cmp(n - 1, a // 2)

@task
def shift(n, a, b):
    if n < 1:
        return (a >> 3) - (b >> 1) + (a - b)
    return shift(n - 1, a, b) + shift(n - 1, a // 2, b)
"""


@pytest.fixture(scope="module")
def unsigned(tmp_path_factory):
    return _module(tmp_path_factory.mktemp("unsigned"), "unsigned", UNSIGNED)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=st.sampled_from(["sub", "inv", "cmp", "shift"]), n=st.integers(0, 5),
       a=st.one_of(st.integers(0, 300), st.integers(30000, 70000),
                   st.integers(2**31 - 10, 2**32 + 10)),
       b=st.integers(0, 70000))
def test_unsigned_narrowed_equals_int64_and_plain_python(unsigned, task, n, a, b):
    """Non-negative parameters narrowed to unsigned types only where no value changes:
    the narrowed program gives the int64 program's and plain Python's results (the
    NumPy back end: no builds), and never a uint64."""
    args = (n, a, b) if task == "shift" else (n, a)
    program = get_program(unsigned)
    plain = plain_call(unsigned, task, *args)
    wide = run_loaded(program, task, args, backend="numpy", narrow=False)
    narrow = run_loaded(program, task, args, backend="numpy")
    assert narrow.result == wide.result == plain
    types = _params(root_typed(program, task, args), task)
    assert "uint64" not in types.values()
    # ~a, -a (a > 0) wrap in an unsigned type, so does a - 3 where a task has a < 3
    if task == "inv" or (task == "sub" and n >= 1 and a >> n < 3):
        assert not types["a"].startswith("u")


def test_unsigned_candidates_follow_the_interval(unsigned):
    """cmp's a in [0, 200] is uint8 (int8 does not hold it), in [0, 100] int8, in
    [0, 40000] uint16, in [0, 2**32 - 1] uint32, above that int64; sub's a - 3 (where a may
    reach 0) keeps a signed (int16, not uint8)."""
    program = get_program(unsigned)
    for root, want in ((200, "uint8"), (100, "int8"), (40000, "uint16"),
                       (2**32 - 1, "uint32"), (2**32, "int64")):
        assert _params(root_typed(program, "cmp", (3, root)), "cmp")["a"] == want
    assert _params(root_typed(program, "sub", (3, 200)), "sub")["a"] == "uint8"  # a >= 25
    assert _params(root_typed(program, "sub", (7, 200)), "sub")["a"] == "int16"  # a >= 1
    assert _params(root_typed(program, "inv", (3, 40000)), "inv")["a"] == "int32"


@pytest.mark.parametrize("backend", ["c", "numba"])
def test_unsigned_compared_with_negative_numbers(unsigned, backend):
    """A uint16 parameter compared with negative constants (carried out in int64, not
    in C's unsigned conversion) gives plain Python's result on the compiled back ends."""
    program = get_program(unsigned)
    assert _params(root_typed(program, "cmp", (4, 40000)), "cmp")["a"] == "uint16"
    res = run_loaded(program, "cmp", (4, 40000), backend=backend, workers=1)
    assert res.result == plain_call(unsigned, "cmp", 4, 40000)


# 16-bit board masks (minmax) and 32-bit words a library helper returns (uts)
MASKS = """
from revec import task
from revec.lib import sha1_spawn

@task
def fill(x, o, k):
    if k == 0:
        return (x ^ o) % 1000 + (x & o) // 2
    return fill(x | 0x8000, o, k - 1) + fill(x, o | 0x8001, k - 1)

@task
def words(d, h0, h1, h2, h3, h4):
    if d == 0:
        return (h0 ^ h4) % 1000 + (h1 >> 20)
    total = 0
    for i in range(2):
        c0, c1, c2, c3, c4 = sha1_spawn(h0, h1, h2, h3, h4, i)
        total += words(d - 1, c0, c1, c2, c3, c4)
    return total
"""


@pytest.fixture(scope="module")
def masks(tmp_path_factory):
    return _module(tmp_path_factory.mktemp("masks"), "masks", MASKS)


def test_board_masks_and_hash_words_are_unsigned(masks):
    """Boards in [0, 65535] are uint16 (no signed 16-bit type holds them: int32
    before), hash words in [0, 2**32 - 1] uint32 (int64 before); the results are plain
    Python's."""
    program = get_program(masks)
    assert _params(root_typed(program, "fill", (0x60, 0x600, 4)), "fill") == {
        "x": "uint16", "o": "uint16", "k": "int8"}
    state = (0x6768033E, 0x21646824, 0x7BD031A0, 0xA2D9876D, 0x79818F8F)
    assert _params(root_typed(program, "words", (3, *state)), "words") == {
        "d": "int8", **{f"h{k}": "uint32" for k in range(5)}}
    res = run_loaded(program, "fill", (0x60, 0x600, 4), backend="numpy")
    assert res.result == plain_call(masks, "fill", 0x60, 0x600, 4)
    res = run_loaded(program, "words", (3, *state), backend="numpy")
    assert res.result == plain_call(masks, "words", 3, *state)


# ------------------------------------------------------------------ property: relations
# Parameters related only through a difference.  choose: n - k >= 0 holds where the
# root has k <= n (then n >= 0 though only k is compared with 0), not where k > n (n
# then falls below 0 until s runs out); (100 - n) * 300 fits int16 only for n >= -9.
# gap: a - b shrinks towards 0 from above, but grows away from it from below.  swap:
# the spawn passes the parameters crossed (q + 5, p - 3), the difference negated,
# and the guard compares them the other way round (q >= p: p - q <= 0).
RELATED = """
from revec import task

@task
def choose(n, k, s):
    if k == 0 or k == n or s == 0:
        return (100 - n) * 300 + k
    return choose(n - 1, k - 1, s - 1) + choose(n - 1, k, s - 1)

@task
def gap(a, b, s):
    if a == b or s == 0:
        return (100 - a) * 300 + b
    return gap(a - 1, b, s - 1) + gap(a, b + 1, s - 1)

@task
def swap(p, q, s):
    if q >= p or s == 0:
        return (100 - p) * 300 - q
    return swap(q + 5, p - 3, s - 1) + swap(p - 1, q, s - 1)
"""


@pytest.fixture(scope="module")
def related(tmp_path_factory):
    return _module(tmp_path_factory.mktemp("related"), "related", RELATED)


def _reached(path: Path, task: str, args: tuple[int, ...]) -> list[dict[str, int]]:
    """The parameters of every call of ``task`` when plain Python runs it (a trace of
    the calls: independent of revec's analysis)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_traced_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, task)
    code = getattr(fn, "__wrapped__", fn).__code__
    names = code.co_varnames[:code.co_argcount]
    seen: list[dict[str, int]] = []

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code is code:
            seen.append({k: frame.f_locals[k] for k in names})
        return None

    sys.setprofile(tracer)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    assert seen
    return seen


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=st.sampled_from(["choose", "gap", "swap"]), x=st.integers(-12, 12),
       y=st.integers(-12, 12), s=st.integers(0, 9))
def test_relations_hold_at_every_task(related, task, x, y, s):
    """Every task plain Python runs has its parameters (and their differences) inside
    the intervals the analysis gives, whether the relation holds at the root or not."""
    program = get_program(related)
    names = [p.name for p in program.tasks[task].params]
    ranges = analyse(program, task, {k: (v, v) for k, v in zip(names, (x, y, s))})
    for call in _reached(related, task, (x, y, s)):
        for k, v in call.items():
            lo, hi = ranges.params[k]
            assert lo <= v <= hi, (k, v, ranges.params)
        for key, (lo, hi) in ranges.differences.items():
            p, q = key.split("-")
            assert lo <= call[p] - call[q] <= hi, (key, call, ranges.differences)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=st.sampled_from(["choose", "gap", "swap"]), x=st.integers(-12, 12),
       y=st.integers(-12, 12), s=st.integers(0, 9))
def test_related_narrowed_equals_int64_and_plain_python(related, task, x, y, s):
    """The program narrowed through the differences gives the int64 program's result
    and plain Python's (the NumPy back end: no builds)."""
    program = get_program(related)
    plain = plain_call(related, task, x, y, s)
    wide = run_loaded(program, task, (x, y, s), backend="numpy", narrow=False)
    narrow = run_loaded(program, task, (x, y, s), backend="numpy")
    assert narrow.result == wide.result == plain


def test_difference_bounds_what_intervals_cannot(related):
    """choose(12, 5, 20): n - k stays in [0, 7] (k == n ends a branch), so n >= k >= 0
    and n is narrowed (int16: (100 - n) * 300 is computed in n's type); from k > n the
    relation does not hold and n falls to 5 - 20."""
    program = get_program(related)
    ranges = analyse(program, "choose", {"n": (12, 12), "k": (5, 5), "s": (20, 20)})
    assert ranges.differences["n-k"] == (0, 7)
    assert ranges.params["n"] == (1, 12)
    assert _params(root_typed(program, "choose", (12, 5, 20)), "choose")["n"] == "int16"
    ranges = analyse(program, "choose", {"n": (5, 5), "k": (12, 12), "s": (20, 20)})
    assert ranges.params["n"][0] <= 5 - 20
    ranges = analyse(program, "gap", {"a": (9, 9), "b": (2, 2), "s": (30, 30)})
    assert ranges.differences["a-b"] == (0, 7)
    assert ranges.params["a"] == (2, 9) and ranges.params["b"] == (2, 9)


# ------------------------------------------------------------------ the unannotated twins
RETURNED = {"fib": "count", "nqueens": "solutions", "uts": "nodes", "graphcol": "colourings",
            "knapsack": "best", "parentheses": "count", "binomial": "count",
            "minmax": "xwins", "nqueens_board": "solutions", "knapsack_bb": "best",
            "findmax": "largest"}
# what the analysis proves for the quick presets' root calls (knapsack's weight and
# value grow at most 13 levels: the counter i bounds the depth; binomial's n stays
# above 0 only through n - k >= 0, the difference of two parameters)
NARROWED = {"fib": {"n": "int8"}, "parentheses": {"n": "int8", "opened": "int8",
                                                  "closed": "int8"},
            "binomial": {"n": "int8", "k": "int8"},
            "minmax": {"x": "uint16", "o": "uint16", "x_moves": "bool"},
            "knapsack": {"example": "int8", "n": "int8", "i": "int8", "weight": "int16",
                         "value": "int16"}}


@pytest.mark.parametrize("name", sorted(RETURNED))
def test_unannotated_twin_gives_the_benchmarks_answer(name):
    """benchmarks/natural/unannotated: the natural twins without annotations give the
    benchmarks' independent answers (NumPy back end: no builds)."""
    from revec.bench.answers import expected
    from revec.bench.presets import PRESETS

    preset = PRESETS[name]["quick"]
    program = get_program(ROOT / "benchmarks" / "natural" / "unannotated" / f"{name}.py")
    res = run_loaded(program, name, preset.root_args, backend="numpy", workers=1)
    want = expected(name, preset.args)
    got = {**res.reducers, RETURNED[name]: res.result}
    assert {k: got[k] for k in want} == want
    if name in NARROWED:
        assert _params(root_typed(program, name, preset.root_args), name) == NARROWED[name]


# ------------------------------------------------------------------ demanded bits
# d grows by a factor of 8 a level (past 32 bits at depth 11), but low's every use of it
# sees only its low 8 bits (d & 0xFF, and the spawns' (d << 3) ^ d ^ 5 and (d << 1) | 1
# passed on to the same uses): d is held in a uint8 that wraps, Python's value modulo
# 256.  Each other task adds one use that sees d's high bits -- a right shift, a
# comparison, the returned value, a division, an index -- so d keeps a type that holds
# every value it takes.
DEMAND = """
import numpy as np

from revec import task

TABLE = np.array([3, 1, 4, 1, 5], dtype=np.int64)

@task
def low(n, d, acc):
    if n == 0:
        return acc + (d & 0xFF)
    return (low(n - 1, (d << 3) ^ d ^ 5, (acc + (d & 0xFF)) & 0xFFF)
            + low(n - 1, (d << 1) | 1, acc))

@task
def shifted(n, d, acc):
    if n == 0:
        return acc + ((d >> 9) & 0xFF)
    return (shifted(n - 1, (d << 3) ^ d ^ 5, (acc + (d & 0xFF)) & 0xFFF)
            + shifted(n - 1, (d << 1) | 1, acc))

@task
def compared(n, d, acc):
    if n == 0:
        return acc + (d & 0xFF) + (1 if (d << 2) > 5000 else 0)
    return (compared(n - 1, (d << 3) ^ d ^ 5, (acc + (d & 0xFF)) & 0xFFF)
            + compared(n - 1, (d << 1) | 1, acc))

@task
def returned(n, d, acc):
    if n == 0:
        return acc + d
    return (returned(n - 1, (d << 3) ^ d ^ 5, (acc + (d & 0xFF)) & 0xFFF)
            + returned(n - 1, (d << 1) | 1, acc))

@task
def divided(n, d, acc):
    if n == 0:
        return acc + ((d // 3) & 0xFF)
    return (divided(n - 1, (d << 3) ^ d ^ 5, (acc + (d & 0xFF)) & 0xFFF)
            + divided(n - 1, (d << 1) | 1, acc))

@task
def indexed(n, d, acc):
    if n == 0:
        return acc + TABLE[d % 5]
    return (indexed(n - 1, (d << 3) ^ d ^ 5, (acc + (d & 0xFF)) & 0xFFF)
            + indexed(n - 1, (d << 1) | 1, acc))
"""
NEEDS_HIGH_BITS = ("shifted", "compared", "returned", "divided", "indexed")


@pytest.fixture(scope="module")
def demand(tmp_path_factory):
    return _module(tmp_path_factory.mktemp("demand"), "demand", DEMAND)


def _holds(program, task, args, name):
    """The type of ``name`` holds every value it takes (by the analysis), or wraps."""
    from revec.frontend.python import roots

    t = program.tasks[task]
    got = analyse(root_typed(program, task, args, narrow=False), task,
                  roots._root_intervals(t, roots._positions(t), args)).params[name]
    info = np.iinfo(next(p.ty.dtype for p in t.params if p.name == name))
    return info.min <= got[0] and got[1] <= info.max


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=st.sampled_from(("low", *NEEDS_HIGH_BITS)), n=st.integers(0, 9),
       d=st.integers(0, 255), acc=st.integers(0, 4095))
def test_low_bits_narrowed_equals_int64_and_plain_python(demand, task, n, d, acc):
    """d wraps in a uint8 only in low (every use sees its low 8 bits); the narrowed
    program gives the int64 program's and plain Python's results (NumPy back end)."""
    program = get_program(demand)
    args = (n, d, acc)
    plain = plain_call(demand, task, *args)
    wide = run_loaded(program, task, args, backend="numpy", narrow=False)
    narrow = run_loaded(program, task, args, backend="numpy")
    assert narrow.result == wide.result == plain
    typed = root_typed(program, task, args)
    if task == "low":
        assert _params(typed, task)["d"] == "uint8"
    else:
        assert _holds(typed, task, args, "d")


def test_a_use_of_the_high_bits_keeps_the_whole_value(demand):
    """At depth 11, d outgrows 32 bits: low holds it in a uint8 (its value modulo 256),
    the others in int64; and the re-check rejects a uint8 d in every one of them (it
    never relies on the candidates: forced, the narrowing is refused)."""
    from revec.frontend.python import roots

    program = get_program(demand)
    args = (11, 7, 0)
    assert _params(root_typed(program, "low", args), "low") == {
        "n": "int8", "d": "uint8", "acc": "int16"}
    for task in NEEDS_HIGH_BITS:
        assert _params(root_typed(program, task, args), task)["d"] == "int64", task
        ref = root_typed(program, task, args, narrow=False)
        t = ref.tasks[task]
        root = roots._root_intervals(t, roots._positions(t), args)
        rr = analyse(ref, task, root)
        specs = dict(program.untyped[task])
        for ty in (np.uint8, np.uint16, np.uint32):
            assert roots._attempt(ref, task, specs, {"d": np.dtype(ty)}, root, {}, rr) is None
        assert roots._attempt(ref, task, specs, {"d": np.dtype(np.int64)}, root, {},
                              rr) is not None
    ref = root_typed(program, "low", args, narrow=False)
    t = ref.tasks["low"]
    root = roots._root_intervals(t, roots._positions(t), args)
    assert roots._attempt(ref, "low", dict(program.untyped["low"]), {"d": np.dtype(np.uint8)},
                          root, {}, analyse(ref, "low", root)) is not None


@pytest.mark.parametrize("backend", ["c", "numba"])
def test_low_bits_and_twins_on_the_compiled_back_ends(demand, backend):
    """The wrapping uint8 of low, the uint16 diagonals of the nqueens twin, minmax's
    uint16 boards and nqueens_board's int8 slots give plain Python's results compiled."""
    low = get_program(demand)
    assert run_loaded(low, "low", (11, 7, 0), backend=backend, workers=1).result == \
        plain_call(demand, "low", 11, 7, 0)
    twins = ROOT / "benchmarks" / "natural" / "unannotated"
    for name, args in (("nqueens", (9, 0, 0, 0, 0)), ("nqueens_board", (6,)),
                       ("minmax", (0x69, 0x9600, True))):
        program = get_program(twins / f"{name}.py")
        res = run_loaded(program, name, args, backend=backend, workers=1)
        wide = run_loaded(program, name, args, backend="numpy", narrow=False)
        plain = plain_call(twins / f"{name}.py", name,
                           *(np.int64(a) if type(a) is int else a for a in args))
        assert res.result == wide.result == plain, name
        assert res.reducers == wide.reducers, name


def test_twins_narrowed_as_annotated():
    """The unannotated nqueens holds its masks in uint16 as the annotated one does (d1,
    shifted left past the board, wraps: only its low 16 bits are ever read, through
    ``& ((1 << n) - 1)``), minmax its boards in uint16 (~(x | o) equal modulo 2**16,
    then masked), nqueens_board its board's slots in int8 (from the values placed in
    them: col in range(n))."""
    from revec.bench.presets import PRESETS

    twins = ROOT / "benchmarks" / "natural" / "unannotated"
    want = {"nqueens": {"row": "int8", "cols": "uint16", "d1": "uint16", "d2": "uint16"},
            "minmax": {"x": "uint16", "o": "uint16"}}
    for name, types in want.items():
        program = get_program(twins / f"{name}.py")
        got = _params(root_typed(program, name, PRESETS[name]["default"].root_args), name)
        assert {k: got[k] for k in types} == types, name
    program = get_program(twins / "nqueens_board.py")
    t = root_typed(program, "nqueens_board", (12,)).tasks["nqueens_board"]
    assert [pa.ty.dtype.name for pa in t.private] == ["int8"]
    assert {p.ty.dtype.name for p in t.params if p.name.startswith("board_")
            and p.name != "board_len"} == {"int8"}
    assert len(t.private[0].fields) == 12  # (checked with the root's capacity)

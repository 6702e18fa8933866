"""Expressions the checker accepts however deep: long operator chains (a 1,000-term sum,
as the mutation fuzzer writes one) compile and run on the C and numba back ends with
the plain Python run's answer (revec/emit/chains.py writes them flat)."""

from __future__ import annotations

from pathlib import Path

import pytest

from revec.api import run_program

HEADER = """import numpy as np

from revec import Reducer, reduce, spawn, task

total = Reducer(np.int64, "sum")
small = Reducer(np.int64, "sum")
bits = Reducer(np.uint64, "sum")
f32 = Reducer(np.float32, "max")  # (a sum would depend on the order)
f64 = Reducer(np.float64, "max")
sums = Reducer(np.float64, "max")
hits = Reducer(np.int64, "sum")
picked = Reducer(np.int64, "sum")


@task
def walk(n: np.int32 = 9, x: np.int32 = 12345, acc: np.float64 = 1.5):
    if n <= 0:
        u = np.uint16(x)
        b = np.int8(x)
        w = np.uint64(x) * np.uint64(2654435761)
        g = np.float32(x) / np.float32(7.0)
        d = np.float64(x) / 3.0
"""


def chain(op: str, terms: list[str], count: int) -> str:
    return f" {op} ".join(terms[i % len(terms)] for i in range(count))


def program() -> str:
    ints = chain("+", ["x", "(x >> 1)", "(x * 7)", "n"], 1000)
    # the fuzzer's float mutant: a sum of a float64 parameter is a Python float chain
    floats = chain("+", ["(acc)", "(acc * 0.5)"], 1000)
    u16 = "u" + "".join(f" {'+' if i % 3 else '-'} {t}"
                        for i, t in zip(range(40), ["u", "np.uint16(40000)", "(u >> 2)"] * 14))
    i8 = chain("*", ["b", "np.int8(3)", "b"], 20)
    xor = chain("^", ["w", "(w >> np.uint64(7))", "(w << np.uint64(3))"], 31)
    ior = chain("|", ["(w & np.uint64(255))", "(w >> np.uint64(60))"], 20)
    fl32 = chain("+", ["g", "(g * g)", "np.float32(0.1)"], 50)
    fl64 = "d" + "".join(f" {'*' if i % 2 else '/'} {c}" for i, c in
                         zip(range(40), ["1.0001", "0.9997", "d", "3.0"] * 10))
    both = chain("and", [f"(x % {k} != {k - 1})" for k in range(2, 40)], 38)
    either = chain("or", [f"(x % {k} == 1)" for k in range(2, 40)], 38)
    arms = " ".join(f"{k * 3} if x % 24 == {k} else" for k in range(20)) + " -1"
    body = [
        f"reduce(total, {ints})",
        f"reduce(small, {u16})",
        f"reduce(small, {i8})",
        f"reduce(bits, {xor})",
        f"reduce(bits, {ior})",
        f"reduce(f32, {fl32})",
        f"reduce(f64, {fl64})",
        f"reduce(sums, {floats})",
        f"if {both}:\n            reduce(hits, 1)",
        f"if {either}:\n            reduce(hits, 100)",
        f"reduce(picked, {arms})",
    ]
    return HEADER + "".join(f"        {line}\n" for line in body) + """    else:
        spawn(walk, n - 1, x * 3 + n, acc * 1.25)
        spawn(walk, n - 2, x ^ n, acc - 0.75)
"""


@pytest.fixture(scope="module")
def deep_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("deep") / "deep_chains.py"
    path.write_text(program())
    return path


@pytest.fixture(scope="module")
def want(deep_program: Path) -> dict[str, object]:
    return run_program(deep_program, "walk", (), variant="seq").reducers


@pytest.mark.parametrize(("variant", "backend"), [("bfs", "c"), ("blocked", "numba")])
def test_long_chains_compile_and_agree(deep_program: Path, want: dict[str, object],
                                       variant: str, backend: str) -> None:
    got = run_program(deep_program, "walk", (), variant=variant, backend=backend,
                      block_size=16).reducers
    assert got == want
    # the plain run itself did the work: every chain was evaluated at the leaves
    assert want["hits"] != 0 and want["picked"] != 0 and want["total"] != 0

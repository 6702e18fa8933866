"""Python idioms as people write them: ``a if a > b else b`` as a max form,
``max(v + f(...), f(...))`` (a local term on one call), loops over
literal tuples, a return shared after ``if``/``else``; each task's compiled result
equals plain Python's, on the C and numba back ends (one program, small inputs)."""

from __future__ import annotations

import textwrap

import pytest

from revec.api import get_program, run_loaded
from tests.support.plain import plain_call

PROGRAM = """
import numpy as np

from revec import task

W = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], dtype=np.int64)
V = np.array([2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4], dtype=np.int64)


@task
def pick(i, n):
    # the best sum of W over positions i.. taken with a gap after each (a local term
    # inside the max, on one call only)
    if i >= n:
        return 0
    return max(W[i] + pick(i + 2, n), pick(i + 1, n))


@task
def knap(i, cap):
    # 0/1 knapsack over 11 items: an item taken only where it fits
    if i == 11:
        return 0
    skip = knap(i + 1, cap)
    if W[i] <= cap:
        return max(V[i] + knap(i + 1, cap - W[i]), skip)
    return skip


@task
def height(n):
    # the height of the tree whose node n has children n // 2 and n // 3
    if n < 2:
        return 0
    a = height(n // 2)
    b = height(n // 3)
    return 1 + (a if a > b else b)


@task
def shallow(n):
    # the shortest root-to-leaf path of the same tree (min, branches the other way)
    if n < 2:
        return 0
    a = shallow(n // 2)
    b = shallow(n // 3)
    return 1 + (b if a >= b else a)


@task
def steps(n):
    # ways to climb n stairs by 1, 2 or 3 (a loop over a literal tuple)
    if n <= 0:
        return 1 if n == 0 else 0
    total = 0
    for t in (1, 2, 3):
        total += steps(n - t)
    return total


@task
def grid(n, m):
    # nested literal loops (lists and tuples, a negative item): paths moving
    # (+1, 0), (+1, +1) or (+1, -1) from column m, staying inside 0..3, for n steps
    if n == 0:
        return 1
    total = 0
    for dx in (1,):
        for dy in [-1, 0, 1]:
            if 0 <= m + dy <= 3:
                total += grid(n - dx, m + dy)
    return total


@task
def shared(n):
    # one return after if / elif / else
    if n < 2:
        r = n
    elif n % 2 == 0:
        r = shared(n - 1) + shared(n - 2)
    else:
        r = shared(n - 1) + 2 * shared(n - 2)
    return r
"""

CASES = [("pick", (0, 11)), ("knap", (0, 12)), ("height", (1000,)), ("shallow", (1000,)), ("steps", (12,)), ("grid", (7, 1)),
         ("shared", (14,))]


@pytest.fixture(scope="module")
def program_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("idioms") / "idioms.py"
    path.write_text(textwrap.dedent(PROGRAM))
    return path


@pytest.mark.parametrize("backend", ["c", "numba"])
@pytest.mark.parametrize("task, args", CASES, ids=[c[0] for c in CASES])
def test_idiom_gives_plain_pythons_result(program_file, task, args, backend):
    res = run_loaded(get_program(program_file), task, args, backend=backend, workers=1)
    want = plain_call(program_file, task, *args)
    assert res.result == want


def test_max_form_is_a_max_reduction(program_file):
    """``a if a > b else b`` over children's results is the max form (a max reducer),
    not a select, which could not become a reduction."""
    program = get_program(program_file)
    assert program.reducers[program.tasks["height"].result].op == "max"
    assert program.reducers[program.tasks["shallow"].result].op == "min"
    assert program.reducers[program.tasks["knap"].result].op == "max"

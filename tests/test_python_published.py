"""Recursive Python as it is published: a file without ``@task`` or annotations, whose
module-level functions call themselves, runs as it is (each such function is a task).
The idioms of the held-out corpus (reports/corpus/python_published.md): base cases as
an ``if``/``elif`` chain before the recursion, ``a, b = b, a`` swaps, ``if not xs:`` on a
list, lists and ``functools`` caches.  Each result equals plain Python's (the module run
as an ordinary import), on the C and numba back ends; the constructs revec does not
take (methods, nested recursive functions) are located errors."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from revec.api import get_program, run_loaded
from revec.errors import RevecError
from tests.support.plain import plain_call

# no revec import, no decorator, no annotation: as a textbook or a tutorial has it
PROGRAM = """
import functools


def climb(n):
    # ways up n stairs taking 1, 2 or 3 at a time; the base cases one elif chain
    if n == 1:
        return 1
    elif n == 2:
        return 2
    elif n == 3:
        return 4
    return climb(n - 1) + climb(n - 2) + climb(n - 3)


def euclid_steps(a, b):
    # division steps of Euclid's algorithm, the larger number first
    if a < b:
        a, b = b, a
    if b == 0:
        return 0
    return 1 + euclid_steps(b, a % b)


def fib_tree(n):
    # every node of the call tree adds the n-th Fibonacci number, found by a loop
    x, y = 0, 1
    for _ in range(n):
        x, y = y, x + y
    if n < 2:
        return x
    return x + fib_tree(n - 1) + fib_tree(n - 2)


def total(xs):
    # the sum of a list, head plus the rest
    if not xs:
        return 0
    return xs[0] + total(xs[1:])


def best(cap, weights, values, n):
    # 0/1 knapsack over the first n items
    if n == 0 or cap == 0:
        return 0
    if weights[n - 1] > cap:
        return best(cap, weights, values, n - 1)
    else:
        return max(values[n - 1] + best(cap - weights[n - 1], weights, values, n - 1),
                   best(cap, weights, values, n - 1))


@functools.lru_cache(maxsize=None)
def paths(r, c):
    # lattice paths to (r, c), memoised as people do
    if r == 0 or c == 0:
        return 1
    return paths(r - 1, c) + paths(r, c - 1)


def not_recursive(n):
    return climb(n) + 1
"""

WEIGHTS = [3, 4, 2, 5, 1, 6]
VALUES = [30, 50, 15, 60, 10, 70]
CASES = [("climb", (14,)), ("euclid_steps", (610, 987)), ("fib_tree", (11,)),
         ("total", ([7, -2, 9, 4, 0, 11, 3],)), ("best", (10, WEIGHTS, VALUES, 6)),
         ("paths", (6, 5))]


@pytest.fixture(scope="module")
def program_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("published") / "published.py"
    path.write_text(textwrap.dedent(PROGRAM))
    return path


def test_the_self_recursive_functions_are_the_tasks(program_file):
    program = get_program(program_file)
    assert set(program.tasks) == {"climb", "euclid_steps", "fib_tree", "total", "best",
                                  "paths"}
    assert "not_recursive" not in program.tasks


# numba builds are slow: by default it runs the cases of the new idioms, all with --slow
NUMBA_SLOW = {"euclid_steps", "best"}


def _param(task: str, args: tuple) -> list:
    slow = [pytest.mark.slow] if task in NUMBA_SLOW else []
    return [pytest.param(task, args, "c", id=f"{task}-c"),
            pytest.param(task, args, "numba", id=f"{task}-numba", marks=slow)]


@pytest.mark.parametrize("task, args, backend",
                         [p for task, args in CASES for p in _param(task, args)])
def test_published_program_gives_plain_pythons_result(program_file, task, args, backend):
    res = run_loaded(get_program(program_file), task, args, backend=backend, workers=1)
    assert res.result == plain_call(program_file, task, *args)


def test_sequential_reference_runs_through_the_tasks(program_file):
    res = run_loaded(get_program(program_file), "euclid_steps", (987, 610), variant="seq")
    assert res.result == plain_call(program_file, "euclid_steps", 987, 610)


def test_command_line_takes_a_one_line_list_file(program_file, tmp_path):
    """``revec run file.py total xs.txt`` where xs.txt is one line ``7 -2 9``: a list."""
    data = tmp_path / "xs.txt"
    data.write_text("7 -2 9 4 0 11 3\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    p = subprocess.run([sys.executable, "-m", "revec", "run", str(program_file), "total",
                        str(data), "--backend", "c", "--workers", "1"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    want = plain_call(program_file, "total", [7, -2, 9, 4, 0, 11, 3])
    assert f"result = {want}\n" in p.stdout


def _error(tmp_path: Path, text: str) -> RevecError:
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(RevecError) as err:
        get_program(path)
    return err.value


def test_recursive_method_is_a_located_error(tmp_path):
    err = _error(tmp_path, """
        class Solution:
            def digits(self, n):
                if n < 10:
                    return n
                return n % 10 + self.digits(n // 10)
        """)
    assert (err.loc.line, err.loc.col) == (3, 5)
    assert "'digits' is a method of class 'Solution'" in err.message


def test_nested_recursive_function_is_a_located_error(tmp_path):
    err = _error(tmp_path, """
        def count(amount):
            def using(coin, left):
                if left <= 0 or coin > left:
                    return 1 if left == 0 else 0
                return using(coin, left - coin) + using(2 * coin, left)
            return using(1, amount)
        """)
    assert (err.loc.line, err.loc.col) == (3, 5)
    assert "'using' is nested in 'count'" in err.message


def test_file_without_recursion_says_so(tmp_path):
    err = _error(tmp_path, """
        def double(n):
            return 2 * n
        """)
    assert "no module-level function that calls itself" in err.message


def test_a_file_with_task_keeps_its_other_functions_helpers(tmp_path):
    """Only files without ``@task`` take their recursive functions as tasks: with one,
    another recursive function stays a helper, which may not recurse."""
    err = _error(tmp_path, """
        from revec import task

        def digits(n):
            if n < 10:
                return n
            return n % 10 + digits(n // 10)

        @task
        def fib(n):
            if n < 2:
                return n
            return fib(n - 1) + fib(n - 2) + digits(n)
        """)
    assert "helper 'digits' calls itself" in err.message

"""The Cilk C corpus (benchmarks/cilk/): each program's serial elision, built by gcc
from the file itself (its own main), gives the independent answer of the Python
benchmark (revec.bench.answers) on the quick inputs, and revec gives the same on every
variant and both back ends; the command line runs and transforms a .c program."""

from __future__ import annotations

import json

import pytest

from revec.api import get_program, run_loaded
from revec.bench.answers import expected
from revec.bench.cilk_corpus import CORPUS, cilk_args, cilk_path
from revec.bench.presets import preset
from revec.cli import main
from tests import cilk_oracle

NAMES = list(CORPUS)


@pytest.mark.skipif(cilk_oracle.gcc() is None, reason="no C compiler for the serial elision")
@pytest.mark.parametrize("name", NAMES)
def test_corpus_matches_serial_elision_and_answer(tmp_path, name):
    path = cilk_path(name)
    args = cilk_args(name, "quick")
    exe = cilk_oracle.build([path], tmp_path / name, opt="-O2")
    elision = int(cilk_oracle.run(exe, [str(a) for a in args])[0])
    answer = expected(name, preset(name, "quick").args)[CORPUS[name][1]]
    assert elision == answer, (name, elision, answer)
    program = get_program(path)
    assert run_loaded(program, name, args, variant="seq").result == answer
    for variant, b in (("bfs", None), ("blocked", 64), ("reexp", 16)):
        for backend in ("c", "numba"):
            res = run_loaded(program, name, args, variant=variant, block_size=b,
                             backend=backend)
            assert res.result == answer, (name, variant, backend, res.result, answer)


def test_cli_run_check_transform(tmp_path, capsys):
    path = str(cilk_path("fib"))
    assert main(["check", path]) == 0
    assert "task fib(n: int8) -> int64" in capsys.readouterr().out
    assert main(["run", path, "fib", "15", "--variant", "reexp", "--backend", "c",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"] == 610 and out["args"] == [15]
    assert main(["run", path, "fib", "12", "--variant", "seq"]) == 0
    assert "144" in capsys.readouterr().out
    target = tmp_path / "fib_gen.c"
    assert main(["transform", path, "--backend", "c", "-o", str(target)]) == 0
    assert target.read_text().strip()
    assert main(["transform", path, "--spawn-form"]) == 0
    assert "spawn(fib" in capsys.readouterr().out


@pytest.mark.skipif(cilk_oracle.gcc() is None, reason="no C compiler for the serial elision")
def test_bench_accepts_a_c_program(tmp_path, capsys):
    """revec bench PROG.c: the serial elision, C reexp and the Python program, answers
    checked, the report written under --out."""
    path = str(cilk_path("binomial"))
    code = main(["bench", path, "--size", "quick", "--repeats", "1", "--block-sizes", "64",
                 "--out", str(tmp_path), "--json"])
    assert code == 0
    recs = json.loads(capsys.readouterr().out)
    assert recs[0]["name"] == "binomial" and recs[0]["answer"] == 11440
    assert recs[0]["c_best_block"] == 64
    assert "| binomial | quick | 11440 |" in (tmp_path / "cilk.md").read_text()
    assert main(["bench", path, "--size", "quick", "--out", str(tmp_path)]) == 2


def test_narrowing_gives_the_python_programs_uniform_fields():
    """C computes binomial's 'n - 1' in int and converts it back to int8_t; computed in
    int8 it is the Python program's 'n - 1', a level-uniform field (read once per block)."""
    from revec.transforms.blocking import uniform_params

    for name in ("binomial", "nqueens", "knapsack"):
        c_task = get_program(cilk_path(name)).tasks[name]
        py_task = get_program(cilk_path(name).parent.parent / f"{name}.py").tasks[name]
        assert uniform_params(c_task) == uniform_params(py_task), name
    assert uniform_params(get_program(cilk_path("binomial")).tasks["binomial"]) == {"n"}

"""The generated C of the eight benchmarks compiles warning-free under gcc -Wall -Werror."""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from revec.backends.c_codegen import generate_c_module
from revec.bench.presets import BENCHMARKS
from revec.frontend import load_program

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = [*(ROOT / "benchmarks" / f"{b}.py" for b in BENCHMARKS),
            ROOT / "tests" / "programs" / "lanes.py", ROOT / "revec" / "demos" / "pathsum.py"]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_generated_c_is_warning_free(tmp_path: Path, path: Path) -> None:
    flags = ("-O2", "-march=native")
    program = load_program(path)
    for task in program.tasks:
        src = tmp_path / f"{path.stem}_{task}.c"
        src.write_text(generate_c_module(program, task))
        for scalar in ((), ("-DRV_SCALAR_SPLIT",)):
            r = subprocess.run(["gcc", "-Wall", "-Werror", "-fsyntax-only", *flags, *scalar,
                                f"-I{sysconfig.get_paths()['include']}", str(src)],
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0 and r.stderr == "", r.stderr[:3000]

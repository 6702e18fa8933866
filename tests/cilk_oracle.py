"""gcc's serial elision of a Cilk C file: the oracle the C front end is checked against,
built and run without revec (``cilk_spawn`` and ``cilk_sync`` defined away, an empty
``cilk/cilk.h`` on the include path)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ELISION = ["-Dcilk_spawn=", "-Dcilk_sync="]
CILK5_ELISION = ["-Dcilk=", "-Dspawn=", "-Dsync="]


def gcc() -> str | None:
    return shutil.which("gcc") or shutil.which("cc")


def include_dir(folder: Path) -> Path:
    inc = folder / "elision-include"
    (inc / "cilk").mkdir(parents=True, exist_ok=True)
    (inc / "cilk" / "cilk.h").write_text("/* serial elision: no Cilk runtime */\n")
    return inc


def build(sources: list[Path], out: Path, *, cilk5: bool = False, extra: tuple[str, ...] = (),
          opt: str = "-O1") -> Path:
    """Compile the serial elision of ``sources`` into the executable ``out``."""
    cc = gcc()
    assert cc is not None
    cmd = [cc, opt, "-fwrapv", "-pthread", "-I", str(include_dir(out.parent)), *ELISION,
           *(CILK5_ELISION if cilk5 else []), *extra, *map(str, sources), "-o", str(out),
           "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"gcc failed on the serial elision:\n{proc.stderr}"
    return out


def run(exe: Path, args: list[str] | tuple[str, ...] = ()) -> list[str]:
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()

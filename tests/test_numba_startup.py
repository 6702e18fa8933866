"""A process whose caches are warm compiles nothing before or during its numba runs.

numba compiles the methods of a ``numba.typed.List`` used from the interpreter in every
process (none of them is cached): building a run's lists that way cost each new process
about 3 s before its first numba run.  The runtime builds its lists in cached compiled
functions instead (:func:`revec.runtime.numba_support.bytes_list`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import json
from numba.core import event
from revec.api import run_program

compiled = []


class Compiles(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        d = ev.data or {{}}
        compiled.append(d["dispatcher"].py_func.__qualname__ if "dispatcher" in d else "?")


event.register("numba:compile", Compiles())
counts = [run_program({fib!r}, "fib", (12,), backend="numba", workers=w).reducers["count"]
          for w in (1, 2)]
print(json.dumps({{"compiled": compiled, "counts": counts}}))
"""


def test_warm_process_compiles_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REVEC_CACHE_DIR": str(tmp_path / "cache"),
           "REVEC_NUMBA_CACHE": "1"}
    code = SCRIPT.format(fib=str(ROOT / "benchmarks" / "fib.py"))
    runs = []
    for _ in range(2):  # the first process fills the caches, the second only loads
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, timeout=600)
        assert res.returncode == 0, res.stderr
        runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
    assert "kernel" in runs[0]["compiled"]  # the listener sees compiles
    assert runs[1]["compiled"] == []
    assert runs[0]["counts"] == runs[1]["counts"] == [144, 144]

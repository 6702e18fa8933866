"""Run a command in a child process under an address-space limit and report how it
ended and its peak resident memory.

``python -m tests.support.limited LIMIT TIMEOUT CMD...`` prints one JSON line:
``returncode`` (None after the timeout), ``stderr``, ``seconds`` and ``maxrss`` (bytes:
``getrusage(RUSAGE_CHILDREN)`` of this wrapper, whose only child is the command, so the
figure is the command's own peak and no other process's).  The limit
(``RLIMIT_AS``, set in the child before it starts) keeps a runaway run from taking the
machine down; :func:`limited_run` is the tests' way in.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _main(argv: Sequence[str]) -> None:
    limit, timeout, cmd = int(argv[0]), float(argv[1]), list(argv[2:])

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    t0 = time.perf_counter()
    code: int | None
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=limit_memory,
                           timeout=timeout)
        code, err = r.returncode, r.stderr
    except subprocess.TimeoutExpired as stop:
        code = None
        err = stop.stderr.decode(errors="replace") if isinstance(stop.stderr, bytes) else ""
    seconds = time.perf_counter() - t0
    maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux
    print(json.dumps({"returncode": code, "stderr": err, "seconds": seconds,
                      "maxrss": maxrss}))


def limited_run(cmd: Sequence[str], limit: int, timeout: float = 300,
                env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``cmd`` under an address-space limit of ``limit`` bytes (see the module)."""
    r = subprocess.run([sys.executable, "-m", "tests.support.limited", str(limit),
                        str(timeout), *cmd], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ if env is None else env), timeout=timeout + 60)
    assert r.returncode == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    return out


if __name__ == "__main__":
    _main(sys.argv[1:])

"""Benchmarks behind ``revec bench``: a registry of named runners.

A runner is ``run(options: BenchOptions) -> dict`` (JSON-serialisable results); it writes
its own report under ``options.reports_dir``.  Entries may be given lazily as
``"module:function"`` strings so that ``revec bench --help`` imports nothing heavy.  Add a
benchmark with one line here, or call :func:`register` from its module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from revec.errors import RevecError


@dataclass
class BenchOptions:
    """What the command line passes to every runner."""

    size: str | None = None          # runner-specific size spec (compaction: "16K,1M")
    reports_dir: Path = field(default_factory=lambda: Path("reports"))
    repeats: int | None = None       # None: the runner's default
    progress: bool = True            # tqdm progress bars on stderr
    write_report: bool = True


BenchRunner = Callable[[BenchOptions], dict[str, Any]]

REGISTRY: dict[str, str | BenchRunner] = {
    "compaction": "revec.bench.compaction:run",
}


def register(name: str, runner: str | BenchRunner) -> None:
    """Add (or replace) a benchmark."""
    REGISTRY[name] = runner


def names() -> list[str]:
    return list(REGISTRY)


def get_runner(name: str) -> BenchRunner:
    """The runner of a benchmark (importing it if it was registered lazily)."""
    try:
        entry = REGISTRY[name]
    except KeyError:
        raise RevecError(f"unknown benchmark {name!r}; known: {', '.join(REGISTRY)}") from None
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module), attr)
        REGISTRY[name] = entry
    return entry

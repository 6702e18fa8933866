"""The plain-Python answer of a test's program: its file run as written (Python ints, no
revec types, no compilation), the oracle the Python front-end tests compare with."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any


def plain_call(path: Path, name: str, *args: Any) -> Any:
    """``name(*args)`` of the module at ``path``, loaded afresh."""
    spec = importlib.util.spec_from_file_location(f"_plain_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)(*args)

"""The back ends by name: what ``--backend`` accepts and what the API builds.

A back end is one small module defining ``BACKEND``, an object of the :class:`Backend`
protocol (``revec/backends/c_backend.py``, ``numba_backend.py``), plus one line in
:data:`MODULES`.  The API (:func:`revec.api.compiled_task`, ``resolve_backend``,
``BACKENDS``) and the command line (``revec run --backend``, ``revec transform
--backend``, ``revec bench --backends``, ``revec demo --backend``) look back ends up
here, so adding one touches nothing else.

Importing this module, and listing or getting a back end, stays cheap (the command
line's parser is built from :func:`names`): a back-end module imports its compiler
(numba, cffi) and its code generator only inside ``unavailable``, ``generate`` and
``build``.  A module listed in :data:`MODULES` that does not exist (yet) is not a back
end: :func:`names` leaves it out.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from typing import TYPE_CHECKING, Any, Protocol

from revec.errors import RevecError

if TYPE_CHECKING:
    from revec import ir
    from revec.runtime.stats import RunStats
    from revec.transforms.schedule import Schedule


class CompiledTask(Protocol):
    """A task compiled by a back end (built once per process, then run many times)."""

    def run(self, args: tuple[Any, ...], schedule: Schedule, max_memory: int = 0,
            workers: int = 1) -> tuple[dict[str, Any], RunStats]:
        """Run one schedule from the root arguments ``args`` on ``workers`` threads;
        ``max_memory`` bounds the bytes of thread frames (0: none).  Returns the
        reducers' values and the run's statistics."""
        ...


class Backend(Protocol):
    """A code generator and builder for checked task programs."""

    name: str          # "c", "numba", "numpy": the --backend value
    suffix: str        # file suffix of the generated text: ".c", ".py"
    target: str        # the kernel plans it prints: a name of kernel_plan.TARGETS

    def unavailable(self) -> str | None:
        """None if this back end can build and run on this machine, else why not (one
        line, for the user)."""
        ...

    def generate(self, program: ir.Program, task: str, compaction: str | None = None
                 ) -> str:
        """The generated source of ``task`` (what ``revec transform`` writes)."""
        ...

    def build(self, program: ir.Program, task: str, compaction: str | None = None
              ) -> CompiledTask:
        """``task`` compiled and loaded; ``compaction`` picks the block split
        (``table``, the default, or ``scalar``)."""
        ...


# name -> the module defining its BACKEND.  One line per back end.
MODULES: dict[str, str] = {
    "c": "revec.backends.c_backend",
    "numba": "revec.backends.numba_backend",
    "numpy": "revec.backends.numpy_backend",
}

# what ``auto`` tries, in order: the first available one (numpy is never chosen by auto)
AUTO_ORDER = ("c", "numba")

AUTO = "auto"


@functools.cache
def _exists(module: str) -> bool:
    """The module can be found (without importing it: listing stays cheap)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def names() -> tuple[str, ...]:
    """The registered back ends whose module exists, in registration order."""
    return tuple(name for name, module in MODULES.items() if _exists(module))


def choices() -> tuple[str, ...]:
    """What ``--backend`` accepts: ``auto`` and every back end."""
    return (AUTO, *names())


@functools.cache
def get(name: str) -> Backend:
    """The back end called ``name`` (not ``auto``: see :func:`resolve`)."""
    known = names()
    if name not in known:
        raise RevecError(f"unknown back end {name!r}; expected one of {', '.join(known)}")
    backend: Backend | None = getattr(importlib.import_module(MODULES[name]), "BACKEND", None)
    if backend is None or backend.name != name:
        raise RevecError(f"{MODULES[name]} does not define BACKEND for the back end "
                         f"{name!r}")
    return backend


def resolve(name: str) -> Backend:
    """The back end ``name`` stands for: itself, or for ``auto`` the first of
    :data:`AUTO_ORDER` that is available on this machine (C when a working compiler is
    found, else numba)."""
    if name != AUTO:
        if name not in names():
            raise RevecError(f"unknown back end {name!r}; expected one of "
                             f"{', '.join(choices())}")
        return get(name)
    reasons = []
    for candidate in AUTO_ORDER:
        if candidate not in names():
            continue
        backend = get(candidate)
        why = backend.unavailable()
        if why is None:
            return backend
        reasons.append(f"{candidate}: {why}")
    raise RevecError("no back end is available on this machine (" + "; ".join(reasons)
                     + ")")

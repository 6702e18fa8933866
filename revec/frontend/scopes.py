"""Block scopes: source names -> IR locals, for a language whose declarations live in
nested blocks (C).

A function's IR locals are one flat namespace, and the generated Python (the numba back
end, the sequential reference) reserves some names; so every declaration gets a fresh
IR name: the source name where that is free, else ``name_2``, ``name_3``, ...; a reserved
name (or one starting with revec's ``_rv`` prefix) gets the suffix ``_c`` first.  A
Python function has one scope whose names are the IR names, so the Python front end
needs none of this.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable

# identifiers the generated Python (numba back end, sequential reference) reserves
RESERVED = set(keyword.kwlist) | {"np", "range", "min", "max", "abs", "int", "float", "bool",
                                  "len", "print", "math", "numba", "True", "False", "None"}


class BlockScopes:
    """The blocks open at a point of a function, innermost last."""

    def __init__(self, taken: Callable[[str], bool]) -> None:
        self.blocks: list[dict[str, str]] = [{}]
        self.used: set[str] = set()
        self.taken = taken  # names of the program's own (functions, globals)
        self.sources: dict[str, str] = {}  # IR name -> source name, where they differ

    def open(self) -> None:
        self.blocks.append({})

    def close(self) -> None:
        self.blocks.pop()

    def in_block(self, name: str) -> bool:
        """``name`` is declared in the innermost block."""
        return name in self.blocks[-1]

    def declare(self, name: str) -> str:
        """Declare ``name`` in the innermost block: its fresh IR name."""
        irname = self.fresh(name)
        self.blocks[-1][name] = irname
        if irname != name:
            self.sources[irname] = name
        return irname

    def bind(self, name: str, target: str) -> None:
        """``name`` stands for ``target`` (not an IR local) in the innermost block."""
        self.blocks[-1][name] = target

    def lookup(self, name: str) -> str | None:
        for block in reversed(self.blocks):
            if name in block:
                return block[name]
        return None

    def fresh(self, name: str) -> str:
        base = name if name not in RESERVED and not name.startswith("_rv") else f"{name}_c"
        out, i = base, 1
        while out in self.used or self.taken(out):
            i += 1
            out = f"{base}_{i}"
        self.used.add(out)
        return out

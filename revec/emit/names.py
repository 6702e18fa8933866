"""Names of generated identifiers that every printer shares (the generated modules'
legends list the rest)."""

from __future__ import annotations


def var(name: str) -> str:
    """The generated variable of a task's (or helper's) parameter, local or loop index
    ``name``: ``v_<name>`` (prefixed, so no user name collides with a generated one)."""
    return f"v_{name}"

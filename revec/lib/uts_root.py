"""The UTS root node's state, in plain Python (no numba).

Kept apart from :mod:`revec.lib.uts` so that the benchmark presets (and with them the
``revec`` command line's parser) can compute UTS root arguments without importing numba.
"""

from __future__ import annotations

import hashlib
import struct


def uts_root_state(root_id: int) -> tuple[int, int, int, int, int]:
    """The root node's state for UTS root id ``root_id`` (``-r``), as five words: the
    SHA-1 digest of 16 zero bytes and the id as a 4-byte big-endian integer (UTS 2.1)."""
    digest = hashlib.sha1(bytes(16) + struct.pack(">i", root_id)).digest()
    return struct.unpack(">5I", digest)

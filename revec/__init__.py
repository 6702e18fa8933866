"""revec: SIMD execution of recursive task-parallel programs (Ren et al., TOPC 2019)."""

import os

# numba formats an error message, with terminal colours by colorama, for each of the
# hundreds of overload candidates and global values it rejects while typing a kernel
# (about 450 per generated program); the colouring alone was about 5% of a kernel's
# compile (6 generated programs, 3 interleaved runs each, 2-core AMD EPYC: 5.04-6.33 s
# -> 4.75-5.05 s of CPU).  revec reports its own errors, so numba's need no colour; a
# user who sets the variable keeps their choice.  numba reads it when first imported.
os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")

from revec.lang import Reducer, Task, reduce, spawn, task  # noqa: E402

__all__ = ["Reducer", "Task", "reduce", "spawn", "task"]
__version__ = "0.1.0"

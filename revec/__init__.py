"""revec: SIMD execution of recursive task-parallel programs (Ren et al., TOPC 2019)."""

from revec.lang import Reducer, Task, reduce, spawn, task

__all__ = ["Reducer", "Task", "reduce", "spawn", "task"]
__version__ = "0.1.0"

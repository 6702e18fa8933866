"""The simulator's defaults, apart from it (no numba), for the command line's parser."""

DEFAULT_SIMD_WIDTH = 16  # Sec. 7.2 / 8
DEFAULT_BLOCK_SIZE = 64
DEFAULT_TRIALS = 100_000

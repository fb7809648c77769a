"""Keep freed large arrays in the process (glibc malloc settings).

A public-tree walk allocates and frees a few thousand [boards x hands] arrays
(0.5-2 MB each) per iteration. glibc serves blocks that large with fresh
`mmap`s (and trims the heap's top when they are freed), so every array is
page-faulted and zeroed by the kernel again: on Libratus subgame 1 that is
~150,000 page faults and ~20% of an iteration. `keep_freed_arrays()` raises
the mmap threshold to glibc's maximum (32 MiB on 64-bit) and stops trimming,
so freed blocks are reused. The process's peak memory is unchanged; memory is
not returned to the system until the process ends. A no-op (returns False)
off glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_done = False


def keep_freed_arrays() -> bool:
    """Sets glibc's M_MMAP_THRESHOLD to 32 MiB and M_TRIM_THRESHOLD to 1 GiB (once
    per process); True if the settings took effect."""
    global _done
    if _done:
        return True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    _done = bool(mallopt(_M_MMAP_THRESHOLD, 32 * 2**20)) and bool(mallopt(_M_TRIM_THRESHOLD, 2**30)) and bool(
        mallopt(_M_TOP_PAD, 64 * 2**20))  # fmt: skip
    return _done

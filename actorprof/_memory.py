"""Hand freed memory back to the operating system between big steps.

glibc's allocator keeps most of what a step frees: arrays of up to 32 MB
come from its heaps once a larger one was freed (the mmap threshold grows),
and only the top of a heap is given back. A step that built and dropped
millions of links (the physical trace at 65,536 PEs) leaves hundreds of MB
resident that the next step does not reuse, and the peak of a run of steps
grows with every step. ``malloc_trim(0)`` releases the free pages of every
heap; it costs milliseconds. Elsewhere (macOS, musl) this is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import sys
from collections.abc import Callable

__all__ = ["release_memory"]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


def release_memory() -> None:
    """Collect garbage cycles, then give the allocator's free pages back to the OS."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)

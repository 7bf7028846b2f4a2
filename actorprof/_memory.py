"""Hand freed memory back to the operating system between big steps.

glibc's allocator keeps most of what a step frees: arrays of up to 32 MB
come from its heaps once a larger one was freed (the mmap threshold grows),
and only the top of a heap is given back. A step that built and dropped
millions of links (the physical trace at 65,536 PEs) leaves hundreds of MB
resident that the next step does not reuse, and the peak of a run of steps
grows with every step. ``malloc_trim(0)`` releases the free pages of every
heap; it costs milliseconds. Elsewhere (macOS, musl) this is a no-op.

Within a step, :func:`free_large_blocks_at_once` (set by the CLI for its
whole run) keeps the threshold fixed, so that a freed array of 1 MB or more
is given back at once rather than at the step's end.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import sys
from collections.abc import Callable

__all__ = ["MMAP_THRESHOLD_BYTES", "free_large_blocks_at_once", "release_memory"]

#: Blocks of this size or more get their own mapping, unmapped when freed.
MMAP_THRESHOLD_BYTES = 1 << 20
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes.util  # not at import: the CLI imports this module on every command

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


@functools.cache
def _mallopt() -> Callable[[int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # the process's own symbols: no library search (find_library runs
        # ldconfig) at the start of every command
        mallopt: Callable[[int, int], int] = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return None
    return mallopt


def free_large_blocks_at_once() -> None:
    """Give every block of :data:`MMAP_THRESHOLD_BYTES` or more back to the OS when it is freed.

    glibc maps a block of its own only above a threshold that it raises, up
    to 32 MB, each time such a block is freed; from then on the arrays of a
    step come from its heaps, and what a step frees stays resident until
    :func:`release_memory`. Within a step it adds up: at 65,536 PEs the
    report's peaks were a few hundred MB of freed arrays above the live
    ones. A fixed threshold keeps every array of 1 MB or more mapped on its
    own, so that RSS follows what is held. Elsewhere (macOS, musl) a no-op.
    """
    mallopt = _mallopt()
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)


def release_memory() -> None:
    """Collect garbage cycles, then give the allocator's free pages back to the OS."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)

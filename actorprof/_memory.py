"""Hand freed memory back to the operating system between big steps.

glibc's allocator keeps most of what a step frees: arrays of up to 32 MB
come from its heaps once a larger one was freed (the mmap threshold grows),
and only the top of a heap is given back. A step that built and dropped
millions of links (the physical trace at 65,536 PEs) leaves hundreds of MB
resident that the next step does not reuse, and the peak of a run of steps
grows with every step. ``malloc_trim(0)`` releases the free pages of every
heap; it costs milliseconds. Elsewhere (macOS, musl) this is a no-op.

The collection before it walks every object the process holds: at 65,536
PEs a report holds up to a million (the accounting of 65,536 files per
kind), 0.1-0.3 s a walk, and a report walks 17 times. Inside
:func:`survivors_frozen` (the command line's commands) what survives a
collection is frozen (:func:`gc.freeze`), so the next one walks only what
was made since. A frozen object is still freed when its last reference
goes; only a cycle of frozen objects is kept, to the end of the command.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import sys
from collections.abc import Callable, Iterator

__all__ = ["release_memory", "survivors_frozen"]

_freezing = False


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
    if _freezing:
        gc.freeze()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@contextlib.contextmanager
def survivors_frozen() -> Iterator[None]:
    """While inside, :func:`release_memory` freezes what survives its collection
    (unfrozen at the end): for a process that runs one command, not for a
    library's caller, whose cycles made before would never be collected."""
    global _freezing
    _freezing = True
    try:
        yield
    finally:
        _freezing = False
        gc.unfreeze()

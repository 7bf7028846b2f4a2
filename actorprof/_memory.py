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

A read worker wants the opposite (:func:`pad_worker_heap`): its block loop
makes and drops arrays of a few MB thousands of times, and a heap that
gives its top back after each of them takes every page again from the
kernel (page faults were a fifth of a physical.txt read's CPU time).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import multiprocessing
import sys
from collections.abc import Callable, Iterator

__all__ = ["pad_worker_heap", "release_memory", "survivors_frozen", "trim_heap"]

_freezing = False


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    return _glibc("malloc_trim")


@functools.cache
def _mallopt() -> Callable[[int, int], int] | None:
    return _glibc("mallopt")


def _glibc(name: str) -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # the symbols the process has loaded (libc's among them): no search,
        # which runs ldconfig in a child process (2-3 ms, once per worker)
        libc = ctypes.CDLL(None)
        function: Callable[..., int] = getattr(libc, name)
    except (OSError, AttributeError):  # not glibc
        return None
    return function


#: glibc's ``mallopt`` parameters (malloc.h) and what a read worker sets:
#: the heap keeps 64 MB beyond its top when it grows or is trimmed, and
#: arrays of up to 32 MB (the largest threshold glibc takes) come from it.
M_TOP_PAD, M_MMAP_THRESHOLD = -2, -3
WORKER_HEAP = ((M_TOP_PAD, 64 << 20), (M_MMAP_THRESHOLD, 32 << 20))


@functools.cache
def pad_worker_heap() -> bool:
    """In a worker process (not the main one), keep freed memory for reuse.

    Every map step (logical, timeline, PAPI, physical) calls this first: in
    a read worker (:mod:`actorprof.engine`'s processes, a Dask worker), glibc then keeps
    up to 64 MB of freed heap for the next block instead of handing pages
    back and faulting them in again (10-20% of the CPU time of a read).
    The main process is left as it is: a notebook's, or a command's that
    draws figures after the read. Returns whether the settings were made
    (once per process; False elsewhere than glibc).
    """
    if multiprocessing.parent_process() is None:
        return False
    mallopt = _mallopt()
    if mallopt is None:
        return False
    return all(mallopt(option, value) == 1 for option, value in WORKER_HEAP)


def release_memory() -> None:
    """Collect garbage cycles, then give the allocator's free pages back to the OS."""
    gc.collect()
    if _freezing:
        gc.freeze()
    trim_heap()


def trim_heap() -> None:
    """Give the allocator's free pages back to the OS (no collection first:
    milliseconds, where a walk of a 65,536-PE run's objects takes 0.1-0.3 s)."""
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

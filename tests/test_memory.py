"""release_memory: collections between a command's steps walk only what is new."""

from __future__ import annotations

import gc
import weakref

from actorprof._memory import release_memory, survivors_frozen


class Node:
    """A container the collector tracks."""

    def __init__(self) -> None:
        self.other: object = None


def cycle() -> weakref.ref[Node]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_a_library_caller_s_heap_is_never_frozen() -> None:
    gc.unfreeze()
    release_memory()
    assert gc.get_freeze_count() == 0


def test_inside_a_command_survivors_are_frozen_and_new_cycles_collected() -> None:
    gc.unfreeze()
    kept = Node()
    with survivors_frozen():
        release_memory()
        frozen = gc.get_freeze_count()
        assert frozen > 0
        assert gc.is_tracked(kept)
        new = cycle()  # made after the freeze: the next collection frees it
        assert new() is not None
        release_memory()
        assert new() is None
        # a frozen object without a cycle still goes with its last reference
        gone = weakref.ref(kept)
        del kept
        assert gone() is None
    assert gc.get_freeze_count() == 0  # unfrozen at the end of the command


def test_cycles_frozen_inside_a_command_are_collected_after_it() -> None:
    gc.unfreeze()
    with survivors_frozen():
        old = cycle()
        a = old()
        release_memory()  # the cycle is alive (a holds it): frozen
        del a
        release_memory()
        assert old() is not None  # kept to the end of the command
    gc.collect()
    assert old() is None

"""Folder listings kept while a command runs, settled or not.

Apart from :mod:`actorprof.read._files` so that the CLI opens the scope
before any command without importing numpy (``actorprof logical --help``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Kept", "current", "listings_kept"]


class Kept:
    """The listings of folders not settled yet, by the keys of the recent
    listings of :mod:`~actorprof.read._files` (``listed``: its
    ``find_pe_files``; ``names``: its ``list_folder``)."""

    def __init__(self) -> None:
        self.listed: dict[Any, Any] = {}
        self.names: dict[Any, Any] = {}


_KEPT: Kept | None = None


def current() -> Kept | None:
    """The listings kept now (None: outside :func:`listings_kept`)."""
    return _KEPT


@contextmanager
def listings_kept() -> Iterator[None]:
    """Keep every folder listing until the end of the block, settled or not.

    A command lists a trace folder to find the trace (``holds_trace``), then
    to read it, then for compressed files; outside the block a folder
    changed in the last seconds (a trace a job just wrote) is listed anew
    each time, as a change within the timestamps' granularity may leave its
    mtime as it was. Within the block it is listed once: a folder changed
    meanwhile has another mtime (or inode) and is listed again; a change
    within the granularity is a file come after the first listing, which a
    command listing once does not see either.
    """
    global _KEPT
    before = _KEPT
    _KEPT = before if before is not None else Kept()
    try:
        yield
    finally:
        _KEPT = before

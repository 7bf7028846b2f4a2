"""Progress of long reads: what a read reports, and a line on stderr showing it.

A read (a ``<kind>_view`` function) takes any object with the three methods
of :class:`ProgressSink`: it says what it will read (:meth:`begin`), how far
it is (:meth:`update`) and when it is done (:meth:`close`). The library
never prints; the CLI passes a :class:`Progress`, which draws a line on
stderr only on a terminal, only when not quiet, and only once a read has
taken more than ``delay_s`` seconds, so short runs and logs stay clean.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TextIO, TypeVar

__all__ = ["Progress", "ProgressSink", "human_bytes", "track"]

T = TypeVar("T")


class ProgressSink(Protocol):
    """What a read tells about its progress (all counts cumulative)."""

    def begin(self, total_bytes: int, total_files: int) -> None: ...

    def update(self, done_bytes: int, done_files: int) -> None: ...

    def close(self) -> None: ...


def track(
    items: Iterable[T],
    progress: ProgressSink | None,
    *,
    planned: Callable[[], tuple[int, int]],
    done: Callable[[], tuple[int, int]],
    every_s: float = 0.1,
) -> Iterator[T]:
    """Yield ``items``, telling ``progress`` how far the read is after each.

    ``planned()`` (bytes, files) is asked once the first item has come (a
    reader lists its files when it starts), ``done()`` after an item at most
    every ``every_s`` seconds, and after the last: ``done()`` may cost a
    pass over the files read, and a run has tens of thousands of files.
    """
    if progress is None:
        yield from items
        return
    begun = False
    last = 0.0
    for item in items:
        if not begun:
            progress.begin(*planned())
            begun = True
        yield item
        now = time.monotonic()
        if now - last >= every_s:
            progress.update(*done())
            last = now
    if begun:
        progress.update(*done())


def human_bytes(n: float) -> str:
    """``1536`` -> ``"1.5 KB"`` (decimal units, as disk and network rates)."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # pragma: no cover


class Progress:
    """A :class:`ProgressSink` drawing one line on stderr: files, bytes, rate.

    Several reads may report to one line (``report`` reads every kind):
    their totals add up as they begin.
    """

    def __init__(
        self,
        *,
        enabled: bool,
        stream: TextIO | None = None,
        delay_s: float = 1.0,
        every_s: float = 0.25,
    ) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.total = 0
        self.total_files = 0
        self.delay_s = delay_s
        self.every_s = every_s
        self._base = (0, 0)  # bytes and files of the reads already closed
        self._done = (0, 0)
        self._start = time.monotonic()
        self._last = 0.0
        self._shown = False
        self._sized = True

    def begin(self, total_bytes: int, total_files: int) -> None:
        self._base = (self._base[0] + self._done[0], self._base[1] + self._done[1])
        self._done = (0, 0)
        self.total = self._base[0] + total_bytes
        self.total_files = self._base[1] + total_files
        # a read of files not stat'ed (planned by their count) tells no bytes:
        # the line then shows the share of the files read
        self._sized = self._sized and (total_bytes > 0 or not total_files)
        self.update(0, 0)  # a read that starts late (after imports, listing) shows at once

    def update(self, done_bytes: int, done_files: int) -> None:
        self._done = (done_bytes, done_files)
        if not self.enabled:
            return
        now = time.monotonic()
        elapsed = now - self._start
        if elapsed < self.delay_s or now - self._last < self.every_s:
            return
        self._last = now
        done = self._base[0] + done_bytes
        files = self._base[1] + done_files
        rate = done / elapsed if elapsed > 0 else 0.0
        if self._sized:
            pct = 100.0 * done / self.total if self.total else 100.0
            read = f"{human_bytes(done)} of {human_bytes(self.total)} ({pct:.0f} %)"
        else:  # files not stat'ed (a read planned by their count): their share
            pct = 100.0 * files / self.total_files
            read = f"{human_bytes(done)} ({pct:.0f} % of the files)"
        line = f"reading {files}/{self.total_files} files, {read}, {human_bytes(rate)}/s"
        self.stream.write("\r" + line.ljust(72))
        self.stream.flush()
        self._shown = True

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * 72 + "\r")
            self.stream.flush()
            self._shown = False

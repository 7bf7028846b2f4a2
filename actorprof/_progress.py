"""A progress line on stderr for long reads: files and bytes done, rate.

Shown only on a terminal, only when not quiet, and only once a read has
taken more than ``delay_s`` seconds, so short runs and logs stay clean.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO, TypeVar

__all__ = ["Progress", "human_bytes"]

T = TypeVar("T")


def human_bytes(n: float) -> str:
    """``1536`` -> ``"1.5 KB"`` (decimal units, as disk and network rates)."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # pragma: no cover


class Progress:
    """Report ``done()`` bytes of ``total`` while iterating."""

    def __init__(
        self,
        total: int,
        done: Callable[[], int],
        files: Callable[[], int],
        total_files: int,
        *,
        enabled: bool,
        stream: TextIO | None = None,
        delay_s: float = 1.0,
        every_s: float = 0.25,
    ) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.total = total
        self.done = done
        self.files = files
        self.total_files = total_files
        self.delay_s = delay_s
        self.every_s = every_s
        self._start = time.monotonic()
        self._last = 0.0
        self._shown = False

    def wrap(self, items: Iterable[T]) -> Iterator[T]:
        """Yield ``items``, updating the line after each."""
        try:
            for item in items:
                yield item
                self.update()
        finally:
            self.close()

    def update(self) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        elapsed = now - self._start
        if elapsed < self.delay_s or now - self._last < self.every_s:
            return
        self._last = now
        done = self.done()
        rate = done / elapsed if elapsed > 0 else 0.0
        pct = 100.0 * done / self.total if self.total else 100.0
        line = (
            f"reading {self.files()}/{self.total_files} files, "
            f"{human_bytes(done)} of {human_bytes(self.total)} ({pct:.0f} %), "
            f"{human_bytes(rate)}/s"
        )
        self.stream.write("\r" + line.ljust(72))
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * 72 + "\r")
            self.stream.flush()
            self._shown = False

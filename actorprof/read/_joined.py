"""Small whole files read straight into one buffer, a group at a time.

At 65,536 PEs each PE file is a few dozen lines: reading it costs more in
system calls and Python objects (a ``bytes`` per file, an ``fstat``, the
join) than in bytes. Here each file is read by one ``readv`` into its place
in a shared buffer, so a group of files costs an ``open``, a ``readv`` and a
``close`` per file, and one copy of the group's text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from ._files import BOM, FileStat, file_stat, small_file_text
from ._long import has_long_line

__all__ = ["JoinedFiles", "joined_small_files"]

_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
#: Above this ``limit``, a buffer of room for any file is not worth keeping.
_BUFFER_LIMIT = 16 * 1024 * 1024


@dataclass
class JoinedFiles:
    """Whole small files one after another in ``text``.

    ``at`` holds their positions among the paths given (ascending); file
    ``k``'s text is ``text[offsets[k]:offsets[k + 1]]``, ``lines[k]`` line
    ends in it. Each is what :func:`small_file_text` returns for the file.
    """

    text: bytes
    at: np.ndarray
    offsets: np.ndarray
    lines: np.ndarray

    def __len__(self) -> int:
        return len(self.at)

    def part(self, start: int, stop: int) -> JoinedFiles:
        """Files ``start:stop`` of the group."""
        a, b = int(self.offsets[start]), int(self.offsets[stop])
        return JoinedFiles(
            self.text[a:b],
            self.at[start:stop],
            self.offsets[start : stop + 1] - a,
            self.lines[start:stop],
        )


def joined_small_files(
    paths: Iterable[str], limit: int, group_bytes: int, stats: dict[int, FileStat] | None = None
) -> Iterator[JoinedFiles]:
    """Groups of the whole files among ``paths`` that :func:`small_file_text`
    reads (at most ``limit`` bytes, ending with a line end; the others are
    left out), each group of at least ``group_bytes`` bytes but the last.

    ``stats``: each file opened gets its :func:`file_stat` there, by
    position, taken before it is read (those left out too: their stat is
    from before the read that takes them on their own).
    """
    if not hasattr(os, "readv") or limit > _BUFFER_LIMIT:  # (Windows) a bytes object per file
        yield from _joined_by_text(paths, limit, group_bytes, stats)
        return
    buffer = bytearray(group_bytes + limit + 1)
    view = memoryview(buffer)
    at: list[int] = []
    ends: list[int] = [0]
    size = 0
    for i, path in enumerate(paths):
        try:
            fd = os.open(path, _FLAGS)
        except OSError:
            continue
        try:  # one read of up to limit + 1 bytes: a longer file is not read twice
            if stats is not None:
                st = os.fstat(fd)
                stats[i] = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
            n = os.readv(fd, [view[size : size + limit + 1]])
        except OSError:
            continue
        finally:
            os.close(fd)
        if not 0 < n <= limit or buffer[size + n - 1] != 10:
            continue  # empty, larger, or a cut last line: the one-file route reads it
        if buffer[size] == BOM[0] and buffer[size : size + 3] == BOM:
            continue  # the one-file route drops the mark
        if has_long_line(buffer, size, size + n):
            continue  # the one-file route cuts it
        at.append(i)
        size += n
        ends.append(size)
        if size >= group_bytes:
            yield _group(bytes(view[:size]), at, ends)
            at, ends, size = [], [0], 0
    if at:
        yield _group(bytes(view[:size]), at, ends)


def _joined_by_text(
    paths: Iterable[str], limit: int, group_bytes: int, stats: dict[int, FileStat] | None = None
) -> Iterator[JoinedFiles]:
    texts: list[bytes] = []
    at: list[int] = []
    ends: list[int] = [0]
    for i, path in enumerate(paths):
        if stats is not None and (st := file_stat(path)) is not None:
            stats[i] = st
        text = small_file_text(path, limit)
        if text is None:
            continue
        texts.append(text)
        at.append(i)
        ends.append(ends[-1] + len(text))
        if ends[-1] >= group_bytes:
            yield _group(b"".join(texts), at, ends)
            texts, at, ends = [], [], [0]
    if at:
        yield _group(b"".join(texts), at, ends)


def _group(text: bytes, at: list[int], ends: list[int]) -> JoinedFiles:
    offsets = np.array(ends, dtype=np.int64)
    # line ends per file: one pass over the group (half a count() call per file)
    line_ends = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == 10)
    lines = np.diff(np.searchsorted(line_ends, offsets)).astype(np.int64)
    return JoinedFiles(text, np.array(at, dtype=np.int64), offsets, lines)

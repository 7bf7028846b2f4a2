"""Small whole files read together: one tokenization for many files.

A run of 65,536 PEs writes 65,536 files of a few kilobytes. Reading each
on its own costs a fixed ~0.3 ms of numpy calls (open, block loop, key
table, bincount, compaction), more than its bytes. Here the text of many
small files is joined into one block, tokenized once, and split back into
one exact partial and line accounting per file by the file each line came
from. A group whose text is not canonical throughout (a noise line, a cut
last line, a stray PE id...) is halved until the odd file is found; that
file goes through :func:`actorprof.engine.map.reduce_range`, so every file
gets exactly what the per-file route gives it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..read import canonical_lines, new_key_table, small_file_text
from .map import Packed

__all__ = ["SmallFiles", "reduce_small_files"]

#: Key ids are below the key table's capacity (2**18): room for the file index.
_KEY_BITS = 20


@dataclass
class SmallFiles:
    """Whole small files read in groups, as columns: no object per file.

    ``at`` holds their positions among the files given, ascending. File
    ``k`` of them is ``packed.messages[k]`` canonical lines (none blank,
    none skipped) in ``bytes_read[k]`` bytes, ``mismatched[k]`` of them
    with a source other than the file's PE; its partial is
    ``packed.part(k)``, and ``packed.total()`` is theirs summed.
    """

    at: np.ndarray
    packed: Packed
    bytes_read: np.ndarray
    mismatched: np.ndarray

    def __len__(self) -> int:
        return len(self.at)


def reduce_small_files(
    files: list[tuple[str, int | None]],
    *,
    pe_limit: int | None,
    block_bytes: int,
    sizes: bool = False,
) -> SmallFiles:
    """Reduce whole small files ``(path, pe)`` in groups of about ``block_bytes``.

    Returns the files read so, as columns; a file not among them must be
    read on its own (unreadable, empty, larger than ``block_bytes``, or not
    made of canonical lines only). ``sizes``: a file's cells are per
    (src, dst, message size), not per pair.
    """
    chunks: list[_Chunk] = []
    group: list[tuple[int, bytes]] = []
    size = 0
    every_line = False  # a key per line, once a group showed lines mostly distinct
    for i, (path, _) in enumerate(files):
        data = small_file_text(path, block_bytes)  # None: the per-file route reads it
        if data is None:
            continue
        group.append((i, data))
        size += len(data)
        if size >= block_bytes:
            every_line = _reduce_group(group, files, chunks, pe_limit, every_line, sizes)
            group, size = [], 0
    if group:
        _reduce_group(group, files, chunks, pe_limit, every_line, sizes)
    return _joined(chunks)


@dataclass
class _Chunk:
    """One group's files (those of its canonical halves), as columns: per-file
    ``cell_counts`` and ``pair_counts`` say which rows are whose."""

    at: np.ndarray
    lines: np.ndarray
    bytes_read: np.ndarray
    mismatched: np.ndarray
    times: np.ndarray
    cells: tuple[np.ndarray, ...]
    pairs: tuple[np.ndarray, ...]
    cell_counts: np.ndarray
    pair_counts: np.ndarray


def _joined(chunks: list[_Chunk]) -> SmallFiles:
    """The groups' columns end to end (file order: groups are read in order)."""

    def cat(arrays: Iterable[np.ndarray]) -> np.ndarray:
        return np.concatenate([np.zeros(0, np.int64), *arrays])

    arrays = {name: cat(c.cells[k] for c in chunks) for k, name in enumerate(_CELLS)}
    arrays |= {name: cat(c.pairs[k] for c in chunks) for k, name in enumerate(_PAIRS)}
    packed = Packed(
        arrays,
        np.cumsum(cat(c.cell_counts for c in chunks)),
        np.cumsum(cat(c.pair_counts for c in chunks)),
        cat(c.lines for c in chunks),
        np.concatenate([np.zeros((0, 2)), *(c.times for c in chunks)]),
    )
    return SmallFiles(
        cat(c.at for c in chunks),
        packed,
        cat(c.bytes_read for c in chunks),
        cat(c.mismatched for c in chunks),
    )


_CELLS = ("src", "dst", "counts", "nbytes")
_PAIRS = ("pe", "node")


def _reduce_group(
    group: list[tuple[int, bytes]],
    files: list[tuple[str, int | None]],
    chunks: list[_Chunk],
    pe_limit: int | None,
    every_line: bool,
    sizes: bool = False,
) -> bool:
    """Reduce one group of files into ``chunks``; returns whether most of its
    lines had a key of their own (the next group then parses every line
    instead of looking keys up: :class:`actorprof.read.LineKeys`)."""
    table = new_key_table(every_line=every_line)
    found = canonical_lines(b"".join(data for _, data in group), table, pe_limit=pe_limit)
    if found is None:
        if len(group) > 1:  # find the odd files; the others stay on this route
            half = len(group) // 2
            _reduce_group(group[:half], files, chunks, pe_limit, every_line, sizes)
            _reduce_group(group[half:], files, chunks, pe_limit, every_line, sizes)
        return every_line
    key_ids, micros = found
    lines = np.array([data.count(b"\n") for _, data in group], dtype=np.int64)
    if int(lines.sum()) != len(key_ids):  # cannot happen for canonical text; be safe
        return every_line
    n = len(group)
    starts = np.r_[0, np.cumsum(lines)[:-1]]
    file_of_line = np.repeat(np.arange(n, dtype=np.int64), lines)
    values = table.values
    pes = np.array([-1 if files[i][1] is None else files[i][1] for i, _ in group], np.int64)
    src_of_line = values[key_ids, 1]
    mismatched = np.bincount(
        file_of_line,
        weights=(src_of_line != pes[file_of_line]) & (pes[file_of_line] >= 0),
        minlength=n,
    ).astype(np.int64)
    times = np.full((n, 2), np.nan)
    if micros is not None:  # exact: micros are below 2**53, and / rounds once
        times[:, 0] = np.minimum.reduceat(micros, starts) / 1_000_000
        times[:, 1] = np.maximum.reduceat(micros, starts) / 1_000_000
    # distinct (file, key) and how many lines of each
    fk = (file_of_line << _KEY_BITS) | key_ids
    if every_line:  # a key per line, in line order: sorted and distinct already
        count = np.ones(len(fk), dtype=np.int64)
    else:
        fk, count = np.unique(fk, return_counts=True)
    f = fk >> _KEY_BITS
    v = values[fk & ((1 << _KEY_BITS) - 1)]
    cells = _group_sum(f, v[:, 1], v[:, 3], count, count * v[:, 4], v[:, 4] if sizes else None)
    pairs = _distinct(np.r_[f, f], np.r_[v[:, 1], v[:, 3]], np.r_[v[:, 0], v[:, 2]])
    chunks.append(
        _Chunk(
            np.array([i for i, _ in group], dtype=np.int64),
            lines,
            np.array([len(data) for _, data in group], dtype=np.int64),
            mismatched,
            times,
            cells[1:],
            pairs[1:],
            np.bincount(cells[0], minlength=n),
            np.bincount(pairs[0], minlength=n),
        )
    )
    return table.size > len(key_ids) // 2


def _group_sum(
    f: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    counts: np.ndarray,
    nbytes: np.ndarray,
    size: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """Rows summed per (file, src, dst), sorted by them; per (file, src, dst,
    ``size``) when a size is given."""
    order, first = _sorted_rows(f, src, dst) if size is None else _sorted_rows(f, src, dst, size)
    at = np.flatnonzero(first)
    rows = order[at]
    return (
        f[rows],
        src[rows],
        dst[rows],
        np.add.reduceat(counts[order], at),
        np.add.reduceat(nbytes[order], at),
    )


def _distinct(f: np.ndarray, pe: np.ndarray, node: np.ndarray) -> tuple[np.ndarray, ...]:
    """Distinct (file, pe, node) rows, sorted by them."""
    order, first = _sorted_rows(f, pe, node)
    rows = order[first]
    return f[rows], pe[rows], node[rows]


def _sorted_rows(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stable order sorting rows by ``columns`` (the first one first), and
    which rows of that order differ from the one before.

    Non-negative ids that fit in 62 bits together are sorted as one int64
    (a third of ``np.lexsort``'s time); others by ``np.lexsort``: the same order.
    """
    widths = [int(c.max(initial=0)).bit_length() for c in columns]
    if sum(widths) <= 62 and all(int(c.min(initial=0)) >= 0 for c in columns):
        key = np.zeros(len(columns[0]), dtype=np.int64)
        for column, width in zip(columns, widths, strict=True):
            key = (key << width) | column
        order = np.argsort(key, kind="stable")
        key = key[order]
        changed = np.ones(len(order), dtype=np.bool_)
        changed[1:] = key[1:] != key[:-1]
        return order, changed
    order = np.lexsort(columns[::-1])
    changed = np.zeros(len(order), dtype=np.bool_)
    changed[:1] = True
    for c in columns:
        c = c[order]
        changed[1:] |= c[1:] != c[:-1]
    return order, changed

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

import numpy as np

from ..analyze.matrix import CommPartial
from ..read import FileReport, canonical_lines, new_key_table, small_file_text
from .map import RangeResult

__all__ = ["reduce_small_files"]

#: Key ids are below the key table's capacity (2**18): room for the file index.
_KEY_BITS = 20


def reduce_small_files(
    files: list[tuple[str, int | None]],
    *,
    pe_limit: int | None,
    block_bytes: int,
) -> list[RangeResult | None]:
    """Reduce whole small files ``(path, pe)`` in groups of about ``block_bytes``.

    Returns one result per file, or None for a file the caller must read on
    its own (unreadable, empty, larger than ``block_bytes``, or not made of
    canonical lines only).
    """
    out: list[RangeResult | None] = [None] * len(files)
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
            every_line = _reduce_group(group, files, out, pe_limit, every_line)
            group, size = [], 0
    if group:
        _reduce_group(group, files, out, pe_limit, every_line)
    return out


def _reduce_group(
    group: list[tuple[int, bytes]],
    files: list[tuple[str, int | None]],
    out: list[RangeResult | None],
    pe_limit: int | None,
    every_line: bool,
) -> bool:
    """Reduce one group of files into ``out``; returns whether most of its
    lines had a key of their own (the next group then parses every line
    instead of looking keys up: :class:`actorprof.read.LineKeys`)."""
    table = new_key_table(every_line=every_line)
    found = canonical_lines(b"".join(data for _, data in group), table, pe_limit=pe_limit)
    if found is None:
        if len(group) > 1:  # find the odd files; the others stay on this route
            half = len(group) // 2
            _reduce_group(group[:half], files, out, pe_limit, every_line)
            _reduce_group(group[half:], files, out, pe_limit, every_line)
        return every_line
    key_ids, micros = found
    lines = np.array([data.count(b"\n") for _, data in group], dtype=np.int64)
    if int(lines.sum()) != len(key_ids):  # cannot happen for canonical text; be safe
        return every_line
    starts = np.r_[0, np.cumsum(lines)[:-1]]
    file_of_line = np.repeat(np.arange(len(group), dtype=np.int64), lines)
    values = table.values
    pes = np.array([-1 if files[i][1] is None else files[i][1] for i, _ in group], np.int64)
    src_of_line = values[key_ids, 1]
    mismatched = np.bincount(
        file_of_line,
        weights=(src_of_line != pes[file_of_line]) & (pes[file_of_line] >= 0),
        minlength=len(group),
    ).astype(np.int64)
    if micros is not None:
        low = np.minimum.reduceat(micros, starts)
        high = np.maximum.reduceat(micros, starts)
    # distinct (file, key) and how many lines of each
    fk = (file_of_line << _KEY_BITS) | key_ids
    if every_line:  # a key per line, in line order: sorted and distinct already
        count = np.ones(len(fk), dtype=np.int64)
    else:
        fk, count = np.unique(fk, return_counts=True)
    f = fk >> _KEY_BITS
    v = values[fk & ((1 << _KEY_BITS) - 1)]
    cells = _group_sum(f, v[:, 1], v[:, 3], count, count * v[:, 4])
    pairs = _distinct(np.r_[f, f], np.r_[v[:, 1], v[:, 3]], np.r_[v[:, 0], v[:, 2]])
    cell_bounds = np.searchsorted(cells[0], np.arange(len(group) + 1))
    pair_bounds = np.searchsorted(pairs[0], np.arange(len(group) + 1))
    for j, (i, data) in enumerate(group):
        path, pe = files[i]
        report = FileReport(path, pe=pe, lines_read=int(lines[j]), bytes_read=len(data))
        a, b = cell_bounds[j], cell_bounds[j + 1]
        c, d = pair_bounds[j], pair_bounds[j + 1]
        partial = CommPartial(
            cells[1][a:b],
            cells[2][a:b],
            cells[3][a:b],
            cells[4][a:b],
            pairs[1][c:d],
            pairs[2][c:d],
            messages=int(lines[j]),
        )
        if micros is not None:
            partial.add_times(int(low[j]) / 1_000_000, int(high[j]) / 1_000_000)
        out[i] = RangeResult(path, 0, partial, report, int(mismatched[j]))
    return table.size > len(key_ids) // 2


def _group_sum(
    f: np.ndarray, src: np.ndarray, dst: np.ndarray, counts: np.ndarray, nbytes: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Rows summed per (file, src, dst), sorted by them."""
    order = np.lexsort((dst, src, f))
    f, src, dst = f[order], src[order], dst[order]
    first = np.r_[True, (f[1:] != f[:-1]) | (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])]
    at = np.flatnonzero(first)
    return (
        f[at],
        src[at],
        dst[at],
        np.add.reduceat(counts[order], at),
        np.add.reduceat(nbytes[order], at),
    )


def _distinct(f: np.ndarray, pe: np.ndarray, node: np.ndarray) -> tuple[np.ndarray, ...]:
    """Distinct (file, pe, node) rows, sorted by them."""
    order = np.lexsort((node, pe, f))
    f, pe, node = f[order], pe[order], node[order]
    first = np.r_[True, (f[1:] != f[:-1]) | (pe[1:] != pe[:-1]) | (node[1:] != node[:-1])]
    return f[first], pe[first], node[first]

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

Without the cache no file's own partial is kept: each group is then summed
as a whole (its cells sorted per group, so a unit's groups, in PE order,
join already sorted), and only the line accounting stays per file. The
files are read straight into one buffer (:func:`actorprof.read.joined_small_files`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..analyze.matrix import CommPartial
from ..read import JoinedFiles, canonical_lines, joined_small_files, new_key_table
from .map import Packed

if TYPE_CHECKING:
    from ..analyze.timeline import TimelineAccumulator
    from ..read import FileStat

__all__ = ["SmallFiles", "reduce_small_files"]

#: Key ids are below the key table's capacity (2**18): room for the file index.
_KEY_BITS = 20


@dataclass
class SmallFiles:
    """Whole small files read in groups, as columns: no object per file.

    ``at`` holds their positions among the files given, ascending. File
    ``k`` of them is ``lines[k]`` canonical lines (none blank, none
    skipped) in ``bytes_read[k]`` bytes, ``mismatched[k]`` of them with a
    source other than the file's PE. ``total`` is their partials summed
    (cells may repeat until compacted); ``packed``, when asked for, holds
    each file's own partial (``packed.part(k)``).
    """

    at: np.ndarray
    lines: np.ndarray
    bytes_read: np.ndarray
    mismatched: np.ndarray
    total: CommPartial
    packed: Packed | None = None

    def __len__(self) -> int:
        return len(self.at)


def reduce_small_files(
    files: list[tuple[str, int | None]],
    *,
    pe_limit: int | None,
    block_bytes: int,
    per_file: bool = True,
    sizes: bool = False,
    times: TimelineAccumulator | None = None,
    stats: dict[int, FileStat] | None = None,
) -> SmallFiles:
    """Reduce whole small files ``(path, pe)`` in groups of about ``block_bytes``.

    Returns the files read so, as columns; a file not among them must be
    read on its own (unreadable, empty, larger than ``block_bytes``, or not
    made of canonical lines only). ``per_file`` false: only their partials'
    sum is made (no per-file cells to sort and send back). ``sizes``: cells
    are per (src, dst, message size), not per pair. ``times``: the send
    times of the files read so are binned into it too (as the timeline's
    map step bins a group: :mod:`actorprof.engine.timeline_map`).
    ``stats``: each file's stat, by position, taken before its read
    (:func:`~actorprof.read.joined_small_files`).
    """
    chunks: list[_Chunk] = []
    pes = np.array([-1 if pe is None else pe for _, pe in files], dtype=np.int64)
    every_line = False  # a key per line, once a group showed lines mostly distinct
    # the files left out (unreadable, empty, larger, a cut line) are read on their own
    for group in joined_small_files((p for p, _ in files), block_bytes, block_bytes, stats):
        every_line = _reduce_group(group, pes, chunks, pe_limit, every_line, per_file, sizes, times)
    return _joined(chunks, per_file)


@dataclass
class _Chunk:
    """One group's files (those of its canonical halves), as columns. With
    ``per_file``, ``times`` has a row per file and ``cell_counts`` and
    ``pair_counts`` say which rows are whose; otherwise ``times`` is the
    group's one row and the cells and pairs are the group's, unsorted."""

    at: np.ndarray
    lines: np.ndarray
    bytes_read: np.ndarray
    mismatched: np.ndarray
    times: np.ndarray
    cells: tuple[np.ndarray, ...]
    pairs: tuple[np.ndarray, ...]
    cell_counts: np.ndarray | None = None
    pair_counts: np.ndarray | None = None


def _joined(chunks: list[_Chunk], per_file: bool) -> SmallFiles:
    """The groups' columns end to end (file order: groups are read in order)."""

    def cat(arrays: Iterable[np.ndarray | None]) -> np.ndarray:
        return np.concatenate([np.zeros(0, np.int64), *(a for a in arrays if a is not None)])

    arrays = {name: cat(c.cells[k] for c in chunks) for k, name in enumerate(_CELLS)}
    arrays |= {name: cat(c.pairs[k] for c in chunks) for k, name in enumerate(_PAIRS)}
    lines = cat(c.lines for c in chunks)
    times = np.concatenate([np.zeros((0, 2)), *(c.times for c in chunks)])
    packed = None
    if per_file:
        packed = Packed(
            arrays,
            np.cumsum(cat(c.cell_counts for c in chunks)),
            np.cumsum(cat(c.pair_counts for c in chunks)),
            lines,
            times,
        )
        total = packed.total()
    else:
        known = times[~np.isnan(times)]
        total = CommPartial(
            arrays["src"],
            arrays["dst"],
            arrays["counts"],
            arrays["nbytes"],
            *_distinct_pairs(arrays["pe"], arrays["node"]),
            messages=int(lines.sum()),
            time_min=float(known.min()) if known.size else None,
            time_max=float(known.max()) if known.size else None,
        )
    return SmallFiles(
        cat(c.at for c in chunks),
        lines,
        cat(c.bytes_read for c in chunks),
        cat(c.mismatched for c in chunks),
        total,
        packed,
    )


_CELLS = ("src", "dst", "counts", "nbytes")
_PAIRS = ("pe", "node")


def _reduce_group(
    group: JoinedFiles,
    pes: np.ndarray,
    chunks: list[_Chunk],
    pe_limit: int | None,
    every_line: bool,
    per_file: bool,
    sizes: bool = False,
    times: TimelineAccumulator | None = None,
) -> bool:
    """Reduce one group of files into ``chunks`` (``pes``: each file's PE, -1
    for none, by position); returns whether most of its lines had a key of
    their own (the next group then parses every line instead of looking
    keys up: :class:`actorprof.read.LineKeys`)."""
    table = new_key_table(every_line=every_line)
    found = canonical_lines(group.text, table, pe_limit=pe_limit)
    if found is None:
        if len(group) > 1:  # find the odd files; the others stay on this route
            half = len(group) // 2
            for part in (group.part(0, half), group.part(half, len(group))):
                _reduce_group(part, pes, chunks, pe_limit, every_line, per_file, sizes, times)
        return every_line
    key_ids, micros = found
    lines = group.lines
    if int(lines.sum()) != len(key_ids):  # cannot happen for canonical text; be safe
        return every_line
    n = len(group)
    values = table.values
    src = values[key_ids, 1]
    if times is not None and len(key_ids):  # senders and receivers get a row
        top = max(int(src.max()), int(values[:, 3][key_ids].max()))
        times.add_micros(src, micros, top_pe=top)
    pe_of_line = np.repeat(pes[group.at], lines)
    odd = (src != pe_of_line) & (pe_of_line >= 0)
    mismatched = np.zeros(n, dtype=np.int64)
    if odd.any():
        file_of_line = np.repeat(np.arange(n, dtype=np.int64), lines)
        mismatched = np.bincount(file_of_line, weights=odd, minlength=n).astype(np.int64)
    if per_file:
        chunks.append(_per_file(group, key_ids, micros, values, mismatched, every_line, sizes))
    else:
        chunks.append(_per_group(group, key_ids, micros, values, mismatched, every_line, sizes))
    return table.size > len(key_ids) // 2


def _per_group(
    group: JoinedFiles,
    key_ids: np.ndarray,
    micros: np.ndarray | None,
    values: np.ndarray,
    mismatched: np.ndarray,
    every_line: bool,
    sizes: bool = False,
) -> _Chunk:
    """The group's partial as a whole: cells summed per (src, dst) (and
    message size, with ``sizes``) and sorted, (PE, node) pairs unsorted
    (compacted with the unit's total)."""
    if every_line:  # a key per line
        v = values[key_ids]
        cells = _line_cells(v[:, 1], v[:, 3], v[:, 4], sizes=sizes)
    else:
        count = np.bincount(key_ids, minlength=len(values))
        used = np.flatnonzero(count)
        v = values[used]
        count = count[used]
        zero = np.zeros(len(v), np.int64)
        size = v[:, 4] if sizes else None
        cells = _group_sum(zero, v[:, 1], v[:, 3], count, count * v[:, 4], size)[1:]
    times = np.full((1, 2), np.nan)
    if micros is not None and micros.size:  # exact: micros are below 2**53
        times[0] = int(micros.min()) / 1_000_000, int(micros.max()) / 1_000_000
    return _Chunk(
        group.at,
        group.lines,
        np.diff(group.offsets),
        mismatched,
        times,
        cells,
        _pairs(v),
    )


def _pairs(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (pe, node) pairs of key values ``v``, sources then destinations;
    a source repeating the row before is left out (a file's lines name its
    PE: a row per file, not per line), the compaction does the rest."""
    src, node = v[:, 1], v[:, 0]
    new = np.ones(len(v), dtype=np.bool_)
    new[1:] = (src[1:] != src[:-1]) | (node[1:] != node[:-1])
    return np.r_[src[new], v[:, 3]], np.r_[node[new], v[:, 2]]


def _distinct_pairs(pe: np.ndarray, node: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (pe, node) rows sorted, where every PE has one node (a
    table by PE id, no sort); as given otherwise (the compaction sorts them)."""
    if not len(pe) or int(pe.min()) < 0:
        return pe, node
    top = int(pe.max())
    if top >= max(4 * len(pe), 1 << 16):
        return pe, node
    node_of = np.empty(top + 1, dtype=np.int64)
    node_of[pe] = node
    if not bool((node_of[pe] == node).all()):  # a PE on two nodes
        return pe, node
    seen = np.zeros(top + 1, dtype=np.bool_)
    seen[pe] = True
    at = np.flatnonzero(seen).astype(np.int64)
    return at, node_of[at]


def _line_cells(
    src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray, *, sizes: bool = False
) -> tuple[np.ndarray, ...]:
    """Lines (non-negative ``src``, ``dst``, ``nbytes``) summed per (src, dst),
    or per (src, dst, nbytes) with ``sizes``, sorted by it:
    ``(src, dst, counts, nbytes)``.

    Where the three fit in 63 bits together they are sorted as one int64
    (``np.sort``, no ``argsort``, and the sums come out in place).
    """
    if not len(src):
        return tuple(np.zeros(0, np.int64) for _ in range(4))
    low = int(src.min())
    wd, wn = int(dst.max()).bit_length(), int(nbytes.max()).bit_length()
    if (int(src.max()) - low).bit_length() + wd + wn > 63:
        ones = np.ones(len(src), dtype=np.int64)
        zero = np.zeros(len(src), np.int64)
        return _group_sum(zero, src, dst, ones, nbytes, nbytes if sizes else None)[1:]
    packed = ((src - low) << (wd + wn)) | (dst << wn) | nbytes
    packed.sort()
    cell = packed if sizes else packed >> wn
    changed = np.ones(len(cell), dtype=np.bool_)
    changed[1:] = cell[1:] != cell[:-1]
    at = np.flatnonzero(changed)
    cell = packed[at] >> wn
    return (
        (cell >> wd) + low,
        cell & ((1 << wd) - 1),
        np.diff(np.r_[at, len(packed)]),
        np.add.reduceat(packed & ((1 << wn) - 1), at),
    )


def _per_file(
    group: JoinedFiles,
    key_ids: np.ndarray,
    micros: np.ndarray | None,
    values: np.ndarray,
    mismatched: np.ndarray,
    every_line: bool,
    sizes: bool = False,
) -> _Chunk:
    """Each file's cells and pairs, sorted by (file, ...); cells per message
    size too with ``sizes``."""
    lines = group.lines
    n = len(group)
    file_of_line = np.repeat(np.arange(n, dtype=np.int64), lines)
    times = np.full((n, 2), np.nan)
    if micros is not None:  # exact: micros are below 2**53, and / rounds once
        starts = np.r_[0, np.cumsum(lines)[:-1]]
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
    return _Chunk(
        group.at,
        lines,
        np.diff(group.offsets),
        mismatched,
        times,
        cells[1:],
        pairs[1:],
        np.bincount(cells[0], minlength=n),
        np.bincount(pairs[0], minlength=n),
    )


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

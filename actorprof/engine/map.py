"""Map step of the logical trace: one file or byte range -> a sparse partial.

``reduce_range`` runs the logical format's one block loop
(:func:`actorprof.read.logical_blocks`) over a byte range of a file and
reduces each block as it comes: canonical blocks by their key ids (no
DataFrame is built), others by the reference parser's frame. Line numbers
are relative to the range; :func:`merge_ranges` makes them absolute by
counting the lines of the ranges before. Asked for (``times``: the
report's one read, docs/performance.md), the same blocks' send times are
binned into a :class:`~actorprof.analyze.timeline.TimelineAccumulator` as
the timeline's map step (:mod:`actorprof.engine.timeline_map`) bins them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..analyze.matrix import CommPartial
from ..errors import TraceFormatError
from ..read import FAST_BLOCK_BYTES, FileReport, logical_blocks, new_key_table

if TYPE_CHECKING:  # imported by the unit that bins times (it imports no pandas)
    from ..analyze.timeline import TimelineAccumulator

__all__ = [
    "CleanFiles",
    "FileResult",
    "Packed",
    "RangeResult",
    "UnitResult",
    "merge_ranges",
    "reduce_range",
]


@dataclass
class RangeResult:
    """What the map step of one byte range returns (picklable, small)."""

    path: str
    start: int
    #: None once the unit's results are packed (:class:`UnitResult`).
    partial: CommPartial | None
    report: FileReport
    mismatched: int = 0
    #: (line relative to the range or None, message) of the first error.
    error: tuple[int | None, str] | None = None


@dataclass
class FileResult:
    """One whole file: ranges merged, absolute line numbers."""

    report: FileReport
    partial: CommPartial = field(default_factory=CommPartial)
    mismatched: int = 0
    error: tuple[int | None, str] | None = None


def reduce_range(
    path: str,
    start: int,
    stop: int | None,
    *,
    file_pe: int | None,
    pe_limit: int | None,
    reason: str = "",
    block_bytes: int = FAST_BLOCK_BYTES,
    sizes: bool = False,
    times: TimelineAccumulator | None = None,
) -> RangeResult:
    """Reduce the lines in bytes ``[start, stop)`` of ``path`` (None: to the end).

    ``start`` must be 0 or just after a line end, ``stop`` just after one
    (or None). Lines naming a PE id from ``pe_limit`` on are skipped for
    ``reason``. An unreadable file is returned in ``error``, not raised, so a
    worker always answers. ``sizes``: cells of one message size each (a
    cell per (src, dst, size) once compacted with ``sizes=True``).
    ``times``: also bin every line's send time into it (every block's
    times are then tokenized, not only their range), as
    :mod:`actorprof.engine.timeline_map` bins a whole file's: the same
    lines, so the same bins, counts and PEs (they are sums: they do not
    depend on where a file is cut).
    """
    report = FileReport(path, pe=file_pe)
    partial = CommPartial()
    result = RangeResult(path, start, partial, report)
    table = new_key_table()
    key_counts = np.zeros(0, dtype=np.int64)
    try:
        for block in logical_blocks(
            path,
            report,
            table,
            start=start,
            stop=stop,
            all_times=times is not None,
            pe_limit=pe_limit,
            reason=reason,
            block_bytes=block_bytes,
        ):
            if block.key_ids is None:
                frame = block.to_frame(table)
                partial.add_frame(frame, sizes=sizes)
                if times is not None:
                    times.add(frame)
                if file_pe is not None and len(frame):
                    result.mismatched += int((frame["src_pe"].to_numpy() != file_pe).sum())
                continue
            counts = np.bincount(block.key_ids, minlength=table.size)
            if len(counts) > len(key_counts):
                key_counts = np.r_[key_counts, np.zeros(len(counts) - len(key_counts), np.int64)]
            key_counts[: len(counts)] += counts
            if times is not None and len(block.key_ids):
                src = table.values[:, 1][block.key_ids]
                times.add_micros(src, block.micros, top_pe=int(src.max()))
            if block.time_range is not None:
                low, high = block.time_range
                partial.add_times(low / 1_000_000, high / 1_000_000)
    except TraceFormatError as exc:
        result.error = (exc.line, exc.message)
        return result
    result.mismatched += _add_keys(partial, table.values, key_counts, file_pe)
    if times is not None and key_counts.any():  # PEs that only receive get a row
        times.note_pes(int(table.values[: len(key_counts), 3][key_counts > 0].max()))
    return result


def _add_keys(
    partial: CommPartial, values: np.ndarray, key_counts: np.ndarray, file_pe: int | None
) -> int:
    """Turn the fast route's per-key counts into cells and (pe, node) pairs;
    returns how many lines have a source other than ``file_pe``."""
    used = np.flatnonzero(key_counts)
    if not used.size:
        return 0
    v = values[used]
    counts = key_counts[used]
    partial.add_cells(
        v[:, 1],
        v[:, 3],
        counts,
        counts * v[:, 4],
        np.r_[v[:, 1], v[:, 3]],
        np.r_[v[:, 0], v[:, 2]],
    )
    partial.messages += int(counts.sum())
    return 0 if file_pe is None else int(counts[v[:, 1] != file_pe].sum())


def merge_ranges(
    parts: list[RangeResult], *, pe: int | None, phase: str | None, sizes: bool = False
) -> FileResult:
    """Merge a file's ranges (in file order): sums, absolute line numbers.

    Ranges without their partial (packed away) give the accounting only;
    the partials given are compacted (:func:`actorprof.engine.run.run_unit`),
    per message size too with ``sizes``.
    """
    if len(parts) == 1 and parts[0].error is None:
        part = parts[0]  # a whole file: its report is the file's
        report = part.report
        report.pe, report.phase = pe, phase
        partial = CommPartial() if part.partial is None else part.partial
        return FileResult(report, partial, part.mismatched)
    report = FileReport(parts[0].path, pe=pe, phase=phase)
    out = FileResult(report)
    offset = 0
    for part in parts:
        if part.error is not None:
            line, message = part.error
            out.error = (None if line is None else line + offset, message)
            return out
        report.absorb(part.report, offset)
        offset += part.report.lines_total
        if part.partial is not None:
            out.partial.merge(part.partial)
        out.mismatched += part.mismatched
    out.partial = out.partial.compact(sizes=sizes)
    return out


@dataclass
class CleanFiles:
    """Whole files read without a skipped line or an error, as columns.

    A batch of 8,192 small files returned 8,192 :class:`RangeResult` objects
    (4.8 MB of pickle, 80 ms to load in the main process: half a second at
    65,536 PEs); their accounting is four integers each. ``at`` holds their
    positions among the unit's items.
    """

    at: np.ndarray
    lines_read: np.ndarray
    lines_blank: np.ndarray
    bytes_read: np.ndarray
    mismatched: np.ndarray

    @classmethod
    def of(cls, at: list[int], ranges: list[RangeResult]) -> CleanFiles:
        def column(name: str) -> np.ndarray:
            return np.array([getattr(r.report, name) for r in ranges], dtype=np.int64)

        return cls(
            np.array(at, dtype=np.int64),
            column("lines_read"),
            column("lines_blank"),
            column("bytes_read"),
            np.array([r.mismatched for r in ranges], dtype=np.int64),
        )

    @classmethod
    def join(cls, *parts: CleanFiles, by_position: bool = True) -> CleanFiles:
        """The files of ``parts`` together, by position (else one part after
        another, as given)."""

        def column(name: str) -> np.ndarray:
            return np.concatenate([getattr(p, name) for p in parts])

        joined = cls(*(column(name) for name in _CLEAN_COLUMNS))
        if not by_position:
            return joined
        order = np.argsort(joined.at, kind="stable")
        return cls(*(getattr(joined, name)[order] for name in _CLEAN_COLUMNS))

    def __len__(self) -> int:
        return len(self.at)


_CLEAN_COLUMNS = ("at", "lines_read", "lines_blank", "bytes_read", "mismatched")


@dataclass
class UnitResult:
    """What the map step of one unit (several files or ranges) returns.

    ``ranges`` hold the line accounting of each item (partials stripped: a
    few hundred bytes each to send back), None for the items in ``clean``
    (whole files without a skipped line, as columns); ``total`` is the
    unit's partials summed (compacted in the worker, so the reduce only
    joins a few large sorted partials); ``packed``, when asked for (the
    cache keeps each file's partial), holds every item's own partial;
    ``times``, when asked for, the unit's send times binned.
    """

    ranges: list[RangeResult | None]
    total: CommPartial
    packed: Packed | None = None
    clean: CleanFiles | None = None
    times: TimelineAccumulator | None = None
    #: With ``packed``: each whole file's stat, taken before its read (a row
    #: per item, of :func:`~actorprof.read.file_stat`'s values; -1 for none).
    stats: np.ndarray | None = None


_CELLS = ("src", "dst", "counts", "nbytes")
_PAIRS = ("pe", "node")
_Arrays = dict[str, np.ndarray]


@dataclass
class Packed:
    """Many partials as one set of arrays (cheap to pickle and to store).

    Partial ``i`` holds cells ``cell_ends[i-1]:cell_ends[i]`` and (PE, node)
    pairs ``pair_ends[i-1]:pair_ends[i]``; ``times`` has NaN for no time.
    """

    arrays: dict[str, np.ndarray]
    cell_ends: np.ndarray
    pair_ends: np.ndarray
    messages: np.ndarray
    times: np.ndarray

    @classmethod
    def of(cls, parts: list[CommPartial]) -> Packed:
        arrays = {
            name: np.concatenate([np.zeros(0, np.int64), *(getattr(p, name) for p in parts)])
            for name in (*_CELLS, *_PAIRS)
        }
        times = np.array(
            [
                [
                    np.nan if p.time_min is None else p.time_min,
                    np.nan if p.time_max is None else p.time_max,
                ]
                for p in parts
            ],
            dtype=np.float64,
        ).reshape(len(parts), 2)
        return cls(
            arrays,
            np.cumsum([p.src.size for p in parts], dtype=np.int64),
            np.cumsum([p.pe.size for p in parts], dtype=np.int64),
            np.array([p.messages for p in parts], dtype=np.int64),
            times,
        )

    @classmethod
    def join(cls, parts: list[Packed]) -> Packed:
        """The partials of ``parts`` one after another, as one."""
        if len(parts) <= 1:
            return parts[0] if parts else cls.of([])

        def ends(name: str, size: str) -> np.ndarray:
            offsets = np.cumsum([0, *(len(p.arrays[size]) for p in parts[:-1])])
            moved = (getattr(p, name) + o for p, o in zip(parts, offsets, strict=True))
            return np.concatenate([np.zeros(0, np.int64), *moved])

        return cls(
            {
                name: np.concatenate([np.zeros(0, np.int64), *(p.arrays[name] for p in parts)])
                for name in (*_CELLS, *_PAIRS)
            },
            ends("cell_ends", "src"),
            ends("pair_ends", "pe"),
            np.concatenate([np.zeros(0, np.int64), *(p.messages for p in parts)]),
            np.concatenate([np.zeros((0, 2)), *(p.times for p in parts)]),
        )

    def take(self, at: np.ndarray) -> Packed:
        """Partials ``at`` (positions, in that order), as one."""
        at = np.asarray(at, dtype=np.int64)
        if len(at) == len(self) and (at == np.arange(len(at))).all():
            return self

        def gather(ends: np.ndarray, names: tuple[str, ...]) -> tuple[_Arrays, np.ndarray]:
            starts = np.concatenate([np.zeros(1, np.int64), ends[:-1]])[at]
            lengths = ends[at] - starts
            new_ends = np.cumsum(lengths, dtype=np.int64)
            # each kept element's position: its segment's start, plus its rank in it
            index = np.arange(int(new_ends[-1]) if len(at) else 0, dtype=np.int64)
            index += np.repeat(starts - (new_ends - lengths), lengths)
            return {name: self.arrays[name][index] for name in names}, new_ends

        cells, cell_ends = gather(self.cell_ends, _CELLS)
        pairs, pair_ends = gather(self.pair_ends, _PAIRS)
        return Packed({**cells, **pairs}, cell_ends, pair_ends, self.messages[at], self.times[at])

    def __len__(self) -> int:
        return len(self.messages)

    def total(self) -> CommPartial:
        """All the partials summed (cells may repeat until compacted)."""
        times = self.times[~np.isnan(self.times)]
        arr = self.arrays
        return CommPartial(
            arr["src"],
            arr["dst"],
            arr["counts"],
            arr["nbytes"],
            arr["pe"],
            arr["node"],
            messages=int(self.messages.sum()),
            time_min=float(times.min()) if times.size else None,
            time_max=float(times.max()) if times.size else None,
        )

    def part(self, i: int) -> CommPartial:
        """Partial ``i`` (views into the arrays)."""
        a = 0 if i == 0 else int(self.cell_ends[i - 1])
        b = int(self.cell_ends[i])
        c = 0 if i == 0 else int(self.pair_ends[i - 1])
        d = int(self.pair_ends[i])
        low, high = (float(t) for t in self.times[i])
        arr = self.arrays
        return CommPartial(
            arr["src"][a:b],
            arr["dst"][a:b],
            arr["counts"][a:b],
            arr["nbytes"][a:b],
            arr["pe"][c:d],
            arr["node"][c:d],
            messages=int(self.messages[i]),
            time_min=None if np.isnan(low) else low,
            time_max=None if np.isnan(high) else high,
        )


def _float(t: float | None) -> float:
    return np.nan if t is None else t

"""Map step of the logical trace: one file or byte range -> a sparse partial.

``reduce_range`` runs the logical format's one block loop
(:func:`actorprof.read.logical_blocks`) over a byte range of a file and
reduces each block as it comes: canonical blocks by their key ids (no
DataFrame is built), others by the reference parser's frame. Line numbers
are relative to the range; :func:`merge_ranges` makes them absolute by
counting the lines of the ranges before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..analyze.matrix import CommPartial
from ..errors import TraceFormatError
from ..read import FAST_BLOCK_BYTES, FileReport, logical_blocks, new_key_table

__all__ = ["FileResult", "RangeResult", "merge_ranges", "reduce_range"]


@dataclass
class RangeResult:
    """What the map step of one byte range returns (picklable, small)."""

    path: str
    start: int
    partial: CommPartial
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
) -> RangeResult:
    """Reduce the lines in bytes ``[start, stop)`` of ``path`` (None: to the end).

    ``start`` must be 0 or just after a line end, ``stop`` just after one
    (or None). Lines naming a PE id from ``pe_limit`` on are skipped for
    ``reason``. An unreadable file is returned in ``error``, not raised, so a
    worker always answers.
    """
    report = FileReport(path, pe=file_pe)
    result = RangeResult(path, start, CommPartial(), report)
    table = new_key_table()
    key_counts = np.zeros(0, dtype=np.int64)
    try:
        for block in logical_blocks(
            path,
            report,
            table,
            start=start,
            stop=stop,
            all_times=False,
            pe_limit=pe_limit,
            reason=reason,
            block_bytes=block_bytes,
        ):
            if block.key_ids is None:
                frame = block.to_frame(table)
                result.partial.add_frame(frame)
                if file_pe is not None and len(frame):
                    result.mismatched += int((frame["src_pe"].to_numpy() != file_pe).sum())
                continue
            counts = np.bincount(block.key_ids, minlength=table.size)
            if len(counts) > len(key_counts):
                key_counts = np.r_[key_counts, np.zeros(len(counts) - len(key_counts), np.int64)]
            key_counts[: len(counts)] += counts
            if block.time_range is not None:
                low, high = block.time_range
                result.partial.add_times(low / 1_000_000, high / 1_000_000)
    except TraceFormatError as exc:
        result.error = (exc.line, exc.message)
        return result
    _add_keys(result, table.values, key_counts, file_pe)
    return result


def _add_keys(
    result: RangeResult, values: np.ndarray, key_counts: np.ndarray, file_pe: int | None
) -> None:
    """Turn the fast route's per-key counts into cells and (pe, node) pairs."""
    used = np.flatnonzero(key_counts)
    if not used.size:
        return
    v = values[used]
    counts = key_counts[used]
    result.partial.add_cells(
        v[:, 1],
        v[:, 3],
        counts,
        counts * v[:, 4],
        np.r_[v[:, 1], v[:, 3]],
        np.r_[v[:, 0], v[:, 2]],
    )
    result.partial.messages += int(counts.sum())
    if file_pe is not None:
        result.mismatched += int(counts[v[:, 1] != file_pe].sum())


def merge_ranges(parts: list[RangeResult], *, pe: int | None, phase: str | None) -> FileResult:
    """Merge a file's ranges (in file order): sums, absolute line numbers."""
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
        out.partial.merge(part.partial)
        out.mismatched += part.mismatched
    out.partial = out.partial.compact()
    return out

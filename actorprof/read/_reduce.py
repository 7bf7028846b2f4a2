"""Map step of the logical trace: one file or byte range -> a sparse partial.

``reduce_range`` reads a byte range of a logical trace file (whole lines)
in blocks. Canonical blocks go through the vectorised tokenizer of
:mod:`._fastscan`, which never builds a DataFrame; any other block is
parsed by the reference reader of :mod:`._scan`, so line accounting,
skipped-line reasons and results are those of :func:`iter_logical`. Line
numbers are relative to the range; :func:`merge_ranges` makes them
absolute by counting the lines of the ranges before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..analyze.matrix import CommPartial
from ._fastscan import FAST_BLOCK_BYTES, BlockBuffer, KeyTable, tokenize_block
from ._report import MAX_EXAMPLES, MAX_EXAMPLES_PER_REASON, FileReport, SkippedLine
from ._scan import CsvSpec, line_blocks, parse_block, parse_last_line

__all__ = ["FileResult", "RangeResult", "merge_ranges", "reduce_range"]

#: Blocks of the fast route: small enough for numpy's temporaries to stay in cache.


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
    spec: CsvSpec,
    file_pe: int | None,
    num_pes: int | None,
    pe_message: object,
    block_bytes: int = FAST_BLOCK_BYTES,
) -> RangeResult:
    """Reduce the lines in bytes ``[start, stop)`` of ``path`` (None: to the end).

    ``start`` must be 0 or just after a line end, ``stop`` just after one
    (or None). ``pe_message(column, value, num_pes)`` words the error for a
    PE id beyond ``num_pes``.
    """
    report = FileReport(path, pe=file_pe)
    result = RangeResult(path, start, CommPartial(), report)
    limits = tuple(spec.limit(c) for c in spec.columns[:-1])
    table = KeyTable(len(spec.columns) - 1, limits)
    buffer = BlockBuffer()
    key_counts = np.zeros(0, dtype=np.int64)
    first_line = 1
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        result.error = (None, f"cannot open: {exc.strerror}")
        return result
    with handle:
        try:
            handle.seek(start)
            limit = None if stop is None else stop - start
            for block, last in line_blocks(handle, report, block_bytes, limit=limit):
                if last:
                    frame, lines = parse_last_line(block, first_line, spec, report)
                    if _add_frame(result, frame, lines, first_line, file_pe, num_pes, pe_message):
                        return result
                    break
                fast = tokenize_block(
                    block,
                    table,
                    time_optional=spec.optional_last,
                    has_time_column=True,
                    all_times=False,
                    buffer=buffer,
                )
                if fast is not None:
                    counts = np.bincount(fast.key_ids, minlength=table.size)
                    if len(counts) > len(key_counts):
                        key_counts = np.r_[
                            key_counts, np.zeros(len(counts) - len(key_counts), np.int64)
                        ]
                    key_counts[: len(counts)] += counts
                    report.lines_read += len(fast.key_ids)
                    if fast.time_range is not None:
                        low, high = fast.time_range
                        result.partial.add_times(low / 1_000_000, high / 1_000_000)
                    if num_pes is not None:
                        result.error = _fast_check(fast.key_ids, table.values, num_pes, pe_message)
                        if result.error is not None:
                            line, message = result.error
                            result.error = (first_line + (line or 0), message)
                            return result
                    first_line += len(fast.key_ids)
                    continue
                frame, lines = parse_block(block, first_line, spec, report)
                if _add_frame(result, frame, lines, first_line, file_pe, num_pes, pe_message):
                    return result
                first_line += block.count(b"\n")
        except OSError as exc:
            result.error = (None, f"read failed: {exc.strerror}")
            return result
    _add_keys(result, table.values, key_counts, file_pe)
    return result


def _fast_check(
    key_ids: np.ndarray, values: np.ndarray, num_pes: int, pe_message: object
) -> tuple[int | None, str] | None:
    """First row (0-based) whose source or destination is beyond ``num_pes``."""
    bad_key = (values[:, 1] >= num_pes) | (values[:, 3] >= num_pes)
    if not bad_key.any():
        return None
    rows = np.flatnonzero(bad_key[key_ids])
    if not rows.size:
        return None
    row = int(rows[0])
    src, dst = int(values[key_ids[row], 1]), int(values[key_ids[row], 3])
    column, value = ("src_pe", src) if src >= num_pes else ("dst_pe", dst)
    return row, pe_message(column, value, num_pes)  # type: ignore[operator]


def _add_frame(
    result: RangeResult,
    frame: object,
    lines: np.ndarray | None,
    first_line: int,
    file_pe: int | None,
    num_pes: int | None,
    pe_message: object,
) -> bool:
    """Add a reference-parsed frame; True when it holds an error (recorded)."""
    import pandas as pd

    assert isinstance(frame, pd.DataFrame)
    if not len(frame):
        return False
    if num_pes is not None:
        src = frame["src_pe"].to_numpy()
        dst = frame["dst_pe"].to_numpy()
        beyond = np.flatnonzero((src >= num_pes) | (dst >= num_pes))
        if beyond.size:
            row = int(beyond[0])
            column, value = ("src_pe", src[row]) if src[row] >= num_pes else ("dst_pe", dst[row])
            line = first_line + row if lines is None else int(lines[row])
            result.error = (line, pe_message(column, int(value), num_pes))  # type: ignore[operator]
            return True
    result.partial.add_frame(frame)
    if file_pe is not None:
        result.mismatched += int((frame["src_pe"].to_numpy() != file_pe).sum())
    return False


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
    path = parts[0].path
    report = FileReport(path, pe=pe, phase=phase)
    out = FileResult(report)
    offset = 0
    for part in parts:
        r = part.report
        if part.error is not None:
            line, message = part.error
            out.error = (None if line is None else line + offset, message)
            return out
        report.lines_read += r.lines_read
        report.lines_blank += r.lines_blank
        report.bytes_read += r.bytes_read
        # Replay the examples through FileReport.skip's rule with file-wide
        # counts: a range keeps the first examples of each reason, a superset
        # of what the whole file keeps from it.
        seen: dict[str, int] = {}
        for e in r.examples:
            seen[e.reason] = seen.get(e.reason, 0) + 1
            index = report.skipped.get(e.reason, 0) + seen[e.reason]
            if index <= MAX_EXAMPLES_PER_REASON and len(report.examples) < MAX_EXAMPLES:
                report.examples.append(SkippedLine(e.line + offset, e.reason, e.text))
        for reason, n in r.skipped.items():
            report.skipped[reason] = report.skipped.get(reason, 0) + n
        offset += r.lines_total
        out.partial.merge(part.partial)
        out.mismatched += part.mismatched
    out.partial = out.partial.compact()
    return out

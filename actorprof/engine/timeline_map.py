"""Map step of the timeline: logical files -> binned send times, no DataFrame.

The logical format's block loop (:func:`actorprof.read.logical_blocks`)
gives canonical blocks as key ids and exact microseconds: they are binned as
integers (:meth:`~actorprof.analyze.timeline.TimelineAccumulator.add_micros`),
their PE ids taken from the key table, their line numbers made only for the
few extremes kept per block. Other blocks come as the reference parser's
frame and are added as frames. Small whole files are tokenized together
(:func:`actorprof.read.joined_small_files`), as the matrix's map step does;
a group that is not canonical throughout is halved until the odd files are
found, and those are read on their own.

Everything a frame-by-frame read gives is given the same, in file order: the
bins, untimed and outlier counts, the extremes (their chunks are the same:
a block of a file, or a whole small file), the line accounting, the
warnings and the first error (``tests/test_timeline_engine.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from ..analyze.timeline import TimeExtremes, TimelineAccumulator
from ..read import (
    FileReport,
    JoinedFiles,
    ReadReport,
    TraceFile,
    canonical_lines,
    file_columns,
    joined_small_files,
    logical_blocks,
    new_key_table,
    require_trace_lines,
)
from .run import _mismatch_warning

__all__ = ["read_times"]


def _add_counts(total: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``total + counts``, the shorter one padded with zeros."""
    if len(counts) > len(total):
        counts = counts.copy()
        counts[: len(total)] += total
        return counts
    total[: len(counts)] += counts
    return total


def read_times(
    files: Sequence[TraceFile],
    report: ReadReport,
    acc: TimelineAccumulator,
    extremes: TimeExtremes,
    *,
    block_bytes: int,
) -> None:
    """Add the send times of ``files`` to ``acc`` and ``extremes``.

    Each file's accounting is appended to ``report.files`` (in file order)
    and its warnings to ``report``, as :func:`actorprof.read.logical_file_frames`
    does; the PE-id limit is ``report.pe_limit``.

    Raises
    ------
    TraceFormatError
        The first file in order that cannot be read, as the frame reader.
    """
    reader = _TimesReader(files, report, acc, extremes, block_bytes)
    done = 0  # files before this one are read
    every_line = False  # a key per line, once a group showed lines mostly distinct
    paths = [f.path_text for f in files]
    for joined in joined_small_files(paths, block_bytes, block_bytes):
        # the files left out (unreadable, empty, larger, a cut line) are read
        # on their own in their place: a group is cut where one is missing
        cuts = np.flatnonzero(np.diff(joined.at) != 1) + 1
        for a, b in pairwise([0, *cuts.tolist(), len(joined)]):
            group = joined if b - a == len(joined) else joined.part(a, b)
            for i in range(done, int(group.at[0])):
                reader.file(i)
            every_line = reader.group(group, every_line)
            done = int(group.at[-1]) + 1
    for i in range(done, len(files)):
        reader.file(i)


class _TimesReader:
    """One unit's files read into an accumulator and extremes of its own."""

    def __init__(
        self,
        files: Sequence[TraceFile],
        report: ReadReport,
        acc: TimelineAccumulator,
        extremes: TimeExtremes,
        block_bytes: int,
    ) -> None:
        self.files = files
        self.report = report
        self.acc = acc
        self.extremes = extremes
        self.block_bytes = block_bytes

    def file(self, i: int) -> None:
        """File ``i`` on its own: the block loop, block by block."""
        trace_file = self.files[i]
        path = trace_file.path_text
        file_report = FileReport(path, pe=trace_file.pe, phase=trace_file.phase)
        self.report.add_files([file_report])
        table = new_key_table()
        mismatched = 0
        key_lines = np.zeros(0, dtype=np.int64)  # lines of each key, canonical blocks
        for block in logical_blocks(
            path,
            file_report,
            table,
            pe_limit=self.report.pe_limit,
            reason=self.report.pe_limit_reason,
            block_bytes=self.block_bytes,
        ):
            frame = block.frame
            rows = len(frame) if frame is not None else len(block.key_ids)  # type: ignore[arg-type]
            if not rows:
                continue
            lines = (
                block.first_line + np.arange(rows, dtype=np.int64)
                if block.lines is None
                else np.asarray(block.lines, dtype=np.int64)
            )
            if frame is not None:  # not canonical: the reference parser's frame
                mismatched += int((frame["src_pe"].to_numpy() != trace_file.pe).sum())
                self.acc.add(frame)
                times = frame["time_s"].to_numpy(dtype=np.float64)
                self.extremes.add_files([path], np.zeros(rows, dtype=np.int64), times, lines)
                continue
            assert block.key_ids is not None
            # the keys' PE ids per line, the other columns per key
            key_lines = _add_counts(key_lines, np.bincount(block.key_ids))
            src = table.values[:, 1][block.key_ids]
            self.acc.add_micros(src, block.micros, top_pe=int(src.max()))
            if block.micros is not None:
                self.extremes.add_micros(path, block.micros, lines)
        used = np.flatnonzero(key_lines)
        if len(used):
            values = table.values[used]
            mismatched += int(key_lines[used][values[:, 1] != trace_file.pe].sum())
            self.acc.note_pes(int(values[:, 3].max()))  # PEs that only receive
        require_trace_lines(file_report, "logical trace")
        if mismatched:
            self.report.warn(_mismatch_warning(trace_file, mismatched))

    def group(self, group: JoinedFiles, every_line: bool) -> bool:
        """Whole small files tokenized together; halved until the odd files
        are found (read on their own). Returns whether most lines had a key
        of their own (the next group then gives every line a key)."""
        table = new_key_table(every_line=every_line)
        found = canonical_lines(group.text, table, pe_limit=self.report.pe_limit)
        lines = group.lines
        if found is None or int(lines.sum()) != len(found[0]):
            if len(group) == 1:
                self.file(int(group.at[0]))
            else:
                half = len(group) // 2
                for part in (group.part(0, half), group.part(half, len(group))):
                    self.group(part, every_line)
            return every_line
        key_ids, micros = found
        n = len(group)
        chosen = [self.files[i] for i in group.at.tolist()]
        values = table.values[key_ids]
        src = values[:, 1]
        file_of_line = np.repeat(np.arange(n, dtype=np.int64), lines)
        pes = np.array([f.pe for f in chosen], dtype=np.int64)
        odd = src != pes[file_of_line]
        mismatched = np.zeros(n, dtype=np.int64)
        if odd.any():
            mismatched = np.bincount(file_of_line, weights=odd, minlength=n).astype(np.int64)
        # as columns: a report each costs 65,536 objects made, pickled and read
        # back at 65,536 PEs
        lines_read, blank = np.asarray(lines, dtype=np.int64), np.zeros(n, dtype=np.int64)
        sizes = np.diff(group.offsets).astype(np.int64)
        self.report.add_files([file_columns(chosen, lines_read, blank, sizes)])
        for j in np.flatnonzero(mismatched).tolist():
            self.report.warn(_mismatch_warning(chosen[j], int(mismatched[j])))
        if len(key_ids):
            top = max(int(src.max()), int(values[:, 3].max()))
            self.acc.add_micros(src, micros, top_pe=top)
        if micros is not None and len(micros):
            starts = np.cumsum(lines) - lines
            line = np.arange(len(micros), dtype=np.int64) - starts[file_of_line] + 1
            paths = [f.path_text for f in chosen]
            self.extremes.add_files(paths, file_of_line, micros / 1_000_000, line)
        return table.size > len(key_ids) // 2

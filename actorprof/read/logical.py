"""Reader of the logical trace: ``PE<i>_send.csv``, one line per message sent."""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .._text import format_ranges
from ..schema import (
    LOGICAL_COLUMNS,
    LOGICAL_DTYPES,
    LOGICAL_INT_COLUMNS,
    MAX_MSG_BYTES,
    PE_ID_CAP,
)
from ._fastscan import FAST_BLOCK_BYTES, BlockBuffer, KeyTable, LineKeys, tokenize_block
from ._files import TraceFile, pe_trace_files, small_file_text
from ._report import FileReport, ReadReport
from ._scan import (
    PE_LIMIT_PREFIX,
    CsvSpec,
    file_blocks,
    parse_block,
    parse_last_line,
    require_trace_lines,
    with_lines,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LOGICAL_SPEC",
    "LogicalBlock",
    "canonical_lines",
    "iter_logical",
    "logical_blocks",
    "logical_files",
    "new_key_table",
    "read_logical",
    "small_file_text",
]

LOGICAL_SPEC = CsvSpec(
    columns=LOGICAL_COLUMNS,
    dtypes=dict(LOGICAL_DTYPES),
    nonnegative=tuple(LOGICAL_INT_COLUMNS),
    optional_last=True,
    # sizeof(T) of one message: beyond 4 GiB it is corruption, and such
    # values would overflow the 64-bit byte totals.
    maxima=(("msg_bytes", MAX_MSG_BYTES),),
)


def logical_files(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    report: ReadReport | None = None,
    sizes: bool = True,
) -> list[TraceFile]:
    """The logical trace files a read of ``path`` would use, PE order.

    ``sizes``: stat each file for the read's plan (``report.sizes_planned``);
    the engine plans a folder of many files without (by their count).

    Raises
    ------
    NoTraceError
        No logical trace file under ``path``.
    UsageError
        ``path`` does not exist, or the phase choice is impossible.
    TraceFormatError
        A file's PE id is beyond ``num_pes``.
    """
    report = ReadReport(kind="logical") if report is None else report
    files = pe_trace_files(
        Path(path), "send", phase=phase, num_pes=num_pes, report=report, sizes=sizes
    )
    set_pe_limit(files, num_pes, report, single_file=not Path(path).is_dir())
    return files


#: PE ids a line of a single trace file may name without --num-pes: the file
#: alone says nothing of the run's size, so only absurd ids are set aside.
SINGLE_FILE_PE_LIMIT = PE_ID_CAP


def set_pe_limit(
    files: list[TraceFile], num_pes: int | None, report: ReadReport, *, single_file: bool
) -> None:
    """Decide which PE ids a line may name, before any line is read.

    With ``--num-pes N``: 0..N-1. Without, in a folder: fewer than
    ``max(64, 2 x the number of PE files)`` (the files are the run's PEs; an
    id far beyond them is corruption, and would make a run of that many
    PEs); for a single file: fewer than :data:`SINGLE_FILE_PE_LIMIT`. Lines
    naming another id are skipped, counted and shown with file and line, on
    every reading path alike.
    """
    if num_pes is not None:
        report.pe_limit = num_pes
        report.pe_limit_reason = f"{PE_LIMIT_PREFIX}beyond --num-pes {num_pes}"
        return
    if single_file:
        limit = SINGLE_FILE_PE_LIMIT
        report.pe_limit_reason = (
            f"{PE_LIMIT_PREFIX}beyond {limit - 1:,} "
            "(pass --num-pes N if the run really had more PEs)"
        )
    else:
        limit = max(64, 2 * len(files))
        report.pe_limit_reason = (
            f"{PE_LIMIT_PREFIX}far beyond the {len(files)} PE files (ids from {limit} on; pass "
            "--num-pes N if the run really had more PEs)"
        )
    report.pe_limit = limit
    stray = [f for f in files if f.pe >= limit]
    if stray:
        usual = [f.pe for f in files if f.pe < limit]
        report.warn(
            f"{stray[0].path}: PE {stray[0].pe} is far beyond the other PE files "
            f"(PE {format_ranges(usual) or 'none'})"
            + (f", and {len(stray) - 1} more" if len(stray) > 1 else "")
            + ": a stray file? Its lines are read, but PE ids from "
            f"{limit} on are skipped; pass --num-pes N if the run really had more PEs"
        )


def iter_logical(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    report: ReadReport | None = None,
    block_bytes: int = FAST_BLOCK_BYTES,
    line_numbers: bool = False,
    batch: bool = False,
) -> Iterator[pd.DataFrame]:
    """Stream a run's logical trace as DataFrame chunks in bounded memory.

    Parameters
    ----------
    path
        A run folder (holding ``PE<i>_send.csv`` files) or one such file.
    phase
        Read ``PE<i>_<phase>_send.csv``; None reads the unnamed files (or the
        only phase present).
    num_pes
        The run's PE count. When given, missing PE files are reported and a
        PE id at or beyond it is an error. None: no limit (infer later).
    report
        Receives per-file line accounting, notes and warnings. When None,
        anything skipped is announced with :class:`ActorProfWarning`.
    block_bytes
        Size of the text blocks parsed at once (memory per chunk ~ 1x this).
    line_numbers
        Add a ``line`` column: the 1-based line of each row in its file (the
        file is ``report.files[-1].path`` while its chunks are yielded, or
        ``report.files[file]`` with ``batch``).
    batch
        Read whole small files (at most ``block_bytes`` each) together, about
        ``block_bytes`` at a time: one chunk may then hold the rows of many
        files, in file order, and with ``line_numbers`` also has a ``file``
        column (the row's file: its index in ``report.files``). The rows, the
        line accounting and the warnings are those of the file-by-file read;
        a run of 65,536 PE files of a few lines is read ~100 times faster.

    Yields
    ------
    pandas.DataFrame
        Columns :data:`actorprof.schema.LOGICAL_COLUMNS` with their dtypes
        (and ``line``, when asked).

    Raises
    ------
    NoTraceError, UsageError, TraceFormatError
        As :func:`logical_files`. A line naming a PE id beyond ``num_pes``
        (or, without it, far beyond the PE files) is skipped and counted in
        ``report`` with its file and line, like any unreadable line.

    Examples
    --------
    >>> from actorprof import iter_logical, comm_matrices
    >>> mats = comm_matrices(iter_logical("run/"))  # doctest: +SKIP
    """
    own = report is None
    report = ReadReport(kind="logical") if report is None else report
    report.kind = "logical"
    files = logical_files(path, phase=phase, num_pes=num_pes, report=report)
    report.num_pes = num_pes
    yield from logical_file_frames(
        files, report, block_bytes=block_bytes, line_numbers=line_numbers, batch=batch
    )
    if own:
        report.emit_python_warnings()


def logical_file_frames(
    files: Sequence[TraceFile],
    report: ReadReport,
    *,
    block_bytes: int = FAST_BLOCK_BYTES,
    line_numbers: bool = False,
    batch: bool = False,
) -> Iterator[pd.DataFrame]:
    """:func:`iter_logical` of files already listed (:func:`logical_files`).

    The PE-id limit is ``report.pe_limit`` (set by the listing); each file's
    accounting is appended to ``report.files`` and its warnings to
    ``report``. A parallel reader gives each worker a run of the files and a
    report of its own with the same limit, then joins the reports in order.
    """
    if batch:
        yield from _read_batched(
            list(files), report, block_bytes=block_bytes, line_numbers=line_numbers
        )
        return
    for trace_file in files:
        yield from _read_file(
            trace_file, report, block_bytes=block_bytes, line_numbers=line_numbers
        )


def _read_file(
    trace_file: TraceFile,
    report: ReadReport,
    *,
    block_bytes: int,
    line_numbers: bool,
    file_column: bool = False,
) -> Iterator[pd.DataFrame]:
    """The frames of one file (appended to ``report``), and its warnings."""
    file_report = FileReport(trace_file.path_text, pe=trace_file.pe, phase=trace_file.phase)
    report.files.append(file_report)
    index = len(report.files) - 1
    mismatched = 0
    for frame in scan_logical(
        trace_file.path,
        file_report,
        pe_limit=report.pe_limit,
        reason=report.pe_limit_reason,
        block_bytes=block_bytes,
        line_numbers=line_numbers,
        file=index if file_column else None,
    ):
        mismatched += int((frame["src_pe"].to_numpy() != trace_file.pe).sum())
        yield frame
    require_trace_lines(file_report, "logical trace")
    if mismatched:
        report.warn(_mismatch_warning(trace_file, mismatched))


def _mismatch_warning(trace_file: TraceFile, mismatched: int) -> str:
    return (
        f"{trace_file.path}: {mismatched} line(s) have src_pe != {trace_file.pe} "
        "(the PE in the file name); they are counted under the src_pe they carry"
    )


def _read_batched(
    files: list[TraceFile], report: ReadReport, *, block_bytes: int, line_numbers: bool
) -> Iterator[pd.DataFrame]:
    """The files in order, small ones tokenized in groups of up to ``block_bytes``.

    A group with odd files costs more tokenizer calls (it is halved until
    they are found), so groups shrink after one, down to single files read
    by the block loop alone, and grow again after clean ones: a run where
    every file has a noise line is read about as fast as file by file.
    """
    group: list[tuple[TraceFile, bytes]] = []
    size = 0
    target = block_bytes
    for trace_file in files:
        data = small_file_text(trace_file.path_text, block_bytes)
        alone = data is not None and not group and len(data) >= target
        if data is None or alone:
            yield from _read_group(
                group, report, block_bytes=block_bytes, line_numbers=line_numbers
            )
            group, size = [], 0
            yield from _read_file(
                trace_file,
                report,
                block_bytes=block_bytes,
                line_numbers=line_numbers,
                file_column=line_numbers,
            )
            if alone and not (report.files[-1].lines_skipped or report.files[-1].lines_blank):
                target = min(block_bytes, 2 * target)
            continue
        group.append((trace_file, data))
        size += len(data)
        if size >= target:
            odd = yield from _read_group(
                group, report, block_bytes=block_bytes, line_numbers=line_numbers
            )
            target = max(1, target // 8) if odd else min(block_bytes, 2 * target)
            group, size = [], 0
    yield from _read_group(group, report, block_bytes=block_bytes, line_numbers=line_numbers)


def _read_group(
    group: list[tuple[TraceFile, bytes]],
    report: ReadReport,
    *,
    block_bytes: int,
    line_numbers: bool,
) -> Generator[pd.DataFrame, None, int]:
    """One frame of a group of whole files whose lines are all canonical;
    otherwise the group is halved until the odd files are found, which the
    block loop reads one by one (exact skips, examples and errors).
    Returns the number of odd files."""
    if not group:
        return 0
    table = new_key_table()
    found = canonical_lines(b"".join(data for _, data in group), table, pe_limit=report.pe_limit)
    lines = np.array([data.count(b"\n") for _, data in group], dtype=np.int64)
    if found is None or int(lines.sum()) != len(found[0]):
        if len(group) == 1:
            yield from _read_file(
                group[0][0],
                report,
                block_bytes=block_bytes,
                line_numbers=line_numbers,
                file_column=line_numbers,
            )
            return 1
        half = len(group) // 2
        odd = 0
        for part in (group[:half], group[half:]):
            odd += yield from _read_group(
                part, report, block_bytes=block_bytes, line_numbers=line_numbers
            )
        return odd
    key_ids, micros = found
    values = table.values[key_ids]
    file_of_line = np.repeat(np.arange(len(group), dtype=np.int64), lines)
    pes = np.array([trace_file.pe for trace_file, _ in group], dtype=np.int64)
    mismatched = np.bincount(
        file_of_line, weights=values[:, 1] != pes[file_of_line], minlength=len(group)
    ).astype(np.int64)
    first = len(report.files)
    for j, (trace_file, data) in enumerate(group):
        report.files.append(
            FileReport(
                trace_file.path_text,
                pe=trace_file.pe,
                phase=trace_file.phase,
                lines_read=int(lines[j]),
                bytes_read=len(data),
            )
        )
        if mismatched[j]:
            report.warn(_mismatch_warning(trace_file, int(mismatched[j])))
    frame = _tokens_frame(values, micros)
    if line_numbers:
        starts = np.cumsum(lines) - lines
        frame = frame.assign(
            line=np.arange(len(frame), dtype=np.int64) - starts[file_of_line] + 1,
            file=first + file_of_line,
        )
    yield frame
    return 0


def read_logical(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    report: ReadReport | None = None,
) -> pd.DataFrame:
    """Read a whole logical trace into one DataFrame (small traces, notebooks).

    Same parameters as :func:`iter_logical`; for large traces prefer the
    streaming reader with the reductions in :mod:`actorprof.analyze`.

    Examples
    --------
    >>> df = read_logical("examples/histo_4pe")  # doctest: +SKIP
    >>> df.groupby("dst_pe").size()  # doctest: +SKIP
    """
    import pandas as pd

    frames = list(iter_logical(path, phase=phase, num_pes=num_pes, report=report))
    if not frames:
        return pd.DataFrame({c: np.asarray([], dtype=LOGICAL_DTYPES[c]) for c in LOGICAL_COLUMNS})
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class LogicalBlock:
    """One block of whole lines of a logical file, as the block loop read it.

    Canonical blocks come from the vectorised tokenizer: ``key_ids`` (one per
    line; the values are ``table.values[key_ids]``) and the times. Any other
    block comes from the reference parser: ``frame`` and ``lines``. Both
    forms hold the same data for the same text.
    """

    first_line: int
    key_ids: np.ndarray | None = None
    #: Exact microseconds per line (fast route, when all times were asked for).
    micros: np.ndarray | None = None
    #: Smallest and largest time in microseconds (fast route; None: no times).
    time_range: tuple[int, int] | None = None
    frame: pd.DataFrame | None = None
    #: Line of each frame row; None when the rows are consecutive lines.
    lines: np.ndarray | None = None

    def line_of(self, row: int) -> int:
        """The file line (1-based) of row ``row``."""
        return self.first_line + row if self.lines is None else int(self.lines[row])

    def to_frame(self, table: KeyTable) -> pd.DataFrame:
        """The block as a logical frame (columns :data:`LOGICAL_COLUMNS`)."""
        if self.frame is not None:
            return self.frame
        assert self.key_ids is not None
        return _tokens_frame(table.values[self.key_ids], self.micros)

    def without_stray(
        self, table: KeyTable, limit: int | None, reason: str, report: FileReport
    ) -> LogicalBlock:
        """The block without its rows naming a PE id at or beyond ``limit``,
        which are counted in ``report`` as skipped for ``reason`` (with file
        line and text): the one PE-limit check of every reading path."""
        if limit is None:
            return self
        if self.key_ids is not None:
            values = table.values
            bad_key = (values[:, 1] >= limit) | (values[:, 3] >= limit)
            if not bad_key.any():
                return self
            bad = bad_key[self.key_ids]
            if not bad.any():
                return self
            rows = np.flatnonzero(bad)
            texts = [
                ", ".join(str(v) for v in values[self.key_ids[r]]) + ", ..." for r in rows[:12]
            ]
            keep = ~bad
            micros = None if self.micros is None else self.micros[keep]
            block = LogicalBlock(
                self.first_line,
                key_ids=self.key_ids[keep],
                micros=micros,
                time_range=(
                    (int(micros.min()), int(micros.max()))
                    if micros is not None and micros.size
                    else None
                ),
                lines=(self.first_line + np.flatnonzero(keep)).astype(np.int64),
            )
        else:
            assert self.frame is not None
            src = self.frame["src_pe"].to_numpy()
            dst = self.frame["dst_pe"].to_numpy()
            bad = (src >= limit) | (dst >= limit)
            if not bad.any():
                return self
            rows = np.flatnonzero(bad)
            shown = self.frame.iloc[rows[:12]]
            texts = [
                ", ".join(str(v) for v in row[:5]) + ", ..."
                for row in shown.itertuples(index=False)
            ]
            keep = ~bad
            lines = self.first_line + np.arange(len(bad)) if self.lines is None else self.lines
            block = LogicalBlock(
                self.first_line,
                frame=self.frame[keep].reset_index(drop=True),
                lines=np.asarray(lines)[keep],
            )
        report.lines_read -= len(rows)
        first = [self.line_of(int(r)) for r in rows[: len(texts)]]
        report.skip_many(len(rows), reason, list(zip(first, texts, strict=True)))
        return block


def new_key_table(*, every_line: bool = False) -> KeyTable:
    """An empty key table for the logical format's integer fields;
    ``every_line``: a :class:`LineKeys` table (a key per line, no hashing)."""
    spec = LOGICAL_SPEC
    make = LineKeys if every_line else KeyTable
    return make(len(spec.columns) - 1, tuple(spec.limit(c) for c in spec.columns[:-1]))


def logical_blocks(
    path: str | Path,
    report: FileReport,
    table: KeyTable,
    *,
    start: int = 0,
    stop: int | None = None,
    all_times: bool = True,
    pe_limit: int | None = None,
    reason: str = "",
    block_bytes: int = FAST_BLOCK_BYTES,
) -> Iterator[LogicalBlock]:
    """The block loop of the logical format: every reader of it runs this.

    Reads the lines in bytes ``[start, stop)`` of ``path`` (``start`` 0 or
    just after a line end, ``stop`` just after one or None for the end);
    line numbers are relative to ``start``. Counts every line in ``report``
    (read, blank, or skipped under a reason). ``all_times`` false: the fast
    route keeps only the smallest and largest time (cheaper). Lines naming a
    PE id from ``pe_limit`` on are skipped for ``reason`` (the one PE-limit
    check: :meth:`LogicalBlock.without_stray`).

    Raises
    ------
    TraceFormatError
        The file cannot be opened or read (the message names it).
    """
    spec = LOGICAL_SPEC
    buffer = BlockBuffer()
    first_line = 1
    limit = None if stop is None else stop - start
    for block, last in file_blocks(Path(path), report, block_bytes, start=start, limit=limit):
        if last:
            frame, lines = parse_last_line(block, first_line, spec, report)
            found = LogicalBlock(first_line, frame=frame, lines=lines)
            yield found.without_stray(table, pe_limit, reason, report)
            return
        fast = tokenize_block(
            block,
            table,
            time_optional=spec.optional_last,
            has_time_column=True,
            all_times=all_times,
            buffer=buffer,
        )
        if fast is None:
            frame, lines = parse_block(block, first_line, spec, report)
            found = LogicalBlock(first_line, frame=frame, lines=lines)
            first_line += block.count(b"\n")
        else:
            if fast.micros is None and _names_beyond(table, fast.key_ids, pe_limit):
                # rare: the times of the lines kept are needed for the time range
                fast = tokenize_block(
                    block, table, time_optional=True, has_time_column=True, buffer=buffer
                )
                assert fast is not None
            report.lines_read += len(fast.key_ids)
            found = LogicalBlock(
                first_line, key_ids=fast.key_ids, micros=fast.micros, time_range=fast.time_range
            )
            first_line += len(fast.key_ids)
        yield found.without_stray(table, pe_limit, reason, report)


def canonical_lines(
    block: bytes, table: KeyTable, *, pe_limit: int | None = None
) -> tuple[np.ndarray, np.ndarray | None] | None:
    """Key ids and exact microseconds (None: no time field) of each line of
    ``block``, when every line is canonical and names PE ids below
    ``pe_limit``; None otherwise (read the text with :func:`logical_blocks`).

    ``block`` may join whole lines of several files (the engine tokenizes
    small files together); what it returns for a line does not depend on
    the lines around it.
    """
    if not block.endswith(b"\n"):
        return None
    fast = tokenize_block(
        block, table, time_optional=LOGICAL_SPEC.optional_last, has_time_column=True
    )
    if fast is None or _names_beyond(table, fast.key_ids, pe_limit):
        return None
    return fast.key_ids, fast.micros


def _names_beyond(table: KeyTable, key_ids: np.ndarray, limit: int | None) -> bool:
    if limit is None:
        return False
    values = table.values
    bad_key = (values[:, 1] >= limit) | (values[:, 3] >= limit)
    return bool(bad_key.any() and bad_key[key_ids].any())


def scan_logical(
    path: Path,
    report: FileReport,
    *,
    pe_limit: int | None = None,
    reason: str = "",
    block_bytes: int = FAST_BLOCK_BYTES,
    line_numbers: bool = False,
    file: int | None = None,
) -> Iterator[pd.DataFrame]:
    """Frames of one logical file (the plain reader over :func:`logical_blocks`);
    lines naming a PE id from ``pe_limit`` on are skipped for ``reason``;
    ``line_numbers`` adds a ``line`` column (each row's file line), and a
    ``file`` column of ``file`` when given.

    Raises
    ------
    TraceFormatError
        The file cannot be read.
    """
    table = new_key_table()
    for block in logical_blocks(
        path, report, table, pe_limit=pe_limit, reason=reason, block_bytes=block_bytes
    ):
        frame = block.to_frame(table)
        if line_numbers:
            frame = with_lines(frame, block.lines, block.first_line, file=file)
        if len(frame):
            yield frame


def _tokens_frame(values: np.ndarray, micros: np.ndarray | None) -> pd.DataFrame:
    """The logical frame of tokenized lines (times: exact microseconds / 1e6,
    which is bit for bit what parsing the 6-decimal text gives)."""
    import pandas as pd

    data: dict[str, np.ndarray] = {
        name: values[:, i].astype(LOGICAL_DTYPES[name])
        for i, name in enumerate(LOGICAL_INT_COLUMNS)
    }
    data["time_s"] = np.full(len(values), np.nan) if micros is None else micros / 1_000_000
    return pd.DataFrame(data, columns=list(LOGICAL_COLUMNS))

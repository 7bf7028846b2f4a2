"""Reader of the logical trace: ``PE<i>_send.csv``, one line per message sent."""

from __future__ import annotations

from collections.abc import Iterator
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from ..schema import LOGICAL_COLUMNS, LOGICAL_DTYPES, LOGICAL_INT_COLUMNS, MAX_MSG_BYTES
from ._fastscan import FAST_BLOCK_BYTES, BlockBuffer, KeyTable, tokenize_block
from ._files import TraceFile, pe_trace_files
from ._report import FileReport, ReadReport
from ._scan import (
    CsvSpec,
    RowCheck,
    apply_check,
    file_blocks,
    parse_block,
    parse_last_line,
    require_trace_lines,
)

__all__ = ["LOGICAL_SPEC", "iter_logical", "logical_files", "pe_limit_message", "read_logical"]

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
) -> list[TraceFile]:
    """The logical trace files a read of ``path`` would use, PE order.

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
    return pe_trace_files(Path(path), "send", phase=phase, num_pes=num_pes, report=report)


def iter_logical(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    report: ReadReport | None = None,
    block_bytes: int = FAST_BLOCK_BYTES,
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

    Yields
    ------
    pandas.DataFrame
        Columns :data:`actorprof.schema.LOGICAL_COLUMNS` with their dtypes.

    Raises
    ------
    NoTraceError, UsageError, TraceFormatError
        As :func:`logical_files`; TraceFormatError also for a PE id beyond
        ``num_pes``, naming the file and line.

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
    for trace_file in files:
        file_report = FileReport(str(trace_file.path), pe=trace_file.pe, phase=trace_file.phase)
        report.files.append(file_report)
        mismatched = 0
        for frame in scan_logical(
            trace_file.path,
            file_report,
            check=_pe_limit(num_pes),
            block_bytes=block_bytes,
        ):
            mismatched += int((frame["src_pe"].to_numpy() != trace_file.pe).sum())
            yield frame
        require_trace_lines(file_report, "logical trace")
        if mismatched:
            report.warn(
                f"{trace_file.path}: {mismatched} line(s) have src_pe != {trace_file.pe} "
                "(the PE in the file name); they are counted under the src_pe they carry"
            )
    if own:
        report.emit_python_warnings()


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
    frames = list(iter_logical(path, phase=phase, num_pes=num_pes, report=report))
    if not frames:
        return pd.DataFrame({c: np.asarray([], dtype=LOGICAL_DTYPES[c]) for c in LOGICAL_COLUMNS})
    return pd.concat(frames, ignore_index=True)


def pe_limit_message(column: str, value: int, num_pes: int) -> str:
    """The error for a PE id at or beyond ``--num-pes``."""
    return (
        f"{column} {value} but --num-pes is {num_pes}. "
        "Pass the run's real PE count (or omit --num-pes to infer it)."
    )


def scan_logical(
    path: Path,
    report: FileReport,
    *,
    check: RowCheck | None = None,
    block_bytes: int = FAST_BLOCK_BYTES,
) -> Iterator[pd.DataFrame]:
    """Frames of one logical file: the vectorised tokenizer where it can, else the
    reference parser (same frames, same line accounting; see docs/performance.md).

    Raises
    ------
    TraceFormatError
        The file cannot be read, or ``check`` rejects a row (file and line).
    """
    spec = LOGICAL_SPEC
    table = KeyTable(len(spec.columns) - 1, tuple(spec.limit(c) for c in spec.columns[:-1]))
    buffer = BlockBuffer()
    first_line = 1
    for block, last in file_blocks(path, report, block_bytes):
        lines: np.ndarray | None = None
        if last:
            frame, lines = parse_last_line(block, first_line, spec, report)
        else:
            fast = tokenize_block(
                block,
                table,
                time_optional=spec.optional_last,
                has_time_column=True,
                all_times=True,
                buffer=buffer,
            )
            if fast is None:
                frame, lines = parse_block(block, first_line, spec, report)
            else:
                frame = _tokens_frame(table.values[fast.key_ids], fast.micros)
                report.lines_read += len(frame)
        apply_check(frame, lines, first_line, path, check)
        first_line += block.count(b"\n")
        if len(frame):
            yield frame


def _tokens_frame(values: np.ndarray, micros: np.ndarray | None) -> pd.DataFrame:
    """The logical frame of tokenized lines (times: exact microseconds / 1e6,
    which is bit for bit what parsing the 6-decimal text gives)."""
    data: dict[str, np.ndarray] = {
        name: values[:, i].astype(LOGICAL_DTYPES[name])
        for i, name in enumerate(LOGICAL_INT_COLUMNS)
    }
    data["time_s"] = np.full(len(values), np.nan) if micros is None else micros / 1_000_000
    return pd.DataFrame(data, columns=list(LOGICAL_COLUMNS))


def _pe_limit(num_pes: int | None) -> RowCheck | None:
    """Check of the first row whose source or destination is beyond ``num_pes``.

    The first such row in file order is reported (its source if both are
    beyond), so the error does not depend on how the file is cut in blocks.
    """
    if num_pes is None:
        return None

    def check(frame: pd.DataFrame) -> tuple[int, str] | None:
        src = frame["src_pe"].to_numpy()
        dst = frame["dst_pe"].to_numpy()
        beyond = np.flatnonzero((src >= num_pes) | (dst >= num_pes))
        if not beyond.size:
            return None
        row = int(beyond[0])
        column, values = ("src_pe", src) if src[row] >= num_pes else ("dst_pe", dst)
        return row, pe_limit_message(column, int(values[row]), num_pes)

    return check

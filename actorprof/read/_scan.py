"""Block scanner for the numeric, comma-separated traces (logical and PAPI).

A file is read in blocks of whole lines. Each block is first parsed by the
pandas C engine (fast path); the result is only trusted when the block's
structure is exactly what the format allows (same number of fields on every
line, no blank line, every value in range). Otherwise the block is parsed
again line by line (exact path), which knows each line's number and counts
every unreadable line under a reason. Both paths produce identical frames for
well-formed input.

Line grammar (FORMATS.md): fields separated by ``,`` with any blanks around
it; integers ``[+-]?[0-9]+``; the optional last field a decimal number
(``time_s``); ``\\r\\n`` line ends and blank lines are accepted. A last line
without a line end was cut by a killed job unless its time field is complete
(6 decimals, as printf ``%lf`` writes it).
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from ..errors import TraceFormatError
from ._fastscan import (
    COMMA,
    DOT,
    MINUS,
    NEWLINE,
    PLUS,
    CompactBlock,
    compact_block,
)
from ._files import BOM
from ._long import LONG_LINE, LONG_LINE_MARK, MAX_LINE_BYTES, cut_long_lines, long_line
from ._printf import printf_columns
from ._report import MAX_TEXT, FileReport

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CsvSpec",
    "apply_check",
    "file_blocks",
    "line_blocks",
    "nul_reason",
    "parse_block",
    "parse_files",
    "parse_last_line",
    "require_trace_lines",
    "scan_csv",
    "without_bom",
]

DEFAULT_BLOCK_BYTES = 16 * 1024 * 1024

_INT_RE = re.compile(rb"[+-]?[0-9]+")
_FLOAT_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_COMPLETE_TIME_RE = re.compile(rb"[0-9]+\.[0-9]{6}")
# What the start of a trace line can look like: a line cut by a killed job
# holds nothing else (NUL bytes or text are another story).
_TRACE_PREFIX_RE = re.compile(rb"[0-9 \t,.+\-eE]*")

CUT_LINE = "last line cut (no line end; the job was probably killed)"
NUL_BYTES = "NUL bytes (file blocks never written; the node probably crashed)"
BAD_FIELDS = "wrong number of fields"
NOT_A_NUMBER = "not a number"
NEGATIVE = "negative value"
TOO_LARGE = "number too large"
#: Start of the reasons of lines naming a PE id beyond the run: trace lines all
#: the same (a file of only such lines is not "not a trace file").
PE_LIMIT_PREFIX = "PE id "


def nul_reason(text: bytes) -> str:
    """The skip reason of a line holding NUL bytes: :data:`LONG_LINE` for a
    line too long (:func:`line_blocks` marks it), else :data:`NUL_BYTES`."""
    return LONG_LINE if LONG_LINE_MARK in text else NUL_BYTES


@dataclass(frozen=True)
class CsvSpec:
    """Shape of one numeric trace format.

    ``columns`` are all columns in file order; the last one is the float
    ``time_s`` column, which may be absent from a line when
    ``optional_last`` is true. Every other column is an integer column.
    """

    columns: tuple[str, ...]
    dtypes: dict[str, np.dtype[np.generic]]
    nonnegative: tuple[str, ...]
    optional_last: bool = True
    #: Tighter upper bounds than the dtype's, for values that cannot be
    #: real (and whose sums would overflow 64-bit totals).
    maxima: tuple[tuple[str, int], ...] = ()
    #: Try :func:`._printf.printf_columns` first (lines with every field).
    printf: bool = False
    #: Columns the frames hold (None: all); every field is still checked.
    keep: tuple[str, ...] | None = None
    #: The skip reason of a value beyond its column's ``maxima`` bound, when
    #: it is not "number too large" (a PE id far beyond the run's PE files).
    beyond: tuple[tuple[str, str], ...] = ()

    @property
    def frame_columns(self) -> list[str]:
        """Columns of the frames read with this spec."""
        return list(self.columns if self.keep is None else self.keep)

    def limit(self, name: str) -> int:
        """Largest valid value of integer column ``name``."""
        for column, bound in self.maxima:
            if column == name:
                return bound
        return int(np.iinfo(self.dtypes[name]).max)  # type: ignore[type-var]

    @property
    def max_fields(self) -> int:
        return len(self.columns)

    @property
    def min_fields(self) -> int:
        return len(self.columns) - (1 if self.optional_last else 0)


#: Check run on every parsed block: returns (row index, message) of the first
#: row that makes the whole read impossible (e.g. a PE id beyond --num-pes).
RowCheck = Callable[["pd.DataFrame"], "tuple[int, str] | None"]


def line_blocks(
    handle: BinaryIO, report: FileReport, block_bytes: int, *, limit: int | None = None
) -> Iterator[tuple[bytes, bool]]:
    """Blocks of whole lines read from ``handle``, then the unended rest.

    Yields ``(block, False)`` for text ending with a line end, and finally
    ``(rest, True)`` when the file (or the ``limit`` bytes read) does not end
    with one. Counts the bytes read in ``report.bytes_read``.

    Linear in the file size whatever its lines' lengths: each byte read is
    searched for a line end once and copied into a block once (a file of
    NUL bytes, one endless line, used to be re-copied at every read).

    A line longer than :data:`MAX_LINE_BYTES` is not held: once that much of
    it is read, the rest is read and dropped, and the line is yielded as its
    first bytes and :data:`LONG_LINE_MARK` (one line still: line numbers and
    bytes read do not change).
    """
    left = limit
    pending: list[bytes] = []  # text read since the last line end
    held = 0  # bytes in pending
    dropping: bytes | None = None  # what stands for a line too long, being dropped
    while left is None or left > 0:
        data = handle.read(block_bytes if left is None else min(block_bytes, left))
        if not data:
            break
        if left is not None:
            left -= len(data)
        report.bytes_read += len(data)
        end = _last_line_end(data)
        if end < 0:
            if dropping is None:
                pending.append(data)
                held += len(data)
                if held > MAX_LINE_BYTES:
                    dropping, pending, held = long_line(pending), [], 0
            continue
        if dropping is not None:  # the line too long ends in this read
            block = dropping + cut_long_lines(data[data.find(b"\n") : end + 1])
            dropping = None
        else:
            block = _join([*pending, data[: end + 1]]) if pending else data[: end + 1]
            block = cut_long_lines(block)
        pending = [data[end + 1 :]] if end + 1 < len(data) else []
        held = len(data) - end - 1
        yield block, False
    if dropping is not None:
        yield dropping, True
    elif pending:
        yield cut_long_lines(_join(pending)), True


def _last_line_end(data: bytes) -> int:
    return data.rfind(b"\n")


def _join(pieces: list[bytes]) -> bytes:
    return b"".join(pieces)


def without_bom(blocks: Iterator[tuple[bytes, bool]]) -> Iterator[tuple[bytes, bool]]:
    """``blocks`` of a file from its start, without the UTF-8 byte order mark
    that may start it.

    An editor or a Windows tool may add one. Kept, it would glue itself to the
    first field (a first trace line skipped as ``not a number``, a label
    ``'\\ufeffhisto'`` splitting PE 0). Dropped before any route sees the bytes,
    so every route reads the same lines; a BOM anywhere else is text.
    """
    first = True
    for block, last in blocks:
        if first:
            block = block.removeprefix(BOM)
        first = False
        if block:
            yield block, last


def file_blocks(
    path: Path, report: FileReport, block_bytes: int, *, start: int = 0, limit: int | None = None
) -> Iterator[tuple[bytes, bool]]:
    """:func:`line_blocks` of the file at ``path`` (``limit`` bytes from
    ``start``, default all), which is closed at the end; from the start,
    :func:`without_bom`.

    Raises
    ------
    TraceFormatError
        The file cannot be opened or read (the message names it).
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 - the with below closes it
    except OSError as exc:
        raise TraceFormatError(f"cannot open: {exc.strerror}", path=path) from exc
    with handle:
        try:
            if start:
                handle.seek(start)
            blocks = line_blocks(handle, report, block_bytes, limit=limit)
            yield from without_bom(blocks) if not start else blocks
        except OSError as exc:
            raise TraceFormatError(f"read failed: {exc.strerror}", path=path) from exc


def scan_csv(
    path: Path,
    spec: CsvSpec,
    report: FileReport,
    *,
    check: RowCheck | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    line_numbers: bool = False,
) -> Iterator[pd.DataFrame]:
    """Yield frames of the readable lines of ``path``, filling ``report``.

    ``line_numbers``: add a ``line`` column (the 1-based file line of each row).

    Raises
    ------
    TraceFormatError
        When ``check`` rejects a row (with its line number), or the file
        cannot be opened.
    """
    first_line = 1
    for block, last in file_blocks(path, report, block_bytes):
        if last:
            frame, lines = parse_last_line(block, first_line, spec, report)
        else:
            frame, lines = parse_block(block, first_line, spec, report)
        apply_check(frame, lines, first_line, path, check)
        if line_numbers:
            frame = with_lines(frame, lines, first_line)
        if not last:
            # rows in order (lines None) are every line of the block
            first_line += len(frame) if lines is None else block.count(b"\n")
        if len(frame):
            yield frame


def with_lines(
    frame: pd.DataFrame, lines: np.ndarray | None, first_line: int, *, file: int | None = None
) -> pd.DataFrame:
    """``frame`` with a ``line`` column: ``lines``, or consecutive lines from
    ``first_line``; and a ``file`` column of ``file`` when given."""
    numbers = first_line + np.arange(len(frame)) if lines is None else lines
    if file is None:
        return frame.assign(line=np.asarray(numbers, dtype=np.int64))
    return frame.assign(
        line=np.asarray(numbers, dtype=np.int64), file=np.full(len(frame), file, dtype=np.int64)
    )


def parse_block(
    block: bytes, first_line: int, spec: CsvSpec, report: FileReport
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """Parse whole lines (the reference reader), counting them in ``report``.

    Returns the frame and the line number of each row, or None when the
    rows are the block's lines in order (``first_line``, ``first_line + 1``...).
    """
    fast = _fast(block, spec)
    if fast is None:
        return _exact(block, first_line, spec, report)
    frame, compact = fast
    report.lines_read += len(frame)
    if compact.kept is None:
        return frame, None
    report.lines_blank += compact.blank
    return frame, first_line + compact.kept


@dataclass(frozen=True)
class JoinedFiles:
    """Rows of whole files parsed together (:func:`parse_files`).

    The rows of file ``j`` are ``frame.iloc[bounds[j]:bounds[j + 1]]``;
    ``lines[j]`` is its number of lines (blank ones included), ``row_lines``
    the 1-based line of each row in its own file.
    """

    frame: pd.DataFrame
    bounds: np.ndarray
    lines: np.ndarray
    row_lines: np.ndarray


def parse_files(texts: list[bytes], spec: CsvSpec) -> JoinedFiles | None:
    """Parse the whole texts of small files with one call of the fast path.

    Each text must end with a line end. None when the joined text is not
    for the fast path (a line the grammar refuses, a value out of range...):
    the caller then reads the files one by one, to find which line of which
    file is at fault. Every condition of the fast path holds line by line,
    so the joined text passes exactly when each file's text would, and each
    file gets the rows and line accounting :func:`parse_block` gives it.
    """
    fast = _fast(b"".join(texts), spec)
    if fast is None:
        return None
    frame, compact = fast
    lines = np.fromiter((t.count(b"\n") for t in texts), dtype=np.int64, count=len(texts))
    starts = np.concatenate(([0], np.cumsum(lines)))
    line_of_row = np.arange(len(frame)) if compact.kept is None else compact.kept
    file_of_row = np.searchsorted(starts, line_of_row, side="right") - 1
    bounds = np.searchsorted(file_of_row, np.arange(len(texts) + 1))
    row_lines = (line_of_row - starts[file_of_row] + 1).astype(np.int64)
    return JoinedFiles(frame, bounds, lines, row_lines)


def apply_check(
    frame: pd.DataFrame,
    lines: np.ndarray | None,
    first_line: int,
    path: Path,
    check: RowCheck | None,
) -> None:
    if check is None or not len(frame):
        return
    bad = check(frame)
    if bad is not None:
        row, message = bad
        line = first_line + row if lines is None else int(lines[row])
        raise TraceFormatError(message, path=path, line=line)


def _fast(block: bytes, spec: CsvSpec) -> tuple[pd.DataFrame, CompactBlock] | None:
    """Parse a block with the C engine; None when the exact path must decide.

    The block is first reduced to its compact form (:func:`compact_block`:
    no blanks around fields, no blank lines) and its structure is checked
    against the line grammar byte by byte, vectorised: every field a
    ``[+-]?[0-9]+`` integer of at most 18 characters (so int64 never
    overflows) but the time field, a decimal ``[+-]?([0-9]+.?[0-9]*|.[0-9]+)``;
    the C engine then only converts text the grammar accepts. Values are
    range-checked in int64 before the cast to the column dtypes, never cast
    blindly (pandas < 3 wraps int32 overflow silently). A ``printf`` spec's
    blocks of canonical lines are read by :func:`printf_columns` instead,
    with the same result and without the C engine.
    """
    import pandas as pd

    if spec.printf:
        columns = printf_columns(block, spec, spec.keep)
        if columns is not None:
            frame = pd.DataFrame(columns, columns=spec.frame_columns)
            return frame, CompactBlock(_NO_BYTES, None, len(frame))
    compact = compact_block(block)
    if compact is None:
        return None
    full = _check_structure(compact.data, spec)
    if full is None:
        return None
    if not len(full):
        return _empty_frame(spec), compact
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            frame = pd.read_csv(
                io.BytesIO(compact.data.tobytes()),
                header=None,
                names=list(spec.columns),
                dtype=_PARSE_DTYPES[spec.columns],
                sep=",",
                quoting=csv.QUOTE_NONE,
                index_col=False,
                engine="c",
                na_filter=True,
                **_float_precision(),
            )
    except (ValueError, OverflowError, pd.errors.ParserError, Warning):
        return None
    if len(frame) != len(full):
        return None
    data: dict[str, np.ndarray] = {}
    for name in spec.columns[:-1]:
        values = frame[name].to_numpy()
        low = 0 if name in spec.nonnegative else int(np.iinfo(spec.dtypes[name]).min)  # type: ignore[type-var]
        if len(values) and (int(values.min()) < low or int(values.max()) > spec.limit(name)):
            return None
        data[name] = values.astype(spec.dtypes[name])
    time = frame[spec.columns[-1]].to_numpy(dtype=np.float64)
    if not np.isfinite(time[full]).all() or not np.isnan(time[~full]).all():
        return None
    data[spec.columns[-1]] = time
    return pd.DataFrame(data, columns=spec.frame_columns), compact


_NO_BYTES = np.zeros(0, dtype=np.uint8)
#: Longest integer field the fast path converts: 18 digits always fit int64.
_MAX_INT_CHARS = 18


def _float_precision() -> dict[str, Any]:
    """Correctly rounded floats on every pandas (the default is only since pandas 3)."""
    import pandas as pd

    return {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


class _ParseDtypes(dict[tuple[str, ...], dict[str, type]]):
    """Columns -> the dtypes read by the C engine: int64 and float64 only."""

    def __missing__(self, columns: tuple[str, ...]) -> dict[str, type]:
        dtypes: dict[str, type] = {name: np.int64 for name in columns[:-1]}
        dtypes[columns[-1]] = np.float64
        self[columns] = dtypes
        return dtypes


_PARSE_DTYPES = _ParseDtypes()


def _check_structure(data: np.ndarray, spec: CsvSpec) -> np.ndarray | None:
    """Whether each line of a compact block has the grammar's shape.

    Returns, per line, whether it has the time field (None: some line breaks
    the grammar). Only the non-digit bytes are looked at, with their
    neighbours: a comma follows a digit and precedes a field's first
    character; a sign starts a field and precedes a digit or a dot; a dot,
    at most one per line, lies in the time field next to a digit.
    """
    at = np.flatnonzero(data < 48)
    kinds = data[at]
    framed = np.concatenate(([NEWLINE], data, [NEWLINE])).astype(np.uint8)
    before, after = framed[at], framed[at + 2]
    is_comma, is_end, is_dot = kinds == COMMA, kinds == NEWLINE, kinds == DOT
    is_sign = (kinds == PLUS) | (kinds == MINUS)
    digit_before, digit_after = before >= 48, after >= 48
    sign_after = (after == PLUS) | (after == MINUS)
    bad = is_comma & (~digit_before | ~(digit_after | sign_after | (after == DOT)))
    bad |= is_end & ~digit_before & (before != DOT)
    bad |= is_sign & (((before != COMMA) & (before != NEWLINE)) | (~digit_after & (after != DOT)))
    bad |= is_dot & ((~digit_before & ~digit_after) | (~digit_after & (after != NEWLINE)))
    if bad.any():
        return None
    commas = np.cumsum(is_comma)
    per_line = np.diff(commas[is_end], prepend=0)
    full = per_line == spec.max_fields - 1
    if not full.all() and not (
        spec.optional_last and (per_line[~full] == spec.min_fields - 1).all()
    ):
        return None
    if is_dot.any():
        line_of = np.cumsum(is_end) - is_end
        dot_lines = line_of[is_dot]
        if (
            not full[dot_lines].all()
            or (commas[is_dot] != commas[is_end][dot_lines]).any()
            or np.bincount(dot_lines).max() > 1
        ):
            return None  # a dot in an integer field, or two in one field
    # field lengths: the integer fields are those not ending a full line
    seps = at[is_comma | is_end]
    lengths = np.diff(seps, prepend=-1) - 1
    is_time = kinds[is_comma | is_end] == NEWLINE
    is_time[is_time] = full
    if (lengths[~is_time] > _MAX_INT_CHARS).any():
        return None
    return np.asarray(full, dtype=np.bool_)


def _empty_frame(spec: CsvSpec) -> pd.DataFrame:
    return _frame([], len(spec.columns), spec)


def _exact(
    block: bytes, first_line: int, spec: CsvSpec, report: FileReport
) -> tuple[pd.DataFrame, np.ndarray]:
    """Parse a block line by line; count every unreadable line."""
    ncols = len(spec.columns)
    rows: list[list[int | float]] = []
    line_numbers: list[int] = []
    pieces = block.split(b"\n")
    pieces.pop()  # block ends with a line end: the last piece is empty
    for offset, raw in enumerate(pieces):
        number = first_line + offset
        values = _parse_line(raw, number, spec, report)
        if values is not None:
            rows.append(values)
            line_numbers.append(number)
    report.lines_read += len(rows)
    frame = _frame(rows, ncols, spec)
    return frame, np.asarray(line_numbers, dtype=np.int64)


def _parse_line(
    raw: bytes, number: int, spec: CsvSpec, report: FileReport
) -> list[int | float] | None:
    text = raw.rstrip(b"\r")
    if not text.strip():
        report.lines_blank += 1
        return None
    shown = shown_text(text)
    if b"\x00" in text:
        report.skip(number, nul_reason(text), shown)
        return None
    fields = [f.strip() for f in text.split(b",")]
    if not spec.min_fields <= len(fields) <= spec.max_fields:
        report.skip(
            number,
            f"{BAD_FIELDS} (expected {_expected(spec)}, found {len(fields)})",
            shown,
        )
        return None
    values: list[int | float] = []
    for name, field in zip(spec.columns, fields, strict=False):
        dtype = spec.dtypes[name]
        if dtype.kind == "f":
            if not _FLOAT_RE.fullmatch(field):
                report.skip(number, f"{NOT_A_NUMBER} in {name}", shown)
                return None
            number_value = float(field)
            if not math.isfinite(number_value):
                report.skip(number, f"{TOO_LARGE} for {name}", shown)
                return None
            values.append(number_value)
            continue
        if not _INT_RE.fullmatch(field):
            report.skip(number, f"{NOT_A_NUMBER} in {name}", shown)
            return None
        value = _int(field)
        if value < 0 and name in spec.nonnegative:
            report.skip(number, f"{NEGATIVE} in {name}", shown)
            return None
        info = np.iinfo(dtype)  # type: ignore[type-var]
        if not info.min <= value <= spec.limit(name):
            beyond = dict(spec.beyond).get(name)
            if beyond is not None and info.min <= value <= info.max:
                reason = beyond  # a PE id far beyond the run, not beyond its type
            else:
                tighter = beyond is None and spec.limit(name) != info.max
                bound = f"max {spec.limit(name)}" if tighter else dtype.name
                reason = f"{TOO_LARGE} for {name} ({bound})"
            report.skip(number, reason, shown)
            return None
        values.append(value)
    if len(values) < len(spec.columns):
        values.append(float("nan"))
    return values


def shown_text(text: bytes) -> str:
    """The start of a line as text, enough for a message (which cuts at 120
    characters): decoding a whole 1 GB line of NUL bytes would cost seconds."""
    return text[: 4 * (MAX_TEXT + 8)].decode("utf-8", "replace")


def _int(field: bytes) -> int:
    """Value of a ``[+-]?[0-9]+`` field; beyond 20 digits, a stand-in as large.

    ``int()`` refuses strings of more than 4300 digits (CVE-2020-10735), and
    no column holds a number of more than 19.
    """
    digits = field.lstrip(b"+-").lstrip(b"0")
    if len(digits) <= 20:
        return int(field)
    return -(10**20) if field.startswith(b"-") else 10**20


def parse_last_line(
    raw: bytes, number: int, spec: CsvSpec, report: FileReport
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The file's last line has no line end: keep it only if visibly complete."""
    text = raw.rstrip(b"\r")
    fields = [f.strip() for f in text.split(b",")]
    complete = len(fields) == spec.max_fields and _COMPLETE_TIME_RE.fullmatch(fields[-1])
    if not text.strip():
        report.lines_blank += 1
        return _frame([], len(spec.columns), spec), None
    if not complete and _TRACE_PREFIX_RE.fullmatch(text):
        report.skip(number, CUT_LINE, shown_text(text))
        return _frame([], len(spec.columns), spec), None
    return _exact(raw + b"\n", number, spec, report)


def _frame(rows: list[list[int | float]], ncols: int, spec: CsvSpec) -> pd.DataFrame:
    import pandas as pd

    columns: list[tuple[int | float, ...]] = (
        list(zip(*rows, strict=False)) if rows else [()] * ncols
    )
    data = {
        name: np.asarray(col, dtype=spec.dtypes[name])
        for name, col in zip(spec.columns, columns, strict=False)
    }
    return pd.DataFrame(data, columns=spec.frame_columns)


def _expected(spec: CsvSpec) -> str:
    if spec.min_fields == spec.max_fields:
        return str(spec.max_fields)
    return f"{spec.min_fields} or {spec.max_fields}"


def require_trace_lines(report: FileReport, what: str) -> None:
    """Raise when a file had lines but none of them is a trace line.

    An empty file is valid (a PE that wrote nothing), and so is a file whose
    only line was cut by a killed job.
    """
    if (
        report.lines_read
        or any(reason.startswith(PE_LIMIT_PREFIX) for reason in report.skipped)
        or all(reason == CUT_LINE for reason in report.skipped)
    ):
        return
    first = report.examples[0]
    raise TraceFormatError(
        f"no line of this file is a {what} line (first: {first.reason}: {first.text!r}). "
        "Is it really a trace file? Move it out of the folder or fix it.",
        path=report.path,
        line=first.line,
    )

"""Reader of the physical trace: ``physical.txt``, one line per Conveyors call.

The file is the program's stdout (FORMATS.md section 4): trace lines are mixed
with whatever else the program printed. A **trace line** is, from its start::

    [blanks] TYPE SEP0 BYTES SEP SRC_PE SEP DST_PE [SEP EXTRA...] [blanks] [\\r]

    TYPE   local_send | nonblock_send | nonblock_progress   (case-sensitive)
    SEP0   ":" or "," with any blanks around it, or one or more blanks
    SEP    "," with any blanks around it, or one or more blanks
    BYTES, SRC_PE, DST_PE
           decimal integers [0-9]+ (a leading "-" is read, then rejected)
    EXTRA  anything: extra trailing fields are accepted and ignored

so ``nonblock_send, 8192, 3, 19``, ``local_send: 64 0 1`` and
``nonblock_progress,0,2,6, t=0.25`` are trace lines. Blanks are spaces and tabs.

Every other line is accounted for, never silently dropped:

- blank lines are counted as blank;
- a line whose first field is not a send type is **program output**, counted
  as skipped under that reason (an expected reason: said, never warned about);
- a line whose first field is a send type but whose rest does not follow the
  grammar is a **broken trace line** (e.g. a number cut or glued to text),
  counted under its own reason with the first examples and line numbers, as
  are negative numbers and numbers too large for their column;
- a last line without a line end that starts with a send type was cut by a
  killed job (printf writes the line end with the line), even if it parses.

A file in which no line is a readable trace line is an error (wrong file, or
the program was not built with ``-DENABLE_TRACE_PHYSICAL``). With
``num_pes``, a PE id at or beyond it is an error naming the file and line.
Without it, PE ids far beyond the others (:func:`stray_pes`) are skipped
lines, as in the logical trace: one corrupt id would make a run of that many
PEs. A UTF-8 byte order mark at the start of the file is not part of its
first line.

The file is read in blocks of whole lines, so memory stays bounded by the
block size; printf's own lines are parsed by numpy a block at a time, any
other line by :mod:`re` (see :mod:`._physical_lines`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import TraceFormatError, UsageError
from ..schema import (
    PHYSICAL_COLUMNS,
    PHYSICAL_FILE_NAME,
    PHYSICAL_INT_DTYPES,
)
from ._fastscan import BlockBuffer, KeyTable
from ._files import stdout_file
from ._long import LONG_LINE, LONG_LINE_MARK
from ._physical_lines import (
    BLANK_LINE,
    LOOKS_LIKE_TRACE,
    MAX_VALUES,
    TRACE_LINE_GRAMMAR,
    CountedLines,
    Lines,
    count_lines,
    new_line_keys,
)
from ._report import (
    MAX_EXAMPLES,
    MAX_EXAMPLES_PER_REASON,
    MAX_TEXT,
    FileReport,
    ReadReport,
)
from ._scan import CUT_LINE, NEGATIVE, NUL_BYTES, TOO_LARGE, file_blocks
from ._stray import StrayPes, stray_pes

if TYPE_CHECKING:  # the map step reads with numpy alone: its workers never import pandas
    import pandas as pd

    SEND_TYPE_DTYPE: pd.CategoricalDtype

__all__ = [
    "BROKEN_LINE",
    "NUL_BYTES",
    "PHYSICAL_FILE_NAME",
    "PROGRAM_OUTPUT",
    "SEND_TYPE_DTYPE",
    "TRACE_LINE_GRAMMAR",
    "PhysicalBlock",
    "PhysicalScan",
    "StrayPes",
    "begin_physical_read",
    "iter_physical",
    "no_trace_error",
    "physical_file",
    "physical_problems",
    "program_output_lines",
    "read_physical",
    "stray_pes",
]

DEFAULT_BLOCK_BYTES = 4 * 1024 * 1024  # numpy's work arrays stay in cache

PROGRAM_OUTPUT = "program output"
BROKEN_LINE = "broken trace line (expected: send type, bytes, src_pe, dst_pe)"

_PE_COLUMNS = ("src_pe", "dst_pe")


def physical_file(path: str | PathLike[str]) -> Path:
    """The physical trace file a read of ``path`` uses.

    ``path`` is the file itself, or a folder holding ``physical.txt``.

    Raises
    ------
    UsageError
        ``path`` does not exist, or is neither a regular file nor a folder.
    NoTraceError
        ``path`` is a folder without ``physical.txt`` (or where it is a folder).
    TraceFormatError
        The folder cannot be looked into.
    """
    return stdout_file(
        Path(path),
        PHYSICAL_FILE_NAME,
        pass_file="Pass the physical trace file (the program's stdout) itself.",
        missing="The physical trace is the stdout of a program built with "
        "-DENABLE_TRACE_PHYSICAL: redirect it to physical.txt, or pass the file itself.",
    )


def iter_physical(
    path: str | PathLike[str],
    *,
    num_pes: int | None = None,
    report: ReadReport | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> Iterator[pd.DataFrame]:
    """Stream a physical trace as DataFrame chunks in bounded memory.

    Parameters
    ----------
    path
        ``physical.txt`` or a folder holding it.
    num_pes
        The run's PE count; a PE id at or beyond it is an error. None: the
        lines naming PE ids far beyond the others (:func:`stray_pes`) are
        skipped and warned about (a first pass over the file finds them:
        they are known only at its end), and the views infer the PE count
        as the largest PE id left + 1.
    report
        Receives the line accounting (program output, broken lines, notes).
        When None, problems (not program output) are announced with
        :class:`ActorProfWarning`.
    block_bytes
        Size of the text blocks matched at once.

    Yields
    ------
    pandas.DataFrame
        Columns :data:`actorprof.schema.PHYSICAL_COLUMNS`: ``send_type``
        (categorical), ``buffer_bytes`` (int64), ``src_pe``, ``dst_pe`` (int32).

    Raises
    ------
    UsageError
        ``path`` does not exist or ``num_pes < 1``.
    NoTraceError
        A folder without ``physical.txt``.
    TraceFormatError
        No line of the file is a readable trace line (once the lines of
        stray PE ids are skipped), or a PE id is at or beyond ``num_pes``
        (file and line named).

    Examples
    --------
    >>> from actorprof import iter_physical, physical_matrices
    >>> mats = physical_matrices(iter_physical("run/physical.txt"))  # doctest: +SKIP
    """
    if num_pes is not None and num_pes < 1:
        raise UsageError(f"--num-pes must be at least 1, got {num_pes}")
    if block_bytes < 1:
        raise ValueError(f"block_bytes must be >= 1, got {block_bytes}")
    own = report is None
    report = ReadReport(kind="physical") if report is None else report
    begin_physical_read(report, num_pes)
    trace = physical_file(path)
    # the PE ids far beyond the others are known only once every line is
    # read: a first pass finds them, so that no frame holds their lines
    if num_pes is None:
        ids, lines = _pe_ids(trace, block_bytes)
        stray = stray_pes(ids, lambda: lines)
    else:
        stray = None
    file_report = FileReport(str(trace))
    report.files.append(file_report)
    scan = PhysicalScan(trace, file_report, num_pes, stray=stray)
    for block in scan.blocks(block_bytes):
        yield block.to_frame()
    if file_report.lines_read == 0:
        raise scan.nothing_read()
    if stray is not None and scan.first_beyond is not None:
        report.warn(stray.warning(str(trace), scan.first_beyond, file_report))
    if own:
        report.emit_python_warnings()


def begin_physical_read(report: ReadReport, num_pes: int | None) -> None:
    """Set up ``report`` for a read of a physical trace (every way of reading does this).

    Raises
    ------
    UsageError
        ``num_pes < 1``.
    """
    if num_pes is not None and num_pes < 1:
        raise UsageError(f"--num-pes must be at least 1, got {num_pes}")
    report.kind = "physical"
    report.num_pes = num_pes
    report.expected_reasons.add(PROGRAM_OUTPUT)  # counted and said, never warned about


def read_physical(
    path: str | PathLike[str],
    *,
    num_pes: int | None = None,
    report: ReadReport | None = None,
) -> pd.DataFrame:
    """Read a whole physical trace into one DataFrame.

    Same parameters as :func:`iter_physical`.

    Examples
    --------
    >>> df = read_physical("examples/ig_8pe_2nodes/physical")  # doctest: +SKIP
    >>> df.groupby("send_type", observed=False)["buffer_bytes"].sum()  # doctest: +SKIP
    """
    frames = list(iter_physical(path, num_pes=num_pes, report=report))
    if not frames:  # pragma: no cover - iter_physical raises first
        return _EMPTY_BLOCK.to_frame()
    import pandas as pd

    return pd.concat(frames, ignore_index=True)


def physical_problems(report: ReadReport) -> list[str]:
    """Human lines about the skipped lines that are not program output, with examples."""
    report.expected_reasons.add(PROGRAM_OUTPUT)
    return report.skipped_summary()


def program_output_lines(report: ReadReport) -> int:
    """How many lines of program output the read skipped."""
    return sum(f.skipped.get(PROGRAM_OUTPUT, 0) for f in report.files)


def _pe_ids(trace: Path, block_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct PE ids of the readable lines of ``trace``, and how many
    lines name each (for :func:`stray_pes`)."""
    scan = PhysicalScan(trace, FileReport(str(trace)), None)
    ids, lines = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    for block in scan.blocks(block_bytes, counted=True):
        counts = np.ones(len(block), np.int64) if block.counts is None else block.counts
        other = block.dst_pe != block.src_pe  # a line naming one id twice names it once
        ids, lines = _summed(
            np.concatenate([ids, block.src_pe, block.dst_pe[other]]),
            np.concatenate([lines, counts, counts[other]]),
        )
    return ids, lines


def _summed(ids: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``ids`` (ascending) and the sum of the ``weights`` of each."""
    distinct, at = np.unique(ids.astype(np.int64), return_inverse=True)
    sums = np.bincount(at.ravel(), weights=weights, minlength=distinct.size)
    return distinct, np.rint(sums).astype(np.int64)  # line counts: exact below 2**53


@dataclass
class PhysicalBlock:
    """The readable trace lines of one block, as columns (no DataFrame).

    With ``counts``, each row stands for that many lines (a counted block:
    :meth:`PhysicalScan.blocks` with ``counted``).
    """

    codes: np.ndarray  # int8: index in SEND_TYPES
    buffer_bytes: np.ndarray  # int64
    src_pe: np.ndarray  # int32
    dst_pe: np.ndarray  # int32
    counts: np.ndarray | None = None  # int64

    def __len__(self) -> int:
        return len(self.codes)

    def to_frame(self) -> pd.DataFrame:
        """The block as a frame of :data:`PHYSICAL_COLUMNS`."""
        import pandas as pd

        from ..schema import SEND_TYPE_DTYPE

        return pd.DataFrame(
            {
                "send_type": pd.Categorical.from_codes(self.codes, dtype=SEND_TYPE_DTYPE),
                "buffer_bytes": self.buffer_bytes,
                "src_pe": self.src_pe,
                "dst_pe": self.dst_pe,
            },
            columns=list(PHYSICAL_COLUMNS),
        )


@dataclass
class PhysicalScan:
    """One read of a physical trace file, or of a byte range of it.

    :meth:`blocks` fills ``report`` (line numbers relative to the range's
    first line, 1-based) and keeps the first line of program output, for
    the message of a file without a trace line (:func:`no_trace_error`).
    With ``stray``, the lines naming a PE id from its limit on are skipped,
    and the first of them kept as ``first_beyond`` (line, column, id), for
    the warning.
    """

    path: Path
    report: FileReport
    num_pes: int | None
    first_output: tuple[int, str] | None = None
    stray: StrayPes | None = None
    first_beyond: tuple[int, str, int] | None = None
    _pending: list[tuple[np.ndarray, str]] = field(default_factory=list)

    def blocks(
        self, block_bytes: int, *, start: int = 0, stop: int | None = None, counted: bool = False
    ) -> Iterator[PhysicalBlock]:
        """The readable lines of bytes ``[start, stop)`` (None: to the end), a block at a time.

        ``start`` must be 0 or just after a line end, ``stop`` just after one.
        Blocks without a readable line are not yielded. ``counted``: a block
        of printf's lines only may come as its distinct lines with their
        counts (:class:`PhysicalBlock` ``counts``; the same lines, the same
        accounting), for callers that sum lines, not list them.

        Raises
        ------
        TraceFormatError
            The file cannot be read, or a PE id is at or beyond ``num_pes``.
        """
        first_line = 1
        limit = None if stop is None else stop - start
        route = _CountedRoute() if counted else None
        for raw, last in file_blocks(self.path, self.report, block_bytes, start=start, limit=limit):
            if last:
                self._last_line(raw, first_line)
                break
            found = None if route is None else route.count(raw)
            if found is not None and self._names_stray(found):
                found = None  # its lines one by one: the stray ones are skipped, with their lines
            if found is not None:
                block, lines = self._counted_block(found, first_line), found.lines
            else:
                block, lines = self._block(raw, first_line)
            first_line += lines
            if len(block):
                yield block

    def _counted_block(self, found: CountedLines, first_line: int) -> PhysicalBlock:
        self.report.lines_read += found.lines
        numbers = {name: found.values[name].astype(PHYSICAL_INT_DTYPES[name]) for name in _NUMBERS}
        block = PhysicalBlock(found.codes, **numbers, counts=found.counts)
        if self.num_pes is not None and (
            int(block.src_pe.max()) >= self.num_pes or int(block.dst_pe.max()) >= self.num_pes
        ):  # the first such line, in line order, as the line-by-line route names it
            of_line = found.of_line()
            lines = PhysicalBlock(*(getattr(block, name)[of_line] for name in _BLOCK_COLUMNS))
            self._check_pes(lines, np.arange(found.lines), first_line)
        return block

    def _names_stray(self, found: CountedLines) -> bool:
        """Whether a counted block has a line naming a stray PE id."""
        return self.stray is not None and any(
            int(found.values[c].max()) >= self.stray.limit for c in _PE_COLUMNS
        )

    def nothing_read(self) -> TraceFormatError:
        """The error for a file without one readable trace line."""
        return no_trace_error(self.path, self.report, self.first_output)

    def _block(self, block: bytes, first_line: int) -> tuple[PhysicalBlock, int]:
        lines = Lines.of_block(block)
        rows = lines.rows
        if rows.size < len(lines):
            rest = np.ones(len(lines), dtype=bool)
            rest[rows] = False
            self._classify_rest(lines, np.flatnonzero(rest), first_line)
        if not rows.size:
            self._flush(lines, first_line)
            return _EMPTY_BLOCK, len(lines)
        good: np.ndarray | None = None  # None: every row so far
        for name in PHYSICAL_COLUMNS[1:]:
            numbers = lines.values[name]
            too_long = lines.too_long[name] | (numbers > MAX_VALUES[name])
            negative = numbers < 0
            if not (too_long.any() or negative.any()):
                continue
            good = np.ones(rows.size, dtype=bool) if good is None else good
            self._skip_rows(rows[too_long & good], f"{TOO_LARGE} for {name}")
            good &= ~too_long
            self._skip_rows(rows[negative & good], f"{NEGATIVE} in {name}")
            good &= ~negative
        if self.stray is not None:
            good = self._skip_stray(lines, good, first_line)
        self._flush(lines, first_line)
        kept = rows if good is None else rows[good]
        self.report.lines_read += int(kept.size)
        columns = {
            name: (lines.values[name] if good is None else lines.values[name][good]).astype(
                PHYSICAL_INT_DTYPES[name], copy=False
            )
            for name in PHYSICAL_COLUMNS[1:]
        }
        codes = lines.codes if good is None else lines.codes[good]
        found = PhysicalBlock(codes, **columns)
        self._check_pes(found, kept, first_line)
        return found, len(lines)

    def _classify_rest(self, lines: Lines, rest: np.ndarray, first_line: int) -> None:
        """Blank, program output or broken trace line, for the unmatched lines."""
        if not rest.size:
            return
        kinds = np.array([_kind(lines.raw(row)) for row in rest.tolist()], dtype=np.int8)
        blank, traceish, nul = kinds == _BLANK, kinds == _TRACEISH, kinds == _NUL
        output = kinds == _OUTPUT
        self.report.lines_blank += int(blank.sum())
        if output.any() and self.first_output is None:
            first = int(rest[int(np.argmax(output))])
            self.first_output = (first_line + first, lines.text(first))
        self._skip_rows(rest[output], PROGRAM_OUTPUT)
        self._skip_rows(rest[traceish], BROKEN_LINE)
        self._skip_rows(rest[nul], NUL_BYTES)
        self._skip_rows(rest[kinds == _LONG], LONG_LINE)

    def _skip_stray(
        self, lines: Lines, good: np.ndarray | None, first_line: int
    ) -> np.ndarray | None:
        """Skip the readable lines (``good`` of ``lines.rows``; None: all) that
        name a stray PE id; the readable lines left."""
        assert self.stray is not None
        src, dst = (lines.values[c] >= self.stray.limit for c in _PE_COLUMNS)
        far = src | dst
        if good is not None:
            far &= good
        if not far.any():
            return good
        self._skip_rows(lines.rows[far], self.stray.reason)
        if self.first_beyond is None:
            k = int(np.argmax(far))
            column = _PE_COLUMNS[0] if src[k] else _PE_COLUMNS[1]
            line = first_line + int(lines.rows[k])
            self.first_beyond = (line, column, int(lines.values[column][k]))
        return ~far if good is None else good & ~far

    def _skip_rows(self, rows: np.ndarray, reason: str) -> None:
        """Count ``rows`` under ``reason`` (examples chosen at :meth:`_flush`)."""
        if rows.size:
            self._pending.append((rows, reason))

    def _flush(self, lines: Lines, first_line: int) -> None:
        """Count the block's skipped rows; keep the first ones, in line order, as examples."""
        if not self._pending:
            return
        rows = np.concatenate([r for r, _ in self._pending])
        which = np.concatenate([np.full(r.size, k) for k, (r, _) in enumerate(self._pending)])
        reasons = [reason for _, reason in self._pending]
        self._pending.clear()
        order = np.argsort(rows, kind="stable")
        # the first few lines of each reason go through FileReport.skip (which
        # keeps examples, a few per reason), in line order; the rest are counted
        room = max(MAX_EXAMPLES - len(self.report.examples), 0)
        rank = np.zeros(len(order), dtype=np.int64)
        for k in range(len(reasons)):
            mine = order[which[order] == k]
            rank[mine] = np.arange(mine.size)
        shown = order[rank[order] < min(MAX_EXAMPLES_PER_REASON, room)]
        for k in shown:
            row = int(rows[k])
            self.report.skip(first_line + row, reasons[which[k]], lines.text(row))
        rest = np.ones(len(rows), dtype=bool)
        rest[shown] = False
        counted = np.bincount(which[rest], minlength=len(reasons))
        for k, n in enumerate(counted):
            if n:
                reason = reasons[k]
                self.report.skipped[reason] = self.report.skipped.get(reason, 0) + int(n)

    def _check_pes(self, block: PhysicalBlock, rows: np.ndarray, first_line: int) -> None:
        """The first line (in file order, whatever the blocks) naming a PE beyond ``num_pes``."""
        if self.num_pes is None or not len(block):
            return
        beyond = [np.flatnonzero(getattr(block, c) >= self.num_pes)[:1] for c in _PE_COLUMNS]
        found = [(int(rows[b[0]]), k) for k, b in enumerate(beyond) if b.size]
        if not found:
            return
        row, k = min(found)  # src_pe first on the same line
        column = _PE_COLUMNS[k]
        value = int(getattr(block, column)[int(np.searchsorted(rows, row))])
        raise TraceFormatError(
            f"{column} {value} but --num-pes is {self.num_pes}. "
            "Pass the run's real PE count (or omit --num-pes to infer it).",
            path=self.path,
            line=first_line + row,
        )

    def _last_line(self, raw: bytes, number: int) -> None:
        """The final line has no line end: a trace line there was cut."""
        lines = Lines.of_block(raw, ended=False)
        kind = _kind(raw)
        if kind == _BLANK:
            self.report.lines_blank += 1
        elif kind == _TRACEISH:
            self._skip_rows(np.array([0]), CUT_LINE)
        else:
            self._classify_rest(lines, np.array([0]), number)
        self._flush(lines, number)


def __getattr__(name: str) -> Any:
    # SEND_TYPE_DTYPE (a pandas dtype) on first use: the physical map step's
    # workers import this module and never pandas
    if name != "SEND_TYPE_DTYPE":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ..schema import SEND_TYPE_DTYPE

    return SEND_TYPE_DTYPE


_NUMBERS = PHYSICAL_COLUMNS[1:]
_BLOCK_COLUMNS = ("codes", "buffer_bytes", "src_pe", "dst_pe")


class _CountedRoute:
    """When :func:`count_lines` reads a range's blocks: while their lines keep
    few distinct texts. A block in which more than a quarter of the lines
    are new texts (65,536 PEs: nearly a link per line) turns it off for the
    range, as do blocks it keeps declining (CRLF line ends, program output
    throughout): looking texts up then costs more than parsing every line."""

    def __init__(self) -> None:
        self.table: KeyTable | None = new_line_keys()
        self.buffer = BlockBuffer()
        self.declined = self.counted = 0

    def count(self, raw: bytes) -> CountedLines | None:
        table = self.table
        if table is None:
            return None
        known = table.size
        found = count_lines(raw, table, self.buffer)
        if found is None:
            self.declined += 1
            if table.full or (self.declined >= _DECLINED_MIN and self.declined > self.counted):
                self.table = None
            return None
        self.counted += 1
        if 4 * (table.size - known) > found.lines:
            self.table = None
        return found


#: Blocks :class:`_CountedRoute` may decline before it weighs them against those it read.
_DECLINED_MIN = 8


def no_trace_error(
    path: str | Path, report: FileReport, first_output: tuple[int, str] | None
) -> TraceFormatError:
    """The error for a file without one readable trace line (``report`` is the
    whole file's, ``first_output`` its first line of program output)."""
    if report.skipped.keys() == {NUL_BYTES}:
        return TraceFormatError(
            f"only NUL bytes in this file ({report.bytes_read:,} bytes): its data was "
            "never written (did the node crash, or the disk fill up?). Rerun the program, "
            "or pass the output of another run.",
            path=path,
        )
    problems = report.lines_skipped - report.skipped.get(PROGRAM_OUTPUT, 0)
    if problems:
        first = next(e for e in report.examples if e.reason != PROGRAM_OUTPUT)
        return TraceFormatError(
            f"no readable trace line: {problems} line(s) could not be read (first: "
            f"{first.reason}: {first.text!r}). Fix the file or rerun the program.",
            path=path,
            line=first.line,
        )
    text = "" if first_output is None else first_output[1]
    text = text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "..."
    shown = f" (first: {text!r})" if text else ""
    counted = (
        f"{report.lines_total} line(s), "
        f"{report.skipped.get(PROGRAM_OUTPUT, 0)} of program output{shown}"
        if report.bytes_read
        else "0 line(s): the file is empty (0 bytes)"
    )
    return TraceFormatError(
        f"no trace line in this file: {counted}. "
        "A physical trace has lines like 'nonblock_send, 8192, 3, 19'; was the program "
        "built with -DENABLE_TRACE_PHYSICAL, and is this its stdout?",
        path=path,
    )


_BLANK, _TRACEISH, _NUL, _OUTPUT, _LONG = range(5)
_BLANK_RE = re.compile(BLANK_LINE.encode())
_LOOKS_LIKE_TRACE_RE = re.compile(LOOKS_LIKE_TRACE.encode())


def _kind(raw: bytes) -> int:
    """What a line that is not a trace line is: blank, broken trace line, NUL bytes, output."""
    if LONG_LINE_MARK in raw:
        return _LONG
    if _BLANK_RE.match(raw):
        return _BLANK
    if _LOOKS_LIKE_TRACE_RE.match(raw):
        return _TRACEISH
    # NUL bytes are no one's output: blocks of the file that were never written
    return _NUL if b"\0" in raw else _OUTPUT


_EMPTY_BLOCK = PhysicalBlock(
    np.zeros(0, dtype=np.int8),
    np.zeros(0, dtype=np.int64),
    np.zeros(0, dtype=np.int32),
    np.zeros(0, dtype=np.int32),
)

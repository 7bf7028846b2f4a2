"""Reader of the PAPI trace: ``PE<i>_PAPI.csv``, one line per handled message.

Each file is written by the RECEIVING PE: one line per message handled by a
mailbox's ``process`` (the PROC region), plus one line for the MAIN region
(mailbox -1) written at ``done(0)``. Line grammar (FORMATS.md section 2)::

    src_node, src_pe, dst_node, dst_pe, msg_bytes, mailbox, num_sends,
    <counter 1>, ..., <counter k>, time_s

with 1 <= k <= 4 counter columns. ``k`` is sniffed from the heads of the
files: a good line is a line of integers ending with a decimal number (9 to
12 fields); each file votes for the field count most common among its first
good lines, and the run takes the count most files vote for (one damaged
line cannot decide; a file voting otherwise is named in a warning). Every
line of every file must then have that many fields, others are skipped and
counted. The time column is not optional.

Counter names: ``counters`` names the counter columns in order (default
``PAPI_TOT_INS, PAPI_LST_INS``). A file with more counter columns than names
gets the extra ones named ``counter3``, ``counter4`` (1-based position), so
no column is lost. A file with fewer counter columns than the default names
uses the first default names; fewer than user-given names is an error (the
names were meant for another trace).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import TraceFormatError, UsageError
from ..schema import (
    DEFAULT_PAPI_COUNTERS,
    MAIN_MAILBOX,
    MAX_PAPI_COUNTERS,
    PAPI_BASE_COLUMNS,
    PAPI_RESERVED_NAMES,
    papi_columns,
    papi_dtypes,
)
from ._files import TraceFile, file_columns, pe_trace_files, small_file_text
from ._report import FileReport, ReadReport
from ._scan import (
    DEFAULT_BLOCK_BYTES,
    CsvSpec,
    JoinedFiles,
    RowCheck,
    parse_files,
    require_trace_lines,
    scan_csv,
)
from .logical import set_pe_limit

__all__ = [
    "first_line_with_mailbox",
    "iter_papi",
    "papi_chunks",
    "papi_counter_names",
    "papi_files",
    "papi_plan",
    "papi_spec",
    "read_papi",
]

_MIN_FIELDS = len(PAPI_BASE_COLUMNS) + 1 + 1  # base + one counter + time
_MAX_FIELDS = len(PAPI_BASE_COLUMNS) + MAX_PAPI_COUNTERS + 1
_COMPLETE_TIME = re.compile(rb",\s*[0-9]+\.[0-9]{6}\s*\r?$")
# A good line, whole: integer fields, then a time field with a decimal point,
# each with the blanks ``bytes.strip`` removes around it.
_BLANK = rb"[ \t\n\r\x0b\x0c]*"
_GOOD_LINE = re.compile(
    rb"(?:"
    + _BLANK
    + rb"[+-]?[0-9]+"
    + _BLANK
    + rb",)+"
    + _BLANK
    + rb"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    + _BLANK
)
_SNIFF_BYTES = 1 << 16
#: Small whole files parsed together, up to this many bytes at a time.
_BATCH_BYTES = 4 << 20
_SNIFF_LINES = 256
#: Files whose heads vote for the run's counter count (spread over the run).
_SNIFF_FILES = 512
_NAME = re.compile(r"[^\s,]+")


def papi_files(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    report: ReadReport | None = None,
    sizes: bool = True,
) -> list[TraceFile]:
    """The PAPI trace files a read of ``path`` would use, PE order (``sizes``:
    each stat'ed for the read's plan, :func:`~actorprof.read.stat_planned`).

    ``PE<i>_send.csv`` files next to them (a run traced with both flags) are
    not PAPI files and are ignored.

    Raises
    ------
    NoTraceError
        No PAPI trace file under ``path``.
    UsageError
        ``path`` does not exist, or the phase choice is impossible.
    TraceFormatError
        A file's PE id is beyond ``num_pes``.
    """
    report = ReadReport(kind="papi") if report is None else report
    return pe_trace_files(
        Path(path), "papi", phase=phase, num_pes=num_pes, report=report, sizes=sizes
    )


def papi_counter_names(n_counters: int, counters: Sequence[str] | None = None) -> tuple[str, ...]:
    """Names of ``n_counters`` counter columns, given the user's ``counters``.

    Parameters
    ----------
    n_counters
        Counter columns in the file (1 to 4).
    counters
        Names given by the user, or None for ``PAPI_TOT_INS, PAPI_LST_INS``.

    Returns
    -------
    tuple of str
        Exactly ``n_counters`` names: the given ones, then ``counter<k>``
        (1-based position) for columns beyond them.

    Raises
    ------
    UsageError
        Invalid, duplicate or reserved names, more than 4 names, or more
        names given than the file has counter columns.

    Examples
    --------
    >>> papi_counter_names(3)
    ('PAPI_TOT_INS', 'PAPI_LST_INS', 'counter3')
    >>> papi_counter_names(1)
    ('PAPI_TOT_INS',)
    """
    names = check_counter_names(counters)
    if counters is not None and len(names) > n_counters:
        raise UsageError(
            f"--counters names {len(names)} counters ({', '.join(names)}) but the trace has "
            f"{n_counters} counter column(s). Give at most {n_counters} name(s)."
        )
    names = names[:n_counters]
    return (*names, *(f"counter{k + 1}" for k in range(len(names), n_counters)))


def check_counter_names(counters: Sequence[str] | None) -> tuple[str, ...]:
    """Validate user counter names (None: the defaults); see :func:`papi_counter_names`."""
    if counters is None:
        return tuple(DEFAULT_PAPI_COUNTERS)
    names = tuple(str(c).strip() for c in counters)
    if not names:
        raise UsageError("--counters needs at least one name, e.g. PAPI_TOT_INS,PAPI_LST_INS")
    if len(names) > MAX_PAPI_COUNTERS:
        raise UsageError(
            f"--counters names {len(names)} counters; PAPI traces hold at most {MAX_PAPI_COUNTERS}"
        )
    for name in names:
        if not _NAME.fullmatch(name):
            raise UsageError(
                f"bad counter name {name!r}: names are comma-separated, without blanks"
            )
        if name in PAPI_RESERVED_NAMES:
            raise UsageError(f"counter name {name!r} is a column of the PAPI tables; rename it")
    if len(set(names)) != len(names):
        raise UsageError(f"--counters names a counter twice: {', '.join(names)}")
    return names


def papi_spec(counters: tuple[str, ...]) -> CsvSpec:
    """The scanner's shape of a PAPI line with these counter columns."""
    return CsvSpec(
        columns=papi_columns(counters),
        dtypes=papi_dtypes(counters),
        # mailbox is -1 on the MAIN line, so it may be negative
        nonnegative=tuple(c for c in papi_columns(counters)[:-1] if c != "mailbox"),
        optional_last=False,
        printf=True,
    )


def _sniff_counters(files: list[TraceFile], report: ReadReport) -> int | None:
    """Counter columns of the run (None: no good line in any file's head).

    Each file votes for the field count most common among the good lines of
    its head (so one damaged line cannot decide), and the run takes the
    count most files vote for (then the most lines). A file that votes
    otherwise is named in a warning: its lines of another width are skipped.
    Of more than :data:`_SNIFF_FILES` files, that many spread evenly over the
    run vote (each head is a file to open: 65,536 of them took longer than
    reading the trace); a file of another width among the others has its
    lines skipped as ``wrong number of fields``, warned with file and line.
    """
    votes: Counter[int] = Counter()
    lines: Counter[int] = Counter()
    own: dict[Path, int] = {}
    if len(files) > _SNIFF_FILES:
        spread = np.linspace(0, len(files) - 1, _SNIFF_FILES).round().astype(np.int64)
        files = [files[int(i)] for i in np.unique(spread)]
    for trace_file in files:
        counts = _head_counter_counts(trace_file.path)
        if counts:
            mode = max(counts, key=lambda k: (counts[k], -k))
            own[trace_file.path] = mode
            votes[mode] += 1
            lines.update(counts)
    if not votes:
        return None
    run = max(votes, key=lambda k: (votes[k], lines[k], -k))
    for path, mode in own.items():
        if mode != run:
            report.warn(
                f"{path}: its lines have {mode} counter column(s) "
                f"({len(PAPI_BASE_COLUMNS) + mode + 1} fields), the run's {run} "
                f"({len(PAPI_BASE_COLUMNS) + run + 1} fields): its lines of another width "
                "are skipped (a file of another run?)"
            )
    return run


def _head_counter_counts(path: Path) -> Counter[int]:
    """How many good lines of each counter count the head of the file holds."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError as exc:
        raise TraceFormatError(f"cannot open: {exc.strerror}", path=path) from exc
    lines = head.split(b"\n")
    last = lines.pop()  # no line end: cut by the block, or by a killed job
    if len(head) < _SNIFF_BYTES and _COMPLETE_TIME.search(last):
        lines.append(last)
    counts: Counter[int] = Counter()
    # printf %lf always writes a decimal point: a line of integers is not trusted
    for line in lines[:_SNIFF_LINES]:
        if _GOOD_LINE.fullmatch(line):
            fields = line.count(b",") + 1
            if _MIN_FIELDS <= fields <= _MAX_FIELDS:
                counts[fields - len(PAPI_BASE_COLUMNS) - 1] += 1
    return counts


def _pe_limit(num_pes: int | None) -> RowCheck | None:
    if num_pes is None:
        return None

    def check(frame: pd.DataFrame) -> tuple[int, str] | None:
        for column in ("src_pe", "dst_pe"):
            values = frame[column].to_numpy()
            beyond = np.flatnonzero(values >= num_pes)
            if beyond.size:
                row = int(beyond[0])
                return row, (
                    f"{column} {int(values[row])} but --num-pes is {num_pes}. "
                    "Pass the run's real PE count (or omit --num-pes to infer it)."
                )
        return None

    return check


def iter_papi(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    counters: Sequence[str] | None = None,
    report: ReadReport | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    line_numbers: bool = False,
) -> Iterator[pd.DataFrame]:
    """Stream a run's PAPI trace as DataFrame chunks in bounded memory.

    Parameters
    ----------
    path
        A run folder (holding ``PE<i>_PAPI.csv`` or ``PE<i>_papi.csv``) or one
        such file. Other files there (``PE<i>_send.csv``, stdout) are ignored.
    phase
        Read ``PE<i>_<phase>_PAPI.csv``; None reads the unnamed files (or the
        only phase present).
    num_pes
        The run's PE count: missing PE files are reported, a PE id at or
        beyond it is an error. None: no limit.
    counters
        Names of the counter columns, in file order (at most 4); default
        ``PAPI_TOT_INS, PAPI_LST_INS``. Extra columns become ``counter<k>``.
    report
        Receives per-file line accounting, notes and warnings. When None,
        anything skipped is announced with :class:`ActorProfWarning`.
    block_bytes
        Size of the text blocks parsed at once.
    line_numbers
        Add a ``line`` column: the 1-based line of each row in its file (the
        file is ``report.files[-1].path`` while its chunks are yielded).

    Yields
    ------
    pandas.DataFrame
        Columns :func:`actorprof.schema.papi_columns` of the resolved counter
        names, with :func:`actorprof.schema.papi_dtypes`. The MAIN line has
        ``mailbox == -1``. Small files are parsed together, so without
        ``line_numbers`` a chunk may hold the lines of several files (in
        file order); with it, every chunk holds lines of one file.

    Raises
    ------
    NoTraceError, UsageError, TraceFormatError
        No PAPI file; bad counter names or phase; a file with no PAPI line,
        or a PE id beyond ``num_pes`` (file and line named).

    Examples
    --------
    >>> frames = iter_papi("run/", counters=["PAPI_TOT_CYC"])  # doctest: +SKIP
    """
    own = report is None
    report = ReadReport(kind="papi") if report is None else report
    files, spec = papi_plan(path, phase=phase, num_pes=num_pes, counters=counters, report=report)
    yield from _papi_frames(
        files, spec, report, num_pes=num_pes, block_bytes=block_bytes, line_numbers=line_numbers
    )
    if own:
        report.emit_python_warnings()


def papi_plan(
    path: str | PathLike[str],
    *,
    phase: str | None,
    num_pes: int | None,
    counters: Sequence[str] | None,
    report: ReadReport,
    sizes: bool = True,
) -> tuple[list[TraceFile], CsvSpec]:
    """The files of a PAPI read and the shape of their lines (counter columns
    sniffed, names resolved), as :func:`iter_papi` starts; fills ``report``
    (files planned, notes, warnings of the counter vote; with ``sizes``, each
    file's stat and size).

    Raises
    ------
    NoTraceError, UsageError, TraceFormatError
        As :func:`iter_papi`.
    """
    report.kind = "papi"
    check_counter_names(counters)  # fail on bad names before touching files
    files = papi_files(path, phase=phase, num_pes=num_pes, report=report, sizes=sizes)
    report.num_pes = num_pes
    n_counters = _sniff_counters(files, report)
    names = papi_counter_names(
        n_counters if n_counters is not None else len(check_counter_names(counters)), counters
    )
    _note_names(report, names, counters)
    spec = papi_spec(names)
    if num_pes is None:
        spec = _stray_limit(spec, files, report, single_file=Path(path).is_file())
    return files, spec


def _stray_limit(
    spec: CsvSpec, files: list[TraceFile], report: ReadReport, *, single_file: bool
) -> CsvSpec:
    """Without --num-pes, PE ids far beyond the PE files are skipped lines, as
    in the logical trace: one corrupt id would make a run of that many PEs
    (``dst_pe`` 2,000,000,000 took 23 GB). A file of such a PE is warned
    about, and does not make the run that big either."""
    set_pe_limit(files, None, report, single_file=single_file)  # the logical trace's rule
    assert report.pe_limit is not None
    limit, reason = report.pe_limit, report.pe_limit_reason
    columns = ("src_pe", "dst_pe")
    return replace(
        spec,
        maxima=(*spec.maxima, *((c, limit - 1) for c in columns)),
        beyond=(*spec.beyond, *((c, reason) for c in columns)),
    )


def papi_chunks(
    files: Sequence[TraceFile],
    spec: CsvSpec,
    report: ReadReport,
    *,
    num_pes: int | None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> Iterator[pd.DataFrame]:
    """The readable lines of ``files`` (part of a :func:`papi_plan`), as
    :func:`iter_papi` yields them without line numbers; each file's line
    accounting and warnings go to ``report``, in file order.

    The PAPI map step of :mod:`actorprof.engine` runs this loop over its
    share of the files, so every way of reading gives the same lines.
    """
    yield from _papi_frames(
        list(files), spec, report, num_pes=num_pes, block_bytes=block_bytes, line_numbers=False
    )


def _papi_frames(
    files: list[TraceFile],
    spec: CsvSpec,
    report: ReadReport,
    *,
    num_pes: int | None,
    block_bytes: int,
    line_numbers: bool,
) -> Iterator[pd.DataFrame]:
    """The block loop: each file's readable lines, in file order.

    Whole small files are parsed together, a batch of up to
    ``_BATCH_BYTES`` at a time (a run has a file per PE, often of a few
    dozen lines, and each parse has a fixed cost of a millisecond). A batch
    the fast path refuses is halved until the odd files are found; those
    are read on their own, line by line where needed, so every file gets
    the rows and the line accounting the one-file route gives it. Without
    ``line_numbers`` a frame may hold the lines of several files.
    """
    check = _pe_limit(num_pes)
    limit = min(block_bytes, _BATCH_BYTES)
    group: list[tuple[TraceFile, bytes]] = []
    size = 0
    for trace_file in files:
        text = small_file_text(trace_file.path_text, limit)
        if text is None or size + len(text) > limit:
            yield from _group_frames(group, spec, report, check, block_bytes, line_numbers)
            group, size = [], 0
        if text is None:
            yield from _file_frames(trace_file, spec, report, check, block_bytes, line_numbers)
            continue
        group.append((trace_file, text))
        size += len(text)
    yield from _group_frames(group, spec, report, check, block_bytes, line_numbers)


def _group_frames(
    group: list[tuple[TraceFile, bytes]],
    spec: CsvSpec,
    report: ReadReport,
    check: RowCheck | None,
    block_bytes: int,
    line_numbers: bool,
) -> Iterator[pd.DataFrame]:
    for segment, joined in _segments(group, spec, check):
        if joined is None:
            yield from _file_frames(segment[0][0], spec, report, check, block_bytes, line_numbers)
        else:
            yield from _joined_frames(segment, joined, spec, report, line_numbers)


def _segments(
    group: list[tuple[TraceFile, bytes]], spec: CsvSpec, check: RowCheck | None
) -> list[tuple[list[tuple[TraceFile, bytes]], JoinedFiles | None]]:
    """``group`` in runs of files parsed together (None: one file to read alone)."""
    if not group:
        return []
    joined = parse_files([text for _, text in group], spec)
    if joined is not None and (check is None or check(joined.frame) is None):
        return [(group, joined)]
    if len(group) == 1:
        return [(group, None)]
    half = len(group) // 2
    return _segments(group[:half], spec, check) + _segments(group[half:], spec, check)


def _joined_frames(
    segment: list[tuple[TraceFile, bytes]],
    joined: JoinedFiles,
    spec: CsvSpec,
    report: ReadReport,
    line_numbers: bool,
) -> Iterator[pd.DataFrame]:
    """The frames of files parsed together, and their line accounting."""
    frame, bounds = joined.frame, joined.bounds
    n = len(segment)
    file_of_row = np.repeat(np.arange(n), np.diff(bounds))
    mailbox = frame["mailbox"].to_numpy()
    pes = np.array([trace_file.pe for trace_file, _ in segment], dtype=np.int64)
    main_lines = np.bincount(file_of_row[mailbox == MAIN_MAILBOX], minlength=n)
    bad_mailbox = np.bincount(file_of_row[mailbox < MAIN_MAILBOX], minlength=n)
    other_pe = frame["dst_pe"].to_numpy() != pes[file_of_row]
    mismatched = np.bincount(file_of_row[other_pe], minlength=n)
    what = f"PAPI trace ({len(spec.columns)} fields)"
    lines_read = np.diff(bounds)
    # files with nothing to warn about are added as columns (a report each
    # costs 65,536 objects made, pickled and read back at 65,536 PEs)
    warned = (
        ((lines_read > 0) & (main_lines == 0))
        | (main_lines > 1)
        | (bad_mailbox > 0)
        | (mismatched > 0)
    )
    quiet = np.zeros(n, dtype=bool) if line_numbers else ~warned
    files = [trace_file for trace_file, _ in segment]
    edges = [0, *(np.flatnonzero(quiet[1:] != quiet[:-1]) + 1).tolist(), n]
    for j, k in itertools.pairwise(edges):
        if quiet[j]:  # a run of files to add as columns
            read = lines_read[j:k].astype(np.int64)
            blank = (joined.lines[j:k] - lines_read[j:k]).astype(np.int64)
            sizes = np.array([len(text) for _, text in segment[j:k]], dtype=np.int64)
            report.add_files([file_columns(files[j:k], read, blank, sizes)])
            continue
        for i in range(j, k):
            trace_file, text = segment[i]
            start, stop = int(bounds[i]), int(bounds[i + 1])
            file_report = FileReport(
                trace_file.path_text,
                pe=trace_file.pe,
                phase=trace_file.phase,
                lines_read=stop - start,
                lines_blank=int(joined.lines[i]) - (stop - start),
                bytes_read=len(text),
            )
            report.add_files([file_report])
            if line_numbers and stop > start:
                rows = frame.iloc[start:stop].reset_index(drop=True)
                yield rows.assign(line=joined.row_lines[start:stop])
            require_trace_lines(file_report, what)
            _check_file(
                report,
                trace_file,
                file_report,
                int(main_lines[i]),
                int(bad_mailbox[i]),
                int(mismatched[i]),
            )
    if not line_numbers and len(frame):
        yield frame


def _file_frames(
    trace_file: TraceFile,
    spec: CsvSpec,
    report: ReadReport,
    check: RowCheck | None,
    block_bytes: int,
    line_numbers: bool,
) -> Iterator[pd.DataFrame]:
    """One file read on its own, in blocks of ``block_bytes``."""
    file_report = FileReport(trace_file.path_text, pe=trace_file.pe, phase=trace_file.phase)
    report.add_files([file_report])
    mismatched = main_lines = bad_mailbox = 0
    for frame in scan_csv(
        trace_file.path,
        spec,
        file_report,
        check=check,
        block_bytes=block_bytes,
        line_numbers=line_numbers,
    ):
        mailbox = frame["mailbox"].to_numpy()
        main_lines += int((mailbox == MAIN_MAILBOX).sum())
        bad_mailbox += int((mailbox < MAIN_MAILBOX).sum())
        mismatched += int((frame["dst_pe"].to_numpy() != trace_file.pe).sum())
        yield frame
    require_trace_lines(file_report, f"PAPI trace ({len(spec.columns)} fields)")
    _check_file(report, trace_file, file_report, main_lines, bad_mailbox, mismatched)


def _note_names(report: ReadReport, names: tuple[str, ...], counters: Sequence[str] | None) -> None:
    given = check_counter_names(counters)
    extra = [n for n in names if n not in given]
    if extra:
        known = "the default names cover" if counters is None else "names were given for"
        report.note(
            f"the trace has {len(names)} counter columns; {known} {len(given)}: the extra "
            f"column(s) are named {', '.join(extra)} (name them with --counters)"
        )
    elif counters is None and len(names) < len(given):
        report.note(f"the trace has {len(names)} counter column(s): {', '.join(names)}")


def _check_file(
    report: ReadReport,
    trace_file: TraceFile,
    file_report: FileReport,
    main_lines: int,
    bad_mailbox: int,
    mismatched: int,
) -> None:
    path = trace_file.path_text  # the same text as the Path (none made per file)
    if file_report.lines_read and main_lines == 0:
        report.warn(
            f"{path}: no MAIN line (mailbox -1); the MAIN region of PE {trace_file.pe} is "
            "unknown (was the job killed before done(0)?)"
        )
    elif main_lines > 1:
        report.warn(
            f"{path}: {main_lines} MAIN lines (mailbox -1), expected 1; they are summed "
            "(are several runs or phases appended to this file?)"
        )
    if bad_mailbox:
        report.warn(
            f"{path}: {bad_mailbox} line(s) with a mailbox below -1; they are counted as "
            "PROC lines of that mailbox id"
        )
    if mismatched:
        report.warn(
            f"{path}: {mismatched} line(s) have dst_pe != {trace_file.pe} (the PE in the file "
            "name); they are counted under the dst_pe they carry"
        )


def first_line_with_mailbox(path: str | PathLike[str], mailbox: int) -> int | None:
    """The number (from 1) of the first line of a PAPI file whose mailbox
    field (the sixth) is ``mailbox``; None when there is none, or the file
    cannot be read. One search of the mapped file, not a parse of its lines."""
    import mmap

    pattern = re.compile(rb"^(?:[^,\n]*,){5}[ \t]*%d[ \t]*," % mailbox, re.MULTILINE)
    try:
        with open(path, "rb") as handle:
            if not handle.seek(0, 2):
                return None
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as text:
                found = pattern.search(text)
                if found is None:
                    return None
                end, step = found.start(), 1 << 24  # line ends counted 16 MiB at a time
                return 1 + sum(
                    text[at : min(at + step, end)].count(b"\n") for at in range(0, end, step)
                )
    except (OSError, ValueError):
        return None


def read_papi(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    counters: Sequence[str] | None = None,
    report: ReadReport | None = None,
) -> pd.DataFrame:
    """Read a whole PAPI trace into one DataFrame (small traces, notebooks).

    Same parameters as :func:`iter_papi`. An all-empty trace gives an empty
    frame with the columns of the given (or default) counter names.

    Examples
    --------
    >>> df = read_papi("examples/histo_4pe/papi")  # doctest: +SKIP
    >>> df[df["mailbox"] == -1]  # the MAIN line of each PE  # doctest: +SKIP
    """
    frames = list(iter_papi(path, phase=phase, num_pes=num_pes, counters=counters, report=report))
    if not frames:
        names = check_counter_names(counters)
        return pd.DataFrame({c: np.asarray([], dtype=t) for c, t in papi_dtypes(names).items()})
    return pd.concat(frames, ignore_index=True)

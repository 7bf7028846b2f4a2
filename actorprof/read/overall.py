"""Reader of the overall profile: ``overall.txt``, a program's whole stdout.

``print_profiling(prefix)`` of a run built with ``-DENABLE_TCOMM_PROFILING``
prints, per PE, lines of the form ``<label> [PE<i>] <body>`` where body is one
of (FORMATS.md section 3; blanks are free around every token, ``cycles`` may
be omitted except on a last line without line end)::

    T_inside_finish (start - done): <int> cycles
    T_wait (done - finish): <int> cycles
    T_outside_finish (start - finish): <int> cycles
    T_sends (count=<int>): <int> cycles
    T_send_in_process (count=<int>): <int> cycles
    T_process (count=<int>): <int> cycles
    T_TOTAL would be much bigger/smaller than T_finish          (optional)
    TCOMM_PROFILING (T_MAIN, T_COMM, T_PROC, T_TOTAL), <int>, <int>, <int>, <int>
    TCOMM_PROFILING (T_MAIN/T_TOTAL, T_COMM/T_TOTAL, T_PROC/T_TOTAL), <num>, <num>, <num>

The label is everything before ``[PE<i>]``, blanks stripped; it may be empty
or contain blanks. The parenthesised text after the three ``T_*finish``/
``T_wait`` names is not checked. Lines of different PEs and labels may
interleave in any order. A line whose body starts with one of those names
but does not match is a *malformed profile line*, and so is a whole profile
line but for a PE tag that starts with ``PE`` and is not ``[PE<digits>]``
(``[PE-3]``, ``[pe3]``); any other line is *program output*. Both are
counted (as skipped lines, by reason), neither is an error; a file without a
single profile line is. A UTF-8 byte order mark starting the file is dropped.

Rows are keyed by (label, run, pe). ``run`` numbers the repetitions of the
same label: when a (label, PE) gets a line kind it already has, a new run
starts for that PE (a program that printed the profile twice with the same
label). With distinct labels ``run`` is always 0.

Blocks of canonical lines (as the runtime prints them, with program output
and blank lines between) are read with numpy by :mod:`._overall_fast`, and
their rows kept as columns (:class:`._overall_fast.Records`); any other
block, and the last line without line end, is read line by line here
(:func:`_scan_line`). ``_FAST = False`` reads everything line by line into
the row table :class:`_Rows`: the reference both routes are tested against.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ActorProfWarning, TraceFormatError, UsageError
from ..schema import (
    MAX_OVERALL_VALUE,
    OVERALL_COLUMNS,
    OVERALL_COUNT_COLUMNS,
    OVERALL_CYCLE_COLUMNS,
    OVERALL_FILE_NAME,
    OVERALL_FRAC_COLUMNS,
    OVERALL_KEY_COLUMNS,
)
from ._files import stdout_file
from ._long import LONG_LINE, LONG_LINE_MARK
from ._overall_fast import (
    BODY_WORDS,
    LINE_KINDS,
    PE_LIMIT,
    Records,
    canonical_block,
    maybe_profile_line,
)
from ._report import MAX_EXAMPLES_PER_REASON, MAX_TEXT, FileReport, ReadReport
from ._scan import (
    DEFAULT_BLOCK_BYTES,
    NUL_BYTES,
    PE_LIMIT_PREFIX,
    line_blocks,
    shown_text,
    without_bom,
)
from ._stray import StrayPes, stray_pes

__all__ = [
    "BAD_PE_TAG",
    "CUT_LINE",
    "LINE_KINDS",
    "MALFORMED",
    "NUL_BYTES",
    "PE_BEYOND",
    "PE_LIMIT",
    "PROGRAM_OUTPUT",
    "TOO_LARGE",
    "describe_group",
    "overall_file",
    "program_output_lines",
    "read_overall",
]

PROGRAM_OUTPUT = "program output"
MALFORMED = "malformed profile line"
BAD_PE_TAG = f"{MALFORMED} (PE tag not [PE<digits>])"
CUT_LINE = "last line cut (no line end; the job was probably killed)"
TOO_LARGE = "number too large"
PE_BEYOND = (
    f"{PE_LIMIT_PREFIX}beyond {PE_LIMIT - 1:,} (pass --num-pes N if the run really had more PEs)"
)

_INT = r"([+-]?[0-9]+)"
_NUM = r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
_CYCLES = r"\s*(?:cycles)?"
_LINE = re.compile(r"(?P<label>.*?)\[PE(?P<pe>[0-9]+)\]\s*(?P<body>.*?)\s*")
_WORD = re.compile(rf"(?:{'|'.join(BODY_WORDS)})\b")
#: A PE tag that is not ``[PE<digits>]`` but starts with ``PE`` (any case),
#: right before a body name: ``[PE-3]``, ``[PE 3]``, ``[pe3]``, ``[PE٣]``.
_BAD_TAG = re.compile(rf"(?P<tag>\[\s*(?i:pe)[^\[\]]*\])\s*(?={_WORD.pattern})")
_MAX_TAG = 40
_TIME = {
    name: re.compile(rf"{name}\b[^:]*:\s*{_INT}{_CYCLES}")
    for name in ("T_inside_finish", "T_wait", "T_outside_finish")
}
_COUNTED = {
    name: re.compile(rf"{name}\s*\(\s*count\s*=\s*{_INT}\s*\)\s*:\s*{_INT}{_CYCLES}")
    for name in ("T_sends", "T_send_in_process", "T_process")
}
_WARNING = re.compile(r"T_TOTAL\s+would\s+be\s+much\s+bigger\s*/\s*smaller\s+than\s+T_finish")
_TCOMM = re.compile(r"TCOMM_PROFILING\s*\((?P<names>[^)]*)\)\s*,?\s*(?P<values>.*)")
_TCOMM_CYCLES = "T_MAIN,T_COMM,T_PROC,T_TOTAL"
_TCOMM_FRACS = "T_MAIN/T_TOTAL,T_COMM/T_TOTAL,T_PROC/T_TOTAL"
_FRAC_VALUE = re.compile(_NUM)
_INT_VALUE = re.compile(_INT)
_COMPLETE_FRAC = re.compile(r".*[0-9]\.[0-9]{6}")
#: Terminal escape sequences (colours: CSI ``ESC [ ... m``; titles: OSC).
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")

#: The lines every complete PE block has (the warning line is optional).
REQUIRED_KINDS = tuple(k for k in LINE_KINDS if k != "warning")
_KIND_NAMES = {
    "tcomm_cycles": "TCOMM_PROFILING (T_MAIN, ...)",
    "tcomm_fracs": "TCOMM_PROFILING (T_MAIN/T_TOTAL, ...)",
}
_MAX_INCOMPLETE_WARNINGS = 5
_MAX_PROBLEM_WARNINGS = 5


def overall_file(path: str | PathLike[str]) -> Path:
    """The profile file to read: ``path`` itself, or ``<path>/overall.txt``.

    Raises
    ------
    UsageError
        ``path`` does not exist, or is neither a regular file nor a folder.
    NoTraceError
        ``path`` is a folder without ``overall.txt`` (or where it is a folder).
    TraceFormatError
        The folder cannot be looked into.
    """
    return stdout_file(
        Path(path),
        OVERALL_FILE_NAME,
        pass_file="Pass the file that holds the program's stdout "
        "(built with -DENABLE_TCOMM_PROFILING) itself.",
        missing="Pass the file that holds the program's stdout "
        "(built with -DENABLE_TCOMM_PROFILING) itself: actorprof overall run/stdout.log",
    )


@dataclass
class _Rows:
    """Rows being built, keyed by (label, run, pe), with first-seen order
    (the reference route; :class:`Records` makes the same rows from columns)."""

    values: dict[tuple[str, int, int], dict[str, object]] = field(default_factory=dict)
    lines: dict[tuple[str, int, int], int] = field(default_factory=dict)
    seen: dict[tuple[str, int, str], int] = field(default_factory=dict)  # (label, pe, kind)
    labels: dict[str, int] = field(default_factory=dict)  # first-seen order

    def add(self, label: str, pe: int, kind: str, numbers: tuple[object, ...]) -> None:
        self.labels.setdefault(label, len(self.labels))
        if kind == "warning":
            # optional line: belongs to the block in progress, never starts one
            run = max((self.seen.get((label, pe, k), 0) for k in REQUIRED_KINDS), default=1)
            run = max(run - 1, 0)
            self.seen[(label, pe, kind)] = run + 1
        else:
            run = self.seen.get((label, pe, kind), 0)
            self.seen[(label, pe, kind)] = run + 1
        key = (label, run, pe)
        row = self.values.setdefault(key, {})
        row.update(zip(LINE_KINDS[kind], numbers, strict=True))
        self.lines[key] = self.lines.get(key, 0) + 1


def _parse_body(body: str) -> tuple[str, tuple[object, ...]] | None:
    """(kind, numbers) of a profile line body; None when malformed."""
    for name, pattern in _TIME.items():
        if body.startswith(name) and (m := pattern.fullmatch(body)):
            return name, (int(m[1]),)
    for name, pattern in _COUNTED.items():
        if body.startswith(name) and (m := pattern.fullmatch(body)):
            return name, (int(m[1]), int(m[2]))
    if _WARNING.fullmatch(body):
        return "warning", (True,)
    m = _TCOMM.fullmatch(body)
    if m is None:
        return None
    names = re.sub(r"\s+", "", m["names"])
    values = [v.strip() for v in m["values"].split(",")]
    if names == _TCOMM_CYCLES and len(values) == 4 and all(map(_INT_VALUE.fullmatch, values)):
        return "tcomm_cycles", tuple(int(v) for v in values)
    if names == _TCOMM_FRACS and len(values) == 3 and all(map(_FRAC_VALUE.fullmatch, values)):
        return "tcomm_fracs", tuple(float(v) for v in values)
    return None


def _bad_pe_tag(text: str) -> str | None:
    """The PE tag of a line that is a profile line in all but that tag, else None.

    Such a line is the runtime's, damaged (``[PE-3]``, ``[pe3]``, ``[PE٣]``):
    hidden among the program output, a PE would vanish without a word (and,
    being the highest, without even a missing-PE warning). The rest of the
    line must be a whole profile body, numbers included, after a bracketed
    tag starting with ``PE``: program output with brackets (``[PE1] hello``,
    ``[INFO] T_wait done``) stays program output.
    """
    m = _BAD_TAG.search(text)
    if m is None or _parse_body(text[m.end() :].rstrip()) is None:
        return None
    return m["tag"]


def _too_large(kind: str, numbers: tuple[object, ...]) -> str | None:
    """The skip reason when a value is out of range (|value| <= 2^59, finite float)."""
    for column, value in zip(LINE_KINDS[kind], numbers, strict=True):
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and not -MAX_OVERALL_VALUE <= value <= MAX_OVERALL_VALUE:
            return f"{TOO_LARGE} for {column} (max 2^59)"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{TOO_LARGE} for {column}"
    return None


def _complete(kind: str, body: str) -> bool:
    """Can a last line without line end be trusted (not cut in a number)?"""
    if kind == "warning":
        return True
    if kind == "tcomm_fracs":
        return _COMPLETE_FRAC.fullmatch(body) is not None
    if kind == "tcomm_cycles":
        return False  # a cut "..., 8667" looks like a complete number
    return body.rstrip().endswith("cycles")


def read_overall(
    path_or_dir: str | PathLike[str],
    *,
    num_pes: int | None = None,
    report: ReadReport | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> pd.DataFrame:
    """Read an overall profile (``overall.txt``) into one row per (label, run, PE).

    Parameters
    ----------
    path_or_dir
        The profile file (a program's stdout) or a folder holding ``overall.txt``.
    num_pes
        The run's PE count: a PE id at or beyond it is an error (file and
        line named). Missing PEs are left to the caller (they are listed by
        :func:`actorprof.overall_view`, never invented).
    report
        Receives the line accounting: profile lines are read, other lines
        are skipped under ``program output`` or ``malformed profile line``.
        When None, warnings and malformed lines (not program output) are
        announced with :class:`ActorProfWarning`.
    block_bytes
        Size of the text blocks read at once (memory stays bounded by it).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`actorprof.schema.OVERALL_COLUMNS`: ``label`` (str,
        may be empty), ``run``, ``pe``, the raw cycles and counts and the
        ``TCOMM_PROFILING`` values (nullable ``Int64``: <NA> when the line is
        missing), the three printed fractions (float, NaN when missing),
        ``total_warning`` (the runtime printed "T_TOTAL would be much
        bigger/smaller than T_finish") and ``profile_lines`` (lines found for
        the row: 8 for a complete block, 9 with the warning). Rows in order of
        label (first appearance), run, PE.

    Raises
    ------
    UsageError, NoTraceError
        As :func:`overall_file`.
    TraceFormatError
        No profile line at all in the file, a PE id beyond ``num_pes``, or
        the file cannot be read.

    Examples
    --------
    >>> df = read_overall("examples/histo_4pe/overall")  # doctest: +SKIP
    >>> df.set_index("pe")["tcomm_main_cycles"]  # doctest: +SKIP
    """
    own = report is None
    report = ReadReport(kind="overall") if report is None else report
    report.kind = "overall"
    report.num_pes = num_pes
    report.expected_reasons.add(PROGRAM_OUTPUT)  # the file is a program's whole stdout
    if num_pes is not None and num_pes < 1:
        raise UsageError(f"--num-pes must be at least 1, got {num_pes}")
    path = overall_file(path_or_dir)
    file_report = FileReport(str(path))
    report.files.append(file_report)
    rows, problems = _scan(path, file_report, num_pes, block_bytes)
    frame = None
    if num_pes is None and file_report.lines_read:
        frame = _to_frame(rows) if isinstance(rows, _Rows) else rows.frame()
        stray = _stray_pes(frame)
        if stray is not None:  # known at the end only: read again, their lines skipped
            file_report = report.files[-1] = FileReport(str(path))
            rows, problems = _scan(path, file_report, num_pes, block_bytes, stray)
            frame = None
    if not file_report.lines_read and file_report.skipped.keys() == {NUL_BYTES}:
        raise TraceFormatError(
            f"only NUL bytes in this file ({file_report.bytes_read:,} bytes): its data was "
            "never written (did the node crash, or the disk fill up?). Rerun the program, "
            "or pass the output of another run.",
            path=path,
        )
    if not file_report.lines_read:
        example = file_report.examples[0] if file_report.examples else None
        first = "" if example is None else f" (first skipped line {example.line}: {example.text!r})"
        empty = "it is empty (0 bytes); " if not file_report.bytes_read else ""
        raise TraceFormatError(
            f"no profile line in this file: {empty}expected lines like "
            "'<label> [PE0] T_inside_finish (start - done): 123 cycles' or "
            f"'<label> [PE0] TCOMM_PROFILING (T_MAIN, T_COMM, T_PROC, T_TOTAL), ...'{first}. "
            "Was the program built with -DENABLE_TCOMM_PROFILING, and is this its stdout?",
            path=path,
        )
    for number, reason, text in problems.first:
        shown = text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "..."
        report.warn(f"{path}:{number}: {reason} skipped: {shown!r}")
    if problems.count > _MAX_PROBLEM_WARNINGS:
        more = problems.count - _MAX_PROBLEM_WARNINGS
        report.warn(f"{path}: {more} more profile line(s) skipped")
    if frame is None:
        frame = _to_frame(rows) if isinstance(rows, _Rows) else rows.frame()
    _warn_incomplete(frame, report, path)
    if own:
        for message in report.warnings:
            warnings.warn(message, ActorProfWarning, stacklevel=2)
    return frame


@dataclass
class _Problems:
    """Profile lines that could not be read: the first few kept, all counted."""

    first: list[tuple[int, str, str]] = field(default_factory=list)
    count: int = 0

    def add(self, number: int, reason: str, text: str) -> None:
        self.count += 1
        if len(self.first) < _MAX_PROBLEM_WARNINGS:
            self.first.append((number, reason, text))


#: Read blocks of canonical lines with :func:`canonical_block`; False: every
#: line with the line-by-line reader and its row table (the reference).
_FAST = True
#: Smaller blocks are read line by line: numpy's fixed cost per block is
#: that of a few hundred lines (a small profile reads faster so).
_FAST_MIN_BYTES = 16 * 1024


def _stray_pes(frame: pd.DataFrame) -> StrayPes | None:
    """The PE ids far beyond the others among the rows read without
    --num-pes (:func:`~actorprof.read.stray_pes`, as for ``physical.txt``:
    a profile line names one PE)."""
    ids, at = np.unique(frame["pe"].to_numpy(np.int64), return_inverse=True)
    lines = np.bincount(at.ravel(), weights=frame["profile_lines"].to_numpy(np.float64))
    return stray_pes(ids, lambda: np.rint(lines).astype(np.int64))


def _scan(
    path: Path,
    file_report: FileReport,
    num_pes: int | None,
    block_bytes: int,
    stray: StrayPes | None = None,
) -> tuple[_Rows | Records, _Problems]:
    """Read the file in blocks of whole lines (memory bounded by the block size);
    with ``stray``, the lines naming a PE id from its limit on are skipped."""
    rows: _Rows | Records = Records() if _FAST else _Rows()
    fast_limit = stray.limit if stray is not None else num_pes  # other ids: line by line
    problems = _Problems()
    number = 0
    try:
        with open(path, "rb") as handle:
            for block, last in without_bom(line_blocks(handle, file_report, block_bytes)):
                if isinstance(rows, Records) and not last and len(block) >= _FAST_MIN_BYTES:
                    fast = canonical_block(
                        block,
                        number + 1,
                        rows.labels,
                        fast_limit,
                        MAX_EXAMPLES_PER_REASON,
                        shown_text,
                    )
                    if fast is not None:
                        rows.add_block(fast)
                        file_report.lines_read += len(fast.pe)
                        file_report.lines_blank += fast.blank
                        file_report.skip_many(fast.output, PROGRAM_OUTPUT, fast.examples)
                        number += fast.lines
                        continue
                pieces = block.split(b"\n")
                if not last:
                    pieces.pop()  # the block ends with a line end
                for raw in pieces:
                    number += 1
                    _scan_line(
                        raw, number, not last, rows, problems, file_report, num_pes, path, stray
                    )
    except OSError as exc:
        raise TraceFormatError(f"cannot read: {exc.strerror}", path=path) from exc
    return rows, problems


def _scan_line(
    raw: bytes,
    number: int,
    ended: bool,
    rows: _Rows | Records,
    problems: _Problems,
    file_report: FileReport,
    num_pes: int | None,
    path: Path,
    stray: StrayPes | None = None,
) -> None:
    raw = raw.rstrip(b"\r")
    if not raw.strip():
        file_report.lines_blank += 1
        return
    if LONG_LINE_MARK in raw:  # cut by line_blocks: not held, not parsed
        text = shown_text(raw)
        file_report.skip(number, LONG_LINE, text)
        problems.add(number, LONG_LINE, text)
        return
    if b"[PE" not in raw and not maybe_profile_line(raw):  # most of a stdout: not decoded
        if b"\x00" in raw:  # NUL bytes are no one's output: never-written data
            text = shown_text(raw)
            file_report.skip(number, NUL_BYTES, text)
            problems.add(number, NUL_BYTES, text)
        else:
            file_report.skip(number, PROGRAM_OUTPUT, shown_text(raw))
        return
    text = raw.decode("utf-8", "replace")
    visible = _visible(text)
    match = _LINE.fullmatch(visible)
    word = _WORD.match(match["body"]) if match else None
    if match is None or word is None:
        if "\x00" in text:
            file_report.skip(number, NUL_BYTES, text)
            problems.add(number, NUL_BYTES, text)
        elif (tag := _bad_pe_tag(visible)) is not None:
            shown = tag if len(tag) <= _MAX_TAG else tag[:_MAX_TAG] + "..."
            file_report.skip(number, BAD_PE_TAG, text)
            problems.add(number, f"{MALFORMED} (PE tag {shown!r} is not [PE<digits>])", text)
        else:
            file_report.skip(number, PROGRAM_OUTPUT, text)
        return
    parsed = _parse_body(match["body"])
    if parsed is None or (not ended and not _complete(parsed[0], match["body"])):
        reason = MALFORMED if ended else CUT_LINE
        file_report.skip(number, reason, text)
        problems.add(number, reason, text)
        return
    too_large = _too_large(*parsed)
    if too_large is not None:
        file_report.skip(number, too_large, text)
        problems.add(number, too_large, text)
        return
    pe = int(match["pe"])
    label = match["label"].strip()
    kind, numbers = parsed
    _take(label, pe, kind, numbers, number, raw, rows, problems, file_report, num_pes, path, stray)


def _take(
    label: str,
    pe: int,
    kind: str,
    numbers: tuple[object, ...],
    number: int,
    raw: bytes,
    rows: _Rows | Records,
    problems: _Problems,
    file_report: FileReport,
    num_pes: int | None,
    path: Path,
    stray: StrayPes | None = None,
) -> None:
    """Add a parsed profile line, or refuse its PE id."""
    if num_pes is not None and pe >= num_pes:
        raise TraceFormatError(
            f"PE {pe} but --num-pes is {num_pes}. "
            "Pass the run's real PE count (or omit --num-pes to infer it).",
            path=path,
            line=number,
        )
    if pe >= PE_LIMIT:  # a corrupt id: it would make a run of that many PEs
        text = raw.decode("utf-8", "replace")
        file_report.skip(number, PE_BEYOND, text)
        problems.add(number, PE_BEYOND, text)
        return
    if stray is not None and pe >= stray.limit:  # far beyond the others: a stray line
        text = raw.decode("utf-8", "replace")
        file_report.skip(number, stray.reason, text)
        problems.add(number, stray.reason, text)
        return
    rows.add(label, pe, kind, numbers)
    file_report.lines_read += 1


def _visible(text: str) -> str:
    """What a terminal shows of a line: no ANSI escape codes, and after a
    carriage return the text written over it (a progress bar that the
    profile line overwrote is not part of its label)."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        parts = text.split("\r")
        profile = [p for p in parts if "[PE" in p]
        text = profile[-1] if profile else parts[-1]
    return text


def _to_frame(rows: _Rows) -> pd.DataFrame:
    keys = sorted(rows.values, key=lambda k: (rows.labels[k[0]], k[1], k[2]))
    data: dict[str, object] = {
        "label": pd.Series([k[0] for k in keys], dtype=object),
        "run": np.asarray([k[1] for k in keys], dtype=np.int64),
        "pe": np.asarray([k[2] for k in keys], dtype=np.int64),
    }
    for column in OVERALL_COLUMNS[len(OVERALL_KEY_COLUMNS) :]:
        values = [rows.values[k].get(column) for k in keys]
        if column in OVERALL_CYCLE_COLUMNS or column in OVERALL_COUNT_COLUMNS:
            absent = np.asarray([v is None for v in values], dtype=bool)
            ints = np.asarray([0 if v is None else v for v in values], dtype=np.int64)
            data[column] = pd.arrays.IntegerArray(ints, absent)
        elif column in OVERALL_FRAC_COLUMNS:
            data[column] = np.asarray(
                [np.nan if v is None else v for v in values], dtype=np.float64
            )
        elif column == "total_warning":
            data[column] = np.asarray([bool(v) for v in values], dtype=bool)
        else:  # profile_lines
            data[column] = np.asarray([rows.lines[k] for k in keys], dtype=np.int64)
    return pd.DataFrame(data, columns=list(OVERALL_COLUMNS))


def _warn_incomplete(frame: pd.DataFrame, report: ReadReport, path: Path) -> None:
    """One warning per PE block that lacks some of its lines (first few named)."""
    missing_any = np.zeros(len(frame), dtype=bool)
    per_kind = {}
    for kind in REQUIRED_KINDS:
        absent = frame[LINE_KINDS[kind][0]].isna().to_numpy()
        per_kind[kind] = absent
        missing_any |= absent
    rows = np.flatnonzero(missing_any)
    labels = frame["label"].to_numpy(dtype=object)
    runs = frame["run"].to_numpy(dtype=np.int64)
    pes = frame["pe"].to_numpy(dtype=np.int64)
    for row in rows[:_MAX_INCOMPLETE_WARNINGS]:
        names = [_KIND_NAMES.get(k, k) for k in REQUIRED_KINDS if per_kind[k][row]]
        report.warn(
            f"{path}: {describe_group(str(labels[row]), int(runs[row]))} "
            f"PE {int(pes[row])}: missing line(s) {', '.join(names)} "
            "(values left empty; cut output or a PE that did not finish?)"
        )
    if len(rows) > _MAX_INCOMPLETE_WARNINGS:
        report.warn(
            f"{path}: {len(rows) - _MAX_INCOMPLETE_WARNINGS} more PE block(s) with missing lines"
        )


def describe_group(label: str, run: int) -> str:
    """How a (label, run) group is named for people: ``'histo'``, ``'(no label)' #2``."""
    name = repr(label) if label else "(no label)"
    return name if run == 0 else f"{name} #{run + 1}"


def program_output_lines(report: ReadReport) -> int:
    """Lines of program output (not profile lines) the read skipped, all files."""
    return sum(f.skipped.get(PROGRAM_OUTPUT, 0) for f in report.files)

"""What a read saw: per-file line counts, skipped lines and why, warnings.

Readers fill a :class:`ReadReport` as they go, so that nothing is lost
silently: every line of every file is either read, blank, or counted as
skipped with a reason, and the first few skipped lines are kept with their
file and line number for the user.
"""

from __future__ import annotations

import copy as _copy
import json
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from .._repr import Summarized, count
from .._text import JsonText, PlainList
from ..errors import ActorProfWarning

_T = TypeVar("_T")

__all__ = [
    "FileColumns",
    "FileReport",
    "ReadReport",
    "SkippedLine",
    "files_and_bytes",
    "files_and_bytes_of",
]

#: How many skipped lines per reason, and per file, are kept verbatim.
MAX_EXAMPLES_PER_REASON = 3
MAX_EXAMPLES = 12
_MAX_TEXT = 120
#: Longest text of a line shown in a message (longer: cut, with "...").
MAX_TEXT = _MAX_TEXT


@dataclass(frozen=True)
class SkippedLine:
    """One line that could not be read."""

    line: int
    reason: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        """The line as plain JSON values."""
        return {"line": int(self.line), "reason": str(self.reason), "text": str(self.text)}


@dataclass
class FileReport:
    """Line accounting of one trace file.

    ``lines_read + lines_blank + lines_skipped`` equals the number of lines in
    the file (a last line without a line end counts as a line).
    """

    path: str
    pe: int | None = None
    phase: str | None = None
    lines_read: int = 0
    lines_blank: int = 0
    bytes_read: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    examples: list[SkippedLine] = field(default_factory=list)

    @property
    def lines_skipped(self) -> int:
        return sum(self.skipped.values())

    @property
    def lines_total(self) -> int:
        return self.lines_read + self.lines_blank + self.lines_skipped

    def skip_many(self, count: int, reason: str, examples: Sequence[tuple[int, str]]) -> None:
        """Count ``count`` unreadable lines for ``reason``; ``examples`` are the
        (line, text) of the first of them (as many as :meth:`skip` may keep)."""
        for line, text in examples:
            self.skip(line, reason, text)
        rest = count - len(examples)
        if rest > 0:
            self.skipped[reason] = self.skipped.get(reason, 0) + rest

    def skip(self, line: int, reason: str, text: str) -> None:
        """Count one unreadable line (1-based ``line``) under ``reason``.

        Kept as examples: the first lines (smallest numbers) of each reason,
        at most :data:`MAX_EXAMPLES_PER_REASON`, and of those the first
        :data:`MAX_EXAMPLES` of the file, in line order: the same whatever
        order the lines are counted in (blocks, byte ranges, readers).
        """
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        same = [e for e in self.examples if e.reason == reason]
        if len(same) >= MAX_EXAMPLES_PER_REASON and line >= max(e.line for e in same):
            return  # per reason, so that expected noise cannot hide the first real problem
        if len(self.examples) >= MAX_EXAMPLES and line >= self.examples[-1].line:
            return
        if len(text) > _MAX_TEXT:
            text = text[:_MAX_TEXT] + "..."
        self.examples.append(SkippedLine(line, reason, text))
        if len(same) >= MAX_EXAMPLES_PER_REASON:
            self.examples.remove(max(same, key=lambda e: e.line))
        self.examples.sort(key=lambda e: e.line)
        del self.examples[MAX_EXAMPLES:]

    def absorb(self, other: FileReport, line_offset: int) -> None:
        """Add the accounting of a later byte range of the same file.

        ``other``'s line numbers are relative to its range; ``line_offset`` is
        the number of lines before it. Its examples are replayed through
        :meth:`skip` (a range keeps the first examples of each reason, a
        superset of what the whole file keeps from it).
        """
        self.lines_read += other.lines_read
        self.lines_blank += other.lines_blank
        self.bytes_read += other.bytes_read
        for e in other.examples:
            self.skip(e.line + line_offset, e.reason, e.text)
        for reason, n in other.skipped.items():
            shown = sum(1 for e in other.examples if e.reason == reason)
            self.skipped[reason] = self.skipped.get(reason, 0) + n - shown

    def to_dict(self, *, files: bool = True) -> dict[str, Any]:
        """JSON-able accounting; ``files=False`` leaves out the per-file entries
        (``files`` is then empty: a summary printed on stderr needs no 65,536 of them).
        """
        # plain Python values only (see PlainList): counts may come from numpy
        skipped = self.skipped
        return {
            "path": str(self.path),
            "pe": None if self.pe is None else int(self.pe),
            "bytes": int(self.bytes_read),
            "lines_read": int(self.lines_read),
            "lines_blank": int(self.lines_blank),
            "lines_skipped": int(sum(skipped.values())) if skipped else 0,
            # (most files of a run skip nothing: no sort, no loop for them)
            "skipped_by_reason": {str(k): int(v) for k, v in sorted(skipped.items())}
            if skipped
            else {},
            "first_skipped": [e.to_dict() for e in self.examples] if self.examples else [],
        }


#: A character ``json.dumps`` escapes (with ``ensure_ascii``): all but the
#: printable ASCII ones other than ``"`` and ``\\``.
_NOT_PLAIN_JSON = re.compile(r"[^ !#-\[\]-~]")


@dataclass
class FileColumns:
    """Files read whole without a skipped line, as columns, in file order.

    What a read of 65,536 small PE files mostly is: their accounting is
    three numbers each, and a :class:`FileReport` of each (then its JSON
    entry) cost half a second. :class:`ReadReport` keeps them so until its
    ``files`` are asked for (:meth:`reports`).
    """

    paths: list[str]
    pes: list[int | None]
    phases: list[str | None]
    lines_read: np.ndarray
    lines_blank: np.ndarray
    bytes_read: np.ndarray

    def __len__(self) -> int:
        return len(self.paths)

    def rows(self) -> Iterator[tuple[str, int | None, str | None, int, int, int]]:
        """Each file's path, PE, phase, lines read, blank lines and bytes read."""
        return zip(
            self.paths,
            self.pes,
            self.phases,
            self.lines_read.tolist(),
            self.lines_blank.tolist(),
            self.bytes_read.tolist(),
            strict=True,
        )

    @classmethod
    def of(cls, reports: Sequence[FileReport]) -> FileColumns:
        """The columns of ``reports`` (files that skipped nothing)."""
        return cls(
            [str(r.path) for r in reports],
            [r.pe for r in reports],
            [r.phase for r in reports],
            np.array([r.lines_read for r in reports], dtype=np.int64),
            np.array([r.lines_blank for r in reports], dtype=np.int64),
            np.array([r.bytes_read for r in reports], dtype=np.int64),
        )

    def reports(self) -> list[FileReport]:
        """A :class:`FileReport` of each file."""
        return [FileReport(*row) for row in self.rows()]

    def to_json(self) -> list[str]:
        """What :meth:`to_dicts` gives, as compact JSON texts
        (:class:`~actorprof._text.JsonText`: one f-string each; the dicts
        and their encoding cost three times as much)."""
        paths = [str(path) for path in self.paths]
        if _NOT_PLAIN_JSON.search("".join(paths)) is None:  # as json.dumps writes them
            texts = [f'"{path}"' for path in paths]
        else:
            texts = list(map(json.dumps, paths))
        rows = zip(
            texts,
            self.pes,
            self.lines_read.tolist(),
            self.lines_blank.tolist(),
            self.bytes_read.tolist(),
            strict=True,
        )
        return [
            JsonText(
                f'{{"path": {path}, "pe": {"null" if pe is None else int(pe)}, '
                f'"bytes": {nbytes}, "lines_read": {lines}, "lines_blank": {blank}, '
                '"lines_skipped": 0, "skipped_by_reason": {}, "first_skipped": []}'
            )
            for path, pe, lines, blank, nbytes in rows
        ]

    def to_dicts(self) -> list[dict[str, Any]]:
        """What :meth:`FileReport.to_dict` gives for each file."""
        return [
            {
                "path": str(path),
                "pe": None if pe is None else int(pe),
                "bytes": nbytes,
                "lines_read": lines,
                "lines_blank": blank,
                "lines_skipped": 0,
                "skipped_by_reason": {},
                "first_skipped": [],
            }
            for path, pe, _, lines, blank, nbytes in self.rows()
        ]


@dataclass(repr=False)
class ReadReport(Summarized):
    """Everything a read of one trace kind noticed, file by file.

    Pass one to an ``iter_<kind>``/``read_<kind>`` function to receive the
    accounting; without one, readers emit an :class:`ActorProfWarning` for
    anything skipped instead.
    """

    kind: str = ""
    phase: str | None = None
    files: list[FileReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    num_pes: int | None = None
    num_pes_inferred: bool = False
    missing_pes: list[int] = field(default_factory=list)
    #: Skip reasons that are normal for this kind of file (program output in
    #: a stdout capture): counted and reported, but not warned about.
    expected_reasons: set[str] = field(default_factory=set)
    #: PE ids a line may name (0 .. pe_limit - 1), and the reason a line naming
    #: another is skipped with (set when a logical trace's files are listed).
    pe_limit: int | None = None
    pe_limit_reason: str = ""
    #: What the read will go through (set when its files are listed): for progress.
    bytes_planned: int = 0
    files_planned: int = 0
    #: Each planned file's size, in file order (the engine plans its work
    #: from them: one stat per file, not two).
    sizes_planned: list[int] = field(default_factory=list, repr=False, compare=False)
    #: Each planned file's (size, mtime, inode, ctime) in ns, None if it could
    #: not be stat'ed, from the same stat: what says a file changed (the cache).
    stats_planned: list[tuple[int, int, int, int] | None] = field(
        default_factory=list, repr=False, compare=False
    )
    #: What :meth:`done` has summed: entries held (reports and columns), the
    #: files and bytes in them, and the layout they were counted in.
    _done_entries: int = field(default=0, repr=False, compare=False)
    _done_files: int = field(default=0, repr=False, compare=False)
    _done_bytes: int = field(default=0, repr=False, compare=False)
    _done_layout: int = field(default=0, repr=False, compare=False)
    #: Changed whenever the entries held are replaced or made reports.
    _layout: int = field(default=0, repr=False, compare=False)
    #: Files added by :meth:`add_files`, after ``files``, until it is read.
    _pending: list[FileReport | FileColumns] = field(
        default_factory=list, repr=False, compare=False
    )

    def _get_files(self) -> list[FileReport]:
        if self._pending:
            pending, self._pending = self._pending, []
            for item in pending:
                self._files.extend(item.reports() if isinstance(item, FileColumns) else [item])
            self._layout += 1
        return self._files

    def _set_files(self, files: list[FileReport]) -> None:
        self._files = files
        self._pending = []
        self._layout = getattr(self, "_layout", 0) + 1  # (set by __init__ before it)

    def copy(self) -> ReadReport:
        """A copy whose lists are its own: a file, note or warning added to
        either later is not in the other. The files' entries are shared (a
        file's accounting does not change once it is read); those held as
        columns stay so."""
        out = _copy.copy(self)
        out._files, out._pending = list(self._files), list(self._pending)
        out.notes, out.warnings = list(self.notes), list(self.warnings)
        out.missing_pes = list(self.missing_pes)
        out.expected_reasons = set(self.expected_reasons)
        return out

    def add_files(self, files: Iterable[FileReport | FileColumns]) -> None:
        """Append files' accounting, in file order, to ``files``: a
        :class:`FileColumns` becomes a :class:`FileReport` per file only when
        ``files`` is read (the sums, summaries and :meth:`to_dict` need not)."""
        self._pending.extend(files)

    def _entries(self) -> Iterator[FileReport | FileColumns]:
        """The files as they are held: reports, and columns not yet made reports."""
        yield from self._files
        yield from self._pending

    def file_accounts(self) -> Iterator[FileReport | FileColumns]:
        """The files of ``files``, in its order, as they are held: a report
        each, and runs of files that skipped no line as columns (never made
        reports here: 65,536 of them take a quarter of a second)."""
        return self._entries()

    def _reports(self) -> Iterator[FileReport]:
        """The files that are reports (those in columns skipped no line)."""
        return (f for f in self._entries() if isinstance(f, FileReport))

    @property
    def file_count(self) -> int:
        """How many files ``files`` holds (without making their reports)."""
        return sum(len(f) if isinstance(f, FileColumns) else 1 for f in self._entries())

    def file_pes(self) -> list[int | None]:
        """Each file's PE, in file order (without making their reports)."""
        return self._per_file(lambda c: c.pes, lambda f: f.pe)

    def file_paths(self) -> list[str]:
        """Each file's path, in file order (without making their reports)."""
        return self._per_file(lambda c: c.paths, lambda f: f.path)

    def _per_file(
        self,
        of_columns: Callable[[FileColumns], Iterable[_T]],
        of_report: Callable[[FileReport], _T],
    ) -> list[_T]:
        """One value per file, in file order: ``of_columns`` of the files held
        as columns, ``of_report`` of the others."""
        out: list[_T] = []
        for f in self._entries():
            if isinstance(f, FileColumns):
                out.extend(of_columns(f))
            else:
                out.append(of_report(f))
        return out

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        phase = f", phase {self.phase}" if self.phase else ""
        return f"{self.kind or 'trace'}{phase}", [
            ("files", count(self.file_count)),
            ("lines read", count(self.lines_read)),
            ("lines skipped", count(self.lines_skipped)),
            ("warnings", count(len(self.warnings))),
            ("PEs", "unknown" if self.num_pes is None else count(self.num_pes)),
            ("missing PE files", count(len(self.missing_pes))),
        ]

    @property
    def lines_read(self) -> int:
        return self._sum("lines_read")

    @property
    def lines_skipped(self) -> int:
        # (65,536 files made reports: most skipped nothing, and are passed over)
        return sum(sum(f.skipped.values()) for f in self._reports() if f.skipped)

    @property
    def bytes_read(self) -> int:
        return self._sum("bytes_read")

    def _sum(self, name: str) -> int:
        return sum(
            int(getattr(f, name).sum()) if isinstance(f, FileColumns) else getattr(f, name)
            for f in self._entries()
        )

    def planned(self) -> tuple[int, int]:
        """Bytes and files the read will go through (once its files are listed)."""
        return self.bytes_planned, self.files_planned

    def done(self) -> tuple[int, int]:
        """Bytes read so far, and files begun (for progress: called often).

        The files before the last entry are finished: their bytes are summed
        once, so a progress line costs O(1), not O(files) (65,536 PE files),
        and files held as columns are not made reports.
        """
        held = len(self._files) + len(self._pending)
        if held - 1 < self._done_entries or self._done_layout != self._layout:
            self._done_entries = self._done_files = self._done_bytes = 0  # count again
            self._done_layout = self._layout
        finished = (self._held(i) for i in range(self._done_entries, held - 1))
        files, nbytes = files_and_bytes_of(finished)
        self._done_files += files
        self._done_bytes += nbytes
        self._done_entries = max(self._done_entries, held - 1)
        files, nbytes = files_and_bytes(self._held(held - 1)) if held else (0, 0)
        return self._done_bytes + nbytes, self._done_files + files

    def _held(self, i: int) -> FileReport | FileColumns:
        """The ``i``-th entry held: reports, then columns not yet made reports."""
        n = len(self._files)
        return self._files[i] if i < n else self._pending[i - n]

    def note(self, message: str) -> None:
        """Record an informational message (shown unless ``--quiet``)."""
        self.notes.append(message)

    def warn(self, message: str) -> None:
        """Record a warning (data skipped, suspicious, or missing)."""
        self.warnings.append(message)

    def skipped_summary(self) -> list[str]:
        """One warning line per file with unexpected skipped lines, plus examples."""
        out = []
        for f in self._reports():  # (files in columns skipped nothing)
            problems = {r: n for r, n in f.skipped.items() if r not in self.expected_reasons}
            if not problems:
                continue
            total = sum(problems.values())
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(problems.items()))
            out.append(f"{f.path}: skipped {total} line(s): {reasons}")
            shown = [e for e in f.examples if e.reason in problems]
            for e in shown[:3]:
                out.append(f"  {f.path}:{e.line}: {e.reason}: {e.text!r}")
        return out

    def expected_summary(self) -> list[str]:
        """One information line per file with lines skipped for expected reasons."""
        out = []
        for f in self._reports():
            expected = {r: n for r, n in f.skipped.items() if r in self.expected_reasons}
            if expected:
                reasons = ", ".join(f"{n} {r}" for r, n in sorted(expected.items()))
                out.append(f"{f.path}: {sum(expected.values())} other line(s) ignored: {reasons}")
        return out

    def to_dict(self, *, files: bool = True) -> dict[str, Any]:
        """JSON-able accounting; ``files=False`` leaves out the per-file entries
        (``files`` is then empty: a summary printed on stderr needs no 65,536 of them).
        """
        return {
            "kind": self.kind,
            "phase": self.phase,
            "num_pes": self.num_pes,
            "num_pes_inferred": self.num_pes_inferred,
            "missing_pes": list(self.missing_pes),
            "lines_read": self.lines_read,
            "lines_skipped": self.lines_skipped,
            "warnings": list(self.warnings),
            "files": PlainList(self._file_dicts()) if files else [],
        }

    def file_entries(self) -> list[Any]:
        """The per-file entries of :meth:`to_dict`, for the JSON writer (a
        :class:`~actorprof._text.PlainList`): those of the files held as
        columns as their JSON text (:class:`~actorprof._text.JsonText`)."""
        out = PlainList()
        clean: list[FileReport] = []  # files that skipped nothing: columns too
        for f in [*self._entries(), None]:
            if isinstance(f, FileReport) and not f.skipped and not f.examples:
                clean.append(f)
                continue
            if clean:
                out.extend(FileColumns.of(clean).to_json())
                clean = []
            if isinstance(f, FileColumns):
                out.extend(f.to_json())
            elif f is not None:
                out.append(f.to_dict())
        return out

    def _file_dicts(self) -> Iterator[dict[str, Any]]:
        for f in self._entries():
            if isinstance(f, FileColumns):
                yield from f.to_dicts()
            else:
                yield f.to_dict()

    def emit_python_warnings(self) -> None:
        """Turn recorded warnings and skipped lines into Python warnings."""
        skipped = self.skipped_summary()
        messages = list(self.warnings)
        if skipped:
            messages.append("\n".join(skipped))
        for message in messages:
            warnings.warn(message, ActorProfWarning, stacklevel=3)


def files_and_bytes(entry: FileReport | FileColumns) -> tuple[int, int]:
    """Files and bytes read of an entry of a report's files."""
    if isinstance(entry, FileColumns):
        return len(entry), int(entry.bytes_read.sum())
    return 1, entry.bytes_read


def files_and_bytes_of(entries: Iterable[FileReport | FileColumns]) -> tuple[int, int]:
    """Files and bytes read of entries of a report's files, summed."""
    files = nbytes = 0
    for entry in entries:
        files_in, bytes_in = files_and_bytes(entry)
        files += files_in
        nbytes += bytes_in
    return files, nbytes


# ``files`` is read through ``_get_files`` (files added as columns become
# reports then) and set through ``_set_files``; the dataclass's __init__,
# __eq__ and repr go through it too.
ReadReport.files = property(ReadReport._get_files, ReadReport._set_files)  # type: ignore[assignment]

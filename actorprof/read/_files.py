"""Finding a run's per-PE trace files and choosing a phase.

File names (FORMATS.md): ``PE<i>_send.csv`` (old runtimes: ``PE<i>_send.dat``),
``PE<i>_<phase>_send.csv`` after ``new_file_for_selector_trace("<phase>")``;
likewise ``PE<i>_PAPI.csv`` / ``PE<i>_papi.csv`` for the PAPI trace.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Sequence
from itertools import repeat
from operator import attrgetter
from os import PathLike
from pathlib import Path
from typing import Any, NoReturn, cast

import numpy as np

from .._text import format_ranges, printable_name
from ..errors import NoTraceError, TraceFormatError, UsageError
from . import _kept
from ._long import has_long_line
from ._report import FileColumns, ReadReport

__all__ = [
    "FileStat",
    "TraceFile",
    "check_input_path",
    "compressed_pe_files",
    "file_columns",
    "file_stat",
    "find_pe_files",
    "format_ranges",
    "has_pe_files",
    "list_folder",
    "note_missing_pe_files",
    "pe_file_phases",
    "pe_trace_files",
    "select_phase",
    "small_file_text",
    "stat_planned",
    "trace_file_columns",
]

_PATTERNS = {
    "send": re.compile(r"PE(?P<pe>[0-9]+)(?:_(?P<phase>.+?))?_send\.(?P<ext>csv|dat)"),
    "papi": re.compile(r"PE(?P<pe>[0-9]+)(?:_(?P<phase>.+?))?_(?P<ext>PAPI|papi)\.csv"),
}
#: The same, over names joined by line ends: (name, PE digits, phase or "").
#: The unnamed phase's ending is tried first: a name of the unnamed files
#: then never has the phase's lazy ``.+?`` grown to its end and given back
#: (65,536 names: 12 ms instead of 30). The two branches cannot both match
#: a name (after the PE digits, one is the ending alone, the other a phase
#: of at least one character and the ending).
_LINES = {
    "send": re.compile(
        r"^(PE([0-9]+)(?:_send\.(?:csv|dat)|_(.+?)_send\.(?:csv|dat)))$", re.MULTILINE
    ),
    "papi": re.compile(
        r"^(PE([0-9]+)(?:_(?:PAPI|papi)\.csv|_(.+?)_(?:PAPI|papi)\.csv))$", re.MULTILINE
    ),
}
#: What every name of a kind holds (a report looks for each kind in every folder).
_ENDINGS = {"send": ("_send.",), "papi": ("_PAPI.csv", "_papi.csv")}
_LOOKED_FOR = {
    "send": "PE<i>_send.csv (or PE<i>_<phase>_send.csv, PE<i>_send.dat)",
    "papi": "PE<i>_PAPI.csv (or PE<i>_papi.csv, PE<i>_<phase>_PAPI.csv)",
}
_DEFAULT = ""  # phase key of the unnamed files
#: Suffixes of compressed copies of trace files (``PE1_send.csv.gz``): not read.
_COMPRESSED = re.compile(r"(?P<name>.+)\.(?P<suffix>gz|bz2|xz|zst|lz4|zip)")
_COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".lz4", ".zip")
#: A name among names joined by line ends that ends as a compressed file.
_ANY_COMPRESSED = re.compile(r"\.(?:gz|bz2|xz|zst|lz4|zip)$", re.MULTILINE)


class TraceFile:
    """One per-PE trace file: its ``path``, ``pe`` and ``phase`` (None: unnamed).

    ``shadowed`` lists files of the same PE and phase that this one was
    preferred to (``PE<i>_send.dat`` beside ``PE<i>_send.csv``,
    ``PE<i>_papi.csv`` beside ``PE<i>_PAPI.csv``): they are not read.
    ``path_text`` is ``str(path)`` and ``name`` is ``path.name``. Read-only;
    a ``path`` given as text is made a ``Path``.

    The files of a folder listing keep their path as text and make the
    ``Path`` only when it is asked for: the read opens the text, and
    65,536 ``Path`` objects cost 0.06 s before the map could start.
    """

    __slots__ = ("_name", "_path", "_pe", "_phase", "_shadowed", "_text")

    def __init__(
        self,
        path: str | PathLike[str],
        pe: int,
        phase: str | None,
        shadowed: tuple[Path, ...] = (),
    ) -> None:
        path = path if isinstance(path, Path) else Path(path)
        self._path: Path | None = path
        self._text = str(path)
        self._name = path.name
        self._pe = pe
        self._phase = phase
        self._shadowed = shadowed

    @property
    def path(self) -> Path:
        """The file's path."""
        if self._path is None:
            self._path = Path(self._text)
        return self._path

    @property
    def pe(self) -> int:
        """The PE in the file's name."""
        return self._pe

    @property
    def phase(self) -> str | None:
        """The phase in the file's name (None: the unnamed files)."""
        return self._phase

    @property
    def shadowed(self) -> tuple[Path, ...]:
        """The files of the same PE and phase this one was preferred to."""
        return self._shadowed

    @property
    def path_text(self) -> str:
        """``str(path)``, without making the ``Path``."""
        return self._text

    @property
    def name(self) -> str:
        """``path.name``, without making the ``Path``."""
        return self._name

    def _key(self) -> tuple[Path, int, str | None, tuple[Path, ...]]:
        return (self.path, self._pe, self._phase, self._shadowed)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, TraceFile)
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"TraceFile(path={self.path!r}, pe={self._pe!r}, phase={self._phase!r}, "
            f"shadowed={self._shadowed!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return _listed_file, (self._text, self._name, self._pe, self._phase, self._shadowed)


def _listed_file(
    text: str, name: str, pe: int, phase: str | None, shadowed: tuple[Path, ...] = ()
) -> TraceFile:
    """A :class:`TraceFile` of the path ``text`` (its last part ``name``),
    its ``Path`` made when asked for."""
    f = _new_file(TraceFile)
    f._path = None
    f._text = text
    f._name = name
    f._pe = pe
    f._phase = phase
    f._shadowed = shadowed
    return f


_new_file = object.__new__
_TEXTS, _PES, _PHASES = attrgetter("_text"), attrgetter("_pe"), attrgetter("_phase")
_SHADOWED = attrgetter("_shadowed")


def trace_file_columns(
    files: Sequence[TraceFile],
) -> tuple[list[str], list[int], list[str | None]]:
    """Each file's ``path_text``, ``pe`` and ``phase``, as three lists (read
    from the slots in C: 65,536 files' properties cost 3 ms a column)."""
    return list(map(_TEXTS, files)), list(map(_PES, files)), list(map(_PHASES, files))


def file_columns(
    files: Sequence[TraceFile],
    lines_read: np.ndarray,
    lines_blank: np.ndarray,
    bytes_read: np.ndarray,
) -> FileColumns:
    """The accounting of ``files``, read whole with nothing to report, as
    one :class:`FileColumns` (its paths, PEs and phases from the files)."""
    paths, pes, phases = trace_file_columns(files)
    file_pes: list[int | None] = list(pes)
    return FileColumns(paths, file_pes, phases, lines_read, lines_blank, bytes_read)


#: Recent folder listings by (folder, its inode and mtime, kind): a report
#: lists a 65,536-file folder for each kind and each read; a folder's mtime
#: changes whenever an entry is added, removed or renamed.
_LISTED: dict[tuple[str, int, int, str], dict[str, list[TraceFile]]] = {}
_LISTED_MAX = 8
#: Recent folder listings by (folder, its inode and mtime): file and folder names.
_NAMES: dict[tuple[str, int, int], tuple[tuple[str, ...], tuple[str, ...]]] = {}
_SETTLED_S = 2.0


def find_pe_files(path: Path, kind: str) -> dict[str, list[TraceFile]]:
    """All per-PE files of ``kind`` ("send" or "papi") under ``path``, by phase.

    ``path`` is a run folder or a single trace file. The unnamed phase has the
    key ``""``. Files within a phase are sorted by PE. A folder listed before
    and unchanged since (same inode and mtime) is not listed again.

    Raises
    ------
    UsageError
        ``path`` does not exist, or is neither a regular file nor a folder.
    NoTraceError
        No file of that kind is there.
    TraceFormatError
        The folder cannot be listed (permissions).
    """
    check_input_path(path)
    try:
        info = path.stat()
    except OSError:
        info = None
    if info is None or not stat.S_ISDIR(info.st_mode):
        return _find_pe_files(path, kind)
    key = (str(path), info.st_ino, info.st_mtime_ns, kind)
    kept = _kept.current()
    found = _LISTED.get(key)
    if found is None and kept is not None:
        found = kept.listed.get(key)
    if found is None:
        found = _find_pe_files(path, kind)
        # kept only once the folder is settled: a change within the
        # timestamps' granularity (ms to s) could leave the mtime as it was
        if time.time() - info.st_mtime > _SETTLED_S:
            if len(_LISTED) >= _LISTED_MAX:
                _LISTED.pop(next(iter(_LISTED)))
            _LISTED[key] = found
        elif kept is not None:
            kept.listed[key] = found
    return {phase: list(files) for phase, files in found.items()}


def _find_pe_files(path: Path, kind: str) -> dict[str, list[TraceFile]]:
    """:func:`find_pe_files` without the memory of earlier listings."""
    file_names, folder, folders = _listing(path, kind)
    phases = _grouped(file_names, folder, kind)
    if phases is None:
        phases = _grouped_one_by_one(file_names, folder, kind)
    if not phases:
        _raise_no_trace(path, kind, file_names, folder, folders)
    return phases


def pe_file_phases(path: Path, kind: str) -> list[str]:
    """The phase keys :func:`find_pe_files` would give, sorted (``""``: the
    unnamed files), without a :class:`TraceFile` per file.

    Raises
    ------
    UsageError, NoTraceError, TraceFormatError
        As :func:`find_pe_files`.
    """
    check_input_path(path)
    file_names, folder, folders = _listing(path, kind)
    columns = _matched_names(file_names, kind)
    if columns is None:
        pattern = _PATTERNS[kind]
        matches = [m for m in map(pattern.fullmatch, file_names) if m is not None]
        keys = {_phase_key(m["phase"] or "") for m in matches}
    else:
        keys = {_phase_key(phase) for phase in set(columns[2])}
    if not keys:
        _raise_no_trace(path, kind, file_names, folder, folders)
    return sorted(keys)


def has_pe_files(path: Path, kind: str) -> bool:
    """Whether :func:`find_pe_files` would find a file of ``kind`` at ``path``.

    Raises
    ------
    UsageError, TraceFormatError
        As :func:`find_pe_files`.
    """
    check_input_path(path)
    file_names, _, _ = _listing(path, kind)
    return any(map(_PATTERNS[kind].fullmatch, file_names))


def _listing(path: Path, kind: str) -> tuple[list[str], Path, list[Path]]:
    """The file names to look at, their folder, and the folders named as files of ``kind``."""
    if not path.is_dir():
        return [path.name], path.parent, []
    try:
        file_names, folder_names = list_folder(path)
    except OSError as exc:
        raise TraceFormatError(
            f"cannot list this folder ({exc.strerror}). Check its permissions "
            "(ls -ld), or copy the trace somewhere readable.",
            path=path,
        ) from exc
    pattern = _PATTERNS[kind]
    return file_names, path, [path / name for name in folder_names if pattern.fullmatch(name)]


def _phase_key(phase: str) -> str:
    """The phase key of a name's phase part (``""``: none); bytes that are not
    UTF-8 are spelled \\xNN, so the phase stays usable."""
    return printable_name(phase) if phase else _DEFAULT


def _matched_names(names: list[str], kind: str) -> _Columns | None:
    """The names of ``kind``, their PE digits and their phases (``""``: none),
    in order, as three lists: one search over the names joined by line ends
    (65,536 ``fullmatch`` calls and their groups cost twice as much), or
    none (:func:`_plain_names`). None when a name holds a line end (then
    each name is matched on its own)."""
    joined = "\n".join(names)
    if joined.count("\n") != max(len(names) - 1, 0):
        return None
    if not any(ending in joined for ending in _ENDINGS[kind]):
        return [], [], []  # a folder of the other kind: no name to match (one scan, not a search)
    plain = _plain_names(names, joined, kind)
    if plain is not None:
        return plain
    rows = cast(list[tuple[str, str, str]], _LINES[kind].findall(joined))
    matched, digits, phases = zip(*rows, strict=True) if rows else ((), (), ())
    return list(matched), list(digits), list(phases)


_Columns = tuple[list[str], list[str], list[str]]
#: The ending of a kind's names of the unnamed phase, in the current naming.
_PLAIN_ENDING = {"send": "_send.csv", "papi": "_PAPI.csv"}
#: Those names, over names joined by line ends: their PE digits.
_PLAIN_LINES = {
    kind: re.compile(rf"^PE([0-9]+){re.escape(ending)}$", re.MULTILINE)
    for kind, ending in _PLAIN_ENDING.items()
}


def _plain_names(names: list[str], joined: str, kind: str) -> _Columns | None:
    """:func:`_matched_names`' columns when every name of ``kind`` is
    ``PE<digits>`` and the plain ending (``PE17_send.csv``), as a run's
    folder has them; None when a name is not so (a phase, an old ending,
    another name holding an ending): then the full search decides, as for
    every name. A search of one group and no alternative: 65,536 names
    cost 0.02-0.05 s here, against 0.08-0.19 s for the full search and
    its columns on this machine.

    Every name the full search can match holds one of the kind's endings
    (``_ENDINGS``), and a plain name holds one: when ``joined`` holds
    them as many times as there are plain names, no other name can be
    matched."""
    digits: list[str] = _PLAIN_LINES[kind].findall(joined)
    if sum(joined.count(ending) for ending in _ENDINGS[kind]) != len(digits):
        return None
    if len(digits) == len(names):
        chosen = list(names)  # a folder of these names only
    else:
        chosen = list(map(f"PE{{}}{_PLAIN_ENDING[kind]}".format, digits))
    return chosen, digits, [""] * len(digits)


def _grouped(names: list[str], folder: Path, kind: str) -> dict[str, list[TraceFile]] | None:
    """:func:`_grouped_one_by_one` for names of at most one file per PE and
    phase (no file shadows another), the files built a phase at a time;
    None otherwise (or when a name holds a line end)."""
    columns = _matched_names(names, kind)
    if columns is None:
        return None
    by_phase: dict[str, tuple[list[str], list[str]]] = {}
    matched, digits, parts = columns
    if set(parts) == {""}:  # the unnamed files only: no loop
        by_phase[_DEFAULT] = (matched, digits)
    else:
        for name, pe, phase in zip(matched, digits, parts, strict=True):
            group = by_phase.setdefault(_phase_key(phase), ([], []))
            group[0].append(name)
            group[1].append(pe)
    phases: dict[str, list[TraceFile]] = {}
    for key in sorted(by_phase):
        group_names, group_digits = by_phase[key]
        pes = list(map(int, group_digits))
        if len(set(pes)) != len(pes):
            return None  # a file shadows another: chosen one by one
        order = sorted(range(len(pes)), key=pes.__getitem__)
        chosen = list(map(group_names.__getitem__, order))
        texts = _child_texts(folder, chosen)
        in_order = map(pes.__getitem__, order)
        phases[key] = list(map(_listed_file, texts, chosen, in_order, repeat(key or None)))
    return phases


def _grouped_one_by_one(names: list[str], folder: Path, kind: str) -> dict[str, list[TraceFile]]:
    """The files of ``kind`` among ``names`` by phase, sorted by PE; of two
    files of one PE and phase, the one of the current naming is read."""
    pattern = _PATTERNS[kind]
    phases: dict[str, dict[int, TraceFile]] = {}
    for name in names:
        match = pattern.fullmatch(name)
        if match is None:
            continue
        candidate = folder / name
        phase = _phase_key(match["phase"] or "")
        pe = int(match["pe"])
        found = TraceFile(candidate, pe, phase or None)
        chosen = phases.setdefault(phase, {})
        previous = chosen.get(pe)
        # PE<i>_send.csv wins over the old PE<i>_send.dat, PAPI over papi.
        if previous is None:
            chosen[pe] = found
        elif _rank(found) < _rank(previous):
            chosen[pe] = _shadowing(found, (*previous.shadowed, previous.path))
        else:
            chosen[pe] = _shadowing(previous, (*previous.shadowed, found.path))
    return {k: [v[pe] for pe in sorted(v)] for k, v in sorted(phases.items())}


def _shadowing(f: TraceFile, shadowed: tuple[Path, ...]) -> TraceFile:
    """``f`` with ``shadowed`` as the files it was preferred to."""
    return TraceFile(f.path, f.pe, f.phase, shadowed)


def _raise_no_trace(
    path: Path, kind: str, file_names: list[str], folder: Path, folders: list[Path]
) -> NoReturn:
    """Say why no file of ``kind`` is at ``path`` (compressed ones, folders named as files)."""
    also = ""
    compressed = [folder / name for name in compressed_pe_names(file_names, kind)]
    if compressed:
        more = " ..." if len(compressed) > 3 else ""
        names = ", ".join(p.name for p in compressed[:3]) + more
        raise NoTraceError(
            f"{path}: no uncompressed trace file found; {names} "
            f"{'is' if len(compressed) == 1 else 'are'} compressed, and actorprof reads "
            "plain text: decompress them first (e.g. with gunzip) and rerun."
        )
    if folders:
        names = ", ".join(p.name for p in folders[:3]) + (" ..." if len(folders) > 3 else "")
        also = f" ({names} {'is a folder' if len(folders) == 1 else 'are folders'}, not a file)"
    raise NoTraceError(
        f"{path}: no trace file found{also}; looked for {_LOOKED_FOR[kind]}. "
        "Is this the folder the traced program ran in?"
    )


def _child_texts(folder: Path, names: list[str]) -> list[str]:
    """``str(folder / name)`` of each of ``names`` (a listing's, one path
    component each), as the folder's text and the name joined: 65,536
    paths' texts in 0.005 s, against 0.06 s through ``Path`` objects."""
    probe = str(folder / "PE0_send.csv")
    prefix = probe[: -len("PE0_send.csv")]
    if str(folder / "PE1_send.csv") != prefix + "PE1_send.csv":  # (never seen)
        return [str(folder / name) for name in names]
    return list(map(prefix.__add__, names))


#: The UTF-8 byte order mark an editor or a Windows tool may put at the start
#: of a file: the block loops drop it there (:func:`._scan.file_blocks`), and
#: the reads of many small files at a time leave such a file to them.
BOM = b"\xef\xbb\xbf"


def small_file_text(path: str | Path, limit: int) -> bytes | None:
    """The whole text of a file of at most ``limit`` bytes ending with a line end.

    Small PE files (a few dozen lines each at 65,536 PEs) are parsed many at
    a time; None when the file must be read on its own (unreadable, empty,
    larger, or a cut last line: the one-file route names the problem; a
    BOM first: the one-file route drops it; or a line too long: the one-file
    route cuts it).
    """
    # os.read of the size the file has: a buffered read(limit + 1) allocates
    # limit + 1 bytes first (512 KB per 1 KB file: 4x the time at 65,536 files)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            return None  # not read twice
        text = os.read(fd, size + 1)
        while len(text) > size and len(text) <= limit:  # it grew since: read on
            more = os.read(fd, limit + 1 - len(text))
            if not more:
                break
            text += more
    except OSError:
        return None
    finally:
        os.close(fd)
    if not text or len(text) > limit or not text.endswith(b"\n") or text.startswith(BOM):
        return None
    if has_long_line(text):
        return None  # the one-file route cuts it
    return text


def list_folder(path: Path) -> tuple[list[str], list[str]]:
    """The names of ``path``'s regular files (symlinks followed) and of its folders, sorted.

    One ``scandir`` pass: the entry types come with the listing, so a folder of
    65,536 trace files costs no stat per file (and names sort as strings, not
    as ``Path`` objects, which is 30x slower).

    Raises
    ------
    OSError
        The folder cannot be listed.
    """
    info = os.stat(path)
    key = (str(path), info.st_ino, info.st_mtime_ns)
    kept = _kept.current()
    known = _NAMES.get(key)
    if known is None and kept is not None:
        known = kept.names.get(key)
    if known is not None:
        return list(known[0]), list(known[1])
    files: list[str] = []
    folders: list[str] = []
    with os.scandir(path) as entries:
        for entry in entries:
            try:
                if entry.is_file():
                    files.append(entry.name)
                elif entry.is_dir():
                    folders.append(entry.name)
            except OSError:
                continue  # vanished, or a loop of symlinks: neither a file nor a folder
    files.sort()
    folders.sort()
    # kept once the folder is settled (as find_pe_files' listings): a report
    # lists a run folder for each kind, and a command for its location too
    if time.time() - info.st_mtime > _SETTLED_S:
        if len(_NAMES) >= _LISTED_MAX:
            _NAMES.pop(next(iter(_NAMES)))
        _NAMES[key] = (tuple(files), tuple(folders))
    elif kept is not None:
        kept.names[key] = (tuple(files), tuple(folders))
    return files, folders


def compressed_pe_files(candidates: list[Path], kind: str) -> list[Path]:
    """The files among ``candidates`` that are compressed per-PE files of ``kind``."""
    names = compressed_pe_names([candidate.name for candidate in candidates], kind)
    chosen = set(names)
    return [candidate for candidate in candidates if candidate.name in chosen]


def compressed_pe_names(names: list[str], kind: str) -> list[str]:
    """The names among ``names`` of compressed per-PE files of ``kind`` (no
    ``Path`` per name: a folder of 65,536 trace files has 65,536 names)."""
    if _ANY_COMPRESSED.search("\n".join(names)) is None:  # one search, not a call a name
        return []
    pattern = _PATTERNS[kind]
    found = []
    for name in names:
        if not name.endswith(_COMPRESSED_SUFFIXES):
            continue
        match = _COMPRESSED.fullmatch(name)
        if match is not None and pattern.fullmatch(match["name"]):
            found.append(name)
    return found


def _warn_compressed(path: Path, kind: str, report: ReadReport) -> None:
    """Say which compressed PE files of a folder are not read."""
    if not path.is_dir():
        return
    try:
        names, _ = list_folder(path)
    except OSError:
        return  # the listing already worked once; nothing more to say
    compressed = [path / name for name in compressed_pe_names(names, kind)]
    if compressed:
        listed = ", ".join(p.name for p in compressed[:5]) + (" ..." if len(compressed) > 5 else "")
        _warn(
            report,
            f"not read: {len(compressed)} compressed PE file(s) in {path}: {listed} "
            "(actorprof reads plain text; decompress them, e.g. with gunzip, and rerun; "
            "their PEs count as PEs that wrote nothing)",
        )


def _warn_unmatched(
    path: Path, kind: str, found: dict[str, list[TraceFile]], report: ReadReport
) -> None:
    """Say which files of a folder are named like PE files of ``kind`` (a
    name starting with ``PE`` and holding the kind's ending) but are not
    read: ``PE0__send.csv`` (an empty phase name), ``PE5_send.csvx``.
    Compressed ones are said apart (:func:`_warn_compressed`).

    A folder whose names hold the kind's endings as many times as ``found``
    has files (and files those were preferred to) has none: one count over
    the names, not a test of each (65,536 names)."""
    if not path.is_dir():
        return
    try:
        names, _ = list_folder(path)
    except OSError:
        return
    endings = _ENDINGS[kind]
    joined = "\n".join(names)
    held = sum(joined.count(ending) for ending in endings)
    shadowed = sum(sum(map(len, map(_SHADOWED, files))) for files in found.values())
    if held == sum(map(len, found.values())) + shadowed:
        return
    pattern = _PATTERNS[kind]
    compressed = set(compressed_pe_names(names, kind))
    odd = [
        name
        for name in names
        if name.startswith("PE")
        and any(ending in name for ending in endings)
        and pattern.fullmatch(name) is None
        and name not in compressed
    ]
    if odd:
        listed = ", ".join(odd[:3]) + (f" and {len(odd) - 3} more" if len(odd) > 3 else "")
        _warn(
            report,
            f"not read: {len(odd)} file(s) in {path} named like PE files but not as "
            f"{_LOOKED_FOR[kind]}: {listed}",
        )


def check_input_path(path: Path) -> None:
    """Raise a clear error for a path that is not there or not a file or folder.

    Raises
    ------
    UsageError
        ``path`` does not exist, or is a device, FIFO or socket.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError as exc:
        raise UsageError(f"{path}: no such file or folder") from exc
    except OSError as exc:
        raise UsageError(f"{path}: cannot be looked at ({exc.strerror})") from exc
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UsageError(
            f"{path}: neither a regular file nor a folder (a device, pipe or socket?). "
            "Pass the trace file itself, or the folder holding it."
        )


def stdout_file(path: Path, name: str, *, pass_file: str, missing: str) -> Path:
    """The file a stdout-capture reader uses: ``path`` itself, or ``path/<name>``.

    ``pass_file`` ends the message for a folder where the file should be
    ("Pass the ... itself."); ``missing`` is said when the folder lacks it.

    Raises
    ------
    UsageError
        ``path`` does not exist, or is neither a regular file nor a folder.
    NoTraceError
        ``path`` is a folder without ``name`` (or where ``name`` is a folder).
    TraceFormatError
        The folder cannot be looked into.
    """
    check_input_path(path)
    if not path.is_dir():
        return path
    candidate = path / name
    try:
        if candidate.is_file():
            return candidate
        if candidate.is_dir():
            raise NoTraceError(f"{candidate} is a folder, not a file. {pass_file}")
    except OSError as exc:
        raise TraceFormatError(
            f"cannot look into this folder ({exc.strerror}). Check its permissions.", path=path
        ) from exc
    raise NoTraceError(f"{path}: no {name} here. {missing}")


def _rank(f: TraceFile) -> int:
    return 0 if f.path.suffix == ".csv" and "papi" not in f.path.name else 1


def select_phase(
    found: dict[str, list[TraceFile]], phase: str | None, report: ReadReport
) -> list[TraceFile]:
    """Files of the requested phase (None: the unnamed files), noting choices.

    Raises
    ------
    UsageError
        The phase does not exist, or several named phases exist and none
        was chosen.
    """
    files = _choose_phase(found, phase, report)
    _note_mixed_files(files, report)
    return files


def _choose_phase(
    found: dict[str, list[TraceFile]], phase: str | None, report: ReadReport
) -> list[TraceFile]:
    named = [k for k in found if k != _DEFAULT]
    if phase is not None:
        phase = printable_name(phase)  # --phase with the raw bytes, or spelled \xNN
        if phase not in found or phase == _DEFAULT:
            raise UsageError(
                f"no files of phase '{phase}'; phases found: {_describe(found)}. "
                "Choose one with --phase NAME (omit --phase for the unnamed files)."
            )
        report.phase = phase
        return found[phase]
    if _DEFAULT in found:
        if named:
            _note(
                report,
                f"read the unnamed files; other phases here: {', '.join(named)} "
                "(choose one with --phase NAME)",
            )
        return found[_DEFAULT]
    if len(named) == 1:
        report.phase = named[0]
        _note(report, f"only phase '{named[0]}' is here: reading it")
        return found[named[0]]
    raise UsageError(
        f"several phases and no unnamed files: {_describe(found)}. Choose one with --phase NAME."
    )


def _flavour(f: TraceFile) -> str:
    """``send.csv``, ``send.dat``, ``PAPI.csv`` or ``papi.csv``: how the file is named."""
    return f.name.rsplit("_", 1)[-1]


def _note_mixed_files(files: list[TraceFile], report: ReadReport) -> None:
    """Say which files were not read, and warn when two namings are mixed."""
    shadowed = [(f, s) for f in files if f._shadowed for s in f._shadowed]
    if shadowed:
        f, s = shadowed[0]
        more = f" and {len(shadowed) - 1} more" if len(shadowed) > 1 else ""
        _note(
            report,
            f"not read: {s.name}{more} (the {f.path.name} of the same PE is read instead; "
            "files of an older runtime or another run?)",
        )
    # (most runs: one naming, no PE lists to make; a listed name ends with its
    # naming's 8 characters, so one ending means one naming)
    names = [f._name for f in files]
    if names and not all(map(str.endswith, names, repeat(names[0][-8:]))):
        flavours = list(map(_flavour, files))
        kinds: dict[str, list[int]] = {}
        for f, flavour in zip(files, flavours, strict=True):
            kinds.setdefault(flavour, []).append(f.pe)
        parts = "; ".join(
            f"PE {format_ranges(pes)} in *_{name} files" for name, pes in sorted(kinds.items())
        )
        _warn(
            report,
            f"PE files of two namings are mixed here: {parts}. They are all read as one run: "
            "are two runs (or two runtime versions) in one folder?",
        )


def _note(report: ReadReport, message: str) -> None:
    # the file list is looked at more than once per read (CLI, then reader)
    if message not in report.notes:
        report.note(message)


def _warn(report: ReadReport, message: str) -> None:
    if message not in report.warnings:
        report.warn(message)


def _describe(found: dict[str, list[TraceFile]]) -> str:
    return ", ".join(
        f"{'(unnamed)' if k == _DEFAULT else k} ({len(v)} PE files)" for k, v in found.items()
    )


def check_pe_files(files: list[TraceFile], num_pes: int | None, report: ReadReport) -> None:
    """Validate file PE ids against ``num_pes`` and record missing PE files."""
    if num_pes is None:
        return
    if num_pes < 1:
        raise UsageError(f"--num-pes must be at least 1, got {num_pes}")
    pes = list(map(_PES, files))  # the slots, read in C (65,536 files)
    beyond = [i for i, pe in enumerate(pes) if pe >= num_pes]
    if beyond:
        more = f" and {len(beyond) - 1} more" if len(beyond) > 1 else ""
        first = files[beyond[0]]
        _warn(
            report,
            f"{first.path}{more}: file of PE {first.pe} but --num-pes is {num_pes}: "
            "its lines are read, and those naming PE ids beyond are skipped. Is --num-pes "
            "the run's real PE count?",
        )
    folder = files[0].path.parent if files else None
    phase = files[0].phase if files else None
    _note_missing(pes, num_pes, report, folder, phase, inferred=False)


def note_missing_pe_files(report: ReadReport, num_pes: int) -> None:
    """After a read inferred ``num_pes`` (no ``--num-pes``): the PEs below
    it without a file, warned as :func:`check_pe_files` warns of those below
    a given count (files PE0, PE1 and PE3, or a PE 3 other PEs sent to)."""
    first = next(iter(report.file_accounts()), None)
    if first is None:
        return
    path = first.paths[0] if isinstance(first, FileColumns) else first.path
    kind = "papi" if report.kind == "papi" else "send"
    folder = Path(path).parent
    _note_missing(
        report.file_pes(), num_pes, report, folder, report.phase, inferred=True, kind=kind
    )


def _note_missing(
    pes: Sequence[int | None],
    num_pes: int,
    report: ReadReport,
    folder: Path | None,
    phase: str | None,
    *,
    inferred: bool,
    kind: str = "send",
) -> None:
    """Record and warn of the PEs below ``num_pes`` without a file; name what
    is where the file of such a PE would be (a folder, a dangling link: the
    listing leaves out all but regular files)."""
    present = np.array([-1 if pe is None else pe for pe in pes], dtype=np.int64)
    seen = np.zeros(num_pes, dtype=np.bool_)  # a flag per PE: no sort of the ids
    seen[present[(present >= 0) & (present < num_pes)]] = True
    missing = np.flatnonzero(~seen).tolist()
    if not missing:
        return
    report.missing_pes = missing
    where = f"phase {phase}: " if phase else ""
    why = (
        f"the run's {num_pes} PEs were inferred from the file names and PE ids: were files deleted?"
        if inferred
        else "were they deleted or is --num-pes wrong?"
    )
    unread = [] if folder is None else _not_files(folder, kind, phase, missing[:_LOOKED_AT])
    _warn(
        report,
        f"{where}{len(missing)} of {num_pes} PE files missing: PE {format_ranges(missing)} "
        f"(counted as PEs that wrote nothing; {why})"
        + "".join(f"; {name} is {what}, not a file: not read" for name, what in unread),
    )


#: Missing PEs whose would-be file is looked at (one lstat each).
_LOOKED_AT = 100


def _not_files(folder: Path, kind: str, phase: str | None, pes: list[int]) -> list[tuple[str, str]]:
    """(name, what it is) of each of ``pes``' would-be files (current naming)
    that is there but no regular file, at most 3."""
    ending = _PLAIN_ENDING[kind]
    found = []
    for pe in pes:
        name = f"PE{pe}_{phase}{ending}" if phase else f"PE{pe}{ending}"
        what = _what_is(folder / name)
        if what is not None:
            found.append((name, what))
            if len(found) == 3:
                break
    return found


def _what_is(path: Path) -> str | None:
    """What ``path`` is when it is there and no regular file (None otherwise)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            return "a dangling symbolic link"
        except OSError as exc:
            return f"a symbolic link that cannot be followed ({exc.strerror})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    return "a device or socket"


def pe_trace_files(
    path: Path,
    kind: str,
    *,
    phase: str | None,
    num_pes: int | None,
    report: ReadReport,
    sizes: bool = True,
) -> list[TraceFile]:
    """The per-PE files of ``kind`` a read would use: found, phase chosen, PEs checked.

    ``sizes``: stat each file for the read's plan (:func:`stat_planned`);
    without, the plan's sizes and bytes stay unknown (empty, 0).
    """
    found = find_pe_files(path, kind)
    files = select_phase(found, phase, report)
    _warn_compressed(path, kind, report)
    _warn_unmatched(path, kind, found, report)
    check_pe_files(files, num_pes, report)
    report.files_planned = len(files)
    report.stats_planned, report.sizes_planned, report.bytes_planned = [], [], 0
    if sizes:
        stat_planned(files, report)
    return files


def stat_planned(files: list[TraceFile], report: ReadReport) -> None:
    """Each file's stat, size and their sum into ``report`` (``stats_planned``,
    ``sizes_planned``, ``bytes_planned``): one stat per file."""
    report.stats_planned = [file_stat(f.path_text) for f in files]
    report.sizes_planned = [0 if st is None else st[0] for st in report.stats_planned]
    report.bytes_planned = sum(report.sizes_planned)


#: What says a file changed: size, mtime, inode, ctime (ns) (:func:`file_stat`).
FileStat = tuple[int, int, int, int]


def file_stat(path: str | Path) -> FileStat | None:
    """What says a file changed: size, mtime, inode, ctime (ns); None when it
    cannot be stat'ed (the read says why)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)

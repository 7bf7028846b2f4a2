"""Cache of reduced trace files, so a second run skips reading them.

One entry per trace folder (and phase, and reader options): a single
``.npz`` file holding every file's map result packed into a few arrays (the
sparse partial matrices, the (PE, node) pairs, times) and its line
accounting (the :class:`FileReport`, skipped-line examples included). A
65,536-PE run is one file in the cache, not 65,536: HPC home folders have
inode quotas.

Each trace file in an entry carries its size, modification and change
times (ns) and inode: a file edited in place (even at the same size, with
its modification time put back) or replaced is read again, the others are
reused. The entry also names actorprof's version and the options, so a new
actorprof never uses old entries. An entry that cannot be read or does not
hold together is ignored, with a note, and rewritten; writes are atomic
(temporary file, then rename), so concurrent runs are safe.

Entries live in ``$ACTORPROF_CACHE_DIR``, else ``$XDG_CACHE_HOME/actorprof``
or ``~/.cache/actorprof`` (or ``--cache-dir``), never in the trace folder
unless asked. The folder is kept under a size cap (``$ACTORPROF_CACHE_MAX``,
default 1 GB) by removing the least recently used entries.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..analyze.matrix import CommPartial
from ..read import FileReport, ReadReport, SkippedLine, TraceFile, file_stat
from ..schema import MAX_MSG_BYTES
from .map import CleanFiles, FileResult, Packed

__all__ = [
    "CACHE_FORMAT",
    "DEFAULT_CACHE_MAX",
    "CacheInfo",
    "TraceCache",
    "cache_max_bytes",
    "cache_max_problem",
    "default_cache_dir",
    "parse_size",
]

#: Bump when the entry layout or the map step's output changes (3: lines over
#: 1 MiB are skipped, and read/_stray.py's rule; every kind's key holds it).
CACHE_FORMAT = 3
#: Size cap of the cache folder without ``$ACTORPROF_CACHE_MAX``.
DEFAULT_CACHE_MAX = 10**9
_ARRAYS = ("src", "dst", "counts", "nbytes", "pe", "node")
#: Per file: size, mtime_ns, inode, ctime_ns, then the accounting.
_STAT = 4
_COUNTS = ("lines_read", "lines_blank", "bytes_read", "mismatched")


def default_cache_dir() -> Path:
    """``$ACTORPROF_CACHE_DIR``, else ``$XDG_CACHE_HOME/actorprof``, else ``~/.cache/actorprof``."""
    own = os.environ.get("ACTORPROF_CACHE_DIR")
    if own:
        return Path(own).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "actorprof"


def parse_size(text: str) -> int:
    """``"1GB"`` -> 10**9, ``"500M"``, ``"2GiB"`` -> 2 * 2**30, ``"123"`` bytes.

    Raises
    ------
    ValueError
        Not a size.
    """
    t = text.strip().lower().removesuffix("b")
    binary = t.endswith("i")
    t = t.removesuffix("i")
    units = "kmgt"
    factor = 1
    if t and t[-1] in units:
        factor = (1024 if binary else 1000) ** (units.index(t[-1]) + 1)
        t = t[:-1]
    value = float(t)
    if not 0 <= value < float("inf"):  # (NaN too)
        raise ValueError(f"{text!r}: a size is a number of bytes >= 0")
    return int(value * factor)


def cache_max_bytes() -> int:
    """The cap: ``$ACTORPROF_CACHE_MAX`` (e.g. ``500MB``, ``0`` to keep nothing)
    or :data:`DEFAULT_CACHE_MAX`. A value that is not a size is not used
    (:func:`cache_max_problem` says so)."""
    text = os.environ.get("ACTORPROF_CACHE_MAX")
    if text:
        try:
            return parse_size(text)
        except ValueError:
            pass
    return DEFAULT_CACHE_MAX


def cache_max_problem() -> str | None:
    """Why ``$ACTORPROF_CACHE_MAX`` is not used as the cap (None: it is
    unset, or a size): said where the cap is used, not ignored silently."""
    text = os.environ.get("ACTORPROF_CACHE_MAX")
    if not text:
        return None
    try:
        parse_size(text)
    except ValueError:
        return (
            f"ACTORPROF_CACHE_MAX={text!r} is not a size (e.g. 500MB, 2GiB, 0): the "
            f"default cap of {DEFAULT_CACHE_MAX / 1e9:g} GB is used"
        )
    return None


@dataclass(frozen=True)
class CacheInfo:
    """Where the cache is, how big, and its cap (``actorprof cache``)."""

    folder: Path
    entries: int
    size_bytes: int
    max_bytes: int


class TraceCache:
    """One packed entry per trace folder under ``folder/<kind>/``."""

    def __init__(
        self,
        folder: str | PathLike[str] | None = None,
        *,
        kind: str = "logical",
        max_bytes: int | None = None,
    ) -> None:
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self.kind = kind
        self.max_bytes = cache_max_bytes() if max_bytes is None else max_bytes

    # -- entries -----------------------------------------------------------

    def key(self, trace: Path, *, phase: str | None, options: dict[str, Any]) -> str | None:
        """The entry name of a trace folder (or file) read with ``options``."""
        try:
            resolved = trace.resolve()
        except OSError:
            return None
        ident = json.dumps(
            {
                "trace": str(resolved),
                "phase": phase,
                "version": __version__,
                "format": CACHE_FORMAT,
                "kind": self.kind,
                "options": options,
            },
            sort_keys=True,
        )
        return hashlib.sha256(ident.encode()).hexdigest()

    def _entry(self, key: str) -> Path:
        return self.folder / self.kind / f"{key}.npz"

    def holds(self, trace: Path, *, phase: str | None, options: dict[str, Any]) -> bool:
        """Whether an entry for ``trace`` read with ``options`` exists."""
        key = self.key(trace, phase=phase, options=options)
        return key is not None and self._entry(key).exists()

    def load(
        self,
        trace: Path,
        files: list[TraceFile],
        *,
        phase: str | None,
        options: dict[str, Any],
        report: ReadReport,
        sizes: bool = False,
    ) -> Loaded:
        """The cached result of each unchanged file of ``files``, by index.

        ``sizes``: partials of cells per message size are wanted; an entry
        written without them (``save(sizes=False)``) then gives nothing, and
        the trace is read again (a read with the sizes can serve a read
        without: its cells sum to the pairs).
        """
        key = self.key(trace, phase=phase, options=options)
        if key is None:
            return Loaded({})
        entry = self._entry(key)
        if not entry.exists():
            return Loaded({})
        try:
            names, stats, packed, counts, extras, by_size = _read_entry(entry, key)
        except Exception as exc:  # any damage: ignored, read again, rewritten
            report.note(
                f"cache entry {entry} is damaged ({_why(exc)}): ignored, the trace is read again"
            )
            return Loaded({})
        if sizes and not by_size:
            return Loaded({})
        rows = _unchanged_rows(names, stats, files, report)
        # every row of the entry used once (a warm run of an unchanged trace):
        # one partial for all, not a view per file (65,536 of them)
        whole = len(rows) == len(names) and len(set(rows.values())) == len(names)
        if whole and len(rows) == len(files) and files:
            _touch(entry)
            return _loaded_as_columns(files, rows, counts, extras, packed)
        counts_rows = counts.tolist()
        found: dict[int, FileResult] = {}
        for i, j in rows.items():
            partial = _LATER if whole else packed.part(j)
            found[i] = _file_result(files[i], counts_rows[j], extras.get(str(j)), partial)
        if found:
            _touch(entry)
        if whole:
            return Loaded(found, packed.total(), packed, rows)
        return Loaded(found)

    def save(
        self,
        trace: Path,
        files: list[TraceFile],
        results: dict[int, FileResult],
        *,
        phase: str | None,
        options: dict[str, Any],
        report: ReadReport,
        loaded: Loaded | None = None,
        sizes: bool = False,
        columns: tuple[CleanFiles, Packed] | None = None,
        stats: np.ndarray | None = None,
    ) -> None:
        """Store every file's result as the trace's one entry, then keep the
        cache under its cap (errors while writing are ignored: it is a cache).
        ``loaded``: what :meth:`load` gave, for the partials it left in its entry.
        ``sizes``: every partial has cells of one message size each (the
        entry says so, and serves ``load(sizes=True)``). ``columns``: files
        read whole without a skipped line, as columns (not in ``results``),
        and their partials in the same order (no object per file: 65,536
        files made one each, then packed them again, 1.5 s). ``stats``: each
        file's stat (a row by index, -1 for none) as the read took it, for
        files not stat'ed before the read (``report.stats_planned``)."""
        key = self.key(trace, phase=phase, options=options)
        if key is None:
            return
        # the stat taken before the read (a file written meanwhile is read again next time)
        planned = _planned_stats(files, report, stats)
        known = planned[:, 0] >= 0
        clean, clean_packed = columns if columns is not None else (None, None)
        at = np.zeros(0, np.int64) if clean is None else clean.at
        stated = known[at]
        at = at[stated]
        keep = [i for i in sorted(results) if results[i].error is None and known[i]]
        if not keep and not len(at):
            return
        rows = [results[i] for i in keep]
        pieces = [] if clean_packed is None else [clean_packed.take(np.flatnonzero(stated))]
        pieces.append(
            Packed.of(
                [
                    loaded.partial(i) if loaded is not None and r.partial is _LATER else r.partial
                    for i, r in zip(keep, rows, strict=True)
                ]
            )
        )
        packed = Packed.join(pieces)
        first = len(at)  # the rows of ``results`` come after the columns'
        extras = {
            str(first + j): [
                r.report.skipped,
                [[e.line, e.reason, e.text] for e in r.report.examples],
            ]
            for j, r in enumerate(rows)
            if r.report.skipped or r.report.examples
        }
        every = np.concatenate([at, np.array(keep, dtype=np.int64)])
        meta = {
            "key": key,
            "names": [files[i].name for i in every.tolist()],
            "extras": extras,
            "sizes": sizes,
        }
        counted = [
            [r.report.lines_read, r.report.lines_blank, r.report.bytes_read, r.mismatched]
            for r in rows
        ]
        counts = np.array(counted, dtype=np.int64).reshape(len(rows), len(_COUNTS))
        if clean is not None:
            columns_ = (clean.lines_read, clean.lines_blank, clean.bytes_read, clean.mismatched)
            counts = np.concatenate([np.column_stack(columns_)[stated], counts])
        arrays = {
            **packed.arrays,
            "cell_ends": packed.cell_ends,
            "pair_ends": packed.pair_ends,
            "messages": packed.messages,
            "times": packed.times,
            "stats": planned[every],
            "accounting": counts,
            "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        }
        self.write_entry(self._entry(key), arrays, report)

    def write_entry(self, entry: Path, arrays: dict[str, np.ndarray], report: ReadReport) -> None:
        """Write ``arrays`` as the ``.npz`` ``entry`` (whole or not at all), then
        keep the cache under its cap; an entry larger than the cap alone is
        not kept, and ``report`` notes it. Errors while writing are noted,
        not raised: it is a cache."""
        if (problem := cache_max_problem()) is not None:
            report.note(problem)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    np.savez(out, **arrays)  # type: ignore[arg-type]
                os.replace(tmp, entry)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            report.note(
                f"the cache entry could not be written in {entry.parent} "
                f"({exc.strerror or exc}): the next run reads the trace again. A writable "
                "folder: --cache-dir or ACTORPROF_CACHE_DIR; or --no-cache"
            )
            return
        size = _size(entry)
        if entry in self.evict(keep=entry):
            report.note(
                f"the cache entry of this trace ({size:,} bytes) is larger than the cache "
                f"cap ({self.max_bytes:,} bytes, ACTORPROF_CACHE_MAX): not kept"
            )

    # -- the folder as a whole ------------------------------------------------

    def _entries(self) -> list[Path]:
        """Every entry file of every kind (and of the older per-file layout)."""
        if not self.folder.is_dir():
            return []
        found = []
        for kind in self.folder.iterdir():
            if kind.is_dir():
                found += [p for p in kind.rglob("*.npz") if p.is_file()]
        return found

    def info(self) -> CacheInfo:
        """Where the cache is, how many entries, how many bytes."""
        entries = self._entries()
        size = sum(_size(p) for p in entries)
        return CacheInfo(self.folder, len(entries), size, self.max_bytes)

    def evict(self, *, keep: Path | None = None) -> list[Path]:
        """Remove least recently used entries until the cache is under its cap.

        ``keep`` (the entry just written) goes last, and only if it alone is
        over the cap. Returns the entries removed.
        """
        entries = []
        for p in self._entries():
            try:
                st = p.stat()
            except OSError:
                continue
            entries.append((p == keep, st.st_mtime_ns, st.st_size, p))
        total = sum(e[2] for e in entries)
        removed = []
        for _, _, size, p in sorted(entries):
            if total <= self.max_bytes:
                break
            try:
                p.unlink()
            except OSError:
                continue
            total -= size
            removed.append(p)
        return removed

    def clear(self) -> int:
        """Remove every entry (and the folders they were in); returns how many."""
        entries = self._entries()
        for p in entries:
            p.unlink(missing_ok=True)
        if self.folder.is_dir():
            for kind in self.folder.iterdir():
                if kind.is_dir():
                    for tmp in kind.rglob("*.tmp"):
                        tmp.unlink(missing_ok=True)
                    _remove_empty(kind)
        return len(entries)


def _read_entry(
    entry: Path, key: str
) -> tuple[list[str], np.ndarray, Packed, np.ndarray, dict[str, Any], bool]:
    """An entry's contents, checked to hold together (else an exception), and
    whether its cells are per message size."""
    with np.load(entry, allow_pickle=False) as npz:
        arrays = {name: np.asarray(npz[name], dtype=np.int64) for name in _ARRAYS}
        cell_ends = np.asarray(npz["cell_ends"], dtype=np.int64)
        pair_ends = np.asarray(npz["pair_ends"], dtype=np.int64)
        messages = np.asarray(npz["messages"], dtype=np.int64)
        times = np.asarray(npz["times"], dtype=np.float64)
        stats = np.asarray(npz["stats"], dtype=np.int64)
        counts = np.asarray(npz["accounting"], dtype=np.int64)
        meta = json.loads(bytes(npz["meta"]).decode())
    names = meta["names"]
    n = len(names)
    if meta["key"] != key:
        raise ValueError("key mismatch")
    shapes_ok = (
        cell_ends.shape == pair_ends.shape == messages.shape == (n,)
        and times.shape == (n, 2)
        and stats.shape == (n, _STAT)
        and counts.shape == (n, len(_COUNTS))
        and all(isinstance(name, str) for name in names)
    )
    if not shapes_ok:
        raise ValueError("inconsistent shapes")
    for ends, names_ in (
        (cell_ends, ("src", "dst", "counts", "nbytes")),
        (pair_ends, ("pe", "node")),
    ):
        if n and (ends[-1] != len(arrays[names_[0]]) or (np.diff(ends) < 0).any() or ends[0] < 0):
            raise ValueError("inconsistent offsets")
        if len({len(arrays[name]) for name in names_}) != 1:
            raise ValueError("inconsistent lengths")
    if (counts < 0).any() or (messages < 0).any() or (stats < 0).any():
        raise ValueError("negative counts")
    _check_values(arrays, cell_ends, messages, times)
    packed = Packed(arrays, cell_ends, pair_ends, messages, times)
    return names, stats, packed, counts, meta["extras"], meta.get("sizes") is True


def _why(exc: Exception) -> str:
    said = str(exc).splitlines()[0][:80] if str(exc) else ""
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


#: PE and node ids fit int32 (the readers' dtype); sums must stay far from int64's end.
_ID_END = 2**31
_SUM_END = float(2**62)


def _check_values(
    arrays: dict[str, np.ndarray], cell_ends: np.ndarray, messages: np.ndarray, times: np.ndarray
) -> None:
    """Values a reader could have produced, or an exception.

    A damaged entry whose key and shapes are intact must not reach the
    analysis: a negative or huge PE id would index out of bounds or size a
    table by it, and huge counts would overflow the sums.
    """
    for name in ("src", "dst", "pe", "node"):
        ids = arrays[name]
        if ids.size and (ids.min() < 0 or ids.max() >= _ID_END):
            raise ValueError(f"{name} id out of range")
    cells, nbytes = arrays["counts"], arrays["nbytes"]
    if (cells < 0).any() or (nbytes < 0).any():
        raise ValueError("negative cell values")
    if (
        float(cells.sum(dtype=np.float64)) >= _SUM_END
        or float(messages.sum(dtype=np.float64)) >= _SUM_END
    ):
        raise ValueError("counts beyond 64-bit sums")
    if (nbytes.astype(np.float64) > cells.astype(np.float64) * float(MAX_MSG_BYTES)).any():
        raise ValueError("bytes beyond the message size limit")
    ends = np.concatenate([np.zeros(1, np.int64), np.cumsum(cells)])
    starts = np.concatenate([np.zeros(1, np.int64), cell_ends[:-1]])
    if not np.array_equal(ends[cell_ends] - ends[starts], messages):
        raise ValueError("cell counts disagree with the message counts")
    if np.isinf(times).any():
        raise ValueError("infinite times")


def _file_result(f: TraceFile, counts: list[int], extra: Any, partial: CommPartial) -> FileResult:
    """The result of file ``f`` from its entry row: ``counts`` (its
    accounting, :data:`_COUNTS`) and ``extra`` (its skipped lines, or None)."""
    lines_read, lines_blank, bytes_read, mismatched = counts
    file_report = FileReport(f.path_text, f.pe, f.phase, lines_read, lines_blank, bytes_read)
    if extra is not None:
        skipped, examples = extra
        file_report.skipped = {str(k): int(v) for k, v in skipped.items()}
        file_report.examples = [SkippedLine(int(e[0]), str(e[1]), str(e[2])) for e in examples]
    return FileResult(file_report, partial, mismatched)


def _loaded_as_columns(
    files: list[TraceFile],
    rows: dict[int, int],
    counts: np.ndarray,
    extras: dict[str, Any],
    packed: Packed,
) -> Loaded:
    """What :meth:`TraceCache.load` gives when every file is unchanged in the
    entry and every row of the entry is used: the files that skipped no
    line as columns (:attr:`Loaded.clean`, as the map returns them), a
    :class:`FileResult` for the others (a warm run of 65,536 files made a
    report, then a JSON object, of each: 0.3 s)."""
    order = np.fromiter((rows[i] for i in range(len(files))), np.int64, len(files))
    noted = np.zeros(len(files), dtype=np.bool_)
    if extras:
        noted = np.isin(order, np.array([int(j) for j in extras], dtype=np.int64))
    found = {
        i: _file_result(files[i], counts[order[i]].tolist(), extras[str(order[i])], _LATER)
        for i in np.flatnonzero(noted).tolist()
    }
    at = np.flatnonzero(~noted)
    picked = counts[order[at]]
    clean = CleanFiles(at, *(picked[:, k] for k in range(len(_COUNTS)))) if len(at) else None
    return Loaded(found, packed.total(), packed, rows, clean)


#: The partial of a file loaded with its whole entry: :meth:`Loaded.partial` makes it.
_LATER = CommPartial()


@dataclass
class Loaded:
    """What a cache entry gave: the result of each unchanged file, by index.

    When every row of the entry was used (a warm run of an unchanged trace),
    ``total`` holds all their partials summed, and a file's own partial is
    made only if asked for (the entry is written again): 65,536 views cost
    half a second.
    """

    found: dict[int, FileResult]
    total: CommPartial | None = None
    packed: Packed | None = None
    rows: dict[int, int] = field(default_factory=dict)
    #: The files that skipped no line, as columns (by file index), when every
    #: file was loaded (:func:`_loaded_as_columns`): they are not in ``found``.
    clean: CleanFiles | None = None

    def partial(self, i: int) -> CommPartial:
        """File ``i``'s own partial."""
        result = self.found[i]
        if result.partial is not _LATER or self.packed is None:
            return result.partial
        return self.packed.part(self.rows[i])


def _planned_stats(
    files: list[TraceFile], report: ReadReport, taken: np.ndarray | None = None
) -> np.ndarray:
    """Each file's stat, a row by file (-1 where it cannot be stat'ed): as
    listed before the read (``report.stats_planned``), else as the read
    took it (``taken``, such rows), else taken now."""
    if len(report.stats_planned) == len(files):
        listed = report.stats_planned
    elif taken is not None:
        return taken
    else:
        listed = [file_stat(f.path_text) for f in files]
    rows = [(-1,) * _STAT if st is None else st for st in listed]
    return np.array(rows, dtype=np.int64).reshape(len(files), _STAT)


def _unchanged_rows(
    names: list[str], stats: np.ndarray, files: list[TraceFile], report: ReadReport
) -> dict[int, int]:
    """File index -> entry row of each file unchanged since the entry was
    written (same name, size, mtime, inode and ctime)."""
    where = {name: j for j, name in enumerate(names)}
    now = _planned_stats(files, report)
    rows = np.array([where.get(f.name, -1) for f in files], dtype=np.int64)
    same = (rows >= 0) & (now[:, 0] >= 0)
    if len(files):
        same &= (stats[np.maximum(rows, 0)] == now).all(axis=1)
    return {int(i): int(rows[i]) for i in np.flatnonzero(same)}


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _touch(entry: Path) -> None:
    """Mark an entry used now (its mtime orders the eviction)."""
    try:
        now = time.time_ns()
        os.utime(entry, ns=(now, now))
    except OSError:
        pass


def _remove_empty(folder: Path) -> None:
    for sub in [*sorted(folder.rglob("*"), reverse=True), folder]:
        if sub.is_dir():
            with contextlib.suppress(OSError):
                sub.rmdir()

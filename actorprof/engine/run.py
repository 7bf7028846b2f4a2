"""Map/reduce over a trace's files: local processes, a Dask cluster, a cache.

The logical trace is reduced as ``file or byte range -> CommPartial``
(map, :func:`actorprof.engine.map.reduce_range`) then summed (reduce).
Work units are the files, and byte ranges of big files cut at line ends, so
one huge file is read by several workers. The map runs in this process
(``jobs=1``), in local worker processes (``jobs=N``), or on an existing
``dask.distributed`` cluster (``scheduler=ADDRESS``). Results are merged in
file order, whatever order the units finish in, so every way gives the same
numbers, line accounting and errors as the plain reader
(:func:`actorprof.iter_logical`).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import pairwise, repeat
from os import PathLike
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from .._memory import pad_worker_heap
from .._progress import ProgressSink
from ..analyze.matrix import CommAccumulator, CommPartial
from ..errors import TraceFormatError, UsageError
from ..read import (
    FAST_BLOCK_BYTES,
    FileColumns,
    FileReport,
    FileStat,
    ReadReport,
    TraceFile,
    file_columns,
    file_stat,
    files_and_bytes_of,
    list_folder,
    logical_files,
    require_trace_lines,
    stat_planned,
    trace_file_columns,
)
from ..schema import LOGICAL_COLUMNS
from .batch import SmallFiles, reduce_small_files
from .map import (
    CleanFiles,
    FileResult,
    Packed,
    RangeResult,
    UnitResult,
    merge_ranges,
    reduce_range,
)

if TYPE_CHECKING:  # imported where times are binned (the map's workers import no pandas)
    from ..analyze.timeline import TimelineAccumulator
    from .cache import TraceCache

__all__ = [
    "DEFAULT_SPLIT_BYTES",
    "SCHEDULER_TIMEOUT_S",
    "Engine",
    "Finished",
    "SendTimes",
    "reduce_logical",
    "run_map",
]

U = TypeVar("U")
R = TypeVar("R")

#: Files larger than this are cut into ranges of about this size.
DEFAULT_SPLIT_BYTES = 64 * 1024 * 1024
#: Seconds a Dask scheduler has to answer before ``--scheduler`` gives up
#: (``$ACTORPROF_SCHEDULER_TIMEOUT`` or ``Engine(scheduler_timeout=...)``
#: override it). A scheduler on a reachable node answers in milliseconds.
SCHEDULER_TIMEOUT_S = 15.0


class Item(NamedTuple):
    """Lines in bytes ``[start, stop)`` (None: to the end) of file number ``file``.

    A named tuple: a unit of small files holds thousands, made, pickled to
    a worker and loaded there at a third of a frozen dataclass's cost.
    """

    file: int
    path: str
    start: int
    stop: int | None
    pe: int | None
    #: A whole file of at most ``block_bytes``: read with others (batch route).
    small: bool = False


@dataclass(frozen=True)
class Unit:
    """One map task: a range of a big file, or many small files (a batch).

    ``packed``: return each item's partial too (for the cache), not only
    their sum. ``sizes``: cells per (src, dst, message size), not per pair
    (``reduce_logical(sizes=True)``). ``times``: ``(base_s, max_bins)`` of
    a :class:`~actorprof.analyze.timeline.TimelineAccumulator` into which
    the unit bins its send times too (:class:`SendTimes`).
    """

    items: tuple[Item, ...]
    pe_limit: int | None
    reason: str
    block_bytes: int = FAST_BLOCK_BYTES
    packed: bool = False
    sizes: bool = False
    times: tuple[float, int] | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # items as columns: a tuple per field pickles in a tenth of the time
        # of thousands of named tuples (8,192 files: 17 ms -> 1.3 ms, in the
        # main process's queue feeder thread)
        columns = tuple(zip(*self.items, strict=True))
        fields = (
            self.pe_limit,
            self.reason,
            self.block_bytes,
            self.packed,
            self.sizes,
            self.times,
        )
        return _unit_of_columns, (columns, *fields)


def _unit_of_columns(
    columns: tuple[tuple[Any, ...], ...],
    pe_limit: int | None,
    reason: str,
    block_bytes: int,
    packed: bool,
    sizes: bool,
    times: tuple[float, int] | None = None,
) -> Unit:
    items = tuple(map(Item, *columns)) if columns else ()
    return Unit(items, pe_limit, reason, block_bytes, packed, sizes, times)


def run_unit(unit: Unit) -> UnitResult:
    """The map step (runs in a worker process or on a Dask worker).

    Whole small files read in groups come back as columns
    (:class:`~actorprof.engine.batch.SmallFiles`: no object per file), the
    other items as one :class:`RangeResult` each; with ``unit.times``, the
    send times of every item binned in ``times``.
    """
    pad_worker_heap()
    items = unit.items
    times = None
    if unit.times is not None:
        from ..analyze.timeline import TimelineAccumulator

        base_s, max_bins = unit.times
        times = TimelineAccumulator(base_s=base_s, max_bins=max_bins)
    whole = [k for k, it in enumerate(items) if it.small]
    batched = np.zeros(len(items), dtype=np.bool_)
    small = None
    # the cache keeps each whole file's stat, taken here before its read
    stats: dict[int, FileStat] | None = {} if unit.packed else None
    if len(whole) > 1:
        stated: dict[int, FileStat] | None = None if stats is None else {}
        small = reduce_small_files(
            [(items[k].path, items[k].pe) for k in whole],
            pe_limit=unit.pe_limit,
            block_bytes=unit.block_bytes,
            per_file=unit.packed,
            sizes=unit.sizes,
            times=times,
            stats=stated,
        )
        small.at = np.asarray(whole, dtype=np.int64)[small.at]  # positions in the unit
        batched[small.at] = True
        if stats is not None and stated is not None:
            stats.update((whole[j], st) for j, st in stated.items())
    ranges: list[RangeResult | None] = [None] * len(items)
    parts: dict[int, CommPartial] = {}
    for k in np.flatnonzero(~batched).tolist():
        item = items[k]
        whole_file = item.start == 0 and item.stop is None
        if stats is not None and k not in stats and whole_file and (st := file_stat(item.path)):
            stats[k] = st
        found = reduce_range(
            item.path,
            item.start,
            item.stop,
            file_pe=item.pe,
            pe_limit=unit.pe_limit,
            reason=unit.reason,
            block_bytes=unit.block_bytes,
            sizes=unit.sizes,
            times=times,
        )
        assert found.partial is not None
        parts[k] = found.partial.compact(sizes=unit.sizes)
        found.partial = None
        ranges[k] = found
    summed = list(parts.values()) + ([] if small is None else [small.total])
    total = CommPartial()
    for part in summed:
        total.messages += part.messages
        total.add_times(part.time_min, part.time_max)
    total.add_cells(*(np.concatenate([getattr(p, n) for p in summed]) for n in _COLUMNS))
    packed = None
    if unit.packed:  # the cache keeps each file's partial
        packed = _packed_items(parts, small)
    clean = _clean(items, ranges, small)
    if clean is not None:
        for k in clean.at.tolist():
            ranges[k] = None
    table = None
    if stats is not None:  # a row per item; -1 where none was taken
        table = np.full((len(items), 4), -1, dtype=np.int64)
        if stats:
            table[np.fromiter(stats, np.int64, len(stats))] = list(stats.values())
    return UnitResult(ranges, total.compact(sizes=unit.sizes), packed, clean, times, table)


def _packed_items(parts: dict[int, CommPartial], small: SmallFiles | None) -> Packed:
    """Every item's own partial, item ``k`` as partial ``k``: those read in
    groups (``small``, packed already) and the others (``parts``, by item)."""
    pieces, positions = [], []
    if small is not None and small.packed is not None:
        pieces.append(small.packed)
        positions.append(small.at)
    if parts:
        pieces.append(Packed.of(list(parts.values())))
        positions.append(np.fromiter(parts, np.int64, len(parts)))
    if not pieces:
        return Packed.of([])
    return Packed.join(pieces).take(np.argsort(np.concatenate(positions), kind="stable"))


def _clean(
    items: tuple[Item, ...], ranges: list[RangeResult | None], small: SmallFiles | None
) -> CleanFiles | None:
    """The unit's whole files read without a skipped line or an error, as
    columns: those read in groups, and the others that are."""
    at = [
        k
        for k, (item, found) in enumerate(zip(items, ranges, strict=True))
        if found is not None
        and item.start == 0
        and item.stop is None
        and found.error is None
        and not found.report.skipped
        and not found.report.examples
    ]
    clean = CleanFiles.of(at, [r for k in at if (r := ranges[k]) is not None]) if at else None
    if small is None or not len(small):
        return clean
    grouped = CleanFiles(
        small.at,
        small.lines,
        np.zeros(len(small), dtype=np.int64),
        small.bytes_read,
        small.mismatched,
    )
    return grouped if clean is None else CleanFiles.join(grouped, clean)


_COLUMNS = ("src", "dst", "counts", "nbytes", "pe", "node")


def available_cpus() -> int:
    """CPUs this process may run on: its affinity mask (``taskset``, cgroups
    cpusets), and at most ``SLURM_CPUS_PER_TASK`` when SLURM sets it."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13: affinity-aware
    if count is not None:
        n = count() or 1
    else:
        try:
            n = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            n = os.cpu_count() or 1
    slurm = os.environ.get("SLURM_CPUS_PER_TASK", "")
    if slurm.strip().isdigit() and int(slurm) >= 1:
        n = min(n, int(slurm))
    return max(1, n)


@dataclass
class Engine:
    """How to run the map: ``jobs`` processes or a Dask ``scheduler``, and the cache.

    Parameters
    ----------
    jobs
        Worker processes; None or 0: the CPUs this process may use
        (:func:`available_cpus`: affinity, ``SLURM_CPUS_PER_TASK``).
    cache
        Use the cache of reduced files.
    cache_dir
        Cache folder; None: ``$XDG_CACHE_HOME/actorprof`` or ``~/.cache/actorprof``.
    scheduler
        Address of a ``dask.distributed`` scheduler (or a ``Client``); the map
        then runs on that cluster, which must see the trace files.
    split_bytes
        Files larger than this are read as several ranges; smaller files
        travel in batches of up to this many bytes (one task, one partial).
    block_bytes
        Bytes parsed at once by a worker (memory per worker ~ a few times this).
    parallel_min_bytes
        Below this much to read, local processes are not worth starting: the
        map runs in this process.
    count_plan_files
        From this many files on, the work is planned by their count, in
        batches of files, and no file is stat'ed for its size first (65,536
        files: 0.2-0.4 s before the map could start); the map then runs in
        workers (``jobs`` > 1), and a file is read whole, however big (its
        lines are the same). The cache keeps each file's stat: the workers
        take it then, before each read. A cache that holds an entry for the
        trace plans by size (its files are stat'ed first, to find those
        unchanged).
    scheduler_timeout
        Seconds the ``scheduler`` (an address) has to answer; None:
        ``$ACTORPROF_SCHEDULER_TIMEOUT``, else :data:`SCHEDULER_TIMEOUT_S`.
    fork
        Fork the local workers from this process, not from a fork server,
        where that is safe: on Linux, with no other thread running and no
        fork server started, while this process holds at most
        :data:`FORK_MAX_RESIDENT` bytes. The map steps are imported here
        first (a command imports them anyway).
        For a process that starts no thread (the command line's): it saves
        the server's interpreter and its imports, which this process makes
        too (0.3-0.6 s of CPU). A library caller keeps the server (a
        notebook kernel runs threads, and forking a threaded process may
        deadlock).
    """

    jobs: int | None = 1
    cache: bool = False
    cache_dir: str | PathLike[str] | None = None
    scheduler: Any = None
    split_bytes: int = DEFAULT_SPLIT_BYTES
    block_bytes: int = FAST_BLOCK_BYTES
    parallel_min_bytes: int = 8 * 1024 * 1024
    scheduler_timeout: float | None = None
    count_plan_files: int = 2048
    fork: bool = False

    @classmethod
    def of(
        cls,
        *,
        jobs: int | None,
        cache: bool,
        cache_dir: str | PathLike[str] | None,
        scheduler: Any,
    ) -> Engine:
        """The engine of a view function's options: ``cache_dir`` given turns
        the cache on (:func:`actorprof.logical_view`)."""
        on = cache or cache_dir is not None
        return cls(jobs=jobs, cache=on, cache_dir=cache_dir, scheduler=scheduler)

    @property
    def workers(self) -> int:
        """Worker processes the map uses."""
        if self.jobs:
            return int(self.jobs)
        return available_cpus()


@dataclass
class SendTimes:
    """The send times binned in the matrix's read: the timeline's map step in
    the same pass (``actorprof report`` reads the logical trace once).

    Given to :func:`reduce_logical`, which fills ``binned`` and ``report``
    once the read succeeded, when every file was read (none came from the
    cache, which keeps no times): ``binned`` holds every line's send time
    binned as :func:`actorprof.engine.timeline.reduce_times` bins them
    (bins, untimed and outlier counts, PEs: sums, whatever the units), and
    ``report`` a copy of the read's accounting as the read ended (the
    timeline's read fills its own the same way). Not the extremes that
    name outliers by file and line: only a read of whole files in order
    names them as the timeline does, so a phase whose times have outliers
    is read again by :func:`actorprof.kinds.timeline.timeline_view`.
    """

    base_s: float = 1e-3
    max_bins: int = 100_000
    binned: TimelineAccumulator | None = None
    report: ReadReport | None = None


def reduce_logical(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    report: ReadReport,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
    sizes: bool = False,
    times: SendTimes | None = None,
) -> CommAccumulator:
    """Read a logical trace with ``engine`` and return the summed accumulator.

    Fills ``report`` exactly as :func:`actorprof.iter_logical` does (files,
    line accounting, warnings) and raises the same errors. ``sizes``: also
    count the messages per (source, destination, message size), in the same
    read (:attr:`~actorprof.analyze.matrix.CommMatrices.mixed_sizes`).
    ``times``: also bin the send times, in the same read, when every file
    is read (:class:`SendTimes`; with the cache, only when none is in it).
    """
    engine = engine or Engine()
    if engine.split_bytes < 1 or engine.block_bytes < 1:
        raise UsageError("split_bytes and block_bytes must be >= 1")
    if times is not None:
        times.binned = times.report = None
    report.kind = "logical"
    start_workers_early(engine, path)
    with _no_collection_pauses():
        files = logical_files(path, phase=phase, num_pes=num_pes, report=report, sizes=False)
        cached = _logical_cache(engine, Path(path), phase, report)
        if len(files) < engine.count_plan_files or (cached is not None and cached.held):
            # else planned by count (Engine.count_plan_files), and the workers
            # stat the files the cache keeps
            stat_planned(files, report)
        report.num_pes = num_pes
        if progress is not None:
            progress.begin(report.bytes_planned, report.files_planned)
        acc = CommAccumulator(num_pes, sizes=sizes)
        found, clean, binned = _results(files, report, engine, progress, acc, times, cached)
        _account(files, found, clean, report)
    if times is not None and binned is not None:
        times.binned, times.report = binned, report.copy()
    return acc


@contextmanager
def _no_collection_pauses() -> Iterator[None]:
    """The garbage collector's automatic runs paused: listing and planning
    make a few objects per file, none of them in cycles, and each full
    collection they set off walks every object the process holds (65,536
    files: three of them, 0.15 s of CPU in all)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _account(
    files: list[TraceFile],
    found: dict[int, FileResult],
    clean: CleanFiles | None,
    report: ReadReport,
) -> None:
    """Add every file's accounting to ``report`` in file order, with its
    warnings; raise the first file's error. ``clean`` holds the files (by
    index) read whole without a skipped line, as columns: they are added as
    :class:`~actorprof.read.FileColumns`, not a report each."""
    rows = np.zeros(0, dtype=np.int64) if clean is None else clean.at
    done = 0
    for i in [*sorted(found), len(files)]:
        upto = int(np.searchsorted(rows, i))
        if upto > done:
            assert clean is not None
            _account_clean(files, clean, done, upto, report)
            done = upto
        if i == len(files):
            break
        result, trace_file = found[i], files[i]
        if result.error is not None:
            line, message = result.error
            raise TraceFormatError(message, path=trace_file.path, line=line)
        report.add_files([result.report])
        require_trace_lines(result.report, "logical trace")
        if result.mismatched:
            report.warn(_mismatch_warning(trace_file, result.mismatched))


def _account_clean(
    files: list[TraceFile], clean: CleanFiles, start: int, stop: int, report: ReadReport
) -> None:
    """Rows ``start:stop`` of ``clean`` (files one after another) into ``report``."""
    at = clean.at[start:stop].tolist()
    chosen = list(map(files.__getitem__, at))
    lines_read, lines_blank = clean.lines_read[start:stop], clean.lines_blank[start:stop]
    report.add_files([file_columns(chosen, lines_read, lines_blank, clean.bytes_read[start:stop])])
    mismatched = clean.mismatched[start:stop]
    for k in np.flatnonzero(mismatched).tolist():
        report.warn(_mismatch_warning(chosen[k], int(mismatched[k])))


def _mismatch_warning(trace_file: TraceFile, mismatched: int) -> str:
    return (
        f"{trace_file.path}: {mismatched} line(s) have src_pe != {trace_file.pe} "
        "(the PE in the file name); they are counted under the src_pe they carry"
    )


class _LogicalCache(NamedTuple):
    """The cache of one logical read: where, under which options, and
    whether it holds an entry for them (else no file is stat'ed first)."""

    cache: TraceCache
    trace: Path
    phase: str | None
    options: dict[str, Any]
    held: bool


def _logical_cache(
    engine: Engine, path: Path, phase: str | None, report: ReadReport
) -> _LogicalCache | None:
    if not engine.cache:
        return None
    from .cache import TraceCache

    cache = TraceCache(engine.cache_dir)
    # the PE-id limit decides which lines are skipped: part of the key
    options = {"columns": list(LOGICAL_COLUMNS), "reader": 2, "pe_limit": report.pe_limit}
    held = cache.holds(path, phase=phase, options=options)
    return _LogicalCache(cache, path, phase, options, held)


def _results(
    files: list[TraceFile],
    report: ReadReport,
    engine: Engine,
    progress: ProgressSink | None,
    acc: CommAccumulator,
    times: SendTimes | None = None,
    cached: _LogicalCache | None = None,
) -> tuple[dict[int, FileResult], CleanFiles | None, TimelineAccumulator | None]:
    """Every file's result (from the cache, or read), by index; partials
    summed into ``acc``. The files read whole without a skipped line come
    as columns (``at``: their indexes), not in the dict; so do those of a
    trace the cache holds whole (nothing read). With ``times``, and no
    file from the cache, the send times binned too (else None)."""
    found: dict[int, FileResult] = {}
    clean: list[CleanFiles] = []
    loaded = None
    if cached is not None and cached.held:
        loaded = cached.cache.load(
            cached.trace,
            files,
            phase=cached.phase,
            options=cached.options,
            report=report,
            sizes=acc.sizes,
        )
        found = loaded.found
        if loaded.clean is not None:  # every file loaded: those in columns are not in found
            clean.append(loaded.clean)
        if loaded.total is not None:
            acc.add_partial(loaded.total)
        else:
            for hit in found.values():
                acc.add_partial(hit.partial)
    done_bytes = sum(hit.report.bytes_read for hit in found.values())
    done_bytes += sum(int(c.bytes_read.sum()) for c in clean)
    hits = len(found)
    done_files = hits + sum(len(c.at) for c in clean)
    if progress is not None:
        progress.update(done_bytes, done_files)
    binned = spec = None
    if times is not None and not done_files:  # a cached file has no times: no use binning the rest
        from ..analyze.timeline import TimelineAccumulator

        spec = (times.base_s, times.max_bins)
        binned = TimelineAccumulator(base_s=times.base_s, max_bins=times.max_bins)
    planned = report.sizes_planned
    by_count = len(planned) != len(files)  # not stat'ed (Engine.count_plan_files)
    todo = [] if clean else [i for i in range(len(files)) if i not in found]
    packed = cached is not None
    if by_count:
        serial = False
        units = _plan_by_count(files, todo, report, engine, packed, acc.sizes, spec)
    else:
        sizes = {i: planned[i] for i in todo}
        serial = sum(sizes.values()) < engine.parallel_min_bytes
        workers = 1 if serial else engine.workers
        units = _plan(files, sizes, report, engine, workers, packed, acc.sizes, spec)
    left = dict.fromkeys(todo, 0)
    for unit in units:
        for item in unit.items:
            left[item.file] += 1
    parts: dict[int, list[RangeResult]] = {}
    read_clean = len(clean)  # those after it were read now
    clean_packed: list[Packed] = []  # their partials, when the cache keeps them
    read_stats: np.ndarray | None = None  # the files' stats the workers took
    for unit, result in _run(units, engine, serial=serial):
        acc.add_partial(result.total)
        if binned is not None and result.times is not None:
            binned.merge(result.times)  # exact in any order: sums
        index = np.fromiter((item.file for item in unit.items), np.int64, len(unit.items))
        if result.stats is not None:
            if read_stats is None:
                read_stats = np.full((len(files), 4), -1, dtype=np.int64)
            read_stats[index] = result.stats
        if result.clean is not None:  # as columns, by file index
            clean.append(replace(result.clean, at=index[result.clean.at]))
            if result.packed is not None:  # the cache stores each file's partial
                clean_packed.append(result.packed.take(result.clean.at))
            done_bytes += int(result.clean.bytes_read.sum())
            done_files += len(result.clean.at)
        for k, (item, rr) in enumerate(zip(unit.items, result.ranges, strict=True)):
            if rr is None:
                continue  # in result.clean
            if result.packed is not None:
                rr.partial = result.packed.part(k)
            parts.setdefault(item.file, []).append(rr)
            done_bytes += rr.report.bytes_read
            left[item.file] -= 1
            done_files += not left[item.file]
        if progress is not None:
            progress.update(done_bytes, done_files)
    for i, ranges in parts.items():
        if len(ranges) > 1:
            ranges.sort(key=lambda r: r.start)
        found[i] = merge_ranges(ranges, pe=files[i].pe, phase=files[i].phase, sizes=acc.sizes)
    if cached is not None and (parts or len(found) > hits or clean_packed):
        read = CleanFiles.join(*clean[read_clean:], by_position=False) if clean_packed else None
        cached.cache.save(
            cached.trace,
            files,
            found,
            phase=cached.phase,
            options=cached.options,
            report=report,
            loaded=loaded,
            sizes=acc.sizes,
            columns=None if read is None else (read, Packed.join(clean_packed)),
            stats=read_stats,
        )
    return found, CleanFiles.join(*clean) if clean else None, binned


def _unit_fields(
    report: ReadReport,
    engine: Engine,
    packed: bool,
    by_size: bool,
    times: tuple[float, int] | None,
) -> dict[str, Any]:
    return {
        "pe_limit": report.pe_limit,
        "reason": report.pe_limit_reason,
        "block_bytes": engine.block_bytes,
        "packed": packed,
        "sizes": by_size,
        "times": times,
    }


def _plan(
    files: list[TraceFile],
    sizes: dict[int, int],
    report: ReadReport,
    engine: Engine,
    workers: int,
    packed: bool,
    by_size: bool = False,
    times: tuple[float, int] | None = None,
) -> list[Unit]:
    """Units of about ``split_bytes``: ranges of big files, batches of small ones.

    Batches are made smaller when that keeps every worker busy (4 per worker).
    ``by_size``: the units count cells per message size (:attr:`Unit.sizes`);
    ``times``: they bin the send times too (:attr:`Unit.times`).
    """
    small = sum(size for size in sizes.values() if size <= engine.split_bytes)
    target = min(engine.split_bytes, max(engine.block_bytes, -(-small // (4 * workers))))
    make = _unit_fields(report, engine, packed, by_size, times)
    units: list[Unit] = []
    batch: list[Item] = []
    batch_bytes = 0
    for i, size in sizes.items():
        f = files[i]
        if size > engine.split_bytes:
            cuts = _cuts(f.path, size, engine.split_bytes)
            stops: list[int | None] = [*cuts[1:], None]
            for a, b in zip(cuts, stops, strict=True):
                units.append(Unit((Item(i, f.path_text, a, b, f.pe, False),), **make))
            continue
        batch.append(Item(i, f.path_text, 0, None, f.pe, size <= engine.block_bytes))
        batch_bytes += size
        if batch_bytes >= target:
            units.append(Unit(tuple(batch), **make))
            batch, batch_bytes = [], 0
    if batch:
        units.append(Unit(tuple(batch), **make))
    return units


def _plan_by_count(
    files: list[TraceFile],
    todo: list[int],
    report: ReadReport,
    engine: Engine,
    packed: bool,
    by_size: bool = False,
    times: tuple[float, int] | None = None,
) -> list[Unit]:
    """Batches of the files ``todo`` (indexes), 4 per worker, of sizes unknown.

    Every file is offered to the group route (:class:`Item` ``small``): one
    larger than ``block_bytes`` (or empty, unreadable, cut) is left out by
    it and read whole on its own, as the plan by size reads it.
    """
    make = _unit_fields(report, engine, packed, by_size, times)
    texts, pes, _ = trace_file_columns(files)
    units = []
    for start, stop in count_runs(len(todo), engine.workers):
        chosen = todo[start:stop]
        n = len(chosen)
        paths = map(texts.__getitem__, chosen)
        ids = map(pes.__getitem__, chosen)
        rows = zip(chosen, paths, repeat(0, n), repeat(None, n), ids, repeat(True, n), strict=True)
        # made by tuple.__new__ (C), not Item's own __new__ (a Python frame each)
        items = tuple(map(tuple.__new__, repeat(Item, n), rows))
        units.append(Unit(items, **make))
    return units


class Finished:
    """The files and bytes of the units a map has finished so far, told to
    ``progress`` as each unit's accounting comes (the PAPI and timeline
    reads' units)."""

    def __init__(self, progress: ProgressSink | None) -> None:
        self.progress = progress
        self.files = 0
        self.bytes = 0

    def add(self, entries: Iterable[FileReport | FileColumns]) -> None:
        """Count a finished unit's files (:func:`~actorprof.read.files_and_bytes_of`)."""
        files, nbytes = files_and_bytes_of(entries)
        self.files += files
        self.bytes += nbytes
        if self.progress is not None:
            self.progress.update(self.bytes, self.files)


def count_runs(n: int, workers: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of consecutive runs of ``n`` items, 4 per worker, of
    about as many items each: the units of a read planned by its files'
    count (:attr:`Engine.count_plan_files`), their sizes unknown."""
    count = min(n, 4 * workers)
    return list(pairwise(n * k // count for k in range(count + 1))) if count else []


def _cuts(path: Path, size: int, split_bytes: int) -> list[int]:
    """Starts of ranges of about ``split_bytes``, each just after a line end."""
    cuts = [0]
    try:
        with open(path, "rb") as handle:
            target = split_bytes
            while target < size:
                cut = _next_line_start(handle, target)
                if cut >= size:
                    break
                if cut > cuts[-1]:
                    cuts.append(cut)
                target = max(cut, target) + split_bytes
    except OSError:
        return [0]  # reported by the map step with the reader's message
    return cuts


def _next_line_start(handle: Any, offset: int) -> int:
    handle.seek(offset)
    position = offset
    while chunk := handle.read(65536):
        found: int = chunk.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(chunk)
    return position


def _run(
    units: list[Unit], engine: Engine, *, serial: bool = False
) -> Iterator[tuple[Unit, UnitResult]]:
    """Run the logical map over ``units``, yielding results as they finish."""
    return run_map(run_unit, units, engine, serial=serial)


def run_map(
    func: Callable[[U], R], units: Sequence[U], engine: Engine, *, serial: bool = False
) -> Iterator[tuple[U, R]]:
    """``func`` over ``units`` the ``engine``'s way (this process, local
    processes or a Dask cluster), yielding ``(unit, result)`` as they finish.

    ``func`` must be a module-level function and units and results picklable
    (they travel to workers). A unit's exception is raised here.
    """
    if not units:
        return
    if engine.scheduler is not None:
        yield from _run_dask(func, units, engine.scheduler, engine.scheduler_timeout)
        return
    workers = 1 if serial else min(engine.workers, len(units))
    if workers <= 1:
        for unit in units:
            yield unit, func(unit)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = _pool_context(engine)
    forked = context.get_start_method() == "fork"
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_forked_worker if forked else _worker
    ) as pool:
        try:
            # Ctrl-C held while the pool forks its workers: raised there, it
            # leaves workers the pool does not know of, waiting for work for ever
            with _interrupts_deferred():
                futures = {pool.submit(_unit_in_worker, func, unit): unit for unit in units}
            for future in as_completed(futures):
                yield futures[future], future.result()
        except BaseException:  # Ctrl-C, a unit's error, or the caller stopped early
            _stop_units(pool)
            raise


@contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Ctrl-C (SIGINT) held back while inside, then handled as it would have been.

    It is blocked, too (where POSIX signal masks exist): a process started
    inside inherits the mask, so a worker forked here, or by a fork server
    spawned here, is born deaf to Ctrl-C until :func:`_worker` sets its
    handler (multiprocessing's resource tracker is spawned the same way).
    Only the main thread sets signal handlers (and only there does Ctrl-C
    raise); a handler not set from Python is left as it is.
    """
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is None
    ):
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    masks = hasattr(signal, "pthread_sigmask")
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if masks else set()
    try:
        yield
    finally:
        if masks:  # a SIGINT pending meanwhile is received here
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, previous)
        if received:
            signal.raise_signal(signal.SIGINT)


def _stop_units(pool: Any) -> None:
    """Cancel the units not started, interrupt the running ones and wait for
    the workers to leave (at once: ``shutdown`` alone would run every unit
    queued, for minutes on a big trace).

    A worker interrupted ends its unit and fails the ones it gets after
    (:class:`_WorkerInterrupts`): a unit already in the pool's call queue
    cannot be cancelled. The workers are the pool's ``_processes``: there
    is no public way to name them before Python 3.14.
    """
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.exitcode is None:
            with contextlib.suppress(OSError):
                os.kill(process.pid, signal.SIGINT)
    pool.shutdown(wait=True, cancel_futures=True)


class _WorkerInterrupts:
    """A worker's SIGINT handler (Ctrl-C in the terminal reaches the workers
    too, and :func:`_stop_units` sends it).

    It raises KeyboardInterrupt only inside a unit, which then goes back to
    the parent as that unit's error, and fails every later unit. A worker
    never stops on it itself: outside a unit (waiting for one, sending a
    result) KeyboardInterrupt would print multiprocessing's traceback
    (``Process ForkProcess-1: Traceback ...``) or cut a result in the pipe.
    """

    def __init__(self) -> None:
        self.running = False
        self.stopped = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.stopped = True
        if self.running:
            raise KeyboardInterrupt

    def run(self, func: Callable[[U], R], unit: U) -> R:
        self.running = True
        try:
            if self.stopped:
                raise KeyboardInterrupt
            return func(unit)
        finally:
            self.running = False


_WORKER_INTERRUPTS = _WorkerInterrupts()


def _unit_in_worker(func: Callable[[U], R], unit: U) -> R:
    """``func(unit)`` in a pool's worker, stopped by Ctrl-C (:class:`_WorkerInterrupts`)."""
    return _WORKER_INTERRUPTS.run(func, unit)


def _worker() -> None:
    """A worker's start: Ctrl-C stops its units, never the worker
    (:class:`_WorkerInterrupts`); one that came while it started (blocked:
    :func:`_interrupts_deferred`) is received now."""
    signal.signal(signal.SIGINT, _WORKER_INTERRUPTS)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


#: Files in a trace folder from which the workers' fork server is started
#: before they are listed and stat'ed (below, listing takes milliseconds).
EARLY_START_FILES = 2048


#: Modules the workers' fork server imports before it forks a worker: each
#: worker then starts with them (:func:`prepare_workers`).
_PRELOAD: list[str] = [__name__]
#: The modules of each trace kind's map step, beyond this one (the logical's).
MAP_MODULES = {
    "logical": (),
    "timeline": ("actorprof.engine.timeline",),
    "physical": ("actorprof.engine.physical",),
    "papi": ("actorprof.engine.papi",),
}


def start_workers_for(engine: Engine, traces: Mapping[str, str | PathLike[str] | None]) -> None:
    """:func:`start_workers_early` for the traces of a run (by kind, None when
    absent): the fork server starts when one of them will be read by
    workers, and imports the map steps of all of them (a trace named for
    two kinds is looked at once)."""
    modules = [m for kind, path in traces.items() if path is not None for m in MAP_MODULES[kind]]
    for path in dict.fromkeys(path for path in traces.values() if path is not None):
        start_workers_early(engine, path, modules=modules)


def prepare_workers(modules: Sequence[str]) -> None:
    """Have the workers' fork server import ``modules`` too (the map steps a
    command will run), if it starts from now on: each worker is then forked
    ready, instead of importing them for its first unit (the PAPI map step
    imports pandas: 0.17 s in each worker, at each read). Idempotent."""
    _PRELOAD.extend(m for m in modules if m not in _PRELOAD)


def start_workers_early(
    engine: Engine, path: str | PathLike[str], *, modules: Sequence[str] = ()
) -> None:
    """Start the local workers' fork server now, when the trace at ``path`` will
    be read by workers: a folder of many files (``EARLY_START_FILES``) or,
    without the cache, of at least ``engine.parallel_min_bytes`` (or such a
    file). It imports ``modules`` (:func:`prepare_workers`) with the
    logical map step's.

    It imports the reading code (0.15 s) on another CPU while this process
    goes on: a command calls this before it imports pandas (0.25 s) and
    lists the files (65,536 files: 0.4 s), not when the map starts. Not for
    a smaller trace: a read too small for workers would pay the import for
    nothing, on the CPU a command's figures are drawn on (the 8-PE example:
    0.16 s of its 1.0 s); nor for the bytes of a trace the cache may hold
    (its warm run reads nothing). Idempotent.

    Workers that will be forked from this process (``engine.fork``, where
    safe: :func:`_pool_context`) need no server: the map steps are then
    imported here, now.
    """
    if engine.scheduler is not None or engine.workers <= 1:
        return
    prepare_workers(modules)
    if not _for_workers(Path(path), None if engine.cache else engine.parallel_min_bytes):
        return
    if _pool_context(engine).get_start_method() == "forkserver":
        from multiprocessing import forkserver

        with _interrupts_deferred():  # its workers are born deaf to Ctrl-C (see there)
            forkserver.ensure_running()


def _for_workers(path: Path, min_bytes: int | None) -> bool:
    """Whether the trace at ``path`` (a folder or a file) has many files or,
    unless ``min_bytes`` is None, at least ``min_bytes``."""
    try:
        if not path.is_dir():
            return min_bytes is not None and path.stat().st_size >= min_bytes
        names, _ = list_folder(path)  # kept: the read lists it once
    except OSError:  # not there, or not listable: the read says why
        return False
    if len(names) >= EARLY_START_FILES:
        return True
    if min_bytes is None:
        return False
    total = 0
    for name in names:
        with contextlib.suppress(OSError):
            total += os.stat(os.path.join(path, name)).st_size
        if total >= min_bytes:
            return True
    return False


#: Workers are forked from a process holding at most this much memory. Beyond,
#: the pages both sides then share cost more than a fork server: each page
#: either side writes while the workers live is copied, and this process's
#: collector walks (writes) every object it holds (the 65,536-PE report's
#: PAPI read, forked at 600 MB: 3.5 s more CPU than from the server).
FORK_MAX_RESIDENT = 200 * 1024 * 1024


def _resident_bytes() -> int:
    """This process's resident memory (Linux; 0 where unknown)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _fork_server_running() -> bool:
    """Whether this process has started the workers' fork server (its pid is
    kept by multiprocessing: ``forkserver._forkserver``)."""
    from multiprocessing import forkserver

    return getattr(forkserver._forkserver, "_forkserver_pid", None) is not None


def _forked_worker() -> None:
    """A worker forked from this process: what it inherits is never collected
    (a collection would walk it, and copy its pages), what it makes is (the
    listing paused the collector: ``_no_collection_pauses``); Ctrl-C as in
    every worker (:func:`_worker`)."""
    _worker()
    gc.freeze()
    gc.enable()


def _pool_context(engine: Engine) -> Any:
    """Workers started by a fork server (spawn where there is none), not by
    forking this process: a notebook kernel has threads, and forking a
    threaded process may deadlock (Python 3.12 warns). The server imports
    this module once; each worker is forked from it, ready to run. Forked
    from this process with ``engine.fork``, when that is safe (see
    :class:`Engine`): each worker then starts with what it needs at once."""
    import multiprocessing

    if (
        engine.fork
        and sys.platform.startswith("linux")
        and threading.active_count() == 1
        and not _fork_server_running()  # started: it is ready
        and _resident_bytes() <= FORK_MAX_RESIDENT
    ):
        for name in _PRELOAD:  # imported once, here, not by each worker
            with contextlib.suppress(ImportError):  # (as the fork server's preload)
                importlib.import_module(name)
        return multiprocessing.get_context("fork")
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(_PRELOAD))
        return context
    return multiprocessing.get_context("spawn")


def _run_dask(
    func: Callable[[U], R], units: Sequence[U], scheduler: Any, timeout: float | None
) -> Iterator[tuple[U, R]]:
    try:
        from distributed import Client, as_completed
    except ImportError as exc:
        raise UsageError(
            "--scheduler needs dask.distributed: pip install 'actorprof[dask]'"
        ) from exc
    own = isinstance(scheduler, str)
    client: Any
    if own:
        seconds = _scheduler_timeout(timeout)
        _probe_scheduler(scheduler, seconds)
        try:
            client = Client(scheduler, timeout=seconds, set_as_default=False)  # type: ignore[no-untyped-call,unused-ignore]
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc
    else:
        client = scheduler
    try:
        futures = client.map(func, units, pure=False)
        unit_of = {future.key: unit for future, unit in zip(futures, units, strict=True)}
        for future in as_completed(futures, loop=client.loop):  # type: ignore[no-untyped-call,unused-ignore]
            yield unit_of[future.key], future.result()
    finally:
        if own:
            client.close()


def _scheduler_timeout(timeout: float | None) -> float:
    """The connect time allowed: the argument, else the environment, else the default."""
    if timeout is None:
        text = os.environ.get("ACTORPROF_SCHEDULER_TIMEOUT", "").strip()
        if not text:
            return SCHEDULER_TIMEOUT_S
        try:
            timeout = float(text)
        except ValueError:
            timeout = -1.0
        if not 0 < timeout < float("inf"):
            raise UsageError(
                f"ACTORPROF_SCHEDULER_TIMEOUT={text!r}: give the seconds to wait for the "
                "Dask scheduler, a number > 0 (e.g. 30)"
            )
    if not 0 < timeout < float("inf"):
        raise ValueError(f"scheduler_timeout must be > 0 seconds, got {timeout}")
    return timeout


_SCHEDULER_FIX = (
    "Pass the scheduler's own address, e.g. tcp://node:8786 (the scheduler prints it "
    "as 'Scheduler at: ...'; port 8787 is its dashboard, a web page, not the scheduler)"
)


def _probe_scheduler(address: str, timeout: float) -> None:
    """Check, within ``timeout`` seconds, that a Dask scheduler answers at ``address``.

    ``distributed.Client`` itself may wait for ever on a port that accepts
    connections but speaks another protocol (the dashboard's HTTP port), and
    a client it failed to build blocks the interpreter's exit for a minute:
    so the address is parsed and asked for the scheduler's identity first.
    """
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm.addressing import parse_address
    from distributed.comm.core import connect

    try:
        parse_address(address)
    except ValueError as exc:
        raise UsageError(
            f"--scheduler {address!r} is not a Dask address ({exc}). {_SCHEDULER_FIX}."
        ) from exc

    async def identity() -> Any:
        comm = await connect(address, timeout=timeout)  # type: ignore[no-untyped-call,unused-ignore]
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        # the outer limit is longer: connect's own message says why it failed
        # in a thread of its own: the caller may have an event loop running (a notebook)
        with ThreadPoolExecutor(max_workers=1) as pool:
            reply = pool.submit(asyncio.run, asyncio.wait_for(identity(), timeout + 1.0)).result()
    except (TimeoutError, asyncio.TimeoutError) as exc:
        raise UsageError(
            f"cannot reach the Dask scheduler at {address}: something accepts connections "
            f"there but gave no Dask answer within {timeout:g} s. {_SCHEDULER_FIX}; "
            "a slow network: raise ACTORPROF_SCHEDULER_TIMEOUT."
        ) from exc
    except ValueError as exc:
        raise UsageError(
            f"--scheduler {address!r} is not a Dask address ({exc}). {_SCHEDULER_FIX}."
        ) from exc
    except (OSError, EOFError) as exc:
        raise UsageError(
            f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({exc}). "
            f"Is the scheduler running, and is the address right? {_SCHEDULER_FIX}."
        ) from exc
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise UsageError(
            f"{address} answered, but not as a Dask scheduler (got {str(reply)[:80]!r}). "
            f"{_SCHEDULER_FIX}."
        )

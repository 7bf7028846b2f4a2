"""Map/reduce of the logical trace's send times: runs of files -> timelines.

The timeline of a run is a sum: each file's (PE, time bin) counts, untimed
and outlier counts, and its extreme times (which name outliers by file and
line). A unit is a run of consecutive files; a worker reads them with the
plain reader's loop (:func:`actorprof.read.logical_file_frames`, small files
in batches) into a :class:`~actorprof.analyze.timeline.TimelineAccumulator`
and a :class:`~actorprof.analyze.timeline.TimeExtremes` of its own, with a
report of its own; the units are joined in file order. Bins, counts,
outliers, line accounting, warnings and the first error are those of the
one-process read, whatever the way (``tests/test_timeline_engine.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._memory import pad_worker_heap
from .._progress import ProgressSink
from ..analyze.timeline import TimeExtremes, TimelineAccumulator
from ..errors import TraceFormatError
from ..read import (
    FAST_BLOCK_BYTES,
    FileColumns,
    FileReport,
    ReadReport,
    TraceFile,
    stat_planned,
)
from .run import Engine, Finished, count_runs, run_map
from .timeline_map import read_times

__all__ = ["TimelineUnit", "UnitTimes", "reduce_times", "run_times_unit"]


@dataclass(frozen=True)
class TimelineUnit:
    """Consecutive files of one phase, and how to bin their times."""

    index: int
    files: tuple[TraceFile, ...]
    pe_limit: int | None
    reason: str
    base_s: float
    max_bins: int
    block_bytes: int = FAST_BLOCK_BYTES


@dataclass
class UnitTimes:
    """What a worker returns for a unit (picklable)."""

    acc: TimelineAccumulator
    extremes: TimeExtremes
    #: Each file's accounting, in file order (files read together as columns).
    files: list[FileReport | FileColumns] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The first error (message, file, line), raised in file order by the caller.
    error: tuple[str, str | None, int | None] | None = None


def run_times_unit(unit: TimelineUnit) -> UnitTimes:
    """The map step: read the unit's files and bin their send times."""
    pad_worker_heap()
    report = ReadReport(kind="logical", pe_limit=unit.pe_limit, pe_limit_reason=unit.reason)
    acc = TimelineAccumulator(base_s=unit.base_s, max_bins=unit.max_bins)
    extremes = TimeExtremes()
    result = UnitTimes(acc, extremes, [], report.warnings, report.notes)
    try:
        read_times(unit.files, report, acc, extremes, block_bytes=unit.block_bytes)
    except TraceFormatError as exc:
        result.error = (exc.message, exc.path, exc.line)
    result.files = list(report.file_accounts())
    return result


def reduce_times(
    files: list[TraceFile],
    report: ReadReport,
    *,
    base_s: float,
    max_bins: int,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
) -> tuple[TimelineAccumulator, TimeExtremes]:
    """Bin the send times of ``files`` (listed into ``report``) the ``engine``'s way.

    Fills ``report`` as :func:`actorprof.read.logical_file_frames` does and
    raises the same first error.
    """
    engine = engine or Engine()
    if len(report.sizes_planned) != len(files) and len(files) < engine.count_plan_files:
        stat_planned(files, report)  # else planned by count, as the logical read is
    by_count = len(report.sizes_planned) != len(files)
    units = _plan(files, report, base_s=base_s, max_bins=max_bins, engine=engine)
    serial = not by_count and report.bytes_planned < engine.parallel_min_bytes
    acc = TimelineAccumulator(base_s=base_s, max_bins=max_bins)
    extremes = TimeExtremes()
    done: dict[int, UnitTimes] = {}
    following = 0  # the next unit to join: units are joined in file order
    finished = Finished(progress)
    if progress is not None:
        progress.begin(report.bytes_planned, report.files_planned)
    for unit, result in run_map(run_times_unit, units, engine, serial=serial):
        done[unit.index] = result
        finished.add(result.files)
        while following in done:
            found = done.pop(following)
            following += 1
            report.add_files(found.files)
            report.warnings.extend(found.warnings)
            report.notes.extend(n for n in found.notes if n not in report.notes)
            if found.error is not None:
                message, path, line = found.error
                raise TraceFormatError(message, path=path, line=line)
            acc.merge(found.acc)
            extremes.merge(found.extremes)
    return acc, extremes


def _plan(
    files: list[TraceFile],
    report: ReadReport,
    *,
    base_s: float,
    max_bins: int,
    engine: Engine,
) -> list[TimelineUnit]:
    """Runs of consecutive files of about ``split_bytes`` (fewer bytes when
    that keeps every worker busy: 4 units per worker); of about as many files
    each, 4 per worker, when the files were not stat'ed (planned by count)."""
    workers = max(1, engine.workers if engine.scheduler is None else 4 * engine.workers)
    make = {
        "pe_limit": report.pe_limit,
        "reason": report.pe_limit_reason,
        "base_s": base_s,
        "max_bins": max_bins,
        "block_bytes": engine.block_bytes,
    }
    sizes = report.sizes_planned
    if len(sizes) != len(files):  # not stat'ed: by count
        return [
            TimelineUnit(k, tuple(files[start:stop]), **make)  # type: ignore[arg-type]
            for k, (start, stop) in enumerate(count_runs(len(files), workers))
        ]
    target = min(engine.split_bytes, max(engine.block_bytes, -(-sum(sizes) // (4 * workers))))
    units: list[TimelineUnit] = []
    run: list[TraceFile] = []
    run_bytes = 0
    for trace_file, size in zip(files, sizes, strict=True):
        run.append(trace_file)
        run_bytes += size
        if run_bytes >= target:
            units.append(TimelineUnit(len(units), tuple(run), **make))  # type: ignore[arg-type]
            run, run_bytes = [], 0
    if run:
        units.append(TimelineUnit(len(units), tuple(run), **make))  # type: ignore[arg-type]
    return units

"""Map/reduce of the PAPI trace: groups of files -> per-(PE, mailbox) sums.

The map step (:func:`reduce_papi_unit`) runs the PAPI format's one block
loop (:func:`actorprof.read.papi.papi_chunks`) over a group of files, in a
worker process, and returns only what the view needs: the unit's
:func:`~actorprof.analyze.breakdown.papi_regions` table (a row per (PE,
mailbox) seen), the largest sender PE, the float shadow of the integer
totals, and each file's line accounting and warnings. The reduce step
(:func:`reduce_papi`) takes the units in file order, whatever order they
finish in, so the ``ReadReport``, the first error and every number are
those of the plain reader (:func:`actorprof.iter_papi`).

The region end times the timeline's export places (:func:`reduce_papi_times`:
PROC lines binned per receiving PE, MAIN lines' times) are read the same
way, by :func:`papi_times_unit`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd

from .._memory import pad_worker_heap
from .._progress import ProgressSink
from ..analyze.breakdown import add_shadows, papi_regions_shadowed, sum_regions
from ..analyze.timeline import TimelineAccumulator
from ..errors import ActorProfError, TraceFormatError, UsageError
from ..read import (
    DEFAULT_BLOCK_BYTES,
    CsvSpec,
    FileColumns,
    FileReport,
    ReadReport,
    TraceFile,
    stat_planned,
)
from ..read.papi import papi_chunks, papi_plan
from ..schema import MAIN_MAILBOX
from .cache import TraceCache
from .papi_cache import load_papi, save_papi
from .run import Engine, Finished, count_runs, run_map

__all__ = [
    "PapiReduced",
    "PapiTimesRead",
    "PapiTimesResult",
    "PapiTimesUnit",
    "PapiUnit",
    "PapiUnitResult",
    "papi_times_unit",
    "reduce_papi",
    "reduce_papi_times",
    "reduce_papi_unit",
]


@dataclass(frozen=True)
class PapiUnit:
    """One map task: consecutive files of a PAPI read (``first``: index of the first).

    ``block_bytes`` is the plain reader's block (not ``Engine.block_bytes``,
    the logical tokenizer's): whole small files are parsed in batches of up
    to 4 MB, big files in blocks of this size, as :func:`actorprof.iter_papi`
    does.
    """

    first: int
    files: tuple[TraceFile, ...]
    spec: CsvSpec
    num_pes: int | None
    block_bytes: int = DEFAULT_BLOCK_BYTES


@dataclass
class PapiUnitResult:
    """What the map step of a unit returns (picklable, small)."""

    #: Each file's accounting, in file order: runs of files with nothing to
    #: report as columns, the others a report each.
    files: list[FileReport | FileColumns]
    warnings: list[str]
    regions: pd.DataFrame
    max_src_pe: int = -1
    #: Float shadow of the integer sums per PE (see ``check_papi_totals``).
    shadow: dict[int, float] = field(default_factory=dict)
    #: The error that stopped the unit: (message, path, line), path None for
    #: an error without a file (totals beyond 64 bits).
    error: tuple[str, str | None, int | None] | None = None


@dataclass
class PapiReduced:
    """A whole PAPI read: the region table and the largest sender PE."""

    regions: pd.DataFrame
    max_src_pe: int = -1
    counters: tuple[str, ...] = field(default_factory=tuple)


class _Tracked:
    """Passes chunks on, noting the largest ``src_pe`` (and telling
    ``progress`` how far ``report`` is, at most every 0.1 s)."""

    def __init__(self, report: ReadReport, progress: ProgressSink | None) -> None:
        self.report = report
        self.progress = progress
        self.max_src_pe = -1

    def track(self, chunks: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        last = 0.0
        for chunk in chunks:
            if len(chunk):
                self.max_src_pe = max(self.max_src_pe, int(chunk["src_pe"].max()))
            if self.progress is not None and time.monotonic() - last >= 0.1:
                self.progress.update(*self.report.done())
                last = time.monotonic()
            yield chunk


def _counters(spec: CsvSpec) -> tuple[str, ...]:
    """Counter columns of a PAPI spec: after ``num_sends``, before ``time_s``."""
    columns = spec.columns
    return tuple(columns[columns.index("num_sends") + 1 : -1])


def reduce_papi_unit(unit: PapiUnit, progress: ProgressSink | None = None) -> PapiUnitResult:
    """The map step (runs in a worker process, on a Dask worker, or here).

    A read error is returned, not raised, with the accounting of the files
    before it, so the reduce step raises it at its place in file order.
    ``progress`` (in this process only) is told the unit's bytes and files
    read as it goes.
    """
    pad_worker_heap()
    counters = _counters(unit.spec)
    report = ReadReport(kind="papi")
    tracked = _Tracked(report, progress)
    chunks = papi_chunks(
        unit.files, unit.spec, report, num_pes=unit.num_pes, block_bytes=unit.block_bytes
    )
    error: tuple[str, str | None, int | None] | None = None
    shadow: dict[int, float] = {}  # on an error, that of the lines before it
    try:
        regions, _ = papi_regions_shadowed(tracked.track(chunks), counters=counters, shadow=shadow)
    except TraceFormatError as exc:
        regions, error = sum_regions([], counters=counters), (exc.message, exc.path, exc.line)
    except ActorProfError as exc:
        regions, error = sum_regions([], counters=counters), (str(exc), None, None)
    return PapiUnitResult(
        files=list(report.file_accounts()),
        warnings=report.warnings,
        regions=regions,
        max_src_pe=tracked.max_src_pe,
        shadow=shadow,
        error=error,
    )


def reduce_papi(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    counters: Sequence[str] | None = None,
    report: ReadReport,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
) -> PapiReduced:
    """Read a PAPI trace with ``engine`` into its region table.

    Fills ``report`` exactly as :func:`actorprof.iter_papi` does (files,
    line accounting, notes and warnings, in file order) and raises the same
    errors, the first in file order.
    """
    engine = engine or Engine()
    files, spec, by_count = _planned(
        path, phase, num_pes, counters, report, engine, cached=engine.cache
    )
    names = _counters(spec)
    # the columns the reduction uses; the others are checked, not converted
    spec = replace(spec, keep=("src_pe", "dst_pe", "mailbox", "num_sends", *names))
    if progress is not None:
        progress.begin(report.bytes_planned, report.files_planned)
    cache = TraceCache(engine.cache_dir, kind="papi") if engine.cache else None
    # what decides which lines are read or skipped: part of the key
    options = {
        "columns": list(spec.columns),
        "pe_limit": num_pes,
        "maxima": [list(bound) for bound in spec.maxima],  # PE ids far beyond the files
    }
    if cache is not None:
        hit = load_papi(
            cache, Path(path), files, phase=phase, options=options, counters=names, report=report
        )
        if hit is not None:
            if progress is not None:
                progress.update(report.bytes_planned, report.files_planned)
            return PapiReduced(hit[0], hit[1], names)
    first_warning = len(report.warnings)
    units = _units(files, spec, num_pes, report, engine, by_count=by_count)
    results = _run_units(reduce_papi_unit, units, engine, progress)
    shadow: dict[int, float] = {}
    max_src = -1
    tables = []
    for unit in units:
        result = results[unit.first]
        report.add_files(result.files)
        report.warnings.extend(result.warnings)
        # the lines before a unit's error first: a PE's totals may pass 64 bits
        # there with the units before (the unit's own error says less)
        add_shadows(shadow, result.shadow)
        if result.error is not None:
            message, where, line = result.error
            if where is None:
                raise ActorProfError(message)
            raise TraceFormatError(message, path=where, line=line)
        max_src = max(max_src, result.max_src_pe)
        tables.append(result.regions)
    regions = sum_regions(tables, counters=names)
    if cache is not None:
        save_papi(
            cache,
            Path(path),
            files,
            phase=phase,
            options=options,
            counters=names,
            regions=regions,
            max_src_pe=max_src,
            reports=[entry for unit in units for entry in results[unit.first].files],
            warnings=report.warnings[first_warning:],
            report=report,
        )
    return PapiReduced(regions, max_src, names)


def reduce_papi_times(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    report: ReadReport,
    base_s: float = 1e-3,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
) -> PapiTimesRead:
    """Read a PAPI trace's region end times with ``engine``: PROC lines binned
    per receiving PE, MAIN lines' PEs and times in file order.

    Fills ``report`` exactly as :func:`actorprof.iter_papi` does (files,
    line accounting, notes and warnings, in file order) and raises the same
    errors, the first in file order. Only the columns the times need are
    converted (the others are checked, as in every read).
    """
    engine = engine or Engine()
    files, spec, by_count = _planned(path, phase, num_pes, None, report, engine, cached=False)
    spec = replace(spec, keep=("src_pe", "dst_pe", "mailbox", "time_s"))
    if progress is not None:
        progress.begin(report.bytes_planned, report.files_planned)
    units = [
        PapiTimesUnit(unit.first, unit.files, unit.spec, unit.num_pes, base_s=base_s)
        for unit in _units(files, spec, num_pes, report, engine, by_count=by_count)
    ]
    results = _run_units(papi_times_unit, units, engine, progress)
    out = PapiTimesRead(TimelineAccumulator(base_s=base_s), TimelineAccumulator(base_s=base_s))
    pes, times = [out.main_pes], [out.main_times]
    for unit in units:
        result = results[unit.first]
        report.add_files(result.files)
        report.warnings.extend(result.warnings)
        if result.error is not None:
            message, where, line = result.error
            if where is None:
                raise ActorProfError(message)
            raise TraceFormatError(message, path=where, line=line)
        out.handled.merge(result.handled)
        out.mains.merge(result.mains)
        pes.append(result.main_pes)
        times.append(result.main_times)
    out.main_pes, out.main_times = np.concatenate(pes), np.concatenate(times)
    return out


@dataclass(frozen=True)
class PapiTimesUnit(PapiUnit):
    """A map task of :func:`reduce_papi_times`: its files, and the bins' base width."""

    base_s: float = 1e-3


@dataclass
class PapiTimesRead:
    """The region end times of a PAPI trace (or of a unit's files)."""

    #: PROC lines: handled messages per receiving PE (``dst_pe``) per time bin.
    handled: TimelineAccumulator
    #: MAIN lines, binned as the PROC lines are (their outliers and window).
    mains: TimelineAccumulator
    #: Each MAIN line's PE and time, in file order.
    main_pes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    main_times: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))


@dataclass
class PapiTimesResult(PapiTimesRead):
    """What :func:`papi_times_unit` returns (picklable)."""

    files: list[FileReport | FileColumns] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: tuple[str, str | None, int | None] | None = None


def papi_times_unit(unit: PapiTimesUnit, progress: ProgressSink | None = None) -> PapiTimesResult:
    """The map step of :func:`reduce_papi_times` (in a worker process, on a
    Dask worker, or here); a read error is returned, not raised."""
    pad_worker_heap()
    report = ReadReport(kind="papi")
    result = PapiTimesResult(
        TimelineAccumulator(base_s=unit.base_s), TimelineAccumulator(base_s=unit.base_s)
    )
    chunks = papi_chunks(
        unit.files, unit.spec, report, num_pes=unit.num_pes, block_bytes=unit.block_bytes
    )
    pes, times = [result.main_pes], [result.main_times]
    try:
        for chunk in _Tracked(report, progress).track(chunks):
            main = chunk["mailbox"].to_numpy() == MAIN_MAILBOX
            pes.append(chunk["dst_pe"].to_numpy()[main].astype(np.int64))
            times.append(chunk["time_s"].to_numpy(dtype=np.float64)[main])
            result.mains.add(chunk.loc[main, ["dst_pe", "time_s"]], pe_column="dst_pe")
            result.handled.add(chunk.loc[~main, ["dst_pe", "time_s"]], pe_column="dst_pe")
    except TraceFormatError as exc:
        result.error = (exc.message, exc.path, exc.line)
    except ActorProfError as exc:
        result.error = (str(exc), None, None)
    result.main_pes, result.main_times = np.concatenate(pes), np.concatenate(times)
    result.files = list(report.file_accounts())
    result.warnings = report.warnings
    return result


_Unit = TypeVar("_Unit", bound=PapiUnit)
_Result = TypeVar("_Result", PapiUnitResult, PapiTimesResult)


def _planned(
    path: str | PathLike[str],
    phase: str | None,
    num_pes: int | None,
    counters: Sequence[str] | None,
    report: ReadReport,
    engine: Engine,
    *,
    cached: bool,
) -> tuple[list[TraceFile], CsvSpec, bool]:
    """The files and line shape of a read (:func:`papi_plan`), and whether
    it is planned by count: from :attr:`Engine.count_plan_files` files on,
    unless ``cached`` (the cache keeps the stats), as the logical read is,
    no file stat'ed first; else each file's size is planned."""
    if engine.split_bytes < 1 or engine.block_bytes < 1:
        raise UsageError("split_bytes and block_bytes must be >= 1")
    files, spec = papi_plan(
        path, phase=phase, num_pes=num_pes, counters=counters, report=report, sizes=False
    )
    by_count = not cached and len(files) >= engine.count_plan_files
    if not by_count:
        stat_planned(files, report)
    return files, spec, by_count


def _units(
    files: list[TraceFile],
    spec: CsvSpec,
    num_pes: int | None,
    report: ReadReport,
    engine: Engine,
    *,
    by_count: bool,
) -> list[PapiUnit]:
    """The map tasks of a read: one, to read here, when it is small or the
    engine has one worker (and no cluster); else runs of files."""
    serial = not by_count and report.bytes_planned < engine.parallel_min_bytes
    workers = 1 if serial else engine.workers
    if workers == 1 and engine.scheduler is None:
        return [PapiUnit(0, tuple(files), spec, num_pes)]
    if by_count:
        return _plan_by_count(files, spec, num_pes, workers)
    return _plan(files, report.sizes_planned, spec, num_pes, engine, workers)


def _run_units(
    step: Callable[..., _Result],
    units: list[_Unit],
    engine: Engine,
    progress: ProgressSink | None,
) -> dict[int, _Result]:
    """Each unit's result by its first file: one unit without a cluster is
    read here (progress as it goes), else the engine maps them."""
    if len(units) == 1 and engine.scheduler is None:
        return {units[0].first: step(units[0], progress)}
    results: dict[int, _Result] = {}
    finished = Finished(progress)
    for unit, result in run_map(step, units, engine):
        results[unit.first] = result
        finished.add(result.files)
    return results


def _plan(
    files: list[TraceFile],
    sizes: list[int],
    spec: CsvSpec,
    num_pes: int | None,
    engine: Engine,
    workers: int,
) -> list[PapiUnit]:
    """Consecutive files in units of about ``split_bytes``, smaller when that
    keeps every worker busy (4 units per worker)."""
    target = min(engine.split_bytes, max(1 << 20, -(-sum(sizes) // (4 * workers))))
    units: list[PapiUnit] = []
    start = 0
    size = 0
    for i, file_size in enumerate(sizes):
        size += file_size
        if size >= target or i == len(files) - 1:
            units.append(PapiUnit(start, tuple(files[start : i + 1]), spec, num_pes))
            start, size = i + 1, 0
    return units


def _plan_by_count(
    files: list[TraceFile], spec: CsvSpec, num_pes: int | None, workers: int
) -> list[PapiUnit]:
    """Consecutive files in 4 units per worker of about as many files each,
    their sizes unknown (not stat'ed: :attr:`Engine.count_plan_files`)."""
    return [
        PapiUnit(start, tuple(files[start:stop]), spec, num_pes)
        for start, stop in count_runs(len(files), workers)
    ]

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

import os
from collections.abc import Iterator
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from .._progress import ProgressSink
from ..analyze.matrix import CommAccumulator
from ..errors import TraceFormatError, UsageError
from ..read import FAST_BLOCK_BYTES, ReadReport, TraceFile, logical_files, require_trace_lines
from ..schema import LOGICAL_COLUMNS
from .map import FileResult, RangeResult, merge_ranges, reduce_range

__all__ = ["DEFAULT_SPLIT_BYTES", "Engine", "reduce_logical"]

#: Files larger than this are cut into ranges of about this size.
DEFAULT_SPLIT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Unit:
    """One map task: lines in bytes ``[start, stop)`` of one file."""

    index: int
    path: str
    start: int
    stop: int | None
    pe: int | None
    pe_limit: int | None
    reason: str
    block_bytes: int = FAST_BLOCK_BYTES


def run_unit(unit: Unit) -> RangeResult:
    """The map step (runs in a worker process or on a Dask worker)."""
    return reduce_range(
        unit.path,
        unit.start,
        unit.stop,
        file_pe=unit.pe,
        pe_limit=unit.pe_limit,
        reason=unit.reason,
        block_bytes=unit.block_bytes,
    )


@dataclass
class Engine:
    """How to run the map: ``jobs`` processes or a Dask ``scheduler``, and the cache.

    Parameters
    ----------
    jobs
        Worker processes; None or 0: all cores (``os.cpu_count()``).
    cache
        Use the cache of reduced files.
    cache_dir
        Cache folder; None: ``$XDG_CACHE_HOME/actorprof`` or ``~/.cache/actorprof``.
    scheduler
        Address of a ``dask.distributed`` scheduler (or a ``Client``); the map
        then runs on that cluster, which must see the trace files.
    split_bytes
        Files larger than this are read as several ranges.
    block_bytes
        Bytes parsed at once by a worker (memory per worker ~ a few times this).
    parallel_min_bytes
        Below this much to read, local processes are not worth starting: the
        map runs in this process.
    """

    jobs: int | None = 1
    cache: bool = False
    cache_dir: str | PathLike[str] | None = None
    scheduler: Any = None
    split_bytes: int = DEFAULT_SPLIT_BYTES
    block_bytes: int = FAST_BLOCK_BYTES
    parallel_min_bytes: int = 8 * 1024 * 1024

    @property
    def workers(self) -> int:
        """Worker processes the map uses."""
        if self.jobs:
            return int(self.jobs)
        return os.cpu_count() or 1


def reduce_logical(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    report: ReadReport,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
) -> CommAccumulator:
    """Read a logical trace with ``engine`` and return the summed accumulator.

    Fills ``report`` exactly as :func:`actorprof.iter_logical` does (files,
    line accounting, warnings) and raises the same errors.
    """
    engine = engine or Engine()
    if engine.split_bytes < 1 or engine.block_bytes < 1:
        raise UsageError("split_bytes and block_bytes must be >= 1")
    report.kind = "logical"
    files = logical_files(path, phase=phase, num_pes=num_pes, report=report)
    report.num_pes = num_pes
    if progress is not None:
        progress.begin(report.bytes_planned, report.files_planned)
    results = _results(files, report, engine, progress)
    acc = CommAccumulator(num_pes)
    for trace_file, result in zip(files, results, strict=True):
        if result.error is not None:
            line, message = result.error
            raise TraceFormatError(message, path=trace_file.path, line=line)
        report.files.append(result.report)
        require_trace_lines(result.report, "logical trace")
        acc.add_partial(result.partial)
        if result.mismatched:
            report.warn(
                f"{trace_file.path}: {result.mismatched} line(s) have src_pe != {trace_file.pe} "
                "(the PE in the file name); they are counted under the src_pe they carry"
            )
    return acc


def _results(
    files: list[TraceFile],
    report: ReadReport,
    engine: Engine,
    progress: ProgressSink | None,
) -> list[FileResult]:
    from .cache import TraceCache

    cache = TraceCache(engine.cache_dir) if engine.cache else None
    # the PE-id limit decides which lines are skipped: part of the key
    options = {"columns": list(LOGICAL_COLUMNS), "reader": 2, "pe_limit": report.pe_limit}
    found: dict[int, FileResult] = {}
    keys: dict[int, str] = {}
    done_bytes = done_files = 0
    for i, f in enumerate(files):
        key = cache.key(f.path, options) if cache is not None else None
        if cache is None or key is None:
            continue
        keys[i] = key
        hit = cache.load(key, f.path, pe=f.pe, phase=f.phase)
        if hit is not None:
            found[i] = hit
            done_bytes += hit.report.bytes_read
            done_files += 1
    units = [u for i, f in enumerate(files) if i not in found for u in _units(i, f, report, engine)]
    parts: dict[int, list[RangeResult]] = {}
    left = {i: 0 for i in range(len(files)) if i not in found}
    for u in units:
        left[u.index] += 1
    if progress is not None:
        progress.update(done_bytes, done_files)
    pending = sum(_size(files[i].path) for i in left)
    for unit, result in _run(units, engine, serial=pending < engine.parallel_min_bytes):
        parts.setdefault(unit.index, []).append(result)
        done_bytes += result.report.bytes_read
        left[unit.index] -= 1
        if not left[unit.index]:
            done_files += 1
        if progress is not None:
            progress.update(done_bytes, done_files)
    for i, ranges in parts.items():
        ranges.sort(key=lambda r: r.start)
        f = files[i]
        merged = merge_ranges(ranges, pe=f.pe, phase=f.phase)
        found[i] = merged
        if cache is not None and i in keys and merged.error is None:
            cache.save(keys[i], merged)
    return [found[i] for i in range(len(files))]


def _units(index: int, f: TraceFile, report: ReadReport, engine: Engine) -> list[Unit]:
    """One unit per range of about ``split_bytes``, cut after a line end."""
    path = str(f.path)
    try:
        size = f.path.stat().st_size
    except OSError:
        size = 0
    cuts = [0]
    if size > engine.split_bytes:
        try:
            with open(path, "rb") as handle:
                target = engine.split_bytes
                while target < size:
                    cut = _next_line_start(handle, target)
                    if cut >= size:
                        break
                    if cut > cuts[-1]:
                        cuts.append(cut)
                    target = max(cut, target) + engine.split_bytes
        except OSError:
            cuts = [0]  # reported by the map step with the reader's message
    stops: list[int | None] = [*cuts[1:], None]
    return [
        Unit(index, path, a, b, f.pe, report.pe_limit, report.pe_limit_reason, engine.block_bytes)
        for a, b in zip(cuts, stops, strict=True)
    ]


def _next_line_start(handle: Any, offset: int) -> int:
    handle.seek(offset)
    position = offset
    while chunk := handle.read(65536):
        found: int = chunk.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(chunk)
    return position


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _run(
    units: list[Unit], engine: Engine, *, serial: bool = False
) -> Iterator[tuple[Unit, RangeResult]]:
    """Run the map over ``units``, yielding results as they finish."""
    if not units:
        return
    if engine.scheduler is not None:
        yield from _run_dask(units, engine.scheduler)
        return
    workers = 1 if serial else min(engine.workers, len(units))
    if workers <= 1:
        for unit in units:
            yield unit, run_unit(unit)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(run_unit, unit): unit for unit in units}
        for future in as_completed(futures):
            yield futures[future], future.result()


def _run_dask(units: list[Unit], scheduler: Any) -> Iterator[tuple[Unit, RangeResult]]:
    try:
        from distributed import Client, as_completed
    except ImportError as exc:
        raise UsageError(
            "--scheduler needs dask.distributed: pip install 'actorprof[dask]'"
        ) from exc
    own = isinstance(scheduler, str)
    try:
        client = Client(scheduler, set_as_default=False) if own else scheduler  # type: ignore[no-untyped-call,unused-ignore]
    except OSError as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc
    try:
        futures = client.map(run_unit, units, pure=False)
        unit_of = {future.key: unit for future, unit in zip(futures, units, strict=True)}
        for future in as_completed(futures, loop=client.loop):  # type: ignore[no-untyped-call,unused-ignore]
            yield unit_of[future.key], future.result()
    finally:
        if own:
            client.close()

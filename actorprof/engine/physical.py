"""Map/reduce of the physical trace: byte ranges of ``physical.txt`` -> sparse sums.

``physical.txt`` is one file, so the work units are byte ranges of it cut
at line ends (:func:`actorprof.engine.run._cuts`). The map step
(:func:`reduce_physical_range`) runs the physical format's one block loop
(:class:`actorprof.read.PhysicalScan`) over a range and reduces each block
to its links (:class:`actorprof.analyze.physical_partial.PhysicalPartial`),
and to its buffers per link and size when the aggregation model wants them.
A range does not know its first line number: it counts its lines, and the
merge, in file order, shifts its line numbers (skipped-line examples, the
first program output, an error's line) by the lines of the ranges before.
So every way (this process, local processes, Dask, any range size) gives
the numbers, line accounting and errors of the plain reader
(:func:`actorprof.iter_physical`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from os import PathLike
from pathlib import Path

import numpy as np

from .._memory import pad_worker_heap
from .._progress import ProgressSink
from ..analyze.physical_partial import PhysicalPartial
from ..errors import TraceFormatError, UsageError
from ..read import (
    FileReport,
    PhysicalBlock,
    PhysicalScan,
    ReadReport,
    StrayPes,
    begin_physical_read,
    file_stat,
    no_trace_error,
    physical_file,
    stray_pes,
)
from .cache import TraceCache
from .physical_cache import load_physical, save_physical
from .run import Engine, _cuts, run_map

__all__ = ["PhysicalRange", "PhysicalUnit", "reduce_physical", "reduce_physical_range"]

#: Ranges per worker: small enough that the workers finish together.
_RANGES_PER_WORKER = 4


@dataclass(frozen=True)
class PhysicalUnit:
    """One map task: the lines in bytes ``[start, stop)`` (None: to the end)."""

    path: str
    start: int
    stop: int | None
    num_pes: int | None
    sized: bool
    block_bytes: int
    #: PE ids far beyond the others: their lines are skipped.
    stray: StrayPes | None = None


@dataclass
class PhysicalRange:
    """What the map step of one range returns (picklable; line numbers
    relative to the range's first line)."""

    start: int
    partial: PhysicalPartial
    report: FileReport
    first_output: tuple[int, str] | None = None
    #: (line relative to the range or None, message) of the error that stopped it.
    error: tuple[int | None, str] | None = None
    #: (line relative to the range, column, id) of its first line naming a stray PE id.
    first_beyond: tuple[int, str, int] | None = None


def reduce_physical_range(unit: PhysicalUnit) -> PhysicalRange:
    """The map step (runs in this process, a worker process or on a Dask worker).

    An error is returned, not raised, so that the merge can make its line
    number absolute.
    """
    pad_worker_heap()
    report = FileReport(unit.path)
    scan = PhysicalScan(Path(unit.path), report, unit.num_pes, stray=unit.stray)
    sums = _Sums(unit.sized)
    error = None
    try:
        sums.add_blocks(
            scan.blocks(unit.block_bytes, start=unit.start, stop=unit.stop, counted=True)
        )
    except TraceFormatError as exc:
        error = (exc.line, exc.message)
    return PhysicalRange(
        unit.start, sums.result(), report, scan.first_output, error, scan.first_beyond
    )


class _Sums:
    """Partials summed as they come, in bounded memory: the pending ones are
    joined once they hold more rows than the sum so far (at 65,536 PEs nearly
    every line is a link of its own, so the sum is as big as what is pending).

    Sized partials are held by their rows per (link, size) only: a join makes
    the per-link sums from those, so the parts' and the running sum's own
    (as many rows again) are let go until the last join makes the result's.
    """

    def __init__(self, sized: bool) -> None:
        self.total = PhysicalPartial(sized=sized)
        self.pending: list[PhysicalPartial] = []
        self.rows = 0

    def add_blocks(self, blocks: Iterable[PhysicalBlock]) -> None:
        """Add each block's partial (a counted block's rows each as many lines
        as its count)."""
        for block in blocks:
            self.add(
                PhysicalPartial.of_block(
                    block.codes,
                    block.buffer_bytes,
                    block.src_pe,
                    block.dst_pe,
                    sized=self.total.sized,
                    counts=block.counts,
                )
            )

    def add(self, part: PhysicalPartial) -> None:
        part = _sized_only(part)
        self.pending.append(part)
        self.rows += _rows(part)
        if self.rows > max(_rows(self.total), 1 << 20):
            self._join()

    def _join(self) -> None:
        if self.pending:
            total, self.total = self.total, PhysicalPartial(sized=self.total.sized)
            parts, self.pending, self.rows = [_sized_only(total), *self.pending], [], 0
            del total  # its per-link sums let go before the join
            # each part let go once read; the per-link sums made once, at the end
            self.total = PhysicalPartial.join(parts, per_link=False, consume=True)

    def result(self) -> PhysicalPartial:
        self._join()
        return self.total.with_link_sums()


def _rows(part: PhysicalPartial) -> int:
    """The rows a join of ``part`` reads: per (link, size) when sized, else per link."""
    return len(part.sized_links) if part.sized else len(part.links)


def _sized_only(part: PhysicalPartial) -> PhysicalPartial:
    """A sized ``part`` without its per-link sums (:meth:`PhysicalPartial.join`
    makes a join's from the rows per size); any other as it is."""
    if not part.sized:
        return part
    return replace(
        part,
        links=np.zeros(0, dtype=np.uint64),
        calls=np.zeros(0, dtype=np.int64),
        nbytes=np.zeros(0, dtype=np.int64),
    )


def reduce_physical(
    path: str | PathLike[str],
    *,
    num_pes: int | None = None,
    report: ReadReport,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
    sized: bool = False,
) -> PhysicalPartial:
    """Read a physical trace with ``engine``: its sums (per size too when ``sized``).

    Fills ``report`` as :func:`actorprof.iter_physical` does (the file's line
    accounting, with exact line numbers, and the warning about PE ids far
    beyond the others) and raises the same errors. Those ids are known once
    the whole file is summed (from its links: no second look at its lines
    otherwise); when there are some, the file is read again with their
    lines skipped, so that they are counted, and named, as any skipped line.

    Raises
    ------
    UsageError
        ``num_pes < 1``, or a bad engine setting.
    NoTraceError
        A folder without ``physical.txt``.
    TraceFormatError
        The file cannot be read, has no trace line, or names a PE at or
        beyond ``num_pes`` (file and line named).
    """
    engine = engine or Engine()
    if engine.split_bytes < 1 or engine.block_bytes < 1:
        raise UsageError("split_bytes and block_bytes must be >= 1")
    begin_physical_read(report, num_pes)
    file = physical_file(path)
    size = file.stat().st_size
    report.bytes_planned, report.files_planned = size, 1
    if progress is not None:
        progress.begin(size, 1)
    cache = TraceCache(engine.cache_dir, kind="physical") if engine.cache else None
    if cache is not None:
        hit = load_physical(cache, file, num_pes=num_pes, sized=sized, report=report)
        if hit is not None:
            partial, file_report, warnings = hit
            report.files.append(file_report)
            for warning in warnings:
                report.warn(warning)
            if progress is not None:
                progress.update(file_report.bytes_read, 1)
            return partial
    stat = file_stat(file)  # before the read: a file written meanwhile is not cached
    partial, _ = _read(
        file, size, engine, num_pes=num_pes, sized=sized, report=report, progress=progress
    )
    stray = None
    if num_pes is None:
        ids = partial.pe_ids()
        stray = stray_pes(ids, lambda: partial.pe_mentions(ids))
    warnings = []
    if stray is not None:  # known at the end only: read again, their lines skipped
        del report.files[-1], partial
        if progress is not None:
            progress.begin(size, 1)
        partial, first = _read(
            file,
            size,
            engine,
            num_pes=num_pes,
            sized=sized,
            report=report,
            progress=progress,
            stray=stray,
        )
        if first is not None:
            warnings.append(stray.warning(str(file), first, report.files[-1]))
    for warning in warnings:
        report.warn(warning)
    if cache is not None:
        save_physical(
            cache,
            file,
            partial,
            report.files[-1],
            warnings,
            num_pes=num_pes,
            stat=stat,
            report=report,
        )
    return partial


def _read(
    file: Path,
    size: int,
    engine: Engine,
    *,
    num_pes: int | None,
    sized: bool,
    report: ReadReport,
    progress: ProgressSink | None,
    stray: StrayPes | None = None,
) -> tuple[PhysicalPartial, tuple[int, str, int] | None]:
    """One read of ``file`` (its report appended to ``report``): its sums, and
    the (line, column, id) of its first line naming a ``stray`` PE id."""
    units = _plan(file, size, engine, num_pes=num_pes, sized=sized, stray=stray)
    serial = _serial(engine, size)
    found: dict[int, PhysicalRange] = {}
    done = 0
    for unit, result in run_map(reduce_physical_range, units, engine, serial=serial):
        result.partial = _sized_only(result.partial)  # not held twice until the merge
        found[unit.start] = result
        done += result.report.bytes_read
        if progress is not None:
            progress.update(done, int(len(found) == len(units)))
    return _merge(file, [found[unit.start] for unit in units], report)


def _serial(engine: Engine, size: int) -> bool:
    """Whether the map runs in this process (one worker, or too little to read)."""
    return engine.scheduler is None and (engine.workers <= 1 or size < engine.parallel_min_bytes)


def _plan(
    file: Path,
    size: int,
    engine: Engine,
    *,
    num_pes: int | None,
    sized: bool,
    stray: StrayPes | None,
) -> list[PhysicalUnit]:
    """Ranges of ``split_bytes``; in parallel, a few per worker, so that they finish together."""
    split = engine.split_bytes
    if not _serial(engine, size):
        workers = engine.workers if engine.scheduler is None else _RANGES_PER_WORKER
        split = min(split, max(engine.block_bytes, -(-size // (_RANGES_PER_WORKER * workers))))
    cuts = _cuts(file, size, split) if size > split else [0]
    stops: list[int | None] = [*cuts[1:], None]
    return [
        PhysicalUnit(str(file), a, b, num_pes, sized, engine.block_bytes, stray)
        for a, b in zip(cuts, stops, strict=True)
    ]


def _merge(
    file: Path, ranges: list[PhysicalRange], report: ReadReport
) -> tuple[PhysicalPartial, tuple[int, str, int] | None]:
    """The ranges, in file order, as the whole file: absolute line numbers,
    one report; and the first line naming a stray PE id."""
    file_report = FileReport(str(file)) if len(ranges) > 1 else ranges[0].report
    report.files.append(file_report)
    first_output = None
    first_beyond = None
    offset = 0
    for part in ranges:
        if part.error is not None:
            line, message = part.error
            raise TraceFormatError(message, path=file, line=None if line is None else line + offset)
        if len(ranges) > 1:
            file_report.absorb(part.report, offset)
        if first_output is None and part.first_output is not None:
            line, text = part.first_output
            first_output = (line + offset, text)
        if first_beyond is None and part.first_beyond is not None:
            line, column, value = part.first_beyond
            first_beyond = (line + offset, column, value)
        offset += part.report.lines_total
    if file_report.lines_read == 0:
        raise no_trace_error(file, file_report, first_output)
    sums = _Sums(ranges[0].partial.sized)
    for part in ranges:  # each range's sums let go once added
        sums.add(part.partial)
        part.partial = PhysicalPartial(sized=part.partial.sized)
    return sums.result(), first_beyond

"""Small files read in batches give what the file-by-file read gives, exactly.

A run of many PEs writes one small logical file per PE; the timeline reads
them many at a time (``iter_logical(batch=True)``). These tests build a
folder of small files, damaged in the ways real traces are, and compare the
batched route with the file-by-file one: rows, file:line of every row, line
accounting and warnings, the timeline, its outliers (named by file:line),
the summary and the Perfetto export.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from actorprof.analyze.timeline import TimeExtremes, TimelineAccumulator
from actorprof.errors import TraceFormatError
from actorprof.kinds.timeline import (
    PhaseSpan,
    TimelineView,
    _outlier_warning,
    perfetto_trace,
    timeline_view,
)
from actorprof.read import ReadReport, iter_logical

NUM_PES = 240
T0 = 1_721_412_345_000_000  # microseconds
#: The outlier lines of :func:`damaged_run` (file, line), as the warning names them.
OUTLIERS = [("PE58_send.csv", 18), ("PE77_send.csv", 2)]


def _line(src: int, dst: int, micros: int | None, nbytes: int = 8) -> str:
    head = f"{src // 16}, {src}, {dst // 16}, {dst}, {nbytes}"
    return head if micros is None else f"{head}, {micros // 1_000_000}.{micros % 1_000_000:06d}"


def damaged_run(folder: Path) -> Path:
    """PE files of 1 to 40 lines; a few of them damaged or odd."""
    rng = np.random.default_rng(11)
    folder.mkdir()
    for pe in range(NUM_PES):
        n = int(rng.integers(1, 40))
        times = T0 + np.sort(rng.integers(0, 3_000_000, n))
        dsts = rng.integers(0, NUM_PES, n)
        lines = [_line(pe, int(d), int(t)) for d, t in zip(dsts, times, strict=True)]
        if pe == 17:  # a noise line in the middle
            lines.insert(n // 2, "rank 17: progress 50%")
        if pe == 31:  # a blank line
            lines.insert(1, "")
        if pe == 45:  # a line whose src_pe is not the file's PE (canonical text)
            lines[0] = _line(46, 3, T0 + 5)
        if pe == 58:  # a flipped digit of the epoch: an outlier, canonical text
            lines[n // 2] = _line(pe, 1, T0 + 200_000_000_000_000)
        if pe == 77:  # a zero time: an outlier with other digits (not canonical)
            lines.append(_line(pe, 2, 0))
        if pe == 90:  # a PE id far beyond the PE files
            lines.insert(0, _line(pe, 99_999, T0 + 7))
        if pe == 101:  # every line untimed (5 fields)
            lines = [_line(pe, int(d), None) for d in dsts]
        if pe == 120:  # NUL padding: a NUL line, then a cut NUL tail
            lines.append("\x00" * 40)
        text = "\n".join(lines) + "\n"
        if pe == 120:
            text += "\x00" * 25
        if pe == 133:  # a cut last line (the job was killed)
            text = text + _line(pe, 5, T0 + 9)[:12]
        if pe == 150:  # a PE that sent nothing
            text = ""
        if pe == 160:  # mixed timed and untimed lines
            text = _line(pe, 1, None) + "\n" + text
        (folder / f"PE{pe}_send.csv").write_bytes(text.encode("latin-1"))
    return folder


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return damaged_run(tmp_path / "run")


def _read(path: Path, **options: Any) -> tuple[pd.DataFrame, ReadReport]:
    """All rows, with a ``path`` column (the row's file), and the report."""
    report = ReadReport(kind="logical")
    frames = []
    for chunk in iter_logical(path, report=report, line_numbers=True, **options):
        if "file" in chunk:
            where = [report.files[i].path for i in chunk["file"]]
            chunk = chunk.drop(columns="file")
        else:
            where = [report.files[-1].path] * len(chunk)
        frames.append(chunk.assign(path=where))
    return pd.concat(frames, ignore_index=True), report


@pytest.mark.parametrize("block_bytes", [512 * 1024, 4096, 300])
def test_batched_rows_lines_and_accounting_are_the_file_by_file_ones(
    run: Path, block_bytes: int
) -> None:
    plain, plain_report = _read(run, block_bytes=block_bytes)
    batched, batched_report = _read(run, block_bytes=block_bytes, batch=True)
    pd.testing.assert_frame_equal(batched, plain)
    assert batched_report.to_dict() == plain_report.to_dict()
    assert batched_report.warnings == plain_report.warnings
    assert batched_report.notes == plain_report.notes
    # the damage was seen: skips with file:line, the src_pe warning
    skipped = {Path(f.path).name for f in batched_report.files if f.skipped}
    assert skipped == {"PE17_send.csv", "PE90_send.csv", "PE120_send.csv", "PE133_send.csv"}
    assert any("PE45_send.csv: 1 line(s) have src_pe != 45" in w for w in batched_report.warnings)


@pytest.fixture
def read_alone(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the batched read hands to the block loop one by one."""
    import actorprof.read.logical as logical

    alone: list[str] = []
    read_file = logical._read_file

    def spy(trace_file: Any, *args: Any, **kwargs: Any) -> Any:
        alone.append(trace_file.path.name)
        return read_file(trace_file, *args, **kwargs)

    monkeypatch.setattr(logical, "_read_file", spy)
    return alone


def test_the_odd_files_are_read_one_by_one(run: Path, read_alone: list[str]) -> None:
    list(iter_logical(run, report=ReadReport(kind="logical"), line_numbers=True, batch=True))
    # noise, blank, zero time (other digits), stray PE id, NUL, cut, empty, mixed
    # (after an odd file, groups shrink for a while: some clean files come alone too)
    odd = {f"PE{pe}_send.csv" for pe in (17, 31, 77, 90, 120, 133, 150, 160)}
    assert odd <= set(read_alone)
    assert len(read_alone) < NUM_PES / 2


def test_batched_read_without_line_numbers_has_the_standard_columns(run: Path) -> None:
    quiet = {"report": ReadReport(kind="logical")}
    plain = pd.concat(list(iter_logical(run, **quiet)), ignore_index=True)
    quiet = {"report": ReadReport(kind="logical")}
    batched = pd.concat(list(iter_logical(run, batch=True, **quiet)), ignore_index=True)
    pd.testing.assert_frame_equal(batched, plain)


def _file_by_file_view(path: Path) -> TimelineView:
    """The timeline view as it was read before batching: one file at a time."""
    report = ReadReport(kind="logical")
    acc = TimelineAccumulator()
    extremes = TimeExtremes()
    for chunk in iter_logical(path, report=report, line_numbers=True):
        acc.add(chunk)
        extremes.add(report.files[-1].path, chunk["time_s"].to_numpy(), chunk["line"].to_numpy())
    window = acc.drop_outliers()
    outliers = extremes.outliers(window) if acc.num_outliers else []
    if acc.num_outliers:
        report.warn(_outlier_warning(acc.num_outliers, window, outliers, "message(s)"))
    total = TimelineAccumulator()
    total.merge(acc)
    timeline = total.result()
    assert timeline.first_s is not None and timeline.last_s is not None
    assert timeline.start_s is not None
    span = PhaseSpan(
        "(unnamed)",
        round(timeline.first_s - timeline.start_s, 6),
        round(timeline.last_s - timeline.start_s, 6),
        int(timeline.counts.sum().sum()),
    )
    return TimelineView(str(path), timeline, [span], {"(unnamed)": report}, outliers)


def test_batched_timeline_is_the_file_by_file_one(run: Path) -> None:
    view = timeline_view(run)
    reference = _file_by_file_view(run)
    tl, ref = view.timeline, reference.timeline
    pd.testing.assert_frame_equal(tl.counts, ref.counts)
    assert (tl.bin_s, tl.start_s, tl.first_s, tl.last_s, tl.window) == (
        ref.bin_s,
        ref.start_s,
        ref.first_s,
        ref.last_s,
        ref.window,
    )
    assert tl.pe_first_s is not None and ref.pe_first_s is not None
    assert tl.pe_last_s is not None and ref.pe_last_s is not None
    np.testing.assert_array_equal(tl.pe_first_s, ref.pe_first_s)
    np.testing.assert_array_equal(tl.pe_last_s, ref.pe_last_s)
    pd.testing.assert_series_equal(tl.untimed, ref.untimed)
    assert tl.outliers is not None and ref.outliers is not None
    pd.testing.assert_series_equal(tl.outliers, ref.outliers)
    # the outliers are named by file and line, the same ones
    assert view.outliers == reference.outliers
    assert [(Path(o.path).name, o.line) for o in view.outliers] == OUTLIERS
    assert view.summary() == reference.summary()
    assert perfetto_trace(view) == perfetto_trace(reference)


@pytest.fixture
def timeline_alone(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the timeline's map step reads one by one (not in a group)."""
    from actorprof.engine import timeline_map

    alone: list[str] = []
    read_file = timeline_map._TimesReader.file

    def spy(self: Any, i: int) -> None:
        alone.append(self.files[i].path.name)
        read_file(self, i)

    monkeypatch.setattr(timeline_map._TimesReader, "file", spy)
    return alone


def test_the_timeline_reads_only_the_odd_files_one_by_one(
    run: Path, timeline_alone: list[str]
) -> None:
    view = timeline_view(run)
    # noise, blank, zero time (other digits), stray PE id, NUL, cut, empty, mixed
    odd = {f"PE{pe}_send.csv" for pe in (17, 31, 77, 90, 120, 133, 150, 160)}
    assert odd <= set(timeline_alone)
    assert len(timeline_alone) < 2 * len(odd)
    assert view.summary() == _file_by_file_view(run).summary()


def test_an_outlier_in_a_canonical_middle_file_is_named_by_its_line(
    tmp_path: Path, timeline_alone: list[str]
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    for pe in range(64):
        times = [T0 + 1000 * pe + k for k in range(5)]
        if pe == 30:
            times[3] = T0 + 900_000_000_000_000  # a flipped digit: same width, still canonical
        text = "".join(_line(pe, (pe + 1) % 64, t) + "\n" for t in times)
        (folder / f"PE{pe}_send.csv").write_text(text)
    view = timeline_view(folder)
    assert timeline_alone == []  # every file was read in the one batch
    assert [(Path(o.path).name, o.line) for o in view.outliers] == [("PE30_send.csv", 4)]
    assert view.summary() == _file_by_file_view(folder).summary()


@pytest.mark.parametrize("batch", [False, True])
def test_a_nul_file_fails_alike(tmp_path: Path, batch: bool) -> None:
    folder = damaged_run(tmp_path / "run")
    (folder / "PE200_send.csv").write_bytes(b"\x00" * 64 + b"\n" + b"\x00" * 64 + b"\n")
    with pytest.raises(TraceFormatError) as caught:
        list(iter_logical(folder, batch=batch))
    assert "PE200_send.csv" in str(caught.value)
    assert "no line of this file is a logical trace line" in str(caught.value)

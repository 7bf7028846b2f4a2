"""A folder of many files is planned by their count, none stat'ed first
(``Engine.count_plan_files``): the same numbers, reports and errors as the
plan by size and the plain reader, whatever the files (empty, odd, larger
than a block, gone between the listing and the read)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

import actorprof.engine.run as run
import actorprof.read._files as files_module
from actorprof import ReadReport, TraceFormatError
from actorprof._progress import Progress
from actorprof.engine import Engine, reduce_logical

from .conftest import Recorder
from .test_engine import assert_same, engine, noisy_trace, plain
from .test_small_files_columns import mixed_trace


def trace(folder: Path) -> Path:
    """Small odd files (an empty one among them) and two larger than a block."""
    mixed_trace(folder)
    noisy = noisy_trace(folder.parent / "noisy")
    for pe in (1, 2):  # 100 KB each, noise and a cut last line: read on their own
        (noisy / f"PE{pe}_send.csv").rename(folder / f"PE{60 + pe}_send.csv")
    return folder


BY_COUNT = {
    "serial": Engine(jobs=1, count_plan_files=1, block_bytes=4096),
    "jobs2": Engine(jobs=2, count_plan_files=1, block_bytes=4096),
    "jobs2-tiny-blocks": Engine(jobs=2, count_plan_files=1, block_bytes=60),
}


@pytest.mark.parametrize("way", list(BY_COUNT))
def test_planned_by_count_is_planned_by_size(tmp_path: Path, way: str) -> None:
    folder = trace(tmp_path / "run")
    ref = plain(folder)
    assert ref[1].lines_skipped and any(f.lines_read == 0 for f in ref[1].files)  # odd, empty
    by_size = Engine(jobs=2, split_bytes=30_000, block_bytes=4096, parallel_min_bytes=0)
    assert_same(ref, engine(folder, by_size))
    assert_same(ref, engine(folder, BY_COUNT[way]))
    # lines naming PEs beyond skipped, files beyond warned about
    assert_same(plain(folder, num_pes=40), engine(folder, BY_COUNT[way], num_pes=40))


def stats_taken(monkeypatch: pytest.MonkeyPatch, *modules: Any) -> list[str]:
    """The paths ``file_stat`` is called with from now on (by the read's
    listing, and by ``modules`` that imported it by name)."""
    taken: list[str] = []
    real = files_module.file_stat

    def counted(path: Any) -> Any:
        taken.append(str(path))
        return real(path)

    for module in (files_module, *modules):
        monkeypatch.setattr(module, "file_stat", counted)
    return taken


def test_no_file_is_stated_when_planned_by_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = trace(tmp_path / "run")
    taken = stats_taken(monkeypatch)
    report = ReadReport(kind="logical")
    reduce_logical(folder, report=report, engine=Engine(jobs=1, count_plan_files=62))
    assert not taken and report.sizes_planned == [] and report.bytes_planned == 0
    assert report.files_planned == 62
    report = ReadReport(kind="logical")
    reduce_logical(folder, report=report, engine=Engine(jobs=1, count_plan_files=63))
    assert len(taken) == 62 and report.bytes_planned == sum(report.sizes_planned) > 0
    # the cache keeps each file's stat: the first read takes it as it reads
    # each file (tests/test_cache_cold.py); a cache holding an entry for the
    # trace plans by size, whatever the count (to find the unchanged files)
    ref = plain(folder)
    taken.clear()
    cached = Engine(jobs=1, count_plan_files=1, cache=True, cache_dir=tmp_path / "cache")
    assert_same(ref, engine(folder, cached))
    assert not taken
    assert_same(ref, engine(folder, cached))
    assert len(taken) == 62


def test_units_by_count_cover_the_files_in_order(tmp_path: Path) -> None:
    folder = trace(tmp_path / "run")
    report = ReadReport(kind="logical")
    listed = run.logical_files(folder, report=report, sizes=False)
    todo = [i for i in range(len(listed)) if i % 5]  # some files found in a cache
    units = run._plan_by_count(listed, todo, report, Engine(jobs=3), packed=False)
    assert [len(unit.items) for unit in units] == [4] * 11 + [5]  # 4 units per worker
    items = [item for unit in units for item in unit.items]
    assert [item.file for item in items] == todo
    assert all(item.small and item.start == 0 and item.stop is None for item in items)
    assert [item.path for item in items] == [str(listed[i].path) for i in todo]
    assert [
        len(u.items)
        for u in run._plan_by_count(listed, todo[:5], report, Engine(jobs=3), packed=False)
    ] == [1] * 5


@pytest.mark.parametrize("count_plan_files", [1, 10**6])
def test_a_file_gone_after_the_listing_is_the_same_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count_plan_files: int
) -> None:
    folder = trace(tmp_path / "run")
    (folder / "PE34_send.csv").write_text("")  # empty: read, no line
    real = run.logical_files

    def listed_then_removed(*args: Any, **kw: Any) -> Any:
        found = real(*args, **kw)
        (folder / "PE5_send.csv").unlink()
        return found

    monkeypatch.setattr(run, "logical_files", listed_then_removed)
    way = Engine(jobs=2, count_plan_files=count_plan_files, parallel_min_bytes=0)
    with pytest.raises(TraceFormatError) as caught:
        engine(folder, way)
    assert "PE5_send.csv" in str(caught.value)
    assert "No such file" in str(caught.value) or "cannot" in str(caught.value)
    with pytest.raises(TraceFormatError) as plain_error:
        plain_error_of(folder)
    assert str(plain_error.value) == str(caught.value)


def plain_error_of(folder: Path) -> None:
    """The plain reader's error once PE5's file is gone (listed after it)."""
    (folder / "PE5_send.csv").write_text("")
    real = files_module.select_phase

    def listed(*args: Any, **kw: Any) -> Any:
        found = real(*args, **kw)
        (folder / "PE5_send.csv").unlink()
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(files_module, "select_phase", listed)
        plain(folder)


def test_progress_of_a_read_planned_by_count(tmp_path: Path) -> None:
    folder = trace(tmp_path / "run")
    progress = Recorder()
    way = Engine(jobs=2, count_plan_files=1)
    reduce_logical(folder, report=ReadReport(), engine=way, progress=progress)
    total = sum(p.stat().st_size for p in folder.iterdir())
    assert progress.begun == [(0, 62)]  # bytes unknown
    calls = progress.updates
    assert calls[-1] == (total, 62) and calls == sorted(calls)


def test_the_progress_line_shows_the_share_of_files_when_bytes_are_unknown() -> None:
    stream = io.StringIO()
    line = Progress(enabled=True, stream=stream, delay_s=0.0, every_s=0.0)
    line.begin(0, 8)
    line.update(3000, 2)
    assert "reading 2/8 files, 3.0 KB (25 % of the files)" in stream.getvalue()
    stream.truncate(0)
    sized = Progress(enabled=True, stream=stream, delay_s=0.0, every_s=0.0)
    sized.begin(4000, 8)
    sized.update(3000, 2)
    assert "reading 2/8 files, 3.0 KB of 4.0 KB (75 %)" in stream.getvalue()

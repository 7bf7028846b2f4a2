"""A UTF-8 byte order mark at the start of a logical or PAPI file is dropped,
as the overall and physical readers drop it: the first line is read, on every
way (the plain reader, one unit, byte ranges, tiny blocks, small files read
many at a time, worker processes, plans by count, the timeline). A mark
anywhere else is text of its line, which is skipped and named as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from actorprof import ReadReport, timeline_view
from actorprof.engine import Engine

from .test_engine import assert_same, engine, plain
from .test_papi_batch import good_lines
from .test_papi_engine import BY_COUNT_SPLIT, SERIAL, SPLIT, view_outcome
from .test_papi_engine import assert_same as assert_same_papi

BOM = b"\xef\xbb\xbf"

WAYS = {
    "one unit": Engine(jobs=1),
    "tiny blocks": Engine(jobs=1, split_bytes=300, block_bytes=64),
    "batches": Engine(jobs=1, split_bytes=10**6, block_bytes=1 << 20),
    "workers": Engine(jobs=2, split_bytes=2_000, parallel_min_bytes=0),
    "by count": Engine(jobs=2, count_plan_files=2),
}


def _logical_lines(pe: int, n: int) -> bytes:
    return b"".join(
        b"%d, %d, %d, %d, 8, 1721412345.%06d\n" % (pe // 2, pe, k % 2, (pe + k) % 4, 17 * k)
        for k in range(n)
    )


def _logical_run(folder: Path, *, mark: bool) -> Path:
    """Four PE files, small (read many at a time) and large (in blocks); with
    ``mark``, PE 0 and PE 3 start with a BOM."""
    folder.mkdir()
    for pe, n in enumerate([3, 5, 400, 600]):
        text = _logical_lines(pe, n)
        (folder / f"PE{pe}_send.csv").write_bytes(BOM + text if mark and pe in (0, 3) else text)
    return folder


def test_a_bom_starting_a_logical_file_is_dropped_every_way(tmp_path: Path) -> None:
    clean = plain(_logical_run(tmp_path / "clean", mark=False))
    marked = _logical_run(tmp_path / "marked", mark=True)
    base = plain(marked)
    matrices, report = base
    assert matrices.messages == clean[0].messages == 1008
    assert clean[0].pairs.equals(matrices.pairs)
    assert report.lines_read == clean[1].lines_read and report.lines_skipped == 0
    for way in WAYS.values():
        assert_same(base, engine(marked, way))
    # the timeline's own read: the same bins and lines (the files' bytes differ)
    got, want = timeline_view(marked).summary(), timeline_view(tmp_path / "clean").summary()
    lines = [[f["lines_read"] for f in s.pop("files")["(unnamed)"]] for s in (got, want)]
    assert lines[0] == lines[1] == [3, 5, 400, 600]
    assert got | {"trace": None} == want | {"trace": None}


def test_a_bom_inside_a_logical_file_is_text_of_its_line(tmp_path: Path) -> None:
    folder = _logical_run(tmp_path / "run", mark=True)
    trace = folder / "PE2_send.csv"
    trace.write_bytes(trace.read_bytes() + BOM + _logical_lines(2, 1))
    base = plain(folder)
    skipped = {Path(f.path).name: f.skipped for f in base[1].files if f.lines_skipped}
    assert skipped == {"PE2_send.csv": {"not a number in src_node": 1}}
    assert base[1].files[2].examples[0].line == 401
    for way in WAYS.values():
        assert_same(base, engine(folder, way))


@pytest.mark.parametrize("where", ["start", "only"])
def test_a_bom_starting_a_papi_file_is_dropped_every_way(tmp_path: Path, where: str) -> None:
    clean, marked = tmp_path / "clean", tmp_path / "marked"
    for folder in (clean, marked):
        folder.mkdir()
        for pe, n in enumerate([2, 4, 300, 500]):
            text = good_lines(pe, n).encode()
            if folder is marked and pe in (1, 2):
                text = BOM + text
            (folder / f"PE{pe}_PAPI.csv").write_bytes(text)
    if where == "only":  # a file of the mark alone is an empty file
        (marked / "PE4_PAPI.csv").write_bytes(BOM)
        (clean / "PE4_PAPI.csv").write_bytes(b"")
    want = view_outcome(clean, SERIAL)
    base = view_outcome(marked, None)
    assert "error" not in base
    assert base["pes"].equals(want["pes"]) and base["regions"].equals(want["regions"])
    assert [f.lines_read for f in base["files"]] == [f.lines_read for f in want["files"]]
    assert not any(f.lines_skipped for f in base["files"])
    for way in (SERIAL, SPLIT, BY_COUNT_SPLIT):
        assert_same_papi(base, view_outcome(marked, way))


def test_the_plain_readers_report_the_marks_bytes(tmp_path: Path) -> None:
    """The mark is read (its bytes counted), only not parsed."""
    from actorprof import iter_logical

    folder = _logical_run(tmp_path / "run", mark=True)
    report = ReadReport(kind="logical")
    for _ in iter_logical(folder, report=report):
        pass
    sizes = {f.path: Path(f.path).stat().st_size for f in report.files}
    assert {f.path: f.bytes_read for f in report.files} == sizes

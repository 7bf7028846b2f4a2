"""Reading is linear in the file size whatever the lines look like (issue 12).

A crashed node leaves files of NUL bytes: one endless line. Each byte read
must be searched for a line end once and copied into a block once; the
checks count the bytes handed to those two steps, not the time taken.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from actorprof import ReadReport, read_logical, read_overall, read_papi, read_physical
from actorprof.errors import TraceFormatError
from actorprof.read import _scan
from actorprof.read._long import MAX_LINE_BYTES
from actorprof.read._report import FileReport
from actorprof.read._scan import file_blocks

MB = 1 << 20


class Work:
    """Bytes searched for a line end and bytes joined into blocks."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.searched = 0
        self.joined = 0
        last_line_end, join = _scan._last_line_end, _scan._join

        def counting_search(data: bytes) -> int:
            self.searched += len(data)
            return last_line_end(data)

        def counting_join(pieces: list[bytes]) -> bytes:
            out = join(pieces)
            self.joined += len(out)
            return out

        monkeypatch.setattr(_scan, "_last_line_end", counting_search)
        monkeypatch.setattr(_scan, "_join", counting_join)


@pytest.mark.parametrize("size", [1 * MB, 4 * MB])
@pytest.mark.parametrize("tail", [b"", b"\n", b"\n0, 0, 0, 1, 8, 1.000000\n"])
def test_nul_file_is_split_in_linear_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, tail: bytes
) -> None:
    path = tmp_path / "PE0_send.csv"
    path.write_bytes(b"\x00" * size + tail)
    work = Work(monkeypatch)
    report = FileReport(str(path))
    blocks = list(file_blocks(path, report, 64 * 1024))
    total = size + len(tail)
    assert report.bytes_read == total
    # a line over MAX_LINE_BYTES is not held: its first 256 bytes stand for it
    held = size if size <= MAX_LINE_BYTES else 256
    assert sum(len(b) for b, _ in blocks) == held + len(tail)
    assert work.searched == total  # each byte searched once
    assert work.joined <= total  # each byte joined at most once


@pytest.mark.parametrize("reader", ["logical", "papi", "overall", "physical"])
def test_every_reader_on_a_nul_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    name = {
        "logical": "PE0_send.csv",
        "papi": "PE0_PAPI.csv",
        "overall": "overall.txt",
        "physical": "physical.txt",
    }[reader]
    size = 4 * MB
    (tmp_path / name).write_bytes(b"\x00" * size)
    work = Work(monkeypatch)
    read = {
        "logical": read_logical,
        "papi": read_papi,
        "overall": read_overall,
        "physical": read_physical,
    }[reader]
    with pytest.raises(TraceFormatError, match="NUL"):
        read(tmp_path / name, report=ReadReport())  # type: ignore[operator]
    # PAPI also sniffs the head; without --num-pes, the plain physical reader
    # reads the file twice (its first pass finds PE ids far beyond the others)
    passes = 2 if reader == "physical" else 1
    assert work.searched <= 2 * passes * size
    assert work.joined <= passes * size


def test_overall_is_read_in_blocks_with_identical_results(tmp_path: Path) -> None:
    """A small block size (many blocks, lines cut at every boundary) changes nothing."""
    source = Path(__file__).parent / "data" / "bad"
    for case in ("overall_split", "overall_nul", "overall_cut_last", "overall_terminal"):
        path = source / case / "overall.txt"
        whole_report, small_report = ReadReport(), ReadReport()
        whole = read_overall(path, report=whole_report)
        small = read_overall(path, report=small_report, block_bytes=7)
        assert whole.equals(small), case
        assert whole_report.to_dict() == small_report.to_dict(), case

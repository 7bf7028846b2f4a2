"""Lines too long to be trace lines are skipped, never held whole.

A 300 MB line (a never-written file of NUL bytes without line ends, or a
corrupt number of millions of digits) made `actorprof logical` take 4.2 GB
and 18 s, and was read as a message. Every route now replaces a line over
1 MiB by its first bytes and a mark, and skips it under one reason (or the
NUL reason, when it starts with NUL bytes), whatever the block it falls in.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from actorprof.engine import Engine
from actorprof.read import ReadReport, iter_papi, read_overall
from actorprof.read._long import (
    LONG_LINE,
    LONG_LINE_MARK,
    MAX_LINE_BYTES,
    cut_long_lines,
    has_long_line,
)
from actorprof.read._report import FileReport
from actorprof.read._scan import NUL_BYTES, line_blocks

from . import test_engine as logical_ways
from . import test_physical_engine as physical_ways


def reference(data: bytes) -> bytes:
    """Each line longer than MAX_LINE_BYTES replaced, one line at a time."""
    out = []
    for line in data.split(b"\n"):
        if len(line) > MAX_LINE_BYTES:
            head = line[:256]
            line = head if b"\x00" in head else head + LONG_LINE_MARK
        out.append(line)
    return b"\n".join(out)


def lines_of(rng: np.random.Generator, lengths: list[int]) -> bytes:
    """Lines of the given lengths (digits, or NUL bytes for negative ones)."""
    pieces = []
    for n in lengths:
        fill = b"\x00" if n < 0 else b"7"
        pieces.append(b"0, 1, 0, 2, 8, 1." + fill * (abs(n) - 17) if abs(n) >= 17 else b"x" * n)
    return b"\n".join(pieces) + b"\n" * int(rng.integers(0, 2))


LIMIT = MAX_LINE_BYTES


@pytest.mark.parametrize("seed", range(6))
def test_cut_and_blocks_agree_with_the_line_by_line_reference(seed: int) -> None:
    """Lines at, just under and just over the limit, anywhere in a block,
    read in blocks of any size: the same text as the one-line reference."""
    rng = np.random.default_rng(seed)
    choices = [30, 40, LIMIT - 1, LIMIT, LIMIT + 1, 3 * LIMIT, -(LIMIT + 5), 100_000]
    lengths = [int(rng.choice(choices)) for _ in range(8)]
    data = lines_of(rng, lengths)
    expected = reference(data)
    assert cut_long_lines(data) == expected
    assert has_long_line(data) == (expected != data)
    for block in (997, 64 * 1024, LIMIT // 2 + 3, 4 * LIMIT):
        blocks = list(line_blocks(io.BytesIO(data), FileReport("x"), block))
        assert b"".join(b for b, _ in blocks) == expected, block
        assert all(len(b) <= 2 * LIMIT + block for b, _ in blocks)


def long_logical(folder: Path) -> Path:
    """Four PE files: PE 1 holds a 3 MB number and a 2 MB run of NUL bytes."""
    folder.mkdir()
    for pe in range(4):
        rows = [b"0, %d, 0, %d, 8, 1.%06d\n" % (pe, k % 4, k) for k in range(2000)]
        if pe == 1:
            rows.insert(700, b"0, 1, 0, 2, 8, 1." + b"5" * 3_000_000 + b"\n")
            rows.insert(1500, b"\x00" * 2_000_000 + b"\n")
        (folder / f"PE{pe}_send.csv").write_bytes(b"".join(rows))
    return folder


def test_logical_skips_long_lines_every_way(tmp_path: Path) -> None:
    trace = long_logical(tmp_path / "logical")
    base = logical_ways.plain(trace)
    matrices, report = base
    assert matrices.messages == 8000
    (pe1,) = [f for f in report.files if f.path.endswith("PE1_send.csv")]
    assert pe1.skipped == {LONG_LINE: 1, NUL_BYTES: 1}
    assert [e.line for e in pe1.examples] == [701, 1501]
    ways = {
        **logical_ways.WAYS,
        "tiny": Engine(jobs=1, split_bytes=300_000, block_bytes=4096),
        "big-blocks": Engine(jobs=1, block_bytes=16 << 20),
    }
    for way in ways.values():
        logical_ways.assert_same(base, logical_ways.engine(trace, way))


def test_physical_skips_long_lines_every_way(tmp_path: Path) -> None:
    trace = tmp_path / "physical.txt"
    rows = [b"local_send, 8, %d, %d\n" % (k % 8, (k + 3) % 8) for k in range(3000)]
    rows.insert(100, b"local_send, 8, 3, " + b"4" * 2_500_000 + b"\n")
    rows.insert(2000, b"Program says " + b"z" * 1_200_000 + b"\n")
    trace.write_bytes(b"".join(rows))
    base = physical_ways.plain(trace)
    view, report = base
    assert isinstance(view, physical_ways.PhysicalView)
    assert report.files[0].skipped == {LONG_LINE: 2}
    assert report.files[0].lines_read == 3000
    ways = {
        **physical_ways.WAYS,
        "ranges": Engine(jobs=1, split_bytes=700_000, block_bytes=65_536),
        "j2-ranges": Engine(jobs=2, split_bytes=900_000, parallel_min_bytes=0),
    }
    for name, way in ways.items():
        if name == "tiny-ranges":
            continue  # 7-byte ranges of a 4 MB file: too slow for what it adds
        physical_ways.assert_same(base, physical_ways.engine(trace, way))


def test_papi_and_overall_skip_long_lines(tmp_path: Path) -> None:
    papi = tmp_path / "papi"
    papi.mkdir()
    for pe in range(2):
        rows = [b"0, %d, 0, %d, 8, 0, 0, 5, 3, 1.000001\n" % (1 - pe, pe) for _ in range(50)]
        rows.append(b"0, %d, 0, %d, 0, -1, 7, 9, 9, 1.000002\n" % (pe, pe))
        if pe == 1:
            rows.insert(10, b"0, 0, 0, 1, 8, 0, 0, 5, 3, 1." + b"0" * 1_100_000 + b"\n")
        (papi / f"PE{pe}_PAPI.csv").write_bytes(b"".join(rows))
    report = ReadReport(kind="papi")
    rows_read = sum(len(frame) for frame in iter_papi(papi, report=report))
    assert rows_read == 102
    (pe1,) = [f for f in report.files if f.path.endswith("PE1_PAPI.csv")]
    assert pe1.skipped == {LONG_LINE: 1} and pe1.examples[0].line == 11
    profile = tmp_path / "overall.txt"
    body = b"h [PE0] T_wait (done - finish): 5 cycles\n"
    long = b"h [PE0] T_wait (done - finish): " + b"9" * 2_000_000 + b" cycles\n"
    profile.write_bytes(body + long)
    report = ReadReport(kind="overall")
    frame = read_overall(profile, report=report)
    assert len(frame) == 1 and report.files[0].skipped == {LONG_LINE: 1}
    assert report.files[0].examples[0].line == 2


def test_papi_and_timeline_skip_long_lines_every_way(tmp_path: Path) -> None:
    """A small file with a line too long is left to the one-file route by
    the batches, the joined groups and the workers: every way counts it."""
    from actorprof.kinds.timeline import timeline_view

    from . import test_papi_engine as papi_ways
    from . import test_timeline_engine as timeline_ways

    papi = tmp_path / "papi"
    papi.mkdir()
    logical = long_logical(tmp_path / "logical")
    for pe in range(4):
        line = b"0, %d, 0, %d, 8, 0, 0, 5, 3, 1.%06d\n"
        rows = [line % ((pe + 1) % 4, pe, k) for k in range(300)]
        rows.append(b"0, %d, 0, %d, 0, -1, 7, 9, 9, 2.000000\n" % (pe, pe))
        if pe == 2:
            rows.insert(40, b"0, 1, 0, 2, 8, 0, 0, 5, 3, 1." + b"4" * 1_500_000 + b"\n")
        (papi / f"PE{pe}_PAPI.csv").write_bytes(b"".join(rows))
    plain = papi_ways.view_outcome(papi, None)
    (pe2,) = [f for f in plain["files"] if f.path.endswith("PE2_PAPI.csv")]
    assert pe2.skipped == {LONG_LINE: 1} and pe2.examples[0].line == 41
    ways = (papi_ways.SERIAL, papi_ways.SPLIT, papi_ways.BY_COUNT, papi_ways.BY_COUNT_SPLIT)
    for way in ways:
        papi_ways.assert_same(plain, papi_ways.view_outcome(papi, way))
    ref = timeline_view(logical)
    assert ref.timeline.counts.to_numpy().sum() == 8000
    for way in timeline_ways.WAYS.values():
        timeline_ways._same(timeline_view(logical, engine=way), ref)

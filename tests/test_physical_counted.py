"""Blocks of the physical trace counted by their distinct lines (the engine's route).

:func:`actorprof.read._physical_lines.count_lines` reads a block of printf's
lines only as its distinct lines and their counts; every other block goes
line by line (:meth:`Lines.of_block`). Both must give the same sums, the
same line accounting and the same errors, whichever blocks each one reads.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from actorprof import TraceFormatError
from actorprof.engine import physical as physical_engine
from actorprof.read import FileReport
from actorprof.read._fastscan import BlockBuffer
from actorprof.read._physical_lines import Lines, count_lines, new_line_keys
from actorprof.read.physical import PhysicalScan, stray_pes

FIELDS = ("links", "calls", "nbytes", "max_bytes", "sized_links", "sizes", "sized_calls")


def _counted(text: bytes):
    return count_lines(text, new_line_keys(), BlockBuffer())


def _distinct(lines: Lines) -> dict[tuple[int, int, int, int], int]:
    """What a block's lines hold, as (type, bytes, src, dst) -> lines."""
    v = lines.values
    keys = zip(
        lines.codes.tolist(),
        v["buffer_bytes"].tolist(),
        v["src_pe"].tolist(),
        v["dst_pe"].tolist(),
        strict=True,
    )
    out: dict[tuple[int, int, int, int], int] = {}
    for key in keys:
        out[key] = out.get(key, 0) + 1
    return out


def test_counted_block_holds_what_its_lines_hold() -> None:
    rng = np.random.default_rng(3)
    types = [b"local_send", b"nonblock_send", b"nonblock_progress"]
    rows = [
        types[int(t)] + b", %d, %d, %d\n" % (s, a, b)
        for t, s, a, b in zip(
            rng.integers(0, 3, 3000),
            rng.choice([0, 8, 4096, 10048, 4294967296], 3000),
            rng.integers(0, 2_000_000_000, 3000) % 40 + 999_999_000 * (rng.random(3000) < 0.01),
            rng.integers(0, 2_000_000_000, 3000) % 50,
            strict=True,
        )
    ]
    text = b"".join(rows)
    found = _counted(text)
    assert found is not None
    assert found.lines == 3000 and int(found.counts.sum()) == 3000
    got = {
        (int(c), int(n), int(s), int(d)): int(k)
        for c, n, s, d, k in zip(
            found.codes,
            found.values["buffer_bytes"],
            found.values["src_pe"],
            found.values["dst_pe"],
            found.counts,
            strict=True,
        )
    }
    assert got == _distinct(Lines.of_block(text))
    # each line's row, in line order
    rows_of = found.of_line()
    again = Lines.of_block(text)
    assert (found.codes[rows_of] == again.codes).all()
    assert (found.values["dst_pe"][rows_of] == again.values["dst_pe"]).all()


@pytest.mark.parametrize(
    "odd",
    [
        b"Running synthetic on 4 PEs\n",  # program output
        b"local_send, 8, 0, 1\r\n",  # CRLF
        b"local_send, -8, 0, 1\n",  # a negative number: skipped by the other route
        b"local_send, 8, 00000000001, 1\n",  # 11 digits of a PE id: too long
        b"local_send, 4294967297, 0, 1\n",  # beyond MAX_MSG_BYTES
        b"local_send, 8, 2147483648, 1\n",  # beyond int32
        b"local_send, 8, 0, 1, extra\n",  # an extra field
        b"local_send,8,0,1\n",  # other separators
        b"local_send: 8 0 1\n",
        b"local_send, 8,  0, 1\n",  # two blanks
        b"local_send, 8, 0,\n",  # a field missing
        b"local_send, 123456789012345678, 0, 1\n",  # a text longer than 32 bytes
        b"\n",  # a blank line
        b"nonblock_sent, 8, 0, 1\n",  # not a send type
        b"local_sendx 8, 0, 1\n",
        b"nonblock_progress; 8, 0, 1\n",  # a type whose ", " is in its third word
        b"nonblock_progresx, 8, 0, 1\n",
        b"nonblock_progress,  8, 0, 1\n",
        b"Local_send, 8, 0, 1\n",
    ],
)
def test_a_block_with_any_other_line_is_read_line_by_line(odd: bytes) -> None:
    clean = b"local_send, 8, 0, 1\nnonblock_send, 16, 1, 0\n"
    assert _counted(clean) is not None
    assert _counted(clean + odd + clean) is None


def _sums(path: Path, counted: bool, block_bytes: int, num_pes: int | None = None):
    report = FileReport(str(path))
    scan = PhysicalScan(path, report, num_pes)
    sums = physical_engine._Sums(True)  # the map step's sum
    sums.add_blocks(scan.blocks(block_bytes, counted=counted))
    return sums.result(), report


def _mixed_trace(path: Path) -> Path:
    rng = np.random.default_rng(7)
    parts = [b"Running synthetic on 64 PEs\n"]
    for k in range(60):
        for t, s, a, b in zip(
            rng.integers(0, 3, 200),
            rng.choice([8, 4096, 10048], 200),
            rng.integers(0, 64, 200),
            rng.integers(0, 64, 200),
            strict=True,
        ):
            name = (b"local_send", b"nonblock_send", b"nonblock_progress")[int(t)]
            parts.append(name + b", %d, %d, %d\n" % (s, a, b))
        if k % 7 == 3:
            parts.append(b"phase %d done\n" % k)
        if k % 11 == 5:
            parts.append(b"local_send, -1, 0, 1\n\nlocal_send, 8, 0, 1\r\n")
    parts.append(b"local_send, 8, 0")  # a cut last line
    path.write_bytes(b"".join(parts))
    return path


@pytest.mark.parametrize("block_bytes", [64, 4096, 1 << 19])
def test_counted_blocks_give_the_same_sums_and_accounting(tmp_path: Path, block_bytes: int) -> None:
    trace = _mixed_trace(tmp_path / "physical.txt")
    listed, listed_report = _sums(trace, False, block_bytes)
    counted, counted_report = _sums(trace, True, block_bytes)
    for name in FIELDS:
        assert np.array_equal(getattr(listed, name), getattr(counted, name)), name
    assert listed.lines == counted.lines
    assert counted_report == listed_report
    assert counted_report.lines_skipped > 0 and counted_report.examples


def test_pe_beyond_num_pes_names_the_same_line(tmp_path: Path) -> None:
    lines = [b"local_send, 8, %d, %d\n" % (k % 4, (k + 1) % 4) for k in range(500)]
    lines[321] = b"nonblock_send, 8, 2, 9\n"
    lines[400] = b"local_send, 8, 9, 1\n"
    trace = tmp_path / "physical.txt"
    trace.write_bytes(b"".join(lines))
    messages = []
    for counted in (False, True):
        with pytest.raises(TraceFormatError) as info:
            _sums(trace, counted, 1 << 19, num_pes=4)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert ":322" in messages[0] and "dst_pe 9" in messages[0]


@pytest.mark.parametrize("block_bytes", [64, 4096, 1 << 19])
def test_stray_pe_lines_skipped_the_same_by_both_routes(tmp_path: Path, block_bytes: int) -> None:
    """A counted block naming a stray PE id is read line by line (its stray
    lines skipped with their numbers); the others stay counted."""
    lines = [b"local_send, 8, %d, %d\n" % (k % 8, (k + 1) % 8) for k in range(3000)]
    lines[1234] = b"nonblock_send, 64, 2, 16000000\n"
    lines[2500] = b"local_send, 8, 700, 1\n"
    trace = tmp_path / "physical.txt"
    trace.write_bytes(b"".join(lines))
    stray = stray_pes(np.array([*range(8), 700, 16_000_000]))
    assert stray is not None and stray.limit == 64
    found = []
    for counted in (False, True):
        report = FileReport(str(trace))
        scan = PhysicalScan(trace, report, None, stray=stray)
        sums = physical_engine._Sums(True)
        sums.add_blocks(scan.blocks(block_bytes, counted=counted))
        found.append((sums.result(), report, scan.first_beyond))
    (listed, listed_report, first), (counted_sums, counted_report, counted_first) = found
    for name in FIELDS:
        assert np.array_equal(getattr(listed, name), getattr(counted_sums, name)), name
    assert counted_report == listed_report and counted_first == first == (
        1235,
        "dst_pe",
        16_000_000,
    )
    assert counted_report.skipped == {stray.reason: 2} and listed.lines == 2998
    assert int(listed.max_bytes[1]) == 0  # the stray nonblock_send is no buffer


def test_route_stops_where_most_lines_are_new(tmp_path: Path) -> None:
    from actorprof.read import physical as physical_read

    route = physical_read._CountedRoute()
    distinct = b"".join(b"local_send, 8, %d, %d\n" % (k, k + 1) for k in range(2000))
    assert route.count(distinct) is not None  # read, but the route then stops
    assert route.table is None and route.count(distinct) is None

    route = physical_read._CountedRoute()
    repeated = b"local_send, 8, 0, 1\nnonblock_send, 8, 1, 0\n" * 1000
    for _ in range(5):
        assert route.count(repeated) is not None
    assert route.table is not None


def test_route_stops_after_declining_most_blocks() -> None:
    from actorprof.read import physical as physical_read

    crlf = b"local_send, 8, 0, 1\r\n" * 100
    clean = b"local_send, 8, 0, 1\n" * 100
    route = physical_read._CountedRoute()
    for _ in range(physical_read._DECLINED_MIN - 1):
        assert route.count(crlf) is None
    assert route.count(clean) is not None and route.table is not None
    assert route.count(crlf) is None
    assert route.table is None  # 8 declined against 1 read

    route = physical_read._CountedRoute()  # program output now and then: kept
    for _ in range(20):
        assert route.count(clean) is not None
        assert route.count(crlf) is None
    assert route.table is not None

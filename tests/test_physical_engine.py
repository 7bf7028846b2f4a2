"""The physical trace through the engine (byte ranges, processes, Dask) vs the plain reader.

Every way of reading ``physical.txt`` must give what the plain reader
(:func:`actorprof.iter_physical` reduced chunk by chunk) gives, bit for bit:
the view's matrices, summary and tables, the buffers per link and size, the
line accounting with its skipped-line examples (exact file lines, though a
range does not know where it starts), and the same errors with the same
line.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from actorprof import ReadReport, TraceFormatError, iter_physical
from actorprof.analyze.conveyors import physical_buffers
from actorprof.analyze.physical_partial import PhysicalPartial
from actorprof.cli import main
from actorprof.engine import Engine
from actorprof.engine import physical as physical_engine
from actorprof.engine.physical import reduce_physical
from actorprof.kinds.aggregation import physical_view_and_buffers, read_physical_buffers
from actorprof.kinds.physical import PhysicalView, build_physical_view, physical_view

from .conftest import distinct_contents

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
REAL = Path("/work/shared/real-traces")


def _traces() -> list[Path]:
    found = sorted(DATA.rglob("physical.txt")) + sorted((ROOT / "examples").rglob("physical.txt"))
    if REAL.is_dir():
        found += sorted(REAL.rglob("physical.txt"))
    return distinct_contents([p for p in found if p.is_file()])


TRACES = _traces()

#: Every way: one range in this process, tiny ranges and blocks (a cut at
#: nearly every line), and two worker processes over small ranges.
WAYS = {
    "serial": Engine(jobs=1),
    "tiny-ranges": Engine(jobs=1, split_bytes=7, block_bytes=5),
    "small-ranges": Engine(jobs=1, split_bytes=64, block_bytes=32),
    "j2": Engine(jobs=2, split_bytes=96, block_bytes=40, parallel_min_bytes=0),
}


def plain(path: Path, **kw: Any) -> tuple[PhysicalView | Exception, ReadReport]:
    """The reader before the engine: chunks of iter_physical, reduced one by one."""
    report = ReadReport(kind="physical")
    try:
        chunks = iter_physical(path, num_pes=kw.get("num_pes"), report=report)
        return build_physical_view(chunks, report, path=str(path), **kw), report
    except Exception as exc:  # compared with the engine's
        return exc, report


def engine(path: Path, way: Engine, **kw: Any) -> tuple[PhysicalView | Exception, ReadReport]:
    report = ReadReport(kind="physical")
    try:
        return physical_view(path, report=report, engine=way, **kw), report
    except Exception as exc:
        return exc, report


def assert_same(a: tuple[Any, ReadReport], b: tuple[Any, ReadReport]) -> None:
    (va, ra), (vb, rb) = a, b
    if isinstance(va, Exception) or isinstance(vb, Exception):
        assert type(va) is type(vb), (va, vb)
        assert str(va) == str(vb)
        assert getattr(va, "line", None) == getattr(vb, "line", None)
        return
    assert va.summary() == vb.summary()
    assert va.summary_lines() == vb.summary_lines()
    pd.testing.assert_frame_equal(va.pairs(), vb.pairs())
    pd.testing.assert_frame_equal(va.pes, vb.pes)
    for t, m in va.matrices.by_type.items():
        pd.testing.assert_frame_equal(m.pairs, vb.matrices.by_type[t].pairs)
        pd.testing.assert_series_equal(m.pe_node, vb.matrices.by_type[t].pe_node)
        assert m.messages == vb.matrices.by_type[t].messages
    assert va.matrices.max_buffer_bytes == vb.matrices.max_buffer_bytes
    assert va.matrices.lines == vb.matrices.lines
    assert ra.files == rb.files  # every FileReport field, examples and their lines included
    assert ra.to_dict() == rb.to_dict()
    assert ra.notes == rb.notes and ra.warnings == rb.warnings
    assert ra.skipped_summary() == rb.skipped_summary()
    assert ra.expected_summary() == rb.expected_summary()


def _name(trace: Path) -> str:
    return str(trace.parent.relative_to(trace.parents[2]))


def excerpt(trace: Path, folder: Path, *, head: int = 100, tail: int = 30) -> Path:
    """A real trace's first and last lines (its program output before and
    after the trace lines, and every send type it has), for the ways that cut
    at nearly every line: a range per few lines of the whole trace is the
    same path, a thousand times over. A smaller trace: itself."""
    lines = trace.read_bytes().split(b"\n")  # the last: what follows the last line end
    if len(lines) <= head + tail:
        return trace
    path = folder / "excerpt" / trace.name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"\n".join(lines[:head] + lines[-tail:]))
    return path


#: Worker processes on the bigger traces (the small ones take the in-process ways).
CASES = [
    (trace, way)
    for trace in TRACES
    for way in WAYS
    if way != "j2" or trace.stat().st_size >= 10_000
]


@pytest.mark.parametrize(("trace", "way"), CASES, ids=[f"{_name(t)}-{w}" for t, w in CASES])
def test_every_way_gives_the_plain_readers_view(trace: Path, way: str, tmp_path: Path) -> None:
    engine_ = WAYS[way]
    if way == "j2":
        engine_ = Engine(jobs=2, split_bytes=trace.stat().st_size // 5 + 1, parallel_min_bytes=0)
    elif way != "serial":  # ranges of a few lines: the whole trace is read serial and by j2
        trace = excerpt(trace, tmp_path)
    assert_same(plain(trace), engine(trace, engine_))
    assert_same(plain(trace, pes_per_node=2), engine(trace, engine_, pes_per_node=2))


@pytest.mark.parametrize(
    "trace", TRACES, ids=[str(p.parent.relative_to(p.parents[2])) for p in TRACES]
)
def test_buffers_per_size_are_the_plain_readers(trace: Path, tmp_path: Path) -> None:
    try:
        chunks = list(iter_physical(trace, report=ReadReport()))
    except TraceFormatError:
        with pytest.raises(TraceFormatError):
            read_physical_buffers(trace, report=ReadReport(), engine=WAYS["tiny-ranges"])
        return
    for way in ("serial", "tiny-ranges"):
        path = trace if way == "serial" else excerpt(trace, tmp_path)  # tiny: a real one's ends
        if path != trace:
            chunks = list(iter_physical(path, report=ReadReport()))
        expected = physical_buffers(chunks)
        got = read_physical_buffers(path, report=ReadReport(), engine=WAYS[way])
        pd.testing.assert_frame_equal(expected, got)
        view, both = physical_view_and_buffers(path, report=ReadReport(), engine=WAYS[way])
        pd.testing.assert_frame_equal(expected, both)
        assert_same(plain(path), (view, view.report))


def damaged(path: Path) -> Path:
    """Every kind of line, program output and the PE map included, CRLF, NUL, a cut end."""
    lines = [
        b"Logical actor message trace enabled",
        *(f"PE:{i}, Node {i // 2}".encode() for i in range(4)),
        b"local_send, 64, 0, 1",
        b"",
        b"nonblock_send: 8192 1 3",
        b"  nonblock_progress , 0 , 1 , 3, t=0.25\r",
        b"local_send, 10x0, 2, 3",
        b"local_send, 64, -1, 2",
        b"nonblock_send, 99999999999999999999, 0, 2",
        b"local_send, 64, 3, 4294967296",
        b"\0\0\0\0",
        b"[PE 1] progress: done",
        *(f"local_send, {64 * (i % 3)}, {i % 4}, {(i * 7) % 4}".encode() for i in range(40)),
        b"nonblock_sendx, 1, 2, 3",
        b"   \t",
        b"local_send, 5, 1",
        *(f"nonblock_send, {i}, {i % 4}, {(i + 1) % 4}".encode() for i in range(30)),
        b"local_send, 8, 2",  # cut: no line end
    ]
    path.write_bytes(b"\n".join(lines))
    return path


def test_damaged_trace_every_way(tmp_path: Path) -> None:
    trace = damaged(tmp_path / "physical.txt")
    base = plain(trace)
    assert not isinstance(base[0], Exception)
    for way in WAYS.values():
        assert_same(base, engine(trace, way))
    # the examples name exact file lines, whatever the ranges
    report = engine(trace, WAYS["tiny-ranges"])[1]
    shown = {(e.line, e.reason) for e in report.files[0].examples}
    assert (10, "broken trace line (expected: send type, bytes, src_pe, dst_pe)") in shown
    assert (11, "negative value in src_pe") in shown
    assert (14, "NUL bytes (file blocks never written; the node probably crashed)") in shown
    f = report.files[0]
    assert f.lines_total == trace.read_bytes().count(b"\n") + 1
    assert f.skipped["program output"] == 7  # banner, four PE-map lines, progress, nonblock_sendx
    assert f.skipped["last line cut (no line end; the job was probably killed)"] == 1


@pytest.mark.parametrize("num_pes", [2, 3])
def test_pe_beyond_num_pes_same_error_and_line(tmp_path: Path, num_pes: int) -> None:
    trace = damaged(tmp_path / "physical.txt")
    base = plain(trace, num_pes=num_pes)
    assert isinstance(base[0], TraceFormatError) and base[0].line is not None
    for way in WAYS.values():
        assert_same(base, engine(trace, way, num_pes=num_pes))


def test_first_line_beyond_num_pes_whatever_the_column(tmp_path: Path) -> None:
    """dst_pe beyond on an earlier line than src_pe: the earlier line is named,
    however the file is cut into blocks (it used to depend on them)."""
    trace = tmp_path / "physical.txt"
    trace.write_text("local_send, 1, 0, 1\nlocal_send, 1, 0, 7\nlocal_send, 1, 9, 0\n")
    for way in WAYS.values():
        error, _ = engine(trace, way, num_pes=4)
        assert isinstance(error, TraceFormatError)
        assert (error.line, error.message.split(" but")[0]) == (2, "dst_pe 7")


def stray(path: Path, *, lines: int = 120) -> Path:
    """An 8-PE trace (PEs 0-7 all used, printf's lines only: the counted
    route reads it) with two lines naming a PE far beyond them."""
    rows = [b"local_send, %d, %d, %d\n" % (8 + k % 3, k % 8, (k * 3 + 1) % 8) for k in range(lines)]
    rows[lines // 3] = b"nonblock_send, 8192, 3, 16000000\n"
    rows[lines // 2] = b"local_send, 99999, 2000000, 1\n"  # its bytes counted nowhere
    path.write_bytes(b"".join(rows))
    return path


def test_stray_pe_id_is_skipped_and_warned_every_way(tmp_path: Path) -> None:
    """Without --num-pes, one line naming PE 16,000,000 in an 8-PE trace is
    skipped with its line and the run has 8 PEs, on every way (the counted
    route, byte ranges, workers, the cache cold and warm): it used to make
    16,000,001 PEs with no warning."""
    trace = stray(tmp_path / "physical.txt")  # stray lines 41 and 61
    base = plain(trace)
    view, report = base
    assert isinstance(view, PhysicalView)
    assert view.num_pes == 8 and view.matrices.max_buffer_bytes["local_send"] == 10
    assert len(view.pes) == 8
    (warning,) = report.warnings
    assert warning.startswith(f"{trace}:41: dst_pe 16,000,000 is far beyond the other PE ids (0-7)")
    assert "run of 16,000,001 PEs" in warning and "from 64 on are skipped: 2 line(s)" in warning
    (reason,) = report.files[0].skipped
    assert reason.startswith("PE id far beyond the other PE ids, 0-7 (ids from 64 on")
    assert [e.line for e in report.files[0].examples if e.reason == reason] == [41, 61]
    ways = {**WAYS, "cache": Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache")}
    ways["j2"] = Engine(jobs=2, split_bytes=trace.stat().st_size // 5 + 1, parallel_min_bytes=0)
    for way in ways.values():
        assert_same(base, engine(trace, way))
        assert_same(plain(trace, pes_per_node=4), engine(trace, way, pes_per_node=4))
    assert_same(base, engine(trace, ways["cache"]))  # warm: the warning said again
    expected = physical_buffers(list(iter_physical(trace, report=ReadReport())))
    assert set(expected["src_pe"]) | set(expected["dst_pe"]) == set(range(8))
    got = read_physical_buffers(trace, report=ReadReport(), engine=ways["tiny-ranges"])
    pd.testing.assert_frame_equal(expected, got)


def test_cli_stray_pe_id_leaves_an_8_pe_run(tmp_path: Path) -> None:
    trace = stray(tmp_path / "physical.txt")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["physical", str(trace), "-o", str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "inferred --num-pes 8 " in result.stderr
    assert f"warning: {trace}:41: dst_pe 16,000,000 is far beyond" in result.stderr
    assert len((out / "physical_pes.csv").read_text().splitlines()) == 1 + 8


def test_stray_pe_id_with_num_pes_is_still_an_error(tmp_path: Path) -> None:
    trace = stray(tmp_path / "physical.txt")
    base = plain(trace, num_pes=8)
    assert isinstance(base[0], TraceFormatError) and base[0].line == 41
    for way in WAYS.values():
        assert_same(base, engine(trace, way, num_pes=8))


@pytest.mark.parametrize(
    "ids",
    [
        [*range(8), 100, 16_000_000],  # both beyond: from the first gap on
        list(range(0, 3000, 3)),  # every third PE: no gap
        [0, *range(100, 600)],  # the bulk above PE 0: not stray
        [0, 5000],  # one id each side: which is stray is not said
        list(range(100)) + list(range(1000, 1101)),  # two halves: not a few stray ids
    ],
    ids=["two-beyond", "strided", "bulk-above", "two-ids", "halves"],
)
def test_stray_rule_on_id_sets(ids: list[int]) -> None:
    from actorprof.read import stray_pes

    found = stray_pes(np.array(ids))
    if ids[-1] == 16_000_000:
        assert found is not None
        assert (found.limit, found.first, found.last, found.largest) == (64, 0, 7, 16_000_000)
    else:
        assert found is None


def random_strays(path: Path, *, seed: int = 1) -> tuple[Path, int]:
    """An 8-PE trace with 20 lines naming random PE ids of up to 9 digits:
    more distinct ids than the run has, so the distinct-id rule alone
    keeps them (it made a run of about a billion PEs)."""
    rng = np.random.default_rng(seed)
    rows = [b"local_send, %d, %d, %d\n" % (8 + k % 3, k % 8, (k * 3 + 1) % 8) for k in range(400)]
    ids = rng.integers(1_000, 1_000_000_000, 20)
    for k, value in enumerate(ids):  # src or dst, among the run's lines
        row = b"nonblock_send, 64, %d, %d\n" % ((k % 8, value) if k % 2 else (value, k % 8))
        rows.insert(17 * k + 5, row)
    path.write_bytes(b"".join(rows))
    return path, len(ids)


def test_many_random_stray_ids_are_skipped_every_way(tmp_path: Path) -> None:
    """Twenty lines naming random PE ids in an 8-PE trace: the lines naming
    them are few, so all twenty are skipped and the run has 8 PEs, on every
    way. It used to infer a run of hundreds of millions of PEs (156 s and
    19 GB for the 8-PE example with these lines)."""
    trace, strays = random_strays(tmp_path / "physical.txt")
    base = plain(trace)
    view, report = base
    assert isinstance(view, PhysicalView), view
    assert view.num_pes == 8 and len(view.pes) == 8
    (reason,) = report.files[0].skipped
    assert reason.startswith("PE id far beyond the other PE ids, 0-7 (ids from 64 on")
    assert report.files[0].skipped[reason] == strays
    assert report.files[0].lines_read == 400
    (warning,) = report.warnings
    assert warning.startswith(f"{trace}:6: ") and f"skipped: {strays} line(s)" in warning
    ways = {**WAYS, "cache": Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache")}
    for way in ways.values():
        assert_same(base, engine(trace, way))
    assert_same(base, engine(trace, ways["cache"]))  # warm


def test_pe_ids_beyond_the_cap_are_skipped_every_way(tmp_path: Path) -> None:
    """A dense block of ids from 3,000,000 on, with more lines than the 8
    PEs below it: no gap splits them off, but no id from 2^20 on is read
    without --num-pes (per-PE tables cost O(N)), on every way."""
    rows = [b"local_send, 8, %d, %d\n" % (k % 8, (k + 1) % 8) for k in range(40)]
    far = 3_000_000
    rows += [b"local_send, 8, %d, %d\n" % (far + k % 100, far + k % 7) for k in range(200)]
    trace = tmp_path / "physical.txt"
    trace.write_bytes(b"".join(rows))
    base = plain(trace)
    view, report = base
    assert isinstance(view, PhysicalView), view
    assert view.num_pes == 8 and report.files[0].lines_read == 40
    reason = "PE id beyond 1,048,575 (pass --num-pes N if the run really had more PEs)"
    assert report.files[0].skipped == {reason: 200}
    (warning,) = report.warnings
    assert warning.startswith(f"{trace}:41: src_pe 3,000,000 is beyond 1,048,575, the largest")
    for way in WAYS.values():
        assert_same(base, engine(trace, way))


@pytest.mark.parametrize(
    ("ids", "lines", "limit"),
    [
        # a hundred ids of one line each above ten ids of 1,000 lines: stray
        ([*range(10), *range(100, 200), 10**7], [1000] * 10 + [1] * 101, 64),
        ([*range(10), *range(100, 200), 10**7], None, 400),  # by distinct ids alone
        # a hub: every line names PE 0, so the ids above it are not a minority
        ([0, *range(100, 600)], [500] + [1] * 500, None),
        ([*range(100), *range(1000, 1101)], [5] * 201, None),  # two halves
        ([0, 5000], [1000, 1], 64),  # one id each side: the lines say which is stray
        (list(range(2**20 + 5)), None, 2**20),  # the cap, without a gap
        ([2**21, 2**22], [5, 5], 2**20),  # every id beyond the cap
    ],
    ids=["few-lines", "distinct-only", "hub", "halves", "two-ids", "cap", "all-capped"],
)
def test_stray_rule_with_lines(ids: list[int], lines: list[int] | None, limit: int | None) -> None:
    from actorprof.read import stray_pes

    found = stray_pes(np.array(ids), None if lines is None else lambda: np.array(lines))
    assert (found and found.limit) == limit
    if found is not None:
        assert found.capped == (limit == 2**20)


def test_utf8_bom_at_the_start_is_not_text_every_way(tmp_path: Path) -> None:
    """A byte order mark before the first line: the line is read (it used to
    be program output, with no line number), on every way."""
    trace = tmp_path / "physical.txt"
    trace.write_bytes(
        b"\xef\xbb\xbfnonblock_send, 8192, 3, 1\n"
        + b"".join(b"local_send, 8, %d, %d\n" % (k % 4, (k + 1) % 4) for k in range(40))
    )
    base = plain(trace)
    view, report = base
    assert isinstance(view, PhysicalView)
    assert report.files[0].lines_read == 41 and not report.files[0].skipped
    assert view.matrices.by_type["nonblock_send"].messages == 1
    for way in WAYS.values():
        assert_same(base, engine(trace, way))
    # only the file's first bytes: a mark later in the file is text of its line
    trace.write_bytes(trace.read_bytes() + b"\xef\xbb\xbflocal_send, 8, 0, 1\n")
    base = plain(trace)
    assert base[1].files[0].skipped == {"program output": 1}
    for way in WAYS.values():
        assert_same(base, engine(trace, way))
    # a file holding only the mark and a cut line
    trace.write_bytes(b"\xef\xbb\xbflocal_send, 8, 0, 1")
    base = plain(trace)
    assert isinstance(base[0], TraceFormatError) and "last line cut" in str(base[0])
    for way in WAYS.values():
        assert_same(base, engine(trace, way))


@pytest.mark.parametrize(
    "content",
    [b"", b"hello\nworld\n", b"\0\0\0\n\0\0", b"local_send, 1, 2\nPE:0, Node 0\n", b"x" * 300],
    ids=["empty", "output", "nul", "broken", "one-long-line"],
)
def test_no_trace_line_same_error(tmp_path: Path, content: bytes) -> None:
    trace = tmp_path / "physical.txt"
    trace.write_bytes(content)
    base = plain(trace)
    assert isinstance(base[0], TraceFormatError)
    for way in WAYS.values():
        assert_same(base, engine(trace, way))


def test_missing_file_same_error(tmp_path: Path) -> None:
    for missing in (tmp_path / "nothing.txt", tmp_path):
        for way in WAYS.values():
            assert_same(plain(missing), engine(missing, way))


def test_partials_do_not_depend_on_cuts() -> None:
    rng = np.random.default_rng(1)
    n = 5000
    codes = rng.integers(0, 3, n).astype(np.int8)
    size = rng.choice(np.array([0, 64, 10_000, 2**32]), n).astype(np.int64)
    for pes in (8, 3000):  # the dense table, and the sorted keys
        src = rng.integers(0, pes, n).astype(np.int32)
        dst = rng.integers(0, pes, n).astype(np.int32)
        for sized in (False, True):
            whole = PhysicalPartial.of_block(codes, size, src, dst, sized=sized)
            cuts = [0, 1, 17, 2500, 4999, n]
            parts = [
                PhysicalPartial.of_block(codes[a:b], size[a:b], src[a:b], dst[a:b], sized=sized)
                for a, b in itertools.pairwise(cuts)
            ]
            joined = PhysicalPartial.join(parts)
            for name in ("links", "calls", "nbytes", "max_bytes", "sized_links", "sizes"):
                np.testing.assert_array_equal(getattr(whole, name), getattr(joined, name))
            assert whole.lines == joined.lines == n
            assert int(whole.calls.sum()) == n
            frame = pd.DataFrame(
                {"code": codes, "size": size, "src": src.astype(np.int64), "dst": dst}
            )
            sums = frame.groupby(["code", "src", "dst"])["size"].agg(["size", "sum"])
            np.testing.assert_array_equal(whole.calls, sums["size"].to_numpy())
            np.testing.assert_array_equal(whole.nbytes, sums["sum"].to_numpy())


@pytest.mark.parametrize("top", [7, 70_000, 2**31 - 1])  # packed in one key, or not
def test_rows_ordered_by_link_then_size_as_lexsort_orders_them(top: int) -> None:
    from actorprof.analyze.physical_partial import _by_link_and_size, _keys

    rng = np.random.default_rng(top)
    n = 4000
    links = _keys(rng.integers(0, 3, n), rng.integers(0, top + 1, n), rng.integers(0, top + 1, n))
    links[:50] = links[50]  # ties: one link, many sizes
    sizes = rng.choice(np.array([0, 8, 8192, 2**20]), n).astype(np.int64)
    for runs in (False, True):  # the parts of a join are sorted runs
        if runs:
            for a, b in itertools.pairwise([0, 1000, 1001, 2500, n]):
                run = np.lexsort((sizes[a:b], links[a:b])) + a
                links[a:b], sizes[a:b] = links[run], sizes[run]
        np.testing.assert_array_equal(_by_link_and_size(links, sizes), np.lexsort((sizes, links)))


def test_progress_told_the_whole_file(tmp_path: Path) -> None:
    trace = damaged(tmp_path / "physical.txt")
    seen: list[tuple[str, int, int]] = []

    class Sink:
        def begin(self, total: int, files: int) -> None:
            seen.append(("begin", total, files))

        def update(self, done: int, files: int) -> None:
            seen.append(("update", done, files))

        def close(self) -> None:
            pass

    reduce_physical(trace, report=ReadReport(), engine=WAYS["small-ranges"], progress=Sink())
    size = trace.stat().st_size
    assert seen[0] == ("begin", size, 1)
    assert seen[-1] == ("update", size, 1)
    assert [s[1] for s in seen[1:]] == sorted(s[1] for s in seen[1:])


def test_cli_physical_jobs_identical_files(tmp_path: Path) -> None:
    trace = damaged(tmp_path / "physical.txt")
    runner = CliRunner()
    outputs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        result = runner.invoke(
            main, ["physical", str(trace), "-o", str(out), "-j", jobs, "--no-cache"]
        )
        assert result.exit_code == 0, result.output
        outputs[jobs] = {
            p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.suffix in (".csv", ".json")
        }
        assert f"{trace}:10: broken trace line" in result.stderr
    assert outputs["1"] == outputs["2"]
    bad = runner.invoke(main, ["physical", str(trace), "--num-pes", "2", "-j", "2"])
    assert bad.exit_code == 1
    assert f"{trace}:8: dst_pe 3 but --num-pes is 2" in bad.stderr and "Traceback" not in bad.stderr
    usage = runner.invoke(main, ["physical", str(trace), "-j", "-1"])
    assert usage.exit_code == 2


def test_dask_local_cluster_identical(tmp_path: Path) -> None:
    if os.environ.get("CI") and not os.environ.get("ACTORPROF_NO_EXTRAS"):
        import distributed
    else:
        distributed = pytest.importorskip("distributed")
    trace = damaged(tmp_path / "physical.txt")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        way = Engine(scheduler=cluster.scheduler_address, split_bytes=100)
        assert_same(plain(trace), engine(trace, way))
        assert_same(plain(trace, num_pes=3), engine(trace, way, num_pes=3))


def test_cache_cold_warm_edited_damaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm read gives the cold read's view and accounting; an edited file
    (same size, mtime put back) is read again; a damaged entry is noted,
    ignored and rewritten; --num-pes and the per-size sums are in the key."""
    trace = damaged(tmp_path / "physical.txt")
    way = Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache", split_bytes=200)
    base = plain(trace)
    cold = engine(trace, way)
    with monkeypatch.context() as m:  # a warm read reads nothing
        m.setattr(physical_engine, "run_map", None)
        warm = engine(trace, way)
    assert_same(base, cold)
    assert_same(base, warm)
    entries = sorted((tmp_path / "cache" / "physical").glob("*.npz"))
    assert len(entries) == 1
    # the buffers per size are another entry (and the same frame warm)
    expected = physical_buffers(list(iter_physical(trace, report=ReadReport())))
    for _ in range(2):
        got = read_physical_buffers(trace, report=ReadReport(), engine=way)
        pd.testing.assert_frame_equal(expected, got)
    assert len(list((tmp_path / "cache" / "physical").glob("*.npz"))) == 2
    # --num-pes: its own entry, and its error is never cached
    for _ in range(2):
        assert_same(plain(trace, num_pes=3), engine(trace, way, num_pes=3))
        assert_same(plain(trace, num_pes=4), engine(trace, way, num_pes=4))
    # edited in place, same size, mtime put back: read again
    st = trace.stat()
    text = trace.read_bytes().replace(b"local_send, 64, 0, 1", b"local_send, 64, 0, 2", 1)
    trace.write_bytes(text)
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert_same(plain(trace), engine(trace, way))
    # damaged entry: a note, the right answer, and a good entry again
    for entry in (tmp_path / "cache" / "physical").glob("*.npz"):
        entry.write_bytes(entry.read_bytes()[:100])
    view, report = engine(trace, way)
    assert "is damaged" in report.notes.pop(0)  # the rest as the plain reader's
    assert_same(plain(trace), (view, report))
    again = engine(trace, way)
    assert_same(plain(trace), again)


def test_cache_entry_with_tampered_sums_is_refused(tmp_path: Path) -> None:
    trace = damaged(tmp_path / "physical.txt")
    way = Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache")
    engine(trace, way)
    (entry,) = (tmp_path / "cache" / "physical").glob("*.npz")
    with np.load(entry) as npz:
        arrays = dict(npz)
    arrays["calls"] = arrays["calls"] * 2  # disagrees with the line count
    with open(entry, "wb") as out:
        np.savez(out, **arrays)
    view, report = engine(trace, way)
    assert "is damaged" in report.notes.pop(0)
    assert_same(plain(trace), (view, report))


def test_cli_physical_uses_the_cache(tmp_path: Path) -> None:
    trace = damaged(tmp_path / "physical.txt")
    runner = CliRunner()
    env = {"ACTORPROF_CACHE_DIR": str(tmp_path / "cache")}
    results = [
        runner.invoke(
            main, ["physical", str(trace), "-o", str(tmp_path / f"o{i}"), "-j", "1"], env=env
        )
        for i in range(2)
    ]
    assert [r.exit_code for r in results] == [0, 0]
    assert results[0].stderr == results[1].stderr
    assert len(list((tmp_path / "cache" / "physical").glob("*.npz"))) == 1
    files = [
        {p.name: p.read_bytes() for p in (tmp_path / f"o{i}").iterdir() if p.suffix != ".png"}
        for i in range(2)
    ]
    assert files[0] == files[1]
    runner.invoke(
        main,
        ["physical", str(trace), "-o", str(tmp_path / "o3"), "--cache-dir", str(tmp_path / "c2")],
    )
    assert len(list((tmp_path / "c2" / "physical").glob("*.npz"))) == 1


@pytest.mark.parametrize("seed", range(6))
def test_a_send_types_pes_are_those_np_unique_finds(seed: int) -> None:
    """comm_partials lists each send type's PEs as np.unique of its sources
    and destinations would: small ids (a table of those seen), ids far
    beyond the links' count (sorted), none."""
    from actorprof.analyze.physical_partial import _distinct_ids

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 500))
    top = int(rng.choice([1, 50, 70_000, 2**31 - 1]))
    src = np.sort(rng.integers(0, top, n))
    dst = rng.integers(0, top, n)
    got = _distinct_ids(src, dst)
    np.testing.assert_array_equal(got, np.unique(np.r_[src, dst]))
    assert got.dtype == np.int64
    codes = rng.integers(0, 3, n)
    part = PhysicalPartial.of_block(codes, rng.integers(0, 99, n), src, dst)
    for code, partial in enumerate(part.comm_partials().values()):
        mine = codes == code
        np.testing.assert_array_equal(partial.pe, np.unique(np.r_[src[mine], dst[mine]]))


def test_ten_digit_pe_ids_are_pe_ids_every_way(tmp_path: Path) -> None:
    """A PE id of 10 digits within int32 is a PE id (far beyond the others,
    or beyond --num-pes), as in the logical trace; beyond int32 it is too
    large. Ten digits used to be "too large" whatever the value."""
    trace = tmp_path / "physical.txt"
    rows = [b"local_send, 8, %d, %d\n" % (k % 8, (k + 1) % 8) for k in range(80)]
    rows.insert(10, b"local_send, 8, 0, 1500000000\n")
    rows.insert(20, b"local_send, 8, 2147483648, 1\n")
    trace.write_bytes(b"".join(rows))
    base = plain(trace)
    view, report = base
    assert isinstance(view, PhysicalView) and view.num_pes == 8
    (far,) = [r for r in report.files[0].skipped if r.startswith("PE id far beyond")]
    assert report.files[0].skipped == {far: 1, "number too large for src_pe": 1}
    for way in WAYS.values():
        assert_same(base, engine(trace, way))
    failed = plain(trace, num_pes=8)
    assert isinstance(failed[0], TraceFormatError) and failed[0].line == 11
    for way in WAYS.values():
        assert_same(failed, engine(trace, way, num_pes=8))


@pytest.mark.parametrize("top", [7, 3000, 2**31 - 1])  # packed in one key, or not
@pytest.mark.parametrize("seed", range(3))
def test_a_sized_join_is_a_group_by_whatever_the_parts(top: int, seed: int) -> None:
    """Rows per (link, size) and per link of a join equal a pandas group-by,
    for every cut into parts (empty ones too), with the running sums' way
    (per-link sums left out, the parts let go) and without."""
    rng = np.random.default_rng(seed)
    n = 3000
    codes = rng.integers(0, 3, n).astype(np.int8)
    big = 2**40 if top > 2**20 else 2**20  # 3 x top^2 x 2^41 does not fit 63 bits
    size = rng.choice(np.array([0, 64, 10_000, big]), n).astype(np.int64)
    src = rng.integers(0, top + 1, n).astype(np.int64)
    dst = rng.integers(0, top + 1, n).astype(np.int64)
    src[:40], dst[:40] = top, top  # one link, many sizes, at the largest id
    frame = pd.DataFrame({"code": codes.astype(np.int64), "src": src, "dst": dst, "size": size})
    rows = frame.groupby(["code", "src", "dst", "size"]).size().reset_index(name="calls")
    links = frame.groupby(["code", "src", "dst"])["size"].agg(["size", "sum"]).reset_index()
    cuts = sorted({0, 17, n, *rng.integers(0, n, 4).tolist()})
    parts = [
        PhysicalPartial.of_block(codes[a:b], size[a:b], src[a:b], dst[a:b], sized=True)
        for a, b in itertools.pairwise([0, *cuts])
    ]
    whole = PhysicalPartial.join(parts)
    owned = list(parts)
    running = PhysicalPartial.join(owned, per_link=False, consume=True)
    assert owned == []  # let go as read
    assert running.links.size == 0 and running.sized_links.size
    for joined in (whole, running.with_link_sums()):
        np.testing.assert_array_equal(joined.sized_links >> np.uint64(62), rows["code"])
        ends = joined.sized_links.astype(np.int64)
        np.testing.assert_array_equal((ends >> 31) & 0x7FFFFFFF, rows["src"])
        np.testing.assert_array_equal(ends & 0x7FFFFFFF, rows["dst"])
        np.testing.assert_array_equal(joined.sizes, rows["size"])
        np.testing.assert_array_equal(joined.sized_calls, rows["calls"])
        np.testing.assert_array_equal(joined.links >> np.uint64(62), links["code"])
        np.testing.assert_array_equal(joined.calls, links["size"])
        np.testing.assert_array_equal(joined.nbytes, links["sum"])
        assert joined.lines == n
        np.testing.assert_array_equal(joined.pe_ids(), np.unique(np.r_[src, dst]))

"""Small whole files as columns: the map's groups (``SmallFiles``), the
unit's clean files (``CleanFiles``) and the report's ``FileColumns`` give
what the per-file route gives, file by file, for groups mixing clean and
odd files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from actorprof import ReadReport, iter_logical
from actorprof.analyze.matrix import CommAccumulator, CommPartial
from actorprof.engine import Engine, reduce_logical
from actorprof.engine.batch import reduce_small_files
from actorprof.engine.map import reduce_range
from actorprof.engine.run import Item, Unit, run_unit
from actorprof.read import FileColumns, FileReport


def assert_same_partial(got: CommPartial, want: CommPartial) -> None:
    """Two compacted partials hold the same cells, PEs, messages and times."""
    for name in ("src", "dst", "counts", "nbytes", "pe", "node"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    assert (got.messages, got.time_min, got.time_max) == (
        want.messages,
        want.time_min,
        want.time_max,
    )


def mixed_trace(folder: Path, *, pes: int = 60) -> Path:
    """Small PE files, most canonical; some odd, spread among them."""
    rng = np.random.default_rng(5)
    folder.mkdir(parents=True, exist_ok=True)
    for pe in range(pes):
        lines = [
            f"{pe // 8}, {pe}, {dst // 8}, {dst}, {8 * (1 + i % 3)}, 1721400000.{i * 7 + pe:06d}"
            for i, dst in enumerate(rng.integers(0, pes, size=int(rng.integers(3, 20))))
        ]
        if pe == 7:
            lines.insert(2, "Running on 60 PEs")  # noise: skipped
        if pe == 13:
            lines[1] = lines[1].replace(f"{pe // 8}, {pe}, ", "0, 2, ", 1)  # src_pe != 13
        if pe == 21:
            lines.insert(1, "")  # a blank line
        if pe == 34:
            lines = []  # an empty file
        if pe == 40:
            lines[0] = lines[0].rsplit(", ", 1)[0]  # 5 columns: not canonical
        if pe == 41:
            lines[2] = "0, 41, 900, 7200, 8, 1721400000.000003"  # a stray PE id
        if pe == 50:
            lines = lines[:1]  # one line
        text = "\n".join(lines) + ("\n" if lines else "")
        if pe == 55:
            text += "0, 55, 0, 1, 8, 17214"  # a cut last line
        (folder / f"PE{pe}_send.csv").write_text(text)
    return folder


def test_a_unit_of_mixed_files_gives_each_file_its_own_accounting(tmp_path: Path) -> None:
    folder = mixed_trace(tmp_path / "run")
    paths = sorted(folder.glob("PE*_send.csv"), key=lambda p: int(p.name[2:].split("_")[0]))
    items = tuple(Item(i, str(p), 0, None, i, small=True) for i, p in enumerate(paths))
    grouped = reduce_small_files(
        [(str(p), i) for i, p in enumerate(paths)], pe_limit=120, block_bytes=1000
    )
    assert len(grouped) >= 50 and 13 in grouped.at and 7 not in grouped.at  # most in groups
    for packed in (False, True):
        unit = Unit(items, pe_limit=120, reason="stray", block_bytes=1000, packed=packed)
        result = run_unit(unit)
        assert result.clean is not None
        clean = {int(k): j for j, k in enumerate(result.clean.at)}
        # the files with a skipped line (noise, stray id, cut line) are not clean
        assert {7, 41, 55} == set(range(len(items))) - set(clean)
        assert {13, 21, 34, 40, 50} <= set(clean)  # read in groups or alone, nothing skipped
        total = CommPartial()
        for k, item in enumerate(items):
            alone = reduce_range(item.path, 0, None, file_pe=item.pe, pe_limit=120, reason="stray")
            assert alone.partial is not None
            want = alone.partial.compact()
            total.merge(want)
            if k in clean:
                j = clean[k]
                assert result.ranges[k] is None
                assert result.clean.lines_read[j] == alone.report.lines_read
                assert result.clean.lines_blank[j] == alone.report.lines_blank
                assert result.clean.bytes_read[j] == alone.report.bytes_read
                assert result.clean.mismatched[j] == alone.mismatched
            else:
                got = result.ranges[k]
                assert got is not None
                assert got.report == alone.report and got.mismatched == alone.mismatched
            if packed:
                assert result.packed is not None
                assert_same_partial(result.packed.part(k).compact(), want)
        assert result.clean.mismatched[clean[13]] == 1
        assert result.clean.lines_blank[clean[21]] == 1
        summed = total.compact()
        for name in ("src", "dst", "counts", "nbytes", "pe", "node"):
            np.testing.assert_array_equal(getattr(result.total, name), getattr(summed, name))
        assert result.total.messages == summed.messages
        assert (result.total.time_min, result.total.time_max) == (
            summed.time_min,
            summed.time_max,
        )


def plain_report(path: Path) -> ReadReport:
    report = ReadReport(kind="logical")
    acc = CommAccumulator(None)
    for chunk in iter_logical(path, report=report):
        acc.add(chunk)
    return report


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_report_of_columns_is_the_plain_readers(tmp_path: Path, jobs: int) -> None:
    """Read before its files are made reports (the summary JSON is written
    so), and after: the same text, sums and summaries as the plain reader."""
    folder = mixed_trace(tmp_path / "run")
    want = plain_report(folder)
    report = ReadReport(kind="logical")
    way = Engine(jobs=jobs, split_bytes=2000, block_bytes=700, parallel_min_bytes=0)
    reduce_logical(folder, report=report, engine=way)
    assert any(isinstance(f, FileColumns) for f in report._pending)  # not made yet
    assert json.dumps(report.to_dict()) == json.dumps(want.to_dict())  # key order too
    assert report.file_count == len(want.files)
    assert report.file_pes() == [f.pe for f in want.files]
    assert (report.lines_read, report.lines_skipped, report.bytes_read) == (
        want.lines_read,
        want.lines_skipped,
        want.bytes_read,
    )
    assert report.skipped_summary() == want.skipped_summary()
    assert report.expected_summary() == want.expected_summary()
    assert report.warnings == want.warnings  # the src_pe warning of PE 13, in file order
    assert any("PE13_send.csv" in w for w in report.warnings)
    assert report.files == want.files
    assert not report._pending
    assert json.dumps(report.to_dict()) == json.dumps(want.to_dict())


def test_file_columns_become_reports_in_file_order() -> None:
    columns = FileColumns(
        ["a", "b"],
        [0, None],
        ["x", None],
        np.array([3, 0]),
        np.array([1, 0]),
        np.array([40, 0]),
    )
    report = ReadReport(kind="logical")
    report.files.append(FileReport("first", pe=9, lines_read=1))
    report.add_files([columns, FileReport("last", pe=2, skipped={"noise": 1})])
    assert report.file_count == 4 and report.file_pes() == [9, 0, None, 2]
    assert (report.lines_read, report.lines_skipped, report.bytes_read) == (4, 1, 40)
    dicts = report.to_dict()["files"]
    assert [d["path"] for d in dicts] == ["first", "a", "b", "last"]
    assert report.files == [
        FileReport("first", pe=9, lines_read=1),
        FileReport("a", 0, "x", 3, 1, 40),
        FileReport("b", None, None, 0, 0, 0),
        FileReport("last", pe=2, skipped={"noise": 1}),
    ]
    assert report.to_dict()["files"] == dicts
    assert [f.to_dict() for f in report.files] == dicts
    report.files = []  # set: what was pending goes too
    assert report.file_count == 0 and report.to_dict()["files"] == []


# a short list is indented, a long one not (and written a slice of items at a time)
@pytest.mark.parametrize("count", [3, 1500, 9000])
def test_file_entries_as_text_are_written_as_their_dicts(count: int) -> None:
    from actorprof._text import JsonText
    from actorprof.write import iter_json

    names = ['odd "name"\\', "dé", "ph\udcff", "PE1_send.csv"]
    columns = FileColumns(
        [f"/run/{names[i % 4]}{i}" for i in range(count)],
        [None if i % 5 == 0 else i for i in range(count)],
        [None] * count,
        np.arange(count) * 7,
        np.arange(count) % 2,
        np.arange(count) * 1000,
    )
    report = ReadReport(kind="logical")
    report.add_files([FileReport("/run/x", pe=1, skipped={"noise": 2}), columns])
    # reports that skipped nothing (the timeline's) are written as text too,
    # those around a skipped line or columns as well
    clean = [
        FileReport(f"/run/{names[i % 4]}r{i}", i or None, None, i, i % 3, 9 * i) for i in range(4)
    ]
    report.add_files([*clean[:2], FileReport("/run/y", pe=2, skipped={"noise": 1}), *clean[2:]])
    report.add_files([FileReport("/run/z", pe=3, lines_read=np.int64(5), bytes_read=np.int64(50))])
    entries = report.file_entries()
    assert sum(type(e) is JsonText for e in entries) == count + 5
    as_dicts = {"files": report.to_dict()["files"]}
    assert "".join(iter_json({"files": entries})) == "".join(iter_json(as_dicts))


@pytest.mark.parametrize("high", [5, 1 << 40, -3])  # one key; too wide for one; negative
def test_sorted_rows_is_lexsorts_order(high: int) -> None:
    from actorprof.engine.batch import _sorted_rows

    rng = np.random.default_rng(2)
    for n in (0, 1, 7, 500):
        columns = (
            np.sort(rng.integers(0, 4, n)),
            rng.integers(min(high, 0), max(high, 1), n),
            rng.integers(0, 3, n),
        )
        order, first = _sorted_rows(*columns)
        want = np.lexsort(columns[::-1])
        np.testing.assert_array_equal(order, want)
        rows = np.stack([c[want] for c in columns], axis=1)
        changed = np.r_[True, (rows[1:] != rows[:-1]).any(axis=1)][:n]
        np.testing.assert_array_equal(first, changed)


@pytest.mark.parametrize("n", [0, 3, 10, 6000])
def test_top_pair_rows_are_the_top_pairs(n: int) -> None:
    """The summary takes the top pairs' bytes by their rows (not by a search
    of 2 M pairs): the rows are those of the top pairs, in their order."""
    import pandas as pd

    from actorprof.analyze.matrix import top_pair_rows, top_pairs_at, top_pairs_of

    rng = np.random.default_rng(4)
    size = 20_000  # beyond 4 x 1024: the top is found by partition, ties included
    pairs = pd.DataFrame(
        {
            "src_pe": rng.integers(0, 300, size),
            "dst_pe": rng.integers(0, 300, size),
            "messages": rng.integers(0, 6, size),
        }
    ).drop_duplicates(["src_pe", "dst_pe"], ignore_index=True)
    pairs["bytes"] = pairs["messages"] * 8 + pairs["src_pe"]
    rows = top_pair_rows(pairs, n)
    top = top_pairs_of(pairs, n)
    pd.testing.assert_frame_equal(top_pairs_at(pairs, rows), top)
    want = pairs[pairs["messages"] > 0].sort_values(
        ["messages", "src_pe", "dst_pe"], ascending=[False, True, True]
    )[:n]
    np.testing.assert_array_equal(rows, want.index.to_numpy())
    keyed = pairs.set_index(["src_pe", "dst_pe"])["bytes"]
    looked_up = keyed.reindex(pd.MultiIndex.from_arrays([top["src_pe"], top["dst_pe"]]))
    np.testing.assert_array_equal(pairs["bytes"].to_numpy()[rows], looked_up.to_numpy())


@pytest.mark.parametrize("n", [1, 7, 100, 5000])
@pytest.mark.parametrize(
    "kind", ["random", "mostly ones", "mostly twos", "all equal", "floats", "unlike the sample"]
)
def test_the_nth_largest_is_that_of_a_sort(kind: str, n: int) -> None:
    """The top pairs' threshold, found without partitioning nearly equal values
    near their end (0.6 s for 2 M counts of 1 with a few 2s)."""
    from actorprof.analyze.matrix import _nth_largest

    rng = np.random.default_rng(n)
    size = 50_000
    values = {
        "random": lambda: rng.integers(0, 10**12, size),
        "mostly ones": lambda: np.where(rng.random(size) < 0.99, 1, 2),
        "mostly twos": lambda: np.where(rng.random(size) < 0.99, 2, 1),
        "all equal": lambda: np.full(size, 3),
        "floats": lambda: rng.random(size),
        # the largest values all at the sampled positions (every 12th): the
        # values at or above the cut are fewer than 5,000
        "unlike the sample": lambda: np.where(
            np.arange(size) % 12 == 0, 10**6, np.arange(size) % 7
        ),
    }[kind]()
    assert _nth_largest(values, n) == np.sort(values)[-n]

"""The pairs per message size from the logical read itself (``sizes=True``).

The aggregation routes one conveyor per message size. The logical read
counts the pairs that mix sizes per size in its own map and reduce steps
(``CommMatrices.mixed_sizes``), so the aggregation never reads the trace a
second time. Every way (serial, ranges, batches, processes, Dask, the
cache) must give exactly what that second read gave
(``pair_table(logical_pairs(iter_logical(...)))``), and the same pairs and
line accounting as a read without the sizes.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from actorprof import ReadReport, iter_logical
from actorprof.analyze.conveyors import logical_pairs, pair_table, pairs_by_size
from actorprof.analyze.matrix import CommAccumulator, CommMatrices, CommPartial
from actorprof.cli import main
from actorprof.engine import Engine, reduce_logical
from actorprof.kinds import aggregation as aggregation_kind
from actorprof.kinds.aggregation import (
    aggregation_view,
    build_aggregation_view,
    read_physical_buffers,
)
from actorprof.kinds.logical import logical_view
from actorprof.report.run import run_report

from .conftest import EXAMPLES, trace_heads
from .test_engine import WAYS, assert_same, engine, fixtures, noisy_trace, plain

REAL = Path(__file__).resolve().parent / "data" / "real"
DATA = Path(__file__).resolve().parent / "data"


def second_read(path: Path, **kw: Any) -> pd.DataFrame:
    """What the aggregation read before: the trace again, per size."""
    return pair_table(logical_pairs(iter_logical(path, report=ReadReport(), **kw)))


def sized(path: Path, way: Engine, **kw: Any) -> tuple[CommMatrices, ReadReport]:
    report = ReadReport(kind="logical")
    acc = reduce_logical(path, report=report, engine=way, sizes=True, **kw)
    return acc.result(kw.get("num_pes")), report


def mixed_trace(folder: Path, *, pes: int = 8, lines: int = 1500, seed: int = 5) -> Path:
    """PE files whose pairs mix message sizes: some always one size, some two
    sizes whose mean is whole (8 and 24: 16), some three; lines of other
    sources in a file (the pair then comes from two files), noise lines in
    one file."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for pe in range(pes):
        out = []
        for i in range(lines):
            dst = int(rng.integers(0, pes))
            if (pe + dst) % 3 == 0:
                size = 16  # one size
            elif (pe + dst) % 3 == 1:
                size = (8, 24)[i % 2]  # mean 16: bytes / messages is whole
            else:
                size = (8, 16, 40)[int(rng.integers(0, 3))]
            src = pe if i % 97 else (pe + 1) % pes  # a line of another source
            out.append(f"{src // 4}, {src}, {dst // 4}, {dst}, {size}, 1721412345.{i:06d}\n")
            if pe == 3 and i % 1013 == 5:  # the other files go the small-file route
                out.append("progress: not a trace line\n")
        (folder / f"PE{pe}_send.csv").write_text("".join(out))
    return folder


def mixed_run(folder: Path) -> Path:
    """A run folder: the mixed trace beside the 8-PE ig example's physical trace."""
    mixed_trace(folder / "logical")
    shutil.copytree(REAL / "ig_8pe_2nodes" / "physical", folder / "physical")
    return folder


def test_accumulator_counts_the_sizes_of_each_pair() -> None:
    frame = pd.DataFrame(
        {
            "src_node": [0] * 7,
            "src_pe": [0, 0, 0, 0, 1, 1, 2],
            "dst_node": [0] * 7,
            "dst_pe": [1, 1, 1, 2, 0, 0, 2],
            "msg_bytes": [8, 24, 8, 16, 8, 8, 4],
        }
    )
    acc = CommAccumulator(sizes=True)
    acc.add(frame.iloc[:3])
    acc.add(frame.iloc[3:])
    mats = acc.result()
    assert mats.pairs.to_dict("list") == {
        "src_pe": [0, 0, 1, 2],
        "dst_pe": [1, 2, 0, 2],
        "messages": [3, 1, 2, 1],
        "bytes": [40, 16, 16, 4],
    }
    # (0, 1) carries 8, 24, 8: 40 bytes in 3 messages; the others one size each
    assert mats.mixed_sizes is not None
    assert mats.mixed_sizes.to_dict("list") == {
        "src_pe": [0, 0],
        "dst_pe": [1, 1],
        "msg_bytes": [8, 24],
        "messages": [2, 1],
    }
    # without the sizes: the same pairs, no sizes
    plain = CommAccumulator()
    plain.add(frame)
    pd.testing.assert_frame_equal(plain.result().pairs, mats.pairs)
    assert plain.result().mixed_sizes is None
    table = pairs_by_size(mats.pairs, mats.mixed_sizes)
    assert table.to_dict("list") == {
        "src_pe": [0, 0, 0, 1, 2],
        "dst_pe": [1, 1, 2, 0, 2],
        "msg_bytes": [8, 24, 16, 8, 4],
        "messages": [2, 1, 1, 2, 1],
        "payload_bytes": [16, 24, 16, 16, 4],
    }


def test_whole_mean_is_still_two_sizes() -> None:
    # 8 and 24 B: 32 B in 2 messages looks like 2 of 16 B from the pair's sums
    frame = pd.DataFrame(
        {"src_node": 0, "src_pe": [0, 0], "dst_node": 0, "dst_pe": [1, 1], "msg_bytes": [8, 24]}
    )
    acc = CommAccumulator(sizes=True)
    acc.add(frame)
    mats = acc.result()
    assert mats.mixed_sizes is not None
    assert mats.mixed_sizes["msg_bytes"].tolist() == [8, 24]
    pd.testing.assert_frame_equal(
        pairs_by_size(mats.pairs, mats.mixed_sizes), second_read_of(frame)
    )


def second_read_of(frame: pd.DataFrame) -> pd.DataFrame:
    return pair_table(logical_pairs(frame))


@pytest.mark.parametrize("seed", range(6))
def test_partials_merged_in_any_order_count_as_a_groupby(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3000
    big = seed % 2 == 1  # ids and sizes too wide for one int64 key: lexsort
    frame = pd.DataFrame(
        {
            "src_node": 0,
            "src_pe": rng.integers(0, 6, n) + (2**20 if big else 0),
            "dst_node": 0,
            "dst_pe": rng.integers(0, 6, n) + (2**20 if big else 0),
            "msg_bytes": rng.choice([4, 8, 2**32 - 8 if big else 12], n),
        }
    )
    parts = []
    for chunk in np.array_split(rng.permutation(n), 7):
        part = CommPartial()
        part.add_frame(frame.iloc[np.sort(chunk)], sizes=True)
        parts.append(part.compact(sizes=True) if seed % 3 else part)
    acc = CommAccumulator(sizes=True)
    for part in parts:
        acc.add_partial(part)
    mats = acc.result()
    assert mats.mixed_sizes is not None
    pd.testing.assert_frame_equal(
        pairs_by_size(mats.pairs, mats.mixed_sizes), second_read_of(frame), check_exact=True
    )
    plain = CommAccumulator()
    plain.add(frame)
    pd.testing.assert_frame_equal(plain.result().pairs, mats.pairs)


Reference = tuple[tuple[CommMatrices, ReadReport], pd.DataFrame]


def _check(path: Path, way: Engine, reference: Reference | None = None, **kw: Any) -> CommMatrices:
    """``reference``: the read without the sizes and the second read, when
    already made (the same for every way)."""
    mats, report = sized(path, way, **kw)
    without, second = reference or (engine(path, way, **kw), second_read(path, **kw))
    assert_same(without, (mats, report))  # pairs, accounting: as without
    assert mats.mixed_sizes is not None
    got = pairs_by_size(mats.pairs, mats.mixed_sizes)
    pd.testing.assert_frame_equal(got, second, check_exact=True)
    return mats


@pytest.fixture(scope="module")
def every_way_cases(
    tmp_path_factory: pytest.TempPathFactory,
) -> list[tuple[Path, dict[str, Any], Reference]]:
    """The traces every way reads, with the plain reader's read (without the
    sizes) and the second read of each, made once for all the ways. The
    shipped examples' PE files cut to their first 2,000 lines (~68 kB each:
    still several ranges and blocks per file on the ranged ways)."""
    root = tmp_path_factory.mktemp("every_way")
    examples = root / "examples"
    for run in ("ig_8pe_2nodes", "histo_4pe"):
        trace_heads(EXAMPLES / run / "logical", examples / run / "logical", 2000)
    mixed = mixed_trace(root / "mixed")
    noisy = noisy_trace(root / "noisy")  # sizes 8, 16, 24 per pair; bad lines
    cases = [*fixtures(DATA, examples), (mixed, {}), (noisy, {}), (mixed, {"num_pes": 6})]
    return [(path, kw, (plain(path, **kw), second_read(path, **kw))) for path, kw in cases]


@pytest.mark.parametrize("way", list(WAYS))
def test_every_way_gives_the_second_read(
    every_way_cases: list[tuple[Path, dict[str, Any], Reference]], way: str
) -> None:
    for path, kw, reference in every_way_cases:
        mats = _check(path, WAYS[way], reference, **kw)
        if (path.name, kw) == ("mixed", {}):
            mixed = mats
    assert mixed.mixed_sizes is not None and len(mixed.mixed_sizes) > 0


def test_sizes_mixed_across_ranges_of_one_file(tmp_path: Path) -> None:
    mixed = mixed_trace(tmp_path / "mixed", pes=2, lines=1000)  # 2 files of ~34 kB
    for split in (200, 2_000, 20_000):  # a pair's sizes met in different ranges
        _check(mixed, Engine(jobs=1, split_bytes=split, block_bytes=256))
    _check(mixed, Engine(jobs=2, split_bytes=3_000, parallel_min_bytes=0))
    # the cache keeps a file's ranges merged: per size too (written, then used)
    cached = Engine(jobs=1, split_bytes=5_000, cache=True, cache_dir=tmp_path / "cache")
    _check(mixed, cached)
    _check(mixed, cached)


def test_cached_run_has_the_sizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mixed = mixed_trace(tmp_path / "mixed")
    cache = tmp_path / "cache"
    expected = second_read(mixed)
    plain = logical_view(mixed, jobs=1, report=ReadReport())

    def table(way: Engine) -> pd.DataFrame:
        mats, _ = sized(mixed, way)
        assert mats.mixed_sizes is not None
        return pairs_by_size(mats.pairs, mats.mixed_sizes)

    # an entry written without the sizes is not used for them: read again
    logical_view(mixed, cache_dir=cache, report=ReadReport())
    for jobs in (1, 2):
        way = Engine(jobs=jobs, cache=True, cache_dir=cache, parallel_min_bytes=0)
        pd.testing.assert_frame_equal(table(way), expected)
    # now the entry has them: a second run reads no file
    import actorprof.engine.run as run

    def no_read(*args: Any, **kw: Any) -> Any:
        raise AssertionError("a cached trace was read again")

    monkeypatch.setattr(run, "run_unit", no_read)
    for jobs in (1, 2):
        way = Engine(jobs=jobs, cache=True, cache_dir=cache)
        pd.testing.assert_frame_equal(table(way), expected)
    # a read without the sizes uses that entry too: the same pairs
    cached = logical_view(mixed, cache_dir=cache, report=ReadReport())
    pd.testing.assert_frame_equal(cached.matrices.pairs, plain.matrices.pairs)
    assert cached.matrices.mixed_sizes is None


def test_one_changed_file_keeps_the_others_sizes(tmp_path: Path) -> None:
    mixed = mixed_trace(tmp_path / "mixed")
    way = Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache")
    sized(mixed, way)
    with open(mixed / "PE3_send.csv", "a") as out:
        out.write("0, 3, 1, 5, 40, 1721412399.000000\n0, 3, 1, 5, 8, 1721412399.000001\n")
    _check(mixed, way)


def test_dask_gives_the_second_read(tmp_path: Path) -> None:
    if os.environ.get("CI") and not os.environ.get("ACTORPROF_NO_EXTRAS"):
        import distributed
    else:
        distributed = pytest.importorskip("distributed")
    mixed = mixed_trace(tmp_path / "mixed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        _check(mixed, Engine(scheduler=cluster.scheduler_address, split_bytes=20_000))


def _no_second_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: Any, **kw: Any) -> Any:
        raise AssertionError("the aggregation read the logical trace a second time")

    monkeypatch.setattr(aggregation_kind, "iter_logical", refused)


@pytest.mark.parametrize("jobs", [1, 2])
def test_aggregation_view_reads_the_trace_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    run = mixed_run(tmp_path / "run")
    # the old route: a view without the sizes, read a second time per size
    lview = logical_view(run / "logical", jobs=1, report=ReadReport())
    physical = run / "physical" / "physical.txt"
    buffers = read_physical_buffers(physical, report=ReadReport())
    old = build_aggregation_view(lview, buffers, layouts="2x4,1x8", physical_path=str(physical))
    assert any("second time" in note for note in old.notes)
    _no_second_read(monkeypatch)
    for cache in (False, True):
        for _ in range(2):  # cached: the entry written, then used
            view = aggregation_view(
                run,
                engine=Engine(jobs=jobs, cache=cache, cache_dir=tmp_path / "cache"),
                layouts="2x4,1x8",
                physical_report=ReadReport(),
                logical_report=ReadReport(),
            )
            pd.testing.assert_frame_equal(view.pairs, old.pairs, check_exact=True)
            pd.testing.assert_frame_equal(view.layouts, old.layouts)
            assert view.links is not None and old.links is not None
            pd.testing.assert_frame_equal(view.links, old.links)
            assert view.verdict == old.verdict
            assert view.notes[0] == "some PE pairs mix message sizes (one conveyor per size)"
            assert view.totals()["messages"] == old.totals()["messages"]


def test_report_and_aggregation_command_read_the_trace_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = mixed_run(tmp_path / "run")
    lview = logical_view(run / "logical", jobs=1, report=ReadReport())
    expected = build_aggregation_view(lview, None).pairs
    _no_second_read(monkeypatch)
    report = run_report(run, jobs=1)
    assert report.aggregation is not None
    pd.testing.assert_frame_equal(report.aggregation.pairs, expected, check_exact=True)
    for jobs in ("1", "2"):
        out = tmp_path / f"agg{jobs}"
        result = CliRunner().invoke(
            main, ["aggregation", str(run), "-o", str(out), "-q", "-j", jobs, "--no-cache"]
        )
        assert result.exit_code == 0, result.output
        summary = json.loads((out / "aggregation_summary.json").read_text())
        assert summary["totals"]["messages"] == int(expected["messages"].sum())
        assert "some PE pairs mix message sizes (one conveyor per size)" in summary["notes"]


def test_logical_command_does_not_count_the_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mixed = mixed_trace(tmp_path / "mixed")
    seen: list[bool] = []
    import actorprof.kinds.logical as logical_kind

    real = logical_kind.reduce_logical

    def spy(*args: Any, **kw: Any) -> Any:
        seen.append(kw.get("sizes", False))
        return real(*args, **kw)

    monkeypatch.setattr(logical_kind, "reduce_logical", spy)
    result = CliRunner().invoke(
        main, ["logical", str(mixed), "-o", str(tmp_path / "out"), "-q", "-j", "1", "--no-cache"]
    )
    assert result.exit_code == 0, result.output
    assert seen == [False]

"""The first read of a trace with the cache on, planned by file count.

Without an entry for the trace nothing is stat'ed before the read: the
workers take each file's stat before they read it, and the entry is written
from the map's columns (no object per file). The entry must then serve the
next run as one written from stats taken first would.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from actorprof.analyze.matrix import CommPartial
from actorprof.engine import Engine
from actorprof.engine import run as engine_run
from actorprof.engine.cache import TraceCache
from actorprof.engine.map import Packed
from actorprof.engine.run import Item, Unit, run_unit
from actorprof.read import file_stat

from .test_cache import small_trace, trace_opens
from .test_engine import assert_same, engine, plain

OPTIONS = {
    "columns": ["src_node", "src_pe", "dst_node", "dst_pe", "msg_bytes", "time_s"],
    "reader": 2,
}


def random_partial(rng: np.random.Generator, *, empty: bool = False) -> CommPartial:
    n = 0 if empty else int(rng.integers(0, 6))
    m = 0 if empty else int(rng.integers(0, 4))
    low, high = sorted(rng.random(2).tolist())
    return CommPartial(
        rng.integers(0, 9, n),
        rng.integers(0, 9, n),
        rng.integers(1, 5, n),
        rng.integers(8, 64, n),
        rng.integers(0, 9, m),
        rng.integers(0, 3, m),
        messages=int(rng.integers(0, 100)),
        time_min=None if rng.random() < 0.3 else low,
        time_max=high,
    )


def assert_packed_equal(a: Packed, b: Packed) -> None:
    assert a.arrays.keys() == b.arrays.keys()
    for name in a.arrays:
        np.testing.assert_array_equal(a.arrays[name], b.arrays[name])
        assert a.arrays[name].dtype == b.arrays[name].dtype == np.int64
    for name in ("cell_ends", "pair_ends", "messages", "times"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        assert getattr(a, name).dtype == getattr(b, name).dtype


@pytest.mark.parametrize("seed", range(8))
def test_packed_take_and_join_are_packing_again(seed: int) -> None:
    """``take`` and ``join`` give what packing the partials again would."""
    rng = np.random.default_rng(seed)
    parts = [random_partial(rng, empty=rng.random() < 0.2) for _ in range(int(rng.integers(0, 12)))]
    packed = Packed.of(parts)
    order = rng.permutation(len(parts))
    some = order[: int(rng.integers(0, len(parts) + 1))]
    for at in (order, some, np.arange(len(parts)), np.zeros(0, np.int64)):
        assert_packed_equal(packed.take(at), Packed.of([parts[i] for i in at]))
    cut = int(rng.integers(0, len(parts) + 1))
    pieces = [Packed.of(parts[:cut]), Packed.of([]), Packed.of(parts[cut:])]
    assert_packed_equal(Packed.join(pieces), packed)
    assert_packed_equal(Packed.join([packed]), packed)
    assert_packed_equal(Packed.join([]), Packed.of([]))


def test_a_unit_stats_each_whole_file_before_reading_it(tmp_path: Path) -> None:
    """Every item of a unit kept for the cache comes back with its stat: those
    read in groups, those left out of them (empty, noisy), a unit of one
    file, and none for a file that cannot be opened."""
    folder = small_trace(tmp_path / "run", pes=6, lines=20)
    (folder / "PE4_send.csv").write_text("")
    (folder / "PE5_send.csv").write_text("noise\n2, 5, 0, 1, 8, 1.5\n")
    paths = [str(folder / f"PE{pe}_send.csv") for pe in range(6)]
    missing = str(folder / "PE6_send.csv")

    def unit(*pes: int, packed: bool = True) -> Unit:
        items = tuple(
            Item(k, paths[pe] if pe < 6 else missing, 0, None, pe, True) for k, pe in enumerate(pes)
        )
        return Unit(items, None, "", packed=packed)

    for pes in ((0, 1, 2, 3, 4, 5, 6), (3,), (5, 0)):
        result = run_unit(unit(*pes))
        assert result.stats is not None
        expected = [file_stat(paths[pe]) if pe < 6 else None for pe in pes]
        rows = [None if row[0] < 0 else tuple(row) for row in result.stats.tolist()]
        assert rows == expected
    assert run_unit(unit(0, 1, packed=False)).stats is None


@pytest.mark.parametrize("jobs", [1, 2])
def test_first_read_by_count_stats_nothing_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """No entry: planned by count, no file stat'ed before the read, the same
    numbers as the plain reader; the entry holds each file's stat and
    accounting, serves a second run that reads nothing, and a file changed
    after it is read again alone."""
    folder = small_trace(tmp_path / "run", pes=40, lines=20)
    (folder / "PE7_send.csv").write_text("Running on 40 PEs\n3, 7, 0, 1, 8, 1.000000\n")
    (folder / "PE8_send.csv").write_text("4, 8, 0, 1, 8, 1.000000\n4, 8, 0, 2, 8, 1.5")
    (folder / "PE9_send.csv").write_text("")
    (folder / "PE11_send.csv").write_text("0, 3, 0, 1, 8, 1.000000\n5, 11, 0, 1, 16, 3.25\n")
    cache_dir = tmp_path / "cache"
    way = Engine(
        jobs=jobs, cache=True, cache_dir=cache_dir, count_plan_files=16, parallel_min_bytes=0
    )
    stated: list[int] = []
    real = engine_run.stat_planned
    monkeypatch.setattr(
        engine_run, "stat_planned", lambda files, report: (stated.append(1), real(files, report))
    )
    ref = plain(folder)
    cold = engine(folder, way)
    assert stated == []
    assert_same(ref, cold)

    cache = TraceCache(cache_dir)
    key = cache.key(folder, phase=None, options={**OPTIONS, "pe_limit": cold[1].pe_limit})
    assert key is not None
    with np.load(cache_dir / "logical" / f"{key}.npz") as npz:
        stats = npz["stats"]
        accounting = npz["accounting"]
        meta = bytes(npz["meta"]).decode()
    names = json.loads(meta)["names"]
    assert sorted(names) == sorted(f"PE{pe}_send.csv" for pe in range(40))
    for name, row, counts in zip(names, stats.tolist(), accounting.tolist(), strict=True):
        assert tuple(row) == file_stat(folder / name)
        report = next(f for f in ref[1].files if Path(f.path).name == name)
        assert counts[:3] == [report.lines_read, report.lines_blank, report.bytes_read]

    opened = trace_opens(monkeypatch)
    warm = engine(folder, Engine(jobs=1, cache=True, cache_dir=cache_dir, count_plan_files=16))
    assert opened == [] and stated == [1]
    assert_same(ref, warm)

    with open(folder / "PE3_send.csv", "a") as handle:
        handle.write("1, 3, 0, 0, 8, 1721412399.000001\n")
    again = engine(folder, Engine(jobs=1, cache=True, cache_dir=cache_dir, count_plan_files=16))
    assert set(opened) == {str(folder / "PE3_send.csv")}
    assert_same(plain(folder), again)

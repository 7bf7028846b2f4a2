"""Small whole files read into one buffer, and the map's sum-only route.

``joined_small_files`` must give each file exactly the text
``small_file_text`` gives it (or leave it out the same way), and the map's
groups without per-file partials (``per_file=False``, the run without a
cache) must sum to what the per-file partials sum to.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from actorprof.engine.batch import _line_cells, reduce_small_files
from actorprof.engine.run import Item, Unit, run_unit
from actorprof.read import file_stat, joined_small_files, small_file_text
from actorprof.read._joined import _joined_by_text

from .test_small_files_columns import assert_same_partial, mixed_trace


def odd_files(folder: Path) -> list[str]:
    """Files of every kind small_file_text answers for, in one list."""
    folder.mkdir()
    texts = {
        "a": b"0, 0, 1, 1, 8, 1.000001\n",
        "empty": b"",
        "cut": b"0, 0, 1, 1, 8, 1.000001\n0, 0, 1",
        "big": b"0, 0, 1, 1, 8, 1.000001\n" * 20,  # 480 bytes: over the limit
        "exact": b"x" * 99 + b"\n",  # 100 bytes: at the limit
        "over": b"x" * 100 + b"\n",  # 101 bytes: one over
        "crlf": b"0, 0, 1, 1, 8, 1.000001\r\n",
        "b": b"1\n2\n3\n",
    }
    paths = []
    for name, text in texts.items():
        (folder / name).write_bytes(text)
        paths.append(str(folder / name))
    (folder / "dir").mkdir()
    paths += [str(folder / "missing"), str(folder / "dir")]
    rng = np.random.default_rng(4)
    for i in range(40):  # many small ones: several groups
        lines = rng.integers(1, 5)
        (folder / f"s{i}").write_bytes(b"".join(b"%d, %d\n" % (i, k) for k in range(lines)))
        paths.append(str(folder / f"s{i}"))
    return paths


@pytest.mark.parametrize("route", ["readv", "text"])
@pytest.mark.parametrize("group_bytes", [1, 37, 100, 10_000])
def test_joined_files_are_small_file_texts(tmp_path: Path, route: str, group_bytes: int) -> None:
    if route == "readv" and not hasattr(os, "readv"):
        pytest.skip("no os.readv here")
    paths = odd_files(tmp_path / "run")
    limit = 100
    read = joined_small_files if route == "readv" else _joined_by_text
    stats: dict[int, Any] = {}
    groups = list(read(paths, limit, group_bytes, stats))
    # each file's stat as it was opened: those left out of the groups too
    assert stats == {i: st for i, p in enumerate(paths) if (st := file_stat(p)) is not None}
    assert len(stats) == len(paths) - 1  # all but the missing one
    want = {i: t for i, p in enumerate(paths) if (t := small_file_text(p, limit)) is not None}
    got: dict[int, bytes] = {}
    for k, group in enumerate(groups):
        assert len(group.text) == group.offsets[-1] and group.offsets[0] == 0
        if k < len(groups) - 1:
            assert len(group.text) >= group_bytes  # only the last group is short
        for j, i in enumerate(group.at.tolist()):
            text = group.text[group.offsets[j] : group.offsets[j + 1]]
            got[i] = text
            assert group.lines[j] == text.count(b"\n")
        half = len(group) // 2
        for part in (group.part(0, half), group.part(half, len(group))):
            assert part.text == b"".join(got[i] for i in part.at.tolist())
            np.testing.assert_array_equal(part.lines, [got[i].count(b"\n") for i in part.at])
    assert got == want
    names = {Path(paths[i]).name for i in got}
    assert {"a", "exact", "crlf", "b"} <= names
    assert not {"empty", "cut", "big", "over", "missing", "dir"} & names


def many_pe_trace(folder: Path, *, pes: int, wide: bool = False) -> list[tuple[str, int | None]]:
    """PE files of nearly distinct lines (the ``every_line`` route), one
    naming another PE, one without a PE; ``wide``: ids and sizes too wide
    to sort (src, dst, bytes) as one int64."""
    folder.mkdir()
    rng = np.random.default_rng(9)
    files: list[tuple[str, int | None]] = []
    for pe in range(pes):
        n = int(rng.integers(1, 30))
        dst = rng.integers(0, 10**9 if wide else pes, n)  # keys of at most 32 bytes
        size = rng.integers(2**31 if wide else 1, 2**32 if wide else 5000, n)
        src = np.full(n, pe)
        if pe == 5:
            src[0] = 3  # a line of another PE
        lines = [
            f"{0 if wide else s // 4}, {s}, {0 if wide else d // 4}, {d}, {b}, "
            f"17214000{pe % 10}.{k:06d}\n"
            for k, (s, d, b) in enumerate(zip(src, dst, size, strict=True))
        ]
        if pe == 200 and not wide:
            lines.append(f"77, {pe}, 0, 0, 8, 1721400000.000001\n")  # a PE on two nodes
        lines.append(lines[0])  # a cell twice
        path = folder / f"PE{pe}_send.csv"
        path.write_text("".join(lines))
        files.append((str(path), None if pe == 7 else int(src[-1])))
    return files


@pytest.mark.parametrize("sizes", [False, True])
@pytest.mark.parametrize("wide", [False, True])
def test_the_sum_only_route_sums_the_per_file_partials(
    tmp_path: Path, wide: bool, sizes: bool
) -> None:
    files = many_pe_trace(tmp_path / "run", pes=300, wide=wide)
    files += _mixed(tmp_path)
    by_file = reduce_small_files(files, pe_limit=None, block_bytes=2000, sizes=sizes)
    summed = reduce_small_files(files, pe_limit=None, block_bytes=2000, per_file=False, sizes=sizes)
    assert summed.packed is None and by_file.packed is not None
    for name in ("at", "lines", "bytes_read", "mismatched"):
        np.testing.assert_array_equal(getattr(summed, name), getattr(by_file, name))
    assert len(summed) > 300 and summed.mismatched.sum() == 3  # PE 5 twice, PE 13 of the mix
    want, got = by_file.packed.total().compact(sizes=sizes), summed.total.compact(sizes=sizes)
    if sizes:  # pairs that mix sizes keep a cell per size
        assert len(got.src) > len(summed.total.compact().src)
    assert_same_partial(got, want)
    assert got.messages == int(summed.lines.sum())


def _mixed(tmp_path: Path) -> list[tuple[str, int | None]]:
    folder = mixed_trace(tmp_path / "mixed")
    return [(str(folder / f"PE{pe}_send.csv"), pe) for pe in range(60)]


@pytest.mark.parametrize("sizes", [False, True])
def test_line_cells_are_the_lines_grouped(sizes: bool) -> None:
    rng = np.random.default_rng(3)
    for high in (3, 70_000, 2**31 - 1):
        n = 2000
        src = np.sort(rng.integers(0, high, n))
        dst, size = rng.integers(0, high, n), rng.integers(0, 2**32 if high > 9 else 4, n)
        frame = pd.DataFrame({"src": src, "dst": dst, "size": size, "key": size})
        by = ["src", "dst", "key"] if sizes else ["src", "dst"]
        want = frame.groupby(by)["size"].agg(["count", "sum"]).reset_index()
        got = _line_cells(src, dst, size, sizes=sizes)
        for column, array in zip(("src", "dst", "count", "sum"), got, strict=True):
            np.testing.assert_array_equal(array, want[column].to_numpy(np.int64))
    assert all(len(a) == 0 for a in _line_cells(*(np.zeros(0, np.int64),) * 3))


def test_distinct_pairs_are_np_uniques() -> None:
    from actorprof.engine.batch import _distinct_pairs

    rng = np.random.default_rng(6)
    pe = rng.integers(0, 5000, 20_000)
    node = pe // 16
    got = _distinct_pairs(pe, node)
    want = np.unique(np.c_[pe, node], axis=0)
    np.testing.assert_array_equal(np.c_[got], want)
    node[7] += 1  # a PE on two nodes, ids too large, negative: left to the compaction
    for args in ((pe, node), (pe + 2**40, node), (pe - 1, pe)):
        assert all(a is b for a, b in zip(_distinct_pairs(*args), args, strict=True))


def test_units_travel_as_columns(tmp_path: Path) -> None:
    items = tuple(
        Item(i, f"/run/PE{i}.csv", 0 if i % 3 else 10 * i, None if i % 2 else 99, i, i % 4 == 0)
        for i in range(50)
    )
    unit = Unit(items, pe_limit=8, reason="stray", block_bytes=123, packed=True)
    back = pickle.loads(pickle.dumps(unit))
    assert back == unit and all(type(item) is Item for item in back.items)
    empty = Unit((), pe_limit=None, reason="")
    assert pickle.loads(pickle.dumps(empty)) == empty


def test_a_unit_without_the_cache_sums_what_the_cached_unit_keeps(tmp_path: Path) -> None:
    files = many_pe_trace(tmp_path / "run", pes=120) + _mixed(tmp_path)
    items = tuple(Item(i, p, 0, None, pe, small=True) for i, (p, pe) in enumerate(files))
    plain = run_unit(Unit(items, pe_limit=None, reason="", block_bytes=1500))
    cached = run_unit(Unit(items, pe_limit=None, reason="", block_bytes=1500, packed=True))
    for name in ("src", "dst", "counts", "nbytes", "pe", "node", "messages", "time_min"):
        assert np.array_equal(getattr(plain.total, name), getattr(cached.total, name)), name
    assert plain.clean is not None and cached.clean is not None
    for name in ("at", "lines_read", "lines_blank", "bytes_read", "mismatched"):
        np.testing.assert_array_equal(getattr(plain.clean, name), getattr(cached.clean, name))
    assert plain.ranges == cached.ranges


def test_reading_leaves_the_garbage_collector_as_it_was(tmp_path: Path) -> None:
    import gc

    from actorprof import ReadReport
    from actorprof.engine import Engine, reduce_logical
    from actorprof.errors import ActorProfError

    folder = mixed_trace(tmp_path / "run")
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            reduce_logical(folder, report=ReadReport(), engine=Engine(jobs=1))
            assert gc.isenabled() == enabled
        gc.enable()
        with pytest.raises(ActorProfError):  # no trace there: raised with the collector back
            reduce_logical(tmp_path / "none", report=ReadReport(), engine=Engine(jobs=1))
        assert gc.isenabled()
    finally:
        gc.enable()

"""The engine (fast tokenizer, byte ranges, processes, cache, Dask) vs the plain reader.

Every way of reading must give the plain reader's result bit for bit:
matrices, pe_node, messages, times, and every FileReport field (line
accounting, skip reasons, example lines), and the same errors.
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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actorprof import ReadReport, TraceFormatError, UsageError, iter_logical
from actorprof.analyze.matrix import CommAccumulator, CommMatrices
from actorprof.cli import main
from actorprof.engine import Engine, reduce_logical
from actorprof.kinds.logical import logical_view
from actorprof.read._fastscan import BlockBuffer, KeyTable, tokenize_block

from .conftest import DATA, EXAMPLES, Recorder, snapshot, trace_heads

Result = tuple[CommMatrices, ReadReport]


def plain(path: Path, **kw: Any) -> Result:
    report = ReadReport(kind="logical")
    acc = CommAccumulator(kw.get("num_pes"))
    for chunk in iter_logical(path, report=report, **kw):
        acc.add(chunk)
    return acc.result(kw.get("num_pes")), report


def engine(path: Path, engine: Engine, **kw: Any) -> Result:
    report = ReadReport(kind="logical")
    acc = reduce_logical(path, report=report, engine=engine, **kw)
    return acc.result(kw.get("num_pes")), report


def assert_same(a: Result, b: Result, *, notes: bool = True) -> None:
    (ma, ra), (mb, rb) = a, b
    pd.testing.assert_frame_equal(ma.pairs, mb.pairs)  # the dense matrices derive from it
    pd.testing.assert_series_equal(ma.pe_node, mb.pe_node)
    assert ma.messages == mb.messages
    assert ma.time_min_s == mb.time_min_s and ma.time_max_s == mb.time_max_s
    assert ma.node_conflicts == mb.node_conflicts
    assert ra.files == rb.files  # every FileReport field, examples included
    assert ra.to_dict() == rb.to_dict()
    if notes:
        assert ra.notes == rb.notes


WAYS = {
    "serial": Engine(jobs=1),
    "small-blocks": Engine(jobs=1, block_bytes=997),
    "ranges": Engine(jobs=1, split_bytes=40_000, block_bytes=4096),
    "jobs2-ranges": Engine(jobs=2, split_bytes=150_000, parallel_min_bytes=0),
    "batches": Engine(jobs=1, split_bytes=10**6, block_bytes=1 << 20),
    "jobs2-batches": Engine(jobs=2, split_bytes=30_000, block_bytes=20_000, parallel_min_bytes=0),
}


def fixtures(data: Path, examples: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [
        (data / "logical_small", {}),
        (data / "logical_bad", {}),
        (data / "logical_bad", {"num_pes": 4}),
        (data / "logical_dat", {}),
        (data / "logical_phases", {}),
        (data / "logical_phases", {"phase": "bfs"}),
        (data / "logical_small" / "PE1_send.csv", {}),
        (examples / "ig_8pe_2nodes" / "logical", {"num_pes": 8}),
        (examples / "histo_4pe" / "logical", {}),
    ]


#: Lines kept of each PE file of a shipped example: files of 170 KB, still
#: cut in ranges by every way (``jobs2-ranges``: 150 KB) and read in blocks.
EXAMPLE_HEAD_LINES = 5_000


@pytest.fixture(scope="module")
def plain_fixtures(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, Any, Result]]:
    """:func:`fixtures` (the examples' heads in place of the whole 7 MB of
    examples, read by every way), each with the plain reader's result, read
    once for every way."""
    base = tmp_path_factory.mktemp("heads")
    cases = []
    for path, kw in fixtures(DATA, EXAMPLES):
        if path.is_relative_to(EXAMPLES):
            path = trace_heads(path, base / path.parent.name, EXAMPLE_HEAD_LINES)
            assert max(p.stat().st_size for p in path.iterdir()) > WAYS["jobs2-ranges"].split_bytes
        cases.append((path, kw, plain(path, **kw)))
    return cases


@pytest.mark.parametrize("way", list(WAYS))
def test_fixtures_identical(plain_fixtures: list[tuple[Path, Any, Result]], way: str) -> None:
    for path, kw, ref in plain_fixtures:
        assert_same(ref, engine(path, WAYS[way], **kw))
    tiny = Engine(jobs=1, split_bytes=30, block_bytes=50)  # every line its own range
    for path, kw, ref in plain_fixtures[:7]:
        assert_same(ref, engine(path, tiny, **kw))


def noisy_trace(folder: Path, *, seed: int = 3) -> Path:
    """PE files with noise, blank lines, CRLF, bad numbers and cut last lines."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for pe in range(4):
        lines = []
        for i in range(3000):
            dst = int(rng.integers(0, 6))
            line = f"{pe // 2}, {pe}, {dst // 2}, {dst}, {[8, 16, 24][i % 3]}, 17214{i:05d}.{i:06d}"
            r = rng.random()
            if r < 0.002:
                line = "Running triangle counting on 4 PEs"
            elif r < 0.004:
                line = ""
            elif r < 0.005:
                line += "\r"
            elif r < 0.006:
                line = line.replace(f", {dst}, ", ", -1, ", 1)
            elif r < 0.007:
                line = f"{pe // 2}, {pe}, 0, 1, 8"  # 5 columns among 6
            elif r < 0.008:
                line = f"{pe // 2}, {pe}, 0, 99999999999, 8, 1.000000"
            lines.append(line)
        text = "\n".join(lines) + "\n"
        if pe == 1:
            text += "0, 1, 0, 2, 8, 1721"  # cut by a killed job
        if pe == 2:
            text = text.replace("\n", "\r\n", 50)
        if pe == 3:
            text = "0, 3, 0, 1, 8, 1.000000\n" * 10 + "0, 7, 0, 1, 8, 1.000000\n" + text
        (folder / f"PE{pe}_send.csv").write_text(text)
    return folder


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`noisy_trace`, made once for the tests that only read it."""
    return noisy_trace(tmp_path_factory.mktemp("noisy") / "run")


@pytest.fixture(scope="module")
def noisy_plain(noisy: Path) -> Result:
    return plain(noisy)


@pytest.mark.parametrize("way", list(WAYS))
def test_noisy_trace_identical(noisy: Path, noisy_plain: Result, way: str) -> None:
    ref = noisy_plain
    assert ref[1].lines_skipped > 0 and ref[1].warnings  # the trace is really noisy
    assert_same(ref, engine(noisy, WAYS[way]))


def test_one_file_split_in_many_ranges(noisy: Path) -> None:
    single = noisy / "PE1_send.csv"
    ref = plain(single)
    for split in (1000, 4096, 10**9):
        assert_same(ref, engine(single, Engine(jobs=1, split_bytes=split)))


def _ends(folder: Path, dest: Path, lines: int) -> Path:
    """A copy of ``folder``: the first ``lines`` lines of each file, and its
    cut last line if it has one."""
    dest.mkdir()
    for path in sorted(folder.iterdir()):
        parts = path.read_bytes().split(b"\n")  # the last one: b"" or a cut line
        (dest / path.name).write_bytes(b"\n".join(parts[:lines] + parts[-1:]))
    return dest


def test_errors_identical(tmp_path: Path, noisy: Path) -> None:
    # the noisy files' first quarter (and PE1's cut last line): every kind of
    # noise still, in ranges of a few lines each (300 bytes), a quarter as many
    folder = _ends(noisy, tmp_path / "run", 750)
    jobs2 = Engine(jobs=2, split_bytes=300, parallel_min_bytes=0)
    for kw, way in [({"num_pes": 4}, jobs2), ({"num_pes": 2}, Engine())]:
        # ids beyond --num-pes: the same lines skipped, with the same file:line, every way
        ref, got = plain(folder, **kw), engine(folder, way, **kw)
        assert_same(ref, got)
        assert any(r.startswith("PE id beyond") for f in ref[1].files for r in f.skipped)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "PE0_send.csv").write_text("0, 0, 0, 1, 8, 1.000000\n")
    (tmp_path / "bad" / "PE1_send.csv").write_text("hello\nworld\n")
    with pytest.raises(TraceFormatError, match=r"PE1_send.csv:1: no line of this file"):
        engine(tmp_path / "bad", Engine(jobs=2, parallel_min_bytes=0))


def test_cache_hit_is_identical_and_never_in_the_trace(
    tmp_path: Path, examples: Path, noisy: Path
) -> None:
    trace = trace_heads(
        examples / "ig_8pe_2nodes" / "logical", tmp_path / "run", EXAMPLE_HEAD_LINES
    )
    cache = tmp_path / "cache"
    for folder in (trace, noisy):
        before = snapshot(folder)
        ref = plain(folder)
        cold = engine(folder, Engine(cache=True, cache_dir=cache))
        entries = sorted(cache.rglob("*.npz"))
        warm = engine(folder, Engine(cache=True, cache_dir=cache))
        assert_same(ref, cold)
        assert_same(ref, warm)
        assert sorted(cache.rglob("*.npz")) == entries
        assert snapshot(folder) == before
    assert len(list(cache.rglob("*.npz"))) == 2  # one entry per trace folder


def test_default_cache_dir_is_outside_the_trace(tmp_path: Path, examples: Path) -> None:
    trace = tmp_path / "run"
    shutil.copytree(examples / "histo_4pe" / "logical", trace)
    before = snapshot(trace)
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    result = CliRunner(env=env).invoke(main, ["logical", str(trace), "-o", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert snapshot(trace) == before
    assert list((tmp_path / "xdg" / "actorprof" / "logical").rglob("*.npz"))


def test_cache_invalidated_when_a_file_changes(tmp_path: Path, data: Path) -> None:
    trace = tmp_path / "run"
    shutil.copytree(data / "logical_small", trace)
    way = Engine(cache=True, cache_dir=tmp_path / "cache")
    engine(trace, way)
    f = trace / "PE0_send.csv"
    stat = f.stat()
    # same size, new content, new mtime
    text = f.read_text().replace("0, 0, 0, 1, 8,", "0, 0, 0, 2, 8,", 1)
    f.write_text(text)
    os.utime(f, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert f.stat().st_size == stat.st_size
    assert_same(plain(trace), engine(trace, way))
    f.write_text(text + "0, 0, 0, 1, 8, 2.000000\n")  # new size
    assert_same(plain(trace), engine(trace, way))


def test_corrupt_cache_entries_are_recomputed(tmp_path: Path, data: Path) -> None:
    trace = data / "logical_bad"
    way = Engine(cache=True, cache_dir=tmp_path / "cache")
    ref = plain(trace)
    engine(trace, way)
    entries = list((tmp_path / "cache").rglob("*.npz"))
    assert entries
    assert len(entries) == 1
    good = entries[0].read_bytes()
    for damage in (b"", b"PK\x03\x04 not a zip", good[: len(good) // 2], _swap_arrays(good)):
        entries[0].write_bytes(damage)
        got = engine(trace, way)
        assert_same(ref, got, notes=False)  # a note says why the trace was read again
        assert any("cache entry" in n and "damaged" in n for n in got[1].notes)
        assert_same(ref, engine(trace, way))  # the rewritten entry is good again


def _swap_arrays(entry: bytes) -> bytes:
    """A well-formed .npz whose offsets no longer match its arrays."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(entry)) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "src.npy":
                arr = np.load(io.BytesIO(data))
                buf = io.BytesIO()
                np.save(buf, arr[:-1])
                data = buf.getvalue()
            dst.writestr(name, data)
    return out.getvalue()


def _with_value(entry: bytes, name: str, index: tuple[int, ...], value: float) -> bytes:
    """The entry with one value of array ``name`` changed: key, names and shapes intact."""
    import io

    with np.load(io.BytesIO(entry)) as npz:
        arrays = {k: npz[k].copy() for k in npz.files}
    arrays[name][index] = value
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "index", "value"),
    [
        ("src", (1,), 10**12),  # was an IndexError ("internal error")
        ("dst", (0,), -5),  # was "out of memory"
        ("pe", (0,), 2**40),  # was read silently
        ("counts", (0,), 2**62),  # was an internal error in the imbalance
        ("nbytes", (0,), -7),  # was read silently: wrong byte totals
        ("times", (0, 0), np.inf),
    ],
)
def test_cache_entry_with_damaged_values_is_recomputed(
    tmp_path: Path, data: Path, name: str, index: tuple[int, ...], value: float
) -> None:
    trace = data / "logical_small"
    way = Engine(cache=True, cache_dir=tmp_path / "cache")
    ref = plain(trace)
    engine(trace, way)
    (entry,) = list((tmp_path / "cache").rglob("*.npz"))
    entry.write_bytes(_with_value(entry.read_bytes(), name, index, value))
    got = engine(trace, way)
    assert_same(ref, got, notes=False)
    assert any("cache entry" in n and "damaged (ValueError" in n for n in got[1].notes)


def test_cached_trace_checked_against_num_pes(tmp_path: Path, data: Path) -> None:
    way = Engine(cache=True, cache_dir=tmp_path / "cache")
    engine(data / "logical_small", way)
    _, report = engine(data / "logical_small" / "PE0_send.csv", way, num_pes=2)
    examples = [(e.line, e.reason) for f in report.files for e in f.examples]
    assert (3, "PE id beyond --num-pes 2") in examples  # not the cached read without a limit


def test_dask_local_cluster_identical(noisy: Path, noisy_plain: Result, data: Path) -> None:
    # the test extra installs it: never skipped in CI, but by .ci/no_extras
    if os.environ.get("CI") and not os.environ.get("ACTORPROF_NO_EXTRAS"):
        import distributed
    else:
        distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        address = cluster.scheduler_address
        way = Engine(scheduler=address, split_bytes=20_000)
        assert_same(noisy_plain, engine(noisy, way))
        assert_same(plain(data / "logical_bad"), engine(data / "logical_bad", way))
        view = logical_view(data / "logical_small", scheduler=address)
        assert view.summary()["totals"]["messages"] == 10


@pytest.fixture
def http_port() -> Any:
    """A local HTTP server (what a Dask dashboard is) on a free port."""
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    # polled every 0.05 s, not 0.5 s: shut down at once
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("http", "gave no Dask answer within 1 s"),
        ("garbage!!::", "is not a Dask address"),
        ("http://localhost:8787", "is not a Dask address (unknown address scheme 'http'"),
    ],
)
def test_a_wrong_scheduler_address_is_a_usage_error_in_bounded_time(
    address: str,
    said: str,
    http_port: int,
    noisy: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The dashboard's HTTP port, or garbage, given as --scheduler: exit 2 within the
    time limit (it hung for minutes, or printed a traceback a minute later)."""
    import time

    pytest.importorskip("distributed")
    if address == "http":
        address = f"tcp://127.0.0.1:{http_port}"
    monkeypatch.setenv("ACTORPROF_SCHEDULER_TIMEOUT", "1")
    folder = noisy
    start = time.monotonic()
    result = CliRunner().invoke(
        main,
        ["logical", str(folder), "--no-cache", "--scheduler", address, "-o", str(tmp_path / "o")],
    )
    assert time.monotonic() - start < 8
    assert result.exit_code == 2, result.output
    assert said in result.stderr and address in result.stderr
    assert "port 8787 is its dashboard" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    if said != "gave no Dask answer within 1 s":
        return  # the library's own timeout, below: one port, whatever the address above
    with pytest.raises(UsageError, match=r"gave no Dask answer within 0\.5 s"):
        reduce_logical(
            folder,
            report=ReadReport(kind="logical"),
            engine=Engine(scheduler=f"tcp://127.0.0.1:{http_port}", scheduler_timeout=0.5),
        )


def test_a_bad_scheduler_timeout_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setenv("ACTORPROF_SCHEDULER_TIMEOUT", "soon")
    result = CliRunner().invoke(
        main,
        [
            "logical",
            str(noisy_trace(tmp_path / "run")),
            "--no-cache",
            "--scheduler",
            "tcp://127.0.0.1:1",
            "-o",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2 and "ACTORPROF_SCHEDULER_TIMEOUT='soon'" in result.stderr


def test_progress_reports_bytes_and_files(noisy: Path) -> None:
    folder = noisy
    progress = Recorder()
    reduce_logical(
        folder,
        report=ReadReport(),
        engine=Engine(jobs=2, split_bytes=10_000, parallel_min_bytes=0),
        progress=progress,
    )
    calls = progress.updates
    total = sum(p.stat().st_size for p in folder.iterdir())
    assert progress.begun == [(total, 4)]
    assert calls[-1] == (total, 4)
    assert calls == sorted(calls)


def test_cli_jobs_and_cache_give_the_same_files(tmp_path: Path, examples: Path) -> None:
    trace = str(examples / "ig_8pe_2nodes" / "logical")
    outputs = []
    for extra in (["--no-cache", "--jobs", "1"], ["--jobs", "2"], ["--jobs", "2"]):
        out = tmp_path / f"o{len(outputs)}"
        args = ["logical", trace, "-o", str(out), "--cache-dir", str(tmp_path / "c"), *extra]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        summary = json.loads((out / "logical_summary.json").read_text())
        outputs.append(
            (
                summary,
                (out / "logical_counts.csv").read_text(),
                (out / "logical_pes.csv").read_text(),
            )
        )
    assert outputs[0] == outputs[1] == outputs[2]


GOOD = st.builds(
    lambda a, b, c, d, e, t: f"{a}, {b}, {c}, {d}, {e}, {t // 10**6}.{t % 10**6:06d}",
    st.integers(0, 3),
    st.integers(0, 12),
    st.integers(0, 3),
    st.integers(0, 4099),
    st.sampled_from([8, 16, 4096]),
    st.integers(1_700_000_000_000_000, 1_800_000_000_000_000),
)
BAD = st.one_of(
    st.text(alphabet="0123456789, .-\r\tx", max_size=30),
    st.sampled_from(["", "\r", "0, 1, 2, 3, 4", "0, 1, 2, 3, 4, 5.5", "0,1,2,3,4,5.000000"]),
    GOOD.map(lambda s: s.replace(", ", ",  ", 1)),
    GOOD.map(lambda s: s[:-1]),
    GOOD.map(lambda s: "0" + s),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.one_of(GOOD, GOOD, GOOD, BAD), min_size=1, max_size=60),
    block=st.sampled_from([40, 200, 1 << 20]),
    end=st.sampled_from(["\n", ""]),
)
def test_fast_and_exact_parsers_agree(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], block: int, end: str
) -> None:
    folder = tmp_path_factory.mktemp("h")
    (folder / "PE0_send.csv").write_text("\n".join(lines) + end, newline="")
    try:
        ref = plain(folder)
    except TraceFormatError as exc:
        with pytest.raises(TraceFormatError) as got:
            engine(folder, Engine(block_bytes=block, split_bytes=block * 3))
        assert str(got.value) == str(exc)
        return
    assert_same(ref, engine(folder, Engine(block_bytes=block, split_bytes=block * 3)))


@pytest.mark.parametrize("distinct", [3, 700, 5000])
def test_key_table_gives_one_id_per_distinct_key(distinct: int) -> None:
    """New keys that share a slot (a table of 1,024 slots takes 700 keys
    before it grows, so many do), repeated, in blocks one after another."""
    rng = np.random.default_rng(distinct)
    table = KeyTable(5, (2**31 - 1,) * 4 + (2**63 - 1,))
    keys = rng.integers(0, 1000, size=(distinct, 5))  # keys of at most 32 bytes
    seen: dict[tuple[int, ...], int] = {}
    for block in range(3):
        picked = keys[rng.integers(0, distinct, 4000)]
        text = b"".join(
            b"%d, %d, %d, %d, %d, 1721412345.000001\n" % tuple(row) for row in picked.tolist()
        )
        fast = tokenize_block(text, table, time_optional=False, has_time_column=True)
        assert fast is not None, block
        values = table.values[fast.key_ids]
        assert (values == picked).all()
        for row, kid in zip(map(tuple, picked.tolist()), fast.key_ids.tolist(), strict=True):
            assert seen.setdefault(row, kid) == kid
    assert len(set(seen.values())) == len(seen) == table.size


def test_tokenizer_declines_irregular_blocks() -> None:
    table = KeyTable(5, (2**31 - 1,) * 4 + (2**63 - 1,))
    good = b"0, 3, 1, 17, 16, 1721412345.123471\n0, 3, 0, 2, 8, 1721412345.123470\n"
    fast = tokenize_block(good, table, time_optional=True, has_time_column=True)
    assert fast is not None and fast.time_range == (1721412345123470, 1721412345123471)
    assert table.values.tolist() == [[0, 3, 1, 17, 16], [0, 3, 0, 2, 8]]
    # harmless spacing is undone first (issue 12 item 14): same result
    for spaced in (good.replace(b"\n", b"\r\n"), good.replace(b", 16,", b",16,")):
        again = tokenize_block(spaced, table, time_optional=True, has_time_column=True)
        assert again is not None and again.key_ids.tolist() == fast.key_ids.tolist()
        assert again.time_range == fast.time_range
    for bad in (
        good + b"\n",
        good.replace(b", 8,", b", -8,"),
        good.replace(b", 16,", b", 1 6,"),
        good + b"0, 3, 0, 2, 8\n",
        good.replace(b"1721412345.123470", b"172141234.5123470"),
        good.replace(b"17, ", b"4294967296, "),
        # no ", " before the time, the line's count of separators unchanged
        good.replace(b"16, 1721", b"16  1721"),
        good.replace(b"8, 1721", b"8  1721"),  # on a line after the first
    ):
        assert tokenize_block(bad, table, time_optional=True, has_time_column=True) is None
    five = b"0, 3, 1, 17, 16\n"
    got = tokenize_block(
        five, table, time_optional=True, has_time_column=True, buffer=BlockBuffer()
    )
    assert got is not None and got.time_range is None


def test_many_distinct_pairs_read_a_key_per_line(tmp_path: Path, monkeypatch: Any) -> None:
    """Small files whose lines nearly all name a pair of their own (a run of
    many PEs) are parsed a key per line once a group shows it; the result is
    what the plain reader gives, noise, a repeated pair and a stray id
    included, whichever table reads which group."""
    import actorprof.read._fastscan as fastscan

    rng = np.random.default_rng(11)
    for pe in range(400):
        lines = [
            f"{pe // 8}, {pe}, {dst // 8}, {dst}, {8 * (1 + i % 3)}, 1721400000.{i:06d}"
            for i, dst in enumerate(rng.integers(0, 400, size=12))
        ]
        lines.append(lines[0])  # a repeated pair within the file
        if pe == 123:
            lines.insert(5, "Running triangle counting on 400 PEs")
        if pe == 321:
            lines[3] = f"40, {pe}, 900, 7200, 8, 1721400000.000003"  # beyond --num-pes
        (tmp_path / f"PE{pe}_send.csv").write_text("\n".join(lines) + "\n")
    used = []
    lookup = fastscan.LineKeys.lookup

    def counted(self: Any, *args: Any) -> Any:
        used.append(1)
        return lookup(self, *args)

    monkeypatch.setattr(fastscan.LineKeys, "lookup", counted)
    for kw in ({}, {"num_pes": 400}):
        ref = plain(tmp_path, **kw)
        for way in ("batches", "jobs2-batches"):
            small = Engine(jobs=1, split_bytes=10**6, block_bytes=4096)
            chosen = small if way == "batches" else WAYS[way]
            assert_same(ref, engine(tmp_path, chosen, **kw))
    assert used  # the key-per-line table read some groups


def test_engine_of_a_view_functions_options(tmp_path: Path) -> None:
    """A cache folder given turns the cache on, as ``logical_view`` documents."""
    assert Engine.of(jobs=2, cache=False, cache_dir=None, scheduler=None) == Engine(jobs=2)
    folder = Engine.of(jobs=1, cache=False, cache_dir=tmp_path, scheduler=None)
    assert folder.cache and folder.cache_dir == tmp_path
    assert Engine.of(jobs=None, cache=True, cache_dir=None, scheduler=None).cache

"""The cache (one packed entry per trace folder, a size cap), the workers'
count, and small files read in batches."""

from __future__ import annotations

import builtins
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from actorprof.cli import main
from actorprof.engine import Engine
from actorprof.engine.cache import TraceCache, parse_size
from actorprof.engine.run import _pool_context, available_cpus

from .test_engine import assert_same, engine, noisy_trace, plain


def small_trace(folder: Path, *, pes: int = 4, seed: int = 0, lines: int = 50) -> Path:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for pe in range(pes):
        dst = rng.integers(0, pes, size=lines)
        text = "".join(
            f"{pe // 2}, {pe}, {d // 2}, {d}, {8 * (1 + i % 3)}, 1721412345.{i:06d}\n"
            for i, d in enumerate(dst)
        )
        (folder / f"PE{pe}_send.csv").write_text(text)
    return folder


def test_many_small_files_in_batches(tmp_path: Path) -> None:
    """Clean files are tokenized together; the odd ones (noise, a cut last
    line, an empty file, a stray id, another PE's lines, no times) are found
    and read on their own: everything as the plain reader says."""
    folder = small_trace(tmp_path / "run", pes=300, lines=20)
    (folder / "PE7_send.csv").write_text("Running on 300 PEs\n0, 7, 0, 1, 8, 1.000000\n")
    (folder / "PE8_send.csv").write_text("4, 8, 0, 1, 8, 1.000000\n4, 8, 0, 2, 8, 1.5")
    (folder / "PE9_send.csv").write_text("")
    (folder / "PE10_send.csv").write_text("5, 10, 0, 99999, 8, 1.000000\n5, 10, 0, 1, 8, 2.0\n")
    (folder / "PE11_send.csv").write_text("0, 3, 0, 1, 8, 1.000000\n5, 11, 0, 1, 16, 3.250000\n")
    (folder / "PE12_send.csv").write_text("6, 12, 0, 1, 8\n6, 12, 0, 1, 8\n")
    (folder / "PE13_send.csv").write_text("6, 13, 0, 1, 8, 1.000000\r\n")
    ref = plain(folder)
    assert ref[1].lines_skipped and ref[1].warnings
    for way in (
        Engine(jobs=1),
        Engine(jobs=1, block_bytes=700),  # groups of a few files
        Engine(jobs=2, split_bytes=5_000, block_bytes=2_000, parallel_min_bytes=0),
        Engine(jobs=2, parallel_min_bytes=0, cache=True, cache_dir=tmp_path / "cache"),
        Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache"),  # warm
    ):
        assert_same(ref, engine(folder, way))
    assert_same(plain(folder, num_pes=200), engine(folder, Engine(jobs=1), num_pes=200))


def test_cache_stays_under_its_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    traces = [small_trace(tmp_path / f"t{i}", seed=i) for i in range(20)]
    engine(traces[0], Engine(cache=True, cache_dir=cache))
    one = TraceCache(cache).info().size_bytes
    cap = int(3.5 * one)
    monkeypatch.setenv("ACTORPROF_CACHE_MAX", str(cap))
    way = Engine(cache=True, cache_dir=cache)
    for i, trace in enumerate(traces):
        assert_same(plain(trace), engine(trace, way))
        info = TraceCache(cache).info()
        assert info.size_bytes <= cap and info.max_bytes == cap
        assert info.entries == min(i + 1, 3)
        if i >= 2:  # trace 2 was used last-but-nothing: reusing it keeps it
            time.sleep(0.01)
            engine(traces[2], way)
    entries = TraceCache(cache).info().entries
    assert entries == 3
    key = TraceCache(cache).key(
        traces[2],
        phase=None,
        options={
            "columns": ["src_node", "src_pe", "dst_node", "dst_pe", "msg_bytes", "time_s"],
            "reader": 2,
            "pe_limit": 64,
        },
    )
    assert (cache / "logical" / f"{key}.npz").exists()  # least recently used went first
    monkeypatch.setenv("ACTORPROF_CACHE_MAX", "10")  # smaller than any entry
    _, report = engine(traces[5], way)
    assert TraceCache(cache).info().size_bytes <= 10
    assert any("larger than the cache cap" in n for n in report.notes)


def trace_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The PE files opened from now on (``open`` and ``os.open``), in order."""
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("_send.csv"):
            opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def os_spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("_send.csv"):
            opened.append(str(file))
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(os, "open", os_spy)
    return opened


def test_second_run_reads_no_trace_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = noisy_trace(tmp_path / "run")
    way = Engine(cache=True, cache_dir=tmp_path / "cache")
    opened = trace_opens(monkeypatch)
    cold = engine(trace, way)
    assert len(set(opened)) == 4
    opened.clear()
    warm = engine(trace, way)
    assert opened == []
    assert_same(cold, warm)
    assert_same(plain(trace), warm)


def test_in_place_edit_is_noticed(tmp_path: Path) -> None:
    """Same size, modification time put back: the change time (and inode) tell."""
    trace = small_trace(tmp_path / "run")
    way = Engine(cache=True, cache_dir=tmp_path / "cache")
    engine(trace, way)
    f = trace / "PE1_send.csv"
    st = f.stat()
    text = f.read_text()
    edited = text.replace(", 8, ", ", 9, ", 1)
    assert edited != text and len(edited) == len(text)
    time.sleep(0.01)
    with open(f, "r+") as handle:  # in place: same inode
        handle.write(edited)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns
    assert_same(plain(trace), engine(trace, way))
    replaced = trace / "new.tmp"  # another file put in its place, same size and times
    replaced.write_text(text)
    os.utime(replaced, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(replaced, f)
    assert_same(plain(trace), engine(trace, way))


def test_cache_command_and_env(tmp_path: Path, examples: Path) -> None:
    trace = tmp_path / "run"
    shutil.copytree(examples / "histo_4pe" / "logical", trace)
    env = {"ACTORPROF_CACHE_DIR": str(tmp_path / "mine")}
    runner = CliRunner(env=env)
    result = runner.invoke(main, ["logical", str(trace), "-o", str(tmp_path / "o"), "-q"])
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "mine" / "logical").glob("*.npz"))) == 1
    shown = runner.invoke(main, ["cache"])
    assert shown.exit_code == 0
    assert f"folder: {tmp_path / 'mine'}" in shown.output and "entries: 1" in shown.output
    cleared = runner.invoke(main, ["cache", "--clear"])
    assert cleared.exit_code == 0 and "removed 1 entry" in cleared.output
    assert "entries: 0" in runner.invoke(main, ["cache"]).output
    other = runner.invoke(main, ["cache", "--cache-dir", str(tmp_path / "elsewhere")])
    assert f"folder: {tmp_path / 'elsewhere'}" in other.output


def test_parse_size() -> None:
    assert parse_size("1GB") == 10**9
    assert parse_size("500M") == 5 * 10**8
    assert parse_size("2GiB") == 2 * 2**30
    assert parse_size("123") == 123
    for bad in ("lots", "-5", "inf", "nan", "1e400"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_a_cap_that_is_not_a_size_and_an_unwritable_folder_are_said(
    tmp_path: Path, examples: Path
) -> None:
    """Neither is ignored silently: the cache command shows the default cap
    and why; a read notes the cap, and an entry it could not write."""
    trace = tmp_path / "run"
    shutil.copytree(examples / "histo_4pe" / "logical", trace)
    runner = CliRunner(env={"ACTORPROF_CACHE_MAX": "abc"})
    shown = runner.invoke(main, ["cache", "--cache-dir", str(tmp_path / "c")])
    assert "cap: 1,000.0 MB (default; ACTORPROF_CACHE_MAX='abc' is not a size" in shown.output
    args = ["logical", str(trace), "-o", str(tmp_path / "o"), "-j", "1"]
    done = runner.invoke(main, [*args, "--cache-dir", str(tmp_path / "c")])
    assert done.exit_code == 0, done.output
    assert "ACTORPROF_CACHE_MAX='abc' is not a size" in done.stderr
    assert len(list((tmp_path / "c" / "logical").glob("*.npz"))) == 1  # under the default cap
    (tmp_path / "c2").mkdir()
    (tmp_path / "c2" / "logical").write_text("not a folder\n")  # where entries go
    done = CliRunner().invoke(main, [*args, "--cache-dir", str(tmp_path / "c2")])
    assert done.exit_code == 0, done.output
    assert f"the cache entry could not be written in {tmp_path / 'c2' / 'logical'}" in done.stderr
    assert "-q" not in args and "is not a size" not in done.stderr


def test_workers_follow_slurm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "1")
    assert available_cpus() == 1
    assert Engine(jobs=0).workers == 1
    assert Engine(jobs=3).workers == 3
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "100000")
    assert available_cpus() == len(os.sched_getaffinity(0))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_workers_follow_affinity() -> None:
    """As under ``taskset -c 0``: one CPU allowed, one worker."""
    code = (
        "import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
        "from actorprof.engine import Engine; print(Engine(jobs=0).workers)"
    )
    env = {k: v for k, v in os.environ.items() if k != "SLURM_CPUS_PER_TASK"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "1"


def test_workers_never_forked_from_this_process() -> None:
    """A library caller's workers (a notebook kernel runs threads): only the
    command line asks for forks (``Engine(fork=True)``)."""
    assert _pool_context(Engine(jobs=2)).get_start_method() in ("forkserver", "spawn")


def test_wide_keys_on_the_fast_path(tmp_path: Path) -> None:
    """Keys of 25 to 32 bytes (node and PE ids of a 65,536-PE run), leading
    zeros and long numbers: the fast path reads them as the exact parser."""
    folder = tmp_path / "run"
    folder.mkdir()
    lines = {
        65535: ["511, 65535, 511, 65534, 64, 1721412345.000001"] * 3
        + ["511, 65535, 0, 7, 4294967296, 1721412345.000002"],
        65534: ["511, 65534, 00511, 0065535, 8, 1721412345.000003"],
        65533: ["511, 65533, 511, 65535, 00000000000000000000008, 1721412345.000004"],
        65532: [
            "511, 65532, 511, 65535, 99999999999999999999, 1721412345.000005",
            "511, 65532, 511, 65535, 8, 1721412345.000006",
        ],
    }
    for pe, text in lines.items():
        (folder / f"PE{pe}_send.csv").write_text("\n".join(text) + "\n")
    for kw in ({"num_pes": 65536}, {}):
        ref = plain(folder, **kw)
        for way in (Engine(jobs=1), Engine(jobs=1, block_bytes=64)):
            assert_same(ref, engine(folder, way, **kw))
    assert plain(folder, num_pes=65536)[0].messages == 7


def test_a_file_added_to_a_cached_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cached file unchanged and one file new: the entry's partials are
    summed at once, the new file is read, and the entry written again holds
    each file's own partial (a third run reads nothing and agrees)."""
    trace = small_trace(tmp_path / "run", pes=6)
    (tmp_path / "PE6_send.csv").write_text(
        (trace / "PE5_send.csv").read_text().replace(" 5, ", " 6, ")
    )
    way = Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache")
    engine(trace, way)
    shutil.move(tmp_path / "PE6_send.csv", trace / "PE6_send.csv")
    assert_same(plain(trace), engine(trace, way))
    opened = trace_opens(monkeypatch)
    warm = engine(trace, way)
    monkeypatch.undo()
    assert opened == []
    assert_same(plain(trace), warm)


def test_a_warm_trace_gives_its_clean_files_as_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file in the entry: those that skipped no line come back as
    columns (no report each), the others as reports; the same numbers,
    warnings (a src_pe mismatch in a clean file and in a noisy one, in file
    order), entries and JSON as the read itself."""
    from actorprof.read import FileColumns
    from actorprof.write import dumps_json

    trace = small_trace(tmp_path / "run", pes=6)
    noisy = noisy_trace(tmp_path / "noisy")
    shutil.copy(noisy / "PE2_send.csv", trace / "PE2_send.csv")  # skipped lines
    for pe, other in ((4, 5), (2, 3)):  # lines of another PE's: mismatched
        with open(trace / f"PE{pe}_send.csv", "a") as handle:
            handle.write(f"{other // 2}, {other}, 0, 1, 8, 1721412345.5\n")
    way = Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache")
    cold = engine(trace, way)
    opened = trace_opens(monkeypatch)
    warm = engine(trace, way)
    monkeypatch.undo()
    assert opened == []
    held = warm[1]._pending
    assert [len(c) for c in held if isinstance(c, FileColumns)] == [2, 3]  # PE0-1, PE3-5
    assert [c.path for c in held if not isinstance(c, FileColumns)] == [str(trace / "PE2_send.csv")]
    assert len(warm[1].warnings) == 2 and "PE2_send.csv" in warm[1].warnings[0]
    texts = [dumps_json(r.file_entries()) for r in (cold[1], warm[1])]
    assert texts[0] == texts[1]
    assert_same(cold, warm)
    assert_same(plain(trace), warm)

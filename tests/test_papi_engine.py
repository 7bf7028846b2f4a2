"""The engine's and the printf tokenizer's PAPI reads give what the plain reader gives.

``papi_view(..., engine=Engine(...))`` reads groups of files in worker
processes (or here) and merges their per-(PE, mailbox) sums in file order;
``read/_printf.py`` reads blocks of canonical printf lines without the
pandas C engine. These tests read every PAPI fixture, the real traces, a
damaged run and random texts each way and compare everything a read hands
out: the view (summary, per-PE and region tables), the per-file line
accounting with the skipped lines' file:line, notes, warnings, and errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import actorprof.read._printf as printf_module
from actorprof import ActorProfError, ReadReport, read_papi
from actorprof.cli import main
from actorprof.engine import Engine
from actorprof.kinds.papi import papi_view
from actorprof.read.papi import papi_chunks, papi_plan, papi_spec

from .conftest import Recorder, distinct_contents
from .test_papi_batch import damaged_run, good_lines

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = distinct_contents(
    sorted(
        {p.parent for p in (ROOT / "tests" / "data").rglob("PE*_[Pp][Aa][Pp][Ii].csv")}
        | {p.parent for p in Path("/work/shared/real-traces").rglob("PE*_PAPI.csv")}
        | {p.parent for p in (ROOT / "examples").rglob("PE*_PAPI.csv")}
    )
)

#: In this process, one unit; worker processes, one file per unit.
SERIAL = Engine(jobs=1)
SPLIT = Engine(jobs=2, parallel_min_bytes=0, split_bytes=1)
#: Planned by file count (no file stat'ed first), in this process and in workers.
BY_COUNT = Engine(jobs=1, count_plan_files=1)
BY_COUNT_SPLIT = Engine(jobs=2, count_plan_files=1)


def view_outcome(folder: Path, engine: Engine | None, **options: Any) -> dict[str, Any]:
    """Everything ``papi_view`` hands out (or its error)."""
    report = ReadReport(kind="papi")
    try:
        view = papi_view(folder, report=report, engine=engine, **options)
    except ActorProfError as exc:
        where = (getattr(exc, "path", None), getattr(exc, "line", None))
        return {"error": (type(exc).__name__, str(exc), *where)}
    return {
        "summary": view.summary(),
        "pes": view.pes,
        "regions": view.regions,
        "files": report.files,
        "notes": report.notes,
        "warnings": report.warnings,
        "num_pes": (report.num_pes, report.num_pes_inferred),
    }


def assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    if "error" in a:
        assert a["error"] == b["error"]
        return
    pd.testing.assert_frame_equal(a["pes"], b["pes"])
    pd.testing.assert_frame_equal(a["regions"], b["regions"])
    for key in ("summary", "files", "notes", "warnings", "num_pes"):
        assert a[key] == b[key], key


def phases(folder: Path) -> list[str | None]:
    names = {p.name.split("_", 1)[1].rsplit("_", 1)[0] for p in folder.glob("PE*_*_*.csv")}
    return [None] if not names else sorted(names)


@pytest.mark.parametrize("folder", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_reads_the_same_every_way(folder: Path) -> None:
    for phase in phases(folder):
        plain = view_outcome(folder, None, phase=phase)
        assert_same(plain, view_outcome(folder, SERIAL, phase=phase))
        assert_same(plain, view_outcome(folder, SPLIT, phase=phase))
        assert_same(plain, view_outcome(folder, BY_COUNT, phase=phase))
        assert_same(plain, view_outcome(folder, BY_COUNT_SPLIT, phase=phase))


def test_a_damaged_run_reads_the_same_every_way(tmp_path: Path) -> None:
    damaged_run(tmp_path)
    plain = view_outcome(tmp_path, None)
    assert "error" not in plain
    assert plain["warnings"] and sum(f.lines_skipped for f in plain["files"]) > 5
    for engine in (SERIAL, SPLIT, Engine(jobs=2, parallel_min_bytes=0), BY_COUNT_SPLIT):
        assert_same(plain, view_outcome(tmp_path, engine))
    # skipped lines keep their own file and line through the workers
    files = {Path(f.path).name: f for f in view_outcome(tmp_path, SPLIT)["files"]}
    assert [e.line for e in files["PE3_PAPI.csv"].examples] == [2, 4]


@pytest.mark.parametrize("bad_pe", [0, 9, 15])
def test_the_first_error_in_file_order_is_raised(tmp_path: Path, bad_pe: int) -> None:
    for pe in range(16):
        text = good_lines(pe, 4)
        if pe in (bad_pe, 15):  # line 3 names PE 99 (and always in the last file)
            lines = text.splitlines(keepends=True)
            lines[2] = f"0, 99, 0, {pe}, 16, 0, 0, 1, 2, 1721412345.000001\n"
            text = "".join(lines)
        (tmp_path / f"PE{pe}_PAPI.csv").write_text(text)
    plain = view_outcome(tmp_path, None, num_pes=16)
    assert plain["error"][2:] == (str(tmp_path / f"PE{bad_pe}_PAPI.csv"), 3)
    assert_same(plain, view_outcome(tmp_path, SERIAL, num_pes=16))
    assert_same(plain, view_outcome(tmp_path, SPLIT, num_pes=16))


def test_totals_beyond_64_bits_fail_the_same(tmp_path: Path) -> None:
    """PE 0's sum stays below 2**62, PE 1's and PE 2's pass it: every way
    names PE 1, the first file whose sums pass (the four together passed
    2**62 in PE 3 before: not an error, they are exact)."""
    big = 10**15  # 16 digits: the printf route reads it; thousands of them pass 2**62
    for pe, count in enumerate([1200, 5000, 5000, 1200]):
        lines = [f"0, 1, 0, {pe}, 16, 0, 0, {big}, 1, 1721412345.000001\n"] * count
        (tmp_path / f"PE{pe}_PAPI.csv").write_text("".join(lines))
    plain = view_outcome(tmp_path, None)
    assert plain["error"][1].startswith("PAPI counter totals of PE 1 exceed 64-bit integers")
    assert_same(plain, view_outcome(tmp_path, SERIAL))
    assert_same(plain, view_outcome(tmp_path, SPLIT))


def test_the_papi_command_writes_the_same_files_whatever_the_jobs(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    damaged_run(tmp_path / "run")
    written = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        result = CliRunner().invoke(
            main, ["papi", str(tmp_path / "run"), "-o", str(out), "-q", "-j", jobs, "--no-cache"]
        )
        assert result.exit_code == 0, result.output
        written[jobs] = {
            p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.suffix != ".png"
        }
    assert written["1"] == written["2"]
    summary = json.loads(written["2"]["papi_summary.json"])
    assert summary["lines_skipped"] > 5


def test_the_papi_command_error_names_file_and_line_with_workers(tmp_path: Path) -> None:
    for pe in range(8):
        text = good_lines(pe, 4)
        if pe == 6:
            lines = text.splitlines(keepends=True)
            lines[1] = f"0, 42, 0, {pe}, 16, 0, 0, 1, 2, 1721412345.000001\n"
            text = "".join(lines)
        (tmp_path / f"PE{pe}_PAPI.csv").write_text(text)
    result = CliRunner().invoke(
        main, ["papi", str(tmp_path), "--num-pes", "8", "-o", str(tmp_path / "o"), "-j", "2"]
    )
    assert result.exit_code == 1
    assert "PE6_PAPI.csv:2" in result.output and "Traceback" not in result.output


# --- the printf route against the pandas route -------------------------------


@contextmanager
def printf_route(enabled: bool) -> Iterator[list[int]]:
    """Read with the printf tokenizer (or without it); counts the blocks it took."""
    taken: list[int] = []
    original = printf_module.printf_columns

    def counted(block: bytes, spec: Any, columns: Any = None) -> Any:
        found = original(block, spec, columns) if enabled else None
        taken.append(found is not None)
        return found

    with mock.patch("actorprof.read._scan.printf_columns", counted):
        yield taken


def read_outcome(folder: Path, **options: Any) -> dict[str, Any]:
    report = ReadReport()
    try:
        frame = read_papi(folder, report=report, **options)
    except ActorProfError as exc:
        return {"error": (type(exc).__name__, str(exc))}
    return {"frame": frame, "files": report.files, "warnings": report.warnings}


def assert_same_read(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    if "error" in a:
        assert a == b
        return
    pd.testing.assert_frame_equal(a["frame"], b["frame"])
    assert a["files"] == b["files"] and a["warnings"] == b["warnings"]


@pytest.mark.parametrize("folder", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_printf_route_reads_every_fixture_as_the_pandas_route(folder: Path) -> None:
    for phase in phases(folder):
        with printf_route(False):
            pandas_read = read_outcome(folder, phase=phase)
        with printf_route(True):
            printf_read = read_outcome(folder, phase=phase)
        assert_same_read(pandas_read, printf_read)


def test_printf_route_takes_canonical_blocks(tmp_path: Path) -> None:
    for pe in range(4):
        (tmp_path / f"PE{pe}_PAPI.csv").write_text(good_lines(pe, 300))
    with printf_route(True) as taken:
        frame = read_papi(tmp_path)
    assert taken and all(taken)
    assert len(frame) == 4 * 301 and (frame["mailbox"] == -1).sum() == 4
    with printf_route(False):
        pd.testing.assert_frame_equal(frame, read_papi(tmp_path))


def test_printf_values_exactly() -> None:
    spec = papi_spec(("PAPI_TOT_INS", "PAPI_LST_INS"))
    text = (
        b"0, 5, 0, 0, 16, 0, 0, 122, 48, 1718051234.000035\n"
        b"0, 0, 0, 0, 0, -1, 1317585, 91234567, 30411522, 1718051236.500000\n"
        b"007, 2147483647, 1, 3, 9999999999999999, -2147483648, 0, 1234567890123456, 0, 0.1\n"
    )
    columns = printf_module.printf_columns(text, spec)
    assert columns is not None
    assert columns["src_pe"].tolist() == [5, 0, 2147483647]
    assert columns["src_node"].tolist() == [0, 0, 7]
    assert columns["mailbox"].tolist() == [0, -1, -2147483648]
    assert columns["mailbox"].dtype == np.int32
    assert columns["msg_bytes"].tolist() == [16, 0, 9999999999999999]
    assert columns["PAPI_TOT_INS"].tolist() == [122, 91234567, 1234567890123456]
    assert columns["time_s"].tolist() == [1718051234.000035, 1718051236.5, 0.1]
    # out of range, a sign where none may be, spaces, CRLF, blank lines: declined
    for bad in (
        b"0, 2147483648, 0, 0, 16, 0, 0, 1, 2, 1.5\n",
        b"0, -1, 0, 0, 16, 0, 0, 1, 2, 1.5\n",
        b"0, 1, 0, 0, 16, 0, 0, 1, 2, 1.5\r\n",
        b"0, 1, 0, 0, 16, 0, 0, 1, 2, 1.5\n\n",
        b"0,1, 0, 0, 16, 0, 0, 1, 2, 1.5\n",
        b"0,1, 0, 0, 16, 0, 0, 1, 2 , 1.5\n",  # and a space where none belongs
        b"0, 1, 0, 0, 16, 0, 0, 1, 2,  1.5\n",
        b"0, 1, 0, 0, 16, 0, 0, 1, 2, 15\n",
        b"0, 1, 0, 0, 16, 0, 0, 1.5, 2, 1\n",
        b"0, 1, 0, 0, 16, 0, 0, 12345678901234567, 2, 1.5\n",
        b"0, 1, 0, 0, 16, --1, 0, 1, 2, 1.5\n",
        b"0, 1, 0, 0, 16, -, 0, 1, 2, 1.5\n",
        b"0, 1, 0, 0, 16, 0, 0, 1, 2, 1.5, 7\n",
        b"0, 1, 0, 0, 16, 0, 0, 1, 2, 1234567890.1234567\n",
        b"0, 1, 0, 0, 16, 0, 0, 1, 2, 1.5\n0, 1, 0, 0, 16, 0, 0, 1.2, 1.5\n",  # a dot for a comma
        b"0, 1, 0, 0, 16, 0, 0, 1, 2, 1.5\n0, 1, 0, 0, 16, 0, 0, 1\n2, 1.5\n",  # a line end
    ):
        assert printf_module.printf_columns(bad, spec) is None, bad
    # columns of one digit each are read a byte each: the same values
    ones = printf_module.printf_columns(
        b"3, 7, 0, 2, 8, 1, 0, 9, 4, 1.5\n0, 1, 0, 2, 8, 0, 5, 3, 6, 2.5\n", spec
    )
    assert ones is not None
    assert [ones[c].tolist() for c in ("src_pe", "dst_pe", "mailbox", "num_sends")] == [
        [7, 1],
        [2, 2],
        [1, 0],
        [0, 5],
    ]
    assert ones["PAPI_TOT_INS"].tolist() == [9, 3] and ones["src_node"].tolist() == [3, 0]
    # a sign makes a column's longest field: its digits are one fewer
    signed = printf_module.printf_columns(b"0, 1, 0, 0, 16, -12345678, 0, 1, 2, 1.5\n", spec)
    assert signed is not None and signed["mailbox"].tolist() == [-12345678]


INT = st.one_of(
    st.integers(0, 40),
    st.integers(0, 2**31),
    st.integers(-(2**31) - 2, 2**31 + 2),
    st.integers(0, 10**17),
)
TIME = st.one_of(
    st.integers(0, 10**16).map(lambda v: f"{v // 10**6}.{v % 10**6:06d}"),
    st.tuples(st.integers(0, 10**9), st.integers(0, 10**8)).map(lambda t: f"{t[0]}.{t[1]}"),
    st.sampled_from(["1.", ".5", "1e3", "+1.5", "-0.5", "00.000001"]),
)


@st.composite
def printf_lines(draw: st.DrawFn) -> bytes:
    """Lines as printf writes them, some with one wild field (out of range,
    a sign, leading zeros, another time form)."""
    lines = []
    for _ in range(draw(st.integers(1, 30))):
        fields = [str(draw(st.integers(0, 70_000))) for _ in range(9)]
        fields[5] = str(draw(st.integers(-1, 3)))
        fields.append(f"{draw(st.integers(10**9, 2 * 10**9))}.{draw(st.integers(0, 999_999)):06d}")
        if draw(st.integers(0, 3)) == 0:
            at = draw(st.integers(0, 9))
            fields[at] = draw(TIME) if at == 9 else str(draw(INT))
        if draw(st.integers(0, 5)) == 0:
            at = draw(st.integers(0, 8))
            fields[at] = "0" * draw(st.integers(1, 3)) + fields[at].lstrip("-")
        lines.append(", ".join(fields))
    return ("\n".join(lines) + "\n").encode()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=printf_lines())
def test_printf_route_agrees_on_random_lines(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "PE0_PAPI.csv"
    path.write_bytes(text)
    with printf_route(False):
        pandas_read = read_outcome(path)
    with printf_route(True) as taken:
        printf_read = read_outcome(path)
    assert_same_read(pandas_read, printf_read)
    TAKEN.append(any(taken))
    if "frame" in printf_read:  # the engine's frames: the summed columns only
        keep = ("src_pe", "dst_pe", "mailbox", "num_sends", "PAPI_TOT_INS", "PAPI_LST_INS")
        # the plan's shape: PE ids beyond 2^20 (a single file) are skipped lines
        files, spec = papi_plan(path, phase=None, num_pes=None, counters=None, report=ReadReport())
        spec = replace(spec, keep=keep)
        report = ReadReport()
        frames = list(papi_chunks(files, spec, report, num_pes=None))
        kept = pd.concat(frames, ignore_index=True) if frames else printf_read["frame"][list(keep)]
        pd.testing.assert_frame_equal(kept, printf_read["frame"][list(keep)])
        assert report.files == printf_read["files"]


TAKEN: list[bool] = []


def test_random_lines_took_both_routes() -> None:
    """The property above compared something: both routes were taken."""
    if len(TAKEN) < 50:
        pytest.skip("run with the property test")
    assert 0.1 < sum(TAKEN) / len(TAKEN) < 0.9


# --- the cache ---------------------------------------------------------------


def test_a_warm_cache_gives_the_same_view_and_accounting(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    damaged_run(run)
    cached = Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache")
    plain = view_outcome(run, None)
    cold = view_outcome(run, cached)
    entries = list((tmp_path / "cache" / "papi").glob("*.npz"))
    assert len(entries) == 1
    with mock.patch("actorprof.engine.papi.run_map", side_effect=AssertionError("read")):
        warm = view_outcome(run, cached)  # no file is read again
    assert_same(plain, cold)
    assert_same(plain, warm)
    # another PE limit or counter names is another entry
    view_outcome(run, cached, num_pes=32)
    view_outcome(run, cached, counters=["A", "B"])
    assert len(list((tmp_path / "cache" / "papi").glob("*.npz"))) == 3


def test_a_changed_file_or_a_damaged_entry_is_read_again(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    for pe in range(6):
        (run / f"PE{pe}_PAPI.csv").write_text(good_lines(pe, 20))
    cached = Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache")
    view_outcome(run, cached)
    (run / "PE2_PAPI.csv").write_text(good_lines(2, 25, seed=7))
    assert_same(view_outcome(run, None), view_outcome(run, cached))
    (entry,) = (tmp_path / "cache" / "papi").glob("*.npz")
    entry.write_bytes(entry.read_bytes()[:100])
    report = ReadReport(kind="papi")
    view = papi_view(run, report=report, engine=cached)
    assert any("damaged" in note for note in report.notes)
    assert view.summary()["totals"] == papi_view(run).summary()["totals"]
    # rewritten: the next read hits it
    with mock.patch("actorprof.engine.papi.run_map", side_effect=AssertionError("read")):
        papi_view(run, report=ReadReport(kind="papi"), engine=cached)


@pytest.mark.parametrize("engine", [None, SERIAL, SPLIT], ids=["plain", "serial", "split"])
def test_progress_begins_once_and_ends_at_the_planned_total(
    tmp_path: Path, engine: Engine | None
) -> None:
    for pe in range(5):
        (tmp_path / f"PE{pe}_PAPI.csv").write_text(good_lines(pe, 50))
    total = sum(p.stat().st_size for p in tmp_path.iterdir())
    progress = Recorder()
    papi_view(tmp_path, report=ReadReport(kind="papi"), engine=engine, progress=progress)
    assert progress.begun == [(total, 5)]
    assert progress.updates and progress.updates[-1] == (total, 5)


def test_each_file_is_stated_once_before_its_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry keeps each file's stat from the read's plan (taken before the
    read): no file is stat'ed again to write or to check the entry, and a
    file written while the trace was read is read again the next time."""
    import actorprof.engine.cache as engine_cache
    import actorprof.engine.papi as papi_engine

    from .test_count_plan import stats_taken

    run = tmp_path / "run"
    run.mkdir()
    for pe in range(6):
        (run / f"PE{pe}_PAPI.csv").write_text(good_lines(pe, 20))
    cached = Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache")
    stated = stats_taken(monkeypatch, engine_cache)
    real_unit = papi_engine.reduce_papi_unit

    def written_meanwhile(unit: Any, progress: Any = None) -> Any:
        result = real_unit(unit, progress)
        with open(run / "PE2_PAPI.csv", "a") as handle:  # after its read
            handle.write(good_lines(2, 3, seed=9))
        return result

    monkeypatch.setattr(papi_engine, "reduce_papi_unit", written_meanwhile)
    view_outcome(run, cached)
    assert len(stated) == 6
    monkeypatch.setattr(papi_engine, "reduce_papi_unit", real_unit)
    stated.clear()
    again = view_outcome(run, cached)  # PE2 changed after its stat: read again
    assert len(stated) == 6
    assert_same(view_outcome(run, None), again)
    with mock.patch("actorprof.engine.papi.run_map", side_effect=AssertionError("read")):
        assert_same(view_outcome(run, None), view_outcome(run, cached))


def test_many_files_are_planned_by_count_none_stated_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From ``Engine.count_plan_files`` files on, without the cache, the PAPI
    read is planned by the files' count, as the logical read is: no file is
    stat'ed before the map (65,536 files: 0.2-0.4 s), the work is split in
    4 units per worker, progress tells the share of the files read."""
    import actorprof.engine.papi as papi_engine

    from .test_count_plan import stats_taken

    for pe in range(9):
        (tmp_path / f"PE{pe}_PAPI.csv").write_text(good_lines(pe, 10 + 7 * pe))
    stated = stats_taken(monkeypatch)
    units: list[int] = []
    real_run_map = papi_engine.run_map

    def counted(func: Any, todo: Any, engine: Any) -> Any:
        units.append(len(todo))
        return real_run_map(func, todo, engine)

    monkeypatch.setattr(papi_engine, "run_map", counted)
    plain = view_outcome(tmp_path, None)
    stated.clear()
    progress = Recorder()
    report = ReadReport(kind="papi")
    by_count = Engine(jobs=2, count_plan_files=9)
    view = papi_view(tmp_path, report=report, engine=by_count, progress=progress)
    assert not stated and report.sizes_planned == [] and report.bytes_planned == 0
    assert units == [8] and progress.begun == [(0, 9)]
    assert progress.updates[-1] == (sum(f.bytes_read for f in report.files), 9)
    assert_same(plain, view_outcome(tmp_path, by_count))
    assert view.summary() == plain["summary"]
    # below the count, or with the cache (it keeps each file's stat): stat'ed first
    for engine in (
        Engine(jobs=2, count_plan_files=10),
        Engine(jobs=2, count_plan_files=9, cache=True, cache_dir=tmp_path / "cache"),
    ):
        stated.clear()
        assert_same(plain, view_outcome(tmp_path, engine))
        assert len(stated) == 9


# --- files as columns ---------------------------------------------------------


def _held(report: ReadReport) -> list[str]:
    """The kinds of the report's file entries, runs of columns as 'columns <n>'."""
    from actorprof.read import FileColumns

    return [
        f"columns {len(e)}" if isinstance(e, FileColumns) else "report"
        for e in report.file_accounts()
    ]


def test_quiet_files_travel_and_stay_as_columns(tmp_path: Path) -> None:
    """Files parsed together with nothing to warn about are columns, from the
    worker to the view and through the cache: no report made per file (65,536
    at 65,536 PEs); the files' reports, once asked for, are the plain read's."""
    run = tmp_path / "run"
    run.mkdir()
    for pe in range(40):
        (run / f"PE{pe}_PAPI.csv").write_text(good_lines(pe, 5))
    (run / "PE7_PAPI.csv").write_text(good_lines(7, 5).replace(", -1, ", ", 0, "))  # no MAIN
    cached = Engine(jobs=2, count_plan_files=1, cache=True, cache_dir=tmp_path / "cache")
    for engine in (BY_COUNT_SPLIT, SERIAL, cached, cached):  # the last: from the cache
        report = ReadReport(kind="papi")
        view = papi_view(run, report=report, engine=engine)
        held = _held(report)
        # PE 7's report (its warning; the cache keeps warnings apart)
        assert held.count("report") <= 1 and len(held) < 20, held
        assert sum(int(h.split()[1]) if h != "report" else 1 for h in held) == 40
        want = ReadReport(kind="papi")
        papi_view(run, report=want)
        assert report.files == want.files
        assert view.report.warnings == want.warnings


def test_progress_counts_files_held_as_columns() -> None:
    from actorprof.read import FileColumns, FileReport

    report = ReadReport(kind="papi")

    def columns(first: int, n: int) -> FileColumns:
        return FileColumns(
            [f"PE{pe}_PAPI.csv" for pe in range(first, first + n)],
            list(range(first, first + n)),
            [None] * n,
            np.ones(n, dtype=np.int64),
            np.zeros(n, dtype=np.int64),
            np.full(n, 10, dtype=np.int64),
        )

    assert report.done() == (0, 0)
    report.add_files([columns(0, 3)])
    assert report.done() == (30, 3)
    reading = FileReport("PE3_PAPI.csv", pe=3, bytes_read=4)
    report.add_files([reading])
    assert report.done() == (34, 4)
    reading.bytes_read = 7  # the last file is still being read
    report.add_files([columns(4, 2)])
    assert report.done() == (57, 6)
    assert len(report.files) == 6  # made reports: counted again from them
    assert report.done() == (57, 6)
    report.add_files([columns(6, 1)])
    assert report.done() == (67, 7)

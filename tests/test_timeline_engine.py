"""The timeline read the engine's way (worker processes, runs of files per
unit) gives exactly the one-process timeline: bins, counts, outliers named by
file and line, line accounting, warnings, and the same first error."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pytest

from actorprof.engine import Engine
from actorprof.errors import ActorProfError, TraceFormatError
from actorprof.kinds.timeline import TimelineView, perfetto_trace, timeline_view

from .conftest import trace_heads
from .test_timeline_batch import OUTLIERS, damaged_run

DATA = Path(__file__).resolve().parent / "data"
REAL = Path(__file__).resolve().parent / "data" / "real"

#: Many units (a few files each), run in two worker processes and in this one.
WAYS = {
    "processes": Engine(jobs=2, parallel_min_bytes=0, split_bytes=2_000, block_bytes=4_096),
    "in process, many units": Engine(jobs=1, split_bytes=2_000, block_bytes=4_096),
    # many files: planned by their count, none stat'ed first
    "by count": Engine(jobs=2, count_plan_files=1, block_bytes=4_096),
}


def _same(view: TimelineView, ref: TimelineView) -> None:
    tl, rt = view.timeline, ref.timeline
    pd.testing.assert_frame_equal(tl.counts, rt.counts)
    assert (tl.bin_s, tl.start_s, tl.first_s, tl.last_s, tl.window) == (
        rt.bin_s,
        rt.start_s,
        rt.first_s,
        rt.last_s,
        rt.window,
    )
    np.testing.assert_array_equal(tl.pe_first_s, rt.pe_first_s)
    np.testing.assert_array_equal(tl.pe_last_s, rt.pe_last_s)
    pd.testing.assert_series_equal(tl.untimed, rt.untimed)
    pd.testing.assert_series_equal(tl.outliers, rt.outliers)
    assert view.outliers == ref.outliers
    assert view.phases == ref.phases
    assert view.summary() == ref.summary()
    for label, report in ref.reports.items():
        other = view.reports[label]
        assert other.to_dict() == report.to_dict()
        assert other.warnings == report.warnings
        assert other.notes == report.notes
    assert perfetto_trace(view) == perfetto_trace(ref)


def _view_or_error(folder: Path, **options: Any) -> TimelineView | str:
    try:
        return timeline_view(folder, **options)
    except ActorProfError as exc:
        return str(exc)


#: Lines kept of each real PE file: its head, still of many blocks and units
#: (``WAYS``: 4 KiB, 2 KB), in a tenth of the time of the whole trace.
REAL_HEAD_LINES = 600


def _folders(tmp_path: Path) -> dict[str, Path]:
    folders = {"damaged": damaged_run(tmp_path / "damaged")}
    for name in ("logical_small", "logical_bad", "logical_phases", "logical_dat"):
        folders[name] = DATA / name
    for found in sorted(REAL.rglob("PE0_send.csv"))[:3]:
        name = found.parent.name
        folders[f"real {name}"] = trace_heads(
            found.parent, tmp_path / f"real {name}", REAL_HEAD_LINES
        )
    return folders


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Any]]:
    """Each folder of :func:`_folders` and its one-process timeline (or
    error), read once for every way."""
    folders = _folders(tmp_path_factory.mktemp("ways"))
    return {name: (folder, _view_or_error(folder)) for name, folder in folders.items()}


@pytest.mark.parametrize("way", list(WAYS))
def test_every_way_gives_the_one_process_timeline(
    one_process: dict[str, tuple[Path, Any]], way: str
) -> None:
    for name, (folder, ref) in one_process.items():
        view = _view_or_error(folder, engine=WAYS[way])
        try:
            if isinstance(ref, str) or isinstance(view, str):
                assert view == ref  # the same error (logical_dat: no send time)
                continue
            _same(view, ref)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from exc


def test_outliers_are_named_across_units(tmp_path: Path) -> None:
    folder = damaged_run(tmp_path / "run")
    view = timeline_view(folder, engine=WAYS["processes"])
    assert [(Path(o.path).name, o.line) for o in view.outliers] == OUTLIERS
    assert view.timeline.num_outliers == timeline_view(folder).timeline.num_outliers > 0


@pytest.mark.parametrize("way", list(WAYS))
def test_the_first_error_in_file_order_is_raised(tmp_path: Path, way: str) -> None:
    folder = damaged_run(tmp_path / "run")
    # two broken files in different units: the first one is named, as the plain read does
    for pe in (60, 200):
        (folder / f"PE{pe}_send.csv").write_bytes(b"\x00" * 64 + b"\n")
    with pytest.raises(TraceFormatError) as plain:
        timeline_view(folder)
    with pytest.raises(TraceFormatError) as engine:
        timeline_view(folder, engine=WAYS[way])
    assert str(engine.value) == str(plain.value)
    assert "PE60_send.csv" in str(engine.value)


def test_progress_sees_every_byte_and_file(tmp_path: Path) -> None:
    folder = damaged_run(tmp_path / "run")
    seen: list[tuple[str, Any]] = []

    class Sink:
        def begin(self, total_bytes: int, total_files: int) -> None:
            seen.append(("begin", (total_bytes, total_files)))

        def update(self, done_bytes: int, done_files: int) -> None:
            seen.append(("update", (done_bytes, done_files)))

        def close(self) -> None:  # pragma: no cover - not called by a view
            pass

    view = timeline_view(folder, engine=WAYS["processes"], progress=Sink())
    report = view.reports["(unnamed)"]
    assert seen[0] == ("begin", (report.bytes_planned, report.files_planned))
    assert seen[-1] == ("update", (report.bytes_read, len(report.files)))
    assert len(seen) > 3  # one update per unit


def test_cli_timeline_and_export_take_jobs(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from actorprof.cli import main

    folder = shutil.copytree(DATA / "logical_small", tmp_path / "run")
    runner = CliRunner()
    outputs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        result = runner.invoke(main, ["timeline", str(folder), "-j", jobs, "-o", str(out), "-q"])
        assert result.exit_code == 0, result.output
        result = runner.invoke(main, ["export", str(folder), "-j", jobs, "-o", str(out), "-q"])
        assert result.exit_code == 0, result.output
        outputs[jobs] = {
            p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.suffix in (".csv", ".json")
        }
    assert outputs["1"] == outputs["2"] and len(outputs["1"]) == 3


def test_export_streams_the_events_it_would_have_listed(tmp_path: Path) -> None:
    """The CLI writes ``perfetto_stream`` an event at a time: the same bytes
    as the whole trace encoded at once."""
    from actorprof.kinds.timeline import perfetto_stream
    from actorprof.write import OutputWriter, dumps_json, to_jsonable

    view = timeline_view(damaged_run(tmp_path / "run"))
    whole = perfetto_trace(view)
    assert len(whole["traceEvents"]) > 1024  # the long-list form, one event per line
    streamed = perfetto_stream(view)
    assert not isinstance(streamed["traceEvents"], list)
    written = OutputWriter(tmp_path / "out", kind="export").json(streamed, "perfetto")
    assert written.read_text() == dumps_json(to_jsonable(whole)) + "\n"
    few = perfetto_stream(view, bins=1)  # a short list: written as indent=2 writes it
    shown = OutputWriter(tmp_path / "out", kind="export").json(few, "few")
    assert shown.read_text() == dumps_json(to_jsonable(perfetto_trace(view, bins=1))) + "\n"


# --- the integer map step against the frame reader, on random damaged runs ---

T0 = 1_721_412_345_000_000  # microseconds
#: Kinds of line a fuzzed file mixes into its canonical lines.
ODD_LINES = (
    "untimed",  # 5 fields
    "noise",  # not a trace line: skipped, named by file:line
    "blank",
    "spaces",  # blanks around fields: same values, not printf's spacing
    "short",  # fewer integer digits: another layout, an outlier
    "zero",  # time 0: an outlier
    "huge",  # 10 integer digits, beyond 2**51 us: canonical, binned through floats
    "beyond",  # beyond 2**53 us: not canonical
    "negative",
    "stray",  # a PE id far beyond the PE files: skipped
    "other_src",  # src_pe is not the file's PE: warned
)


def _fuzz_line(rng: np.random.Generator, pe: int, micros: int, kind: str) -> str:
    dst = int(rng.integers(0, 40))
    head = f"{pe // 8}, {pe}, {dst // 8}, {dst}, {int(rng.choice([8, 16, 24]))}"
    stamp = f"{micros // 1_000_000}.{micros % 1_000_000:06d}"
    if kind == "untimed":
        return head
    if kind == "noise":
        return f"rank {pe}: progress {dst}%"
    if kind == "blank":
        return ""
    if kind == "spaces":
        return head.replace(", ", " ,\t") + f" , {stamp} "
    if kind == "short":
        return f"{head}, {micros % 100_000_000 / 1e6:.6f}"
    if kind == "zero":
        return f"{head}, 0.000000"
    if kind == "huge":
        return f"{head}, 9{stamp[1:]}"  # 9.7e9 s: canonical, 2**51 us < it < 2**53 us
    if kind == "beyond":
        return f"{head}, 9999999999.{micros % 1_000_000:06d}"
    if kind == "negative":
        return f"{head}, -{stamp}"
    if kind == "stray":
        return f"{pe // 8}, {pe}, 99, {900_000 + dst}, 8, {stamp}"
    if kind == "other_src":
        return f"{head.replace(f', {pe}, ', f', {pe + 1}, ', 1)}, {stamp}"
    return f"{head}, {stamp}"


def fuzz_run(folder: Path, seed: int, odd: tuple[str, ...] = ODD_LINES) -> Path:
    """A run of a few PE files: small ones (read in groups) and ones of many
    blocks; canonical lines mixed, at a rate of the file's own, with odd ones
    (kinds of ``odd``); times at bin edges (1 ms) and a microsecond on either
    side."""
    rng = np.random.default_rng(seed)
    folder.mkdir()
    for pe in range(int(rng.integers(2, 24))):
        n = int(rng.choice([0, 1, 3, 20, 150, 700]))
        micros = T0 + np.sort(rng.integers(0, 30_000, n)) * 1000
        micros += rng.choice([-1, 0, 0, 1, 417], n)
        rate = float(rng.choice([0.0, 0.0, 0.01, 0.1, 0.5]))
        kinds = [str(rng.choice(odd)) if rng.random() < rate else "canonical" for _ in range(n)]
        if rng.random() < 0.1:
            kinds = ["untimed"] * n
        elif rng.random() < 0.02:  # no trace line at all: the read fails here
            kinds = ["noise"] * n
        text = "".join(
            _fuzz_line(rng, pe, int(t), k) + "\n" for t, k in zip(micros, kinds, strict=True)
        )
        if rng.random() < 0.1:
            text = text.replace("\n", "\r\n")
        if rng.random() < 0.1:
            text += _fuzz_line(rng, pe, T0, "canonical")[:9]  # a cut last line
        (folder / f"PE{pe}_send.csv").write_text(text)
    return folder


def _frame_read(folder: Path, block_bytes: int) -> tuple[Any, ...]:
    """The frames' read: the plain reader file by file, chunks added as frames."""
    from actorprof.analyze.timeline import TimeExtremes, TimelineAccumulator
    from actorprof.read import ReadReport, iter_logical

    report = ReadReport(kind="logical")
    acc, extremes = TimelineAccumulator(), TimeExtremes()
    for chunk in iter_logical(folder, report=report, block_bytes=block_bytes, line_numbers=True):
        acc.add(chunk)
        extremes.add(report.files[-1].path, chunk["time_s"].to_numpy(), chunk["line"].to_numpy())
    return report, acc, extremes


def _engine_read(folder: Path, engine: Engine) -> tuple[Any, ...]:
    from actorprof.engine.timeline import reduce_times
    from actorprof.read import ReadReport, logical_files

    report = ReadReport(kind="logical")
    files = logical_files(folder, report=report)
    report.num_pes = None
    acc, extremes = reduce_times(files, report, base_s=1e-3, max_bins=100_000, engine=engine)
    return report, acc, extremes


def _outcome(read: Any, *args: Any) -> tuple[Any, ...]:
    """What a read gives: the timeline, named outliers and the report, or its error."""
    try:
        report, acc, extremes = read(*args)
    except TraceFormatError as exc:
        return ("error", str(exc))
    window = acc.drop_outliers()
    timeline = acc.result()
    named = extremes.outliers(window) if acc.num_outliers else []
    return (
        timeline.counts,
        (timeline.bin_s, timeline.start_s, timeline.first_s, timeline.last_s, window),
        timeline.untimed,
        timeline.outliers,
        timeline.pe_first_s,
        timeline.pe_last_s,
        named,
        report.to_dict(),
        report.warnings,
        report.notes,
    )


def _assert_same(got: tuple[Any, ...], want: tuple[Any, ...]) -> None:
    assert len(got) == len(want)
    if isinstance(got[0], str) or isinstance(want[0], str):
        assert got == want
        return
    pd.testing.assert_frame_equal(got[0], want[0])
    assert got[1] == want[1]
    pd.testing.assert_series_equal(got[2], want[2])
    pd.testing.assert_series_equal(got[3], want[3])
    np.testing.assert_array_equal(got[4], want[4])
    np.testing.assert_array_equal(got[5], want[5])
    assert got[6:] == want[6:]


FUZZ_WAYS = {
    "one unit": Engine(jobs=1, block_bytes=4_096),
    "many units": Engine(jobs=1, split_bytes=3_000, block_bytes=4_096),
    "tiny blocks": Engine(jobs=1, split_bytes=3_000, block_bytes=300),
}


#: Ways that read the fuzzed runs cut to their files' ends (:func:`_ends`):
#: blocks of 300 bytes cost a frame each to the frames' read.
ENDS_ONLY = {"tiny blocks"}
#: Lines kept of each fuzzed file there: its first ones and its last ones
#: (its cut last line too), files still of many blocks and of two units.
HEAD_LINES, TAIL_LINES = 100, 8


def _ends(folder: Path, dest: Path) -> Path:
    """A copy of ``folder``: the first ``HEAD_LINES`` and the last
    ``TAIL_LINES`` lines of each file, bytes as they are."""
    dest.mkdir()
    for path in sorted(folder.iterdir()):
        parts = path.read_bytes().split(b"\n")  # the last one: b"" or a cut line
        if len(parts) > HEAD_LINES + TAIL_LINES + 1:
            parts = parts[:HEAD_LINES] + parts[-TAIL_LINES - 1 :]
        (dest / path.name).write_bytes(b"\n".join(parts))
    return dest


class Fuzzed(NamedTuple):
    folder: Path  # fuzz_run's
    ends: Path  # its files' ends
    many_units: tuple[Any, ...]  # the "many units" way's outcome


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int], Fuzzed]:
    """The fuzzed run of a seed, made and read the "many units" way once
    for the tests that compare it and count what it holds."""
    made: dict[int, Fuzzed] = {}
    base = tmp_path_factory.mktemp("fuzz")

    def get(seed: int) -> Fuzzed:
        if seed not in made:
            folder = fuzz_run(base / f"run{seed}", seed)
            out = _outcome(_engine_read, folder, FUZZ_WAYS["many units"])
            made[seed] = Fuzzed(folder, _ends(folder, base / f"ends{seed}"), out)
        return made[seed]

    return get


@pytest.mark.parametrize("seed", range(16))
def test_random_damaged_runs_give_the_frame_readers_timeline(
    fuzzed: Callable[[int], Fuzzed], seed: int
) -> None:
    run = fuzzed(seed)
    wanted: dict[tuple[Path, int], Any] = {}  # the frames' read, once per folder and block size
    for way, engine in FUZZ_WAYS.items():
        folder = run.ends if way in ENDS_ONLY else run.folder
        key = (folder, engine.block_bytes)
        if key not in wanted:
            wanted[key] = _outcome(_frame_read, folder, engine.block_bytes)
        got = run.many_units if way == "many units" else _outcome(_engine_read, folder, engine)
        try:
            _assert_same(got, wanted[key])
        except AssertionError as exc:
            raise AssertionError(f"seed {seed}, {way}: {exc}") from exc


def test_the_fuzzed_runs_reach_every_case(fuzzed: Callable[[int], Fuzzed]) -> None:
    """The random runs above hold what they are meant to: outliers named by
    line, untimed lines, skipped lines, times binned through floats, big files
    of canonical blocks and groups of small files, and an error; their ends
    still files cut in units of many tiny blocks."""
    from actorprof.analyze.timeline import EXACT_MICROS

    assert T0 < EXACT_MICROS < 9_700_000_000 * 1_000_000
    tiny = FUZZ_WAYS["tiny blocks"]
    seen: dict[str, int] = {}
    for seed in range(16):
        folder, ends, out = fuzzed(seed)
        seen["split ends"] = seen.get("split ends", 0) + sum(
            p.stat().st_size > tiny.split_bytes for p in ends.iterdir()
        )
        if isinstance(out[0], str):
            seen["error"] = seen.get("error", 0) + 1
            continue
        text = b"".join(p.read_bytes() for p in folder.iterdir())
        counts = {
            "named outliers": len(out[6]),
            "untimed": int(out[2].sum()),
            "skipped": out[7]["lines_skipped"],
            "warnings": len(out[8]),
            # times of 10 digits from 9.7e9 s: binned through floats
            "floats": len(re.findall(rb", 97\d{8}\.", text)),
            "big files": sum(p.stat().st_size > 4 * 4_096 for p in folder.iterdir()),
        }
        for key, value in counts.items():
            seen[key] = seen.get(key, 0) + value
    assert all(seen.get(key, 0) > 0 for key in ("named outliers", "untimed", "skipped")), seen
    assert all(seen.get(key, 0) > 0 for key in ("warnings", "big files", "error", "floats")), seen
    assert seen["split ends"] > 0, seen


def test_times_from_2_51_us_are_binned_as_their_floats(tmp_path: Path) -> None:
    """From 2**51 us a time's float may round back to another microsecond
    (8616150193.001000 s gives ...000999, in the bin before): canonical lines
    there are binned as the reader's ``time_s`` is, not as their digits."""
    from actorprof.analyze.timeline import EXACT_MICROS

    stamps = ["8616150193.001000", "8616150193.003999", "8616150193.005000", "8616150193.812131"]
    assert all(
        round(int(s.replace(".", "")) / 1e6 * 1e6) != int(s.replace(".", "")) for s in stamps[:3]
    )
    assert all(int(s.replace(".", "")) >= EXACT_MICROS for s in stamps)
    folder = tmp_path / "run"
    folder.mkdir()
    for pe in range(3):
        lines = [f"0, {pe}, 0, {(pe + k) % 3}, 8, {s}\n" for k, s in enumerate(stamps)]
        (folder / f"PE{pe}_send.csv").write_text("".join(lines) * 3)
    for engine in FUZZ_WAYS.values():
        got = _outcome(_engine_read, folder, engine)
        _assert_same(got, _outcome(_frame_read, folder, engine.block_bytes))
        assert int(got[0].to_numpy().sum()) == 36


def test_outliers_tied_as_floats_are_named_as_the_frames_name_them(tmp_path: Path) -> None:
    """Two microseconds from 2**51 us may be one float: lines tied so are
    picked among the extremes in line order, as the frame reader picks them."""
    from actorprof.analyze.timeline import OUTLIER_QUANTILE

    folder = tmp_path / "run"
    folder.mkdir()
    # the four ties are outliers while the bulk's 0.1 % is more than 4 messages
    bulk = "".join(f"0, 0, 0, 1, 8, 1721412345.{k:06d}\n" for k in range(2500))
    assert OUTLIER_QUANTILE * 2 * 2500 > 4
    (folder / "PE0_send.csv").write_text(bulk)
    # one float (8616150193.812001 and .812000 round alike), but not one microsecond
    assert 8616150193812001 / 1e6 == 8616150193812000 / 1e6
    ties = ["812001", "812001", "812000", "812000"]
    text = "".join(f"0, 1, 0, 0, 8, 8616150193.{t}\n" for t in ties) + bulk.replace(
        ", 0, 0, 1", ", 1, 0, 0"
    )
    (folder / "PE1_send.csv").write_text(text)
    for engine in FUZZ_WAYS.values():
        got = _outcome(_engine_read, folder, engine)
        _assert_same(got, _outcome(_frame_read, folder, engine.block_bytes))
        assert [o.line for o in got[6]] == [2, 3, 4]  # the stable order's last three


@pytest.mark.parametrize("seed", range(30))
def test_extremes_keep_the_stable_orders_ends(seed: int) -> None:
    """The lines kept per chunk are ``order[:3]`` and ``order[-3:]`` of the
    stable sort by time (ties: the first lines at the bottom, the last ones at
    the top), from floats and from whole microseconds alike."""
    from actorprof.analyze.timeline import TimeExtremes

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    micros = T0 + rng.integers(0, int(rng.choice([2, 5, 1000])), n)  # many ties
    lines = np.arange(1, n + 1, dtype=np.int64) * 2
    order = np.argsort(micros, kind="stable")
    picked = order if n <= 6 else np.r_[order[:3], order[-3:]]
    want = sorted(zip((micros[picked] / 1e6).tolist(), lines[picked].tolist(), strict=True))
    for add in ("add", "add_micros"):
        extremes = TimeExtremes()
        values = micros / 1e6 if add == "add" else micros
        getattr(extremes, add)("f", values, lines)
        assert sorted(extremes.by_file["f"]) == want


@pytest.mark.parametrize("seed", range(12))
def test_extremes_merge_is_a_hold_per_file(seed: int) -> None:
    """Merging keeps what holding each file's extremes in turn keeps: the
    same files in the same order, the same (time, line) lists, long lists
    trimmed to their ends; whether the files are new here or not."""
    from actorprof.analyze.timeline import TimeExtremes

    rng = np.random.default_rng(seed)

    def held(n: int) -> list[tuple[float, int]]:
        return [(float(t), int(i)) for i, t in enumerate(rng.integers(0, 9, n), 1)]

    names = [f"PE{i}_send.csv" for i in range(int(rng.integers(1, 8)))]
    mine, other = TimeExtremes(), TimeExtremes()
    for name in names[: int(rng.integers(0, len(names) + 1))]:
        mine.by_file[name] = held(int(rng.integers(0, 13)))
    shared = bool(seed % 2)  # other names files mine holds too, or only new ones
    for name in reversed(names) if shared else [n + "x" for n in names]:
        other.by_file[name] = held(int(rng.choice([0, 3, 12, 13, 30])))
    want = TimeExtremes()
    want.by_file = {path: list(h) for path, h in mine.by_file.items()}
    for path, h in other.by_file.items():
        want._hold(path, h)
    before = {path: list(h) for path, h in other.by_file.items()}
    mine.merge(other)
    assert list(mine.by_file.items()) == list(want.by_file.items())
    assert other.by_file == before  # not modified


def test_many_files_are_planned_by_count_none_stated_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From ``Engine.count_plan_files`` files on, the timeline's read is
    planned by the files' count (4 units per worker), as the matrix's is: no
    file is stat'ed before the map (65,536 files: 0.2-0.4 s)."""
    import actorprof.engine.timeline as timeline_engine

    from .test_count_plan import stats_taken

    folder = damaged_run(tmp_path / "run")
    n = len(list(folder.glob("PE*_send.csv")))
    ref = timeline_view(folder)
    stated = stats_taken(monkeypatch)
    units: list[int] = []
    real_run_map = timeline_engine.run_map

    def counted(func: Any, todo: Any, engine: Any, **kwargs: Any) -> Any:
        units.append(len(todo))
        return real_run_map(func, todo, engine, **kwargs)

    monkeypatch.setattr(timeline_engine, "run_map", counted)
    _same(timeline_view(folder, engine=Engine(jobs=2, count_plan_files=n)), ref)
    assert not stated and units == [min(n, 8)]
    stated.clear()
    _same(timeline_view(folder, engine=Engine(jobs=2, count_plan_files=n + 1)), ref)
    assert len(stated) == n


def test_files_read_together_travel_as_columns(tmp_path: Path) -> None:
    """A unit's small files read together come back as columns, not a report
    each (65,536 objects at 65,536 PEs); their reports, once asked for, are
    the plain read's."""
    from actorprof.engine.timeline import reduce_times
    from actorprof.read import FileColumns, ReadReport, logical_files

    for pe in range(30):
        (tmp_path / f"PE{pe}_send.csv").write_text(
            "".join(f"0, {pe}, 0, {(pe + k) % 30}, 8, 1721412345.{k:06d}\n" for k in range(4))
        )
    got = {}
    for jobs in (1, 2):
        report = ReadReport(kind="logical")
        files = logical_files(tmp_path, phase=None, num_pes=None, report=report, sizes=False)
        reduce_times(
            files,
            report,
            base_s=0.001,
            max_bins=1024,
            engine=Engine(jobs=jobs, count_plan_files=1, parallel_min_bytes=0),
        )
        held = list(report.file_accounts())
        assert all(isinstance(e, FileColumns) for e in held) and len(held) < 30
        got[jobs] = report.files
    assert got[1] == got[2]
    assert [f.lines_read for f in got[1]] == [4] * 30

"""The timeline read the engine's way (worker processes, runs of files per
unit) gives exactly the one-process timeline: bins, counts, outliers named by
file and line, line accounting, warnings, and the same first error."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from actorprof.engine import Engine
from actorprof.errors import TraceFormatError
from actorprof.kinds.timeline import TimelineView, perfetto_trace, timeline_view

from .test_timeline_batch import OUTLIERS, damaged_run

DATA = Path(__file__).resolve().parent / "data"
REAL = Path(__file__).resolve().parent / "data" / "real"

#: Many units (a few files each), run in two worker processes and in this one.
WAYS = {
    "processes": Engine(jobs=2, parallel_min_bytes=0, split_bytes=2_000, block_bytes=4_096),
    "in process, many units": Engine(jobs=1, split_bytes=2_000, block_bytes=4_096),
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


def _folders(tmp_path: Path) -> dict[str, Path]:
    folders = {"damaged": damaged_run(tmp_path / "damaged")}
    for name in ("logical_small", "logical_bad", "logical_phases", "logical_dat"):
        folders[name] = DATA / name
    for found in sorted(REAL.rglob("PE0_send.csv"))[:3]:
        folders[f"real {found.parent.name}"] = found.parent
    return folders


@pytest.mark.parametrize("way", list(WAYS))
def test_every_way_gives_the_one_process_timeline(tmp_path: Path, way: str) -> None:
    for name, folder in _folders(tmp_path).items():
        ref = timeline_view(folder)
        view = timeline_view(folder, engine=WAYS[way])
        try:
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

"""Times said exactly (issue 12, items 6-8): first/last sends, the Perfetto
tracks' integrals, and outlier times kept out of the bins."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from actorprof.analyze.timeline import TimelineAccumulator, outlier_window, send_timeline
from actorprof.cli import main
from actorprof.engine import Engine
from actorprof.kinds.timeline import papi_times, perfetto_trace, timeline_view


def file_times(folder: Path, pattern: str, column: int) -> dict[int, np.ndarray]:
    out = {}
    for f in sorted(folder.glob(pattern)):
        pe = int(f.name[2:].split("_")[0])
        out[pe] = np.loadtxt(f, delimiter=",", usecols=column, ndmin=1)
    return out


# --- item 6: exact first/last times ---------------------------------------


def test_first_last_and_duration_are_exact(examples: Path) -> None:
    folder = examples / "ig_8pe_2nodes" / "logical"
    times = file_times(folder, "PE*_send.csv", 5)
    view = timeline_view(folder)
    s = view.summary()
    start = s["start_epoch_s"]
    assert s["first_send_epoch_s"] == min(t.min() for t in times.values())
    assert s["last_send_epoch_s"] == max(t.max() for t in times.values())
    assert s["duration_s"] == 0.339996  # not 0.341 (bin edges)
    for pe, t in times.items():
        assert s["pe_first_send_s"][pe] == round(t.min() - start, 6)
        assert s["pe_last_send_s"][pe] == round(t.max() - start, 6)


def test_report_headline_duration_is_exact(examples: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["report", str(examples / "ig_8pe_2nodes"), "-o", str(tmp_path), "-j", "1"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["at_a_glance"]["duration_s"] == 0.339996
    assert "over 0.339996 s" in result.stderr
    assert "0.339996 s" in (tmp_path / "report.html").read_text()


# --- item 7: Perfetto tracks integrate to the messages ---------------------


def integrals(trace: dict[str, Any]) -> dict[tuple[int, str], float]:
    """Messages of each counter track: the rate held from one event to the next."""
    tracks: dict[tuple[int, str], list[tuple[float, float]]] = defaultdict(list)
    for e in trace["traceEvents"]:
        if e["ph"] == "C":
            tracks[(e["pid"], e["name"])].append((e["ts"], e["args"]["messages_per_s"]))
    out = {}
    for key, points in tracks.items():
        assert points[-1][1] == 0.0, f"track {key} does not close at 0"
        ts = np.array([p[0] for p in points])
        assert (np.diff(ts) > 0).all() and ts[0] >= 0
        rates = np.array([p[1] for p in points])
        out[key] = float((rates[:-1] * np.diff(ts)).sum() / 1e6)
    return out


def test_perfetto_sent_tracks_integrate_to_the_messages(examples: Path) -> None:
    view = timeline_view(examples / "ig_8pe_2nodes" / "logical")
    got = integrals(perfetto_trace(view))
    sent = view.timeline.counts.sum()
    for pe in range(8):
        assert got[(pe, "sent/s")] == pytest.approx(sent[pe], rel=1e-9)
    assert got[(8, "sent/s")] == pytest.approx(160_000, rel=1e-9)


def test_perfetto_with_papi_integrates_and_records_the_width(examples: Path) -> None:
    folder = examples / "histo_4pe" / "papi"
    view = timeline_view(folder)
    papi = papi_times(folder)
    trace = perfetto_trace(view, papi=papi)
    got = integrals(trace)
    handled = papi.handled.counts.sum()
    sent = view.timeline.counts.sum()
    for pe in range(4):
        assert got[(pe, "sent/s")] == pytest.approx(sent[pe], rel=1e-9)
        assert got[(pe, "handled/s")] == pytest.approx(handled[pe], rel=1e-9)
    assert trace["otherData"]["handled_bin_s"] == trace["otherData"]["bin_s"]


def test_perfetto_papi_before_the_first_send_is_not_dropped(examples: Path) -> None:
    folder = examples / "histo_4pe" / "papi"
    view = timeline_view(folder)
    papi = papi_times(folder)
    # handled 0.5 s before the first send (another node's clock): shift the PAPI times
    early = papi_times(folder, base_s=1e-3)
    shifted = type(early)(
        type(early.handled)(
            early.handled.counts,
            early.handled.bin_s,
            (early.handled.start_s or 0) - 0.5,
            early.handled.untimed,
        ),
        {pe: t - 0.5 for pe, t in papi.main_end_s.items()},
    )
    trace = perfetto_trace(view, papi=shifted)
    got = integrals(trace)
    for pe in range(4):
        assert got[(pe, "handled/s")] == pytest.approx(papi.handled.counts[pe].sum(), rel=1e-9)


# --- item 8: outlier times --------------------------------------------------


def flipped_run(examples: Path, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(examples / "ig_8pe_2nodes" / "logical", run / "logical")
    path = run / "logical" / "PE2_send.csv"
    lines = path.read_text().splitlines(keepends=True)
    # 1795245941 -> 1795249941: one flipped digit, 4,000 s (an hour) later
    lines[99] = lines[99].replace(", 1795245", ", 1795249", 1)
    lines[199] = lines[199].rsplit(",", 1)[0] + ", 1e300\n"
    lines[299] = lines[299].rsplit(",", 1)[0] + ", -1795245941.852365\n"
    lines[399] = lines[399].rsplit(",", 1)[0] + ", 0.000001\n"
    path.write_text("".join(lines))
    return run


def test_flipped_digit_huge_negative_and_zero_times_are_outliers(
    examples: Path, tmp_path: Path
) -> None:
    run = flipped_run(examples, tmp_path)
    line = (run / "logical" / "PE2_send.csv").read_text().splitlines()[99]
    assert float(line.rsplit(",", 1)[1]) > 1795249000  # the flip is there
    view = timeline_view(run / "logical")
    tl = view.timeline
    assert tl.num_outliers == 4 and tl.outliers is not None and tl.outliers[2] == 4
    assert int(tl.counts.to_numpy().sum()) == 160_000 - 4
    assert tl.bin_s == 1e-3 and len(tl.counts) == 341  # as the clean run
    assert view.duration_s == 0.339996
    s = view.summary()
    assert s["messages_outliers"] == 4
    assert [(Path(o["path"]).name, o["line"]) for o in s["time_outliers"]] == [
        ("PE2_send.csv", 100),
        ("PE2_send.csv", 200),
        ("PE2_send.csv", 300),
    ]
    warning = " ".join(view.reports["(unnamed)"].warnings)
    assert "4 message(s) have an outlier time_s" in warning and "PE2_send.csv:100:" in warning


def test_report_writes_everything_with_outliers(examples: Path, tmp_path: Path) -> None:
    run = flipped_run(examples, tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["report", str(run), "-o", str(out), "-j", "1"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["errors"] == {}
    assert report["timeline"]["messages_outliers"] == 4
    assert "time_outliers" in [f["rule"] for f in report["findings"]]
    assert report["at_a_glance"]["duration_s"] == 0.339996
    assert (out / "report.html").is_file()
    # the logical section takes the timeline's span, the raw extremes beside it
    totals = report["logical"]["phases"]["(unnamed)"]["totals"]
    assert totals["duration_s"] == 0.339996
    assert (totals["first_send_raw_s"], totals["last_send_raw_s"]) == (-1795245941.852365, 1e300)
    assert "sends over 0.339996 s" in (out / "report.html").read_text()


def test_export_with_outliers_is_small_and_integrates(examples: Path, tmp_path: Path) -> None:
    run = flipped_run(examples, tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["export", str(run / "logical"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "PE2_send.csv:100:" in result.stderr
    trace = json.loads((out / "export_perfetto.json").read_text())
    assert trace["otherData"]["bin_s"] == 1e-3
    assert integrals(trace)[(8, "sent/s")] == pytest.approx(160_000 - 4, rel=1e-9)


def test_papi_outlier_times(examples: Path, tmp_path: Path) -> None:
    folder = tmp_path / "papi"
    shutil.copytree(examples / "histo_4pe" / "papi", folder)
    path = folder / "PE1_PAPI.csv"
    lines = path.read_text().splitlines(keepends=True)
    main_at = next(i for i, x in enumerate(lines) if x.split(",")[5].strip() == "-1")
    lines[main_at] = lines[main_at].rsplit(",", 1)[0] + ", 5.000000\n"  # near zero
    lines[9] = lines[9].rsplit(",", 1)[0] + ", -3.5\n"
    path.write_text("".join(lines))
    clean = papi_times(examples / "histo_4pe" / "papi")
    papi = papi_times(folder)
    assert papi.num_outliers == 2
    assert 1 not in papi.main_end_s and set(papi.main_end_s) == {0, 2, 3}
    assert (
        int(papi.handled.counts.to_numpy().sum()) == int(clean.handled.counts.to_numpy().sum()) - 1
    )
    assert [(o.line) for o in papi.outliers] == sorted([10, main_at + 1])
    trace = perfetto_trace(timeline_view(folder), papi=papi)
    assert min(e["ts"] for e in trace["traceEvents"] if "ts" in e) >= 0


def test_memory_does_not_depend_on_a_time_magnitude() -> None:
    times = [1.7e9 + i * 1e-3 for i in range(1000)] + [1.7e9 + 3.0e7]  # a year later
    tl = send_timeline(_frame(times))
    assert tl.num_outliers == 1 and len(tl.counts) == 1000
    # a real gap (two bulks) is no outlier: bins widen to fit it instead
    acc = TimelineAccumulator(max_bins=1000)
    acc.add(_frame([1.7e9 + i * 1e-3 for i in range(500)] + [1.7e9 + 5e3 + i for i in range(500)]))
    acc.drop_outliers()
    wide = acc.result()
    assert wide.num_outliers == 0 and len(wide.counts) <= 1000


def _frame(times: list[float]) -> Any:
    import pandas as pd

    return pd.DataFrame({"src_pe": np.zeros(len(times), dtype=np.int64), "time_s": times})


def test_outlier_window_cannot_flag_a_long_tail() -> None:
    # 999,000 messages in 10 s, then 1,000 (0.1 %) trickling over the next hour
    times = np.concatenate([np.linspace(0, 10, 999), np.linspace(10, 3610, 1000)]) + 1.7e9
    low, high = outlier_window(times, np.r_[np.full(999, 1000), np.ones(1000)].astype(np.int64))
    assert low <= times[0] and high > times[-1]
    # the same tail after a silence of an hour (> 100 x 10 s) is cut off
    late = np.concatenate([np.linspace(0, 10, 999), np.linspace(3610, 3620, 1000)]) + 1.7e9
    low, high = outlier_window(late, np.r_[np.full(999, 1000), np.ones(1000)].astype(np.int64))
    assert high < late[999]
    # a flipped digit an hour after a 0.34 s run is out
    low, high = outlier_window(np.array([1.7e9, 1.7e9 + 0.34]), np.array([80_000, 80_000]))
    assert high < 1.7e9 + 3600


def _papi_folders(examples: Path, tmp_path: Path) -> dict[str, Path]:
    data = Path(__file__).resolve().parent / "data"
    folders = {name: data / name for name in ("papi_small", "papi_phases", "papi_extra")}
    folders["histo_4pe"] = examples / "histo_4pe" / "papi"
    crashed = shutil.copytree(examples / "histo_4pe" / "papi", tmp_path / "crashed")
    path = crashed / "PE2_PAPI.csv"  # no MAIN line: the PE never ended MAIN
    path.write_text("".join(x for x in path.read_text().splitlines(True) if ", -1," not in x))
    folders["crashed"] = crashed
    return folders


#: Every way the PAPI times are read: here, in worker processes a file per
#: unit, planned by count.
PAPI_TIMES_WAYS = {
    "here": Engine(jobs=1),
    "split": Engine(jobs=2, parallel_min_bytes=0, split_bytes=1),
    "by_count": Engine(jobs=2, count_plan_files=1),
}


@pytest.mark.parametrize("way", PAPI_TIMES_WAYS)
def test_batched_papi_times_are_the_file_by_file_ones(
    examples: Path, tmp_path: Path, way: str
) -> None:
    """Chunks of many files, read by each way of the engine, give what a
    chunk per file in one process gives (MAIN ends in the same order), and
    the same report."""
    from actorprof.kinds.timeline import _papi_times_named
    from actorprof.read import ReadReport

    for name, folder in _papi_folders(examples, tmp_path).items():
        for phase in [None, "phase2"] if name == "papi_phases" else [None]:
            fast_report, named_report = ReadReport(kind="papi"), ReadReport(kind="papi")
            fast = papi_times(folder, phase=phase, report=fast_report, engine=PAPI_TIMES_WAYS[way])
            named = _papi_times_named(
                folder, phase=phase, num_pes=None, report=named_report, base_s=1e-3
            )
            pd.testing.assert_frame_equal(fast.handled.counts, named.handled.counts)
            assert list(fast.main_end_s.items()) == list(named.main_end_s.items()), name
            assert (fast.outliers, fast.num_outliers) == (named.outliers, named.num_outliers)
            assert fast_report.to_dict() == named_report.to_dict()
            assert fast_report.warnings == named_report.warnings


def test_papi_times_on_a_dask_cluster(examples: Path, tmp_path: Path) -> None:
    """The PAPI times' units travel to a Dask cluster and back: the times
    and the report of the file-by-file read."""
    import os

    from actorprof.kinds.timeline import _papi_times_named
    from actorprof.read import ReadReport

    if os.environ.get("CI") and not os.environ.get("ACTORPROF_NO_EXTRAS"):
        import distributed
    else:
        distributed = pytest.importorskip("distributed")
    folder = _papi_folders(examples, tmp_path)["crashed"]
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        fast_report, named_report = ReadReport(kind="papi"), ReadReport(kind="papi")
        way = Engine(scheduler=cluster.scheduler_address, split_bytes=1)
        fast = papi_times(folder, report=fast_report, engine=way)
    named = _papi_times_named(folder, phase=None, num_pes=None, report=named_report, base_s=1e-3)
    pd.testing.assert_frame_equal(fast.handled.counts, named.handled.counts)
    assert list(fast.main_end_s.items()) == list(named.main_end_s.items())
    assert fast_report.to_dict() == named_report.to_dict()


@pytest.mark.parametrize("way", PAPI_TIMES_WAYS)
def test_papi_times_raise_the_first_error_in_file_order(tmp_path: Path, way: str) -> None:
    """PE ids beyond --num-pes in two files: the first file's line is named,
    whichever unit finishes first."""
    from actorprof.errors import TraceFormatError

    folder = shutil.copytree(
        Path(__file__).resolve().parent / "data" / "papi_small", tmp_path / "p"
    )
    files = sorted(folder.glob("PE*_PAPI.csv"), key=lambda f: int(f.name[2:].split("_")[0]))
    assert len(files) >= 3
    for f in (files[1], files[-1]):
        lines = f.read_text().splitlines(keepends=True)
        lines[0] = "0, 99, " + lines[0].split(", ", 2)[2]
        f.write_text("".join(lines))
    with pytest.raises(TraceFormatError) as caught:
        papi_times(folder, num_pes=len(files), engine=PAPI_TIMES_WAYS[way])
    assert Path(str(caught.value.path)).name == files[1].name and caught.value.line == 1


def test_the_export_reads_the_papi_times_in_parallel_to_the_same_file(
    examples: Path, tmp_path: Path
) -> None:
    """``export`` with a PAPI trace writes the same file with one worker as
    with two (the PAPI times through the engine)."""
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        result = CliRunner().invoke(
            main, ["export", str(examples / "histo_4pe"), "-j", jobs, "-q", "-o", str(out)]
        )
        assert result.exit_code == 0, result.output
        outs.append((out / "export_perfetto.json").read_bytes())
    assert outs[0] == outs[1]
    assert b"handled/s" in outs[0]


def test_papi_outliers_are_named_after_a_batched_read(examples: Path, tmp_path: Path) -> None:
    """An outlier found by the batched read is named by a read with line
    numbers; the report is that read's alone (nothing counted twice)."""
    from actorprof.read import ReadReport

    folder = tmp_path / "papi"
    shutil.copytree(examples / "histo_4pe" / "papi", folder)
    path = folder / "PE3_PAPI.csv"
    lines = path.read_text().splitlines(keepends=True)
    lines[4] = lines[4].rsplit(",", 1)[0] + ", -1.0\n"
    path.write_text("".join(lines))
    report = ReadReport(kind="papi")
    papi = papi_times(folder, report=report)
    assert [(Path(o.path).name, o.line) for o in papi.outliers] == [("PE3_PAPI.csv", 5)]
    clean = ReadReport(kind="papi")
    papi_times(examples / "histo_4pe" / "papi", report=clean)
    assert len(report.files) == len(clean.files) == 4
    assert report.lines_read == clean.lines_read
    assert sum("outlier" in w for w in report.warnings) == 1

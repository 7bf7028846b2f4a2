"""Timeline histogram, phases on one axis, Perfetto export."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from actorprof.analyze.timeline import TimelineAccumulator, rebin, send_timeline
from actorprof.cli import main
from actorprof.kinds.timeline import perfetto_trace, timeline_view
from actorprof.plot.timeline import plot_rate, plot_timeline_heat


def frame(pes: list[int], times: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"src_pe": pes, "time_s": times})


def test_bins_by_hand() -> None:
    df = frame([0, 0, 1, 1, 2], [100.0, 100.0009, 100.0011, 100.0035, np.nan])
    tl = send_timeline(df)
    assert tl.bin_s == 1e-3
    assert tl.start_s == pytest.approx(100.0)
    assert tl.counts.to_numpy().tolist() == [[2, 0, 0], [0, 1, 0], [0, 0, 0], [0, 1, 0]]
    assert tl.counts.index.to_numpy() == pytest.approx([0, 0.001, 0.002, 0.003])
    assert tl.untimed.tolist() == [0, 0, 1]
    assert tl.rate.tolist() == pytest.approx([2000, 1000, 0, 1000])


def test_width_doubles_and_conserves() -> None:
    rng = np.random.default_rng(0)
    df = frame(list(rng.integers(0, 4, 5000)), list(50 + rng.random(5000)))
    tl = send_timeline(df, max_bins=100)
    assert len(tl.counts) <= 100
    assert tl.bin_s == pytest.approx(1e-3 * 2**4)  # 1000 ms-bins -> 63 bins of 16 ms
    assert tl.counts.to_numpy().sum() == 5000
    np.testing.assert_array_equal(
        tl.counts.sum().to_numpy(), np.bincount(df["src_pe"], minlength=4)
    )


def test_merge_equals_one_pass_whatever_the_split() -> None:
    rng = np.random.default_rng(1)
    df = frame(list(rng.integers(0, 3, 3000)), list(10 + 2 * rng.random(3000)))
    df = df.sort_values("time_s", ignore_index=True)  # the first 100 span ~70 ms
    one = send_timeline(df, max_bins=300)
    a = TimelineAccumulator(max_bins=300)
    b = TimelineAccumulator(max_bins=300)
    a.add(df.iloc[:100])  # few bins: stays fine-grained
    b.add(df.iloc[100:])  # many bins: coarsens
    a.result(), b.result()  # settle both (adds are merged lazily)
    assert a.level < b.level
    a.merge(b)
    merged = a.result()
    assert merged.bin_s == one.bin_s
    pd.testing.assert_frame_equal(merged.counts, one.counts)


def test_rebin() -> None:
    tl = send_timeline(frame([0] * 10, [float(i) * 1e-3 for i in range(10)]))
    r = rebin(tl, 3)
    assert r.bin_s == pytest.approx(4e-3)
    assert r.counts[0].tolist() == [4, 4, 2]
    with pytest.raises(ValueError):
        rebin(tl, 0)


def test_counts_beyond_int32_stay_exact() -> None:
    # the table is int32 only while every count fits: a count past it is int64
    acc = TimelineAccumulator()
    acc.add(frame([0, 0, 1], [10.0, 10.0, 10.0021]))
    small = acc.result()
    assert small.counts.to_numpy().dtype == np.int32
    for _ in range(31):  # doubles every count: 2 * 2**31 in PE 0's first bin
        acc.merge(acc)
    big = acc.result()
    assert big.counts.to_numpy().dtype == np.int64
    assert big.counts.to_numpy().tolist() == [[2**32, 0], [0, 0], [0, 2**31]]
    assert int(big.counts.to_numpy().sum()) == 3 * 2**31
    # sums of int32 counts that pass int32 widen too (the display's bins)
    top = np.iinfo(np.int32).max
    near = replace(small, counts=pd.DataFrame(np.array([[top], [top]], dtype=np.int32)))
    merged = rebin(near, 1)
    assert merged.counts.to_numpy().dtype == np.int64
    assert merged.counts.to_numpy().tolist() == [[2 * top]]
    assert rebin(small, 1).counts.to_numpy().dtype == np.int32  # fits: stays narrow
    assert rebin(small, 1).counts.to_numpy().tolist() == [[2, 1]]


def test_merge_into_an_empty_accumulator_takes_its_state() -> None:
    rng = np.random.default_rng(2)
    df = frame(list(rng.integers(0, 5, 4000)), list(20 + 3 * rng.random(4000)))
    coarse = TimelineAccumulator(max_bins=50)
    coarse.add(df)
    coarse.result()
    assert coarse.level > 0
    empty = TimelineAccumulator(max_bins=50)
    empty.merge(coarse)
    assert empty.level == coarse.level
    pd.testing.assert_frame_equal(empty.result().counts, send_timeline(df, max_bins=50).counts)


def test_real_trace_and_phases(examples: Path, data: Path) -> None:
    view = timeline_view(examples / "ig_8pe_2nodes" / "logical")
    assert view.timeline.counts.to_numpy().sum() == 160_000
    assert view.timeline.counts.sum().tolist() == [
        20015,
        20000,
        19904,
        19980,
        19934,
        20172,
        19931,
        20064,
    ]
    assert [p.name for p in view.phases] == ["(unnamed)"]
    phases = timeline_view(data / "logical_phases")
    assert {p.name: p.messages for p in phases.phases} == {"(unnamed)": 2, "bfs": 3, "tc_x": 1}
    assert phases.timeline.counts.to_numpy().sum() == 6
    only = timeline_view(data / "logical_phases", phase="bfs")
    assert [p.name for p in only.phases] == ["bfs"]


def test_plots_draw_the_data(examples: Path) -> None:
    view = timeline_view(examples / "ig_8pe_2nodes" / "logical")
    shown = view.display(50)
    ax = plot_rate(shown, spans=[("a", 0.0, 0.1)])
    heights = ax.patches[0].get_data().values  # the stairs
    assert heights.sum() * shown.bin_s == pytest.approx(160_000)
    assert any(t.get_text() == "a" for t in ax.texts)
    ax = plot_timeline_heat(shown, log=True)
    image = ax.images[0].get_array()
    assert image.shape == (8, len(shown.counts))
    assert np.nansum(image) == 160_000


def test_perfetto_trace_follows_the_format(examples: Path) -> None:
    view = timeline_view(examples / "ig_8pe_2nodes" / "logical")
    trace = json.loads(json.dumps(perfetto_trace(view, bins=100)))
    events = trace["traceEvents"]
    assert trace["displayTimeUnit"] == "ms"
    for e in events:
        assert e["ph"] in {"M", "C", "X"}
        assert isinstance(e["pid"], int) and isinstance(e["name"], str)
        if e["ph"] != "M":
            assert e["ts"] >= 0
        if e["ph"] == "C":
            assert all(isinstance(v, float) for v in e["args"].values())
        if e["ph"] == "X":
            assert e["dur"] >= 0
    names = {e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {f"PE {i}" for i in range(8)} | {"all PEs"}
    bin_s = trace["otherData"]["bin_s"]
    total = [e for e in events if e["ph"] == "C" and e["pid"] == 8]
    assert sum(e["args"]["messages_per_s"] for e in total) * bin_s == pytest.approx(160_000)
    # the cap on events keeps a file openable
    small = perfetto_trace(view, bins=100, max_events=90)
    assert len([e for e in small["traceEvents"] if e["ph"] == "C" and e["pid"] == 8]) <= 10


def test_cli_timeline_and_export(examples: Path, tmp_path: Path) -> None:
    trace = str(examples / "ig_8pe_2nodes" / "logical")
    result = CliRunner().invoke(main, ["timeline", trace, "-o", str(tmp_path), "--bins", "40"])
    assert result.exit_code == 0, result.stderr
    assert [Path(p).name for p in result.stdout.splitlines()] == [
        "timeline_rate.png",
        "timeline_counts.csv",
        "timeline_summary.json",
    ]
    summary = json.loads((tmp_path / "timeline_summary.json").read_text())
    assert summary["messages_timed"] == 160_000 and summary["messages_untimed"] == 0
    assert summary["num_pes"] == 8 and summary["bin_s"] == 0.001
    assert summary["duration_s"] == 0.339996  # exact: last send - first send
    counts = pd.read_csv(tmp_path / "timeline_counts.csv", index_col=0)
    assert len(counts) <= 40 and counts.to_numpy().sum() == 160_000
    assert "160,000 timed messages" in result.stderr
    result = CliRunner().invoke(main, ["export", trace, "-o", str(tmp_path), "-q"])
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.strip() == str(tmp_path / "export_perfetto.json")
    assert json.loads((tmp_path / "export_perfetto.json").read_text())["traceEvents"]


def test_untimed_trace(data: Path, examples: Path, tmp_path: Path) -> None:
    """No message has a time: nothing to draw or export (its duration, peak
    and last sends are unknown, not 0): exit 1, saying why; the report
    reads the rest. Some untimed messages: said, by timeline and export."""
    untimed = str(data / "logical_dat")
    for command in ("timeline", "export"):
        result = CliRunner().invoke(main, [command, untimed, "-o", str(tmp_path / command)])
        assert result.exit_code == 1, result.output
        assert f"{untimed}: none of its 3 messages has a send time" in result.stderr
        assert not (tmp_path / command).exists() or not any((tmp_path / command).iterdir())
    result = CliRunner().invoke(main, ["report", untimed, "-o", str(tmp_path / "r"), "-j", "1"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["timeline"] is None and "has a send time" in report["errors"]["timeline"]
    assert report["at_a_glance"]["messages"] == 3
    some = tmp_path / "some"
    some.mkdir()
    (some / "PE0_send.csv").write_text("0, 0, 0, 1, 8\n0, 0, 0, 1, 8, 1721412345.000001\n")
    for command in ("timeline", "export"):
        result = CliRunner().invoke(main, [command, str(some), "-o", str(tmp_path / "s")])
        assert result.exit_code == 0, result.output
        assert "1 messages have no timestamp (5-column lines)" in result.stderr


def test_export_with_papi_regions(examples: Path, tmp_path: Path) -> None:
    run_dir = examples / "histo_4pe" / "papi"  # logical + PAPI of one run
    result = CliRunner().invoke(main, ["export", str(run_dir), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    assert "PAPI regions from" in result.stderr and "warning" not in result.stderr
    events = json.loads((tmp_path / "export_perfetto.json").read_text())["traceEvents"]
    mains = [e for e in events if e["name"] == "MAIN"]
    assert sorted(e["pid"] for e in mains) == [0, 1, 2, 3]
    assert all(e["ph"] == "X" and 0 < e["dur"] < 1e6 for e in mains)  # under a second
    handled = [e for e in events if e["name"] == "handled/s"]
    assert {e["pid"] for e in handled} == {0, 1, 2, 3}


def test_export_says_which_pes_get_no_main_region(examples: Path, tmp_path: Path) -> None:
    """An empty PAPI file (a PE whose job died before its counters were
    written): its PE has no MAIN slice, and the export says so."""
    import shutil

    run_dir = shutil.copytree(examples / "histo_4pe" / "papi", tmp_path / "run")
    (run_dir / "PE2_PAPI.csv").write_bytes(b"")
    result = CliRunner().invoke(main, ["export", str(run_dir), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.stderr
    assert (
        "warning: no MAIN region for 1 of 4 PEs (PE 2): the PAPI trace has no MAIN line"
        in result.stderr
    )
    events = json.loads((tmp_path / "out" / "export_perfetto.json").read_text())["traceEvents"]
    assert sorted(e["pid"] for e in events if e["name"] == "MAIN") == [0, 1, 3]


def test_papi_times_and_clock_check(examples: Path) -> None:
    from actorprof.kinds.timeline import clock_overlap, papi_times

    papi = papi_times(examples / "histo_4pe" / "papi")
    # PROC lines per receiving PE: the file's lines minus its MAIN line
    assert papi.handled.counts.sum().tolist() == [10112, 9923, 9925, 10040]
    assert sorted(papi.main_end_s) == [0, 1, 2, 3]
    same_run = timeline_view(examples / "histo_4pe" / "papi")
    other_run = timeline_view(examples / "histo_4pe" / "logical")
    assert clock_overlap(same_run, papi)
    assert not clock_overlap(other_run, papi)


def test_export_warns_on_papi_of_another_run(examples: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "export",
            str(examples / "histo_4pe" / "logical"),
            "--papi",
            str(examples / "histo_4pe" / "papi"),
            "-o",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0
    assert "probably from another run" in result.stderr


def test_bin_edges_are_exact() -> None:
    # 0.003 s is 3 bins of 1 ms exactly; float division would put some of
    # these (x.003 / 0.001 = 2999.9999...) one bin early
    # (float division mis-bins 542 of the 4,000 whole milliseconds of 4 seconds)
    times = [1795245597.008, 1795245597.018, 1795245597.031, 1795245597.064]
    for t in times:
        tl = send_timeline(frame([0], [t]))
        assert tl.start_s is not None
        assert round(tl.start_s * 1e6) == round(t * 1e6)  # the bin starts at t itself


def test_many_pes_get_fewer_bins() -> None:
    from actorprof.analyze.timeline import MAX_CELLS

    n = 4096
    rng = np.random.default_rng(2)
    df = frame(list(rng.integers(0, n, 200_000)), list(10 + 60 * rng.random(200_000)))
    tl = send_timeline(df)  # 60 s of 1 ms bins would be 60,000 bins x 4,096 PEs
    assert tl.counts.shape[1] == n
    assert tl.counts.size <= MAX_CELLS
    assert tl.counts.to_numpy().sum() == 200_000


def test_heat_strip_pools_many_pes_by_their_max() -> None:
    """Beyond 512 PEs an image row is a block of PEs showing its busiest PE:
    a PE that sent 50 messages in one bin is seen among 4,096 (nearest
    sampling of one row per PE showed one PE in eight)."""
    import pandas as pd

    from actorprof.analyze.timeline import send_timeline
    from actorprof.plot.timeline import MAX_HEAT_ROWS

    n = 4096
    pes = np.r_[np.arange(n), np.full(50, 1234)]
    times = 1_700_000_000.0 + np.r_[np.linspace(0, 1, n), np.full(50, 0.5)]
    frame = pd.DataFrame({"src_pe": pes, "time_s": times})
    import matplotlib.pyplot as plt

    _, (ax, other) = plt.subplots(2)
    tl = send_timeline(frame, num_pes=n, base_s=0.1)
    plot_timeline_heat(tl, ax=ax)
    image = ax.images[0].get_array()
    assert image.shape[0] == MAX_HEAT_ROWS == n // 8
    assert float(image.max()) == float(tl.counts.to_numpy().max()) >= 50
    assert float(image[1234 // 8].max()) >= 50  # the busy PE's block
    assert ax.get_ylabel() == "source PE (blocks of 8: max)"
    small = plot_timeline_heat(send_timeline(frame[frame.src_pe < 100], num_pes=100), ax=other)
    assert small.images[0].get_array().shape[0] == 100 and small.get_ylabel() == "source PE"
    plt.close("all")


@pytest.mark.parametrize("seed", range(8))
def test_merging_many_accumulators_equals_one(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Units merged one after another (held back, then sorted once) give what
    one accumulator fed every chunk gives, whatever level each unit reached."""
    import actorprof.analyze.timeline as timeline

    monkeypatch.setattr(timeline, "_PENDING_MIN", [0, 50, 1 << 20][seed % 3])
    rng = np.random.default_rng(seed)
    chunks = []
    for k in range(12):
        n = int(rng.integers(1, 300))
        spread = float(10.0 ** rng.integers(-2, 3))  # units reach different bin levels
        chunks.append(
            pd.DataFrame(
                {
                    "src_pe": rng.integers(0, 40, n),
                    "time_s": 1_721_400_000 + k * 0.5 + rng.random(n) * spread,
                }
            )
        )
    one = TimelineAccumulator(base_s=1e-3, max_bins=64)
    merged = TimelineAccumulator(base_s=1e-3, max_bins=64)
    for i in range(0, len(chunks), 3):
        unit = TimelineAccumulator(base_s=1e-3, max_bins=64)
        for chunk in chunks[i : i + 3]:
            one.add(chunk)
            unit.add(chunk)
        merged.merge(unit)
    a, b = one.result(), merged.result()
    pd.testing.assert_frame_equal(a.counts, b.counts)
    assert a.bin_s == b.bin_s and a.first_s == b.first_s and a.last_s == b.last_s


def test_a_view_without_its_table_keeps_its_summary(examples: Path) -> None:
    """What the run report holds once the timeline's figure is drawn."""
    view = timeline_view(examples / "ig_8pe_2nodes" / "logical")
    slim = view.without_table()
    assert slim.without_table() is slim
    for files in (False, True):
        assert slim.summary(files=files) == view.summary(files=files)
    changed = slim.summary(files=False)  # a copy: changing it changes nothing kept
    changed["phases"].clear()
    changed["pe_last_send_s"][0] = -1.0
    assert slim.summary(files=False) == view.summary(files=False)
    assert len(slim.timeline.counts) == 0 and len(view.timeline.counts) > 0
    assert slim.num_pes == view.num_pes == 8
    assert slim.duration_s == view.duration_s
    with pytest.raises(ValueError, match="200 bins"):
        slim.summary(bins=50)
    with pytest.raises(ValueError, match="let go"):
        slim.display()
    assert view.without_table(bins=50).summary(bins=50) == view.summary(bins=50)


@pytest.mark.parametrize("bins", [3, 1000])
def test_perfetto_events_as_texts_write_the_same_file(examples: Path, bins: int) -> None:
    """The export's counter events as JSON texts (the send rates' and, with
    a PAPI trace, the handled rates'): the file the dicts give."""
    from actorprof.kinds.timeline import (
        _counter_texts,
        _counter_track,
        papi_times,
        perfetto_stream,
    )
    from actorprof.write import iter_json, to_jsonable

    for run, with_papi in (("ig_8pe_2nodes", False), ("histo_4pe", True)):
        view = timeline_view(examples / run / "logical")
        papi = papi_times(examples / run / "papi") if with_papi else None

        def written(texts: bool) -> str:
            trace = perfetto_stream(view, papi=papi, bins=bins, texts=texts)  # noqa: B023
            return "".join(iter_json(to_jsonable(trace)))

        plain = written(False)
        assert written(True) == plain
        events = json.loads(plain)["traceEvents"]
        assert any(e["name"] == "handled/s" for e in events) == with_papi
    # odd floats and a value that JSON cannot hold (written as null by the
    # dicts' way), on a track of more events than a long list
    times = np.tile(np.array([0.0, 1e-7, 123456789.123, 2.5e16]), 300)
    for values in ([0.1, 1 / 3, 1e300, 0.0] * 300, [1.0, np.inf, 2.0, 2.0] * 300):
        for every_bin in (False, True):
            args = ("sent/s", 3, times, np.array(values), 3e16)
            texts = list(_counter_texts(*args, every_bin=every_bin))
            dicts = list(_counter_track(*args, every_bin=every_bin))
            assert "".join(iter_json(to_jsonable(iter(texts)))) == "".join(
                iter_json(to_jsonable(iter(dicts)))
            )
            assert len(texts) == len(dicts)

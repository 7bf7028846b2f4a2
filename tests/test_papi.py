"""PAPI trace: reader, per-PE breakdown, bars, view and `actorprof papi`, on exact numbers.

Fixture ``papi_small`` (hand-counted, non-zero counters; columns TOT, LST):

======  ======================================  ===========================
file    lines                                   notes
======  ======================================  ===========================
PE0     mb0 (0, 120, 40), mb1 (2, 300, 100),    MAIN in the middle
        MAIN (5, 1000, 400), mb0 (1, 130, 50)
PE1     mb0 (0, 200, 80), MAIN (7, 2000, 900),  CRLF, a blank line and a
        mb0 (3, 220, 70)                        noise line
PE2     mb1 (0, 500, 200), MAIN (0, 3000,       last line cut (no line end)
        1000)
======  ======================================  ===========================

(num_sends, PAPI_TOT_INS, PAPI_LST_INS) per line. ``PE0_send.csv`` lies next
to them and must be ignored.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from pandas.testing import assert_frame_equal

from actorprof import (
    ReadReport,
    iter_papi,
    papi_breakdown,
    papi_regions,
    papi_segments,
    papi_view,
    plot_papi_bars,
    read_papi,
)
from actorprof.analyze.breakdown import zero_counters
from actorprof.cli import main
from actorprof.errors import (
    ActorProfError,
    ActorProfWarning,
    NoTraceError,
    TraceFormatError,
    UsageError,
)
from actorprof.read.papi import papi_counter_names
from actorprof.schema import papi_columns, papi_dtypes, papi_pe_columns

DATA = Path(__file__).resolve().parent / "data"
SMALL = DATA / "papi_small"
REAL = DATA / "real" / "histo_4pe" / "papi"
REAL_MESSAGES = [10112, 9923, 9925, 10040]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


# --- reader -----------------------------------------------------------------


def test_read_small_columns_rows_and_accounting() -> None:
    report = ReadReport()
    df = read_papi(SMALL, report=report)
    assert tuple(df.columns) == papi_columns()
    assert df.dtypes.to_dict() == papi_dtypes()
    assert len(df) == 9
    assert [Path(f.path).name for f in report.files] == [
        "PE0_PAPI.csv",
        "PE1_PAPI.csv",
        "PE2_PAPI.csv",
    ]
    assert [f.lines_read for f in report.files] == [4, 3, 2]
    assert [f.lines_blank for f in report.files] == [0, 1, 0]
    assert report.files[1].skipped == {"wrong number of fields (expected 10, found 1)": 1}
    assert report.files[1].examples[0].line == 4
    assert list(report.files[2].skipped) == [
        "last line cut (no line end; the job was probably killed)"
    ]
    assert report.warnings == []
    main_rows = df[df["mailbox"] == -1]
    assert main_rows["dst_pe"].tolist() == [0, 1, 2]
    assert main_rows["num_sends"].tolist() == [5, 7, 0]
    assert main_rows["PAPI_TOT_INS"].tolist() == [1000, 2000, 3000]
    assert main_rows["PAPI_LST_INS"].tolist() == [400, 900, 1000]
    assert df["time_s"].iloc[0] == 1718051234.000010


def test_small_blocks_give_the_same_frame() -> None:
    whole = read_papi(SMALL, report=ReadReport())
    chunks = list(iter_papi(SMALL, report=ReadReport(), block_bytes=64))
    assert len(chunks) > 3
    assert_frame_equal(pd.concat(chunks, ignore_index=True), whole)


def test_skipped_lines_warn_without_report() -> None:
    with pytest.warns(ActorProfWarning, match="last line cut"):
        read_papi(SMALL)


def test_extra_counter_columns_are_named_not_lost() -> None:
    report = ReadReport()
    df = read_papi(DATA / "papi_extra", report=report)  # lower-case PE<i>_papi.csv
    assert list(df.columns) == list(papi_columns(("PAPI_TOT_INS", "PAPI_LST_INS", "counter3")))
    assert df["counter3"].tolist() == [33, 300, 34, 35, 600]
    assert "extra column(s) are named counter3" in report.notes[0]
    named = read_papi(DATA / "papi_extra", counters=["CYC"], report=ReadReport())
    assert list(named.columns)[7:10] == ["CYC", "counter2", "counter3"]
    assert named["CYC"].sum() == 11 + 100 + 12 + 13 + 400


def test_counter_names() -> None:
    assert papi_counter_names(2) == ("PAPI_TOT_INS", "PAPI_LST_INS")
    assert papi_counter_names(1) == ("PAPI_TOT_INS",)
    assert papi_counter_names(4, ["A"]) == ("A", "counter2", "counter3", "counter4")
    for bad, message in (
        (["A", "B", "C", "D", "E"], "at most 4"),
        (["A", "A"], "twice"),
        (["mailbox"], "column of the PAPI tables"),
        (["with blank"], "bad counter name"),
        ([""], "bad counter name"),
    ):
        with pytest.raises(UsageError, match=message):
            papi_counter_names(4, bad)
    with pytest.raises(UsageError, match="trace has 3 counter column"):
        read_papi(DATA / "papi_extra", counters=["A", "B", "C", "D"], report=ReadReport())


def test_phases_and_num_pes() -> None:
    report = ReadReport()
    assert len(read_papi(DATA / "papi_phases", report=report)) == 1
    assert "other phases here: phase2" in report.notes[0]
    phase = read_papi(DATA / "papi_phases", phase="phase2", report=ReadReport())
    assert phase["mailbox"].tolist() == [-1, 3]
    report = ReadReport()
    read_papi(SMALL, num_pes=4, report=report)
    assert report.missing_pes == [3]
    with pytest.raises(TraceFormatError, match=r"PE0_PAPI\.csv:2: src_pe 2 but --num-pes is 2"):
        read_papi(SMALL, num_pes=2, report=ReadReport())
    with pytest.raises(NoTraceError, match=r"PE<i>_PAPI\.csv"):
        read_papi(DATA / "overall_mixed", report=ReadReport())


def test_file_problems(tmp_path: Path) -> None:
    (tmp_path / "PE0_PAPI.csv").write_text("hello\nworld\n")
    with pytest.raises(TraceFormatError, match=r"PE0_PAPI.csv:1: no line of this file"):
        read_papi(tmp_path, report=ReadReport())
    (tmp_path / "PE0_PAPI.csv").write_text(
        "0, 0, 0, 0, 0, -1, 1, 5, 6, 1.000000\n"
        "0, 0, 0, 0, 0, -1, 1, 5, 6, 1.000000\n"
        "0, 1, 0, 3, 8, 0, 0, 5, 6, 1.000000\n"
    )
    (tmp_path / "PE1_PAPI.csv").write_text("0, 0, 0, 1, 8, 0, 0, 5, 6, 1.000000\n")
    report = ReadReport()
    df = read_papi(tmp_path, report=report)
    assert len(df) == 4
    text = "\n".join(report.warnings)
    assert "PE0_PAPI.csv: 2 MAIN lines" in text
    assert "PE0_PAPI.csv: 1 line(s) have dst_pe != 0" in text
    assert "PE1_PAPI.csv: no MAIN line" in text


def test_first_good_line_decides_the_counter_count(tmp_path: Path) -> None:
    (tmp_path / "PE0_PAPI.csv").write_text(
        "garbage, 1, 2\n"
        "0, 0, 0, 0, 0, 0, 0, 0, 0, 0\n"  # integers only: does not decide (no decimal point)
        "0, 0, 0, 0, 0, -1, 1, 10, 1.500000\n"
        "0, 1, 0, 0, 8, 0, 0, 20, 2.000000\n"
    )
    report = ReadReport()
    df = read_papi(tmp_path, report=report)
    assert list(df.columns)[7:] == ["PAPI_TOT_INS", "time_s"]  # 1 counter, from line 3
    assert df["PAPI_TOT_INS"].tolist() == [10, 20]
    assert report.files[0].lines_skipped == 2


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["0", "-1", "7", "x", "", "1.500000", "9" * 20]), max_size=13),
        max_size=6,
    ),
    st.booleans(),
)
def test_any_papi_text_parses_or_raises_our_error(rows: list[list[str]], end: bool) -> None:
    import tempfile

    text = "\n".join(", ".join(row) for row in rows) + ("\n" if end else "")
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "PE0_PAPI.csv").write_text(text)
        try:
            df = read_papi(folder, report=ReadReport())
        except ActorProfError:
            return
        assert list(df.columns)[:7] == list(papi_columns())[:7]
        assert 9 <= len(df.columns) <= 12 and df.columns[-1] == "time_s"


# --- analysis -----------------------------------------------------------------

REGIONS = pd.DataFrame(
    {
        "pe": [0, 0, 0, 1, 1, 2, 2],
        "mailbox": [-1, 0, 1, -1, 0, -1, 1],
        "region": ["MAIN", "PROC", "PROC", "MAIN", "PROC", "MAIN", "PROC"],
        "lines": [1, 2, 1, 1, 2, 1, 1],
        "num_sends": [5, 1, 2, 7, 3, 0, 0],
        "PAPI_TOT_INS": [1000, 250, 300, 2000, 420, 3000, 500],
        "PAPI_LST_INS": [400, 90, 100, 900, 150, 1000, 200],
    }
).astype({"region": object})


def test_papi_regions_exact() -> None:
    frame = read_papi(SMALL, report=ReadReport())
    before = frame.copy()
    assert_frame_equal(papi_regions(frame), REGIONS)
    assert_frame_equal(frame, before)  # input untouched
    chunks = iter_papi(SMALL, report=ReadReport(), block_bytes=64)
    assert_frame_equal(papi_regions(chunks), REGIONS)


def test_papi_breakdown_exact() -> None:
    table = papi_breakdown(REGIONS)
    assert table.index.name == "pe" and list(table.index) == [0, 1, 2]
    assert ["pe", *table.columns] == list(papi_pe_columns())
    expected = {
        "main_lines": [1, 1, 1],
        "messages": [3, 2, 1],
        "main_sends": [5, 7, 0],
        "proc_sends": [3, 3, 0],
        "PAPI_TOT_INS_main": [1000, 2000, 3000],
        "PAPI_TOT_INS_proc": [550, 420, 500],
        "PAPI_TOT_INS_total": [1550, 2420, 3500],
        "PAPI_LST_INS_main": [400, 900, 1000],
        "PAPI_LST_INS_proc": [190, 150, 200],
        "PAPI_LST_INS_total": [590, 1050, 1200],
    }
    for column, values in expected.items():
        assert table[column].tolist() == values, column
        # the columns that need the MAIN line hold <NA> where it is missing
        needs_main = column == "main_sends" or column.endswith(("_main", "_total"))
        assert table[column].dtype == (pd.Int64Dtype() if needs_main else np.int64), column
    np.testing.assert_allclose(table["PAPI_TOT_INS_per_message"], [550 / 3, 210.0, 500.0])
    np.testing.assert_allclose(table["PAPI_LST_INS_per_message"], [190 / 3, 75.0, 200.0])
    wide = papi_breakdown(REGIONS, num_pes=4)
    assert wide.loc[3, "main_lines"] == 0 and np.isnan(wide.loc[3, "PAPI_TOT_INS_per_message"])
    # PE 3 has no MAIN line: its MAIN is unknown, not 0
    assert wide.loc[3, "PAPI_TOT_INS_proc"] == 0 and wide.loc[3, "messages"] == 0
    for column in ("main_sends", "PAPI_TOT_INS_main", "PAPI_TOT_INS_total"):
        assert wide[column].isna().tolist() == [False, False, False, True], column
    with pytest.raises(ValueError, match="num_pes is 2"):
        papi_breakdown(REGIONS, num_pes=2)
    assert zero_counters(table) == []


def test_papi_segments() -> None:
    seg = papi_segments(REGIONS, "PAPI_TOT_INS")
    assert list(seg.columns) == ["MAIN", "PROC"]
    assert seg.to_numpy().tolist() == [[1000, 550], [2000, 420], [3000, 500]]
    by = papi_segments(REGIONS, "PAPI_TOT_INS", by_mailbox=True)
    assert list(by.columns) == ["MAIN", "mailbox 0", "mailbox 1"]
    assert by.to_numpy().tolist() == [[1000, 250, 300], [2000, 420, 0], [3000, 0, 500]]
    messages = papi_segments(REGIONS, "messages", by_mailbox=True, num_pes=4)
    assert list(messages.columns) == ["mailbox 0", "mailbox 1"]
    assert messages.to_numpy().tolist() == [[2, 1], [2, 0], [0, 1], [0, 0]]
    sends = papi_segments(REGIONS, "num_sends")
    assert sends.to_numpy().tolist() == [[5, 3], [7, 3], [0, 0]]
    with pytest.raises(ValueError, match="value must be a counter"):
        papi_segments(REGIONS, "PAPI_L1_DCM")


# --- view -------------------------------------------------------------------


def test_small_view_summary() -> None:
    view = papi_view(SMALL, report=ReadReport())
    s = view.summary()
    assert s["kind"] == "papi" and s["num_pes"] == 3 and s["num_pes_inferred"] is True
    assert s["counters"] == ["PAPI_TOT_INS", "PAPI_LST_INS"]
    assert s["counters_all_zero"] is False and s["zero_counters"] == []
    t = s["totals"]
    assert (t["messages"], t["main_lines"], t["main_sends"], t["proc_sends"]) == (6, 3, 12, 6)
    assert t["counters"]["PAPI_TOT_INS"] == {
        "main": 6000,
        "proc": 1470,
        "total": 7470,
        "per_message": 245.0,
        "all_zero": False,
    }
    assert t["counters"]["PAPI_LST_INS"]["total"] == 2840
    assert s["mailboxes"] == [
        {"mailbox": 0, "messages": 4, "num_sends": 4, "PAPI_TOT_INS": 670, "PAPI_LST_INS": 240},
        {"mailbox": 1, "messages": 2, "num_sends": 2, "PAPI_TOT_INS": 800, "PAPI_LST_INS": 300},
    ]
    tot = s["imbalance"]["PAPI_TOT_INS"]
    assert (tot["max"], tot["max_pe"], tot["mean"]) == (3500, 2, 2490)
    assert tot["max_over_mean"] == pytest.approx(3500 / 2490)
    assert s["imbalance"]["messages"]["max_pe"] == 0
    assert s["lines_read"] == 9 and s["lines_skipped"] == 2
    json.dumps(s)


def test_real_example_all_zero_counters() -> None:
    report = ReadReport()
    view = papi_view(REAL, report=report)
    pes = view.pes
    assert pes["main_lines"].tolist() == [1, 1, 1, 1]
    assert pes["messages"].tolist() == REAL_MESSAGES
    # handled messages = lines in the file minus the MAIN line
    lines = [len((REAL / f"PE{i}_PAPI.csv").read_text().splitlines()) for i in range(4)]
    assert lines == [10113, 9924, 9926, 10041]
    assert pes["messages"].tolist() == [n - 1 for n in lines]
    assert pes["main_sends"].tolist() == [10000] * 4 and pes["proc_sends"].sum() == 0
    assert view.all_zero and view.zero_counters == ("PAPI_TOT_INS", "PAPI_LST_INS")
    assert view.mailboxes == [0]
    s = view.summary()
    assert s["counters_all_zero"] is True
    assert "all PAPI counter values are 0" in s["counters_note"]
    assert any("all PAPI counter values are 0" in w for w in s["warnings"])
    assert s["totals"]["messages"] == 40000 and s["totals"]["sends"] == 40000
    assert s["imbalance"]["messages"]["max"] == 10112
    assert s["imbalance"]["PAPI_TOT_INS"]["max_over_mean"] is None
    # the real files: the MAIN line is written mid-file
    df = read_papi(REAL, report=ReadReport())
    assert (df.index[df["mailbox"] == -1] == [5016, 16427, 25053, 34979]).all()


def test_view_warns_without_report() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        papi_view(REAL)
    assert any("all PAPI counter values are 0" in str(w.message) for w in caught)


# --- plot -------------------------------------------------------------------


def _heights(ax: object) -> list[list[float]]:
    return [[bar.get_height() for bar in c] for c in ax.containers]  # type: ignore[attr-defined]


def test_plot_papi_bars_heights_and_labels() -> None:
    seg = papi_segments(REGIONS, "PAPI_TOT_INS", by_mailbox=True)
    before = seg.copy()
    ax = Figure().subplots()
    assert plot_papi_bars(seg, ax=ax, value_label="PAPI_TOT_INS", title="t") is ax
    assert _heights(ax) == [[1000, 2000, 3000], [250, 420, 0], [300, 0, 500]]
    assert [c.get_label() for c in ax.containers] == ["MAIN", "mailbox 0", "mailbox 1"]
    bottoms = [bar.get_y() for bar in ax.containers[2]]
    assert bottoms == [1250, 2420, 3000]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]
    assert [t.get_text() for t in ax.texts] == ["1,550", "2,420", "3,500"]
    assert ax.get_ylabel() == "PAPI_TOT_INS per PE" and ax.get_title() == "t"
    assert_frame_equal(seg, before)


def test_plot_papi_bars_sorted_and_zero() -> None:
    seg = papi_segments(REGIONS, "PAPI_TOT_INS")
    ax = Figure().subplots()
    plot_papi_bars(seg, ax=ax, sort=True)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "1", "0"]
    assert _heights(ax) == [[3000, 2000, 1000], [500, 420, 550]]
    zero = seg * 0
    ax = Figure().subplots()
    plot_papi_bars(zero, ax=ax)
    assert "all values are 0" in [t.get_text() for t in ax.texts]
    with pytest.raises(ValueError, match="non-negative"):
        plot_papi_bars(seg - 2000, ax=Figure().subplots())
    with pytest.raises(ValueError, match="empty"):
        plot_papi_bars(seg.iloc[:0], ax=Figure().subplots())


def test_plot_papi_bars_thousands_of_pes() -> None:
    n = 2000
    seg = pd.DataFrame(
        {"MAIN": np.arange(n) * 2, "PROC": np.full(n, 7)}, index=pd.RangeIndex(n, name="pe")
    )
    fig = Figure(figsize=(10, 4))
    ax = plot_papi_bars(seg, ax=fig.subplots(), sort=True)
    assert ax.containers == [] and len(ax.patches) == 2  # one outline per segment
    main, proc = ax.patches
    tops, edges, base = main.get_data()  # type: ignore[attr-defined]
    np.testing.assert_array_equal(tops, (np.arange(n) * 2)[::-1])
    np.testing.assert_array_equal(base, np.zeros(n))
    assert len(edges) == n + 1
    proc_tops, _, proc_base = proc.get_data()  # type: ignore[attr-defined]
    np.testing.assert_array_equal(proc_tops - proc_base, np.full(n, 7))
    np.testing.assert_array_equal(proc_base, tops)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert 2 < len(labels) <= 32 and labels[0] == "1"
    assert "rank" in ax.get_xlabel() and len(ax.texts) == 0


# --- CLI --------------------------------------------------------------------


def test_cli_real_example(tmp_path: Path) -> None:
    code, out, err = run("papi", str(REAL), "--num-pes", "4", "-o", str(tmp_path))
    assert code == 0, err
    names = [Path(p).name for p in out.splitlines()]
    assert names == ["papi_bars.png", "papi_pes.csv", "papi_mailboxes.csv", "papi_summary.json"]
    assert all(Path(p).stat().st_size > 0 for p in out.splitlines())
    assert "warning: all PAPI counter values are 0" in err
    assert "40,000 messages handled on 4 PEs" in err
    pes = pd.read_csv(tmp_path / "papi_pes.csv")
    assert pes["pe"].tolist() == [0, 1, 2, 3]
    assert pes["messages"].tolist() == REAL_MESSAGES
    regions = pd.read_csv(tmp_path / "papi_mailboxes.csv")
    assert regions["region"].tolist() == ["MAIN", "PROC"] * 4
    summary = json.loads((tmp_path / "papi_summary.json").read_text())
    assert summary["counters_all_zero"] is True and summary["num_pes_inferred"] is False
    assert summary["options"] == {"by_mailbox": False, "sort": "pe"}


def test_cli_real_example_draws_counts_when_counters_are_zero(tmp_path: Path) -> None:
    from actorprof.kinds.papi import write_papi
    from actorprof.write import OutputWriter

    view = papi_view(REAL, report=ReadReport())
    figures: list[Figure] = []

    class Capture(OutputWriter):
        def figure(self, fig: Figure, name: str, *, dpi: int = 150) -> Path:
            figures.append(fig)
            return super().figure(fig, name, dpi=dpi)

    write_papi(view, Capture(tmp_path, kind="papi"), by_mailbox=False, sort="pe")
    (fig,) = figures
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else ""  # 3.6-proof
    assert "All PAPI counters are 0" in suptitle
    messages, sends = fig.axes
    assert _heights(messages) == [[float(v) for v in REAL_MESSAGES]]
    assert _heights(sends) == [[10000.0] * 4, [0.0] * 4]
    assert "Messages handled" in messages.get_title()


def test_cli_small_options_and_quiet(tmp_path: Path) -> None:
    code, out, err = run(
        "papi", str(SMALL), "--by-mailbox", "--sort", "total", "-q", "-o", str(tmp_path)
    )
    assert code == 0 and err == ""
    assert len(out.splitlines()) == 4
    summary = json.loads((tmp_path / "papi_summary.json").read_text())
    assert summary["totals"]["counters"]["PAPI_TOT_INS"]["total"] == 7470
    assert summary["options"] == {"by_mailbox": True, "sort": "total"}
    code, _, err = run(
        "papi", str(DATA / "papi_extra"), "--counters", "CYC,L1", "--format", "svg",
        "-o", str(tmp_path / "x"),
    )  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "x" / "papi_bars.svg").is_file()
    pes = pd.read_csv(tmp_path / "x" / "papi_pes.csv")
    assert pes["counter3_total"].tolist() == [367, 635]
    assert pes["CYC_main"].tolist() == [100, 400]


def test_cli_errors(tmp_path: Path) -> None:
    code, _, err = run("papi", str(SMALL), "--counters", "A,A", "-o", str(tmp_path))
    assert code == 2 and "twice" in err
    code, _, err = run("papi", str(DATA / "overall_mixed"), "-o", str(tmp_path))
    assert code == 1 and "no trace file found" in err and "Traceback" not in err
    code, _, err = run("papi", str(SMALL), "--num-pes", "2", "-o", str(tmp_path))
    assert code == 1 and "--num-pes is 2" in err


# --- a crashed run: PEs without MAIN line ---------------------------------------


def _crashed_run(folder: Path) -> Path:
    """8 PEs handling 2 messages each; only PE 0 reached done(0) (its MAIN line)."""
    folder.mkdir()
    for pe in range(8):
        lines = [
            f"0, {(pe + 1) % 8}, 0, {pe}, 8, 0, 0, 100, 40, 1700000001.00000{k}\n" for k in (1, 2)
        ]
        if pe == 0:
            lines.insert(1, "0, 0, 0, 0, 0, -1, 50, 5000, 2000, 1700000001.000005\n")
        (folder / f"PE{pe}_PAPI.csv").write_text("".join(lines))
    return folder


def test_unknown_main_stays_unknown(tmp_path: Path) -> None:
    """Missing MAIN lines are empty, never 0: not in the totals, the CSV or the imbalance
    (counted as 0, PE 0, the only complete PE, was a 'straggler' of every counter)."""
    view = papi_view(_crashed_run(tmp_path / "run"), report=ReadReport())
    assert view.main_unknown == list(range(1, 8))
    s = view.summary()
    t = s["totals"]
    assert (t["messages"], t["main_lines"], t["main_sends"], t["sends"]) == (16, 1, None, None)
    assert t["counters"]["PAPI_TOT_INS"] == {
        "main": None,
        "proc": 1600,
        "total": None,
        "per_message": 100.0,
        "all_zero": False,
    }
    assert s["main_unknown_pes"] == list(range(1, 8))
    assert "MAIN region unknown on 7 of 8 PEs (PE 1-7)" in s["main_unknown_note"]
    for metric in ("PAPI_TOT_INS", "PAPI_LST_INS", "sends"):
        m = s["imbalance"][metric]
        assert m["n"] == 1 and m["stragglers"] == [], metric  # the known PE only
    assert s["imbalance"]["messages"]["n"] == 8
    json.dumps(s)
    assert any("MAIN UNKNOWN on 7 of 8 PEs (PE 1-7)" in line for line in view.summary_lines())


def test_unknown_main_in_the_files_and_the_figure(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["papi", str(_crashed_run(tmp_path / "run")), "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = (out / "papi_pes.csv").read_text().splitlines()
    header = rows[0].split(",")
    pe1 = dict(zip(header, rows[2].split(","), strict=True))
    assert (pe1["main_sends"], pe1["PAPI_TOT_INS_main"], pe1["PAPI_TOT_INS_total"]) == ("", "", "")
    assert pe1["PAPI_TOT_INS_proc"] == "200" and pe1["main_lines"] == "0"
    pe0 = dict(zip(header, rows[1].split(","), strict=True))
    assert (pe0["main_sends"], pe0["PAPI_TOT_INS_total"]) == ("50", "5200")
    # the figure: MAIN not drawn for PEs 1-7, said in the Axes and the title
    seg = papi_segments(
        papi_regions(iter_papi(tmp_path / "run", report=ReadReport())), "PAPI_TOT_INS", num_pes=8
    )
    assert seg["MAIN"].isna().tolist() == [False] + [True] * 7
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    plot_papi_bars(seg, ax=ax)
    texts = [t.get_text() for t in ax.texts]
    assert "MAIN unknown on 7 PE(s): not drawn" in texts
    assert texts.count(">=200") == 7 and "5,200" in texts
    assert [b.get_height() for b in ax.containers[0]] == [5000.0] + [0.0] * 7
    plt.close(fig)


def test_report_states_the_loss_and_judges_no_balance(tmp_path: Path) -> None:
    from actorprof.report.findings import report_findings

    papi = {
        "num_pes": 4,
        "main_unknown_pes": [1, 2, 3],
        "totals": {"messages": 12472},
        "imbalance": {
            "messages": {"max_over_mean": 3.0, "max": 9, "mean": 3, "max_pe": 0, "stragglers": [0]}
        },
    }
    logical = {"imbalance": {"count": {"sent": {}, "received": {}}}, "totals": {"messages": 22547}}
    found = report_findings({"papi": {"phases": {"": papi}}, "logical": {"phases": {"": logical}}})
    papi_found = [f for f in found if f.kind == "papi"]
    assert [f.rule for f in papi_found] == ["papi_main_unknown"]  # no hot PE, no straggler
    assert "PE 1-3" in papi_found[0].text
    assert (
        "The logical trace sent 22,547 messages; the PAPI trace handled 12,472 (55.3 %): "
        "10,075 message(s) left no PAPI line" in papi_found[0].text
    )
    alone = report_findings({"papi": {"phases": {"": papi}}})
    assert "logical trace" not in alone[0].text

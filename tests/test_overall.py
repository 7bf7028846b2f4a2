"""Overall profile: reader, time breakdown, checks, POP efficiencies, bars, `actorprof overall`.

Fixture ``overall_mixed/overall.txt`` (hand-made, 3 PEs, two labels):

========  ======  =====  =======  ============  =======  ======  =======  ======  ======  =====
label     PE      ins.   wait     outside       sends    s.i.p.  process  T_MAIN  T_COMM  PROC
========  ======  =====  =======  ============  =======  ======  =======  ======  ======  =====
Run 0     0       1000   500      1500          300/10   0/0     120/12   700     680     120
Run 0     1       2000   200      2200          400/20   50/2    250/8    1600    400     200
Run 0     2       1200   1000     2300 (warn)   200/5    0/0     300/15   1000    900     300
(empty)   0       100    50       150           10/1     0/0     20/2     90      40      20
(empty)   1       200    0        200           40/2     0/0     10/1     160     30      10
(empty)   2       50     150      200           20/1     5/1     35/3     30      140     30
========  ======  =====  =======  ============  =======  ======  =======  ======  ======  =====

(cycles/count). The PE blocks are interleaved and split, 6 lines of program
output and a blank line are mixed in, ``Run 0`` PE 2 carries the runtime's
warning line. ``overall_problems/overall.txt``: label ``x``, PE 0's printed
T_MAIN is 701 instead of 700 (fractions printed from 701), PE 1 lacks both
TCOMM lines (the second is the cut last line), a malformed T_sends line, and a
second PE 0 block of ``x`` (a repeated run, with the warning line).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
    imbalance,
    overall_view,
    plot_time_stacked,
    pop_efficiencies,
    read_overall,
    time_breakdown,
    time_checks,
)
from actorprof.cli import main
from actorprof.errors import ActorProfError, NoTraceError, TraceFormatError, UsageError
from actorprof.read.overall import BAD_PE_TAG
from actorprof.schema import OVERALL_COLUMNS, TIME_COLUMNS

DATA = Path(__file__).resolve().parent / "data"
MIXED = DATA / "overall_mixed"
PROBLEMS = DATA / "overall_problems" / "overall.txt"
REAL = DATA / "real" / "histo_4pe" / "overall"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


# --- reader -----------------------------------------------------------------


def test_read_mixed_labels_interleaved_and_split() -> None:
    report = ReadReport()
    df = read_overall(MIXED, report=report)
    assert tuple(df.columns) == OVERALL_COLUMNS
    assert df["label"].tolist() == ["Run 0"] * 3 + [""] * 3
    assert df["run"].tolist() == [0] * 6 and df["pe"].tolist() == [0, 1, 2] * 2
    expected = {
        "t_inside_finish_cycles": [1000, 2000, 1200, 100, 200, 50],
        "t_wait_cycles": [500, 200, 1000, 50, 0, 150],
        "t_outside_finish_cycles": [1500, 2200, 2300, 150, 200, 200],
        "t_sends_cycles": [300, 400, 200, 10, 40, 20],
        "sends_count": [10, 20, 5, 1, 2, 1],
        "t_send_in_process_cycles": [0, 50, 0, 0, 0, 5],
        "send_in_process_count": [0, 2, 0, 0, 0, 1],
        "t_process_cycles": [120, 250, 300, 20, 10, 35],
        "process_count": [12, 8, 15, 2, 1, 3],
        "tcomm_main_cycles": [700, 1600, 1000, 90, 160, 30],
        "tcomm_comm_cycles": [680, 400, 900, 40, 30, 140],
        "tcomm_proc_cycles": [120, 200, 300, 20, 10, 30],
        "tcomm_total_cycles": [1500, 2200, 2200, 150, 200, 200],
    }
    for column, values in expected.items():
        assert df[column].tolist() == values, column
        assert str(df[column].dtype) == "Int64"
    assert df["tcomm_main_frac"].tolist() == [0.466667, 0.727273, 0.454545, 0.6, 0.8, 0.15]
    assert df["total_warning"].tolist() == [False, False, True, False, False, False]
    assert df["profile_lines"].tolist() == [8, 8, 9, 8, 8, 8]
    (f,) = report.files
    assert (f.lines_read, f.lines_blank, f.lines_skipped, f.lines_total) == (49, 1, 6, 56)
    assert f.skipped == {"program output": 6}
    assert report.warnings == []


def test_read_problems() -> None:
    report = ReadReport()
    df = read_overall(PROBLEMS, report=report)
    assert list(zip(df["label"], df["run"], df["pe"], strict=True)) == [
        ("x", 0, 0),
        ("x", 0, 1),
        ("x", 1, 0),
    ]
    assert df["tcomm_main_cycles"].tolist()[0::2] == [701, 90]
    assert df["tcomm_main_cycles"].isna().tolist() == [False, True, False]
    assert df["t_wait_cycles"].tolist() == [500, 200, 50]
    assert df["total_warning"].tolist() == [False, False, True]  # the repeat's own warning
    assert df["profile_lines"].tolist() == [8, 6, 9]
    (f,) = report.files
    assert f.skipped == {
        "program output": 1,
        "malformed profile line": 1,
        "last line cut (no line end; the job was probably killed)": 1,
    }
    assert f.lines_read == 23 and f.lines_total == 26
    text = "\n".join(report.warnings)
    assert "overall.txt:7: malformed profile line skipped" in text
    assert "overall.txt:26: last line cut" in text
    assert "'x' PE 1: missing line(s) TCOMM_PROFILING (T_MAIN, ...)" in text


def test_read_errors(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match=r"overall.txt:7: PE 2 but --num-pes is 2"):
        read_overall(MIXED, num_pes=2, report=ReadReport())
    noise = tmp_path / "noise.txt"
    noise.write_text("Running histo\n[PE0] hello\n")
    with pytest.raises(TraceFormatError, match=r"noise.txt: no profile line in this file"):
        read_overall(noise, report=ReadReport())
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(TraceFormatError, match=r"empty\.txt: no profile line"):
        read_overall(empty, report=ReadReport())
    with pytest.raises(NoTraceError, match=r"no overall\.txt here"):
        read_overall(tmp_path, report=ReadReport())
    with pytest.raises(UsageError, match="no such file"):
        read_overall(tmp_path / "nope", report=ReadReport())


def test_grammar_variants(tmp_path: Path) -> None:
    text = (
        "phase [1] [PE0] T_inside_finish (start - done): 10 cycles\r\n"
        "phase [1] [PE0]   T_sends (count = 2) :  4\r\n"  # blanks anywhere, no 'cycles'
        "phase [1] [PE0] TCOMM_PROFILING (T_MAIN,T_COMM,T_PROC,T_TOTAL),6,1,2,9\r\n"
        "phase [1] [PE0] T_wait (done - finish): 5 cycles"  # complete, no line end
    )
    path = tmp_path / "out.log"
    path.write_text(text)
    report = ReadReport()
    df = read_overall(path, report=report)
    assert df["label"].tolist() == ["phase [1]"]
    assert df.loc[0, "t_sends_cycles"] == 4 and df.loc[0, "sends_count"] == 2
    assert df.loc[0, "tcomm_total_cycles"] == 9 and df.loc[0, "t_wait_cycles"] == 5
    assert report.files[0].lines_read == 4
    path.write_text(text[: -len(" cycles")])  # now the last line may be cut in its number
    report = ReadReport()
    df = read_overall(path, report=report)
    assert df["t_wait_cycles"].isna().all() and report.files[0].lines_skipped == 1


#: One PE's complete block (the numbers of ``Run 0`` PE 0 of the mixed fixture).
BLOCK = [
    "T_inside_finish (start - done): 1000 cycles",
    "T_wait (done - finish): 500 cycles",
    "T_outside_finish (start - finish): 1500 cycles",
    "T_sends (count=10): 300 cycles",
    "T_send_in_process (count=0): 0 cycles",
    "T_process (count=12): 120 cycles",
    "TCOMM_PROFILING (T_MAIN, T_COMM, T_PROC, T_TOTAL), 700, 680, 120, 1500",
    "TCOMM_PROFILING (T_MAIN/T_TOTAL, T_COMM/T_TOTAL, T_PROC/T_TOTAL), 0.466667, 0.453333, 0.08",
]


@pytest.mark.parametrize("tag", ["[PE-1]", "[PE 1]", "[pe1]", "[PE+1]", "[PE1x]", "[PE\u0661]"])
def test_a_malformed_pe_tag_is_a_skipped_profile_line(tmp_path: Path, tag: str) -> None:
    """The highest PE's block with a damaged tag: named and counted, not lost
    among the program output (no missing-PE warning would say it either)."""
    lines = ["Running histo on 2 PEs", *(f"histo [PE0] {b}" for b in BLOCK)]
    lines += [f"histo {tag} {b}" for b in BLOCK]
    path = tmp_path / "overall.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = ReadReport()
    df = read_overall(path, report=report)
    assert df["pe"].tolist() == [0] and df["profile_lines"].tolist() == [8]
    (f,) = report.files
    assert f.skipped == {"program output": 1, BAD_PE_TAG: 8}
    assert report.warnings[:2] == [
        f"{path}:{n}: malformed profile line (PE tag {tag!r} is not [PE<digits>]) "
        f"skipped: {lines[n - 1]!r}"
        for n in (10, 11)
    ]
    assert report.warnings[5:] == [f"{path}: 3 more profile line(s) skipped"]


def test_program_output_with_brackets_stays_program_output(tmp_path: Path) -> None:
    output = [
        "[PE1] hello from the user program",  # the shipped fixtures' output
        "Phase 2 [done]",
        "[INFO] T_wait (done - finish): 5 cycles",  # a tag, but not a PE's
        "[pe1] T_waiting for input",  # no body name
        "[PE-1] T_wait: soon",  # a body name, but not a profile body
        "[PE 2] TCOMM_PROFILING rocks",
        "x ] T_process done",
    ]
    path = tmp_path / "overall.txt"
    path.write_text("\n".join([f"h [PE0] {b}" for b in BLOCK] + output) + "\n")
    report = ReadReport()
    df = read_overall(path, report=report)
    assert df["pe"].tolist() == [0] and df["profile_lines"].tolist() == [8]
    assert report.files[0].skipped == {"program output": len(output)}
    assert report.warnings == []


def test_a_bom_at_the_start_is_ignored(tmp_path: Path) -> None:
    """A byte order mark glued to the first label split PE 0 over two labels."""
    text = "".join(f"histo [PE{pe}] {b}\n" for pe in (0, 1) for b in BLOCK)
    plain = tmp_path / "plain.txt"
    plain.write_text(text)
    marked = tmp_path / "overall.txt"
    marked.write_bytes(b"\xef\xbb\xbf" + text.encode())
    report = ReadReport()
    df = read_overall(marked, report=report)
    assert_frame_equal(df, read_overall(plain, report=ReadReport()), check_exact=True)
    assert df["label"].tolist() == ["histo", "histo"] and report.warnings == []
    (f,) = report.files
    assert (f.lines_read, f.lines_skipped, f.bytes_read) == (16, 0, len(text) + 3)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="[]PE0123 :,()=_TabcimnoswtMAINCOMPROFLG.-\r", max_size=40)))
def test_any_text_parses_or_raises_our_error(lines: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "overall.txt"
        path.write_text("\n".join(lines))
        try:
            df = read_overall(path, report=ReadReport())
        except ActorProfError:
            return
        assert len(df) >= 1 and tuple(df.columns) == OVERALL_COLUMNS


# --- analysis -----------------------------------------------------------------


def test_time_breakdown_exact() -> None:
    raw = read_overall(MIXED, report=ReadReport())
    before = raw.copy()
    t = time_breakdown(raw)
    assert list(t.columns) == ["label", "run", "pe", *TIME_COLUMNS]
    assert t["t_main_cycles"].tolist() == [700, 1600, 1000, 90, 160, 30]
    assert t["t_comm_cycles"].tolist() == [680, 400, 900, 40, 30, 140]
    assert t["t_proc_cycles"].tolist() == [120, 200, 300, 20, 10, 30]
    assert t["t_total_cycles"].tolist() == [1500, 2200, 2200, 150, 200, 200]
    assert t["useful_cycles"].tolist() == [820, 1800, 1300, 110, 170, 60]
    np.testing.assert_allclose(t["main_frac"], [7 / 15, 16 / 22, 10 / 22, 0.6, 0.8, 0.15])
    np.testing.assert_allclose(t["proc_frac"], [0.08, 2 / 22, 3 / 22, 20 / 150, 0.05, 0.15])
    np.testing.assert_allclose(
        t["total_vs_outside_pct"], [0, 0, 100 * (2200 - 2300) / 2300, 0, 0, 0], atol=1e-12
    )
    assert t["source"].tolist() == ["tcomm"] * 6
    assert_frame_equal(raw, before)
    problems = time_breakdown(read_overall(PROBLEMS, report=ReadReport()))
    assert problems["source"].tolist() == ["tcomm", "derived", "tcomm"]
    assert problems["t_main_cycles"].tolist() == [701, 1600, 90]  # printed wins
    assert problems.loc[1, "t_comm_cycles"] == 400 and problems.loc[1, "t_total_cycles"] == 2200
    partial = raw.head(1).copy()
    partial[["tcomm_main_cycles", "t_wait_cycles"]] = pd.NA
    missing = time_breakdown(partial)
    assert missing["source"].tolist() == ["missing"]
    assert missing["t_total_cycles"].isna().all() and np.isnan(missing["main_frac"].iloc[0])


def test_time_checks() -> None:
    ok = time_checks(read_overall(MIXED, report=ReadReport()))
    assert len(ok) == 6 * 7 and ok["agrees"].all()
    checks = time_checks(read_overall(PROBLEMS, report=ReadReport()))
    assert len(checks) == 14  # PE 1 has no TCOMM line: nothing to compare
    bad = checks[~checks["agrees"]]
    assert bad[["label", "run", "pe", "check"]].values.tolist() == [
        ["x", 0, 0, "T_MAIN = T_inside_finish - T_sends"]
    ]
    assert (bad["expected"].iloc[0], bad["found"].iloc[0], bad["difference"].iloc[0]) == (
        700,
        701,
        1,
    )
    with pytest.raises(ValueError, match="frac_tol"):
        time_checks(read_overall(MIXED, report=ReadReport()), frac_tol=-1)


def test_pop_efficiencies() -> None:
    useful = np.array([820.0, 1800.0, 1300.0])
    total = np.array([1500.0, 2200.0, 2200.0])
    e = pop_efficiencies(useful, total)
    assert e.load_balance == pytest.approx((3920 / 3) / 1800)
    assert e.load_balance == imbalance(useful).pop_load_balance
    assert e.communication_efficiency == pytest.approx(1800 / 2200)
    assert e.parallel_efficiency == pytest.approx((3920 / 3) / 1800 * 1800 / 2200)
    assert e.to_dict()["n"] == 3
    zero = pop_efficiencies(np.zeros(2), np.zeros(2))
    assert (zero.load_balance, zero.communication_efficiency, zero.parallel_efficiency) == (
        None,
        None,
        None,
    )
    with pytest.raises(ValueError, match="differ in length"):
        pop_efficiencies(useful, total[:2])
    with pytest.raises(ValueError, match="non-negative"):
        pop_efficiencies(useful, -total)


# --- real example ---------------------------------------------------------------


def test_real_example_numbers_and_checks() -> None:
    report = ReadReport()
    raw = read_overall(REAL, report=report)
    assert raw["label"].tolist() == ["histo"] * 4 and raw["pe"].tolist() == [0, 1, 2, 3]
    assert raw["t_inside_finish_cycles"].tolist() == [2895361, 35969503, 25429898, 5787096]
    assert raw["process_count"].tolist() == [10112, 9923, 9925, 10040]  # = PAPI handled
    assert raw["sends_count"].tolist() == [10000] * 4
    t = time_breakdown(raw)
    assert t["t_main_cycles"].tolist() == [1818934, 33872898, 23747829, 4329688]
    assert t["t_comm_cycles"].tolist() == [84545628, 51705874, 61551396, 81250249]
    assert t["t_proc_cycles"].tolist() == [305536, 314136, 280305, 284723]
    assert t["t_total_cycles"].tolist() == [86670098, 85892908, 85579530, 85864660]
    checks = time_checks(raw)
    assert len(checks) == 28 and checks["agrees"].all()
    assert not raw["total_warning"].any()
    assert report.files[0].skipped == {"program output": 6}
    view = overall_view(REAL, num_pes=4, cpu_ghz=2.0, report=ReadReport())
    g = view.summary()["groups"][0]
    useful = [2124470, 34187034, 24028134, 4614411]
    assert g["pop_efficiencies"]["load_balance"] == pytest.approx(sum(useful) / 4 / 34187034)
    assert g["pop_efficiencies"]["communication_efficiency"] == pytest.approx(34187034 / 86670098)
    assert g["imbalance"]["useful"]["max_pe"] == 1
    assert g["totals"]["t_total_max_cycles"] == 86670098
    assert g["totals"]["t_total_max_s"] == pytest.approx(86670098 / 2e9)
    assert g["checks"] == {"compared": 28, "disagreements": 0, "first_disagreements": []}
    assert g["missing_pes"] == []


# --- view -------------------------------------------------------------------


def test_view_mixed_summary() -> None:
    report = ReadReport()
    view = overall_view(MIXED, num_pes=4, report=report)
    s = view.summary()
    assert s["kind"] == "overall" and s["num_pes"] == 4 and s["num_pes_inferred"] is False
    assert s["labels"] == ["Run 0", "(no label)"]
    run0, empty = s["groups"]
    assert (run0["label"], empty["label"]) == ("Run 0", "")
    assert run0["totals"]["t_main_cycles"] == 3300 and run0["totals"]["t_total_cycles"] == 5900
    assert run0["totals"]["sends"] == 35 and run0["totals"]["processed"] == 35
    assert run0["fractions"]["comm"] == pytest.approx(1980 / 5900)
    assert run0["runtime_warnings"] == [2] and empty["runtime_warnings"] == []
    assert run0["missing_pes"] == [3] and report.missing_pes == [3]
    assert s["pop_efficiencies"]["(no label)"]["communication_efficiency"] == pytest.approx(
        170 / 200
    )
    assert s["imbalance"]["Run 0"]["t_total"]["max"] == 2200
    assert s["totals"]["program_output_lines"] == 6 and s["totals"]["runtime_warnings"] == 1
    text = "\n".join(report.warnings)
    assert "'Run 0': 1 of 4 PEs have no profile lines: PE 3" in text
    assert "'Run 0' PE 2: the runtime printed 'T_TOTAL would be much" in text
    assert "-4.35 %" in text
    json.dumps(s)


def test_view_label_filter_seconds_and_repeats() -> None:
    view = overall_view(MIXED, label="", cpu_ghz=2.0, report=ReadReport())
    assert view.groups == [("", 0)]
    pes = view.pes()
    assert pes["t_total_s"].tolist() == [150 / 2e9, 200 / 2e9, 200 / 2e9]
    assert pes["useful_s"].tolist() == [110 / 2e9, 170 / 2e9, 60 / 2e9]
    with pytest.raises(UsageError, match="labels found: 'Run 0', ''"):
        overall_view(MIXED, label="Run 1", report=ReadReport())
    for absurd in (0.0, -1.0, float("inf"), float("nan"), 1e-300, 1e6):
        with pytest.raises(UsageError, match="cpu-ghz"):
            overall_view(MIXED, cpu_ghz=absurd, report=ReadReport())
    report = ReadReport()
    view = overall_view(PROBLEMS, report=report)
    s = view.summary()
    assert s["labels"] == ["x", "x #2"]
    first = s["groups"][0]
    assert first["checks"]["disagreements"] == 1
    assert first["checks"]["first_disagreements"] == [
        {"pe": 0, "check": "T_MAIN = T_inside_finish - T_sends", "expected": 700, "found": 701}
    ]
    assert any("printed 701, computed 700" in w for w in report.warnings)


# --- plot -------------------------------------------------------------------


def test_plot_time_stacked_absolute_relative_sorted() -> None:
    times = overall_view(MIXED, report=ReadReport()).group_times("Run 0")
    before = times.copy()
    fig = Figure()
    absolute, relative = fig.subplots(1, 2)
    plot_time_stacked(times, ax=absolute, sort=True, legend=False)
    plot_time_stacked(times, ax=relative, relative=True, sort=True)
    heights = [[b.get_height() for b in c] for c in absolute.containers]
    # sorted by T_TOTAL, largest first, ties by PE: PEs 1, 2, 0
    assert heights == [[1600, 1000, 700], [400, 900, 680], [200, 300, 120]]
    assert [c.get_label() for c in absolute.containers] == ["MAIN", "COMM", "PROC"]
    ticks = [t.get_text() for t in absolute.get_xticklabels()]
    assert ticks == ["1", "2", "0"] == [t.get_text() for t in relative.get_xticklabels()]
    shares = np.array([[b.get_height() for b in c] for c in relative.containers])
    np.testing.assert_allclose(shares.sum(axis=0), 1.0)
    np.testing.assert_allclose(shares[0], [16 / 22, 10 / 22, 7 / 15])
    assert relative.get_ylim() == (0.0, 1.0) and relative.get_ylabel() == "fraction of T_TOTAL"
    assert [t.get_text() for t in absolute.texts] == ["2,200", "2,200", "1,500"]
    assert_frame_equal(times, before)
    ax = plot_time_stacked(times, ax=Figure().subplots(), cpu_ghz=1.0)
    assert ax.containers[0][0].get_height() == pytest.approx(700e-9)
    assert ax.get_ylabel() == "time per PE (seconds)"
    with pytest.raises(ValueError, match="lacks column"):
        plot_time_stacked(times.drop(columns="t_comm_cycles"), ax=Figure().subplots())
    for absurd in (0.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="cpu_ghz"):
            plot_time_stacked(times, ax=Figure().subplots(), cpu_ghz=absurd)


# --- CLI --------------------------------------------------------------------


def test_cli_real_example(tmp_path: Path) -> None:
    code, out, err = run(
        "overall", str(REAL / "overall.txt"), "--num-pes", "4", "-o", str(tmp_path)
    )
    assert code == 0, err
    names = [Path(p).name for p in out.splitlines()]
    assert names == ["overall_stacked.png", "overall_pes.csv", "overall_summary.json"]
    assert all(Path(p).stat().st_size > 0 for p in out.splitlines())
    assert "6 line(s) of program output (not profile lines) ignored" in err
    assert "28 of 28 checks agree" in err
    pes = pd.read_csv(tmp_path / "overall_pes.csv", keep_default_na=False)
    assert pes["label"].tolist() == ["histo"] * 4
    assert pes["t_main_cycles"].tolist() == [1818934, 33872898, 23747829, 4329688]
    assert pes["tcomm_total_cycles"].tolist() == [86670098, 85892908, 85579530, 85864660]
    assert pes["t_outside_finish_cycles"].tolist()[0] == 86670122
    assert "t_total_s" not in pes.columns
    summary = json.loads((tmp_path / "overall_summary.json").read_text())
    assert summary["labels"] == ["histo"]
    assert summary["groups"][0]["totals"]["t_main_cycles"] == 63769349
    assert summary["options"] == {"label": None, "sort": "pe", "cpu_ghz": None}


def test_cli_names_the_lines_of_a_malformed_pe_tag(tmp_path: Path) -> None:
    """The shipped example with PE 3's tag damaged: its 8 lines are named
    with file and line, not added to the 6 of program output."""
    trace = tmp_path / "Ov2" / "overall.txt"
    trace.parent.mkdir()
    trace.write_text((REAL / "overall.txt").read_text().replace("[PE3]", "[PE-3]"))
    code, _, err = run("overall", str(trace.parent), "--num-pes", "4", "-o", str(tmp_path))
    assert code == 0, err
    assert f"{trace}:22: malformed profile line (PE tag '[PE-3]' is not [PE<digits>])" in err
    assert "6 line(s) of program output (not profile lines) ignored" in err
    assert "'histo': 1 of 4 PEs have no profile lines: PE 3" in err
    summary = json.loads((tmp_path / "overall_summary.json").read_text())
    assert summary["files"][0]["skipped_by_reason"] == {"program output": 6, BAD_PE_TAG: 8}


def test_cli_mixed_options(tmp_path: Path) -> None:
    code, _, err = run(
        "overall", str(MIXED), "--num-pes", "4", "--label", "Run 0", "--sort", "total",
        "--cpu-ghz", "2", "-o", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    assert "warning: 'Run 0': 1 of 4 PEs have no profile lines: PE 3" in err
    assert "T_TOTAL would be much bigger/smaller" in err
    summary = json.loads((tmp_path / "overall_summary.json").read_text())
    assert summary["labels"] == ["Run 0"] and summary["cpu_ghz"] == 2.0
    pes = pd.read_csv(tmp_path / "overall_pes.csv")
    assert pes["t_total_s"].tolist() == [1500 / 2e9, 2200 / 2e9, 2200 / 2e9]
    code, out, err = run("overall", str(MIXED), "-q", "-o", str(tmp_path / "q"))
    assert code == 0 and err == "" and len(out.splitlines()) == 3
    pes = pd.read_csv(tmp_path / "q" / "overall_pes.csv", keep_default_na=False)
    assert pes["label"].tolist() == ["Run 0"] * 3 + [""] * 3


def test_cli_errors(tmp_path: Path) -> None:
    code, _, err = run("overall", str(MIXED), "--label", "nope", "-o", str(tmp_path))
    assert code == 2 and "labels found" in err
    noise = tmp_path / "noise.txt"
    noise.write_text("hello\n")
    code, _, err = run("overall", str(noise), "-o", str(tmp_path))
    assert code == 1 and "noise.txt: no profile line" in err and "Traceback" not in err
    for absurd in ("0", "inf", "nan", "1e-300"):
        code, _, err = run("overall", str(MIXED), "--cpu-ghz", absurd, "-o", str(tmp_path))
        assert code == 2 and "cpu-ghz" in err and "Traceback" not in err and "Warning" not in err


def test_module_entry_point(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "actorprof", "overall", str(PROBLEMS), "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].endswith("overall_stacked.png")
    assert "printed 701, computed 700" in done.stderr

"""The logical reader: exact frames, line accounting, bad input, phases."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from actorprof import (
    ActorProfWarning,
    NoTraceError,
    ReadReport,
    TraceFormatError,
    UsageError,
    comm_matrices,
    iter_logical,
    logical_view,
    read_logical,
)
from actorprof.schema import LOGICAL_COLUMNS, LOGICAL_DTYPES

from .conftest import snapshot


def test_small_fixture_exact(data: Path) -> None:
    report = ReadReport()
    df = read_logical(data / "logical_small", report=report)
    assert list(df.columns) == list(LOGICAL_COLUMNS)
    assert {c: df[c].dtype for c in df.columns} == LOGICAL_DTYPES
    assert df["src_pe"].tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    assert df["dst_pe"].tolist() == [1, 1, 2, 0, 0, 2, 2, 2, 0, 2]
    assert df["dst_node"].tolist() == [0, 0, 1, 0, 0, 1, 1, 1, 0, 1]
    assert df["msg_bytes"].tolist() == [8, 8, 16, 8, 8, 8, 8, 8, 32, 32]
    # PE2 wrote the 5-column form: no timestamp
    assert df["time_s"].isna().tolist() == [False] * 8 + [True, True]
    assert df["time_s"].iloc[5] == pytest.approx(1.000011)
    files = {Path(f.path).name: f for f in report.files}
    assert files["PE2_send.csv"].lines_read == 2
    assert files["PE2_send.csv"].lines_blank == 1  # a CRLF blank line
    assert report.lines_read == 10 and report.lines_skipped == 0
    assert report.warnings == []


@pytest.mark.parametrize("block_bytes", [1, 7, 25, 64, 1 << 20])
def test_chunking_does_not_change_the_result(data: Path, block_bytes: int) -> None:
    whole = read_logical(data / "logical_small")
    parts = list(iter_logical(data / "logical_small", block_bytes=block_bytes))
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), whole)


def test_real_trace_rows_equal_line_counts(examples: Path) -> None:
    folder = examples / "ig_8pe_2nodes" / "logical"
    report = ReadReport()
    df = read_logical(folder, report=report)
    for f in report.files:
        lines = Path(f.path).read_bytes().count(b"\n")
        assert f.lines_read == lines
        assert (df["src_pe"] == f.pe).sum() == lines
    assert len(df) == 160_000
    assert report.lines_skipped == 0


def test_bad_lines_are_counted_with_file_and_line(data: Path) -> None:
    report = ReadReport()
    df = read_logical(data / "logical_bad", report=report, num_pes=4)
    assert len(df) == 5
    pe0 = report.files[0]
    assert Path(pe0.path).name == "PE0_send.csv"
    assert pe0.lines_read == 3
    assert pe0.lines_skipped == 4
    assert pe0.skipped == {
        "wrong number of fields (expected 5 or 6, found 1)": 1,
        "wrong number of fields (expected 5 or 6, found 7)": 1,
        "negative value in dst_pe": 1,
        "last line cut (no line end; the job was probably killed)": 1,
    }
    assert [e.line for e in pe0.examples] == [2, 4, 5, 7]
    assert pe0.examples[0].text == "Running histo on 4 threads"
    assert pe0.lines_total == 7
    # PE1 is empty (a PE that sent nothing), PE2 is missing
    assert report.files[1].lines_total == 0
    assert report.missing_pes == [2]
    assert any("PE 2" in w for w in report.warnings)


def test_skipped_lines_warn_without_report(data: Path) -> None:
    with pytest.warns(ActorProfWarning, match="skipped 4 line"):
        read_logical(data / "logical_bad")


def test_complete_unterminated_last_line_is_kept(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_text("0, 0, 0, 1, 8, 1.000000\n0, 0, 0, 1, 8, 1.500000")
    report = ReadReport()
    assert len(read_logical(tmp_path, report=report)) == 2
    assert report.lines_skipped == 0


@pytest.mark.parametrize("cut", ["0, 0, 0, 1, 8, 1.5", "0, 0, 0, 1, 8", "0, 0, 0, 1", "0, 0,"])
def test_cut_last_line_is_skipped_and_counted(tmp_path: Path, cut: str) -> None:
    (tmp_path / "PE0_send.csv").write_text("0, 0, 0, 1, 8, 1.000000\n" + cut)
    report = ReadReport()
    assert len(read_logical(tmp_path, report=report)) == 1
    assert report.files[0].skipped == {
        "last line cut (no line end; the job was probably killed)": 1
    }
    assert report.files[0].examples[0].line == 2


def test_only_a_cut_line_is_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_text("0, 0, 0")
    report = ReadReport()
    assert len(read_logical(tmp_path, report=report)) == 0


def test_file_where_nothing_parses_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_text("0, 0, 0, 1, 8, 1.000000\n")
    (tmp_path / "PE1_send.csv").write_text("hello\nworld\n")
    with pytest.raises(TraceFormatError, match=r"PE1_send.csv:1: no line of this file"):
        read_logical(tmp_path, report=ReadReport())


def test_pe_beyond_num_pes_is_a_skipped_line_with_file_and_line(data: Path) -> None:
    report = ReadReport()
    df = read_logical(data / "logical_small" / "PE0_send.csv", num_pes=2, report=report)
    assert (df["dst_pe"] < 2).all() and (df["src_pe"] < 2).all()
    (f,) = report.files
    assert f.skipped == {"PE id beyond --num-pes 2": f.lines_total - f.lines_read - f.lines_blank}
    assert f.examples[0].line == 3 and f.examples[0].text == "0, 0, 1, 2, 16, ..."


def test_pe_file_beyond_num_pes_warns(data: Path) -> None:
    report = ReadReport()
    read_logical(data / "logical_bad", num_pes=3, report=report)
    assert any("PE3_send.csv: file of PE 3 but --num-pes is 3" in w for w in report.warnings)


def test_pe_beyond_num_pes_found_by_exact_path_too(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_text(
        "0, 0, 0, 1, 8, 1.000000\nnoise\n\n0, 0, 0, 9, 8, 1.000000\n"
    )
    report = ReadReport()
    df = read_logical(tmp_path, num_pes=4, report=report)
    assert df["dst_pe"].tolist() == [1]
    examples = {(e.line, e.reason) for e in report.files[0].examples}
    assert (4, "PE id beyond --num-pes 4") in examples


@pytest.mark.parametrize("stray", [10_000, 2_147_483_647])
def test_stray_pe_id_is_skipped_with_file_and_line(tmp_path: Path, stray: int) -> None:
    """One corrupt id far beyond the PE files: warned with file:line, never sizes the run."""
    for pe in range(4):
        (tmp_path / f"PE{pe}_send.csv").write_text(f"0, {pe}, 0, {(pe + 1) % 4}, 8, 1.000000\n" * 3)
    with open(tmp_path / "PE2_send.csv", "a") as f:
        f.write(f"0, 2, 0, {stray}, 8, 1.000001\n")
    report = ReadReport()
    mats = comm_matrices(iter_logical(tmp_path, report=report))
    assert mats.num_pes == 4 and mats.messages == 12
    (example,) = [e for f in report.files for e in f.examples]
    assert example.line == 4 and example.reason.startswith("PE id far beyond the 4 PE files")
    assert report.lines_read == 12 and report.lines_skipped == 1
    view = logical_view(tmp_path, report=ReadReport())  # the engine route: the same
    assert view.num_pes == 4 and view.matrices.messages == 12
    assert view.report.lines_skipped == 1


def test_stray_empty_pe_file_does_not_size_the_run(tmp_path: Path) -> None:
    for pe in range(4):
        (tmp_path / f"PE{pe}_send.csv").write_text(f"0, {pe}, 0, {(pe + 1) % 4}, 8, 1.000000\n")
    (tmp_path / "PE5000_send.csv").write_text("")
    view = logical_view(tmp_path, report=ReadReport())
    assert view.num_pes == 4
    assert any("PE5000_send.csv: PE 5000 is far beyond" in w for w in view.report.warnings)


def test_number_too_large_and_not_a_number(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_text(
        "0, 0, 0, 1, 8, 1.000000\n"
        "0, 0, 0, 4294967296, 8, 1.000000\n"
        "0, 0, 0, 1, 99999999999999999999, 1.000000\n"
        "0, 0, 0, 1_0, 8, 1.000000\n"
        "0, 0, 0, 1, 8, nan\n"
        "0, 0, 0, 1, 8, 1e999\n"
        "\x00\x00\x00\n"
    )
    report = ReadReport()
    df = read_logical(tmp_path, report=report)
    assert len(df) == 1
    skipped = report.files[0].skipped
    assert skipped == {
        "number too large for dst_pe (int32)": 1,
        "number too large for msg_bytes (max 4294967296)": 1,
        "not a number in dst_pe": 1,
        "not a number in time_s": 1,
        "number too large for time_s": 1,
        "NUL bytes (file blocks never written; the node probably crashed)": 1,
    }


def test_src_pe_not_matching_file_name_is_reported(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_text("0, 5, 0, 1, 8, 1.000000\n")
    report = ReadReport()
    df = read_logical(tmp_path, report=report)
    assert df["src_pe"].tolist() == [5]
    assert any("src_pe != 0" in w for w in report.warnings)


def test_phases(data: Path) -> None:
    folder = data / "logical_phases"
    report = ReadReport()
    assert len(read_logical(folder, report=report)) == 2
    assert report.phase is None
    assert any("bfs" in n and "tc_x" in n and "--phase" in n for n in report.notes)
    report = ReadReport()
    bfs = read_logical(folder, phase="bfs", report=report)
    assert len(bfs) == 3 and report.phase == "bfs"
    assert len(read_logical(folder, phase="tc_x", report=ReadReport())) == 1
    with pytest.raises(UsageError, match=r"no files of phase 'nope'.*bfs \(2 PE files\)"):
        read_logical(folder, phase="nope", report=ReadReport())


def test_only_named_phases(tmp_path: Path, data: Path) -> None:
    for name in ("PE0_bfs_send.csv", "PE1_bfs_send.csv"):
        shutil.copy(data / "logical_phases" / name, tmp_path / name)
    report = ReadReport()
    assert len(read_logical(tmp_path, report=report)) == 3
    assert report.phase == "bfs"
    shutil.copy(data / "logical_phases" / "PE0_tc_x_send.csv", tmp_path)
    with pytest.raises(UsageError, match=r"several phases.*--phase NAME"):
        read_logical(tmp_path, report=ReadReport())


def test_old_dat_files_and_five_columns(data: Path) -> None:
    df = read_logical(data / "logical_dat")
    assert df["dst_pe"].tolist() == [1, 1, 0]
    assert df["time_s"].isna().all()


def test_csv_wins_over_dat(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_text("0, 0, 0, 1, 8, 1.000000\n")
    (tmp_path / "PE0_send.dat").write_text("0, 0, 0, 1, 8\n0, 0, 0, 1, 8\n")
    assert len(read_logical(tmp_path)) == 1


def test_single_file_path(data: Path) -> None:
    df = read_logical(data / "logical_small" / "PE1_send.csv")
    assert len(df) == 4 and set(df["src_pe"]) == {1}


def test_no_trace_and_missing_path(tmp_path: Path) -> None:
    (tmp_path / "stdout.txt").write_text("hello\n")
    with pytest.raises(NoTraceError, match=r"looked for PE<i>_send.csv"):
        read_logical(tmp_path)
    with pytest.raises(UsageError, match="no such file or folder"):
        read_logical(tmp_path / "nope")


def test_empty_trace_gives_typed_empty_frame(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_text("")
    df = read_logical(tmp_path)
    assert len(df) == 0
    assert {c: df[c].dtype for c in df.columns} == LOGICAL_DTYPES


def test_input_files_are_never_modified(data: Path) -> None:
    before = snapshot(data)
    for folder in ("logical_small", "logical_bad", "logical_phases"):
        read_logical(data / folder, report=ReadReport())
    assert snapshot(data) == before


def test_fast_and_exact_paths_agree(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    n = 2000
    rows = [
        f"{s // 4}, {s}, {d // 4}, {d}, {b}, {t:.6f}"
        for s, d, b, t in zip(
            rng.integers(0, 8, n),
            rng.integers(0, 8, n),
            rng.integers(1, 64, n),
            1.7e9 + rng.random(n),
            strict=False,
        )
    ]
    clean = "\n".join(rows) + "\n"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "PE0_send.csv").write_text(clean)
    (tmp_path / "b").mkdir()
    # one noise line forces the exact path for the whole (single) block
    (tmp_path / "b" / "PE0_send.csv").write_text(clean + "noise\n")
    fast = read_logical(tmp_path / "a", report=ReadReport())
    exact = read_logical(tmp_path / "b", report=ReadReport())
    pd.testing.assert_frame_equal(fast, exact)


def test_nul_bytes_have_their_own_reason(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_bytes(
        b"0, 0, 0, 1, 8, 1.000000\n\x00\x00\x00\x00\n0, 0, 0, 1, 8, 1.000001\n\x00\x00\x00"
    )
    report = ReadReport()
    assert len(read_logical(tmp_path, report=report)) == 2
    reason = "NUL bytes (file blocks never written; the node probably crashed)"
    assert report.files[0].skipped == {reason: 2}
    assert [e.line for e in report.files[0].examples] == [2, 4]


def test_file_of_nul_bytes_only_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_bytes(b"\x00" * 4096)
    with pytest.raises(TraceFormatError, match=r"PE0_send.csv:1: no line of this file.*NUL"):
        read_logical(tmp_path, report=ReadReport())


def test_unended_text_is_not_a_cut_trace_line(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_text("0, 0, 0, 1, 8, 1.000000\nSegmentation fault")
    report = ReadReport()
    assert len(read_logical(tmp_path, report=report)) == 1
    assert report.files[0].skipped == {"wrong number of fields (expected 5 or 6, found 1)": 1}


def test_absurd_message_sizes_cannot_overflow_totals(tmp_path: Path) -> None:
    from actorprof import comm_matrices, iter_logical

    lines = "0, 0, 0, 1, 4611686018427387904, 1.000000\n" * 2 + "0, 0, 0, 1, 8, 1.000000\n"
    (tmp_path / "PE0_send.csv").write_text(lines)
    report = ReadReport()
    mats = comm_matrices(iter_logical(tmp_path, report=report))
    assert mats.bytes.to_numpy().tolist() == [[0, 8], [0, 0]]
    assert report.files[0].skipped == {"number too large for msg_bytes (max 4294967296)": 2}


def test_progress_done_counts_finished_files_once() -> None:
    from actorprof.read._report import FileReport

    report = ReadReport(kind="logical")
    assert report.done() == (0, 0)
    for i in range(5):
        report.files.append(FileReport(path=f"PE{i}_send.csv", pe=i, bytes_read=10))
        report.files[-1].bytes_read += 5  # the file being read grows
        assert report.done() == (15 * (i + 1), i + 1) == (report.bytes_read, len(report.files))
    report.files = report.files[:2]  # replaced: counted again
    assert report.done() == (30, 2)


def test_a_listing_is_reused_only_while_the_folder_is_unchanged(tmp_path: Path) -> None:
    import os
    import time

    from actorprof.read import find_pe_files

    for pe in range(3):
        (tmp_path / f"PE{pe}_send.csv").write_text("0, 0, 0, 0, 8, 1.0\n")
    settled = time.time() - 60
    os.utime(tmp_path, (settled, settled))
    first = find_pe_files(tmp_path, "send")
    assert [f.pe for f in first[""]] == [0, 1, 2]
    first[""].clear()  # a caller's list is its own
    assert [f.pe for f in find_pe_files(tmp_path, "send")[""]] == [0, 1, 2]
    (tmp_path / "PE1_send.csv").unlink()  # the folder's mtime moves
    assert [f.pe for f in find_pe_files(tmp_path, "send")[""]] == [0, 2]

"""The physical trace: reader grammar and line accounting, per-type matrices, mesh fit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actorprof import (
    ActorProfWarning,
    NoTraceError,
    ReadReport,
    TraceFormatError,
    UsageError,
    iter_physical,
    mesh_fit,
    physical_matrices,
    physical_pe_totals,
    physical_view,
    read_physical,
)
from actorprof.analyze.physical import fitting_pes_per_node, physical_node_matrices
from actorprof.cli import main
from actorprof.read.physical import (
    BROKEN_LINE,
    PROGRAM_OUTPUT,
    SEND_TYPE_DTYPE,
    physical_file,
    physical_problems,
)
from actorprof.schema import PHYSICAL_COLUMNS, PHYSICAL_INT_DTYPES, SEND_TYPES

REAL = Path(__file__).resolve().parent / "data" / "real"
CUT = "last line cut (no line end; the job was probably killed)"


# --- reader -------------------------------------------------------------------


def test_small_fixture_exact(data: Path) -> None:
    report = ReadReport()
    df = read_physical(data / "physical_small", report=report)
    assert list(df.columns) == list(PHYSICAL_COLUMNS)
    assert df["send_type"].dtype == SEND_TYPE_DTYPE
    assert list(df["send_type"].cat.categories) == list(SEND_TYPES)
    assert {c: df[c].dtype for c in PHYSICAL_COLUMNS[1:]} == PHYSICAL_INT_DTYPES
    assert df["send_type"].tolist() == [
        "local_send",  # line 2: plain
        "local_send",  # line 4: ':' after the type, blanks between fields
        "nonblock_send",  # line 5: extra trailing fields
        "nonblock_progress",  # line 6: blanks before the commas
        "nonblock_send",  # line 8: tabs
        "nonblock_send",  # line 10: CRLF
        "local_send",  # line 14: '# comment' after the last field
        "nonblock_progress",  # line 16: ':' and commas
    ]
    assert df["buffer_bytes"].tolist() == [100, 200, 300, 0, 400, 500, 60, 0]
    assert df["src_pe"].tolist() == [0, 1, 0, 0, 3, 2, 2, 3]
    assert df["dst_pe"].tolist() == [1, 0, 2, 2, 1, 0, 3, 1]

    (f,) = report.files
    assert f.lines_total == 18
    assert (f.lines_read, f.lines_blank, f.lines_skipped) == (8, 2, 8)
    assert f.skipped == {
        PROGRAM_OUTPUT: 4,  # banner, 'PE 3 says hello, local_send...', 'local_sends:', timing
        BROKEN_LINE: 1,
        "negative value in buffer_bytes": 1,
        "number too large for buffer_bytes": 1,
        CUT: 1,
    }
    # examples: the first 3 lines of each reason, in line order
    assert [(e.line, e.text) for e in f.examples] == [
        (1, "Running demo on 4 threads"),
        (7, "PE 3 says hello, local_send, 5, 0, 1"),
        (9, "local_send, 10x0, 2, 3"),
        (11, "local_sends: 7, 1, 2"),
        (12, "local_send, -8, 1, 1"),
        (13, "nonblock_send, 99999999999999999999, 1, 3"),
        (18, "nonblock_send, 81"),
    ]
    assert report.kind == "physical"
    problems = physical_problems(report)
    assert problems[0].endswith(
        "skipped 4 line(s): "
        + ", ".join(
            f"1 {r}"
            for r in sorted(
                [
                    BROKEN_LINE,
                    CUT,
                    "negative value in buffer_bytes",
                    "number too large for buffer_bytes",
                ]
            )
        )
    )
    assert "physical.txt:9:" in problems[1]


@pytest.mark.parametrize("block_bytes", [1, 5, 33, 200, 1 << 20])
def test_chunking_does_not_change_the_result(data: Path, block_bytes: int) -> None:
    whole_report = ReadReport()
    whole = read_physical(data / "physical_small", report=whole_report)
    report = ReadReport()
    parts = list(iter_physical(data / "physical_small", report=report, block_bytes=block_bytes))
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), whole)
    assert report.files[0].to_dict() == whole_report.files[0].to_dict()


def test_file_or_folder(data: Path) -> None:
    folder = data / "physical_small"
    assert physical_file(folder) == folder / "physical.txt"
    assert physical_file(folder / "physical.txt") == folder / "physical.txt"
    with pytest.raises(NoTraceError, match=r"no physical\.txt here"):
        physical_file(data / "logical_small")
    with pytest.raises(UsageError, match="no such file"):
        physical_file(data / "nope")


def test_only_program_output_is_an_error(data: Path) -> None:
    with pytest.raises(TraceFormatError) as info:
        read_physical(data / "physical_only_output")
    message = str(info.value)
    assert "physical_only_output/physical.txt: no trace line in this file" in message
    assert "4 line(s), 3 of program output" in message
    assert "'Running histo on 16 threads'" in message
    assert "-DENABLE_TRACE_PHYSICAL" in message


def test_only_broken_trace_lines_is_an_error_naming_the_line(data: Path) -> None:
    with pytest.raises(TraceFormatError, match=r"physical\.txt:2: no readable trace line: 2"):
        read_physical(data / "physical_broken")


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "physical.txt").write_bytes(b"")
    with pytest.raises(TraceFormatError, match="no trace line in this file: 0 line"):
        read_physical(tmp_path)


def test_pe_beyond_num_pes_names_file_and_line(data: Path) -> None:
    with pytest.raises(TraceFormatError) as info:
        read_physical(data / "physical_small", num_pes=3)
    assert info.value.line == 8  # 'nonblock_send,\t400,\t3,\t1'
    assert str(info.value).startswith(str(data / "physical_small" / "physical.txt") + ":8: ")
    assert "src_pe 3 but --num-pes is 3" in str(info.value)
    assert len(read_physical(data / "physical_small", num_pes=4, report=ReadReport())) == 8
    with pytest.raises(UsageError):
        read_physical(data / "physical_small", num_pes=0)


def test_without_report_problems_become_warnings(data: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_physical(data / "physical_small")
    messages = [str(w.message) for w in caught if issubclass(w.category, ActorProfWarning)]
    text = "\n".join(messages)
    assert "skipped 4 line(s)" in text and "physical.txt:9: broken trace line" in text
    assert "program output" not in text  # expected: counted, not warned about
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # program output alone is not worth a warning
        read_physical(REAL / "ig_8pe_2nodes" / "physical")


def test_complete_last_line_without_line_end_is_cut(tmp_path: Path) -> None:
    (tmp_path / "physical.txt").write_text("local_send, 8, 0, 1\nlocal_send, 8, 1, 0")
    report = ReadReport()
    df = read_physical(tmp_path, report=report)
    assert len(df) == 1
    assert report.files[0].skipped == {CUT: 1}
    (tmp_path / "physical.txt").write_text("local_send, 8, 0, 1\n   3.5 seconds")
    report = ReadReport()
    read_physical(tmp_path, report=report)
    assert report.files[0].skipped == {PROGRAM_OUTPUT: 1}


def test_large_pe_id_and_invalid_utf8(tmp_path: Path) -> None:
    (tmp_path / "physical.txt").write_bytes(
        b"\xff\xfe garbage\nlocal_send, 8, 0, 3000000000\nlocal_send, 8, 0, 1\n"
    )
    report = ReadReport()
    df = read_physical(tmp_path, report=report)
    assert df["dst_pe"].tolist() == [1]
    assert report.files[0].skipped == {PROGRAM_OUTPUT: 1, "number too large for dst_pe": 1}


_LINE = st.one_of(
    st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=40),
    st.builds(
        lambda t, sep, a, b, c, tail: f"{t}{sep}{a}{sep}{b}{sep}{c}{tail}",
        st.sampled_from([*SEND_TYPES, "local_send:", " nonblock_send", "x"]),
        st.sampled_from([", ", ",", " ", "\t", " , ", ";"]),
        st.integers(-5, 10**20),
        st.integers(-5, 10**10),
        st.integers(-5, 40),
        st.sampled_from(["", ", 1.5", " extra", "\r", "x"]),
    ),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_LINE, max_size=12), end=st.sampled_from(["", "\n"]))
def test_any_input_parses_or_raises_our_error(tmp_path: Path, lines: list[str], end: str) -> None:
    path = tmp_path / "physical.txt"
    raw = ("\n".join(lines) + end).encode("utf-8", "surrogatepass")
    path.write_bytes(raw)
    report = ReadReport()
    try:
        df = read_physical(path, num_pes=32, report=report)
    except TraceFormatError:
        return
    (f,) = report.files
    assert f.lines_read == len(df) > 0
    assert f.lines_total == raw.count(b"\n") + (0 if raw.endswith(b"\n") or not raw else 1)
    assert (df["buffer_bytes"] >= 0).all() and (df["dst_pe"] < 32).all()


# --- real traces --------------------------------------------------------------


def test_real_ig_per_type_totals() -> None:
    report = ReadReport()
    df = read_physical(REAL / "ig_8pe_2nodes" / "physical", report=report)
    assert len(df) == 1136
    grouped = df.groupby("send_type", observed=False)["buffer_bytes"]
    assert grouped.size().to_dict() == {
        "local_send": 441,
        "nonblock_send": 367,
        "nonblock_progress": 328,
    }
    assert grouped.sum().to_dict() == {
        "local_send": 3_208_072,
        "nonblock_send": 2_726_712,
        "nonblock_progress": 0,
    }
    (f,) = report.files
    assert (f.lines_read, f.lines_blank, f.skipped) == (1136, 0, {PROGRAM_OUTPUT: 7})
    assert f.lines_total == 1143  # wc -l


def test_real_histo_16pe_per_type_totals() -> None:
    mats = physical_matrices(iter_physical(REAL / "histo_16pe_4nodes" / "physical"))
    assert mats.num_pes == 16
    totals = mats.totals()
    assert {t: (v["buffers"], v["bytes"]) for t, v in totals.items()} == {
        "local_send": (216, 1_923_600),
        "nonblock_send": (232, 1_444_592),
        "nonblock_progress": (232, 0),
    }
    assert {t: v["links"] for t, v in totals.items()} == {
        "local_send": 64,  # 4 nodes x 4 x 4
        "nonblock_send": 64,  # 16 PEs x 4 nodes in their column
        "nonblock_progress": 64,
    }
    assert fitting_pes_per_node(mats) == [4]
    fit = mesh_fit(mats, pes_per_node=2)
    assert not fit.fits
    assert fit.violations["local_send"] == {"buffers": 108, "links": 32}


# --- analysis -----------------------------------------------------------------


def test_matrices_of_the_small_fixture(data: Path) -> None:
    report = ReadReport()
    mats = physical_matrices(iter_physical(data / "physical_small", report=report), pes_per_node=2)
    assert mats.num_pes == 4 and mats.lines == 8
    assert mats.types_present == list(SEND_TYPES)
    local = np.zeros((4, 4), dtype=np.int64)
    local[0, 1] = local[1, 0] = local[2, 3] = 1
    np.testing.assert_array_equal(mats.buffers("local_send").to_numpy(), local)
    nb_bytes = np.zeros((4, 4), dtype=np.int64)
    nb_bytes[0, 2], nb_bytes[3, 1], nb_bytes[2, 0] = 300, 400, 500
    np.testing.assert_array_equal(mats.bytes("nonblock_send").to_numpy(), nb_bytes)
    # buffers(): local_send + nonblock_send; bytes(): all three types
    assert int(mats.buffers().to_numpy().sum()) == 6
    assert int(mats.bytes().to_numpy().sum()) == 1560
    assert mats.max_buffer_bytes == {
        "local_send": 200,
        "nonblock_send": 500,
        "nonblock_progress": 0,
    }
    assert mats.buffers().index.name == "src_pe" and mats.buffers().columns.name == "dst_pe"
    with pytest.raises(ValueError, match="send_type must be one of"):
        mats.buffers("local")


def test_pe_totals_of_the_small_fixture(data: Path) -> None:
    mats = physical_matrices(
        read_physical(data / "physical_small", num_pes=4, report=ReadReport()), pes_per_node=2
    )
    table = physical_pe_totals(mats)
    assert table.index.name == "pe"
    assert table["node"].tolist() == [0, 0, 1, 1]
    assert table["buffers_sent"].tolist() == [2, 1, 2, 1]
    assert table["buffers_received"].tolist() == [2, 2, 1, 1]
    assert table["bytes_sent"].tolist() == [400, 200, 560, 400]
    assert table["bytes_received"].tolist() == [700, 500, 300, 60]
    assert table["nonblock_progress_buffers_sent"].tolist() == [1, 0, 0, 1]
    assert table["local_send_bytes_sent"].tolist() == [100, 200, 60, 0]


def test_node_matrices_and_mesh_fit(data: Path) -> None:
    small = read_physical(data / "physical_small", report=ReadReport())
    mats = physical_matrices(small, pes_per_node=2)
    nodes = physical_node_matrices(mats)
    counts, nbytes = nodes["nonblock_send"]
    assert counts.to_numpy().tolist() == [[0, 1], [2, 0]]
    assert nbytes.to_numpy().tolist() == [[0, 300], [900, 0]]
    assert nodes["local_send"][0].to_numpy().tolist() == [[2, 0], [0, 1]]
    assert mesh_fit(mats, pes_per_node=2).fits
    whole = mesh_fit(mats, pes_per_node=4)  # one node: nonblock_send must be a self hop
    assert whole.violations == {
        "local_send": {"buffers": 0, "links": 0},
        "nonblock_send": {"buffers": 3, "links": 3},
        "nonblock_progress": {"buffers": 2, "links": 2},
    }
    assert mesh_fit(mats, pes_per_node=1).violations["local_send"]["buffers"] == 3
    assert fitting_pes_per_node(mats) == [2]
    with pytest.raises(ValueError):
        physical_node_matrices(physical_matrices(small))


def test_chunked_and_whole_matrices_agree() -> None:
    path = REAL / "ig_8pe_2nodes" / "physical"
    whole = physical_matrices(read_physical(path))
    chunked = physical_matrices(iter_physical(path, block_bytes=1000))
    for t in SEND_TYPES:
        pd.testing.assert_frame_equal(whole.buffers(t), chunked.buffers(t))
        pd.testing.assert_frame_equal(whole.bytes(t), chunked.bytes(t))


# --- view and CLI -------------------------------------------------------------


def test_view_of_the_real_ig_trace() -> None:
    view = physical_view(REAL / "ig_8pe_2nodes" / "physical", pes_per_node=4, report=ReadReport())
    s = view.summary(top=2)
    assert s["kind"] == "physical" and s["num_pes"] == 8 and s["num_pes_inferred"]
    assert (s["pes_per_node"], s["num_nodes"]) == (4, 2)
    assert {
        t: (v["buffers"], v["bytes"], v["links"]) for t, v in s["totals"].items() if t != "all"
    } == {
        "local_send": (441, 3_208_072, 32),
        "nonblock_send": (367, 2_726_712, 16),
        "nonblock_progress": (328, 0, 16),
    }
    assert s["totals"]["all"]["buffers"] == 808 and s["totals"]["all"]["calls"] == 1136
    assert s["mesh_fit"]["fits"] and s["pes_per_node_candidates"] == [4]
    assert s["locality"]["local_send"]["inter_node"] == 0
    # nonblock_send: 203 self hops stay on the node, the other 164 buffers cross
    assert s["locality"]["nonblock_send"]["inter_node"] == 164
    assert s["totals"]["nonblock_send"]["self_buffers"] == 203
    assert s["program_output_lines"] == 7 and s["lines_read"] == 1136
    assert s["imbalance"]["all"]["buffers"]["sent"]["max"] == 107
    assert s["top_links"]["nonblock_send"][0] == {
        "src_pe": 0,
        "dst_pe": 0,
        "buffers": 30,
        "bytes": 170_000,
        "share": 30 / 367,
    }
    node_counts = view.matrix("nonblock_send", "count", "node")
    assert node_counts.to_numpy().tolist() == [[106, 81], [83, 97]]
    assert list(view.loads(["local_send"]).columns) == ["local_send\nsent", "local_send\nreceived"]
    assert view.summary_lines()[0] == "physical trace: 1,136 calls on 8 PEs (2 node(s) of 4)"


def test_view_without_pes_per_node_suggests_one() -> None:
    view = physical_view(REAL / "histo_16pe_4nodes" / "physical", report=ReadReport())
    assert view.fit is None and view.nodes is None and view.candidates == [4]
    assert any("--pes-per-node 4" in line for line in view.summary_lines())
    with pytest.raises(ValueError, match="pes_per_node"):
        view.matrix("local_send", level="node")
    seen = view.with_pes_per_node(2)
    assert seen.fit is not None and not seen.fit.fits
    assert any("does NOT fit" in w for w in seen.report.warnings)


def test_cli_physical_on_the_real_example(tmp_path: Path) -> None:
    trace = REAL / "ig_8pe_2nodes" / "physical"
    result = CliRunner().invoke(
        main, ["physical", str(trace), "--pes-per-node", "4", "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert [Path(p).name for p in result.stdout.splitlines()] == [
        "physical_heatmap.png",
        "physical_violin.png",
        "physical_counts.csv",
        "physical_bytes.csv",
        "physical_pairs.csv",
        "physical_node_counts.csv",
        "physical_node_bytes.csv",
        "physical_pes.csv",
        "physical_summary.json",
    ]
    assert "7 other line(s) ignored: 7 program output" in result.stderr
    assert "warning" not in result.stderr
    assert "2D mesh with 4 PEs per node: fits" in result.stderr
    counts = pd.read_csv(tmp_path / "physical_counts.csv", index_col=[0, 1])
    assert counts.index.names == ["send_type", "src_pe"] and counts.shape == (24, 8)
    assert counts.loc["local_send"].to_numpy().sum() == 441
    nbytes = pd.read_csv(tmp_path / "physical_bytes.csv", index_col=[0, 1])
    assert nbytes.loc["nonblock_send"].to_numpy().sum() == 2_726_712
    pes = pd.read_csv(tmp_path / "physical_pes.csv", index_col="pe")
    assert pes["buffers_sent"].sum() == 808
    # the long links table holds the same numbers as the dense CSVs
    links = pd.read_csv(tmp_path / "physical_pairs.csv")
    assert list(links.columns) == ["send_type", "src_pe", "dst_pe", "buffers", "bytes"]
    assert (links["buffers"] > 0).all()
    for send_type in SEND_TYPES:
        one = links[links["send_type"] == send_type]
        dense = counts.loc[send_type].to_numpy()
        assert one["buffers"].sum() == dense.sum() and len(one) == np.count_nonzero(dense)
        cells = dense[one["src_pe"].to_numpy(), one["dst_pe"].to_numpy()]
        np.testing.assert_array_equal(cells, one["buffers"].to_numpy())
    summary = json.loads((tmp_path / "physical_summary.json").read_text())
    assert summary["options"]["send_types"] == list(SEND_TYPES)
    assert summary["mesh_fit"]["fits"] is True


def test_cli_physical_one_send_type_and_file_argument(data: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "physical",
            str(data / "physical_small" / "physical.txt"),
            "--send-type",
            "nonblock_send",
            "--metric",
            "bytes",
            "--log",
            "--num-pes",
            "4",
            "-o",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "warning: " in result.stderr and "physical.txt:9: broken trace line" in result.stderr
    summary = json.loads((tmp_path / "physical_summary.json").read_text())
    assert summary["options"] == {"send_types": ["nonblock_send"], "metric": "bytes", "log": True}
    assert summary["num_pes_inferred"] is False and summary["mesh_fit"] is None
    assert summary["files"][0]["skipped_by_reason"]["program output"] == 4
    assert not (tmp_path / "physical_node_counts.csv").exists()


def test_cli_physical_errors(data: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        main, ["physical", str(data / "physical_only_output"), "-o", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert "physical_only_output/physical.txt: no trace line in this file" in result.stderr
    result = runner.invoke(
        main, ["physical", str(data / "physical_small"), "--num-pes", "3", "-o", str(tmp_path)]
    )
    assert result.exit_code == 1 and "physical.txt:8: src_pe 3" in result.stderr
    result = runner.invoke(main, ["physical", str(data / "nope")])
    assert result.exit_code == 2
    result = runner.invoke(main, ["physical", str(data / "physical_small"), "--send-type", "x"])
    assert result.exit_code == 2
    assert "physical" in runner.invoke(main, ["--help"]).stdout


def test_subprocess_python_m(tmp_path: Path) -> None:
    trace = REAL / "histo_16pe_4nodes" / "physical"
    argv = ["physical", str(trace), "-q", "-o", str(tmp_path), "--send-type", "local_send"]
    done = subprocess.run(
        [sys.executable, "-m", "actorprof", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert len(done.stdout.splitlines()) == 7  # with physical_pairs.csv


@pytest.mark.parametrize("seed", range(12))
def test_fitting_pes_per_node_is_every_divisor_mesh_fit_accepts(seed: int) -> None:
    """The divisors found by the column links' gcd and a check of the row
    links are those :func:`mesh_fit` accepts one by one: meshes of several
    K, a stray link along a row or a column, self hops, send types empty."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 6, 12, 16, 36, 64, 96]))
    k = int(rng.choice([d for d in range(1, n + 1) if n % d == 0]))
    links = int(rng.integers(0, 300))
    src = rng.integers(0, n, links)
    same_node = src // k * k + rng.integers(0, k, links)  # along the row
    same_column = (src % k + k * rng.integers(0, -(-n // k), links)) % n  # along the column
    types = ["local_send", "nonblock_send", "nonblock_progress"]
    kinds = rng.choice(types[: int(rng.integers(1, 4))] if seed % 3 else types[1:], links)
    dst = np.where(kinds == "local_send", same_node, same_column)
    strays = int(rng.random() < 0.3)
    dst[:strays] = rng.integers(0, n, strays)  # perhaps off the mesh
    frame = pd.DataFrame(
        {
            "send_type": pd.Categorical(kinds, categories=list(SEND_TYPES)),
            "buffer_bytes": rng.integers(0, 4096, links),
            "src_pe": src.astype(np.int32),
            "dst_pe": dst.astype(np.int32),
        }
    )
    mats = physical_matrices(frame, num_pes=n)
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    expected = [d for d in divisors if mesh_fit(mats, pes_per_node=d).fits]
    assert fitting_pes_per_node(mats) == expected
    if not strays:
        assert k in expected


def test_a_view_without_its_links_keeps_its_summary() -> None:
    """What the run report holds once the physical figures are drawn: the
    summary as the full view's, the links gone, what needs them refused."""
    view = physical_view(REAL / "ig_8pe_2nodes" / "physical", pes_per_node=4)
    slim = view.without_links(top=3)
    assert slim.without_links(top=3) is slim
    for top in (0, 1, 3):
        assert slim.summary(top=top) == view.summary(top=top)
    assert slim.summary(top=3)["locality"] is not None
    assert len(slim.summary(top=3)["top_links"]["local_send"]) == 3
    changed = slim.summary(top=3)  # a copy: changing it changes nothing kept
    changed["totals"]["local_send"]["buffers"] = -1
    changed["top_links"]["local_send"][0]["buffers"] = -1
    assert slim.summary(top=3) == view.summary(top=3)
    assert slim.summary_lines() == view.summary_lines()
    assert all(len(m.pairs) == 0 for m in slim.matrices.by_type.values())
    assert len(view.matrices.by_type["local_send"].pairs) > 0  # the full view untouched
    pd.testing.assert_frame_equal(
        slim.matrix("local_send", level="node"), view.matrix("local_send", level="node")
    )
    pd.testing.assert_frame_equal(slim.loads(), view.loads())
    with pytest.raises(ValueError, match="top 3 links"):
        slim.summary(top=4)
    for needs_links in (
        lambda: slim.matrix("local_send"),
        slim.pairs,
        lambda: slim.heatmap_panels("local_send"),
        lambda: slim.with_pes_per_node(2),
    ):
        with pytest.raises(ValueError, match="let go"):
            needs_links()

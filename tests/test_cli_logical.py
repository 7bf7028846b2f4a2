"""`actorprof logical` end to end: files, numbers, messages, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from actorprof import __version__
from actorprof.cli import main

from .conftest import snapshot


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_logical_on_real_example(examples: Path, tmp_path: Path) -> None:
    trace = examples / "ig_8pe_2nodes" / "logical"
    before = snapshot(trace)
    code, out, err = run("logical", str(trace), "--num-pes", "8", "-o", str(tmp_path / "plots"))
    assert code == 0, err
    names = [Path(p).name for p in out.splitlines()]
    assert names == [
        "logical_heatmap.png",
        "logical_violin.png",
        "logical_loads.png",
        "logical_counts.csv",
        "logical_bytes.csv",
        "logical_pairs.csv",
        "logical_pes.csv",
        "logical_summary.json",
    ]
    assert all(Path(p).is_file() and Path(p).stat().st_size > 0 for p in out.splitlines())
    counts = pd.read_csv(tmp_path / "plots" / "logical_counts.csv", index_col=0)
    assert list(counts.columns) == [str(i) for i in range(8)]
    assert counts.index.name == "src_pe"
    assert counts.to_numpy().sum() == 160_000
    pes = pd.read_csv(tmp_path / "plots" / "logical_pes.csv")
    assert list(pes.columns) == [
        "pe",
        "node",
        "sent",
        "received",
        "bytes_sent",
        "bytes_received",
        "self_sends",
    ]
    assert pes["sent"].tolist() == [20015, 20000, 19904, 19980, 19934, 20172, 19931, 20064]
    summary = json.loads((tmp_path / "plots" / "logical_summary.json").read_text())
    assert summary["num_pes"] == 8 and summary["num_nodes"] == 2
    assert summary["totals"]["messages"] == 160_000
    assert summary["totals"]["bytes"] == 160_000 * 16
    assert summary["totals"]["self_sends"] == 19_908
    assert summary["locality"]["intra_node"] == 80_266
    sent = summary["imbalance"]["count"]["sent"]
    assert sent["max"] == 20172 and sent["max_pe"] == 5 and sent["mean"] == 20000
    assert sent["max_over_mean"] == pytest.approx(1.0086)
    assert summary["top_pairs"][0] == {
        "src_pe": 4,
        "dst_pe": 5,
        "messages": 2591,
        "bytes": 2591 * 16,
        "share": 2591 / 160000,
    }
    assert [f["lines_read"] for f in summary["files"]][:2] == [20015, 20000]
    assert "160,000 messages" in err and "8 PEs on 2 node(s)" in err
    assert snapshot(trace) == before


def test_quiet_node_level_bytes_svg(examples: Path, tmp_path: Path) -> None:
    code, out, err = run(
        "logical",
        str(examples / "ig_8pe_2nodes" / "logical"),
        "-q",
        "--level",
        "node",
        "--metric",
        "bytes",
        "--format",
        "svg",
        "--log",
        "-o",
        str(tmp_path),
    )
    assert code == 0 and err == ""
    names = [Path(p).name for p in out.splitlines()]
    assert names == [
        "logical_node_heatmap.svg",
        "logical_node_violin.svg",
        "logical_node_loads.svg",
        "logical_node_counts.csv",
        "logical_node_bytes.csv",
        "logical_nodes.csv",
        "logical_pes.csv",
        "logical_summary.json",
    ]
    nodes = pd.read_csv(tmp_path / "logical_node_counts.csv", index_col=0)
    assert nodes.to_numpy().tolist() == [[40032, 39867], [39867, 40234]]
    table = pd.read_csv(tmp_path / "logical_nodes.csv")
    assert table["pes"].tolist() == [4, 4] and table["sent"].sum() == 160_000
    summary = json.loads((tmp_path / "logical_summary.json").read_text())
    assert summary["num_pes_inferred"] is True


def test_self_sends_options(data: Path, tmp_path: Path) -> None:
    folder = str(data / "logical_small")
    for mode, total in (("include", 10), ("exclude", 8), ("only", 2)):
        code, _, err = run("logical", folder, "--self-sends", mode, "-o", str(tmp_path / mode))
        assert code == 0, err
        counts = pd.read_csv(tmp_path / mode / "logical_counts.csv", index_col=0)
        assert counts.to_numpy().sum() == total
        summary = json.loads((tmp_path / mode / "logical_summary.json").read_text())
        assert summary["totals"]["messages"] == total
        assert summary["totals"]["self_sends"] == 2


def test_phase_option_and_notes(data: Path, tmp_path: Path) -> None:
    code, _, err = run(
        "logical", str(data / "logical_phases"), "--phase", "bfs", "-o", str(tmp_path)
    )
    assert code == 0
    summary = json.loads((tmp_path / "logical_summary.json").read_text())
    assert summary["phase"] == "bfs" and summary["totals"]["messages"] == 3
    code, _, err = run("logical", str(data / "logical_phases"), "-o", str(tmp_path))
    assert code == 0 and "other phases here: bfs, tc_x" in err
    code, _, err = run("logical", str(data / "logical_phases"), "--phase", "x", "-o", str(tmp_path))
    assert code == 2 and "no files of phase 'x'" in err and "Traceback" not in err


def test_bad_input_is_reported_not_fatal(data: Path, tmp_path: Path) -> None:
    code, _out, err = run(
        "logical", str(data / "logical_bad"), "--num-pes", "4", "-o", str(tmp_path)
    )
    assert code == 0
    assert "1 of 4 PE files missing: PE 2" in err
    assert "PE0_send.csv: skipped 4 line(s)" in err
    assert "PE0_send.csv:2: wrong number of fields" in err
    summary = json.loads((tmp_path / "logical_summary.json").read_text())
    assert summary["missing_pes"] == [2]
    assert summary["lines_read"] == 5 and summary["lines_skipped"] == 4
    pe0 = summary["files"][0]
    assert pe0["skipped_by_reason"]["negative value in dst_pe"] == 1
    assert pe0["first_skipped"][0] == {
        "line": 2,
        "reason": "wrong number of fields (expected 5 or 6, found 1)",
        "text": "Running histo on 4 threads",
    }


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["nope-dir"], 2, "does not exist"),
        (["{data}/logical_small", "--num-pes", "0"], 2, "0 is not in the range 1<=x<=1048576"),
        # the top of the old range (2^24) ran for minutes in gigabytes: a usage error now
        (["{data}/logical_small", "--num-pes", "16777216"], 2, "16777216 is not in the range"),
        (["{data}/logical_small", "--metric", "size"], 2, "'size' is not one of"),
        # no trace in the folder nor in its subfolders
        (
            ["{data}/../../examples/triangle_counting"],
            1,
            "no trace file found; looked for PE<i>_send.csv",
        ),
    ],
)
def test_errors_exit_codes(
    data: Path, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    argv = ["logical", *(a.format(data=data) for a in args), "-o", str(tmp_path)]
    got, out, err = run(*argv)
    assert got == code
    assert message in err
    assert "Traceback" not in err
    assert out == ""


def test_error_names_file_and_line(data: Path, tmp_path: Path) -> None:
    code, _, err = run(
        "logical",
        str(data / "logical_small" / "PE0_send.csv"),
        "--num-pes",
        "2",
        "-o",
        str(tmp_path),
    )
    assert code == 0
    assert "PE0_send.csv:3: PE id beyond --num-pes 2: '0, 0, 1, 2, 16, ...'" in err


def test_file_beyond_num_pes_is_a_warning(data: Path, tmp_path: Path) -> None:
    code, out, err = run(
        "logical", str(data / "logical_small"), "--num-pes", "2", "-o", str(tmp_path)
    )
    assert code == 0 and out
    assert "PE2_send.csv: file of PE 2 but --num-pes is 2: its lines are read" in err


def test_verbose_shows_traceback(data: Path, tmp_path: Path) -> None:
    trace = data / "bad" / "logical_only_output"  # a data error: no line is a trace line
    code, _, err = run("logical", str(trace), "-v", "-o", str(tmp_path))
    assert code == 1 and "Traceback" in err and "TraceFormatError" in err


def test_unwritable_output_fails_before_work(data: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run("logical", str(data / "logical_small"), "-o", str(blocker / "sub"))
    assert code in (1, 2) and "Traceback" not in err


def test_version_and_help() -> None:
    code, out, _ = run("--version")
    assert code == 0 and __version__ in out
    code, out, _ = run("logical", "-h")
    assert code == 0 and "Examples:" in out and "--self-sends" in out


@pytest.mark.parametrize("argv0", [["actorprof"], [sys.executable, "-m", "actorprof"]])
def test_real_subprocess(argv0: list[str], data: Path, tmp_path: Path) -> None:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [*argv0, "logical", str(data / "logical_small"), "-o", str(tmp_path), "-q"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert len(proc.stdout.splitlines()) == 8  # 3 figures, 4 tables, the summary


def test_ctrl_c_exits_130_without_traceback(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import actorprof.kinds.logical as logical

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(logical, "logical_view", interrupted)
    code, out, err = run("logical", str(data / "logical_small"), "-o", str(tmp_path))
    assert code == 130 and out == ""
    assert "interrupted" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "args",
    [
        ["--num-pes", "1000000000"],
        ["--num-pes", "99999999999999999999"],
    ],
)
def test_absurd_pe_counts_are_usage_errors(data: Path, tmp_path: Path, args: list[str]) -> None:
    code, out, err = run("logical", str(data / "logical_small"), *args, "-o", str(tmp_path))
    assert code == 2 and out == "" and "not in the range" in err


def test_quiet_silences_library_warnings(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import warnings

    import actorprof.kinds.logical as logical

    real = logical.write_logical

    def noisy(*args: object, **kwargs: object) -> None:
        warnings.warn("Matplotlib is building the font cache", UserWarning, stacklevel=1)
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(logical, "write_logical", noisy)
    code, out, err = run("logical", str(data / "logical_small"), "-q", "-o", str(tmp_path))
    assert code == 0 and out and err == ""


def test_a_killed_worker_is_a_clear_error(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures.process import BrokenProcessPool

    import actorprof.kinds.logical as logical

    def killed(*args: object, **kwargs: object) -> None:
        raise BrokenProcessPool("A process in the process pool was terminated abruptly")

    monkeypatch.setattr(logical, "logical_view", killed)
    code, out, err = run("logical", str(data / "logical_small"), "-o", str(tmp_path))
    assert code == 1 and out == "" and "a worker process died" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["logical", "{empty}", "-q"], 1, "no trace file found"),
        (["logical", "{missing}", "-q"], 2, "does not exist"),
        (["--version"], 0, "actorprof"),
    ],
)
def test_the_program_exits_with_the_commands_code_and_says_all(
    args: list[str], code: int, said: str, tmp_path: Path
) -> None:
    """The program's quick exit (``cli.run``) keeps the exit code and flushes
    what was written to a pipe."""
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = [a.format(empty=empty, missing=tmp_path / "missing") for a in args]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-m", "actorprof", *argv], capture_output=True, text=True, env=env
    )
    assert proc.returncode == code
    assert said in proc.stdout + proc.stderr


def test_the_program_runs_its_exit_handlers(tmp_path: Path) -> None:
    """After the quick exit, the report's private figure folder is gone
    (removed by an exit handler) and every output is complete."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    # the logical trace of the shipped ig run: a page of figures, without the
    # physical trace's (1.5 s of CPU more, and the exit is the same)
    example = Path(__file__).resolve().parents[1] / "examples" / "ig_8pe_2nodes" / "logical"
    env = {**os.environ, "MPLBACKEND": "Agg", "TMPDIR": str(scratch)}
    proc = subprocess.run(
        [sys.executable, "-m", "actorprof", "report", str(example), "-o", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(tmp_path / "o" / f"report.{e}") for e in ("html", "json")]
    assert json.loads((tmp_path / "o" / "report.json").read_text())["kinds_read"]
    assert list(scratch.iterdir()) == []


def test_the_program_under_a_profiler_exits_as_python_does(tmp_path: Path) -> None:
    """``python -m cProfile -m actorprof``: the profile is written (no quick exit)."""
    profile = tmp_path / "run.prof"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "actorprof", "--version"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert profile.stat().st_size > 0

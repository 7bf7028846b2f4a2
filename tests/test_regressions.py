"""Bugs found while hardening, each pinned (see the commit that fixed it)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from actorprof import ReadReport, read_logical
from actorprof.cli import main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_aggregation_of_a_device_is_a_usage_error(tmp_path: Path) -> None:
    code, out, err = run("aggregation", "/dev/null", "-o", str(tmp_path))
    assert code == 2 and out == ""
    assert "/dev/null: neither a regular file nor a folder" in err


def test_papi_infers_pes_that_only_send(tmp_path: Path) -> None:
    (tmp_path / "PE0_PAPI.csv").write_text(
        "0, 9, 0, 0, 8, 0, 0, 10, 4, 1.000000\n0, 0, 0, 0, 0, -1, 1, 100, 40, 1.000001\n"
    )
    code, _, err = run("papi", str(tmp_path), "-o", str(tmp_path / "out"))
    assert code == 0, err
    summary = json.loads((tmp_path / "out" / "papi_summary.json").read_text())
    assert summary["num_pes"] == 10


def test_timeline_counts_pes_that_only_receive(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_text("0, 0, 0, 3, 8, 1.000000\n")
    code, _, err = run("timeline", str(tmp_path), "-o", str(tmp_path / "out"), "-q")
    assert code == 0, err
    summary = json.loads((tmp_path / "out" / "timeline_summary.json").read_text())
    assert summary["num_pes"] == 4
    assert summary["pe_last_send_s"][1:] == [None, None, None]


def test_invalid_utf8_is_shown_once_escaped(tmp_path: Path) -> None:
    (tmp_path / "PE0_send.csv").write_bytes(b"0, 0, 0, 1, 8, 1.000000\n\xff\xfe oops\n")
    report = ReadReport()
    read_logical(tmp_path, report=report)
    text = report.files[0].examples[0].text
    assert text == "\ufffd\ufffd oops"
    assert "\\\\x" not in "\n".join(report.skipped_summary())


def test_papi_counter_sums_cannot_wrap(tmp_path: Path) -> None:
    big = 2**63 - 1
    (tmp_path / "PE0_PAPI.csv").write_text(
        f"0, 0, 0, 0, 8, 0, 0, {big}, 4, 1.000000\n0, 0, 0, 0, 8, 0, 0, {big}, 4, 1.000001\n"
    )
    code, out, err = run("papi", str(tmp_path), "-o", str(tmp_path / "out"))
    assert code == 1 and out == ""
    assert "PAPI counter totals of PE 0 exceed 64-bit integers" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "papi_summary.json").exists()

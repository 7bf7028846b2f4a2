"""Small PAPI files parsed in batches give exactly what file-by-file reading gives.

``read/papi.py`` joins whole small files and parses them with one call of
the fast path; a batch it refuses is halved until the odd files are found,
and those are read alone. These tests read the same folders batched (small
and large batches) and file by file (batches of 0 bytes: every file alone)
and compare everything a reader hands out: rows, per-file line accounting
with the skipped lines' file:line, notes, warnings, the line-numbered chunks
with their file, the PAPI view, and the errors.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import actorprof.read.papi as papi_module
from actorprof import ActorProfError, ReadReport, iter_papi, read_papi
from actorprof.kinds.papi import papi_view

#: Batch sizes: every file alone, a few files per batch, everything in one batch.
ALONE, SMALL, LARGE = 0, 700, 4 << 20


@contextmanager
def batches_of(size: int) -> Iterator[None]:
    with mock.patch.object(papi_module, "_BATCH_BYTES", size):
        yield


def good_lines(pe: int, n: int, counters: int = 2, seed: int = 0) -> str:
    rng = np.random.default_rng(seed + pe)
    lines = []
    for _ in range(n):
        src = int(rng.integers(0, 8))
        values = ", ".join(str(int(v)) for v in rng.integers(0, 10**6, counters))
        time = f"{1721412345 + rng.random():.6f}"
        lines.append(
            f"{src // 4}, {src}, {pe // 4}, {pe}, 16, {int(rng.integers(0, 2))}, "
            f"{int(rng.integers(0, 3))}, {values}, {time}\n"
        )
    main = ", ".join(["1000000"] * counters)
    lines.append(f"{pe // 4}, {pe}, {pe // 4}, {pe}, 0, -1, {n}, {main}, 1721412347.500000\n")
    return "".join(lines)


def damaged_run(folder: Path) -> None:
    """32 PE files: clean ones, and each kind of damage in the middle of them."""
    texts = {pe: good_lines(pe, 5 + pe % 7) for pe in range(32)}
    texts[3] = texts[3].replace("\n", "\nnot a trace line\n", 2)  # a bad line
    texts[5] = texts[5] + "0, 1, 1, 5, 16, 0, 0, 12"  # last line cut by a killed job
    texts[8] = texts[8] + "\x00" * 300  # a tail of blocks never written
    texts[11] = good_lines(11, 2, counters=3) + texts[11]  # lines of another width
    texts[13] = texts[13].replace("\n", "\n\n   \n", 3)  # blank lines
    texts[14] = texts[14].replace("\n", "\r\n")  # CRLF
    texts[17] = ""  # a PE that wrote nothing
    texts[19] = "\n\n"  # blank only
    texts[21] = texts[21].replace(", 21, 16,", ", 7, 16,", 1)  # dst_pe not the file's PE
    texts[23] = "".join(texts[23].splitlines(keepends=True)[:-1])  # no MAIN line
    texts[25] = texts[25].replace(", 16, 0,", f", 16, {2**40},", 1)  # mailbox beyond int32
    texts[27] = texts[27].replace(", 16, ", ", 16 , ", 2)  # blanks around fields
    texts[29] = texts[29] + texts[29].splitlines(keepends=True)[-1]  # two MAIN lines
    for pe, text in texts.items():
        (folder / f"PE{pe}_PAPI.csv").write_text(text)


def outcome(folder: Path, size: int, **options: Any) -> dict[str, Any]:
    """Everything a read of ``folder`` hands out, with batches of ``size`` bytes."""
    with batches_of(size):
        report = ReadReport()
        try:
            frame = read_papi(folder, report=report, **options)
        except ActorProfError as exc:
            return {"error": (type(exc).__name__, str(exc), exc.path, exc.line)}
        numbered = ReadReport()
        chunks = [
            (numbered.files[-1].path, chunk)
            for chunk in iter_papi(folder, report=numbered, line_numbers=True, **options)
        ]
        view = papi_view(folder, report=ReadReport(), **options)
    return {
        "frame": frame,
        "files": report.files,
        "notes": report.notes,
        "warnings": report.warnings,
        "numbered_files": numbered.files,
        "chunks": chunks,
        "summary": view.summary(),
        "pes": view.pes,
        "regions": view.regions,
    }


def assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    if "error" in a:
        assert a["error"] == b["error"]
        return
    pd.testing.assert_frame_equal(a["frame"], b["frame"])
    pd.testing.assert_frame_equal(a["pes"], b["pes"])
    pd.testing.assert_frame_equal(a["regions"], b["regions"])
    for key in ("files", "notes", "warnings", "numbered_files", "summary"):
        assert a[key] == b[key], key
    assert [path for path, _ in a["chunks"]] == [path for path, _ in b["chunks"]]
    for (_, x), (_, y) in zip(a["chunks"], b["chunks"], strict=True):
        pd.testing.assert_frame_equal(x, y)


def test_damaged_files_in_a_batch(tmp_path: Path) -> None:
    damaged_run(tmp_path)
    alone = outcome(tmp_path, ALONE)
    assert "error" not in alone
    for size in (SMALL, LARGE):
        assert_same(alone, outcome(tmp_path, size))
    # the damage is accounted where it is, file and line
    files = {Path(f.path).name: f for f in alone["files"]}
    assert files["PE3_PAPI.csv"].lines_skipped == 2
    assert [e.line for e in files["PE3_PAPI.csv"].examples] == [2, 4]
    assert files["PE5_PAPI.csv"].skipped == {
        "last line cut (no line end; the job was probably killed)": 1
    }
    assert files["PE8_PAPI.csv"].lines_skipped == 1
    assert files["PE11_PAPI.csv"].lines_skipped == 3
    assert [e.line for e in files["PE11_PAPI.csv"].examples] == [1, 2, 3]
    assert files["PE13_PAPI.csv"].lines_blank == 6
    assert files["PE19_PAPI.csv"].lines_blank == 2
    assert files["PE25_PAPI.csv"].examples[0].line == 1
    assert any("PE21_PAPI.csv" in w and "dst_pe" in w for w in alone["warnings"])
    assert any("PE23_PAPI.csv" in w and "no MAIN line" in w for w in alone["warnings"])
    assert any("PE29_PAPI.csv" in w and "2 MAIN lines" in w for w in alone["warnings"])
    # line numbers of the batched chunks are those of the files
    chunks = dict(outcome(tmp_path, LARGE)["chunks"])
    pe13 = chunks[str(tmp_path / "PE13_PAPI.csv")]
    assert pe13["line"].tolist() == [1, 4, 7, *range(10, 19)]


def test_clean_run_is_one_batch(tmp_path: Path) -> None:
    for pe in range(64):
        (tmp_path / f"PE{pe}_PAPI.csv").write_text(good_lines(pe, 3 + pe % 5))
    with batches_of(LARGE):
        report = ReadReport()
        chunks = list(iter_papi(tmp_path, report=report))
    assert len(chunks) == 1 and len(report.files) == 64
    assert_same(outcome(tmp_path, ALONE), outcome(tmp_path, LARGE))
    assert_same(outcome(tmp_path, ALONE), outcome(tmp_path, SMALL))


@pytest.mark.parametrize("odd", ["\x00" * 300, good_lines(5, 6, counters=3), "no\ntrace\n"])
def test_a_file_that_is_not_a_trace_fails_the_same(tmp_path: Path, odd: str) -> None:
    for pe in range(12):
        (tmp_path / f"PE{pe}_PAPI.csv").write_text(odd if pe == 5 else good_lines(pe, 4))
    alone = outcome(tmp_path, ALONE)
    assert alone["error"][2:] == (str(tmp_path / "PE5_PAPI.csv"), 1)
    for size in (SMALL, LARGE):
        assert_same(alone, outcome(tmp_path, size))


@pytest.mark.parametrize("bad_pe", [0, 9, 15])
def test_pe_limit_error_names_the_same_file_and_line(tmp_path: Path, bad_pe: int) -> None:
    for pe in range(16):
        text = good_lines(pe, 4)
        if pe == bad_pe:  # line 3 names PE 99
            lines = text.splitlines(keepends=True)
            lines[2] = f"0, 99, 0, {pe}, 16, 0, 0, 1, 2, 1721412345.000001\n"
            text = "".join(lines)
        (tmp_path / f"PE{pe}_PAPI.csv").write_text(text)
    alone = outcome(tmp_path, ALONE, num_pes=16)
    assert alone["error"][2:] == (str(tmp_path / f"PE{bad_pe}_PAPI.csv"), 3)
    for size in (SMALL, LARGE):
        assert_same(alone, outcome(tmp_path, size, num_pes=16))


def test_larger_files_than_a_batch_are_read_alone(tmp_path: Path) -> None:
    for pe in range(6):
        (tmp_path / f"PE{pe}_PAPI.csv").write_text(good_lines(pe, 40 if pe % 2 else 2))
    assert_same(outcome(tmp_path, ALONE), outcome(tmp_path, 1500))


FIELD = st.one_of(
    st.integers(-2, 20).map(str),
    st.sampled_from(["1700000001.000001", "2.5", "x", "", " 3", "\x00", str(2**40), "nan"]),
)
LINE = st.one_of(
    st.lists(FIELD, min_size=0, max_size=12).map(", ".join),
    st.integers(0, 3).map(lambda pe: f"0, 1, 0, {pe}, 16, 0, 0, 5, 7, 1721412345.000001"),
)


@st.composite
def papi_texts(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(LINE, max_size=8))
    ends = [draw(st.sampled_from(["\n", "\r\n"])) for _ in lines]
    data = "".join(line + end for line, end in zip(lines, ends, strict=True)).encode()
    return data if draw(st.booleans()) else data[: draw(st.integers(0, len(data)))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(papi_texts(), min_size=1, max_size=6), st.one_of(st.none(), st.integers(1, 6)))
def test_any_files_batched_or_alone(texts: list[bytes], num_pes: int | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for pe, data in enumerate(texts):
            (Path(tmp) / f"PE{pe}_PAPI.csv").write_bytes(data)
        alone = outcome(Path(tmp), ALONE, num_pes=num_pes)
        for size in (40, LARGE):
            assert_same(alone, outcome(Path(tmp), size, num_pes=num_pes))


def test_many_files_vote_by_a_spread_sample(tmp_path: Path) -> None:
    """Of 600 files, 512 spread over the run vote; an odd file is still accounted."""
    n = 600
    assert n > papi_module._SNIFF_FILES
    for pe in range(n):
        lines = [f"0, 0, {pe}, {pe}, 8, 0, 0, 0, 0, 1795245601.{i:06d}\n" for i in range(3)]
        if pe == 1:  # not among the voters (0, 1.17, 2.34, ...): two counters, not four
            lines = [f"0, 0, {pe}, {pe}, 8, 0, 0, 1795245601.{i:06d}\n" for i in range(3)]
        (tmp_path / f"PE{pe}_PAPI.csv").write_text("".join(lines))
    # a file of another width is not a trace of this run: the error names it,
    # as when it voted (then the warning said so first)
    with pytest.raises(ActorProfError, match=r"PE1_PAPI\.csv:1: .*wrong number of fields"):
        read_papi(tmp_path, report=ReadReport())
    (tmp_path / "PE1_PAPI.csv").write_text(  # one odd line among good ones: skipped, accounted
        "0, 0, 1, 1, 8, 0, 0, 1795245601.000000\n0, 0, 1, 1, 8, 0, 0, 0, 0, 1795245601.000001\n"
    )
    report = ReadReport()
    heads = mock.patch.object(
        papi_module, "_head_counter_counts", wraps=papi_module._head_counter_counts
    )
    with heads as sniffed:
        frame = read_papi(tmp_path, report=report)
    assert sniffed.call_count == papi_module._SNIFF_FILES  # not one per file
    assert len(frame) == 3 * (n - 1) + 1
    odd = next(f for f in report.files if f.path.endswith("PE1_PAPI.csv"))
    assert odd.lines_read == 1 and sum(odd.skipped.values()) == 1
    assert all("wrong number of fields" in reason for reason in odd.skipped)

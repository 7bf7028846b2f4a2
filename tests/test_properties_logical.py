"""Property tests: any bytes either read with conserved line counts, or raise ours.

The oracle below is a plain-Python statement of the logical line grammar
(docs/logical.md); the reader, whatever its fast paths, must agree with it.
"""

from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actorprof import ActorProfError, ReadReport, iter_logical, read_logical

from .conftest import number_of_lines

INT = re.compile(rb"[+-]?[0-9]+")
FLOAT = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
COMPLETE_TIME = re.compile(rb"[0-9]+\.[0-9]{6}")
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


def oracle_line(text: bytes) -> list[float] | None:
    """The values of one line, or None when it is not a logical trace line."""
    fields = [f.strip() for f in text.split(b",")]
    if len(fields) not in (5, 6):
        return None
    values: list[float] = []
    for i, field in enumerate(fields[:5]):
        if not INT.fullmatch(field):
            return None
        v = int(field)
        lo, hi = (INT64[0], 2**32) if i == 4 else INT32
        if v < 0 or not lo <= v <= hi:
            return None
        values.append(v)
    if len(fields) == 6:
        if not FLOAT.fullmatch(fields[5]) or not math.isfinite(float(fields[5])):
            return None
        values.append(float(fields[5]))
    else:
        values.append(math.nan)
    return values


def oracle(data: bytes) -> tuple[list[list[float]], int, int]:
    """(rows, blank lines, skipped lines) of a whole file."""
    pieces = data.split(b"\n")
    last = pieces.pop()  # text after the final line end ("" if none)
    rows, blank, skipped = [], 0, 0
    for raw in pieces:
        text = raw.rstrip(b"\r")
        if not text.strip():
            blank += 1
            continue
        values = oracle_line(text)
        if values is None:
            skipped += 1
        else:
            rows.append(values)
    if last:
        text = last.rstrip(b"\r")
        fields = [f.strip() for f in text.split(b",")]
        if not text.strip():
            blank += 1
        elif len(fields) == 6 and COMPLETE_TIME.fullmatch(fields[5]):
            values = oracle_line(text)
            if values is None:
                skipped += 1
            else:
                rows.append(values)
        else:
            skipped += 1
    return rows, blank, skipped


good_line = st.builds(
    lambda a, b, c, d, e, t, sep, five: (
        ", ".join([str(a), str(b), str(c), str(d), str(e)] + ([] if five else [f"{t:.6f}"]))
    ).replace(", ", sep),
    st.integers(0, 3),
    st.integers(0, 7),
    st.integers(0, 3),
    st.integers(0, 7),
    st.integers(0, 10_000),
    st.floats(0, 2e9, allow_nan=False),
    st.sampled_from([", ", ",", " , ", ",\t"]),
    st.booleans(),
)
bad_line = st.one_of(
    st.sampled_from(
        [
            "Running histo on 4 threads",
            "0, 0, 0, 1",
            "0, 0, 0, 1, 8, 1.0, 9",
            "0, 0, 0, -1, 8, 1.000000",
            "0, 0, 0, 1, 8, nan",
            "0, 0, 0, 1, 8, 1e999",
            "0, 0, 0, 99999999999, 8, 1.0",
            "0, 0, 0, 1, 8,",
            '"0", 0, 0, 1, 8, 1.0',
            "0, 0, 0, 1.5, 8, 1.0",
            "",
            "   ",
        ]
    ),
    st.text(alphabet=st.characters(codec="latin-1"), max_size=40),
)
line_end = st.sampled_from(["\n", "\r\n"])


@st.composite
def trace_files(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.one_of(good_line, good_line, bad_line), max_size=40))
    ends = [draw(line_end) for _ in lines]
    body = "".join(
        line.replace("\n", " ").replace("\r", " ") + end for line, end in zip(lines, ends)
    )
    tail = draw(st.one_of(st.just(""), good_line, bad_line.map(lambda s: s.replace("\n", " "))))
    return (body + tail.replace("\r", " ")).encode("latin-1", "replace")


def read_bytes(data: bytes, block_bytes: int | None = None) -> tuple[object, ReadReport]:
    """Read ``data`` as PE0_send.csv: (frame or our error, report)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "PE0_send.csv"
        path.write_bytes(data)
        report = ReadReport()
        try:
            if block_bytes is None:
                frame: object = read_logical(path, report=report)
            else:
                parts = list(iter_logical(path, report=report, block_bytes=block_bytes))
                frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        except ActorProfError as exc:
            frame = exc
    return frame, report


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace_files())
def test_reader_agrees_with_the_grammar(data: bytes) -> None:
    rows, blank, skipped = oracle(data)
    frame, report = read_bytes(data)
    if isinstance(frame, ActorProfError):
        # only a file with lines but no trace line at all is an error
        assert not rows and skipped > 0
        assert "no line of this file" in str(frame) and "PE0_send.csv:" in str(frame)
        return
    f = report.files[0]
    assert f.lines_read == len(rows) == len(frame)  # type: ignore[arg-type]
    assert f.lines_blank == blank
    assert f.lines_skipped == skipped
    assert f.lines_total == number_of_lines(data)
    if rows:
        got = frame.to_numpy(dtype=float)  # type: ignore[attr-defined]
        np.testing.assert_array_equal(got[:, :5], np.asarray(rows)[:, :5])
        np.testing.assert_allclose(got[:, 5], np.asarray(rows)[:, 5], rtol=0, atol=0)


@settings(max_examples=100, deadline=None)
@given(trace_files(), st.integers(1, 64))
def test_block_size_never_changes_the_result(data: bytes, block_bytes: int) -> None:
    whole, report_whole = read_bytes(data)
    parts, report_parts = read_bytes(data, block_bytes)
    if isinstance(whole, ActorProfError):
        assert isinstance(parts, ActorProfError)
        return
    assert isinstance(whole, pd.DataFrame) and isinstance(parts, pd.DataFrame)
    if len(whole):
        np.testing.assert_array_equal(whole.to_numpy(), parts.to_numpy())
    else:
        assert len(parts) == 0
    a, b = report_whole.files[0], report_parts.files[0]
    assert (a.lines_read, a.lines_blank, a.skipped) == (b.lines_read, b.lines_blank, b.skipped)
    assert [e.line for e in a.examples] == [e.line for e in b.examples]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_read_or_our_error(data: bytes) -> None:
    frame, report = read_bytes(data)
    if isinstance(frame, ActorProfError):
        return
    f = report.files[0]
    assert f.lines_read == len(frame)  # type: ignore[arg-type]
    assert f.lines_total == number_of_lines(data)


@pytest.mark.parametrize(
    "data", [b"\x00" * 64, b"\x00" * 64 + b"\n", b"\x00\n" * 8, b"\xff\xfe\n", b"abc"]
)
def test_nul_and_binary_garbage(data: bytes) -> None:
    frame, _ = read_bytes(data)
    assert isinstance(frame, ActorProfError)

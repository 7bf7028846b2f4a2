"""Property tests of the physical.txt reader: any bytes read with conserved counts, or our error.

Every line is read, blank, or skipped under a reason; the frame holds exactly
the lines read; the block size never changes frames, counts or examples; an
error is always actorprof's own, naming the file (and the line when one line
is to blame).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from actorprof import ActorProfError, ReadReport, TraceFormatError, iter_physical
from actorprof.schema import SEND_TYPES

from .conftest import number_of_lines

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def read(
    data: bytes, *, num_pes: int | None = None, block_bytes: int = 1 << 20
) -> tuple[pd.DataFrame | ActorProfError, ReadReport]:
    """Read ``data`` as physical.txt; check what must hold whatever the bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "physical.txt"
        path.write_bytes(data)
        report = ReadReport()
        try:
            parts = list(
                iter_physical(path, num_pes=num_pes, report=report, block_bytes=block_bytes)
            )
        except ActorProfError as exc:
            assert isinstance(exc, TraceFormatError), exc
            assert exc.path == str(path) and str(exc).startswith(str(path))
            if "--num-pes" in str(exc):
                assert exc.line is not None and str(exc).startswith(f"{path}:{exc.line}: ")
            assert len(str(exc)) < 600  # a line of garbage is cut, never pasted whole
            return exc, report
    frame = pd.concat(parts, ignore_index=True)
    (f,) = report.files
    assert f.lines_read + f.lines_blank + f.lines_skipped == number_of_lines(data)
    assert f.lines_read == len(frame) > 0 and f.bytes_read == len(data)
    assert (frame["buffer_bytes"] >= 0).all() and (frame["src_pe"] >= 0).all()
    if num_pes is not None:
        assert (frame["src_pe"] < num_pes).all() and (frame["dst_pe"] < num_pes).all()
    assert all(len(e.text) <= 123 for e in f.examples)
    return frame, report


@SETTINGS
@given(st.binary(max_size=400))
@example(data=b"\xef\xbb\xbf")  # a byte-order mark alone: no line
def test_any_bytes(data: bytes) -> None:
    read(data)


TRACE_LINE = st.builds(
    lambda blank, kind, sep0, a, sep, b, c, tail: f"{blank}{kind}{sep0}{a}{sep}{b}{sep}{c}{tail}",
    st.sampled_from(["", " ", "\t"]),
    st.sampled_from([*SEND_TYPES, "local_sends", "Local_send"]),
    st.sampled_from([", ", ",", ": ", " ", ":", ";"]),
    st.one_of(st.integers(-3, 10**6), st.sampled_from([2**63 - 1, 2**63, 10**20])),
    st.sampled_from([", ", " ", "\t", ",,"]),
    st.one_of(st.integers(-2, 12), st.sampled_from([2**31 - 1, 2**31, 3 * 10**9])),
    st.integers(0, 12),
    st.sampled_from(["", ", 0.25", " extra", " ", "x", "\x00"]),
)
OTHER_LINE = st.one_of(
    st.sampled_from(["Running ig on 8 PEs", "", "  ", "\x00" * 16, "local_send", "\ufffd"]),
    st.text(max_size=30).map(lambda s: s.replace("\n", " ")),
)


@st.composite
def physical_texts(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.one_of(TRACE_LINE, TRACE_LINE, OTHER_LINE), max_size=30))
    ends = [draw(st.sampled_from(["\n", "\r\n"])) for _ in lines]
    data = "".join(line + end for line, end in zip(lines, ends)).encode("utf-8", "surrogatepass")
    return data[: draw(st.integers(0, len(data)))]  # a killed job cuts anywhere


@SETTINGS
@given(physical_texts(), st.one_of(st.none(), st.integers(1, 12)))
def test_trace_like_text(data: bytes, num_pes: int | None) -> None:
    read(data, num_pes=num_pes)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(physical_texts(), st.integers(1, 64))
def test_block_size_never_changes_the_result(data: bytes, block_bytes: int) -> None:
    whole, whole_report = read(data)
    parts, parts_report = read(data, block_bytes=block_bytes)
    if isinstance(whole, ActorProfError):
        assert isinstance(parts, TraceFormatError) and isinstance(whole, TraceFormatError)
        assert str(parts).replace(str(parts.path), "") == str(whole).replace(str(whole.path), "")
        return
    assert isinstance(parts, pd.DataFrame)
    pd.testing.assert_frame_equal(whole, parts)
    a, b = whole_report.files[0], parts_report.files[0]
    assert (a.lines_read, a.lines_blank, a.skipped) == (b.lines_read, b.lines_blank, b.skipped)

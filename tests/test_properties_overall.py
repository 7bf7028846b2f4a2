"""Property tests of the overall.txt reader: any bytes read with conserved counts, or our error.

Every line of the file is read (a profile line), blank, or skipped under a
reason; the frame holds exactly the profile lines read; an error is always
actorprof's own, naming the file (and the line when one line is to blame).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from actorprof import ActorProfError, ReadReport, TraceFormatError, read_overall
from actorprof.read.overall import BAD_PE_TAG, CUT_LINE, PE_BEYOND

from .conftest import number_of_lines

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def read(data: bytes, num_pes: int | None = None) -> None:
    """Read ``data`` as overall.txt and check what must hold whatever the bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "overall.txt"
        path.write_bytes(data)
        report = ReadReport()
        try:
            frame = read_overall(path, num_pes=num_pes, report=report)
        except ActorProfError as exc:
            assert isinstance(exc, TraceFormatError), exc
            assert exc.path == str(path) and str(exc).startswith(str(path))
            if "--num-pes" in str(exc):
                assert exc.line is not None and str(exc).startswith(f"{path}:{exc.line}: ")
            (f,) = report.files
            assert f.lines_total <= number_of_lines(data)
            return
    (f,) = report.files
    assert f.lines_read + f.lines_blank + f.lines_skipped == number_of_lines(data)
    assert f.lines_read > 0 and f.bytes_read == len(data)
    assert int(frame["profile_lines"].sum()) == f.lines_read
    if num_pes is not None:
        assert (frame["pe"] < num_pes).all()
    assert len(f.examples) <= 12 and all(len(e.text) <= 123 for e in f.examples)


@SETTINGS
@given(st.binary(max_size=400))
@example(data=b"\xef\xbb\xbf")  # a byte-order mark alone: no line
def test_any_bytes(data: bytes) -> None:
    read(data)


NAMES = [
    "T_inside_finish (start - done): {a} cycles",
    "T_wait (done - finish): {a} cycles",
    "T_outside_finish (start - finish): {a}",
    "T_sends (count={a}): {b} cycles",
    "T_send_in_process (count={a}):{b}cycles",
    "T_process ( count = {a} ) : {b} cycles",
    "T_TOTAL would be much bigger/smaller than T_finish",
    "TCOMM_PROFILING (T_MAIN, T_COMM, T_PROC, T_TOTAL), {a}, {b}, {a}, {b}",
    "TCOMM_PROFILING (T_MAIN/T_TOTAL, T_COMM/T_TOTAL, T_PROC/T_TOTAL), {f}, {f}, {f}",
    "TCOMM_PROFILING (T_MAIN, T_COMM), {a}",
    "T_sends (count=x): {a} cycles",
]
NUMBERS = st.one_of(
    st.integers(-(10**3), 10**12),
    st.sampled_from([2**63 - 1, 2**63, -(2**63) - 1, 10**30]),
)
FRACTIONS = st.sampled_from(["0.500000", "1e999", "-0.1", "nan", ".5", "1."])
PROFILE_LINE = st.builds(
    lambda label, pe, body, a, b, f: f"{label}[PE{pe}] " + body.format(a=a, b=b, f=f),
    st.sampled_from(["", "histo ", "Run 0 ", "phase [1] ", " x"]),
    st.integers(0, 9),
    st.sampled_from(NAMES),
    NUMBERS,
    NUMBERS,
    FRACTIONS,
)
OTHER_LINE = st.one_of(
    st.sampled_from(["Running histo on 4 PEs", "[PE1] hello", "", "   ", "\x00" * 8, "\ufffd"]),
    st.text(max_size=30).map(lambda s: s.replace("\n", " ")),
)


@st.composite
def profiles(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.one_of(PROFILE_LINE, PROFILE_LINE, OTHER_LINE), max_size=30))
    ends = [draw(st.sampled_from(["\n", "\r\n"])) for _ in lines]
    text = "".join(line + end for line, end in zip(lines, ends))
    cut = draw(st.integers(0, len(text)))  # a killed job cuts anywhere
    data = text.encode("utf-8", "surrogatepass")
    return data[: len(text[:cut].encode("utf-8", "surrogatepass"))]


@SETTINGS
@given(profiles(), st.one_of(st.none(), st.integers(1, 10)))
def test_profile_like_text(data: bytes, num_pes: int | None) -> None:
    read(data, num_pes)


#: Tag text after ``[PE``: anything but brackets, line ends, NUL and escapes
#: (those have reasons of their own).
TAGS = st.text(st.characters(exclude_characters="[]\n\r\x00\x1b", exclude_categories=["Cs"]))


@SETTINGS
@given(TAGS, st.sampled_from(NAMES[:9]), st.booleans())
def test_a_profile_line_is_never_program_output_whatever_its_pe_tag(
    tag: str, body: str, ended: bool
) -> None:
    """``[PE<tag>]`` before a whole profile body: the line is read (``<tag>``
    ASCII digits), or skipped under a reason that names it, never program output."""
    line = f"h [PE{tag}] " + body.format(a=5, b=7, f="0.500000")
    data = f"h [PE0] T_wait (done - finish): 1 cycles\n{line}".encode() + b"\n" * ended
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "overall.txt"
        path.write_bytes(data)
        report = ReadReport()
        read_overall(path, report=report)
    (f,) = report.files
    assert "program output" not in f.skipped
    if re.fullmatch("[0-9]+", tag):
        assert f.lines_read == 2 or f.skipped.keys() <= {PE_BEYOND, CUT_LINE}
    else:
        assert f.skipped == {BAD_PE_TAG: 1}
        assert f"{path}:2: malformed profile line (PE tag " in report.warnings[0]

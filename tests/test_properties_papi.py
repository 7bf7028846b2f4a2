"""Property tests of the PAPI reader: any bytes read with conserved counts, or our error.

(tests/test_papi.py has a property on text rows; this one feeds raw bytes and
checks the line accounting of every file.)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from actorprof import ActorProfError, ReadReport, TraceFormatError, read_papi

from .conftest import number_of_lines

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def read(files: list[bytes], num_pes: int | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / f"PE{pe}_PAPI.csv" for pe in range(len(files))]
        for path, data in zip(paths, files):
            path.write_bytes(data)
        report = ReadReport()
        try:
            frame = read_papi(tmp, num_pes=num_pes, report=report)
        except ActorProfError as exc:
            assert isinstance(exc, TraceFormatError), exc
            assert exc.path in {str(p) for p in paths}
            assert str(exc).startswith(exc.path)
            if exc.line is not None:
                assert str(exc).startswith(f"{exc.path}:{exc.line}: ")
            if "--num-pes" in str(exc) and "file of PE" not in str(exc):
                assert exc.line is not None
            return
    assert [f.path for f in report.files] == [str(p) for p in paths]
    for f, data in zip(report.files, files):
        assert f.lines_read + f.lines_blank + f.lines_skipped == number_of_lines(data)
        assert f.bytes_read == len(data)
    assert report.lines_read == len(frame)
    assert 9 <= len(frame.columns) <= 12 and frame.columns[-1] == "time_s"


@SETTINGS
@given(st.lists(st.binary(max_size=200), min_size=1, max_size=3))
@example(files=[b"\xef\xbb\xbf"])  # a byte-order mark alone: no line
def test_any_bytes(files: list[bytes]) -> None:
    read(files)


FIELD = st.one_of(
    st.integers(-2, 20).map(str),
    st.sampled_from(["1700000001.000001", "2.5", "x", "", "\x00", str(2**63), str(2**31), "nan"]),
)
LINE = st.lists(FIELD, min_size=0, max_size=13).map(", ".join)


@st.composite
def papi_files(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(LINE, max_size=12))
    ends = [draw(st.sampled_from(["\n", "\r\n"])) for _ in lines]
    data = "".join(line + end for line, end in zip(lines, ends)).encode()
    return data[: draw(st.integers(0, len(data)))]  # a killed job cuts anywhere


@SETTINGS
@given(st.lists(papi_files(), min_size=1, max_size=3), st.one_of(st.none(), st.integers(1, 4)))
def test_papi_like_text(files: list[bytes], num_pes: int | None) -> None:
    read(files, num_pes)

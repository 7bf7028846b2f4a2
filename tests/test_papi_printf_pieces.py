"""printf_columns against the line-by-line parser, on blocks cut into many pieces.

A block is converted a piece at a time (``PIECE_BYTES``), every piece but
the first a view of the block itself (the first a copy after zero bytes):
the 8-byte words read before a piece's first fields hold the previous
piece's text, which must never leak into a value. Pieces of a few lines
make every line a piece's first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actorprof.read import _printf
from actorprof.read._report import FileReport
from actorprof.read._scan import _exact
from actorprof.read.papi import papi_spec

SPEC = papi_spec(("PAPI_TOT_INS", "PAPI_LST_INS"))
KEEP = ("src_pe", "dst_pe", "mailbox", "num_sends", "PAPI_TOT_INS", "PAPI_LST_INS")
SMALL = st.integers(0, 99)
BIG = st.integers(0, 10**16 - 1)  # up to 16 digits: two words
PE = st.integers(0, 2**31 - 1)


@st.composite
def printf_lines(draw: st.DrawFn) -> bytes:
    mailbox = draw(st.sampled_from([-1, 0, 1, 12, -7, 2**31 - 1]))
    fields = [
        draw(SMALL | PE),  # src_node
        draw(SMALL | PE),  # src_pe
        draw(SMALL | PE),  # dst_node
        draw(SMALL | PE),  # dst_pe
        draw(SMALL | BIG),  # msg_bytes
        mailbox,
        draw(SMALL | BIG),  # num_sends
        draw(SMALL | BIG),
        draw(SMALL | BIG),
    ]
    whole = draw(st.integers(0, 10**9))
    decimals = draw(st.integers(0, 999_999))
    return b", ".join(b"%d" % f for f in fields) + b", %d.%06d\n" % (whole, decimals)


def reference(block: bytes) -> pd.DataFrame:
    report = FileReport("x")
    frame, _ = _exact(block, 1, SPEC, report)
    assert report.lines_skipped == 0
    return frame


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(printf_lines(), min_size=1, max_size=30), st.integers(1, 200))
def test_pieces_read_as_the_reference(lines: list[bytes], piece: int) -> None:
    block = b"".join(lines)
    want = reference(block)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_printf, "PIECE_BYTES", piece)
        got = _printf.printf_columns(block, SPEC)
        kept = _printf.printf_columns(block, SPEC, KEEP)
    assert got is not None and kept is not None
    pd.testing.assert_frame_equal(pd.DataFrame(got), want, check_exact=True)
    pd.testing.assert_frame_equal(pd.DataFrame(kept), want[list(KEEP)], check_exact=True)


def test_long_fields_after_a_piece_of_other_digits() -> None:
    """Hand-made: a piece's first field of 10 digits after a line of nines."""
    first = b"9, 9, 9, 9, 9999999999999999, 9, 9999999999999999, 9, 9, 99.999999\n"
    second = b"2147483647, 7, 0, 3, 5, -1, 1000000000000001, 42, 8, 1.500000\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_printf, "PIECE_BYTES", len(first))
        got = _printf.printf_columns(first + second, SPEC)
    assert got is not None
    assert got["src_node"].tolist() == [9, 2147483647]
    assert got["mailbox"].tolist() == [9, -1]
    assert got["num_sends"].tolist() == [9999999999999999, 1000000000000001]
    np.testing.assert_array_equal(got["time_s"], [99.999999, 1.5])

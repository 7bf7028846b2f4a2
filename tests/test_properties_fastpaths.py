"""Differential properties: every fast path reads exactly what the exact path reads.

Blocks are built from trace-like pieces plus the forms that once slipped
through the pandas C engine (``1e3``, ``2.0``, ``2.``, ``.0``, ``2e0``, a
UTF-8 BOM, 4294967297, int64 overflow, CRLF, tabs, blank lines). For each
block, the pandas fast path (when it accepts the block) and the numpy
tokenizer (when it accepts) must give the frame, the line numbers and the
line accounting of the line-by-line parser.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actorprof.read._fastscan import KeyTable, tokenize_block
from actorprof.read._report import FileReport
from actorprof.read._scan import _exact, _fast, parse_block
from actorprof.read.logical import LOGICAL_SPEC
from actorprof.read.papi import papi_spec

PAPI_SPEC = papi_spec(("PAPI_TOT_INS", "PAPI_LST_INS"))
SPECS = {"logical": LOGICAL_SPEC, "papi": PAPI_SPEC}

NUMBERS = st.sampled_from(
    [
        b"0",
        b"1",
        b"7",
        b"16",
        b"+3",
        b"-1",
        b"-0",
        b"007",
        b"2147483647",
        b"2147483648",
        b"4294967296",
        b"4294967297",
        b"9223372036854775807",
        b"9223372036854775808",
        b"18446744073709551617",
        b"123456789012345678",
        b"1e3",
        b"2e0",
        b"2.0",
        b"2.",
        b".0",
        b".",
        b"+",
        b"-",
        b"",
        b"1.5",
        b"1 2",
        b"\xef\xbb\xbf0",
        b"\x00",
        b"nan",
        b"1795245597.031595",
        b"+.5",
        b"-1.25",
        b"1.2.3",
        b"1e999",
        b"0x1",
    ]
)
TIMES = st.one_of(
    NUMBERS,
    st.builds(
        lambda a, b: b"%d.%06d" % (a, b),
        st.integers(0, 2**34),
        st.integers(0, 999_999),
    ),
)
BLANKS = st.sampled_from([b"", b"", b" ", b"  ", b"\t", b" \t", b"\r"])
ENDS = st.sampled_from([b"\n", b"\n", b"\r\n", b" \n", b"\t\r\n"])


@st.composite
def lines(draw: st.DrawFn, n_fields: int) -> bytes:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from([b"", b"  ", b"\t", b"\r", b"# header", b"\xef\xbb\xbf"]))
    count = draw(st.sampled_from([n_fields, n_fields, n_fields, n_fields - 1, n_fields + 1]))
    fields = [draw(st.sampled_from([b"0", b"1", b"3", b"16"]) | NUMBERS) for _ in range(count - 1)]
    fields.append(draw(TIMES))
    out = b""
    for i, field in enumerate(fields):
        if i:
            out += draw(BLANKS) + b"," + draw(st.sampled_from([b" ", b" ", b"", b"\t", b"  "]))
        out += field
    return draw(BLANKS) + out


@st.composite
def blocks(draw: st.DrawFn, n_fields: int) -> bytes:
    body = draw(st.lists(lines(n_fields), min_size=1, max_size=12))
    return b"".join(line + draw(ENDS) for line in body)


@st.composite
def canonical_blocks(draw: st.DrawFn, n_fields: int) -> bytes:
    """printf lines with at most one odd field, so the fast paths accept many."""
    good = st.sampled_from([b"0", b"1", b"3", b"16", b"1024"])
    seconds = draw(
        st.sampled_from([st.integers(1_700_000_000, 1_700_000_100), st.integers(0, 2**34)])
    )
    time = st.builds(lambda a, b: b"%d.%06d" % (a, b), seconds, st.integers(0, 10**6 - 1))
    n_lines = draw(st.integers(1, 12))
    rows = [[*(draw(good) for _ in range(n_fields - 1)), draw(time)] for _ in range(n_lines)]
    if draw(st.booleans()):
        row = draw(st.integers(0, n_lines - 1))
        rows[row][draw(st.integers(0, n_fields - 1))] = draw(NUMBERS)
    if draw(st.integers(0, 3)) == 0:
        rows[draw(st.integers(0, n_lines - 1))].pop()  # a 5-field (untimed) line
    sep = draw(st.sampled_from([b", ", b", ", b",", b" , ", b",\t"]))
    end = draw(ENDS)
    out = b"".join(sep.join(row) + end for row in rows)
    if draw(st.integers(0, 3)) == 0:
        out = out.replace(end, end + b"\n", 1)  # a blank line
    return out


def exact(block: bytes, spec_name: str, first_line: int = 1) -> tuple[object, ...]:
    report = FileReport("x")
    frame, line_numbers = _exact(block, first_line, SPECS[spec_name], report)
    return frame, line_numbers, report


def assert_same_frame(got: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True
    )


def check_pandas_path(block: bytes, spec_name: str) -> None:
    spec = SPECS[spec_name]
    want, want_lines, want_report = exact(block, spec_name, 5)
    fast = _fast(block, spec)
    if fast is not None:
        frame, compact = fast
        assert want_report.lines_skipped == 0, want_report.skipped  # type: ignore[attr-defined]
        assert_same_frame(frame, want)  # type: ignore[arg-type]
        kept = np.arange(compact.n_lines) if compact.kept is None else compact.kept
        np.testing.assert_array_equal(5 + kept, want_lines)  # type: ignore[arg-type]
        assert compact.blank == want_report.lines_blank  # type: ignore[attr-defined]
    # and through the public entry point, whichever path it takes
    report = FileReport("x")
    frame, line_numbers = parse_block(block, 5, spec, report)
    assert_same_frame(frame, want)  # type: ignore[arg-type]
    numbers = 5 + np.arange(len(frame)) if line_numbers is None else line_numbers
    np.testing.assert_array_equal(numbers, want_lines)  # type: ignore[arg-type]
    assert (report.lines_read, report.lines_blank, report.skipped) == (
        want_report.lines_read,  # type: ignore[attr-defined]
        want_report.lines_blank,  # type: ignore[attr-defined]
        want_report.skipped,  # type: ignore[attr-defined]
    )


def check_tokenizer(block: bytes) -> None:
    spec = LOGICAL_SPEC
    table = KeyTable(5, tuple(spec.limit(c) for c in spec.columns[:-1]))
    fast = tokenize_block(block, table, time_optional=True, has_time_column=True)
    if fast is None:
        return
    want, want_lines, want_report = exact(block, "logical")
    assert want_report.lines_skipped == 0 and want_report.lines_blank == 0  # type: ignore[attr-defined]
    values = table.values[fast.key_ids]
    frame = pd.DataFrame(
        {name: values[:, i].astype(spec.dtypes[name]) for i, name in enumerate(spec.columns[:-1])}
    )
    frame["time_s"] = (
        np.full(len(values), np.nan) if fast.micros is None else fast.micros / 1_000_000
    )
    assert_same_frame(frame, want)  # type: ignore[arg-type]
    np.testing.assert_array_equal(1 + np.arange(len(frame)), want_lines)  # type: ignore[arg-type]
    check_time_range(block, fast.micros)


def check_time_range(block: bytes, micros: np.ndarray | None) -> None:
    """The range alone (``all_times=False``: what ``actorprof logical`` asks
    for) is the smallest and largest of every line's time, when the route
    takes the block; it may only decline a 17-character time whose first
    digit differs from line to line."""
    spec = LOGICAL_SPEC
    table = KeyTable(5, tuple(spec.limit(c) for c in spec.columns[:-1]))
    alone = tokenize_block(block, table, time_optional=True, has_time_column=True, all_times=False)
    if alone is None:
        firsts = {line.rsplit(b", ", 1)[-1][:1] for line in block.splitlines()}
        assert micros is not None and micros.max() >= 10**15 and len(firsts) > 1
        return
    assert alone.micros is None
    want = None if micros is None else (int(micros.min()), int(micros.max()))
    assert alone.time_range == want


SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(st.one_of(blocks(6), canonical_blocks(6)))
def test_logical_pandas_path_equals_exact_path(block: bytes) -> None:
    check_pandas_path(block, "logical")


@SETTINGS
@given(st.one_of(blocks(10), canonical_blocks(10)))
def test_papi_pandas_path_equals_exact_path(block: bytes) -> None:
    check_pandas_path(block, "papi")


@SETTINGS
@given(st.one_of(canonical_blocks(6), blocks(6)))
def test_tokenizer_equals_exact_path(block: bytes) -> None:
    check_tokenizer(block)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200).map(lambda b: b + b"\n"))
def test_any_bytes_same_on_every_path(block: bytes) -> None:
    check_pandas_path(block, "logical")
    check_tokenizer(block)


# The forms of issue 12 item 1: each is skipped on every path, whatever the
# lines around it (a clean neighbour used to send the block to pandas).
CLEAN = b"0, 1, 0, 2, 8, 1795245597.031595\n"


@pytest.mark.parametrize(
    "bad",
    [
        b"0, 0, 0, 1e3, 8, 1795245597.031595\n",
        b"0, 0, 0, 2.0, 8, 1795245597.031595\n",
        b"0, 0, 0, 2., 8, 1795245597.031595\n",
        b"0, 0, 0, .0, 8, 1795245597.031595\n",
        b"0, 0, 0, 2e0, 8, 1795245597.031595\n",
        b"\xef\xbb\xbf0, 0, 0, 2, 8, 1795245597.031595\n",
        b"0, 0, 0, 4294967297, 8, 1795245597.031595\n",
        b"0, 0, 0, 9223372036854775808, 8, 1795245597.031595\n",
    ],
)
def test_non_grammar_forms_are_skipped_on_every_path(bad: bytes) -> None:
    for block in (CLEAN * 3 + bad, CLEAN + b"\n" + bad, bad, bad.replace(b"\n", b"\r\n")):
        report = FileReport("x")
        frame, _ = parse_block(block, 1, LOGICAL_SPEC, report)
        assert report.lines_skipped == 1, (block, report.skipped)
        assert (frame["dst_pe"] < 1000).all()
        table = KeyTable(5, tuple(LOGICAL_SPEC.limit(c) for c in LOGICAL_SPEC.columns[:-1]))
        assert tokenize_block(block, table, time_optional=True, has_time_column=True) is None


def shared_first_characters(digits: int) -> list[np.ndarray]:
    """Seconds of ``digits`` digits for blocks of lines: within one ten (all
    but the last 8 characters of the time the same), across any span (a
    carry into the first 8 characters, or into the first of 17), and
    differing only in their first and last digits."""
    rng = np.random.default_rng(digits)
    low, high = 10 ** (digits - 1), min(10**digits, 2**53 // 10**6)  # exact microseconds
    out = []
    for span in {min(s, high - low - 1) for s in (9, 10**6, 10**digits)}:
        for _ in range(20):
            base = int(rng.integers(low, high - span))
            base -= base % 10 if span == 9 and base >= 10 else 0
            out.append(rng.integers(base, base + span + 1, size=int(rng.integers(1, 60))))
    if digits > 1:
        for _ in range(10):
            top = rng.integers(1, 9, size=int(rng.integers(2, 20)))
            out.append(top * low + rng.integers(0, 10, size=top.size))
    return out


@pytest.mark.parametrize("digits", [1, 2, 8, 9, 10])
def test_times_of_blocks_that_share_their_first_characters(digits: int) -> None:
    """Every time, and the range alone, equal the seconds written."""
    rng = np.random.default_rng(0)
    for seconds in shared_first_characters(digits):
        fracs = rng.integers(0, 10**6, size=seconds.size)
        block = b"".join(
            b"0, 3, 1, %d, 16, %d.%06d\n" % (i % 7, a, b)
            for i, (a, b) in enumerate(zip(seconds.tolist(), fracs.tolist(), strict=True))
        )
        micros = seconds * 10**6 + fracs
        table = KeyTable(5, tuple(LOGICAL_SPEC.limit(c) for c in LOGICAL_SPEC.columns[:-1]))
        every = tokenize_block(block, table, time_optional=True, has_time_column=True)
        assert every is not None and every.micros is not None
        np.testing.assert_array_equal(every.micros, micros)
        check_time_range(block, micros)


def test_papi_main_line_with_exponent_is_skipped() -> None:
    good = b"0, 5, 0, 0, 16, 0, 0, 122, 48, 1718051234.000035\n"
    main = b"0, 0, 0, 0, 0, -1, 1e9, 91234567, 30411522, 1718051236.500000\n"
    report = FileReport("x")
    frame, _ = parse_block(good * 4 + main, 1, PAPI_SPEC, report)
    assert report.skipped == {"not a number in num_sends": 1}
    assert (frame["num_sends"] < 10**9).all()


def test_wrapping_dst_pe_is_too_large_on_the_fast_path() -> None:
    """pandas < 3 wraps 4294967297 to 1 in an int32 column: never cast."""
    block = CLEAN * 3 + b"0, 0, 0, 4294967297, 8, 1795245597.031595\n"
    report = FileReport("x")
    frame, _ = parse_block(block, 1, LOGICAL_SPEC, report)
    assert report.skipped == {"number too large for dst_pe (int32)": 1}
    assert frame["dst_pe"].tolist() == [2, 2, 2]


def test_variations_take_the_fast_paths() -> None:
    """CRLF, trailing blanks, tabs and blank lines no longer force the slow path."""
    clean = CLEAN * 50
    for block in (
        clean.replace(b"\n", b"\r\n"),
        clean.replace(b"\n", b"  \n"),
        clean.replace(b", ", b",\t"),
        clean.replace(b", ", b","),
    ):
        table = KeyTable(5, tuple(LOGICAL_SPEC.limit(c) for c in LOGICAL_SPEC.columns[:-1]))
        assert tokenize_block(block, table, time_optional=True, has_time_column=True) is not None
        assert _fast(block, LOGICAL_SPEC) is not None
    blank = clean.replace(CLEAN * 10, CLEAN * 10 + b"\n")
    fast = _fast(blank, LOGICAL_SPEC)
    assert fast is not None and fast[1].blank == 5


KEY_PIECES = st.sampled_from(
    [
        b"0",
        b"7",
        b"16",
        b"65535",
        b"1048575",
        b"1048576",
        b"0" * 17 + b"1",
        b"4294967296",
        b"4294967297",
        b"2147483647",
        b"2147483648",
        b"9" * 18,
        b"1 2",
        b"1,2",
        b" 1",
        b"1 ",
        b"",
    ]
)
SEPARATOR_PIECES = st.sampled_from(
    [b", ", b",", b" ", b"  ", b",,", b", , ", b"x", b"-", b"9" * 18]
)


def reference_key(key: bytes, limits: tuple[int, ...]) -> list[int] | None:
    """The key grammar, in plain Python: ``[0-9]+(, [0-9]+)*`` with one field
    per limit, each at most 17 digits and at most its limit."""
    import re

    if re.fullmatch(rb"[0-9]+(, [0-9]+)*", key) is None:
        return None
    fields = key.split(b", ")
    if len(fields) != len(limits) or any(len(f) > 17 for f in fields):
        return None
    values = [int(f) for f in fields]
    return None if any(v > lim for v, lim in zip(values, limits, strict=True)) else values


LIMITS = tuple(LOGICAL_SPEC.limit(c) for c in LOGICAL_SPEC.columns[:-1])
FIELD_VALUES = st.one_of(st.integers(0, 9), st.integers(0, 2**21))


def one_separator_replaced(case: tuple[list[int], int, bytes]) -> bytes:
    values, at, piece = case
    fields = [str(v).encode() for v in values]
    return b", ".join(fields[: at + 1]) + piece + b", ".join(fields[at + 1 :])


def one_field_replaced(case: tuple[list[int], int, bytes]) -> bytes:
    values, at, piece = case
    fields = [str(v).encode() for v in values]
    fields[at] = piece
    return b", ".join(fields)


CANONICAL_KEYS = st.lists(FIELD_VALUES, min_size=5, max_size=5).map(
    lambda v: ", ".join(map(str, v)).encode()
)
ODD_KEYS = st.one_of(
    st.lists(st.one_of(KEY_PIECES, SEPARATOR_PIECES), min_size=1, max_size=12).map(b"".join),
    # a canonical key with one separator replaced by a piece
    st.tuples(
        st.lists(FIELD_VALUES, min_size=5, max_size=5),
        st.integers(0, 3),
        st.one_of(KEY_PIECES, SEPARATOR_PIECES),
    ).map(one_separator_replaced),
    st.tuples(
        st.lists(FIELD_VALUES, min_size=5, max_size=5),
        st.integers(0, 4),
        KEY_PIECES,
    ).map(one_field_replaced),
)


@SETTINGS
@given(
    st.lists(CANONICAL_KEYS, max_size=7),
    st.lists(ODD_KEYS, max_size=1),
    st.randoms(use_true_random=False),
)
def test_key_parser_reads_the_grammar_exactly(
    canonical: list[bytes], odd: list[bytes], rng: Any
) -> None:
    """The vectorised key parser gives every key's fields, or None when any
    key of the block is not a canonical key within the limits."""
    keys = canonical + odd
    rng.shuffle(keys)
    check_key_parser(keys)


@pytest.mark.parametrize(
    "key",
    [
        b"1, 2, 3, 4, " + b"0" * 17 + b"1",  # 18 digits: the exact parser decides
        b"0" * 17 + b"1, 2, 3, 4, 5",
        b"1, 2, 3, 4, 4294967297",
        b"2147483648, 2, 3, 4, 5",
        b"1 2, 3, 4, 5, 6",
        b"1,2, 3, 4, 5",
        b"1, 2, 3, 4, 5, ",
        b", 1, 2, 3, 4, 5",
        b"1, 2, 3, 4",
        b"1, 2, 3, 4, 5, 6",
        b"1, 2, 3, 4, 5 ",  # a space after the last digit
        b" 1, 2, 3, 4, 5",
        b"1,  2, 3, 4, 5",
        b"1, 2, 3, 4, 5,",
        b"1, 2, 3, 4,, 5",
        b"1, 2, 3, 4, 5\x00",
        b"1, 2, 3, 4,",  # 5 fields, the last empty
        b"1, 2, 3, 4, ",
    ],
)
def test_key_parser_refuses(key: bytes) -> None:
    check_key_parser([b"1, 2, 3, 4, 5", key])
    assert reference_key(key, LIMITS) is None


def check_key_parser(keys: list[bytes]) -> None:
    from actorprof.read._fastscan import _PAD, BlockBuffer

    keys = [k[:32] for k in keys if k]
    if not keys:
        return
    table = KeyTable(5, LIMITS)
    text = b"".join(k + b"\n" for k in keys)
    buf = BlockBuffer().load(text)
    starts = np.r_[0, np.cumsum([len(k) + 1 for k in keys])[:-1]].astype(np.int64) + _PAD
    got = table._parse_many(buf, starts, np.array([len(k) for k in keys], dtype=np.int64))
    want = [reference_key(k, LIMITS) for k in keys]
    if any(w is None for w in want):
        assert got is None
    else:
        assert got is not None
        np.testing.assert_array_equal(got, np.array(want, dtype=np.int64))

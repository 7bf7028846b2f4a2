"""The physical.txt reader against a line-by-line pure-Python reference.

The reader parses printf's own lines with numpy a block at a time and every
other line with ``re``; the reference below reads each line on its own,
straight from the grammar in the module docstring. Both must agree on the
frame and on every count, whatever the mix of lines and the block size.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actorprof import ActorProfError, ReadReport, iter_physical
from actorprof.read.physical import BROKEN_LINE, PROGRAM_OUTPUT, SEND_TYPE_DTYPE
from actorprof.read.physical import NUL_BYTES as NUL
from actorprof.schema import MAX_MSG_BYTES, SEND_TYPES

_SEP = r"(?:[ \t]*,[ \t]*|[ \t]+)"
_GRAMMAR = re.compile(
    rf"[ \t]*({'|'.join(SEND_TYPES)})(?:[ \t]*[:,][ \t]*|[ \t]+)"
    rf"(-?[0-9]+){_SEP}(-?[0-9]+){_SEP}(-?[0-9]+)(?:{_SEP}.*)?[ \t]*\r?"
)
_LOOKS_LIKE = re.compile(rf"[ \t]*(?:{'|'.join(SEND_TYPES)})(?:[^A-Za-z0-9_]|$)")
_LIMITS = (
    ("buffer_bytes", 18, MAX_MSG_BYTES),
    ("src_pe", 10, 2**31 - 1),
    ("dst_pe", 10, 2**31 - 1),
)


def reference(data: bytes) -> tuple[list[tuple[str, int, int, int]], int, dict[str, int]]:
    """Rows read, blank lines and skipped lines per reason, one line at a time."""
    rows: list[tuple[str, int, int, int]] = []
    blank = 0
    skipped: dict[str, int] = {}
    pieces = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    for k, raw in enumerate(pieces):
        last = k == len(pieces) - 1
        if last and not raw:
            break
        text = raw.decode("utf-8", "replace")
        if not text.strip(" \t\r\f\v"):
            blank += 1
            continue
        if last and _LOOKS_LIKE.match(text):
            reason = "last line cut (no line end; the job was probably killed)"
        elif (m := _GRAMMAR.fullmatch(text)) is not None:
            reason = ""
            numbers = []
            for (name, digits, limit), number in zip(_LIMITS, m.groups()[1:]):
                value = int(number)
                if len(number) > digits or value > limit:
                    reason = f"number too large for {name}"
                elif value < 0:
                    reason = f"negative value in {name}"
                if reason:
                    break
                numbers.append(value)
            if not reason:
                rows.append((m.group(1), numbers[0], numbers[1], numbers[2]))
                continue
        elif _LOOKS_LIKE.match(text):
            reason = BROKEN_LINE
        elif "\0" in text:
            reason = NUL
        else:
            reason = PROGRAM_OUTPUT
        skipped[reason] = skipped.get(reason, 0) + 1
    stray = stray_limit(rows)
    if stray is not None:
        limit, reason = stray
        far = [r for r in rows if max(r[2], r[3]) >= limit]
        rows = [r for r in rows if max(r[2], r[3]) < limit]
        skipped[reason] = len(far)
    return rows, blank, skipped


def stray_limit(rows: list[tuple[str, int, int, int]]) -> tuple[int, str] | None:
    """The rule of docs/physical.md, one gap at a time: the first id at least
    max(64, 2 x (the id before + 1)) with fewer distinct ids, or fewer line
    mentions, above than below; and no id from 2^20 on."""
    ids = sorted({pe for row in rows for pe in row[2:]})
    mentions: dict[int, int] = {}
    for _, _, src, dst in rows:
        for pe in {src, dst}:
            mentions[pe] = mentions.get(pe, 0) + 1
    kept = len(ids)
    for j in range(1, len(ids)):
        bound = max(64, 2 * (ids[j - 1] + 1))
        above = sum(mentions[pe] for pe in ids[j:])
        if ids[j] >= bound and (len(ids) - j < j or above < sum(mentions[pe] for pe in ids[:j])):
            kept = j
            break
    if ids and ids[kept - 1] >= 2**20:
        reason = "PE id beyond 1,048,575 (pass --num-pes N if the run really had more PEs)"
        return 2**20, reason
    if kept == len(ids):
        return None
    bound = max(64, 2 * (ids[kept - 1] + 1))
    return bound, (
        f"PE id far beyond the other PE ids, {ids[0]}-{ids[kept - 1]} (ids from "
        f"{bound:,} on; pass --num-pes N if the run really had more PEs)"
    )


def read(data: bytes, block_bytes: int) -> tuple[pd.DataFrame | None, ReadReport]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "physical.txt"
        path.write_bytes(data)
        report = ReadReport()
        try:
            frames = list(iter_physical(path, report=report, block_bytes=block_bytes))
        except ActorProfError:
            return None, report
    return pd.concat(frames, ignore_index=True), report


def check(data: bytes, block_bytes: int) -> None:
    rows, blank, skipped = reference(data)
    frame, report = read(data, block_bytes)
    (f,) = report.files
    assert (f.lines_blank, f.skipped) == (blank, skipped)
    if frame is None:
        assert not rows
        return
    expected = pd.DataFrame(rows, columns=list(frame.columns))
    expected["send_type"] = expected["send_type"].astype(SEND_TYPE_DTYPE)
    expected = expected.astype({"buffer_bytes": np.int64, "src_pe": np.int32, "dst_pe": np.int32})
    pd.testing.assert_frame_equal(frame, expected)


NUMBER = st.one_of(
    st.integers(0, 99),
    st.integers(-3, 2**33),
    st.sampled_from([2**31 - 1, 2**31, 2**32, 2**32 + 1, 10**17, 10**18, 10**19]),
    st.text("0123456789", min_size=1, max_size=20),  # 19+ digits
    st.builds(lambda v, z: "0" * z + str(v), st.integers(0, 2**32), st.integers(1, 17)),
    st.just(""),
)
# printf's ", " mostly, sometimes another separator the grammar allows (or not)
PRINTF_SEP = st.sampled_from([", "] * 6 + [",", " ", ",  ", " , ", ",,", ";"])
PRINTF_LINE = st.builds(
    lambda t, s0, a, s1, b, s2, c, end: f"{t}{s0}{a}{s1}{b}{s2}{c}{end}",
    st.sampled_from([*SEND_TYPES, "local_sen", "nonblock_sends", "nonblock_progres"]),
    PRINTF_SEP,
    NUMBER,
    PRINTF_SEP,
    NUMBER,
    PRINTF_SEP,
    NUMBER,
    st.sampled_from(["", "", "", "\r", " ", ", 0.5", ",", "x", "\t", "\r\r", "\0"]),
)
OTHER_LINE = st.one_of(
    st.sampled_from(["", " ", "Running on 8 PEs", "local_send", "local_send: 8 0 1", "\0\0"]),
    st.builds(
        lambda t, s0, s: f"{t}{s0}1{s}2{s}3",
        st.sampled_from(SEND_TYPES),
        st.sampled_from([":", "\t, ", " : "]),
        st.sampled_from([" ", " , ", "\t"]),
    ),
    st.text(max_size=25).map(lambda s: s.replace("\n", "")),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(PRINTF_LINE, PRINTF_LINE, OTHER_LINE), max_size=40),
    st.booleans(),
    st.sampled_from([1, 16, 64, 1 << 20]),
)
def test_reader_agrees_with_line_by_line_reference(
    lines: list[str], cut: bool, block_bytes: int
) -> None:
    text = "\n".join(lines) + ("" if cut else "\n")
    check(text.encode("utf-8", "surrogatepass"), block_bytes)


def test_large_mixed_block_agrees_with_reference() -> None:
    """Thousands of lines in one block: the numpy route at full width."""
    rng = np.random.default_rng(7)
    n = 20_000
    kinds = rng.integers(0, 3, n)
    sizes = rng.choice([0, 7, 64, 10048, 2**32, 2**32 + 1, 10**12], n)
    pes = rng.choice([0, 1, 63, 4095, 2**31 - 1, 2**31, 123456789], (n, 2))
    lines = [f"{SEND_TYPES[k]}, {b}, {s}, {d}" for k, b, (s, d) in zip(kinds, sizes, pes.tolist())]
    for i in range(0, n, 97):
        lines[i] = f"[PE {i}] phase done"
    for i in range(5, n, 389):
        lines[i] = lines[i].replace(", ", " ") + "\r"
    for i in range(3, n, 53):  # one of printf's ", " becomes another separator
        fields = lines[i].split(", ")
        if len(fields) == 4:
            k = int(rng.integers(1, 4))
            fields[k - 1] += str(rng.choice([",", " ", ",  ", " ,", ",,"])) + fields.pop(k)
            lines[i] = ", ".join(fields)
    check(("\n".join(lines) + "\n").encode(), 1 << 22)


TRICKY = [
    "local_send, , 2, 3",
    "local_send, 1,22, 3",
    "local_send, 1, 22,3",
    "local_send, 1, 2, 3\r",
    "local_send, 1, 2, \r",
    "nonblock_progress, 0, 0, 0",
    "nonblock_progress, 0, 0, 0, 1",
    "local_send, 000000000000000064, 1, 2",
    "local_send, 0000000000000000064, 1, 2",
    "local_send, 4294967296, 1, 2",
    "local_send, 4294967297, 1, 2",
    "local_send, 1, 2147483647, 3",
    "local_send, 1, 2147483648, 3",
    "local_send, 1, 999999999, 0000000003",
    "local_send, -1, 2, 3",
    "local_send, 1, -0, 3",
    "local_sendx, 1, 2, 3",
    "nonblock_sen, 1, 2, 3",
    "nonblock_send,  1, 2, 3",
    "nonblock_send , 1, 2, 3",
    " local_send, 1, 2, 3",
    # printf's first ", " changed: the type's words decide (the longest type's
    # space after its comma lies in its third 8-byte word)
    "local_send,12, 2, 3",
    "nonblock_send,12, 2, 3",
    "nonblock_progress,12, 2, 3",
    "nonblock_progress,\t12, 2, 3",
    "nonblock_progress,  12, 2, 3",
    "nonblock_progress;12, 2, 3",
    # a type's length with another text: the words decide
    "local_sent, 1, 2, 3",
    "nonblock_sxnd, 1, 2, 3",
    "nonblock_progresz, 1, 2, 3",
    "xonblock_progress, 1, 2, 3",
    "12345678901234567, 1, 2, 3",
    "\0\0\0\0\0\0\0\0, 1, 2, 3",  # no type's length: never a type's (zero) words
]


def test_tricky_lines_agree_with_reference() -> None:
    for line in TRICKY:
        check(f"local_send, 8, 0, 1\n{line}\n".encode(), 1 << 20)

"""Line tokenizer of the physical trace: numpy for printf's lines, ``re`` for the rest.

The runtime writes every trace line with one printf, ``"%s, %d, %d, %d\\n"``,
so nearly every line of ``physical.txt`` is *canonical*::

    TYPE ", " DIGITS ", " DIGITS ", " DIGITS ["\\r"] "\\n"

Canonical lines are recognised and parsed for a whole block at once with a
few dozen numpy operations (no Python loop): the comma positions give the
fields, 8-byte words give their digits (SWAR arithmetic). Every other line
(program output, other separators, extra fields, numbers too long for the
fast path) is matched one by one against :data:`TRACE_LINE_GRAMMAR` with
:mod:`re`, once per distinct line. A canonical line has exactly one reading
under the grammar, so both routes give identical results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..schema import PHYSICAL_COLUMNS, SEND_TYPES

__all__ = ["BLANK_LINE", "LOOKS_LIKE_TRACE", "MAX_DIGITS", "TRACE_LINE_GRAMMAR", "Lines"]

I64 = NDArray[np.int64]
U64 = NDArray[np.uint64]
Bools = NDArray[np.bool_]

_BLANK = r"[ \t]"
_SEP = rf"(?:{_BLANK}*,{_BLANK}*|{_BLANK}+)"
_TYPES = "|".join(SEND_TYPES)
_NUMBER = r"-?[0-9]+"
#: The regular expression a trace line must match (the whole line, without
#: its line end). Any text may follow the fourth field after a separator.
TRACE_LINE_GRAMMAR = (
    rf"^{_BLANK}*(?P<send_type>{_TYPES})(?:{_BLANK}*[:,]{_BLANK}*|{_BLANK}+)"
    rf"(?P<buffer_bytes>{_NUMBER}){_SEP}(?P<src_pe>{_NUMBER}){_SEP}(?P<dst_pe>{_NUMBER})"
    rf"(?:{_SEP}.*)?{_BLANK}*\r?$"
)
#: A line "looks like" a trace line when its first field is a send type.
LOOKS_LIKE_TRACE = rf"^{_BLANK}*(?:{_TYPES})(?:[^A-Za-z0-9_]|$)"
BLANK_LINE = r"^[ \t\r\f\v]*$"
#: Longest digit strings that always fit: int64 (buffer_bytes), int32 (PE ids).
MAX_DIGITS = {"buffer_bytes": 18, "src_pe": 9, "dst_pe": 9}

_GRAMMAR_RE = re.compile(TRACE_LINE_GRAMMAR.encode())
# every line of a text: the grammar's four groups where it matches, else empty
_LINES_RE = re.compile(
    b"(?m)^(?:" + TRACE_LINE_GRAMMAR.encode().removeprefix(b"^").removesuffix(b"$") + b"|.*)$"
)
_TYPE_CODE = {t.encode(): np.int8(k) for k, t in enumerate(SEND_TYPES)}
_NUMBERS = PHYSICAL_COLUMNS[1:]
_PAD = 24  # zero bytes before and after a block: 8-byte loads stay inside
_TYPE_LEN = np.array([len(t) for t in SEND_TYPES], dtype=np.int64)
_ASCII0 = np.uint64(0x3030303030303030)
_LOW7 = np.uint64(0x7676767676767676)  # + byte: high bit set when the byte is > 9
_HIGH = np.uint64(0x8080808080808080)
_LOW4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_SCALES = (np.uint64(1), np.uint64(10**8), np.uint64(10**16))
_SH8, _SH16, _SH32 = np.uint64(8), np.uint64(16), np.uint64(32)
_M1, _M2, _M3 = np.uint64(2561), np.uint64(6553601), np.uint64(42949672960001)
_K1, _K2 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF)
#: _KEEP_HIGH[j]: keep the j highest bytes of a word (the last j characters).
_KEEP_HIGH = np.array(
    [(0xFFFFFFFFFFFFFFFF << (8 * (8 - j))) & 0xFFFFFFFFFFFFFFFF for j in range(9)], dtype=np.uint64
)


def _type_words() -> tuple[U64, U64, U64, U64]:
    """Each send type's text followed by ", ": its first and second 8-byte words, and masks."""
    texts = [t.encode() + b", " for t in SEND_TYPES]
    padded = [t.ljust(24, b"\0") for t in texts]
    first = np.array([int.from_bytes(p[:8], "little") for p in padded], dtype=np.uint64)
    second = np.array([int.from_bytes(p[8:16], "little") for p in padded], dtype=np.uint64)
    third = np.array([int.from_bytes(p[16:24], "little") for p in padded], dtype=np.uint64)
    mask3 = np.array(
        [(1 << (8 * max(len(t) - 16, 0))) - 1 for t in texts], dtype=np.uint64
    )  # ", " of the longest type spills into a third word
    mask2 = np.array([(1 << (8 * min(max(len(t) - 8, 0), 8))) - 1 for t in texts], dtype=np.uint64)
    return first, second & mask2, third & mask3, np.stack([mask2, mask3])


_TYPE_W0, _TYPE_W1, _TYPE_W2, _TYPE_MASKS = _type_words()


@dataclass
class Lines:
    """The lines of one block of whole lines, tokenized.

    ``matched`` says which lines match :data:`TRACE_LINE_GRAMMAR`; for those,
    ``codes`` holds the send type's index in :data:`SEND_TYPES`, ``values``
    each number (0 when its text is longer than :data:`MAX_DIGITS`) and
    ``too_long`` which texts were.
    """

    block: bytes
    starts: I64
    ends: I64
    matched: Bools
    codes: NDArray[np.int8]
    values: dict[str, I64]
    too_long: dict[str, Bools]

    def __len__(self) -> int:
        return len(self.starts)

    def raw(self, row: int) -> bytes:
        """Line ``row``'s bytes, without its line end."""
        return self.block[int(self.starts[row]) : int(self.ends[row])]

    def text(self, row: int) -> str:
        """Line ``row`` as text (undecodable bytes replaced), without ``\\r``."""
        return self.raw(row).decode("utf-8", "replace").rstrip("\r")

    @classmethod
    def of_block(cls, block: bytes, *, ended: bool = True) -> Lines:
        """Tokenize ``block``: whole lines, each ending with ``\\n`` when ``ended``.

        With ``ended=False`` the block is one line without a line end.
        """
        if not ended:
            starts = np.zeros(1, dtype=np.int64)
            ends = np.array([len(block)], dtype=np.int64)
            canonical = np.zeros(1, dtype=bool)
            lines = cls._empty(block, starts, ends)
        else:
            buf = np.zeros(len(block) + 2 * _PAD, dtype=np.uint8)
            buf[_PAD : _PAD + len(block)] = np.frombuffer(block, dtype=np.uint8)
            ends = np.flatnonzero(buf == 10)
            starts = np.empty_like(ends)
            starts[:1] = _PAD
            starts[1:] = ends[:-1] + 1
            lines = cls._empty(block, starts - _PAD, ends - _PAD)
            canonical = _canonical(buf, starts, ends, lines)
        lines._match_rest(np.flatnonzero(~canonical))
        return lines

    @classmethod
    def _empty(cls, block: bytes, starts: I64, ends: I64) -> Lines:
        n = len(starts)
        return cls(
            block,
            starts,
            ends,
            np.zeros(n, dtype=bool),
            np.zeros(n, dtype=np.int8),
            {name: np.zeros(n, dtype=np.int64) for name in _NUMBERS},
            {name: np.zeros(n, dtype=bool) for name in _NUMBERS},
        )

    def _match_rest(self, rows: I64) -> None:
        """Match the lines the fast route left against the grammar, all in one ``re`` call."""
        if not rows.size:
            return
        # one result per line, in order: the grammar's groups, or empty ones
        # (over the whole block when most lines are left: no slicing then)
        whole = 4 * rows.size > len(self)
        text = self.block if whole else b"\n".join(self.raw(row) for row in rows.tolist())
        found = _LINES_RE.findall(text)[: len(self) if whole else rows.size]
        if whole:
            found = [found[row] for row in rows.tolist()] if rows.size < len(self) else found
        if len(found) != rows.size:  # pragma: no cover - one match per line by construction
            found = [_one_line(self.raw(row)) for row in rows.tolist()]
        types = np.array([f[0] for f in found], dtype="S")
        matched = types != b""
        if not matched.any():
            return
        self.matched[rows] = matched
        codes = np.zeros(len(found), dtype=np.int8)
        for text, code in _TYPE_CODE.items():
            codes[types == text] = code
        self.codes[rows] = codes
        for k, name in enumerate(_NUMBERS, start=1):
            texts = np.array([f[k] for f in found], dtype="S")
            too_long = np.char.str_len(texts) > MAX_DIGITS[name]
            values = np.where(too_long | ~matched, b"0", texts).astype(np.int64)
            self.values[name][rows] = values
            self.too_long[name][rows] = too_long


def _one_line(raw: bytes) -> tuple[bytes, ...]:
    match = _GRAMMAR_RE.match(raw)
    return (b"",) * 4 if match is None else tuple(match.groups())


def _canonical(buf: NDArray[np.uint8], starts: I64, ends: I64, lines: Lines) -> Bools:
    """Find and parse the canonical lines (into ``lines``); True where a line is one."""
    if not len(starts):
        return np.zeros(0, dtype=bool)
    words = np.ndarray(shape=(len(buf) - 7,), dtype="<u8", buffer=buf.data, strides=(1,))
    # a "\r" before the line end is allowed (the grammar's "\r?$")
    ends = ends - (buf[ends - 1] == 13)
    # the type, from its first letter and its 10th: l(ocal_send), nonblock_(s|p)
    code = (buf[starts] != ord("l")) * (1 + (buf[starts + 9] == ord("p")))
    ok: Bools = np.asarray(words[starts] == _TYPE_W0[code], dtype=bool)
    ok &= (words[starts + 8] & _TYPE_MASKS[0][code]) == _TYPE_W1[code]
    ok &= (words[starts + 16] & _TYPE_MASKS[1][code]) == _TYPE_W2[code]
    # exactly two more ", " in the line, after the type's
    commas = np.flatnonzero(buf == 44)
    first = np.searchsorted(commas, starts)
    # only a line end (and "\r") between a line and the next: no comma
    ok &= np.diff(first, append=len(commas)) == 3
    rows = np.flatnonzero(ok)
    if not rows.size:
        return ok
    c2 = commas[first[rows] + 1]
    c3 = commas[first[rows] + 2]
    ok[rows] &= (buf[c2 + 1] == 32) & (buf[c3 + 1] == 32)
    field_starts = (starts[rows] + _TYPE_LEN[code[rows]] + 2, c2 + 2, c3 + 2)
    field_ends = (c2, c3, ends[rows])
    values = []
    for name, begin, end in zip(_NUMBERS, field_starts, field_ends, strict=True):
        length = end - begin
        good = (length >= 1) & (length <= MAX_DIGITS[name])
        value, digits_only = _parse_digits(words, end, np.where(good, length, 0))
        ok[rows] &= good & digits_only
        values.append(value)
    rows_ok = ok[rows]
    kept = rows[rows_ok]
    lines.matched[kept] = True
    lines.codes[kept] = code[kept].astype(np.int8)
    for name, value in zip(_NUMBERS, values, strict=True):
        lines.values[name][kept] = value[rows_ok].astype(np.int64)
    return ok


def _parse_digits(words: U64, end: I64, length: I64) -> tuple[U64, Bools]:
    """Value of the ``length`` (<= 18) characters before ``end``, and whether all are digits."""
    value = np.zeros(len(end), dtype=np.uint64)
    digits_only = np.ones(len(end), dtype=bool)
    for k, scale in enumerate(_SCALES):  # 8 characters a word, from the last
        left = np.clip(length - 8 * k, 0, 8)
        if not left.any():
            break
        word = (words[end - 8 * (k + 1)] ^ _ASCII0) & _KEEP_HIGH[left]
        digits_only &= (((word + _LOW7) | word) & _HIGH) == 0
        value += _digits8(word) * scale
    return value, digits_only


def _digits8(words: U64) -> U64:
    """Value of 8 digits (0..9) per word, first character in the lowest byte."""
    v = (words & _LOW4) * _M1 >> _SH8
    v = (v & _K1) * _M2 >> _SH16
    return (v & _K2) * _M3 >> _SH32

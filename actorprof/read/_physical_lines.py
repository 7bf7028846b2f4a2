"""Line tokenizer of the physical trace: numpy for printf's lines, ``re`` for the rest.

The runtime writes every trace line with one printf, ``"%s, %d, %d, %d\\n"``,
so nearly every line of ``physical.txt`` is *canonical*::

    TYPE ", " DIGITS ", " DIGITS ", " DIGITS ["\\r"] "\\n"

Canonical lines are recognised and parsed for a whole block at once with a
few dozen numpy operations (no Python loop): the comma positions give the
fields, 8-byte words give their digits (SWAR arithmetic). A block made of
printf's lines only, as most are, is read faster still by
:func:`count_lines`: its lines take few distinct texts (send types x sizes
x links), so each line's numbers are looked up by their bytes in a table of
the texts seen so far (:class:`~._fastscan.KeyTable`, as the logical
trace's keys are), only new texts are parsed, and the block comes back as
its distinct lines and how often each occurs. Every other line
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

from ..schema import MAX_MSG_BYTES, PHYSICAL_COLUMNS, SEND_TYPES
from ._fastscan import BlockBuffer, KeyTable, key_words

__all__ = [
    "BLANK_LINE",
    "LOOKS_LIKE_TRACE",
    "MAX_DIGITS",
    "MAX_VALUES",
    "TRACE_LINE_GRAMMAR",
    "CountedLines",
    "Lines",
    "count_lines",
    "new_line_keys",
]

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
#: Longest digit strings read: every 18-digit number fits int64
#: (buffer_bytes); PE ids of 10 digits are read, and those beyond int32 are
#: too large (:data:`MAX_VALUES`), as the logical trace reads them.
MAX_DIGITS = {"buffer_bytes": 18, "src_pe": 10, "dst_pe": 10}
#: Largest values a trace line may hold (beyond: skipped as too large). A
#: buffer beyond 4 GiB is corruption (and would overflow byte totals); PE
#: ids are int32.
MAX_VALUES = {"buffer_bytes": MAX_MSG_BYTES, "src_pe": 2**31 - 1, "dst_pe": 2**31 - 1}

_GRAMMAR_RE = re.compile(TRACE_LINE_GRAMMAR.encode())
# every line of a text: the grammar's four groups where it matches, else empty
_LINES_RE = re.compile(
    b"(?m)^(?:" + TRACE_LINE_GRAMMAR.encode().removeprefix(b"^").removesuffix(b"$") + b"|.*)$"
)
_TYPE_CODE = {t.encode(): np.int8(k) for k, t in enumerate(SEND_TYPES)}
_NUMBERS = PHYSICAL_COLUMNS[1:]
_PAD = 24  # zero bytes before and after a block: 8-byte loads stay inside
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
    """Each send type's text followed by ", ": its first and second 8-byte words, and masks
    (and a last entry of zeros, for no type)."""
    texts = [*(t.encode() + b", " for t in SEND_TYPES), b""]
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


def _code_of_length() -> NDArray[np.int64]:
    """Each first-field length's send type (``len(SEND_TYPES)``: none)."""
    lengths = [len(t) for t in SEND_TYPES]
    assert len(set(lengths)) == len(lengths), "send types of one length: code them otherwise"
    table = np.full(max(lengths) + 2, len(SEND_TYPES), dtype=np.int64)
    table[lengths] = np.arange(len(SEND_TYPES))
    return table


_CODE_OF_LENGTH = _code_of_length()
_SPILLING = np.flatnonzero(_TYPE_MASKS[1]).tolist()
#: Where a canonical line's three commas are among the separators, from its line end's.
_COMMA_OFFSETS = np.array([[-3], [-2], [-1]], dtype=np.int64)
#: :data:`MAX_DIGITS` as a column, one row per number of a line.
_MAX_DIGITS_COLUMN = np.array([[MAX_DIGITS[name]] for name in PHYSICAL_COLUMNS[1:]], dtype=np.int64)


@dataclass
class Lines:
    """The lines of one block of whole lines, tokenized.

    ``starts``/``ends`` delimit every line; ``rows`` lists (ascending) the
    lines that match :data:`TRACE_LINE_GRAMMAR`, and for those, in the same
    order, ``codes`` holds the send type's index in :data:`SEND_TYPES`,
    ``values`` each number (0 when its text is longer than
    :data:`MAX_DIGITS`) and ``too_long`` which texts were.
    """

    block: bytes
    starts: I64
    ends: I64
    rows: I64
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
            found = _Found.none()
        else:
            buf = np.zeros(len(block) + 2 * _PAD, dtype=np.uint8)
            buf[_PAD : _PAD + len(block)] = np.frombuffer(block, dtype=np.uint8)
            # line ends and commas in one pass: a canonical line has three
            # commas between its start and its line end
            seps = np.flatnonzero((buf == 10) | (buf == 44))
            line_ends = np.flatnonzero(buf[seps] == 10)
            ends = seps[line_ends]
            starts = np.empty_like(ends)
            starts[:1] = _PAD
            starts[1:] = ends[:-1] + 1
            found = _canonical(buf, seps, line_ends, starts, ends)
            starts -= _PAD
            ends -= _PAD
        lines = cls(block, starts, ends, found.rows, found.codes, found.values, found.too_long)
        if found.rows.size < len(starts):
            rest = np.ones(len(starts), dtype=bool)
            rest[found.rows] = False
            lines._add(lines._match_rest(np.flatnonzero(rest)))
        return lines

    def _add(self, other: _Found) -> None:
        """Add the matched lines of another route (kept in line order)."""
        if not other.rows.size:
            return
        rows = np.concatenate([self.rows, other.rows])
        order = np.argsort(rows, kind="stable")
        self.rows = rows[order]
        self.codes = np.concatenate([self.codes, other.codes])[order]
        for name in _NUMBERS:
            self.values[name] = np.concatenate([self.values[name], other.values[name]])[order]
            self.too_long[name] = np.concatenate([self.too_long[name], other.too_long[name]])[order]

    def _match_rest(self, rows: I64) -> _Found:
        """Match the lines the fast route left against the grammar, all in one ``re`` call."""
        if not rows.size:
            return _Found.none()
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
            return _Found.none()
        kept = np.flatnonzero(matched)
        codes = np.zeros(kept.size, dtype=np.int8)
        types = types[kept]
        for text, code in _TYPE_CODE.items():
            codes[types == text] = code
        values: dict[str, I64] = {}
        too_long: dict[str, Bools] = {}
        for k, name in enumerate(_NUMBERS, start=1):
            texts = np.array([found[i][k] for i in kept.tolist()], dtype="S")
            too_long[name] = np.char.str_len(texts) > MAX_DIGITS[name]
            values[name] = np.where(too_long[name], b"0", texts).astype(np.int64)
        return _Found(rows[kept], codes, values, too_long)


@dataclass
class _Found:
    """The lines one route matched: their rows (ascending) and fields."""

    rows: I64
    codes: NDArray[np.int8]
    values: dict[str, I64]
    too_long: dict[str, Bools]

    @classmethod
    def none(cls) -> _Found:
        return cls(
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int8),
            {name: np.zeros(0, dtype=np.int64) for name in _NUMBERS},
            {name: np.zeros(0, dtype=bool) for name in _NUMBERS},
        )


def _one_line(raw: bytes) -> tuple[bytes, ...]:
    match = _GRAMMAR_RE.match(raw)
    return (b"",) * 4 if match is None else tuple(match.groups())


def _canonical(buf: NDArray[np.uint8], seps: I64, line_ends: I64, starts: I64, ends: I64) -> _Found:
    """Find and parse the canonical lines (``starts``/``ends`` in ``buf``).

    ``seps`` are the positions of line ends and commas, ``line_ends`` the
    indexes of the line ends among them.
    """
    if not len(starts):
        return _Found.none()
    # exactly three commas in the line (none in the line end, "\r" is allowed)
    rows = np.flatnonzero(np.diff(line_ends, prepend=-1) == 4)
    if not rows.size:
        return _Found.none()
    words = np.ndarray(shape=(len(buf) - 7,), dtype="<u8", buffer=buf.data, strides=(1,))
    every = rows.size == len(starts)  # every line has three commas: no gathers
    at = line_ends if every else line_ends[rows]
    # the three commas and the line's end, one row each: the numbers lie
    # between them (all three parsed at once, as one array of 3n fields)
    bounds = np.empty((4, rows.size), dtype=np.int64)
    bounds[:3] = seps[at + _COMMA_OFFSETS]
    c1, c2, c3 = bounds[0], bounds[1], bounds[2]
    begin = starts if every else starts[rows]
    end = ends if every else ends[rows]
    bounds[3] = end - (buf[end - 1] == 13)  # a "\r" before the line end (the grammar's "\r?$")
    # the type, from the length of the first field (the types' differ); the
    # words then check its text and the ", " after it
    code = _CODE_OF_LENGTH[np.minimum(c1 - begin, len(_CODE_OF_LENGTH) - 1)]
    ok: Bools = code < len(SEND_TYPES)
    ok &= words[begin] == _TYPE_W0[code]
    ok &= (words[begin + 8] & _TYPE_MASKS[0][code]) == _TYPE_W1[code]
    for spill in _SPILLING:  # the types whose ", " reaches a third word
        third = np.flatnonzero(code == spill)
        if third.size:
            ok[third] &= (words[begin[third] + 16] & _TYPE_MASKS[1][spill]) == _TYPE_W2[spill]
    ok &= (buf[c2 + 1] == 32) & (buf[c3 + 1] == 32)
    last = bounds[1:]
    length = last - bounds[:3]
    length -= 2  # the ", " before each number
    good = (length >= 1) & (length <= _MAX_DIGITS_COLUMN)
    length *= good  # a field the fast route refuses is parsed as nothing
    parsed, digits_only = _parse_digits(words, last.ravel(), length.ravel())
    good &= digits_only.reshape(good.shape)
    ok &= good.all(axis=0)
    numbers = parsed.view(np.int64).reshape(good.shape)
    values: dict[str, I64] = dict(zip(_NUMBERS, numbers, strict=True))
    if not ok.all():
        keep = np.flatnonzero(ok)
        rows, code = rows[keep], code[keep]
        values = {name: v[keep] for name, v in values.items()}
    return _Found(
        rows,
        code.astype(np.int8),
        values,
        {name: np.zeros(rows.size, dtype=bool) for name in _NUMBERS},
    )


def _parse_digits(words: U64, end: I64, length: I64) -> tuple[U64, Bools]:
    """Value of the ``length`` (<= 18) characters before ``end``, and whether all are digits."""
    word = words[end - 8]  # the last 8 characters
    word ^= _ASCII0
    word &= _KEEP_HIGH[np.minimum(length, 8)]
    digits_only = (((word + _LOW7) | word) & _HIGH) == 0
    value = _digits8(word)
    longest = int(length.max(initial=0))
    for k in range(1, (longest + 7) // 8):  # the 8 characters before, and so on
        word = (words[end - 8 * (k + 1)] ^ _ASCII0) & _KEEP_HIGH[np.clip(length - 8 * k, 0, 8)]
        digits_only &= (((word + _LOW7) | word) & _HIGH) == 0
        value += _digits8(word) * _SCALES[k]
    return value, digits_only


def _digits8(words: U64) -> U64:
    """Value of 8 digits (0..9) per word, first character in the lowest byte."""
    v = (words & _LOW4) * _M1 >> _SH8
    v = (v & _K1) * _M2 >> _SH16
    return (v & _K2) * _M3 >> _SH32


#: Characters of each send type's text and the ", " after it.
_TYPE_SPAN = np.array([len(t) + 2 for t in SEND_TYPES] + [0], dtype=np.int64)


def new_line_keys() -> KeyTable:
    """The table :func:`count_lines` looks the numbers of a line up in (one per
    byte range read): texts ``BYTES, SRC, DST`` of at most the digits of
    :data:`MAX_DIGITS` and the values of :data:`MAX_VALUES` (other lines are
    read, and skipped, by :meth:`Lines.of_block`)."""
    return KeyTable(
        3,
        tuple(MAX_VALUES[name] for name in _NUMBERS),
        widths=tuple(MAX_DIGITS[name] for name in _NUMBERS),
    )


@dataclass
class CountedLines:
    """A block of canonical lines only, as its distinct lines: ``codes`` (the
    send type's index in :data:`SEND_TYPES`) and ``values`` of each, sorted
    by (key id, type), and ``counts``, how many lines each stands for.
    ``lines`` counts the block's lines; ``of_line`` gives each line's row."""

    codes: NDArray[np.int8]
    values: dict[str, I64]
    counts: I64
    lines: int
    _index: I64
    _present: I64

    def of_line(self) -> I64:
        """The row of each line of the block, in line order."""
        return np.searchsorted(self._present, self._index)


def count_lines(block: bytes, table: KeyTable, buffer: BlockBuffer) -> CountedLines | None:
    """``block``'s lines counted by their distinct texts, when every line is
    canonical without ``"\\r"`` and its numbers' text is at most 32 bytes;
    else None (:meth:`Lines.of_block` reads the block). The lines' numbers
    are looked up in ``table`` (:func:`new_line_keys`), which keeps the new
    ones: a line's text has one reading, so the values are those
    :meth:`Lines.of_block` gives.
    """
    if table.full or not block.endswith(b"\n"):
        return None
    pad = BlockBuffer.PAD
    buf = buffer.load(block)
    ends = np.flatnonzero(buf[pad : pad + len(block)] == 10) + pad
    starts = np.empty_like(ends)
    starts[0] = pad
    starts[1:] = ends[:-1] + 1
    # the type: the one whose text and ", " the line's first two words hold
    # (no two types' texts share them), and a third word where it reaches one
    words = np.ndarray(shape=(len(buf) - 7,), dtype="<u8", buffer=buf.data, strides=(1,))
    first, second = words[starts], words[starts + 8]
    code = np.full(len(ends), len(SEND_TYPES), dtype=np.int64)
    for k in range(len(SEND_TYPES)):
        code[(first == _TYPE_W0[k]) & ((second & _TYPE_MASKS[0][k]) == _TYPE_W1[k])] = k
    for spill in _SPILLING:  # the types whose ", " reaches a third word
        third = np.flatnonzero(code == spill)
        if third.size:
            wrong = (words[starts[third] + 16] & _TYPE_MASKS[1][spill]) != _TYPE_W2[spill]
            code[third[wrong]] = len(SEND_TYPES)
    if int(code.max()) == len(SEND_TYPES):
        return None
    keys = starts + _TYPE_SPAN[code]
    key_len = ends - keys
    if int(key_len.min()) < 7 or int(key_len.max()) > 32:  # "0, 0, 0" is 7
        return None
    # the table parses (strictly: digits, ", " twice, widths and limits) the new texts
    key_ids = table.lookup(*key_words(buf, keys, key_len), key_len, buf, keys)
    if key_ids is None:
        return None
    index = key_ids * len(SEND_TYPES) + code
    cells = table.size * len(SEND_TYPES)
    if cells <= 4 * len(index):
        counts = np.bincount(index, minlength=cells)
        present = np.flatnonzero(counts)
        counts = counts[present]
    else:
        present, counts = np.unique(index, return_counts=True)
    numbers = table.values[present // len(SEND_TYPES)]
    return CountedLines(
        (present % len(SEND_TYPES)).astype(np.int8),
        {name: numbers[:, k] for k, name in enumerate(_NUMBERS)},
        counts.astype(np.int64, copy=False),
        len(ends),
        index,
        present,
    )

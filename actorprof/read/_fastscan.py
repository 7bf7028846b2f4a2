"""Vectorised tokenizer for blocks of canonical printf lines (the hot path).

The runtime writes every trace line with one printf, so nearly all blocks
look exactly like ``"<int>, <int>, ..., <int>, <digits>.<6 digits>\\n"``.
This module reads such a block with a few dozen numpy operations per line
and no Python loop, and declines (returns None) any block that is not
exactly of that shape; the caller then parses it with the reference reader
of :mod:`._scan`. Results are identical by construction: a block is only
accepted when every line is canonical, and canonical lines have exactly one
reading.

How a block is read:

* the integer fields of a line (its *key*, e.g. ``"0, 3, 1, 17, 16"``) take
  few distinct values in a trace (sources x destinations x sizes), so the
  key's bytes (<= 32, as four 64-bit words) are looked up in a hash table;
  the new keys of a block are parsed once, strictly, together (numpy); lines
  become key ids;
* the time field has a fixed layout within a block (same number of integer
  digits), so it is parsed with SWAR arithmetic on 64-bit words;
* validity is checked with counts: every byte outside the checked
  positions must be a digit, which a count of non-digit bytes proves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "BlockBuffer",
    "CompactBlock",
    "FastBlock",
    "KeyTable",
    "LineKeys",
    "compact_block",
    "key_words",
    "tokenize_block",
]

U64 = NDArray[np.uint64]
I64 = NDArray[np.int64]

#: Text per block on the fast route (the tokenizer's sweet spot).
FAST_BLOCK_BYTES = 512 * 1024


_PAD = 32  # zero bytes after a block, so 8-byte loads never run past it
_MAX_KEY = 32  # bytes of integer fields handled by the fast path (four words)
_MAX_INT_DIGITS = 10  # time_s integer digits: keeps microseconds below 2**53
_LOW4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_SH8, _SH16, _SH32 = np.uint64(8), np.uint64(16), np.uint64(32)
_M1, _M2, _M3 = np.uint64(2561), np.uint64(6553601), np.uint64(42949672960001)
_K1, _K2 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF)
_HASH = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xC2B2AE3D27D4EB4F),
    np.uint64(0x165667B19E3779F9),
    np.uint64(0x27D4EB2F165667C5),
)
#: _KEEP_HIGH[j]: keep the j highest bytes of a word (the last j characters).
_KEEP_HIGH = np.array(
    [(0xFFFFFFFFFFFFFFFF << (8 * (8 - j))) & 0xFFFFFFFFFFFFFFFF for j in range(9)], dtype=np.uint64
)
#: _KEEP_LOW[j]: keep the j lowest bytes of a word (the first j characters).
_KEEP_LOW = np.array([(1 << (8 * j)) - 1 for j in range(9)], dtype=np.uint64)
_MICRO_LIMIT = 2**53
#: Digits of an integer field parsed by the fast path (every limit has fewer).
_MAX_DIGITS = 17
_ALL64 = (1 << 64) - 1


# Bytes of the compact form (see compact_block); digits are the bytes >= 48.
COMMA, NEWLINE, DOT, PLUS, MINUS = (ord(c) for c in ",\n.+-")


@dataclass
class CompactBlock:
    """A block without blanks around fields and without blank lines.

    ``data`` holds the remaining bytes (every line non-empty and ending with
    a line end: only digits, ``,``, ``.``, ``+``, ``-`` and ``\\n``);
    ``kept`` is the 0-based index in the block of each remaining line, or
    None when no line was removed; ``n_lines`` counts the block's lines.
    """

    data: NDArray[np.uint8]
    kept: I64 | None
    n_lines: int

    @property
    def blank(self) -> int:
        """Blank lines removed."""
        return 0 if self.kept is None else self.n_lines - len(self.kept)


def _is_token(v: NDArray[np.uint8]) -> NDArray[np.bool_]:
    """Bytes that are characters of a field: digits, ``.``, ``+``, ``-``."""
    return np.asarray((v >= 48) | (v == DOT) | (v == PLUS) | (v == MINUS), dtype=np.bool_)


def compact_block(block: bytes) -> CompactBlock | None:
    """Remove the blanks that the line grammar ignores, and the blank lines.

    Blanks (space, tab, ``\\r``, VT, FF) before or after a comma or at a
    line's ends are what ``field.strip()`` removes, so they go; None when a
    byte is outside digits, ``,``, ``.``, ``+``, ``-``, blanks and ``\\n``
    (``e``, a BOM, NUL, text...), or a blank lies inside a field (``1 2``):
    such a block is left to the line-by-line reader. ``block`` must end with
    a line end. Cost: a few vectorised comparisons per byte, no Python loop.
    """
    data = np.frombuffer(block, dtype=np.uint8)
    if not len(data) or data[-1] != NEWLINE:
        return None
    # allowed: 9-13 (blanks, \n), 32, 43-46 (+ , - .), 48-57 (digits)
    other = (data > 57) | (data < 9) | (data == 47)
    other |= (data > 13) & (data < 32)
    other |= (data > 32) & (data < 43)
    if other.any():
        return None
    blank = (data == 32) | ((data <= 13) & (data != NEWLINE))
    if blank.any():
        # each run of blanks: the bytes just before and after it
        padded = np.concatenate(([False], blank, [False]))
        edges = np.flatnonzero(padded[1:] != padded[:-1])
        first, after = edges[0::2], edges[1::2]  # run = [first, after)
        framed = np.concatenate(([NEWLINE], data, [NEWLINE])).astype(np.uint8)
        if (_is_token(framed[first]) & _is_token(framed[after + 1])).any():
            return None  # a blank between two characters of one field
        data = data[~blank]
    ends = np.flatnonzero(data == NEWLINE)
    empty = np.diff(ends, prepend=-1) == 1
    kept = None
    if empty.any():
        keep = np.ones(len(data), dtype=bool)
        keep[ends[empty]] = False
        data = data[keep]
        kept = np.flatnonzero(~empty)
    return CompactBlock(data, kept, len(ends))


def _digits8(words: U64) -> U64:
    """Value of 8 ASCII digits per word (first character in the lowest byte).

    Bytes that are zero count as leading zeros. The word must hold only
    digits and zero bytes (the caller masks the rest).
    """
    v = (words & _LOW4) * _M1 >> _SH8
    v = (v & _K1) * _M2 >> _SH16
    return (v & _K2) * _M3 >> _SH32


@dataclass
class FastBlock:
    """A block read by the fast path: one key id per line, and the times."""

    key_ids: I64
    #: Microseconds since the epoch per line (exact integers); None when the
    #: lines have no time field or only the range was asked for.
    micros: I64 | None
    #: Smallest and largest time in microseconds (None without time field).
    time_range: tuple[int, int] | None


class KeyTable:
    """Distinct keys (integer fields) of one file or byte range, and their values.

    ``values[k]`` holds the parsed integer columns of key ``k``; keys are
    found by an open-addressing hash table over their bytes. A key is valid
    when each field is at most its ``limits`` entry, and (``widths``) has at
    most that many characters.
    """

    def __init__(
        self,
        n_ints: int,
        limits: tuple[int, ...],
        *,
        max_keys: int = 1 << 18,
        widths: tuple[int, ...] | None = None,
    ) -> None:
        self.n_ints = n_ints
        self.limits = limits
        self.widths = widths
        self.max_keys = max_keys
        self._bits = 12
        self._slots = np.full(1 << self._bits, -1, dtype=np.int64)
        self._words = [np.zeros(16, dtype=np.uint64) for _ in range(4)]
        self._long = False
        self._values = np.zeros((16, n_ints), dtype=np.int64)
        self.size = 0
        self.full = False

    @property
    def values(self) -> I64:
        """Parsed integer columns, one row per key id."""
        return self._values[: self.size]

    def _hash(self, w0: U64, w1: U64, w2: U64 | None) -> I64:
        mixed = (w0 * _HASH[0]) ^ (w1 * _HASH[1])
        if w2 is not None:
            mixed ^= (w2[:, 0] * _HASH[2]) ^ (w2[:, 1] * _HASH[3])
        return (mixed >> np.uint64(64 - self._bits)).astype(np.int64)

    def _same(self, kid: I64, w0: U64, w1: U64, w2: U64 | None) -> NDArray[np.bool_]:
        words = self._words
        same = (words[0][kid] == w0) & (words[1][kid] == w1)
        if w2 is not None:
            same &= (words[2][kid] == w2[:, 0]) & (words[3][kid] == w2[:, 1])
        elif self._long:
            same &= (words[2][kid] == 0) & (words[3][kid] == 0)
        return np.asarray(same, dtype=np.bool_)

    def lookup(
        self,
        w0: U64,
        w1: U64,
        w2: U64 | None,
        key_len: I64,
        buf: NDArray[np.uint8],
        starts: I64,
    ) -> I64 | None:
        """Key id of every line; None when a key is not a valid canonical key.

        ``w2`` holds the third and fourth words of each key (one row per
        line); None when no key of the block is longer than 16 bytes.
        """
        while True:
            found = self._lookup_once(w0, w1, w2, key_len, buf, starts)
            if found is None or isinstance(found, np.ndarray):
                return found
            # the table grew: hash again with the new size

    def _lookup_once(
        self,
        w0: U64,
        w1: U64,
        w2: U64 | None,
        key_len: I64,
        buf: NDArray[np.uint8],
        starts: I64,
    ) -> I64 | bool | None:
        mask = (1 << self._bits) - 1
        slot = self._hash(w0, w1, w2)
        kid = self._slots[slot]
        ok = self._same(np.maximum(kid, 0), w0, w1, w2)
        ok &= kid >= 0
        if ok.all():
            return kid
        pending = np.flatnonzero(~ok)
        pslot = slot[pending]
        while pending.size:
            pk = self._slots[pslot]
            empty = pk < 0
            match = ~empty & self._same(
                np.maximum(pk, 0), w0[pending], w1[pending], None if w2 is None else w2[pending]
            )
            kid[pending[match]] = pk[match]
            keep = ~match & ~empty
            if empty.any():
                new = pending[empty]
                grown = self._insert_new(new, pslot[empty], w0, w1, w2, key_len, buf, starts)
                if grown is None:
                    return None
                if grown:
                    return True  # hashed again, with the new size
                # look the new lines up again from their home slots
                pending = np.concatenate([pending[keep], new])
                pslot = np.concatenate([(pslot[keep] + 1) & mask, slot[new]])
                continue
            pending = pending[keep]
            pslot = (pslot[keep] + 1) & mask
        return kid

    def _insert_new(
        self,
        lines: I64,
        hit: I64,
        w0: U64,
        w1: U64,
        w2: U64 | None,
        key_len: I64,
        buf: NDArray[np.uint8],
        starts: I64,
    ) -> bool | None:
        """Insert the distinct keys of ``lines`` (absent from the table; each
        found the empty slot ``hit``), all at once. True: the table grew (the
        caller hashes the block again); False: the caller looks ``lines`` up
        again; None: a key is not a valid canonical key, or the table is full.

        Vectorised: a trace of 65,536 PEs has about one distinct key per
        line (the destinations), so keys are parsed and placed with numpy,
        not one by one. Lines of one key probe the same slots, so they come
        to the same empty slot: a key per slot is found by sorting slots, and
        only the lines whose key differs from their slot's first line's (two
        new keys at one slot) by sorting keys.
        """
        order = np.argsort(lines)  # the probe loop may have reordered them
        lines, hit = lines[order], hit[order]
        _, first, at = np.unique(hit, return_index=True, return_inverse=True)
        rep = lines[first][at.ravel()]  # each line's slot's first line
        same = (w0[lines] == w0[rep]) & (w1[lines] == w1[rep])
        if w2 is not None:
            same &= (w2[lines] == w2[rep]).all(axis=1)
        keys = lines[first]
        if not same.all():  # keys sharing a slot: the distinct ones among the others
            odd = np.sort(lines[~same])
            zero = np.zeros((len(odd), 2), dtype=np.uint64)
            odd_w2 = zero if w2 is None else w2[odd]
            order = np.lexsort((odd_w2[:, 1], odd_w2[:, 0], w1[odd], w0[odd]))  # stable
            odd, odd_w2 = odd[order], odd_w2[order]
            k = np.column_stack([w0[odd], w1[odd], odd_w2])
            keys = np.concatenate([keys, odd[np.r_[True, (k[1:] != k[:-1]).any(axis=1)]]])
        lines = np.sort(keys)  # key ids in order of first appearance
        values = self._parse_many(buf, starts[lines], key_len[lines])
        if values is None:
            return None
        if self.size + len(lines) > self.max_keys:
            self.full = True
            return None
        more = np.zeros((len(lines), 2), dtype=np.uint64) if w2 is None else w2[lines]
        self._append(w0[lines], w1[lines], more, values)
        # 16 slots per key or more (few lines then probe past their key's slot)
        # up to 2**20 slots (8 MB); then 4, which the most keys (2**18) fit in
        while self.size * (16 if self._bits < 20 else 4) > (1 << self._bits):
            self._bits += 2
        if len(self._slots) != 1 << self._bits:
            self._slots = np.full(1 << self._bits, -1, dtype=np.int64)
            self._place_many(np.arange(self.size, dtype=np.int64))
            return True
        self._place_many(np.arange(self.size - len(lines), self.size, dtype=np.int64))
        return False

    def _parse_many(self, buf: NDArray[np.uint8], starts: I64, key_len: I64) -> I64 | None:
        """Integer fields of keys (each ``key_len`` <= 32 bytes at ``starts``),
        strictly: ``[0-9]+(, [0-9]+)*`` with ``n_ints`` fields, each of at
        most 17 digits (and its ``widths`` entry) and at most its limit;
        None if any key is not.

        The grammar is checked with counts over each key's 32 bytes: exactly
        ``n_ints - 1`` commas, each followed by a space, and no other byte
        but digits; fields are then non-empty. Each field's value is read
        from the (at most three) 8-byte words that end where it ends, as the
        time field is (SWAR). At 65,536 PEs nearly every line is a new key,
        so this runs on every line: a few dozen operations per field.
        """
        n = len(starts)
        n_ints = self.n_ints
        if n == 0:
            return np.zeros((0, n_ints), dtype=np.int64)
        if int(key_len.min()) < 1:
            return None
        chars = _windows(buf, starts).view(np.uint8).reshape(n, 32)
        inside = np.arange(32, dtype=np.int64) < key_len[:, None]
        other = np.flatnonzero(((chars - np.uint8(48)) >= 10) & inside)  # wraps below "0"
        seps = n_ints - 1
        # the non-digits are exactly a comma then a space, seps times per key
        if len(other) != 2 * seps * n:
            return None
        comma = other[0::2]
        if seps:
            flat = chars.reshape(-1)
            if (other[1::2] != comma + 1).any() or (flat[comma] != 44).any():
                return None
            if (flat[comma + 1] != 32).any() or (comma // 32 != np.arange(n).repeat(seps)).any():
                return None
        at = (comma % 32).reshape(n, seps)
        first = np.column_stack([np.zeros(n, np.int64), at + 2])
        after = np.column_stack([at, key_len])
        width = after - first
        if int(width.min()) < 1 or int(width.max()) > _MAX_DIGITS:
            return None  # an empty field (", ," or a comma last), or too many digits
        if self.widths is not None and (width > np.array(self.widths, dtype=np.int64)).any():
            return None
        ends = after + starts[:, None]
        values = np.empty((n, n_ints), dtype=np.int64)
        for j in range(n_ints):
            values[:, j] = _field_values(buf, ends[:, j], width[:, j])
        if (values > np.array(self.limits, dtype=np.int64)).any():
            return None
        return values

    def _append(self, w0: U64, w1: U64, w2: U64, values: I64) -> None:
        need = self.size + len(values)
        if need > len(self._values):
            grow = max(need, 2 * len(self._values))
            self._words = [np.resize(w, grow) for w in self._words]
            self._values = np.resize(self._values, (grow, self.n_ints))
        for words, new in zip(self._words, (w0, w1, w2[:, 0], w2[:, 1]), strict=True):
            words[self.size : need] = new
        self._values[self.size : need] = values
        self._long = self._long or bool((w2 != 0).any())
        # w2: the third and fourth words, one row per key
        self.size = need

    def _place_many(self, kids: I64) -> None:
        """Put key ids ``kids`` in free slots, probing linearly from their home."""
        mask = (1 << self._bits) - 1
        w = self._words
        slot = self._hash(w[0][kids], w[1][kids], np.column_stack([w[2][kids], w[3][kids]]))
        while kids.size:
            free = self._slots[slot] < 0
            _, first = np.unique(np.where(free, slot, -1), return_index=True)
            winners = first[free[first]]  # one key per free slot
            self._slots[slot[winners]] = kids[winners]
            lost = np.ones(kids.size, dtype=np.bool_)
            lost[winners] = False
            kids = kids[lost]
            slot = (slot[lost] + 1) & mask


class LineKeys(KeyTable):
    """A key table that gives every line a key of its own: no hashing.

    Where nearly every line names a (source, destination) pair of its own
    (65,536 PEs' small files read together), looking each key up and
    inserting it costs twice what parsing every line does. The same values
    may then stand under several key ids: for callers that group lines by
    their values (the engine's batches of small files), not by key id.
    """

    def lookup(
        self,
        w0: U64,
        w1: U64,
        w2: U64 | None,
        key_len: I64,
        buf: NDArray[np.uint8],
        starts: I64,
    ) -> I64 | None:
        """A new key id for every line; None when a key is not a valid canonical key."""
        values = self._parse_many(buf, starts, key_len)
        if values is None:
            return None
        n = len(values)
        if self.size + n > self.max_keys:
            self.full = True
            return None
        if self.size + n > len(self._values):
            self._values = np.resize(
                self._values, (max(self.size + n, 2 * len(self._values)), self.n_ints)
            )
        self._values[self.size : self.size + n] = values
        ids = np.arange(self.size, self.size + n, dtype=np.int64)
        self.size += n
        return ids


class BlockBuffer:
    """A reusable zero-padded byte buffer (a block is copied in once)."""

    #: Zero bytes before (and after) the block in the buffer :meth:`load` returns.
    PAD = _PAD

    def __init__(self) -> None:
        self.array = np.zeros(0, dtype=np.uint8)

    def load(self, block: bytes) -> NDArray[np.uint8]:
        """The buffer holding ``_PAD`` zeros, ``block``, then ``_PAD`` zeros."""
        need = len(block) + 2 * _PAD
        if len(self.array) < need or len(self.array) > 4 * need:
            self.array = np.zeros(need + need // 4, dtype=np.uint8)
        buf = self.array[:need]
        buf[_PAD : _PAD + len(block)] = np.frombuffer(block, dtype=np.uint8)
        buf[_PAD + len(block) :] = 0
        return buf


def _windows(buf: NDArray[np.uint8], at: I64) -> U64:
    """The 32 bytes at each offset ``at`` of ``buf``, as 4 little-endian words."""
    view = np.ndarray(shape=(len(buf) - 31,), dtype="V32", buffer=buf.data, strides=(1,))
    return view[at].view("<u8").reshape(len(at), 4)


def key_words(buf: NDArray[np.uint8], starts: I64, key_len: I64) -> tuple[U64, U64, U64 | None]:
    """The words of each key (``key_len`` <= 32 bytes at ``starts`` of ``buf``,
    followed by at least 32 bytes): its first and second 8 bytes, and its
    third and fourth (one row per key; None when no key is longer than 16
    bytes), each without the bytes after the key: what
    :meth:`KeyTable.lookup` takes."""
    head = _windows(buf, starts)
    w0 = head[:, 0]
    if int(key_len.min()) < 8:
        w0 = w0 & _KEEP_LOW[np.minimum(key_len, 8)]
    w1 = head[:, 1] & _KEEP_LOW[np.clip(key_len - 8, 0, 8)]
    w2 = None
    if int(key_len.max()) > 16:
        w2 = np.column_stack(
            [
                head[:, 2] & _KEEP_LOW[np.clip(key_len - 16, 0, 8)],
                head[:, 3] & _KEEP_LOW[np.clip(key_len - 24, 0, 8)],
            ]
        )
    return w0, w1, w2


def _bytes_at(cols: U64, offset: int) -> U64:
    """The 8 bytes at ``offset`` (0..24) of each 32-byte window, as one word."""
    word, shift = divmod(offset, 8)
    if shift == 0:
        return cols[:, word]
    return (cols[:, word] >> np.uint64(8 * shift)) | (
        cols[:, word + 1] << np.uint64(64 - 8 * shift)
    )


def _pair_at(cols: U64, offset: int) -> U64:
    """The 2 bytes at ``offset`` (0..30) of each 32-byte window, as one word."""
    word, shift = divmod(offset, 8)
    if shift == 7:
        return _bytes_at(cols, offset) & np.uint64(0xFFFF)
    return (cols[:, word] >> np.uint64(8 * shift)) & np.uint64(0xFFFF)


def _field_values(buf: NDArray[np.uint8], ends: I64, width: I64) -> I64:
    """Values of digit strings of ``width`` (1..17) characters ending (exclusive)
    at offsets ``ends`` of ``buf``, read 8 characters at a time (SWAR)."""
    words = np.ndarray(shape=(len(buf) - 7,), dtype="<u8", buffer=buf.data, strides=(1,))
    low = _digits8(words[ends - 8] & (_LOW4 & _KEEP_HIGH[np.minimum(width, 8)]))
    if int(width.max()) <= 8:
        return low.astype(np.int64)
    mid = _digits8(words[ends - 16] & (_LOW4 & _KEEP_HIGH[np.clip(width - 8, 0, 8)]))
    value = mid * np.uint64(100_000_000) + low
    if int(width.max()) > 16:
        top = _digits8(words[ends - 24] & (_LOW4 & _KEEP_HIGH[np.clip(width - 16, 0, 8)]))
        value += top * np.uint64(10_000_000_000_000_000)
    return value.astype(np.int64)


def tokenize_block(
    block: bytes,
    table: KeyTable,
    *,
    time_optional: bool,
    has_time_column: bool,
    all_times: bool = True,
    buffer: BlockBuffer | None = None,
) -> FastBlock | None:
    """Read a block of whole lines (ending with a line end) on the fast path.

    Returns None when the block is not made only of canonical lines; the
    caller then uses the reference parser for this block. ``all_times``
    false: only the first and last time are wanted (cheaper).
    """
    if table.full or not block:
        return None
    kwargs = {"time_optional": time_optional, "has_time_column": has_time_column}
    found = _tokenize(block, table, all_times=all_times, buffer=buffer, **kwargs)
    if found is None and not table.full:
        respaced = _canonical_spacing(block)
        if respaced is not None:
            found = _tokenize(respaced, table, all_times=all_times, buffer=buffer, **kwargs)
    return found


def _tokenize(
    block: bytes,
    table: KeyTable,
    *,
    time_optional: bool,
    has_time_column: bool,
    all_times: bool,
    buffer: BlockBuffer | None,
) -> FastBlock | None:
    buf = (buffer or BlockBuffer()).load(block)
    view = buf[_PAD : _PAD + len(block)]
    ends = np.flatnonzero(view == 10) + _PAD
    n = ends.size
    starts = np.empty(n, dtype=np.int64)
    starts[0] = _PAD
    starts[1:] = ends[:-1] + 1
    n_ints = table.n_ints
    min_key = 3 * n_ints - 2  # "0, 0, 0, 0, 0"
    if int((ends - starts).min()) < min_key:
        return None
    tail = _windows(buf, ends - 32)  # the 32 bytes before each line end
    timed = False
    int_digits = 0
    if has_time_column:
        dots = (tail[:, 3] >> np.uint64(8)) & np.uint64(0xFF) == np.uint64(46)
        if dots.all():
            timed = True
        elif not (time_optional and not dots.any()):
            return None
    if timed:
        first = block[: int(ends[0]) - _PAD]
        int_digits = len(first) - 7 - (first.rfind(b", ") + 2)
        if not 1 <= int_digits <= _MAX_INT_DIGITS:
            return None
        if not (_pair_at(tail, 23 - int_digits) == np.uint64(0x202C)).all():  # ", " before time_s
            return None
        key_end = ends - (9 + int_digits)
        per_line = 2 * (n_ints - 1) + 4
    else:
        key_end = ends
        per_line = 2 * (n_ints - 1) + 1
    key_len = key_end - starts
    if int(key_len.min()) < min_key or int(key_len.max()) > _MAX_KEY:
        return None
    if int(view.max()) > 57 or int(np.count_nonzero(view < 48)) != per_line * n:
        return None
    key_ids = table.lookup(*key_words(buf, starts, key_len), key_len, buf, starts)
    if key_ids is None:
        return None
    if not timed:
        return FastBlock(key_ids, None, None)
    if all_times:
        micros = _micros(tail, int_digits)
        low, high = int(micros.min()), int(micros.max())
    else:
        micros = None
        found = _time_range(tail, buf, ends, int_digits + 7)
        if found is None:
            return None
        low, high = found
    if high >= _MICRO_LIMIT:
        return None
    return FastBlock(key_ids, micros, (low, high))


def _canonical_spacing(block: bytes) -> bytes | None:
    """``block`` respaced like printf (``", "`` between fields, nothing else).

    CRLF line ends, trailing blanks, tabs or missing spaces around commas
    are harmless variations (``field.strip()`` removes them) that would
    otherwise send whole files to the slow reader. Blank lines cannot be
    removed here (the caller numbers lines by position): None then, and for
    any block that has no compact form. The usual variations are undone with
    bytes operations (GB/s); others through :func:`compact_block`. The
    tokenizer checks the result as strictly as any block.
    """
    # the usual variations, with fast bytes operations
    text = block.replace(b"\r\n", b"\n") if b"\r" in block else block
    if b"\t" in text:
        text = text.replace(b",\t", b", ")
    for _ in range(4):
        if b" \n" not in text and b"\t\n" not in text:
            break
        text = text.replace(b" \n", b"\n").replace(b"\t\n", b"\n")
    if b", " not in text and b"," in text:
        text = text.replace(b",", b", ")
    if text is not block:
        return text
    if b"\n\n" in block:
        return None  # blank lines: not here
    compact = compact_block(block)
    if compact is None or compact.kept is not None:
        return None
    return compact.data.tobytes().replace(b",", b", ")


def _micros(tail: U64, int_digits: int) -> I64:
    """``<int_digits digits>.<6 digits>`` ending each window, in microseconds.

    Within a block the characters before the last 8 (the seconds but their
    units) are nearly always the same on every line: then they are read
    once, and only the last word on every line.
    """
    last = tail[:, 3]
    frac = _digits8(last & (_LOW4 & _KEEP_HIGH[6]))
    if int_digits == 1 or _same_before_last_word(tail, int_digits):
        end = 32 - 8
        start = end - (int_digits - 1)
        tens = int(tail[0].tobytes()[start:end] or b"0")  # the seconds but their units
        units = (last & np.uint64(0xFF)) - np.uint64(48)
        base = np.uint64(tens * 10_000_000)
        return (units * np.uint64(1_000_000) + frac + base).astype(np.int64)
    low = _bytes_at(tail, 17)  # the 8 characters before the dot
    if int_digits <= 8:
        whole = _digits8(low & (_LOW4 & _KEEP_HIGH[int_digits]))
    else:
        high = _bytes_at(tail, 9) & (_LOW4 & _KEEP_HIGH[int_digits - 8])
        whole = _digits8(high) * np.uint64(100_000_000) + _digits8(low & _LOW4)
    return (whole * np.uint64(1_000_000) + frac).astype(np.int64)


def _same_before_last_word(tail: U64, int_digits: int) -> bool:
    """Whether the ``int_digits - 1`` characters before each window's last
    8 are the same on every line (at most 9: the third word, then the top
    byte of the second)."""
    head = tail[:, 2]
    if int_digits < 9:
        head = head & _KEEP_HIGH[int_digits - 1]
    if not (head == head[0]).all():
        return False
    if int_digits <= 9:
        return True
    lead = tail[:, 1] >> np.uint64(56)
    return bool((lead == lead[0]).all())


def _time_range(tail: U64, buf: NDArray[np.uint8], ends: I64, width: int) -> tuple[int, int] | None:
    """Smallest and largest time of the block, in microseconds.

    Same-length digit strings (the dot is at a fixed place) order like their
    values, so two big-endian words per line compare as the numbers would.
    Within a block the characters before the last word are nearly always
    the same on every line (:func:`_same_before_last_word`): then the last
    word alone orders the lines.
    """
    last = tail[:, 3].byteswap()
    if _same_before_last_word(tail, width - 7):
        rows = [int(last.argmin()), int(last.argmax())]
    else:
        if width <= 16:
            first = _bytes_at(tail, 32 - width).byteswap()
        else:  # 17 characters: the first must be the same on every line
            lead = tail[:, 1] >> np.uint64(56)
            if not (lead == lead[0]).all():
                return None
            first = tail[:, 2].byteswap()
        rows = []
        for pick in (np.min, np.max):
            at = np.flatnonzero(first == pick(first))
            rows.append(int(at[int(last[at].argmin() if pick is np.min else last[at].argmax())]))
    out = []
    for row in rows:
        end = int(ends[row])
        out.append(int(buf[end - width : end].tobytes().replace(b".", b"")))
    return out[0], out[1]

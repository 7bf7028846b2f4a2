"""Vectorised reader of blocks of printf lines, all fields present (the PAPI hot path).

The runtime writes each PAPI line with one printf,
``"%d, %ld, %d, %ld, %ld, %d, %d, %lld, %lld, %lf\\n"``, so nearly every
block is made only of lines ``<int>, <int>, ..., <int>, <digits>.<digits>``.
:func:`printf_columns` reads such a block with a fixed number of numpy
operations (no Python loop over lines) and declines (returns None) any block
that is not exactly of that shape; the caller then uses the reference route
of :mod:`._scan` (compact form, structure check, pandas C engine, and line by
line where that fails). A block is accepted only when every line is
canonical, and a canonical line has one reading, so both routes give the same
values (``tests/test_papi_engine.py`` compares them).

What is canonical, checked with counts and a few gathers:

* bytes are digits, ``,``, ``" "``, ``.``, ``-`` and ``\\n``; every comma is
  followed by one space and there is no other space (``bytes.count``);
* each line has ``len(columns) - 1`` commas, then one dot, then its line end
  (the separators' positions, one ``flatnonzero``);
* integer fields have 1 to 16 digits; a ``-`` only starts a field of the one
  column that may be negative (PAPI's ``mailbox``);
* the time field is ``<digits>.<digits>``, 16 digits at most, so its value
  is an exact integer over a power of ten, and their IEEE quotient is the
  correctly rounded value the C engine's round-trip parser gives.

Integer fields are converted with SWAR arithmetic on the 8-byte words that
end at each field's last character (two words beyond 8 digits).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from ._scan import CsvSpec

__all__ = ["printf_columns"]

U64 = NDArray[np.uint64]
I64 = NDArray[np.int64]

_PAD = 32  # bytes before a piece (zeros before the first): 8-byte loads never leave it
_ZEROS = bytes(_PAD)
_MAX_DIGITS = 16  # two words; every 16-digit number fits int64
_LOW4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_SH8, _SH16, _SH32 = np.uint64(8), np.uint64(16), np.uint64(32)
_M1, _M2, _M3 = np.uint64(2561), np.uint64(6553601), np.uint64(42949672960001)
_K1, _K2 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF)
_E8 = np.uint64(100_000_000)
#: _KEEP_HIGH[j]: keep the j highest bytes of a word (its last j characters).
_KEEP_HIGH = np.array(
    [(0xFFFFFFFFFFFFFFFF << (8 * (8 - j))) & 0xFFFFFFFFFFFFFFFF for j in range(9)], dtype=np.uint64
)
_POW10 = 10 ** np.arange(_MAX_DIGITS + 1, dtype=np.int64)
_POW10_F = _POW10.astype(np.float64)  # exact: powers of ten up to 10**22 are
_EXACT = 2**53
COMMA, NEWLINE, DOT, MINUS, SPACE, ZERO = (ord(c) for c in ",\n.- 0")


def _digits8(words: U64) -> U64:
    """Value of 8 ASCII digits per word (first character in the lowest byte);
    zero bytes count as leading zeros. ``words`` is overwritten."""
    words &= _LOW4
    words *= _M1
    words >>= _SH8
    words &= _K1
    words *= _M2
    words >>= _SH16
    words &= _K2
    words *= _M3
    words >>= _SH32
    return words


def _values(low: U64, high: U64, ends: I64, digits: I64, most: int) -> I64:
    """The numbers of ``digits`` (1..16, ``most`` at most) digits ending
    before ``ends``: ``low[e]`` is the 8-byte word ending there, ``high[e]``
    the one before it (used where there are more than 8 digits)."""
    if most <= 8:  # every value in one word (nearly every column)
        return _digits8(low[ends] & _KEEP_HIGH[digits]).view(np.int64)
    values = _digits8(low[ends] & _KEEP_HIGH[np.minimum(digits, 8)]).view(np.int64)
    long = digits > 8
    count = int(np.count_nonzero(long))
    if 8 * count > long.size:  # many: on every value
        more = high[ends] & _KEEP_HIGH[np.clip(digits - 8, 0, 8)]
        values += _digits8(more).view(np.int64) * 100_000_000
    else:  # a few (a MAIN line's counters): on those only
        at = np.flatnonzero(long)
        more = high[ends[at]] & _KEEP_HIGH[digits[at] - 8]
        values[at] += _digits8(more).view(np.int64) * 100_000_000
    return values


_COMMA_SPACE = COMMA | SPACE << 8  # ", " read as a little-endian uint16


def _comma_spaces(view: NDArray[np.uint8]) -> int:
    """How many commas of ``view`` a space follows: its ``", "`` pairs, at
    even and at odd offsets (two passes of 2-byte words)."""
    size = len(view)
    even = view[: size - size % 2].view("<u2")
    odd = view[1 : size - (size - 1) % 2].view("<u2")
    return int(np.count_nonzero(even == _COMMA_SPACE)) + int(np.count_nonzero(odd == _COMMA_SPACE))


#: Bytes of text converted at once: the working arrays stay in the CPU caches.
PIECE_BYTES = 1 << 19


class _Limits(NamedTuple):
    """What each integer column of a spec is checked against (made once a block)."""

    #: Largest valid value, and its digits (a field of fewer cannot pass it).
    largest: tuple[int, ...]
    digits: tuple[int, ...]
    #: The columns that may be negative.
    signed: tuple[int, ...]

    @classmethod
    def of(cls, spec: CsvSpec) -> _Limits:
        names = spec.columns[:-1]
        largest = tuple(spec.limit(name) for name in names)
        return cls(
            largest,
            tuple(len(str(limit)) for limit in largest),
            tuple(j for j, name in enumerate(names) if name not in spec.nonnegative),
        )


def printf_columns(
    block: bytes, spec: CsvSpec, columns: Sequence[str] | None = None
) -> dict[str, np.ndarray] | None:
    """Columns of a block of canonical lines, each of every field of ``spec``.

    ``block`` ends with a line end. Returns the integer columns in their
    ``spec`` dtypes and the time column in float64 (only ``columns`` when
    given: the others are checked, not converted), or None when some line is
    not canonical or a value is out of its column's range: the reference
    route then decides (and counts what it cannot read).
    """
    if len(spec.columns) < 2 or not block.endswith(b"\n"):
        return None
    wanted = spec.columns if columns is None else tuple(columns)
    limits = _Limits.of(spec)
    whole = np.frombuffer(block, dtype=np.uint8)
    parts: list[dict[str, np.ndarray]] = []
    start = 0
    while start < len(block):
        stop = block.rfind(b"\n", start, start + PIECE_BYTES) + 1
        if stop <= start:
            stop = block.find(b"\n", start) + 1
        if start >= _PAD:  # the block itself: the bytes before the piece are there
            part = _piece(whole, start, stop, spec, wanted, limits)
        else:  # the first piece: a copy of it after zero bytes
            padded = np.frombuffer(_ZEROS + block[start:stop], dtype=np.uint8)
            part = _piece(padded, _PAD, _PAD + stop - start, spec, wanted, limits)
        if part is None:
            return None
        parts.append(part)
        start = stop
    if len(parts) == 1:
        return parts[0]
    return {name: np.concatenate([p[name] for p in parts]) for name in wanted}


def _piece(
    buf: NDArray[np.uint8],
    start: int,
    stop: int,
    spec: CsvSpec,
    wanted: Sequence[str],
    limits: _Limits,
) -> dict[str, np.ndarray] | None:
    """The columns of the lines in bytes ``[start, stop)`` of ``buf``, or
    None (see :func:`printf_columns`). ``start`` is at least ``_PAD``: the
    8-byte loads that end in the piece's first fields stay in ``buf``."""
    columns = spec.columns
    f = len(columns)
    size = stop - start
    view = buf[start:stop]
    if int(view.max()) > 57:
        return None
    seps = np.flatnonzero(((view & 0xFD) == COMMA) | (view == NEWLINE))  # , . and line ends
    n, rest = divmod(len(seps), f + 1)
    if rest or not n or seps[-1] != size - 1:
        return None
    rows = seps.reshape(n, f + 1)
    # each line: f - 1 commas, each followed by a space, then a dot, then its
    # end. With n line ends and n dots where they belong, (f - 1) * n ", "
    # pairs leave room for no other separator than those pairs' commas
    if (
        not (view[rows[:, f]] == NEWLINE).all()
        or not (view[rows[:, f - 1]] == DOT).all()
        or _comma_spaces(view) != (f - 1) * n
    ):
        return None
    # every other byte is a digit, but for minus signs: bytes below "0" counted
    # (separators, the spaces after the commas, minus signs: no other space)
    below = int(np.count_nonzero(view < 48)) - len(seps) - (f - 1) * n
    minus = int(np.count_nonzero(view == MINUS)) if below else 0
    if below != minus:
        return None
    signed = limits.signed
    if minus and len(signed) != 1:
        return None
    # characters of each field: after ", " (2) or a line end (1); the time
    # field's whole part ends at the dot, its decimals after it (1)
    gaps = np.empty_like(seps)
    gaps[0] = seps[0] + 1  # from a line end at -1
    np.subtract(seps[1:], seps[:-1], out=gaps[1:])
    gaps -= 2
    lengths = gaps.reshape(n, f + 1)
    lengths[:, 0] += 1
    lengths[:, f] += 1
    if int(gaps.min()) < 1 or int(gaps.max()) > _MAX_DIGITS:
        return None
    most = [int(lengths[:, j].max()) for j in range(f - 1)]  # each integer column's longest field
    negative = None
    if minus:
        j = signed[0]
        negative = view[rows[:, j] - lengths[:, j]] == MINUS
        if int(np.count_nonzero(negative)) != minus:
            return None  # a sign in another field, or two in one
        lengths[:, j] -= negative
        if int(lengths[:, j].min()) < 1:
            return None
    # the 8-byte words ending at each byte of the piece (ending[k]: the 8 bytes
    # before byte k), and the words before those: indexed by the separators
    # themselves (the padding keeps the first line's inside the buffer)
    ending, before = (
        np.ndarray(shape=(size,), dtype="<u8", buffer=buf.data, offset=start - back, strides=(1,))
        for back in (8, 16)
    )
    out: dict[str, np.ndarray] = {}
    for j, name in enumerate(columns[:-1]):
        # a column not wanted is converted only when its longest field may
        # pass its limit (as in any other column: the same lines decline)
        over = most[j] >= limits.digits[j]
        if not (over or name in wanted or j in signed):
            continue
        if most[j] == 1:  # one digit each (a mailbox, a count of sends): one byte each
            column = view[rows[:, j] - 1].astype(np.int64)
            column -= ZERO
        else:
            column = _values(ending, before, rows[:, j], lengths[:, j], most[j])
        if negative is not None and j == signed[0]:
            np.negative(column, out=column, where=negative)
        if over and int(column.max()) > limits.largest[j]:
            return None
        if j in signed and int(column.min()) < int(np.iinfo(spec.dtypes[name]).min):  # type: ignore[type-var]
            return None
        if name in wanted:
            out[name] = column.astype(spec.dtypes[name])
    whole, decimals = lengths[:, f - 1], lengths[:, f]
    if int((whole + decimals).max()) > _MAX_DIGITS:
        return None
    if columns[-1] in wanted:
        scaled = _values(ending, before, rows[:, f - 1], whole, _MAX_DIGITS) * _POW10[decimals]
        scaled += _values(ending, before, rows[:, f], decimals, _MAX_DIGITS)
        if int(scaled.max()) >= _EXACT:
            return None
        out[columns[-1]] = scaled / _POW10_F[decimals]
    return out

"""Vectorised reading of ``overall.txt`` blocks, and the rows kept as columns.

Nearly every line of an overall profile is printed by the runtime with one
``printf``, so a block of a large run is made of lines of nine fixed shapes
(:data:`TEMPLATES`: literal text with numbers in between) and a few lines of
program output. :func:`canonical_block` reads such a block with a fixed
number of numpy operations per line shape (no Python loop over lines) and
declines (returns None) any block holding a line it is not sure to read
exactly as the line-by-line reader of :mod:`.overall` does; that reader then
reads the block. A line is accepted only when it is one of those shapes
exactly (one blank between tokens, ``cycles`` written, ``\\r`` only before
the line end), its label is printable ASCII without ``[``, its PE id is below
the cap and ``--num-pes``, and its numbers are in range; any NUL or escape
byte declines the block. Lines without ``[PE`` are blank lines or program
output, counted (their first examples kept) here too, unless
:func:`maybe_profile_line` says one could be a profile line with a malformed
PE tag (``[pe3]``): that declines the block, and the line-by-line reader
decides.

:class:`Records` keeps the profile lines read (by either route) as columns in
file order, and makes the frame at the end with the same rules as the
line-by-line row table (runs, label order); ``tests/test_overall_fast.py``
compares the two routes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..schema import (
    MAX_OVERALL_VALUE,
    OVERALL_COLUMNS,
    OVERALL_FRAC_COLUMNS,
    PE_ID_CAP,
)

__all__ = [
    "BODY_WORDS",
    "LINE_KINDS",
    "PE_LIMIT",
    "FastBlock",
    "Records",
    "canonical_block",
    "maybe_profile_line",
]

#: PE ids a profile line may name without --num-pes (the --num-pes cap).
PE_LIMIT = PE_ID_CAP

#: The names a profile line's body starts with (after ``<label> [PE<i>] ``).
BODY_WORDS = (
    "T_inside_finish",
    "T_wait",
    "T_outside_finish",
    "T_sends",
    "T_send_in_process",
    "T_process",
    "T_TOTAL",
    "TCOMM_PROFILING",
)
_BODY_WORD = re.compile(b"|".join(re.escape(word.encode()) for word in BODY_WORDS))

#: Line kind -> the frame columns it fills, in order of its numbers.
LINE_KINDS: dict[str, tuple[str, ...]] = {
    "T_inside_finish": ("t_inside_finish_cycles",),
    "T_wait": ("t_wait_cycles",),
    "T_outside_finish": ("t_outside_finish_cycles",),
    "T_sends": ("sends_count", "t_sends_cycles"),
    "T_send_in_process": ("send_in_process_count", "t_send_in_process_cycles"),
    "T_process": ("process_count", "t_process_cycles"),
    "warning": ("total_warning",),
    "tcomm_cycles": (
        "tcomm_main_cycles",
        "tcomm_comm_cycles",
        "tcomm_proc_cycles",
        "tcomm_total_cycles",
    ),
    "tcomm_fracs": OVERALL_FRAC_COLUMNS,
}
KIND_CODES = {name: code for code, name in enumerate(LINE_KINDS)}
_WARNING = KIND_CODES["warning"]
_REQUIRED = tuple(code for code in range(len(LINE_KINDS)) if code != _WARNING)

_I, _F = 0, 1  # number slots of a template: integer, fraction
#: The lines as printed, by kind code (body after ``<label> [PE<i>] ``).
TEMPLATES: tuple[tuple[bytes | int, ...], ...] = (
    (b"T_inside_finish (start - done): ", _I, b" cycles"),
    (b"T_wait (done - finish): ", _I, b" cycles"),
    (b"T_outside_finish (start - finish): ", _I, b" cycles"),
    (b"T_sends (count=", _I, b"): ", _I, b" cycles"),
    (b"T_send_in_process (count=", _I, b"): ", _I, b" cycles"),
    (b"T_process (count=", _I, b"): ", _I, b" cycles"),
    (b"T_TOTAL would be much bigger/smaller than T_finish",),
    (b"TCOMM_PROFILING (T_MAIN, T_COMM, T_PROC, T_TOTAL), ", _I, b", ", _I, b", ", _I, b", ", _I),
    (
        b"TCOMM_PROFILING (T_MAIN/T_TOTAL, T_COMM/T_TOTAL, T_PROC/T_TOTAL), ",
        _F,
        b", ",
        _F,
        b", ",
        _F,
    ),
)
_MAX_SLOTS = 4
_PAD = 96  # zero bytes after a block: reads past a line's end stay inside
_MAX_DIGITS = 18  # every 18-digit number fits int64
_MAX_FRAC_DIGITS = 15  # digits of a fraction: exact in float64 as an integer
_MAX_PE_DIGITS = 7
_MAX_LABEL = 256
_POW10 = 10 ** np.arange(_MAX_DIGITS + 1, dtype=np.int64)
_MASKS = [np.uint64((1 << (8 * k)) - 1) for k in range(9)]
_WORD_KEYS = {
    int.from_bytes(t[0][:8], "little"): code  # type: ignore[index]
    for code, t in enumerate(TEMPLATES)
    if code != KIND_CODES["tcomm_fracs"]
}
_FRACS_AT = len(b"TCOMM_PROFILING (T_MAIN")  # ',' (cycles) or '/' (fractions)
_LF, _CR, _LBRACKET, _RBRACKET, _SPACE = 10, 13, ord("["), ord("]"), ord(" ")
_P, _E, _DOT, _MINUS = ord("P"), ord("E"), ord("."), ord("-")

I64 = NDArray[np.int64]


@dataclass
class FastBlock:
    """What :func:`canonical_block` read from a block."""

    new_labels: list[str]  # labels first seen in the block, in order
    label: NDArray[np.int32]  # per profile line, ids in first-seen order
    pe: I64
    kind: NDArray[np.int8]
    values: I64  # (lines, 4): numbers in template order, fractions as float64 bits
    lines: int  # all lines of the block
    blank: int
    output: int  # program output lines
    examples: list[tuple[int, str]] = field(default_factory=list)  # first output lines


def canonical_block(
    block: bytes,
    first_line: int,
    labels: Mapping[str, int],
    num_pes: int | None,
    shown: int,
    shown_text: Callable[[bytes], str],
) -> FastBlock | None:
    """Read ``block`` (whole lines, ending with a line end), or None.

    ``first_line`` is the number of its first line; ``labels`` the label ids
    given so far (not modified: new ones are returned); ``shown`` the number
    of program output lines kept as examples.
    """
    if b"\x00" in block or b"\x1b" in block:
        return None  # NUL bytes are problems; escapes change what a line shows
    size = len(block)
    a = np.frombuffer(block + bytes(_PAD), dtype=np.uint8)
    words = np.ndarray((len(a) - 7,), dtype="<u8", buffer=a, strides=(1,))
    body = a[:size]
    newlines = np.flatnonzero(body == _LF)
    starts = np.empty(len(newlines), dtype=np.int64)
    starts[0] = 0
    starts[1:] = newlines[:-1] + 1
    ends = _trimmed_ends(a, body, starts, newlines)
    if ends is None:
        return None
    brackets = np.flatnonzero(body == _LBRACKET)
    opens = brackets[(a[brackets + 1] == _P) & (a[brackets + 2] == _E)]
    line = np.searchsorted(newlines, opens)
    if len(line) > 1 and not (np.diff(line) > 0).all():
        return None  # two "[PE" on a line
    if not _plain_labels(body, newlines, brackets, line):
        return None
    pe, body_at = _pe_ids(a, words, opens, num_pes)
    if pe is None or body_at is None:
        return None
    parsed = _bodies(a, words, body_at, ends[line])
    if parsed is None:
        return None
    kind, values = parsed
    named = _labels(block, words, starts[line], opens, labels)
    if named is None:
        return None
    new_labels, label = named
    out = FastBlock(new_labels, label, pe, kind, values, len(newlines), 0, 0)
    others = np.ones(len(newlines), dtype=bool)
    others[line] = False
    for index in np.flatnonzero(others).tolist():
        raw = block[starts[index] : ends[index]]
        if not raw.strip():
            out.blank += 1
            continue
        if maybe_profile_line(raw):
            return None
        out.output += 1
        if len(out.examples) < shown:
            out.examples.append((first_line + index, shown_text(raw)))
    return out


def maybe_profile_line(line: bytes) -> bool:
    """Could ``line``, which holds no ``[PE``, still be a profile line whose
    PE tag is malformed (``[pe3]``, ``[PE 3]``)? True when a ``]`` is
    followed, anywhere after, by a body name.

    Looser than the line-by-line reader's own test, so that both routes send
    every such line to that one test and never count it as program output
    on their own; a search, not a pattern with ``.*``, so that a line of a
    million ``]`` is still read in linear time.
    """
    close = line.find(b"]")
    return close >= 0 and _BODY_WORD.search(line, close) is not None


def _trimmed_ends(
    a: NDArray[np.uint8], body: NDArray[np.uint8], starts: I64, newlines: I64
) -> I64 | None:
    """Line ends without their trailing ``\\r`` (None: a ``\\r`` elsewhere)."""
    ends = newlines.copy()
    crs = np.flatnonzero(body == _CR)
    if not len(crs):
        return ends
    after = a[crs + 1]
    if not ((after == _CR) | (after == _LF)).all():
        return None  # a carriage return inside a line: what it shows is another story
    while True:
        more = (ends > starts) & (a[ends - 1] == _CR)
        if not more.any():
            return ends
        ends[more] -= 1


def _plain_labels(body: NDArray[np.uint8], newlines: I64, brackets: I64, line: I64) -> bool:
    """Profile lines: printable ASCII, one ``[`` (a label without escapes or brackets)."""
    if not len(line):
        return True
    per_line = np.bincount(np.searchsorted(newlines, brackets), minlength=len(newlines))
    if (per_line[line] != 1).any():
        return False
    odd = np.flatnonzero(((body < _SPACE) & (body != _LF) & (body != _CR)) | (body > 126))
    return not np.isin(np.searchsorted(newlines, odd), line).any()


def _pe_ids(
    a: NDArray[np.uint8], words: NDArray[np.uint64], opens: I64, num_pes: int | None
) -> tuple[I64 | None, I64 | None]:
    value, digits = _digits(a, opens + 3, _MAX_PE_DIGITS + 1)
    close = opens + 3 + digits
    ok = (digits >= 1) & (digits <= _MAX_PE_DIGITS) & (a[close] == _RBRACKET)
    ok &= a[close + 1] == _SPACE
    limit = PE_LIMIT if num_pes is None else min(PE_LIMIT, num_pes)
    if not ok.all() or (len(value) and int(value.max()) >= limit):
        return None, None  # the line-by-line reader skips the line, or raises
    return value, close + 2


def _digits(a: NDArray[np.uint8], at: I64, most: int) -> tuple[I64, I64]:
    """Value and count of the (up to ``most``) digits at each of ``at``."""
    value = np.zeros(len(at), dtype=np.int64)
    count = np.zeros(len(at), dtype=np.int64)
    going = np.ones(len(at), dtype=bool)
    for j in range(most):
        digit = a[at + j].astype(np.int64) - 48
        going &= (digit >= 0) & (digit <= 9)
        if not going.any():
            break
        value = np.where(going, value * 10 + digit, value)
        count += going
    return value, count


def _bodies(
    a: NDArray[np.uint8], words: NDArray[np.uint64], at: I64, ends: I64
) -> tuple[NDArray[np.int8], I64] | None:
    """Kind and numbers of every profile line (None: one is not as printed)."""
    first = words[at]
    kind = np.full(len(at), -1, dtype=np.int8)
    for key, code in _WORD_KEYS.items():
        kind[first == np.uint64(key)] = code
    fracs = (kind == KIND_CODES["tcomm_cycles"]) & (a[at + _FRACS_AT] == ord("/"))
    kind[fracs] = KIND_CODES["tcomm_fracs"]
    if (kind < 0).any():
        return None
    values = np.zeros((len(at), _MAX_SLOTS), dtype=np.int64)
    for code, template in enumerate(TEMPLATES):
        rows = np.flatnonzero(kind == code)
        if not len(rows):
            continue
        pos = at[rows]
        slot = 0
        for item in template:
            if isinstance(item, bytes):
                if not _literal(words, pos, item):
                    return None
                pos = pos + len(item)
                continue
            number = _int(a, pos) if item == _I else _frac(a, pos)
            if number is None:
                return None
            values[rows, slot], pos = number
            slot += 1
        if not (pos == ends[rows]).all():
            return None
    return kind, values


def _literal(words: NDArray[np.uint64], pos: I64, text: bytes) -> bool:
    for j in range(0, len(text), 8):
        piece = text[j : j + 8]
        mask = _MASKS[len(piece)]
        if not ((words[pos + j] & mask) == np.uint64(int.from_bytes(piece, "little"))).all():
            return False
    return True


def _int(a: NDArray[np.uint8], pos: I64) -> tuple[I64, I64] | None:
    negative = a[pos] == _MINUS
    pos = pos + negative
    value, count = _digits(a, pos, _MAX_DIGITS + 1)
    if not ((count >= 1) & (count <= _MAX_DIGITS)).all():
        return None
    if int(value.max()) > MAX_OVERALL_VALUE:
        return None  # the line-by-line reader skips it as too large
    return np.where(negative, -value, value), pos + count


def _frac(a: NDArray[np.uint8], pos: I64) -> tuple[I64, I64] | None:
    """``[-]<digits>.<digits>``, as the float64 bits of its correctly rounded value."""
    negative = a[pos] == _MINUS
    pos = pos + negative
    whole, count = _digits(a, pos, _MAX_FRAC_DIGITS + 1)
    dot = pos + count
    if not ((count >= 1) & (a[dot] == _DOT)).all():
        return None
    part, decimals = _digits(a, dot + 1, _MAX_FRAC_DIGITS + 1)
    if not ((decimals >= 1) & (count + decimals <= _MAX_FRAC_DIGITS)).all():
        return None
    # an integer below 2**53 over an exact power of ten: IEEE division rounds
    # correctly, as float() of the text does
    value = (whole * _POW10[decimals] + part).astype(np.float64) / _POW10[decimals].astype(
        np.float64
    )
    value = np.where(negative, -value, value)
    return value.view(np.int64), dot + 1 + decimals


def _labels(
    block: bytes, words: NDArray[np.uint64], starts: I64, opens: I64, labels: Mapping[str, int]
) -> tuple[list[str], NDArray[np.int32]] | None:
    """Label id of each profile line: text compared with the line before, the
    (few) changes looked up."""
    n = len(starts)
    size = opens - starts
    if n and int(size.max()) > _MAX_LABEL:
        return None
    same = np.zeros(n, dtype=bool)
    if n > 1:
        same[1:] = size[1:] == size[:-1]
        for j in range(0, int(size.max()), 8):
            rest = np.clip(size[1:] - j, 0, 8)
            mask = np.asarray(_MASKS, dtype=np.uint64)[rest]
            top = len(words) - 1  # a shorter label's mask is 0 where this reads
            here = words[np.minimum(starts[1:] + j, top)] & mask
            same[1:] &= here == (words[np.minimum(starts[:-1] + j, top)] & mask)
    changes = np.flatnonzero(~same)
    new: dict[str, int] = {}
    ids = np.empty(len(changes), dtype=np.int32)
    for i, (start, stop) in enumerate(
        zip(starts[changes].tolist(), opens[changes].tolist(), strict=True)
    ):
        text = block[start:stop].decode("ascii").strip()
        known = labels.get(text)
        if known is None:
            known = new.setdefault(text, len(labels) + len(new))
        ids[i] = known
    label = ids[np.cumsum(~same) - 1] if n else np.zeros(0, dtype=np.int32)
    return list(new), label


class Records:
    """Profile lines read, as columns in file order; :meth:`frame` makes the rows.

    Rows are keyed by (label, run, pe): a line of a kind its (label, PE)
    already has starts a new run; the optional warning line belongs to the
    latest run of its (label, PE). Rows in order of label (first seen), run, PE.
    """

    def __init__(self) -> None:
        self.labels: dict[str, int] = {}
        self._chunks: list[tuple[NDArray[np.int32], I64, NDArray[np.int8], I64]] = []
        self._pending: list[tuple[int, int, int, tuple[object, ...]]] = []

    def add(self, label: str, pe: int, kind: str, numbers: tuple[object, ...]) -> None:
        """One line read by the line-by-line reader."""
        code = self.labels.setdefault(label, len(self.labels))
        self._pending.append((code, pe, KIND_CODES[kind], numbers))

    def add_block(self, block: FastBlock) -> None:
        """The lines of a block read by :func:`canonical_block`."""
        self._flush()
        for text in block.new_labels:
            self.labels.setdefault(text, len(self.labels))
        self._chunks.append((block.label, block.pe, block.kind, block.values))

    def _flush(self) -> None:
        if not self._pending:
            return
        n = len(self._pending)
        values = np.zeros((n, _MAX_SLOTS), dtype=np.int64)
        for i, (_, _, code, numbers) in enumerate(self._pending):
            if code == KIND_CODES["tcomm_fracs"]:
                values[i, : len(numbers)] = np.asarray(numbers, dtype=np.float64).view(np.int64)
            elif code != _WARNING:
                values[i, : len(numbers)] = np.asarray(numbers, dtype=np.int64)
        label, pe, kind, _ = zip(*self._pending, strict=True)
        self._chunks.append(
            (
                np.asarray(label, dtype=np.int32),
                np.asarray(pe, dtype=np.int64),
                np.asarray(kind, dtype=np.int8),
                values,
            )
        )
        self._pending = []

    def frame(self) -> pd.DataFrame:
        """One row per (label, run, pe), columns :data:`OVERALL_COLUMNS`."""
        self._flush()
        chunks = self._chunks or [
            (
                np.zeros(0, np.int32),
                np.zeros(0, np.int64),
                np.zeros(0, np.int8),
                np.zeros((0, _MAX_SLOTS), np.int64),
            )
        ]
        label = np.concatenate([c[0] for c in chunks])
        pe = np.concatenate([c[1] for c in chunks])
        kind = np.concatenate([c[2] for c in chunks])
        values = np.concatenate([c[3] for c in chunks])
        self._chunks = []
        run = _runs(label, pe, kind)
        order = np.lexsort((pe, run, label))
        new = np.ones(len(order), dtype=bool)
        sl, sr, sp = label[order], run[order], pe[order]
        new[1:] = (sl[1:] != sl[:-1]) | (sr[1:] != sr[:-1]) | (sp[1:] != sp[:-1])
        row = np.empty(len(order), dtype=np.int64)
        row[order] = np.cumsum(new) - 1
        rows = int(new.sum())
        names = np.empty(len(self.labels), dtype=object)
        names[:] = list(self.labels)
        data: dict[str, object] = {
            "label": pd.Series(names[sl[new]], dtype=object),
            "run": sr[new].astype(np.int64),
            "pe": sp[new].astype(np.int64),
        }
        for code, columns in enumerate(LINE_KINDS.values()):
            at = np.flatnonzero(kind == code)
            where = row[at]
            if code == _WARNING:
                flags = np.zeros(rows, dtype=bool)
                flags[where] = True
                data["total_warning"] = flags
                continue
            for slot, column in enumerate(columns):
                if column in OVERALL_FRAC_COLUMNS:
                    fracs = np.full(rows, np.nan)
                    fracs[where] = values[at, slot].view(np.float64)
                    data[column] = fracs
                else:
                    ints = np.zeros(rows, dtype=np.int64)
                    absent = np.ones(rows, dtype=bool)
                    ints[where] = values[at, slot]
                    absent[where] = False
                    data[column] = pd.arrays.IntegerArray(ints, absent)
        data["profile_lines"] = np.bincount(row, minlength=rows).astype(np.int64)
        return pd.DataFrame(data, columns=list(OVERALL_COLUMNS))


def _runs(label: NDArray[np.int32], pe: I64, kind: NDArray[np.int8]) -> I64:
    """Run of each line: earlier lines of its kind for its (label, PE); a
    warning joins the latest run begun."""
    n = len(kind)
    group = label.astype(np.int64) * PE_LIMIT + pe
    order = np.argsort(group, kind="stable")
    sorted_kind = kind[order]
    starts = np.ones(n, dtype=bool)
    sorted_group = group[order]
    starts[1:] = sorted_group[1:] != sorted_group[:-1]
    first = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    run = np.zeros(n, dtype=np.int64)
    latest = np.zeros(n, dtype=np.int64)
    for code in _REQUIRED:
        hit = sorted_kind == code
        if not hit.any():
            continue
        seen = np.cumsum(hit)
        seen -= seen[first] - hit[first]  # lines of this kind so far in the group
        run[hit] = seen[hit] - 1
        np.maximum(latest, seen, out=latest)
    warning = sorted_kind == _WARNING
    run[warning] = np.maximum(latest[warning] - 1, 0)
    out = np.empty(n, dtype=np.int64)
    out[order] = run
    return out

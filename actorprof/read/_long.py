"""Lines too long to be trace lines: found cheaply, never held whole.

No trace or profile line is longer than a few hundred bytes. A line of
megabytes is a file's never-written blocks (NUL bytes without a line end)
or a corrupt number of millions of digits; holding it made memory follow
its length (a 300 MB line: 4 GB). Every route replaces a line longer than
:data:`MAX_LINE_BYTES` by its first bytes and :data:`LONG_LINE_MARK` (one
line still: line numbers do not change), and skips it under
:data:`LONG_LINE`, or under the NUL reason when it starts with NUL bytes.
"""

from __future__ import annotations

__all__ = [
    "LONG_LINE",
    "LONG_LINE_MARK",
    "MAX_LINE_BYTES",
    "cut_long_lines",
    "has_long_line",
    "long_line",
]

#: Longest line read as a line.
MAX_LINE_BYTES = 1 << 20
LONG_LINE = "line too long (over 1 MiB: no trace line is; not held in memory)"
#: What follows the first bytes of a line too long (a NUL byte: no route
#: reads such a line as a trace line).
LONG_LINE_MARK = b"\x00[line too long]"
_HEAD = 256  # the first bytes kept, for the examples
_STRIDE = MAX_LINE_BYTES // 2  # a longer line covers a whole stride


def long_line(pieces: list[bytes]) -> bytes:
    """What stands for a line too long that starts with ``pieces``: its
    first bytes, then :data:`LONG_LINE_MARK` unless they hold NUL bytes
    already (a never-written file: the NUL reason says it better)."""
    head = pieces[0][:_HEAD]
    if len(head) < _HEAD:  # a short first piece: the start goes on in the next ones
        head = b"".join(pieces)[:_HEAD]
    return head if b"\x00" in head else head + LONG_LINE_MARK


def _long_lines(data: bytes | bytearray, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of each line longer than :data:`MAX_LINE_BYTES` in
    ``data[start:end]`` (a line ends before its line end, or at ``end``).

    A search for a line end in each stride of half that length: one or two
    bytes searched per stride of ordinary lines, whatever the data.
    """
    found: list[tuple[int, int]] = []
    at = start
    while at < end:
        stop = min(at + _STRIDE, end)
        if data.find(b"\n", at, stop) >= 0:
            at = stop
            continue
        first = data.rfind(b"\n", start, at) + 1 or start  # the line of this stride
        last = data.find(b"\n", stop, end)
        last = end if last < 0 else last
        if last - first > MAX_LINE_BYTES:
            found.append((first, last))
        at = last + 1
    return found


def has_long_line(data: bytes | bytearray, start: int = 0, end: int | None = None) -> bool:
    """Whether ``data[start:end]`` holds a line longer than :data:`MAX_LINE_BYTES`."""
    end = len(data) if end is None else end
    return end - start > MAX_LINE_BYTES and bool(_long_lines(data, start, end))


def cut_long_lines(block: bytes) -> bytes:
    """``block`` with each line longer than :data:`MAX_LINE_BYTES` replaced
    by :func:`long_line` (its line end kept)."""
    if len(block) <= MAX_LINE_BYTES:
        return block
    spans = _long_lines(block, 0, len(block))
    if not spans:
        return block
    pieces, at = [], 0
    for first, last in spans:
        pieces += [block[at:first], long_line([block[first : first + _HEAD]])]
        at = last
    pieces.append(block[at:])
    return b"".join(pieces)

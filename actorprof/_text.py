"""Text helpers shared by every layer (readers, analyses, reports)."""

from __future__ import annotations

from collections.abc import Hashable
from os import PathLike
from pathlib import Path

__all__ = ["JsonText", "PlainList", "axis_name", "format_ranges", "printable_name", "run_name"]


class PlainList(list):  # type: ignore[type-arg]
    """A list of values already plain for JSON (dicts, lists, str, int,
    float, bool, None; no numpy): the writer passes it through unconverted
    (a 65,536-PE summary has one accounting entry per trace file)."""


class JsonText(str):
    """An item of a :class:`PlainList` already written as compact JSON (``", "``
    and ``": "`` between items and keys, one line): the writer copies it as it
    is (65,536 files' accounting entries written from columns, not dicts)."""


def format_ranges(values: list[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` -> ``"0-2, 5, 7-8"``."""
    parts: list[str] = []
    start = prev = None
    for v in sorted(values):
        if start is None:
            start = prev = v
        elif prev is not None and v == prev + 1:
            prev = v
        else:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = prev = v
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def printable_name(text: str) -> str:
    """A file or phase name with its bytes that are not UTF-8 written as ``\\xNN``.

    Python decodes such bytes of a file name (or a command-line argument) to
    lone surrogates, which no UTF-8 output (a figure title, JSON, HTML) can
    hold. ``PE0_ph<0xff>_send.csv`` has the phase ``ph\\xff``: a plain
    string that is shown, written and chosen with ``--phase`` like any
    other. Names that are valid UTF-8 are returned unchanged.

    Examples
    --------
    >>> printable_name("bfs"), printable_name("ph\\udcff")
    ('bfs', 'ph\\\\xff')
    """
    if text.isascii():
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that did not come from a byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def run_name(path: str | PathLike[str]) -> str:
    """Short name of the run a trace comes from, for figure titles.

    The last two components of the trace's folder (its parent when `path`
    is a file): ``runs/tc_256/logical/PE0_send.csv`` -> ``"tc_256/logical"``.
    """
    folder = Path(path).resolve()
    if folder.is_file() or folder.suffix in (".csv", ".txt"):
        folder = folder.parent
    name = "/".join(folder.parts[-2:]) if len(folder.parts) > 2 else str(folder)
    return printable_name(name)


# Column/index names of the standard frames and how a reader should see them.
_AXIS_NAMES = {
    "src_pe": "source PE",
    "dst_pe": "destination PE",
    "src_node": "source node",
    "dst_node": "destination node",
    "pe": "PE",
    "node": "node",
}


def axis_name(name: Hashable | None, default: str) -> str:
    """Axis label for an index/columns name: ``"src_pe"`` -> ``"source PE"``."""
    if name is None:
        return default
    text = str(name)
    return _AXIS_NAMES.get(text, text.replace("_", " "))

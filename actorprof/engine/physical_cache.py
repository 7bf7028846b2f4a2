"""The cache entry of a physical trace: its sums and line accounting, one file.

One ``.npz`` entry per ``physical.txt`` (and reader options) in the cache
folder's ``physical/`` part (:class:`actorprof.engine.cache.TraceCache`: same
folder, same size cap, same eviction, same ``actorprof cache`` listing). The
entry holds the file's size, modification and change times and inode: a
file edited or replaced is read again. An entry that cannot be read or does
not hold together is ignored with a note, and rewritten; reads that end in
an error are not stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..analyze.physical_partial import PhysicalPartial
from ..read import FileReport, ReadReport, SkippedLine, file_stat
from ..schema import MAX_MSG_BYTES, SEND_TYPES
from .cache import TraceCache, _touch, _why

__all__ = ["load_physical", "save_physical"]

#: Bump when the entry layout, the physical map step's output or the rule for
#: stray PE ids (which lines an entry skipped) changes.
PHYSICAL_CACHE_FORMAT = 3
_ARRAYS = ("links", "calls", "nbytes", "sized_links", "sizes", "sized_calls")


def _options(num_pes: int | None, sized: bool) -> dict[str, Any]:
    # --num-pes decides which reads fail (and where): part of the key
    return {"format": PHYSICAL_CACHE_FORMAT, "num_pes": num_pes, "sized": sized}


def load_physical(
    cache: TraceCache, file: Path, *, num_pes: int | None, sized: bool, report: ReadReport
) -> tuple[PhysicalPartial, FileReport, list[str]] | None:
    """The cached sums, accounting and warnings of ``file`` if it is unchanged, else None."""
    key = cache.key(file, phase=None, options=_options(num_pes, sized))
    if key is None:
        return None
    entry = cache._entry(key)
    if not entry.exists():
        return None
    try:
        partial, file_report, warnings, stat = _read(entry, key, file, sized)
    except Exception as exc:  # any damage: ignored, read again, rewritten
        report.note(
            f"cache entry {entry} is damaged ({_why(exc)}): ignored, the trace is read again"
        )
        return None
    if stat != file_stat(file):
        return None
    _touch(entry)
    return partial, file_report, warnings


def save_physical(
    cache: TraceCache,
    file: Path,
    partial: PhysicalPartial,
    file_report: FileReport,
    warnings: list[str],
    *,
    num_pes: int | None,
    stat: tuple[int, int, int, int] | None,
    report: ReadReport,
) -> None:
    """Store the read of ``file`` (``stat``: the file's, taken before the read;
    ``warnings``: the read's own, said again on each hit), then keep the
    cache under its cap. Errors while writing are ignored."""
    key = cache.key(file, phase=None, options=_options(num_pes, partial.sized))
    if key is None or stat is None or stat != file_stat(file):
        return  # changed while it was read: not stored
    meta = {
        "key": key,
        "path": file_report.path,
        "skipped": file_report.skipped,
        "examples": [[e.line, e.reason, e.text] for e in file_report.examples],
        "warnings": warnings,
    }
    counts = [file_report.lines_read, file_report.lines_blank, file_report.bytes_read]
    arrays = {name: getattr(partial, name) for name in _ARRAYS}
    arrays["max_bytes"] = partial.max_bytes
    arrays["counts"] = np.array([partial.lines, *counts], dtype=np.int64)
    arrays["stat"] = np.array(stat, dtype=np.int64)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    entry = cache._entry(key)
    cache.write_entry(entry, arrays, report)


def _read(
    entry: Path, key: str, file: Path, sized: bool
) -> tuple[PhysicalPartial, FileReport, list[str], tuple[int, ...]]:
    """An entry's contents, checked to hold together (else an exception)."""
    with np.load(entry, allow_pickle=False) as npz:
        arrays = {name: np.asarray(npz[name]) for name in _ARRAYS}
        max_bytes = np.asarray(npz["max_bytes"], dtype=np.int64)
        counts = np.asarray(npz["counts"], dtype=np.int64)
        stat = tuple(int(v) for v in np.asarray(npz["stat"], dtype=np.int64))
        meta = json.loads(bytes(npz["meta"]).decode())
    if meta["key"] != key or meta["path"] != str(file):
        raise ValueError("key mismatch")
    links = arrays["links"].astype(np.uint64)
    sized_links = arrays["sized_links"].astype(np.uint64)
    ints = {n: arrays[n].astype(np.int64) for n in ("calls", "nbytes", "sizes", "sized_calls")}
    if not (
        counts.shape == (4,)
        and len(stat) == 4
        and max_bytes.shape == (len(SEND_TYPES),)
        and len(links) == len(ints["calls"]) == len(ints["nbytes"])
        and len(sized_links) == len(ints["sizes"]) == len(ints["sized_calls"])
        and (sized or not len(sized_links))
    ):
        raise ValueError("inconsistent shapes")
    for keys in (links, sized_links):
        if keys.size and int((keys >> np.uint64(62)).max()) >= len(SEND_TYPES):
            raise ValueError("send type out of range")
    if links.size > 1 and not bool((links[1:] > links[:-1]).all()):
        raise ValueError("links not sorted")
    if (counts < 0).any():
        raise ValueError("negative counts")
    if (ints["calls"] < 1).any() or (ints["nbytes"] < 0).any() or (ints["sized_calls"] < 1).any():
        raise ValueError("negative sums")
    if (ints["sizes"] < 0).any() or (ints["sizes"] > MAX_MSG_BYTES).any():
        raise ValueError("buffer sizes out of range")
    if (max_bytes < 0).any() or (max_bytes > MAX_MSG_BYTES).any():
        raise ValueError("buffer sizes out of range")
    if int(ints["calls"].sum()) != int(counts[0]) or counts[0] != counts[1]:
        raise ValueError("line counts disagree")
    if sized and int(ints["sized_calls"].sum()) != int(counts[0]):
        raise ValueError("line counts disagree")
    partial = PhysicalPartial(
        links,
        ints["calls"],
        ints["nbytes"],
        max_bytes,
        int(counts[0]),
        sized,
        sized_links,
        ints["sizes"],
        ints["sized_calls"],
    )
    file_report = FileReport(
        str(file),
        lines_read=int(counts[1]),
        lines_blank=int(counts[2]),
        bytes_read=int(counts[3]),
        skipped={str(k): int(v) for k, v in meta["skipped"].items()},
        examples=[SkippedLine(int(e[0]), str(e[1]), str(e[2])) for e in meta["examples"]],
    )
    return partial, file_report, [str(w) for w in meta["warnings"]], stat

"""Cache of reduced PAPI traces: a second read of an unchanged trace skips the files.

One entry per trace folder (and phase, counter names and PE limit), in the
``papi`` folder of :class:`~actorprof.engine.cache.TraceCache` (same place,
size cap and ``actorprof cache`` command as the logical entries). An entry
holds what the map steps returned: the region table, the largest sender PE,
each file's line accounting (skipped-line examples included) and the
warnings of the read, in file order. It is used only when every file of the
trace is the one it was made from (size, modification and change times,
inode): a PAPI read is small once reduced, and one changed file means a new
read. A damaged entry is ignored, with a note, and rewritten.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..analyze.breakdown import sum_regions
from ..read import (
    FileColumns,
    FileReport,
    ReadReport,
    SkippedLine,
    TraceFile,
    file_columns,
    files_and_bytes_of,
)
from .cache import TraceCache, _planned_stats, _touch, _why

__all__ = ["PAPI_CACHE_FORMAT", "load_papi", "save_papi"]

#: Bump when the entry layout or the PAPI map step's output changes.
PAPI_CACHE_FORMAT = 1
_ACCOUNTING = ("lines_read", "lines_blank", "bytes_read")
_INT32 = 2**31
_SUM_END = 2**62


def _entry(
    cache: TraceCache, trace: Path, phase: str | None, options: dict[str, Any]
) -> tuple[str, Path] | None:
    key = cache.key(trace, phase=phase, options={**options, "papi_format": PAPI_CACHE_FORMAT})
    return None if key is None else (key, cache.folder / cache.kind / f"{key}.npz")


def load_papi(
    cache: TraceCache,
    trace: Path,
    files: list[TraceFile],
    *,
    phase: str | None,
    options: dict[str, Any],
    counters: tuple[str, ...],
    report: ReadReport,
) -> tuple[pd.DataFrame, int] | None:
    """The region table and largest sender of an unchanged trace (None: read it).

    On a hit, ``report`` receives the files' accounting and the warnings as
    the read that made the entry gave them.
    """
    found = _entry(cache, trace, phase, options)
    if found is None or not found[1].exists():
        return None
    key, entry = found
    try:
        loaded = _read(entry, key, files, counters, _planned_stats(files, report))
    except Exception as exc:  # any damage: ignored, read again, rewritten
        report.note(
            f"cache entry {entry} is damaged ({_why(exc)}): ignored, the trace is read again"
        )
        return None
    if loaded is None:
        return None
    regions, max_src, accounting, extras, warnings = loaded
    # the files that skipped nothing as columns, between those that did
    edges = sorted({0, len(files), *(int(i) for i in extras), *(int(i) + 1 for i in extras)})
    for start, stop in itertools.pairwise(edges):
        if str(start) not in extras:
            report.add_files([file_columns(files[start:stop], *accounting[start:stop].T.copy())])
            continue
        f = files[start]
        skipped, examples = extras[str(start)]
        report.add_files(
            [
                FileReport(
                    f.path_text,
                    pe=f.pe,
                    phase=f.phase,
                    lines_read=int(accounting[start, 0]),
                    lines_blank=int(accounting[start, 1]),
                    bytes_read=int(accounting[start, 2]),
                    skipped={str(k): int(v) for k, v in skipped.items()},
                    examples=[SkippedLine(int(e[0]), str(e[1]), str(e[2])) for e in examples],
                )
            ]
        )
    report.warnings.extend(warnings)
    _touch(entry)
    return regions, max_src


def _read(
    entry: Path,
    key: str,
    files: list[TraceFile],
    counters: tuple[str, ...],
    now: np.ndarray,
) -> tuple[pd.DataFrame, int, np.ndarray, dict[str, Any], list[str]] | None:
    """An entry's contents (None: made from other files, or a file changed
    since: ``now`` holds each file's stat), checked to hold together (else
    an exception)."""
    with np.load(entry, allow_pickle=False) as npz:
        meta = json.loads(bytes(npz["meta"]).decode())
        stats = np.asarray(npz["stats"], dtype=np.int64)
        accounting = np.asarray(npz["accounting"], dtype=np.int64)
        table = np.asarray(npz["regions"], dtype=np.int64)
    if meta["key"] != key:
        raise ValueError("key mismatch")
    names = meta["names"]
    if names != [f.name for f in files]:
        return None
    if stats.shape != now.shape or not bool((stats == now).all()):
        return None
    columns = ["pe", "mailbox", "lines", "num_sends", *counters]
    if accounting.shape != (len(files), len(_ACCOUNTING)) or table.shape[1:] != (len(columns),):
        raise ValueError("inconsistent shapes")
    if (accounting < 0).any() or (table[:, 2:] < 0).any() or (table[:, 2:] >= _SUM_END).any():
        raise ValueError("counts out of range")
    # a PE's regions together as the read checked them (check_papi_totals)
    per_pe = pd.DataFrame(table[:, 3:].astype(np.float64)).groupby(table[:, 0]).sum()
    if len(per_pe) and float(per_pe.to_numpy().max()) >= _SUM_END:
        raise ValueError("a PE's counts beyond 64-bit sums")
    if (table[:, 0] < 0).any() or (np.abs(table[:, :2]) >= _INT32).any():
        raise ValueError("PE or mailbox id out of range")
    max_src = int(meta["max_src_pe"])
    if not -1 <= max_src < _INT32:
        raise ValueError("sender PE out of range")
    warnings = [str(w) for w in meta["warnings"]]
    regions = sum_regions([pd.DataFrame(table, columns=columns)], counters=counters)
    return regions, max_src, accounting, meta["extras"], warnings


def save_papi(
    cache: TraceCache,
    trace: Path,
    files: list[TraceFile],
    *,
    phase: str | None,
    options: dict[str, Any],
    counters: tuple[str, ...],
    regions: pd.DataFrame,
    max_src_pe: int,
    reports: list[FileReport | FileColumns],
    warnings: list[str],
    report: ReadReport,
) -> None:
    """Store a whole read as the trace's entry, then keep the cache under its
    cap (errors while writing are ignored: it is a cache). Each file's stat
    is the one taken before the read (``report.stats_planned``): a file
    written while it was read does not match it next time, and is read
    again."""
    found = _entry(cache, trace, phase, options)
    stats = _planned_stats(files, report)
    if found is None or (stats[:, 0] < 0).any() or files_and_bytes_of(reports)[0] != len(files):
        return
    key, entry = found
    extras: dict[str, Any] = {}
    parts = []  # the accounting, a block of rows per entry
    at = 0
    for r in reports:
        if isinstance(r, FileColumns):
            parts.append(np.stack([getattr(r, name) for name in _ACCOUNTING], axis=1))
            at += len(r)
            continue
        if r.skipped or r.examples:
            extras[str(at)] = [r.skipped, [[e.line, e.reason, e.text] for e in r.examples]]
        parts.append(np.array([[getattr(r, name) for name in _ACCOUNTING]]))
        at += 1
    meta = {
        "key": key,
        "names": [f.name for f in files],
        "max_src_pe": max_src_pe,
        "warnings": warnings,
        "extras": extras,
    }
    columns = ["pe", "mailbox", "lines", "num_sends", *counters]
    accounting = np.concatenate(parts) if parts else np.zeros((0, len(_ACCOUNTING)))
    arrays = {
        "regions": regions[columns].to_numpy(dtype=np.int64).reshape(len(regions), len(columns)),
        "stats": stats,
        "accounting": accounting.astype(np.int64).reshape(len(files), len(_ACCOUNTING)),
        "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
    }
    cache.write_entry(entry, arrays, report)

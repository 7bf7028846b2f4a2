"""Cache of reduced trace files, so a second run skips reading them.

One entry per trace file holds its map result: the sparse partial matrices,
the (PE, node) pairs, times, and the file's line accounting (the
:class:`FileReport`, skipped-line examples included). Entries are keyed by
the file's absolute path, size and modification time (ns), actorprof's
version and the reader's options, so a changed file or a new actorprof is a
miss. They live in a user cache folder (``$XDG_CACHE_HOME/actorprof`` or
``~/.cache/actorprof``, or ``--cache-dir``), never in the trace folder
unless asked. An entry that cannot be read is ignored and rewritten.
Writes are atomic (temporary file, then rename), so concurrent runs are safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..analyze.matrix import CommPartial
from ..read import FileReport, SkippedLine
from .map import FileResult

__all__ = ["CACHE_FORMAT", "TraceCache", "default_cache_dir"]

#: Bump when the entry layout or the map step's output changes.
CACHE_FORMAT = 1
_ARRAYS = ("src", "dst", "counts", "nbytes", "pe", "node")


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/actorprof``, else ``~/.cache/actorprof``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "actorprof"


class TraceCache:
    """Reduced-file entries under ``folder/<kind>/``."""

    def __init__(self, folder: str | PathLike[str] | None = None, *, kind: str = "logical") -> None:
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self.kind = kind

    def key(self, path: Path, options: dict[str, Any]) -> str | None:
        """The entry name of ``path`` as it is now (None if it cannot be stat'ed)."""
        try:
            resolved = path.resolve()
            st = resolved.stat()
        except OSError:
            return None
        ident = json.dumps(
            {
                "path": str(resolved),
                "size": st.st_size,
                "mtime_ns": st.st_mtime_ns,
                "version": __version__,
                "format": CACHE_FORMAT,
                "kind": self.kind,
                "options": options,
            },
            sort_keys=True,
        )
        return hashlib.sha256(ident.encode()).hexdigest()

    def _file(self, key: str) -> Path:
        return self.folder / self.kind / key[:2] / f"{key}.npz"

    def load(self, key: str, path: Path, *, pe: int | None, phase: str | None) -> FileResult | None:
        """The cached result, or None (missing, unreadable or not matching)."""
        entry = self._file(key)
        try:
            with np.load(entry, allow_pickle=False) as npz:
                arrays = {name: np.asarray(npz[name], dtype=np.int64) for name in _ARRAYS}
                meta = json.loads(bytes(npz["meta"]).decode())
            if meta["key"] != key:
                raise ValueError("key mismatch")
            report = FileReport(
                str(path),
                pe=pe,
                phase=phase,
                lines_read=int(meta["lines_read"]),
                lines_blank=int(meta["lines_blank"]),
                bytes_read=int(meta["bytes_read"]),
                skipped={str(k): int(v) for k, v in meta["skipped"].items()},
                examples=[SkippedLine(int(e[0]), str(e[1]), str(e[2])) for e in meta["examples"]],
            )
            partial = CommPartial(
                **arrays,
                messages=int(meta["messages"]),
                time_min=meta["time_min"],
                time_max=meta["time_max"],
            )
            result = FileResult(report, partial, int(meta["mismatched"]))
        except Exception:  # any damage: a miss, recomputed and rewritten
            return None
        return result

    def save(self, key: str, result: FileResult) -> None:
        """Store ``result`` (errors while writing are ignored: it is a cache)."""
        r = result.report
        meta = {
            "key": key,
            "lines_read": r.lines_read,
            "lines_blank": r.lines_blank,
            "bytes_read": r.bytes_read,
            "skipped": r.skipped,
            "examples": [[e.line, e.reason, e.text] for e in r.examples],
            "messages": result.partial.messages,
            "time_min": result.partial.time_min,
            "time_max": result.partial.time_max,
            "mismatched": result.mismatched,
        }
        entry = self._file(key)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    np.savez(
                        out,
                        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                        **{name: getattr(result.partial, name) for name in _ARRAYS},
                    )
                os.replace(tmp, entry)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass

"""PE ids far beyond the others, where the lines name the run's PEs.

The logical and PAPI traces bound their PE ids by their files (a file per
PE). ``physical.txt`` and ``overall.txt`` are one file for the whole run:
their PE ids come from their lines, and one corrupt line must not make a
run of millions of PEs (per-PE tables cost O(N)). :func:`stray_pes` finds
the ids to set aside when ``--num-pes`` is not given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..schema import PE_ID_CAP
from ._report import FileReport
from ._scan import PE_LIMIT_PREFIX

__all__ = ["FAR_PE_FLOOR", "StrayPes", "stray_pes"]


#: PE ids below this are never far beyond the others (the logical trace's
#: floor: a run of up to 64 PEs is never questioned).
FAR_PE_FLOOR = 64


@dataclass(frozen=True)
class StrayPes:
    """PE ids far beyond the others of a trace read without ``--num-pes``
    (:func:`stray_pes`): the lines naming an id from ``limit`` on are skipped.

    ``first``..``last``: the lowest and highest PE id below ``limit`` (-1
    when there is none); ``largest``: the highest id from it on. ``capped``:
    ``limit`` is :data:`~actorprof.schema.PE_ID_CAP`, the largest PE id
    read without ``--num-pes``, rather than a gap among the ids.
    """

    limit: int
    first: int
    last: int
    largest: int
    capped: bool = False

    @property
    def reason(self) -> str:
        """The skip reason of the lines naming a stray id."""
        if self.capped:
            return (
                f"{PE_LIMIT_PREFIX}beyond {self.limit - 1:,} (pass --num-pes N if the run "
                "really had more PEs)"
            )
        return (
            f"{PE_LIMIT_PREFIX}far beyond the other PE ids, {self.first}-{self.last} (ids "
            f"from {self.limit:,} on; pass --num-pes N if the run really had more PEs)"
        )

    def warning(self, path: str, first: tuple[int, str, int], report: FileReport) -> str:
        """The warning of a read that skipped them: ``first`` is the (line,
        column, id) of the first line naming one, ``report`` the file's."""
        line, column, value = first
        skipped = report.skipped.get(self.reason, 0)
        if self.capped:
            return (
                f"{path}:{line}: {column} {value:,} is beyond {self.limit - 1:,}, the largest "
                f"PE id read without --num-pes: a stray line? The lines naming a PE id from "
                f"{self.limit:,} on are skipped: {skipped:,} line(s); pass --num-pes N if the "
                "run really had more PEs"
            )
        return (
            f"{path}:{line}: {column} {value:,} is far beyond the other PE ids "
            f"({self.first}-{self.last}): a stray line? PE ids up to {self.largest:,} would "
            f"make a run of {self.largest + 1:,} PEs. The lines naming a PE id from "
            f"{self.limit:,} on are skipped: {skipped:,} line(s); "
            "pass --num-pes N if the run really had more PEs"
        )


def stray_pes(ids: np.ndarray, mentions: Callable[[], np.ndarray] | None = None) -> StrayPes | None:
    """The PE ids far beyond the others among ``ids`` (distinct, ascending), if any.

    The logical trace's rule, where the PE ids come from the lines rather
    than from the files: an id is far beyond the ids below it when it is at
    least ``max(64, 2 x (the id before it + 1))``, as a logical PE id is
    from ``max(64, 2 x the PE files)`` on. The first such gap that splits
    the run (below) from stray ids (a few corrupt lines, not half a run)
    is the limit: the ids above it are fewer than those below, or, with
    ``mentions``, the lines naming them are. One corrupt id, say 16,000,000
    in an 8-PE trace, would otherwise make a run of 16,000,001 PEs, and
    twenty lines of random ids a run of a billion; the ids of a real run,
    consecutive or spread evenly, have no such gap. Whatever the gaps, ids
    from :data:`~actorprof.schema.PE_ID_CAP` on are stray: per-PE tables
    cost O(N), so no value of one line may set N. Vectorized: a sort's worth
    of work, whatever the ids.

    ``mentions``: called only when there is a gap, it returns how many lines
    name each id (as source, destination or both), aligned with ``ids``.
    """
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size == 0 or int(ids[-1]) < FAR_PE_FLOOR:
        return None
    bound = np.maximum(FAR_PE_FLOOR, 2 * (ids[:-1] + 1))
    gaps = np.flatnonzero(ids[1:] >= bound)
    at = ids.size - 1  # the last id kept
    if gaps.size:
        below = gaps + 1  # ids below each gap; ids.size - below above it
        splits = ids.size - below < below
        if mentions is not None:
            lines = np.cumsum(np.asarray(mentions(), dtype=np.int64))
            splits |= lines[-1] - lines[gaps] < lines[gaps]
        hit = np.flatnonzero(splits)
        if hit.size:
            at = int(gaps[hit[0]])
    if int(ids[at]) >= PE_ID_CAP:
        at = int(np.searchsorted(ids, PE_ID_CAP)) - 1
        first, last = (int(ids[0]), int(ids[at])) if at >= 0 else (-1, -1)
        return StrayPes(PE_ID_CAP, first, last, int(ids[-1]), capped=True)
    if at == ids.size - 1:
        return None
    return StrayPes(int(bound[at]), int(ids[0]), int(ids[at]), int(ids[-1]))

"""Messages over time: a streaming, mergeable histogram of send times per PE.

Times are binned on absolute epoch bins of width ``base_s * 2**k``
(computed on whole microseconds, the traces' resolution); the
width doubles (neighbouring bins merge) whenever more than ``max_bins``
distinct time bins are held (fewer with many PEs: the PEs x bins table has at
most ``MAX_CELLS`` cells), so memory stays bounded however long the run,
and two accumulators always merge exactly (bring both to the coarser width,
then add). Timestamps come from each sender's clock (FORMATS.md), so bins
line up across nodes only as well as the nodes' clocks do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._repr import Summarized, count

__all__ = ["Timeline", "TimelineAccumulator", "rebin", "send_timeline"]

_PE_SHIFT = np.int64(1) << np.int64(44)  # key = pe * 2**44 + bin (bin < 2**44)
_PENDING_MIN = 1 << 20  # keys held back before a merge into the state (~16 MB)
#: Largest PEs x time bins table (16 M cells, 128 MB): 4,096 PEs get 4,096 bins.
MAX_CELLS = 1 << 24


@dataclass(frozen=True, repr=False)
class Timeline(Summarized):
    """Messages per PE per time bin.

    Attributes
    ----------
    counts
        Index ``time_s`` (bin start, seconds since ``start_s``), columns
        ``pe`` (every PE 0..N-1), values: messages sent in the bin.
    bin_s
        Bin width in seconds.
    start_s
        Epoch time of the first bin's start.
    untimed
        Messages without a timestamp (5-column lines), per PE.
    """

    counts: pd.DataFrame
    bin_s: float
    start_s: float | None
    untimed: pd.Series

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        return "send times", [
            ("PEs", count(len(self.counts.columns))),
            ("messages", count(int(self.counts.to_numpy().sum()))),
            ("bins", count(len(self.counts))),
            ("s per bin", count(float(self.bin_s))),
        ]

    @property
    def rate(self) -> pd.Series:
        """Total messages per second in each bin."""
        return self.counts.sum(axis=1) / self.bin_s


class TimelineAccumulator:
    """Accumulate (pe, time) pairs chunk by chunk; see the module docstring."""

    def __init__(self, *, base_s: float = 1e-3, max_bins: int = 100_000) -> None:
        if round(base_s * 1e6) < 1 or max_bins < 2:
            raise ValueError("base_s must be at least 1e-6 and max_bins >= 2")
        self.base_s = base_s
        # bins are counted on integer microseconds: a 6-decimal time lies exactly
        # on a bin edge as often as the clock says so, never by float rounding
        self._base_us = round(base_s * 1e6)
        self.max_bins = max_bins
        self.level = 0
        self._keys = np.zeros(0, dtype=np.int64)
        self._counts = np.zeros(0, dtype=np.int64)
        # chunks' (keys, counts) not yet merged into the state: merging every
        # chunk would re-sort the whole state each time (quadratic)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_size = 0
        self._untimed: dict[int, int] = {}
        self.num_pes = 0

    @property
    def bin_limit(self) -> int:
        """Time bins kept: ``max_bins``, fewer for many PEs (the dense table
        has PEs x bins cells, at most ``MAX_CELLS``)."""
        return max(2, min(self.max_bins, MAX_CELLS // max(self.num_pes, 1)))

    @property
    def bin_s(self) -> float:
        return (self._base_us << self.level) / 1e6

    def add(self, frame: pd.DataFrame, *, pe_column: str = "src_pe") -> None:
        """Add a chunk with ``time_s`` and ``pe_column`` (not modified)."""
        if not len(frame):
            return
        pe = frame[pe_column].to_numpy(dtype=np.int64)
        times = frame["time_s"].to_numpy(dtype=np.float64)
        self.num_pes = max(self.num_pes, int(pe.max()) + 1)
        if "dst_pe" in frame:  # PEs that only receive still get a (silent) row
            self.num_pes = max(self.num_pes, int(frame["dst_pe"].max()) + 1)
        timed = np.isfinite(times)
        if not timed.all():
            missing = np.bincount(pe[~timed])
            for i in np.flatnonzero(missing):
                self._untimed[int(i)] = self._untimed.get(int(i), 0) + int(missing[i])
        if not timed.any():
            return
        micros = np.rint(times[timed] * 1e6).astype(np.int64)
        bins = micros // (self._base_us << self.level)
        keys, counts = np.unique(pe[timed] * _PE_SHIFT + bins, return_counts=True)
        self._pending.append((keys, counts))
        self._pending_size += len(keys)
        if self._pending_size > max(_PENDING_MIN, len(self._keys)):
            self._consolidate()

    def merge(self, other: TimelineAccumulator) -> None:
        """Add another accumulator's bins (same ``base_s``)."""
        if other.base_s != self.base_s:
            raise ValueError("cannot merge timelines of different base widths")
        self._consolidate()
        other._consolidate()
        self.num_pes = max(self.num_pes, other.num_pes)
        for pe, n in other._untimed.items():
            self._untimed[pe] = self._untimed.get(pe, 0) + n
        keys, counts = other._keys, other._counts
        if other.level < self.level:
            keys = _coarsen(keys, self.level - other.level)
        elif other.level > self.level:
            self._keys = _coarsen(self._keys, other.level - self.level)
            self.level = other.level
            self._keys, self._counts = _sum_by_key(self._keys, self._counts)
        self._absorb(keys, counts)

    def result(self, num_pes: int | None = None) -> Timeline:
        """The dense table, every PE a column (``num_pes`` pads, never cuts)."""
        self._consolidate()
        n = max(self.num_pes, num_pes or 0)
        pe = self._keys // _PE_SHIFT
        bins = self._keys % _PE_SHIFT
        untimed = pd.Series(
            [self._untimed.get(i, 0) for i in range(n)],
            index=pd.RangeIndex(n, name="pe"),
            name="untimed",
            dtype=np.int64,
        )
        if not len(bins):
            empty = pd.DataFrame(
                np.zeros((0, n), dtype=np.int64),
                index=pd.Index([], dtype=np.float64, name="time_s"),
                columns=pd.RangeIndex(n, name="pe"),
            )
            return Timeline(empty, self.bin_s, None, untimed)
        first = int(bins.min())
        span = int(bins.max()) - first + 1
        table = np.zeros((span, n), dtype=np.int64)
        np.add.at(table, (bins - first, pe), self._counts)
        index = pd.Index(np.arange(span) * self.bin_s, name="time_s")
        return Timeline(
            pd.DataFrame(table, index=index, columns=pd.RangeIndex(n, name="pe")),
            self.bin_s,
            first * self.bin_s,
            untimed,
        )

    def _consolidate(self) -> None:
        if self._pending:
            keys = [k for k, _ in self._pending]
            counts = [c for _, c in self._pending]
            self._pending, self._pending_size = [], 0
            self._absorb(np.concatenate(keys), np.concatenate(counts))

    def _absorb(self, keys: np.ndarray, counts: np.ndarray) -> None:
        self._keys, self._counts = _sum_by_key(
            np.concatenate([self._keys, keys]), np.concatenate([self._counts, counts])
        )
        while _distinct_bins(self._keys) > self.bin_limit:
            self._keys, self._counts = _sum_by_key(_coarsen(self._keys, 1), self._counts)
            self.level += 1


def _coarsen(keys: np.ndarray, steps: int) -> np.ndarray:
    pe, bins = keys // _PE_SHIFT, keys % _PE_SHIFT
    return pe * _PE_SHIFT + (bins >> steps)


def _sum_by_key(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inverse = np.unique(keys, return_inverse=True)
    return uniq, np.bincount(inverse, weights=counts, minlength=len(uniq)).astype(np.int64)


def _distinct_bins(keys: np.ndarray) -> int:
    return len(np.unique(keys % _PE_SHIFT)) if len(keys) else 0


def send_timeline(
    data: pd.DataFrame | Iterable[pd.DataFrame],
    *,
    num_pes: int | None = None,
    base_s: float = 1e-3,
    max_bins: int = 100_000,
) -> Timeline:
    """Messages sent per PE per time bin, in one pass over logical chunks.

    Parameters
    ----------
    data
        A logical frame or chunks (:func:`actorprof.iter_logical`).
    num_pes
        Columns 0..num_pes-1 (default: largest PE id + 1).
    base_s, max_bins
        Finest bin width, and the most time bins kept before widths double.

    Returns
    -------
    Timeline

    Examples
    --------
    >>> df = pd.DataFrame({"src_pe": [0, 0, 1], "time_s": [10.0, 10.0004, 10.0021]})
    >>> send_timeline(df).counts.to_numpy().tolist()
    [[2, 0], [0, 0], [0, 1]]
    """
    acc = TimelineAccumulator(base_s=base_s, max_bins=max_bins)
    for frame in [data] if isinstance(data, pd.DataFrame) else data:
        acc.add(frame)
    return acc.result(num_pes)


def rebin(timeline: Timeline, bins: int) -> Timeline:
    """Merge neighbouring bins so that at most ``bins`` remain (for display).

    Raises
    ------
    ValueError
        ``bins`` < 1.
    """
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    n = len(timeline.counts)
    factor = max(1, -(-n // bins))
    if factor == 1:
        return timeline
    groups = np.arange(n) // factor
    values = timeline.counts.to_numpy()
    out = np.zeros((int(groups.max()) + 1, values.shape[1]), dtype=values.dtype)
    np.add.at(out, groups, values)
    width = timeline.bin_s * factor
    index = pd.Index(np.arange(len(out)) * width, name="time_s")
    return Timeline(
        pd.DataFrame(out, index=index, columns=timeline.counts.columns),
        width,
        timeline.start_s,
        timeline.untimed,
    )

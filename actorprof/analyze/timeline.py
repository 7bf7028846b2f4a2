"""Messages over time: a streaming, mergeable histogram of send times per PE.

Times are binned on absolute epoch bins of width ``base_s * 2**k``
(computed on whole microseconds, the traces' resolution); the
width doubles (neighbouring bins merge) whenever more than ``max_bins``
distinct time bins are held (fewer with many PEs: the PEs x bins table has at
most ``MAX_CELLS`` cells), so memory stays bounded however long the run,
and two accumulators always merge exactly (bring both to the coarser width,
then add). Timestamps come from each sender's clock (FORMATS.md), so bins
line up across nodes only as well as the nodes' clocks do.

Each (PE, bin) cell also keeps the exact smallest and largest time of its
messages, so first and last times are exact (never bin edges), and the dense
table spans only the times kept: a time that cannot be a wall clock of the
run (negative, or from 2286 on, or far from the other times by the
rule of :func:`outlier_window`) is counted as an outlier and never binned.
Memory therefore never depends on a time's magnitude.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from .._repr import Summarized, count

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import NDArray

__all__ = [
    "EXACT_MICROS",
    "MAX_TIME_S",
    "OUTLIER_EXAMPLES",
    "OUTLIER_FACTOR",
    "OUTLIER_GAP_S",
    "OUTLIER_QUANTILE",
    "OutlierTime",
    "TimeExtremes",
    "Timeline",
    "TimelineAccumulator",
    "count_dtype",
    "is_outlier",
    "merge_factor",
    "outlier_window",
    "rebin",
    "rebin_onto",
    "send_timeline",
    "time_text",
]

_PE_SHIFT = np.int64(1) << np.int64(44)  # key = pe * 2**44 + bin (bin < 2**44)
_PENDING_MIN = 1 << 20  # keys held back before a merge into the state (~16 MB)
#: Largest PEs x time bins table (16 M cells, 128 MB): 4,096 PEs get 4,096 bins.
MAX_CELLS = 1 << 24
#: Times at or beyond this (epoch seconds, the year 2286) are outliers: no
#: CLOCK_REALTIME of a run, and their bin ids would not fit the keys.
MAX_TIME_S = 1e10
#: Share of the times at each end left out of the bulk (at least 2 times).
OUTLIER_QUANTILE = 0.001
#: A time is an outlier when it lies beyond the bulk by more than
#: ``max(OUTLIER_FACTOR x the bulk's span, OUTLIER_GAP_S)``.
OUTLIER_FACTOR = 100.0
OUTLIER_GAP_S = 600.0
#: Whole microseconds below this (2**51, the year 2041) are times whose float
#: ``micros / 1e6`` is a usable time that gives them back (``rint(t * 1e6)``)
#: and orders like them: :meth:`TimelineAccumulator.add_micros` bins them as
#: they are. (Each rounding errs by at most a quarter of a microsecond there.)
EXACT_MICROS = 1 << 51


@dataclass(frozen=True, repr=False)
class Timeline(Summarized):
    """Messages per PE per time bin.

    Attributes
    ----------
    counts
        Index ``time_s`` (bin start, seconds since ``start_s``), columns
        ``pe`` (every PE 0..N-1), values: messages sent in the bin
        (int32; int64 when a count does not fit int32).
    bin_s
        Bin width in seconds.
    start_s
        Epoch time of the first bin's start.
    untimed
        Messages without a timestamp (5-column lines), per PE.
    first_s, last_s
        Exact epoch times of the first and last message binned (None: none).
    pe_first_s, pe_last_s
        Exact epoch time of each PE's first and last message binned (NaN:
        none); None when unknown (a timeline built by hand).
    outliers
        Messages whose time is an outlier (not binned), per PE; None: none
        counted.
    window
        The epoch times ``(low, high)`` outside which a time was an outlier
        (None: the rule was not applied, or too few times).
    """

    counts: pd.DataFrame
    bin_s: float
    start_s: float | None
    untimed: pd.Series
    first_s: float | None = None
    last_s: float | None = None
    pe_first_s: np.ndarray | None = None
    pe_last_s: np.ndarray | None = None
    outliers: pd.Series | None = None
    window: tuple[float, float] | None = None

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

    @property
    def num_outliers(self) -> int:
        return 0 if self.outliers is None else int(self.outliers.sum())


class TimelineAccumulator:
    """Accumulate (pe, time) pairs chunk by chunk; see the module docstring."""

    def __init__(self, *, base_s: float = 1e-3, max_bins: int = 100_000) -> None:
        if round(base_s * 1e6) < 1000 or max_bins < 2:
            # below 1 ms, epoch bin ids would not fit the 44 bits of a key
            raise ValueError("base_s must be at least 1e-3 and max_bins >= 2")
        self.base_s = base_s
        # bins are counted on integer microseconds: a 6-decimal time lies exactly
        # on a bin edge as often as the clock says so, never by float rounding
        self._base_us = round(base_s * 1e6)
        self.max_bins = max_bins
        self.level = 0
        # the state: sorted (pe, bin) keys, their counts, exact min/max microseconds
        self._keys = np.zeros(0, dtype=np.int64)
        self._counts = np.zeros(0, dtype=np.int64)
        self._low = np.zeros(0, dtype=np.int64)
        self._high = np.zeros(0, dtype=np.int64)
        # chunks' cells not yet merged into the state: merging every chunk
        # would re-sort the whole state each time (quadratic)
        self._pending: list[tuple[np.ndarray, ...]] = []
        self._pending_size = 0
        self._untimed: dict[int, int] = {}
        self._outliers: dict[int, int] = {}
        self.window: tuple[float, float] | None = None
        self.num_pes = 0

    @property
    def bin_limit(self) -> int:
        """Time bins kept: ``max_bins``, fewer for many PEs (the dense table
        has PEs x bins cells, at most ``MAX_CELLS``)."""
        return max(2, min(self.max_bins, MAX_CELLS // max(self.num_pes, 1)))

    @property
    def bin_s(self) -> float:
        return (self._base_us << self.level) / 1e6

    @property
    def num_outliers(self) -> int:
        return sum(self._outliers.values())

    @property
    def num_untimed(self) -> int:
        """Messages added without a time (5-column lines)."""
        return sum(self._untimed.values())

    def add(self, frame: pd.DataFrame, *, pe_column: str = "src_pe") -> None:
        """Add a chunk with ``time_s`` and ``pe_column`` (not modified).

        NaN times are untimed; a time that is not >= 0 and below
        :data:`MAX_TIME_S` is an outlier (counted, not binned).
        """
        if not len(frame):
            return
        pe = frame[pe_column].to_numpy(dtype=np.int64)
        times = frame["time_s"].to_numpy(dtype=np.float64)
        self.num_pes = max(self.num_pes, int(pe.max()) + 1)
        if "dst_pe" in frame:  # PEs that only receive still get a (silent) row
            self.num_pes = max(self.num_pes, int(frame["dst_pe"].max()) + 1)
        self._add_times(pe, times)

    def add_micros(self, pe: np.ndarray, micros: np.ndarray | None, *, top_pe: int) -> None:
        """Add lines sent by ``pe`` at ``micros``, whole microseconds since
        the epoch (non-negative; None: the lines are untimed), as :meth:`add`
        adds the times ``micros / 1e6`` (the reader's ``time_s``) without
        making them floats. ``top_pe``: the largest PE id the lines name,
        senders and receivers (the PEs the table has)."""
        if not len(pe):
            return
        self.note_pes(top_pe)
        if micros is None:
            _count_into(self._untimed, pe)
        elif int(micros.max()) < EXACT_MICROS:
            self._bin(pe, micros)
        else:  # far beyond any wall clock: the float route decides, as add would
            self._add_times(pe, micros / 1_000_000)

    def note_pes(self, top_pe: int) -> None:
        """PEs up to ``top_pe`` get a row (PEs that only receive have one, silent)."""
        self.num_pes = max(self.num_pes, top_pe + 1)

    def _add_times(self, pe: np.ndarray, times: np.ndarray) -> None:
        untimed = np.isnan(times)
        usable = (times >= 0) & (times < MAX_TIME_S)  # False for NaN and inf
        _count_into(self._untimed, pe[untimed])
        _count_into(self._outliers, pe[~untimed & ~usable])
        if not usable.any():
            return
        self._bin(pe[usable], np.rint(times[usable] * 1e6).astype(np.int64))

    def _bin(self, pe: np.ndarray, micros: np.ndarray) -> None:
        """Count lines of ``pe`` at usable ``micros`` into their cells."""
        keys = pe * _PE_SHIFT + micros // (self._base_us << self.level)
        cells = _cells_sum(keys, np.ones(len(keys), dtype=np.int64), micros, micros)
        self._pending.append(cells)
        self._pending_size += len(cells[0])
        if self._pending_size > max(_PENDING_MIN, len(self._keys)):
            self._consolidate()

    def merge(self, other: TimelineAccumulator) -> None:
        """Add another accumulator's bins and counts (same ``base_s``)."""
        if other.base_s != self.base_s:
            raise ValueError("cannot merge timelines of different base widths")
        other._consolidate()
        self.num_pes = max(self.num_pes, other.num_pes)
        for mine, theirs in ((self._untimed, other._untimed), (self._outliers, other._outliers)):
            for pe, n in theirs.items():
                mine[pe] = mine.get(pe, 0) + n
        keys = other._keys
        if other.level >= self.level and not len(self._keys) and not self._pending:
            # into an empty accumulator: its state is the other's (sorted,
            # distinct), not a copy sorted again (the whole run's cells, when
            # the run has one phase); an empty state coarsens to any level
            self.level = other.level
            self._absorb_into_empty((keys, other._counts, other._low, other._high))
            self._fit_cells()
            return
        if other.level < self.level:
            keys = _coarsen(keys, self.level - other.level)
        elif other.level > self.level:
            self._consolidate()
            self._coarsen_state(other.level - self.level)
        # held back like a chunk's cells: merging each of many units into the
        # state at once re-sorted the whole state each time (quadratic)
        self._pending.append((keys, other._counts, other._low, other._high))
        self._pending_size += len(keys)
        if self._pending_size > max(_PENDING_MIN, len(self._keys)):
            self._consolidate()

    def drop_outliers(
        self, window: tuple[float, float] | None = None
    ) -> tuple[float, float] | None:
        """Count the cells outside the window as outliers and drop them.

        ``window``: epoch seconds ``(low, high)``; None computes it with
        :func:`outlier_window` over the times held. The window kept (also in
        ``window``) is snapped outwards to bin edges, so that a time is an
        outlier exactly when :func:`is_outlier` says so. None when nothing is
        binned and no window was given.
        """
        self._consolidate()
        width_us = self._base_us << self.level
        bins = self._keys % _PE_SHIFT
        if window is None:
            if not len(self._keys):
                return None
            unique, inverse = np.unique(bins, return_inverse=True)
            per_bin = np.bincount(inverse, weights=self._counts).astype(np.int64)
            window = outlier_window(unique * (width_us / 1e6), per_bin, width_s=width_us / 1e6)
        low_bin = int(np.floor(max(window[0], -1.0) * 1e6 / width_us))
        high_bin = int(np.ceil(min(window[1], MAX_TIME_S) * 1e6 / width_us))
        out = (bins < low_bin) | (bins >= high_bin)
        if out.any():
            _count_into(self._outliers, self._keys[out] // _PE_SHIFT, self._counts[out])
            keep = ~out
            self._keys, self._counts = self._keys[keep], self._counts[keep]
            self._low, self._high = self._low[keep], self._high[keep]
        self.window = (low_bin * width_us / 1e6, high_bin * width_us / 1e6)
        return self.window

    def result(self, num_pes: int | None = None) -> Timeline:
        """The dense table, every PE a column (``num_pes`` pads, never cuts).

        Bins widen first if the times kept span more than ``bin_limit`` bins.
        """
        import pandas as pd

        self._consolidate()
        n = max(self.num_pes, num_pes or 0)
        index = pd.RangeIndex(n, name="pe")
        untimed = pd.Series(_per_pe(self._untimed, n), index=index, name="untimed")
        outliers = pd.Series(_per_pe(self._outliers, n), index=index, name="outliers")
        if not len(self._keys):
            empty = pd.DataFrame(
                np.zeros((0, n), dtype=np.int64),
                index=pd.Index([], dtype=np.float64, name="time_s"),
                columns=index,
            )
            nothing = np.full(n, np.nan)
            return Timeline(
                empty,
                self.bin_s,
                None,
                untimed,
                None,
                None,
                nothing,
                nothing.copy(),
                outliers,
                self.window,
            )
        rows, pe, first, span = self._placed()
        # a cell per (bin, PE) key, the keys distinct: each count is set once,
        # in the narrowest of int32 and int64 that holds the largest of them
        # (65 MB instead of 131 MB at 65,536 PEs)
        table = np.zeros((span, n), dtype=count_dtype(int(self._counts.max())))
        table[rows, pe] = self._counts
        # keys are sorted, so each PE's cells are one run
        pes, starts = np.unique(pe, return_index=True)
        pe_first = np.full(n, np.nan)
        pe_last = np.full(n, np.nan)
        pe_first[pes] = np.minimum.reduceat(self._low, starts) / 1e6
        pe_last[pes] = np.maximum.reduceat(self._high, starts) / 1e6
        return Timeline(
            pd.DataFrame(  # the table as it is (pandas 3 copies an array by default)
                table,
                index=pd.Index(np.arange(span) * self.bin_s, name="time_s"),
                columns=index,
                copy=False,
            ),
            self.bin_s,
            first * self.bin_s,
            untimed,
            int(self._low.min()) / 1e6,
            int(self._high.max()) / 1e6,
            pe_first,
            pe_last,
            outliers,
            self.window,
        )

    def display(
        self, bins: int, num_pes: int | None = None
    ) -> tuple[NDArray[np.float64], NDArray[Any], float, float | None]:
        """What ``rebin(self.result(num_pes), bins)`` holds, without pandas and
        without the dense table: each bin's start (seconds since the first
        bin's), the counts (a row per bin, a column per PE, in :func:`rebin`'s
        dtype), the bins' width, and ``start_s``.

        Summed from the cells, so a command can draw the timeline while
        pandas is imported for the table; the state after is :meth:`result`'s.

        Raises
        ------
        ValueError
            ``bins`` < 1.
        """
        merge_factor(0, bins)  # bins checked before the work
        self._consolidate()
        n = max(self.num_pes, num_pes or 0)
        if not len(self._keys):
            return np.zeros(0), np.zeros((0, n), dtype=np.int64), self.bin_s, None
        rows, pe, first, span = self._placed()
        factor = merge_factor(span, bins)
        # result()'s dtype, widened as rebin() widens it for sums of factor cells
        dtype = count_dtype(int(self._counts.max()) * factor)
        counts = np.zeros(((span - 1) // factor + 1, n), dtype=dtype)
        np.add.at(counts, (rows // factor, pe), self._counts)
        width = self.bin_s * factor
        times = np.arange(len(counts), dtype=np.float64) * width  # result()'s and rebin()'s index
        return times, counts, width, first * self.bin_s

    def _placed(self) -> tuple[NDArray[np.int64], NDArray[np.int64], int, int]:
        """Each cell's row (its bin, from the first one) and PE, the first bin
        and how many bins the cells span; the bins widened first if they span
        more than ``bin_limit`` (the state's cells, none empty)."""
        self._fit_bins()
        bins = self._keys % _PE_SHIFT
        first = int(bins.min())
        return bins - first, self._keys // _PE_SHIFT, first, int(bins.max()) - first + 1

    def span(self) -> tuple[float | None, float | None, int]:
        """:meth:`result`'s ``first_s``, ``last_s`` and messages, without its table.

        The bins widen as :meth:`result` widens them, so the state is the same
        after either.
        """
        self._consolidate()
        if not len(self._keys):
            return None, None, 0
        self._fit_bins()
        return int(self._low.min()) / 1e6, int(self._high.max()) / 1e6, int(self._counts.sum())

    def _fit_bins(self) -> None:
        """Widen the bins until the times kept span at most ``bin_limit`` of them."""
        bins = self._keys % _PE_SHIFT
        steps = 0
        while (int(bins.max()) >> steps) - (int(bins.min()) >> steps) + 1 > self.bin_limit:
            steps += 1
        if steps:
            self._coarsen_state(steps)

    def _coarsen_state(self, steps: int) -> None:
        self._absorb_into_empty(
            _cells_sum(_coarsen(self._keys, steps), self._counts, self._low, self._high)
        )
        self.level += steps

    def _absorb_into_empty(self, cells: tuple[np.ndarray, ...]) -> None:
        self._keys, self._counts, self._low, self._high = cells

    def _consolidate(self) -> None:
        if self._pending:
            # the state and the pending cells as columns, held only there: each
            # column's parts are let go once joined (the state and the pending
            # cells are each the run's cells at many PEs)
            parts = [(self._keys, self._counts, self._low, self._high), *self._pending]
            self._pending, self._pending_size = [], 0
            columns = [[part[i] for part in parts] for i in range(4)]
            del parts
            self._absorb_into_empty(tuple(np.zeros(0, dtype=np.int64) for _ in range(4)))
            self._absorb_into_empty(_cells_sum_columns(columns))
            self._fit_cells()

    def _fit_cells(self) -> None:
        steps = _steps_to_fit(self._keys, self.bin_limit)
        if steps:  # at once: the same cells as one step at a time, one sort
            self._coarsen_state(steps)


def outlier_window(
    times_s: np.ndarray, weights: np.ndarray, *, width_s: float = 0.0
) -> tuple[float, float]:
    """The epoch times ``[low, high)`` outside which a time is an outlier.

    The bulk runs from the time below which lie ``q`` of the messages to
    the time above which lie ``q`` of them (``q`` = :data:`OUTLIER_QUANTILE`,
    0.1 %, but at least two messages, at most a quarter). From the bulk, the
    kept range grows outwards over every time whose distance to the next
    time kept is at most ``M = max(OUTLIER_FACTOR x the bulk's span,
    OUTLIER_GAP_S)``; it stops at the first silence longer than ``M``, and
    the times beyond it are outliers. A run's own sends cannot be cut off
    this way, however long their tail: a tail of sends, however sparse, is
    kept step by step; it would take fewer than 0.1 % of the messages sent
    after a silence 100 times longer than the bulk took (and 10 minutes at
    least). A flipped digit of an epoch time, a zero or a clock jump is cut.

    Parameters
    ----------
    times_s
        Sorted, distinct times (epoch seconds; bin starts).
    weights
        Messages at each time.
    width_s
        Width of the bin each time stands for (added to the last one kept).
    """
    total = int(weights.sum())
    if not total:
        return (-np.inf, np.inf)
    q = min(max(OUTLIER_QUANTILE * total, 2.0), total / 4)
    before = np.cumsum(weights)
    first = int(np.searchsorted(before, q, side="right"))
    after = total - before + weights  # messages at or after each time
    last = max(first, int(np.flatnonzero(after > q)[-1]))
    margin = max(OUTLIER_FACTOR * (times_s[last] + width_s - times_s[first]), OUTLIER_GAP_S)
    silences = np.flatnonzero(np.diff(times_s) > margin)  # a silence between k and k + 1
    below = silences[silences < first]
    above = silences[silences >= last]
    low = times_s[int(below[-1]) + 1] if len(below) else times_s[0]
    high = times_s[int(above[0])] if len(above) else times_s[-1]
    # [low, high): the last time kept is in, also with no width
    return (float(low), float(high) + width_s if width_s > 0 else float(np.nextafter(high, np.inf)))


def is_outlier(times_s: np.ndarray, window: tuple[float, float] | None) -> np.ndarray:
    """Which times are outliers: not NaN, and negative, from :data:`MAX_TIME_S`
    on, or outside ``window`` (``[low, high)``, epoch seconds; None: no window)."""
    times = np.asarray(times_s, dtype=np.float64)
    usable = (times >= 0) & (times < MAX_TIME_S)
    if window is not None:
        micros = np.rint(np.where(usable, times, 0.0) * 1e6)
        usable &= (micros >= round(window[0] * 1e6)) & (micros < round(window[1] * 1e6))
    return ~np.isnan(times) & ~usable


def rebin_onto(timeline: Timeline, width_s: float, origin_s: float) -> Timeline | None:
    """``timeline`` merged onto bins of ``width_s`` whose edges are ``origin_s + k x width_s``.

    None when its own bins do not nest into those (its width does not divide
    ``width_s`` or ``origin_s`` is not on one of its edges): use :func:`rebin`.
    """
    import pandas as pd

    if timeline.start_s is None:
        return None
    own_us, width_us = round(timeline.bin_s * 1e6), round(width_s * 1e6)
    origin_us, start_us = round(origin_s * 1e6), round(timeline.start_s * 1e6)
    if width_us % own_us or (start_us - origin_us) % own_us:
        return None
    n = len(timeline.counts)
    groups = (start_us - origin_us + np.arange(n) * own_us) // width_us
    first = int(groups[0])
    values = timeline.counts.to_numpy()
    out = np.zeros(
        (int(groups[-1]) - first + 1, values.shape[1]),
        dtype=_sum_dtype(values, width_us // own_us),
    )
    np.add.at(out, groups - first, values)
    return replace(
        timeline,
        counts=pd.DataFrame(
            out,
            index=pd.Index(np.arange(len(out)) * width_s, name="time_s"),
            columns=timeline.counts.columns,
            copy=False,  # the table as it is (pandas 3 copies an array by default)
        ),
        bin_s=width_s,
        start_s=(origin_us + first * width_us) / 1e6,
    )


def count_dtype(largest: int) -> type[np.signedinteger[Any]]:
    """The dtype of a table of counts up to ``largest``: int32 when it holds
    them (half the memory), else int64."""
    return np.int32 if largest <= np.iinfo(np.int32).max else np.int64


def _sum_dtype(values: np.ndarray, factor: int) -> np.dtype[Any]:
    """The dtype of sums of up to ``factor`` of ``values``' cells: theirs,
    widened to int64 when an int32 sum could pass its largest value."""
    if values.dtype == np.int32 and values.size:
        largest = max(int(values.max()), -int(values.min()))
        return np.dtype(count_dtype(largest * factor))
    return values.dtype


def _count_into(counts: dict[int, int], pe: np.ndarray, weights: np.ndarray | None = None) -> None:
    if not len(pe):
        return
    found = np.bincount(pe, weights=weights).astype(np.int64)
    for i in np.flatnonzero(found):
        counts[int(i)] = counts.get(int(i), 0) + int(found[i])


def _per_pe(counts: dict[int, int], n: int) -> np.ndarray:
    return np.asarray([counts.get(i, 0) for i in range(n)], dtype=np.int64)


def _cells_sum(
    keys: np.ndarray, counts: np.ndarray, low: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cells of equal keys summed (counts) and reduced (min low, max high), sorted."""
    return _cells_sum_columns([[keys], [counts], [low], [high]])


def _cells_sum_columns(
    columns: list[list[np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_cells_sum` of the cells given as parts of each column (keys,
    counts, low, high), joined in order; each column's list is emptied once
    it is joined, so that parts held nowhere else are let go as it goes."""

    def joined(i: int) -> np.ndarray:
        parts = columns[i]
        out = parts[0] if len(parts) == 1 else np.concatenate(parts)
        parts.clear()
        return out

    keys = joined(0)
    if not len(keys):
        return keys, joined(1), joined(2), joined(3)
    if bool((keys[1:] >= keys[:-1]).all()):  # a PE's times in order: sorted already
        order = None
    else:
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    keys = keys[starts]

    def ordered(i: int) -> np.ndarray:
        column = joined(i)
        return column if order is None else column[order]

    return (
        keys,
        np.add.reduceat(ordered(1), starts),
        np.minimum.reduceat(ordered(2), starts),
        np.maximum.reduceat(ordered(3), starts),
    )


def _coarsen(keys: np.ndarray, steps: int) -> np.ndarray:
    pe, bins = keys // _PE_SHIFT, keys % _PE_SHIFT
    return pe * _PE_SHIFT + (bins >> steps)


def _steps_to_fit(keys: np.ndarray, limit: int) -> int:
    """How many times bins must double so that ``keys`` span at most ``limit`` bins."""
    bins = np.unique(keys % _PE_SHIFT)
    steps = 0
    while len(bins) > limit:
        bins = np.unique(bins >> 1)
        steps += 1
    return steps


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
    >>> import pandas as pd
    >>> df = pd.DataFrame({"src_pe": [0, 0, 1], "time_s": [10.0, 10.0004, 10.0021]})
    >>> send_timeline(df).counts.to_numpy().tolist()
    [[2, 0], [0, 0], [0, 1]]
    """
    import pandas as pd

    acc = TimelineAccumulator(base_s=base_s, max_bins=max_bins)
    for frame in [data] if isinstance(data, pd.DataFrame) else data:
        acc.add(frame)
    acc.drop_outliers()
    return acc.result(num_pes)


def merge_factor(n: int, bins: int) -> int:
    """How many neighbouring bins of ``n`` are merged into one so that at most
    ``bins`` remain (:func:`rebin`, :meth:`TimelineAccumulator.display`).

    Raises
    ------
    ValueError
        ``bins`` < 1.
    """
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    return max(1, -(-n // bins))


def rebin(timeline: Timeline, bins: int) -> Timeline:
    """Merge neighbouring bins so that at most ``bins`` remain (for display).

    Raises
    ------
    ValueError
        ``bins`` < 1.
    """
    import pandas as pd

    n = len(timeline.counts)
    factor = merge_factor(n, bins)
    if factor == 1:
        return timeline
    groups = np.arange(n) // factor
    values = timeline.counts.to_numpy()
    out = np.zeros((int(groups.max()) + 1, values.shape[1]), dtype=_sum_dtype(values, factor))
    np.add.at(out, groups, values)
    width = timeline.bin_s * factor
    index = pd.Index(np.arange(len(out)) * width, name="time_s")
    return replace(
        timeline,
        counts=pd.DataFrame(out, index=index, columns=timeline.counts.columns, copy=False),
        bin_s=width,
    )


@dataclass(frozen=True)
class OutlierTime:
    """A line whose time is an outlier (see docs/timeline.md): where, and its value."""

    path: str
    line: int
    time_s: float

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {time_text(self.time_s)}"

    def to_dict(self) -> dict[str, Any]:
        finite = bool(np.isfinite(self.time_s))
        return {"path": self.path, "line": self.line, "time_s": self.time_s if finite else None}


def time_text(t: float) -> str:
    """A time for a message: 6 decimals, or ``%g`` when huge or not finite."""
    return f"{t:.6f}" if np.isfinite(t) and abs(t) < 1e12 else f"{t:g}"


#: Outlier lines named per warning (the count says how many there are).
OUTLIER_EXAMPLES = 3


def _extreme_rows(values: np.ndarray, keep: int) -> np.ndarray:
    """Rows of the ``keep`` smallest then the ``keep`` largest ``values`` (no
    NaN, more than ``2 * keep`` of them): ``order[:keep]`` and
    ``order[-keep:]`` of their stable ascending order, without sorting them all."""
    n = len(values)
    if bool((values[1:] >= values[:-1]).all()):  # in order already: the stable order
        return np.concatenate([np.arange(keep), np.arange(n - keep, n)])
    part = np.partition(values, (keep - 1, n - keep))
    low = np.flatnonzero(values <= part[keep - 1])
    high = np.flatnonzero(values >= part[n - keep])
    # the ties at a threshold in line order: the stable sort of the few candidates
    low = low[np.argsort(values[low], kind="stable")[:keep]]
    high = high[np.argsort(values[high], kind="stable")[-keep:]]
    return np.concatenate([low, high])


class TimeExtremes:
    """The few smallest and largest times of each file, with their lines.

    An outlier is far from the bulk, so the first ones of each file are among
    its extremes: kept while streaming, they name outliers by file and line
    once the window is known, without a second read.
    """

    def __init__(self, keep: int = OUTLIER_EXAMPLES) -> None:
        self.keep = keep
        self.by_file: dict[str, list[tuple[float, int]]] = {}

    def add(self, path: str, times: np.ndarray, lines: np.ndarray) -> None:
        timed = ~np.isnan(times)
        times, lines = times[timed], lines[timed]
        if len(times) > 2 * self.keep:
            pick = _extreme_rows(times, self.keep)
            times, lines = times[pick], lines[pick]
        self._hold(path, zip(times.tolist(), lines.tolist(), strict=True))

    def add_micros(self, path: str, micros: np.ndarray, lines: np.ndarray) -> None:
        """:meth:`add` of the times ``micros / 1e6`` (whole microseconds, none
        missing), made floats only for the lines kept."""
        if not len(micros):
            return
        if int(micros.max()) >= EXACT_MICROS:  # floats may tie there: add decides
            self.add(path, micros / 1_000_000, lines)
            return
        if len(micros) > 2 * self.keep:  # below EXACT_MICROS they order like their floats
            pick = _extreme_rows(micros, self.keep)
            micros, lines = micros[pick], lines[pick]
        times = micros / 1_000_000
        self._hold(path, zip(times.tolist(), lines.tolist(), strict=True))

    def add_files(
        self, paths: list[str], files: np.ndarray, times: np.ndarray, lines: np.ndarray
    ) -> None:
        """:meth:`add` of each file's rows of a chunk that holds many files
        (``files``: each row's index in ``paths``, rows in file then line order)."""
        timed = ~np.isnan(times)
        files, times, lines = files[timed], times[timed], lines[timed]
        if not len(times):
            return
        if not bool(((times[1:] >= times[:-1]) | (files[1:] != files[:-1])).all()):
            order = np.lexsort((times, files))  # stable: equal times in line order
            files, times, lines = files[order], times[order], lines[order]
        # (else each file's times are in line order: the stable order already)
        starts = np.flatnonzero(np.r_[True, files[1:] != files[:-1]])
        sizes = np.diff(np.r_[starts, len(files)])
        rank = np.arange(len(files)) - np.repeat(starts, sizes)
        size = np.repeat(sizes, sizes)
        # a file's `keep` smallest and largest times, as add picks them
        pick = (size <= 2 * self.keep) | (rank < self.keep) | (rank >= size - self.keep)
        files, times, lines = files[pick], times[pick], lines[pick]
        bounds = np.flatnonzero(np.r_[True, files[1:] != files[:-1], True]).tolist()
        held_files = files.tolist()
        found = list(zip(times.tolist(), lines.tolist(), strict=True))
        for a, b in pairwise(bounds):
            self._hold(paths[held_files[a]], found[a:b])

    def merge(self, other: TimeExtremes) -> None:
        """Add the extremes ``other`` holds (files read after this one's, in order)."""
        mine = self.by_file
        if not mine.keys().isdisjoint(other.by_file):
            for path, held in other.by_file.items():
                self._hold(path, held)
            return
        # files new here (65,536 of them: not a _hold call each), as _hold keeps them
        mine.update((path, list(held)) for path, held in other.by_file.items())
        for path, held in other.by_file.items():
            if len(held) > 4 * self.keep:
                kept = mine[path]
                kept.sort()
                del kept[self.keep : -self.keep]

    def _hold(self, path: str, found: Iterable[tuple[float, int]]) -> None:
        """Keep ``found`` (time, line) of ``path``, trimmed to its extremes now and then."""
        held = self.by_file.setdefault(path, [])
        held.extend(found)
        if len(held) > 4 * self.keep:
            held.sort()
            del held[self.keep : -self.keep]

    def outliers(self, window: tuple[float, float] | None) -> list[OutlierTime]:
        """Held lines that are outliers, in file then line order, at most ``keep``."""
        found = []
        for path, held in self.by_file.items():
            times = np.asarray([t for t, _ in held], dtype=np.float64)
            for (t, line), out in zip(held, is_outlier(times, window), strict=True):
                if out:
                    found.append(OutlierTime(path, int(line), float(t)))
        order = {path: i for i, path in enumerate(self.by_file)}
        found.sort(key=lambda o: (order[o.path], o.line))
        return found[: self.keep]

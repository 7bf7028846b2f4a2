"""The timeline view: messages sent per PE over time, every phase on one axis.

Also builds the Chrome Trace Event (Perfetto) export of the same data.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._memory import release_memory
from .._progress import ProgressSink
from .._repr import Summarized, count
from .._text import JsonText, run_name
from .._version import __version__
from ..analyze.imbalance import imbalance
from ..analyze.timeline import (
    MAX_TIME_S,
    OUTLIER_EXAMPLES,
    OutlierTime,
    TimeExtremes,
    Timeline,
    TimelineAccumulator,
    is_outlier,
    rebin,
    rebin_onto,
    time_text,
)
from ..engine import Engine, SendTimes
from ..engine.timeline import reduce_times
from ..errors import ActorProfError, TraceFormatError
from ..read import ReadReport, find_pe_files
from ..read.logical import logical_files
from .timeline_figures import TimelineBins, rate_figure, timeline_bins

if TYPE_CHECKING:
    from ..engine.papi import PapiTimesRead
    from ..write import Sink

__all__ = [
    "OutlierTime",
    "PapiTimes",
    "PhaseSpan",
    "TimelineView",
    "clock_overlap",
    "find_papi_folder",
    "papi_times",
    "perfetto_stream",
    "perfetto_trace",
    "timeline_view",
]


@dataclass(frozen=True)
class PhaseSpan:
    """When one phase's messages were sent (seconds since the first send)."""

    name: str
    start_s: float
    end_s: float
    messages: int


def _outlier_warning(
    count_: int, window: tuple[float, float] | None, examples: list[OutlierTime], what: str
) -> str:
    where = (
        f"{time_text(window[0])} to {time_text(window[1])}"
        if window is not None
        else "the other times"
    )
    shown = "; ".join(str(o) for o in examples)
    return (
        f"{count_:,} {what} have an outlier time_s (negative, from {MAX_TIME_S:g} s on, or "
        f"far outside the others: kept are {where}): counted, but not placed in time "
        f"(rule in docs/timeline.md). " + (f"E.g. {shown}" if shown else "")
    ).rstrip()


@dataclass(frozen=True, repr=False)
class TimelineView(Summarized):
    """Send times of a run: the fine timeline and each phase's span.

    ``outliers`` names (file, line) up to three lines per phase whose time is
    an outlier; ``timeline.outliers`` counts them all, per PE.
    """

    path: str
    timeline: Timeline
    phases: list[PhaseSpan]
    reports: dict[str, ReadReport]
    outliers: list[OutlierTime] = field(default_factory=list)
    #: :meth:`display`'s timelines by bins (the figure, the table and two
    #: summaries each asked for one: a 65,536-PE rebin costs 0.3 s).
    _displays: dict[int, Timeline] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    #: ``(bins, summary(bins=bins, files=False))`` when the PE x bin table
    #: was let go (:meth:`without_table`); None: made from ``timeline``.
    kept: tuple[int, dict[str, Any]] | None = field(default=None, repr=False)

    def without_table(self, *, bins: int = 200) -> TimelineView:
        """This view with its PE x bin table let go, its summary at ``bins`` kept.

        What the run report holds once the timeline's figure is drawn: at
        65,536 PEs the table is tens of millions of cells (about 100 MB).
        :meth:`summary` then takes only these ``bins``; :meth:`display` and
        the table's ``counts`` (empty now: no row, every PE's column) are
        not to be used (``display`` raises ValueError).
        """
        if self.kept is not None:
            return self
        summary = self.summary(bins=bins, files=False)
        tl = self.timeline
        table = dataclasses.replace(tl, counts=tl.counts.iloc[:0].copy())
        return dataclasses.replace(self, timeline=table, kept=(bins, summary))

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        tl = self.timeline
        return run_name(self.path), [
            ("PEs", count(self.num_pes)),
            ("timed messages", count(int(tl.counts.to_numpy().sum()))),
            ("s", count(self.duration_s)),
            ("phases", count(len(self.phases))),
            ("warnings", count(sum(len(r.warnings) for r in self.reports.values()))),
        ]

    @property
    def num_pes(self) -> int:
        return len(self.timeline.counts.columns)

    def display(self, bins: int = 200) -> Timeline:
        """The timeline merged to at most ``bins`` bins (not to be modified:
        made once per ``bins``).

        Raises
        ------
        ValueError
            The table was let go (:meth:`without_table`).
        """
        if self.kept is not None:
            raise ValueError("this timeline view's table was let go (without_table)")
        if bins not in self._displays:
            self._displays[bins] = rebin(self.timeline, bins)
        return self._displays[bins]

    @property
    def duration_s(self) -> float:
        """From the first send to the last (exact, 6 decimals; 0 without timed sends)."""
        tl = self.timeline
        if tl.first_s is None or tl.last_s is None:
            return float(len(tl.counts) * tl.bin_s)
        return round(tl.last_s - tl.first_s, 6)

    def pe_first_last(self) -> tuple[np.ndarray, np.ndarray]:
        """First and last send time per PE, in seconds since ``timeline.start_s``
        (exact; NaN for silent PEs)."""
        tl = self.timeline
        if tl.pe_first_s is not None and tl.pe_last_s is not None and tl.start_s is not None:
            return np.round(tl.pe_first_s - tl.start_s, 6), np.round(tl.pe_last_s - tl.start_s, 6)
        if self.kept is not None:
            raise ValueError("this timeline view's table was let go (without_table)")
        values = self.timeline.counts.to_numpy()
        times = self.timeline.counts.index.to_numpy(dtype=np.float64)
        if not len(times):
            nothing = np.full(self.num_pes, np.nan)
            return nothing, nothing.copy()
        active = values > 0
        has = active.any(axis=0)
        first = np.where(has, times[np.argmax(active, axis=0)], np.nan)
        last_index = len(times) - 1 - np.argmax(active[::-1], axis=0)
        last = np.where(has, times[last_index] + self.timeline.bin_s, np.nan)
        return first, last

    def summary(self, *, bins: int = 200, files: bool = True) -> dict[str, Any]:
        """JSON-able summary; ``files=False`` leaves out the per-file accounting.

        Raises
        ------
        ValueError
            Other ``bins`` than those kept by :meth:`without_table`.
        """
        if self.kept is not None:
            kept_bins, kept = self.kept
            if bins != kept_bins:
                raise ValueError(
                    f"this timeline view kept its summary at {kept_bins} bins "
                    f"(without_table), not {bins}"
                )
            summary = copy.deepcopy(kept)
            if files:
                summary["files"] = {p: r.to_dict()["files"] for p, r in self.reports.items()}
            return summary
        tl = self.timeline
        shown = self.display(bins)
        rate = shown.rate
        first, last = self.pe_first_last()
        timed = int(tl.counts.to_numpy().sum())
        finished = np.nan_to_num(last, nan=0.0)
        late = imbalance(finished).to_dict() if len(finished) else None
        out: dict[str, Any] = {
            "kind": "timeline",
            "actorprof_version": __version__,
            "trace": self.path,
            "num_pes": self.num_pes,
            "start_epoch_s": tl.start_s,
            "first_send_epoch_s": tl.first_s,
            "last_send_epoch_s": tl.last_s,
            "duration_s": self.duration_s,
            "bin_s": tl.bin_s,
            "display_bin_s": shown.bin_s,
            "messages_timed": timed,
            "messages_untimed": int(tl.untimed.sum()),
            "messages_outliers": tl.num_outliers,
            "time_outliers": [o.to_dict() for o in self.outliers],
            "peak_rate_per_s": float(rate.max()) if len(rate) else 0.0,
            "peak_at_s": float(shown.counts.index[int(np.argmax(rate.to_numpy()))])
            if len(rate)
            else None,
            "phases": [vars(p) for p in self.phases],
            "pe_first_send_s": [None if v != v else v for v in first.tolist()],  # NaN: None
            "pe_last_send_s": [None if v != v else v for v in last.tolist()],
            "last_send_imbalance": late,
            "note": "times are the senders' clocks; across nodes they align only "
            "as well as the nodes' clocks do; times in seconds since start_epoch_s (the start "
            "of the first bin); first and last times are exact",
        }
        if files:
            out["files"] = {phase: r.to_dict()["files"] for phase, r in self.reports.items()}
        return out


def timeline_view(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    base_s: float = 1e-3,
    max_bins: int = 100_000,
    reports: dict[str, ReadReport] | None = None,
    progress: ProgressSink | None = None,
    engine: Engine | None = None,
    binned: Mapping[str | None, SendTimes] | None = None,
    bins_ready: tuple[int, Callable[[TimelineBins, list[PhaseSpan]], object]] | None = None,
) -> TimelineView:
    """Read the logical trace's send times, every phase (or just ``phase``).

    Phases share one time axis (seconds since the first send of any of
    them), so ``PhaseSpan``s show when each phase ran. ``progress`` is told
    the bytes and files of each phase's read as it goes. ``engine``: how
    the files are read (worker processes, a Dask cluster; default: this
    process); every way gives the same timeline.

    ``binned``: phases (by name, None for the unnamed files) whose send
    times the matrix's read binned (:func:`actorprof.kinds.logical.logical_view`
    with ``times=``, the same ``path`` and ``num_pes``). Such a phase is not
    read again when its times were binned (every file read, none from the
    cache) with this ``base_s`` and ``max_bins``, ``reports`` has no report
    of it yet, and none of its times is an outlier (only a read of whole
    files in order names outliers by file and line: docs/timeline.md); its
    binned times are then taken (the view holds them). Otherwise it is read
    here. Either way the view is the same.

    ``bins_ready``: ``(bins, ready)``: ``ready`` is given the bins the view's
    ``display(bins)`` holds (as :func:`timeline_bins` gives them) and the
    view's phases as soon as the read ends, before the view's table is made
    (pandas imported): a command draws its figure meanwhile.

    Raises
    ------
    ActorProfError
        As :func:`actorprof.iter_logical`.
    """
    reports = {} if reports is None else reports
    found = find_pe_files(Path(path), "send")
    names = [phase] if phase is not None else list(found)
    total = TimelineAccumulator(base_s=base_s, max_bins=max_bins)
    # each phase's first and last send and messages (not its table: 16 M cells at 65,536 PEs)
    partial: list[tuple[str, float | None, float | None, int]] = []
    outliers: list[OutlierTime] = []
    for name in names:
        label = name or "(unnamed)"
        found_times = _binned(binned, name, label, reports, base_s=base_s, max_bins=max_bins)
        if found_times is not None:  # binned by the matrix's read, no outlier to name
            acc, reports[label] = found_times
            report = reports[label]
            partial.append((label, *acc.span()))
        else:
            report = reports.setdefault(label, ReadReport(kind="logical"))
            report.kind = "logical"
            # stat'ed by reduce_times, unless there are many (planned by count then)
            files = logical_files(
                path, phase=name or None, num_pes=num_pes, report=report, sizes=False
            )
            report.num_pes = num_pes
            # runs of files per worker; small files (a few lines each) read many at a time
            acc, extremes = reduce_times(
                files, report, base_s=base_s, max_bins=max_bins, engine=engine, progress=progress
            )
            # each phase is its own bulk: a short phase far from the others is no outlier
            window = acc.drop_outliers()
            partial.append((label, *acc.span()))
            if acc.num_outliers:
                examples = extremes.outliers(window)
                outliers += examples
                report.warn(_outlier_warning(acc.num_outliers, window, examples, "message(s)"))
            del extremes
        total.merge(acc)
        del acc  # in the total now: not held beside its table
        if not name and found.keys() - {""}:
            report.notes = [n for n in report.notes if "other phases here" not in n]
    if total.span()[2] == 0 and total.num_untimed:  # nothing to draw or export
        raise TraceFormatError(
            f"none of its {total.num_untimed:,} messages has a send time (5-column "
            "lines, without time_s): a timeline needs the 6th column. Trace with an "
            "ActorProf build that writes it; `actorprof logical` shows who sent what",
            path=str(path),
        )
    # the read's garbage (each unit's cells, reports and extremes) given back
    # before the table is made: the table is the view's peak
    release_memory()
    if bins_ready is not None:
        bins, ready = bins_ready
        times, counts, width, start_s = total.display(bins, num_pes)
        pes = np.arange(counts.shape[1])  # the view's columns: every PE
        ready(TimelineBins(times, counts, pes, width), _spans(partial, start_s))
        del times, counts
    timeline = total.result(num_pes)
    return TimelineView(str(path), timeline, _spans(partial, timeline.start_s), reports, outliers)


def _spans(
    phases: list[tuple[str, float | None, float | None, int]], start_s: float | None
) -> list[PhaseSpan]:
    """Each phase's span (label, first and last send, messages) in seconds
    since ``start_s``, the timeline's first bin; none without a start."""
    spans = []
    for label, first_s, last_s, messages in phases:
        if first_s is None or last_s is None or start_s is None:
            continue
        spans.append(
            PhaseSpan(label, round(first_s - start_s, 6), round(last_s - start_s, 6), messages)
        )
    return spans


def _binned(
    binned: Mapping[str | None, SendTimes] | None,
    name: str,
    label: str,
    reports: dict[str, ReadReport],
    *,
    base_s: float,
    max_bins: int,
) -> tuple[TimelineAccumulator, ReadReport] | None:
    """Phase ``name``'s times as the matrix's read binned them (taken from
    ``binned``), outliers dropped, and the read's report; None when the
    phase is to be read (see :func:`timeline_view`)."""
    found = None if binned is None else binned.get(name or None)
    if found is None or found.binned is None or found.report is None or label in reports:
        return None
    if (found.base_s, found.max_bins) != (base_s, max_bins):
        return None
    acc, found.binned = found.binned, None
    # each phase is its own bulk, as in the phase's own read
    acc.drop_outliers()
    if acc.num_outliers:  # only a read of whole files in order names them
        return None
    return acc, found.report


@dataclass(frozen=True, repr=False)
class PapiTimes(Summarized):
    """When PEs handled messages (PROC) and ended MAIN, from a PAPI trace.

    Attributes
    ----------
    handled
        Handled messages per PE (the receiver, ``dst_pe``) per time bin.
    main_end_s
        Epoch time of each PE's MAIN line (written at ``done(0)``).
    outliers
        Up to three lines (PROC or MAIN) whose time is an outlier.
    num_outliers
        Lines whose time is an outlier (PROC and MAIN), not placed in time.
    """

    handled: Timeline
    main_end_s: dict[int, float]
    outliers: list[OutlierTime] = field(default_factory=list)
    num_outliers: int = 0

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        return "PAPI regions", [
            ("PEs", count(len(self.handled.counts.columns))),
            ("messages handled", count(int(self.handled.counts.to_numpy().sum()))),
            ("MAIN ends", count(len(self.main_end_s))),
            ("time outliers", count(self.num_outliers)),
        ]

    def pes_without_main(self, num_pes: int) -> list[int]:
        """The PEs among ``range(num_pes)`` without a MAIN end to place (no
        MAIN line in their PAPI file, or an untimed or outlier one): they get
        no MAIN region."""
        ended = np.fromiter(self.main_end_s, dtype=np.int64, count=len(self.main_end_s))
        unended: list[int] = np.setdiff1d(np.arange(num_pes), ended).tolist()
        return unended


def papi_times(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    report: ReadReport | None = None,
    base_s: float = 1e-3,
    jobs: int | None = None,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
) -> PapiTimes:
    """Read a PAPI trace's region end times: PROC lines binned, MAIN ends.

    PROC and MAIN times share one outlier rule (docs/timeline.md): an
    outlier is counted and named in a warning in ``report``, never placed.
    The files are read by ``jobs`` worker processes (None or 0: all cores),
    or the ``engine``'s way; the result is the same whatever the way.

    Raises
    ------
    ActorProfError
        As :func:`actorprof.iter_papi`.
    """
    from ..engine.papi import reduce_papi_times

    report = ReadReport(kind="papi") if report is None else report
    engine = Engine(jobs=jobs, cache=False) if engine is None else engine
    before = copy.deepcopy(report)
    read = reduce_papi_times(
        path,
        phase=phase,
        num_pes=num_pes,
        report=report,
        base_s=base_s,
        engine=engine,
        progress=progress,
    )
    found = _papi_times_placed(read, num_pes=num_pes, base_s=base_s)
    if found is not None:
        return found
    # outliers to name by file and line: read again, a file per chunk
    report.__dict__.update(before.__dict__)
    return _papi_times_named(path, phase=phase, num_pes=num_pes, report=report, base_s=base_s)


def _papi_times_placed(
    read: PapiTimesRead, *, num_pes: int | None, base_s: float
) -> PapiTimes | None:
    """:func:`papi_times` from the engine's read (small files parsed together:
    65,536 PE files take seconds, not minutes); None when some time is an
    outlier, which only a read with line numbers can name."""
    acc, mains = read.handled, read.mains
    both = TimelineAccumulator(base_s=base_s)
    both.merge(acc)
    both.merge(mains)
    window = both.drop_outliers()
    acc.drop_outliers(window)
    pes, times = read.main_pes, read.main_times
    if acc.num_outliers or is_outlier(times, window).any():
        return None
    # each PE's last MAIN end, PEs in the order their first one came (as a dict fills)
    timed = np.isfinite(times)
    pes, times = pes[timed], times[timed]
    order = np.lexsort((-times, pes))  # by PE, latest first
    firsts, at = np.unique(pes, return_index=True)
    ends = times[order][np.searchsorted(pes[order], firsts)]
    came = np.argsort(at, kind="stable")
    main_end = dict(zip(firsts[came].tolist(), ends[came].tolist(), strict=True))
    return PapiTimes(acc.result(num_pes), main_end, [], 0)


def _papi_times_named(
    path: str | PathLike[str],
    *,
    phase: str | None,
    num_pes: int | None,
    report: ReadReport,
    base_s: float,
) -> PapiTimes:
    """:func:`papi_times` a file per chunk, every line numbered."""
    from ..read.papi import iter_papi
    from ..schema import MAIN_MAILBOX

    acc = TimelineAccumulator(base_s=base_s)
    mains = TimelineAccumulator(base_s=base_s)
    main_lines: list[tuple[int, float, str, int]] = []
    extremes = TimeExtremes()
    for chunk in iter_papi(path, phase=phase, num_pes=num_pes, report=report, line_numbers=True):
        where = report.files[-1].path
        main = chunk["mailbox"].to_numpy() == MAIN_MAILBOX
        times = chunk["time_s"].to_numpy(dtype=np.float64)
        lines = chunk["line"].to_numpy()
        main_lines += [
            (int(pe), float(t), where, int(line))
            for pe, t, line in zip(
                chunk["dst_pe"].to_numpy()[main], times[main], lines[main], strict=True
            )
        ]
        mains.add(chunk.loc[main, ["dst_pe", "time_s"]], pe_column="dst_pe")
        acc.add(chunk.loc[~main, ["dst_pe", "time_s"]], pe_column="dst_pe")
        extremes.add(where, times[~main], lines[~main])
    # one window for PROC and MAIN times (MAIN lines alone when there is no PROC line)
    both = TimelineAccumulator(base_s=base_s)
    both.merge(acc)
    both.merge(mains)
    window = both.drop_outliers()
    acc.drop_outliers(window)
    main_end: dict[int, float] = {}
    bad_mains = []
    for pe, t, where, line in main_lines:
        if is_outlier(np.asarray([t]), window)[0]:
            bad_mains.append(OutlierTime(where, line, t))
        elif np.isfinite(t):
            main_end[pe] = max(t, main_end.get(pe, t))
    total = acc.num_outliers + len(bad_mains)
    examples: list[OutlierTime] = []
    if total:
        order = {f.path: i for i, f in enumerate(report.files)}
        examples = sorted(
            extremes.outliers(window) + bad_mains, key=lambda o: (order.get(o.path, 0), o.line)
        )[:OUTLIER_EXAMPLES]
        report.warn(_outlier_warning(total, window, examples, "PAPI line(s)"))
    return PapiTimes(acc.result(num_pes), main_end, examples, total)


def find_papi_folder(trace_dir: str | PathLike[str]) -> Path | None:
    """The folder itself if it also holds a PAPI trace (same run), else None.

    A PAPI trace elsewhere may come from another run: pass it explicitly
    (``--papi DIR``), and :func:`clock_overlap` tells if the clocks agree.
    """
    base = Path(trace_dir)
    base = base if base.is_dir() else base.parent
    try:
        return base if find_pe_files(base, "papi") else None
    except ActorProfError:
        return None


def clock_overlap(view: TimelineView, papi: PapiTimes) -> bool:
    """Whether the PAPI trace's times overlap the logical trace's send times.

    Both are wall clocks of the same nodes; traces of one run overlap (the
    handling of messages interleaves with their sending). No timed sends or
    no PAPI times: True (nothing to contradict).
    """
    start, end = view.timeline.first_s, view.timeline.last_s
    papi_times_s = list(papi.main_end_s.values())
    if papi.handled.first_s is not None and papi.handled.last_s is not None:
        papi_times_s += [papi.handled.first_s, papi.handled.last_s]
    if start is None or end is None or not papi_times_s:
        return True
    slack = 1.0  # seconds: MAIN ends at done(0), after the last send
    return min(papi_times_s) <= end + slack and max(papi_times_s) >= start - slack


def perfetto_trace(
    view: TimelineView,
    *,
    papi: PapiTimes | None = None,
    bins: int = 1000,
    max_events: int = 2_000_000,
) -> dict[str, Any]:
    """Chrome Trace Event JSON (opens in ui.perfetto.dev) of the send rates.

    As :func:`perfetto_stream`, with the events in a list.
    """
    trace = perfetto_stream(view, papi=papi, bins=bins, max_events=max_events)
    trace["traceEvents"] = list(trace["traceEvents"])
    return trace


def perfetto_stream(
    view: TimelineView,
    *,
    papi: PapiTimes | None = None,
    bins: int = 1000,
    max_events: int = 2_000_000,
    texts: bool = False,
) -> dict[str, Any]:
    """Chrome Trace Event JSON (opens in ui.perfetto.dev) of the send rates,
    ``traceEvents`` an iterator (the writer writes it an event at a time: at
    65,536 PEs the events are millions of dicts, gigabytes held as a list).

    ``texts``: the counter events (nearly all of them) come as their compact
    JSON text (:class:`~actorprof._text.JsonText`, which the writer copies
    as it is), not as dicts: the same file, written 2-3x faster at 65,536
    PEs, where each of millions of dicts was converted and encoded.

    One process per PE with a counter track ``sent/s``, one ``all PEs``
    process with the total rate, and one slice per phase (first to last
    send). The timeline is merged to at most ``bins`` bins, fewer if the PEs
    x bins counter events would exceed ``max_events`` (a file must stay
    openable). Every counter track ends with a 0 at the end of its last bin,
    so integrating a track gives its messages. Timestamps are microseconds
    since ``otherData.start_epoch_s``: the first bin's start, or an earlier
    PAPI time.
    """
    n = max(view.num_pes, 1)
    bins = max(1, min(bins, max_events // (n + 1) - 1))  # one event per bin, and a closing 0
    shown = view.display(bins)
    handled = None if papi is None else _handled_bins(papi.handled, shown, bins)
    starts = [shown.start_s]
    if papi is not None and handled is not None:
        starts += [handled.start_s, *papi.main_end_s.values()]
    known = [t for t in starts if t is not None]
    origin = min(known) if known else 0.0
    shift_us = ((shown.start_s or origin) - origin) * 1e6
    times_us = shown.counts.index.to_numpy(dtype=np.float64) * 1e6 + shift_us
    counts = shown.counts.to_numpy()  # rates per PE as the events go: no second table
    rows = max(1, (1 << 22) // max(counts.shape[1], 1))
    total = np.concatenate(
        [np.zeros(0)]
        + [(counts[a : a + rows] / shown.bin_s).sum(axis=1) for a in range(0, len(counts), rows)]
    )
    end_us = float(times_us[-1] + shown.bin_s * 1e6) if len(times_us) else 0.0

    def events() -> Iterator[dict[str, Any] | JsonText]:
        total_pid = view.num_pes
        for pe in range(view.num_pes):
            yield {
                "ph": "M",
                "name": "process_name",
                "pid": pe,
                "tid": 0,
                "args": {"name": f"PE {pe}"},
            }
            yield {
                "ph": "M",
                "name": "process_sort_index",
                "pid": pe,
                "tid": 0,
                "args": {"sort_index": pe},
            }
        yield {
            "ph": "M",
            "name": "process_name",
            "pid": total_pid,
            "tid": 0,
            "args": {"name": "all PEs"},
        }
        track = _counter_texts if texts else _counter_track
        for pe in range(view.num_pes):
            yield from track("sent/s", pe, times_us, counts[:, pe] / shown.bin_s, end_us)
        yield from track("sent/s", total_pid, times_us, total, end_us, every_bin=True)
        if papi is not None and handled is not None:
            yield from _papi_events(
                view, papi, handled, origin=origin, shift_us=shift_us, track=track
            )
        for span in view.phases:
            yield {
                "ph": "X",
                "name": f"phase {span.name}",
                "cat": "phase",
                "pid": total_pid,
                "tid": 1,
                "ts": span.start_s * 1e6 + shift_us,
                "dur": (span.end_s - span.start_s) * 1e6,
                "args": {"messages": span.messages},
            }

    other: dict[str, Any] = {
        "generator": f"actorprof {__version__}",
        "trace": view.path,
        "start_epoch_s": origin if known else view.timeline.start_s,
        "bin_s": shown.bin_s,
    }
    if handled is not None:
        other["handled_bin_s"] = handled.bin_s
    return {"traceEvents": events(), "displayTimeUnit": "ms", "otherData": other}


def _counter_points(
    times_us: np.ndarray, values: np.ndarray, end_us: float, *, every_bin: bool
) -> Iterator[tuple[float, float]]:
    """``(ts, value)`` of a counter track's events: where the value changes
    (``every_bin``: at every bin), and a 0 at ``end_us`` (the end of the
    last bin) so that a viewer does not hold the last rate on."""
    previous = None
    for ts, value in zip(times_us.tolist(), values.tolist(), strict=True):
        if every_bin or value != previous:
            yield float(ts), float(value)
            previous = value
    if previous:
        yield float(end_us), 0.0


def _counter_track(
    name: str,
    pid: int,
    times_us: np.ndarray,
    values: np.ndarray,
    end_us: float,
    *,
    every_bin: bool = False,
) -> Iterator[dict[str, Any]]:
    """A counter track's events (:func:`_counter_points`) as dicts."""
    for ts, value in _counter_points(times_us, values, end_us, every_bin=every_bin):
        yield {
            "ph": "C",
            "name": name,
            "pid": pid,
            "tid": 0,
            "ts": ts,
            "args": {"messages_per_s": value},
        }


def _counter_texts(
    name: str,
    pid: int,
    times_us: np.ndarray,
    values: np.ndarray,
    end_us: float,
    *,
    every_bin: bool = False,
) -> Iterator[dict[str, Any] | JsonText]:
    """:func:`_counter_track`'s events as the writer's compact JSON would
    write them (floats by ``repr``, as :mod:`json` writes them); its dicts
    where a value is not finite (the writer writes those as ``null``)."""
    if not (np.isfinite(values).all() and np.isfinite(times_us).all() and np.isfinite(end_us)):
        yield from _counter_track(name, pid, times_us, values, end_us, every_bin=every_bin)
        return
    head = f'{{"ph": "C", "name": {json.dumps(name)}, "pid": {pid}, "tid": 0, "ts": '
    for ts, value in _counter_points(times_us, values, end_us, every_bin=every_bin):
        yield JsonText(f'{head}{ts!r}, "args": {{"messages_per_s": {value!r}}}}}')


def _handled_bins(handled: Timeline, shown: Timeline, bins: int) -> Timeline:
    """The handled messages on the send rate's own bins when they nest (same
    width, same edges), else merged to at most ``bins`` bins of their own."""
    if shown.start_s is not None:
        aligned = rebin_onto(handled, shown.bin_s, shown.start_s)
        if aligned is not None and len(aligned.counts) <= bins:
            return aligned
    return rebin(handled, bins)


def _papi_events(
    view: TimelineView,
    papi: PapiTimes,
    handled: Timeline,
    *,
    origin: float,
    shift_us: float,
    track: Callable[..., Iterator[dict[str, Any] | JsonText]] = _counter_track,
) -> Iterator[dict[str, Any] | JsonText]:
    """``handled/s`` counter tracks (events made by ``track``) and MAIN
    slices, on the trace's clock.

    A MAIN slice runs from the PE's first logical send (when message
    construction visibly started) to its MAIN line (``done(0)``); where the
    PE sent nothing, or ended MAIN before its first send, an instant event
    marks the MAIN end instead.
    """
    if handled.start_s is not None:
        start_us = (handled.start_s - origin) * 1e6
        times_us = handled.counts.index.to_numpy(dtype=np.float64) * 1e6 + start_us
        end_us = float(times_us[-1] + handled.bin_s * 1e6)
        counts = handled.counts.to_numpy()
        for column, pe_id in enumerate(handled.counts.columns):
            rates = counts[:, column] / handled.bin_s
            yield from track("handled/s", int(pe_id), times_us, rates, end_us)
    first, _ = view.pe_first_last()
    for pe, end_s in sorted(papi.main_end_s.items()):
        end_us = (end_s - origin) * 1e6
        start_rel = first[pe] if pe < len(first) else np.nan
        if np.isfinite(start_rel) and start_rel * 1e6 + shift_us <= end_us:
            start_us = start_rel * 1e6 + shift_us
            yield {
                "ph": "X",
                "name": "MAIN",
                "cat": "region",
                "pid": pe,
                "tid": 1,
                "ts": float(start_us),
                "dur": float(end_us - start_us),
                "args": {"note": "from the first send to done(0)"},
            }
        else:
            yield {
                "ph": "i",
                "name": "MAIN end",
                "cat": "region",
                "pid": pe,
                "tid": 1,
                "ts": float(end_us),
                "s": "t",
            }


# --- files: figures, tables and the summary -------------------------------


def write_timeline_figure(
    view: TimelineView, out: Sink, *, bins: int = 200, log_scale: bool = False
) -> None:
    """``timeline_rate``: the rate (phases shaded when several) over the heat strip."""
    write_rate_figure(
        timeline_bins(view.display(bins)), view.phases, view.path, out, log_scale=log_scale
    )


def write_rate_figure(
    shown: TimelineBins,
    phases: list[PhaseSpan],
    path: str,
    out: Sink,
    *,
    log_scale: bool = False,
) -> None:
    """:func:`write_timeline_figure` of a view's ``display(bins)`` bins
    (``shown``), ``phases`` and ``path``: what ``timeline_view(bins_ready=)``
    gives before the view is made."""
    spans = [(p.name, p.start_s, p.end_s) for p in phases] if len(phases) > 1 else []
    names = [p.name for p in phases if p.name and not p.name.startswith("(")]  # not "(unnamed)"
    # built from numpy arrays by timeline_figures: a figure server builds it
    # without pandas
    out.draw(
        partial(
            rate_figure,
            shown,
            spans=spans,
            log_scale=log_scale,
            run=(path, names[0] if len(phases) == 1 and names else None),
        ),
        "rate",
    )

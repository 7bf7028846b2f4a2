"""The timeline view: messages sent per PE over time, every phase on one axis.

Also builds the Chrome Trace Event (Perfetto) export of the same data.
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._progress import ProgressSink, track
from .._repr import Summarized, count
from .._text import run_name
from .._version import __version__
from ..analyze.imbalance import imbalance
from ..analyze.timeline import Timeline, TimelineAccumulator, rebin
from ..errors import ActorProfError
from ..read import ReadReport, find_pe_files
from ..read.logical import iter_logical

if TYPE_CHECKING:
    from ..write import Sink

__all__ = [
    "PapiTimes",
    "PhaseSpan",
    "TimelineView",
    "clock_overlap",
    "find_papi_folder",
    "papi_times",
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


@dataclass(frozen=True, repr=False)
class TimelineView(Summarized):
    """Send times of a run: the fine timeline and each phase's span."""

    path: str
    timeline: Timeline
    phases: list[PhaseSpan]
    reports: dict[str, ReadReport]

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        tl = self.timeline
        return run_name(self.path), [
            ("PEs", count(self.num_pes)),
            ("timed messages", count(int(tl.counts.to_numpy().sum()))),
            ("s", count(float(len(tl.counts) * tl.bin_s))),
            ("phases", count(len(self.phases))),
            ("warnings", count(sum(len(r.warnings) for r in self.reports.values()))),
        ]

    @property
    def num_pes(self) -> int:
        return len(self.timeline.counts.columns)

    def display(self, bins: int = 200) -> Timeline:
        """The timeline merged to at most ``bins`` bins."""
        return rebin(self.timeline, bins)

    def pe_first_last(self) -> tuple[np.ndarray, np.ndarray]:
        """First and last send time per PE (bin starts; NaN for silent PEs)."""
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

    def summary(self, *, bins: int = 200) -> dict[str, Any]:
        tl = self.timeline
        shown = self.display(bins)
        rate = shown.rate
        first, last = self.pe_first_last()
        timed = int(tl.counts.to_numpy().sum())
        finished = np.nan_to_num(last, nan=0.0)
        late = imbalance(finished).to_dict() if len(finished) else None
        return {
            "kind": "timeline",
            "actorprof_version": __version__,
            "trace": self.path,
            "num_pes": self.num_pes,
            "start_epoch_s": tl.start_s,
            "duration_s": len(tl.counts) * tl.bin_s,
            "bin_s": tl.bin_s,
            "display_bin_s": shown.bin_s,
            "messages_timed": timed,
            "messages_untimed": int(tl.untimed.sum()),
            "peak_rate_per_s": float(rate.max()) if len(rate) else 0.0,
            "peak_at_s": float(shown.counts.index[int(np.argmax(rate.to_numpy()))])
            if len(rate)
            else None,
            "phases": [vars(p) for p in self.phases],
            "pe_first_send_s": [None if np.isnan(v) else float(v) for v in first],
            "pe_last_send_s": [None if np.isnan(v) else float(v) for v in last],
            "last_send_imbalance": late,
            "note": "times are the senders' clocks; across nodes they align only "
            "as well as the nodes' clocks do",
            "files": {phase: report.to_dict()["files"] for phase, report in self.reports.items()},
        }


def timeline_view(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    base_s: float = 1e-3,
    max_bins: int = 100_000,
    reports: dict[str, ReadReport] | None = None,
    progress: ProgressSink | None = None,
) -> TimelineView:
    """Read the logical trace's send times, every phase (or just ``phase``).

    Phases share one time axis (seconds since the first send of any of
    them), so ``PhaseSpan``s show when each phase ran. ``progress`` is told
    the bytes and files of each phase's read as it goes.

    Raises
    ------
    ActorProfError
        As :func:`actorprof.iter_logical`.
    """
    reports = {} if reports is None else reports
    found = find_pe_files(Path(path), "send")
    names = [phase] if phase is not None else list(found)
    total = TimelineAccumulator(base_s=base_s, max_bins=max_bins)
    partial: list[tuple[str, Timeline]] = []
    for name in names:
        label = name or "(unnamed)"
        report = reports.setdefault(label, ReadReport(kind="logical"))
        acc = TimelineAccumulator(base_s=base_s, max_bins=max_bins)
        chunks = iter_logical(path, phase=name or None, num_pes=num_pes, report=report)
        for chunk in track(chunks, progress, planned=report.planned, done=report.done):
            acc.add(chunk)
        partial.append((label, acc.result()))
        total.merge(acc)
        if not name and found.keys() - {""}:
            report.notes = [n for n in report.notes if "other phases here" not in n]
    timeline = total.result(num_pes)
    spans = []
    for label, tl in partial:
        if tl.start_s is None or timeline.start_s is None:
            continue
        start = tl.start_s - timeline.start_s
        spans.append(
            PhaseSpan(label, start, start + len(tl.counts) * tl.bin_s, int(tl.counts.sum().sum()))
        )
    return TimelineView(str(path), timeline, spans, reports)


@dataclass(frozen=True, repr=False)
class PapiTimes(Summarized):
    """When PEs handled messages (PROC) and ended MAIN, from a PAPI trace.

    Attributes
    ----------
    handled
        Handled messages per PE (the receiver, ``dst_pe``) per time bin.
    main_end_s
        Epoch time of each PE's MAIN line (written at ``done(0)``).
    """

    handled: Timeline
    main_end_s: dict[int, float]

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        return "PAPI regions", [
            ("PEs", count(len(self.handled.counts.columns))),
            ("messages handled", count(int(self.handled.counts.to_numpy().sum()))),
            ("MAIN ends", count(len(self.main_end_s))),
        ]


def papi_times(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    report: ReadReport | None = None,
    base_s: float = 1e-3,
) -> PapiTimes:
    """Read a PAPI trace's region end times: PROC lines binned, MAIN ends.

    Raises
    ------
    ActorProfError
        As :func:`actorprof.iter_papi`.
    """
    from ..read.papi import iter_papi
    from ..schema import MAIN_MAILBOX

    acc = TimelineAccumulator(base_s=base_s)
    main_end: dict[int, float] = {}
    for chunk in iter_papi(path, phase=phase, num_pes=num_pes, report=report):
        main = chunk["mailbox"].to_numpy() == MAIN_MAILBOX
        for pe, t in zip(
            chunk["dst_pe"].to_numpy()[main], chunk["time_s"].to_numpy()[main], strict=True
        ):
            if np.isfinite(t):
                main_end[int(pe)] = max(float(t), main_end.get(int(pe), float(t)))
        proc = chunk.loc[~main, ["dst_pe", "time_s"]]
        acc.add(proc, pe_column="dst_pe")
    return PapiTimes(acc.result(num_pes), main_end)


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
    start = view.timeline.start_s
    papi_times_s = list(papi.main_end_s.values())
    if papi.handled.start_s is not None:
        papi_times_s += [
            papi.handled.start_s,
            papi.handled.start_s + len(papi.handled.counts) * papi.handled.bin_s,
        ]
    if start is None or not papi_times_s:
        return True
    end = start + len(view.timeline.counts) * view.timeline.bin_s
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

    One process per PE with a counter track ``sent/s``, one ``all PEs``
    process with the total rate, and one instant-span slice per phase. The
    timeline is merged to at most ``bins`` bins, fewer if the PEs x bins
    counter events would exceed ``max_events`` (a file must stay openable).
    Timestamps are microseconds since the first send.
    """
    n = max(view.num_pes, 1)
    bins = max(1, min(bins, max_events // (n + 1)))
    shown = view.display(bins)
    times_us = shown.counts.index.to_numpy(dtype=np.float64) * 1e6
    values = shown.counts.to_numpy() / shown.bin_s
    events: list[dict[str, Any]] = []
    total_pid = view.num_pes
    for pe in range(view.num_pes):
        events.append(
            {"ph": "M", "name": "process_name", "pid": pe, "tid": 0, "args": {"name": f"PE {pe}"}}
        )
        events.append(
            {
                "ph": "M",
                "name": "process_sort_index",
                "pid": pe,
                "tid": 0,
                "args": {"sort_index": pe},
            }
        )
    events.append(
        {"ph": "M", "name": "process_name", "pid": total_pid, "tid": 0, "args": {"name": "all PEs"}}
    )
    for pe in range(view.num_pes):
        previous = None
        for ts, value in zip(times_us, values[:, pe], strict=True):
            if value != previous:
                events.append(
                    {
                        "ph": "C",
                        "name": "sent/s",
                        "pid": pe,
                        "tid": 0,
                        "ts": float(ts),
                        "args": {"messages_per_s": float(value)},
                    }
                )
                previous = value
    for ts, value in zip(times_us, values.sum(axis=1), strict=True):
        events.append(
            {
                "ph": "C",
                "name": "sent/s",
                "pid": total_pid,
                "tid": 0,
                "ts": float(ts),
                "args": {"messages_per_s": float(value)},
            }
        )
    if papi is not None:
        events.extend(_papi_events(view, papi, bins=bins))
    for span in view.phases:
        events.append(
            {
                "ph": "X",
                "name": f"phase {span.name}",
                "cat": "phase",
                "pid": total_pid,
                "tid": 1,
                "ts": span.start_s * 1e6,
                "dur": (span.end_s - span.start_s) * 1e6,
                "args": {"messages": span.messages},
            }
        )
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "generator": f"actorprof {__version__}",
            "trace": view.path,
            "start_epoch_s": view.timeline.start_s,
            "bin_s": shown.bin_s,
        },
    }


def _papi_events(view: TimelineView, papi: PapiTimes, *, bins: int) -> list[dict[str, Any]]:
    """``handled/s`` counter tracks and MAIN slices, on the logical trace's clock.

    A MAIN slice runs from the PE's first logical send (when message
    construction visibly started) to its MAIN line (``done(0)``); where the
    PE sent nothing, or ended MAIN before its first send, an instant event
    marks the MAIN end instead.
    """
    origin = view.timeline.start_s
    if origin is None:  # no timed send: use the PAPI clock's own start
        origin = papi.handled.start_s or min(papi.main_end_s.values(), default=0.0)
    events: list[dict[str, Any]] = []
    handled = rebin(papi.handled, bins)
    if handled.start_s is not None:
        shift_us = (handled.start_s - origin) * 1e6
        times_us = handled.counts.index.to_numpy(dtype=np.float64) * 1e6 + shift_us
        rates = handled.counts.to_numpy() / handled.bin_s
        for column, pe_id in enumerate(handled.counts.columns):
            previous = None
            for ts, value in zip(times_us, rates[:, column], strict=True):
                if value != previous and ts >= 0:
                    events.append(
                        {
                            "ph": "C",
                            "name": "handled/s",
                            "pid": int(pe_id),
                            "tid": 0,
                            "ts": float(ts),
                            "args": {"messages_per_s": float(value)},
                        }
                    )
                    previous = value
    first, _ = view.pe_first_last()
    for pe, end_s in sorted(papi.main_end_s.items()):
        end_us = (end_s - origin) * 1e6
        start_rel = first[pe] if pe < len(first) else np.nan
        if np.isfinite(start_rel) and start_rel * 1e6 <= end_us:
            events.append(
                {
                    "ph": "X",
                    "name": "MAIN",
                    "cat": "region",
                    "pid": pe,
                    "tid": 1,
                    "ts": float(start_rel * 1e6),
                    "dur": float(end_us - start_rel * 1e6),
                    "args": {"note": "from the first send to done(0)"},
                }
            )
        elif end_us >= 0:
            events.append(
                {
                    "ph": "i",
                    "name": "MAIN end",
                    "cat": "region",
                    "pid": pe,
                    "tid": 1,
                    "ts": float(end_us),
                    "s": "t",
                }
            )
    return events


# --- files: figures, tables and the summary -------------------------------


def write_timeline_figure(
    view: TimelineView, out: Sink, *, bins: int = 200, log_scale: bool = False
) -> None:
    """``timeline_rate``: the rate (phases shaded when several) over the heat strip."""
    from ..plot.timeline import plot_rate, plot_timeline_heat
    from ..write import label_run, new_figure

    shown = view.display(bins)
    fig = new_figure(11.0, 7.5, nrows=2)
    top, bottom = fig.axes
    fig.get_layout_engine().set(h_pad=0.1)  # type: ignore[union-attr,call-arg]
    spans = [(p.name, p.start_s, p.end_s) for p in view.phases] if len(view.phases) > 1 else []
    plot_rate(shown, ax=top, spans=spans, title="Logical messages sent over time")
    plot_timeline_heat(shown, ax=bottom, log=log_scale)
    bottom.sharex(top)
    names = [
        p.name for p in view.phases if p.name and not p.name.startswith("(")
    ]  # not "(unnamed)"
    label_run(fig, view.path, names[0] if len(view.phases) == 1 and names else None)
    out.figure(fig, "rate")

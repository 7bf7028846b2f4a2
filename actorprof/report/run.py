"""The run report: every trace kind of a run folder read, analysed and judged.

``run_report(path)`` is the Python twin of ``actorprof report``: it finds the
logical, PAPI, overall and physical traces of a run (in the folder itself or
its immediate subfolders, every phase and label), builds each kind's view,
the timeline and, when both traces are there, the aggregation view, and
gathers a JSON-able summary: the run at a glance, each view's summary, the
line coverage of every file and the findings of
:mod:`actorprof.analyze.findings`. Kinds that are absent are listed; a kind
that is present but cannot be read is reported as an error of that kind
while the others are still analysed. No plotting, no files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from .._memory import release_memory
from .._progress import ProgressSink
from .._repr import Summarized, count
from .._text import PlainList, run_name
from .._version import __version__
from ..analyze.matrix import DENSE_MAX_PES
from ..engine import Engine, SendTimes
from ..engine.run import start_workers_for
from ..errors import ActorProfError, NoTraceError
from ..kinds.aggregation import (
    AggregationView,
    build_aggregation_view,
    pes_per_node_from_nodes,
    physical_view_and_buffers,
)
from ..kinds.logical import LogicalView, logical_view
from ..kinds.overall import OverallView, overall_view
from ..kinds.papi import PapiView, papi_view
from ..kinds.physical import PhysicalView
from ..kinds.timeline import TimelineView, timeline_view
from ..read import FileColumns, ReadReport
from .findings import RULES, report_findings
from .traces import (
    HOW_TO_GET,
    KINDS,
    UNNAMED,
    RunTraces,
    find_run_traces,
    phase_name,
)

__all__ = [
    "KINDS",
    "UNNAMED",
    "RunReport",
    "RunTraces",
    "find_run_traces",
    "phase_name",
    "run_report",
    "with_coverage",
]


def _times_from_timeline(phases: dict[str, Any], timeline: Mapping[str, Any]) -> None:
    """Give each logical phase the timeline's exact span, outlier times set apart.

    The logical reduction keeps only the smallest and largest time, so one
    corrupt timestamp (``1e300``) would be the phase's last send; the timeline
    reads every time and sets outliers apart (docs/timeline.md). The phase's
    raw extremes stay beside it (``first_send_raw_s``, ``last_send_raw_s``)
    when they differ.
    """
    start = timeline.get("start_epoch_s")
    if not timeline.get("messages_outliers"):
        return  # the extremes are the span
    spans = {p["name"]: p for p in timeline.get("phases", [])}
    for name, phase in phases.items():
        span = spans.get(name)
        totals = phase["totals"]
        if span is None or start is None or span.get("messages", 0) == 0:
            continue
        first, last = start + span["start_s"], start + span["end_s"]
        if (totals["first_send_s"], totals["last_send_s"]) != (first, last):
            totals["first_send_raw_s"] = totals["first_send_s"]
            totals["last_send_raw_s"] = totals["last_send_s"]
        totals["first_send_s"], totals["last_send_s"] = first, last
        totals["duration_s"] = round(span["end_s"] - span["start_s"], 6)


@dataclass(repr=False)
class RunReport(Summarized):
    """Every view of one run; ``errors`` holds the kinds that could not be read."""

    traces: RunTraces
    logical: dict[str, LogicalView] = field(default_factory=dict)
    papi: dict[str, PapiView] = field(default_factory=dict)
    overall: OverallView | None = None
    physical: PhysicalView | None = None
    timeline: TimelineView | None = None
    aggregation: AggregationView | None = None
    reports: list[tuple[str, str | None, ReadReport]] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    top: int = 10

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        views = [*self.logical.values(), *self.papi.values(), self.overall, self.physical]
        pes = next((v.num_pes for v in views if v is not None), None)
        return run_name(self.traces.root), [
            ("PEs", "unknown" if pes is None else count(pes)),
            ("kinds read", count(len(self.kinds_read))),
            ("kinds not read", count(len(self.errors))),
            ("read", ", ".join(self.kinds_read) or "none"),
            ("absent", ", ".join(self.traces.absent) or "none"),
        ]

    @property
    def kinds_read(self) -> list[str]:
        return [k for k in KINDS if getattr(self, k)]

    def summary(self, *, coverage: bool = True) -> dict[str, Any]:
        """JSON-able summary (``report.json``), findings included.

        ``coverage=False``: the ``coverage`` list (a dict per file read:
        196,608 of them for three kinds at 65,536 PEs) is left empty, to be
        filled by :func:`with_coverage` once the views are let go.
        """
        s: dict[str, Any] = {
            "kind": "report",
            "actorprof_version": __version__,
            "run": str(self.traces.root),
            "kinds_found": self.traces.found,
            "kinds_read": self.kinds_read,
            "kinds_absent": self.traces.absent,
            "how_to_get_absent": {k: HOW_TO_GET[k] for k in self.traces.absent},
            "locations": {k: self.traces.location(k) for k in self.traces.found},
            "errors": dict(self.errors),
            "notes": list(self.traces.notes),
        }
        s["logical"] = (
            {"phases": {name: self._logical_summary(v) for name, v in self.logical.items()}}
            if self.logical
            else None
        )
        s["timeline"] = self._timeline_summary()
        if s["logical"] is not None and s["timeline"] is not None:
            _times_from_timeline(s["logical"]["phases"], s["timeline"])
        s["papi"] = (
            {
                "phases": {
                    name: _without_files(v.summary(files=False)) for name, v in self.papi.items()
                }
            }
            if self.papi
            else None
        )
        s["overall"] = None if self.overall is None else self._overall_summary(self.overall)
        s["physical"] = (
            None if self.physical is None else _without_files(self.physical.summary(top=self.top))
        )
        s["aggregation"] = (
            None if self.aggregation is None else self.aggregation.summary(files=False)
        )
        s["coverage"] = self.coverage() if coverage else []
        s["at_a_glance"] = self._at_a_glance(s)
        s["findings"] = [f.to_dict() for f in report_findings(s)]
        s["finding_rules"] = RULES
        return s

    def _logical_summary(self, view: LogicalView) -> dict[str, Any]:
        s = _without_files(view.summary(top=self.top, files=False))
        s["num_files"] = view.report.file_count
        pairs = view.pairs
        src, dst = pairs["src_pe"].to_numpy(), pairs["dst_pe"].to_numpy()
        messages = pairs["messages"].to_numpy()
        s["per_pe"] = {
            "sent": [int(v) for v in view.pes["sent"]],
            "received": [int(v) for v in view.pes["received"]],
        }
        s["direction"] = {
            "num_pes": view.num_pes,
            "upper": int(messages[src < dst].sum()),
            "lower": int(messages[src > dst].sum()),
            "diagonal": int(messages[src == dst].sum()),
        }
        return s

    def _timeline_summary(self) -> dict[str, Any] | None:
        if self.timeline is None:
            return None
        return self.timeline.summary(files=False)

    def _overall_summary(self, view: OverallView) -> dict[str, Any]:
        s = _without_files(view.summary())
        for g in s["groups"]:
            times = view.group_times(g["label"], g["run"])
            g["pe_fractions"] = {
                "pe": [int(p) for p in times["pe"]],
                **{
                    part: _finite(times[f"{part}_frac"].to_numpy(dtype=np.float64))
                    for part in ("main", "comm", "proc")
                },
            }
        return s

    def coverage(self) -> list[dict[str, Any]]:
        """Every file read: lines read, blank, skipped by reason (expected or not).

        Plain JSON values only (a :class:`~actorprof._text.PlainList`): the
        writer does not walk its 196,608 entries at 65,536 PEs again (0.8 s).
        """
        out = PlainList()
        for kind, scope, report in self.reports:
            out.extend(_coverage_entries(kind, None if scope is None else str(scope), report))
        return out

    def _at_a_glance(self, s: dict[str, Any]) -> dict[str, Any]:
        glance: dict[str, Any] = {
            "num_pes": None,
            "num_pes_from": None,
            "num_nodes": None,
            "messages": None,
            "bytes": None,
            "duration_s": None,
            "messages_handled": None,
            "t_total_max_cycles": None,
            "physical_buffers": None,
            "physical_bytes": None,
        }
        logical = list(self.logical.values())
        sources: list[tuple[str, int]] = []
        if logical:
            sources.append(("logical", logical[0].num_pes))
            glance["num_nodes"] = logical[0].num_nodes
            glance["messages"] = sum(int(v.pairs["messages"].sum()) for v in logical)
            glance["bytes"] = sum(int(v.pairs["bytes"].sum()) for v in logical)
            durations = [
                p["totals"]["duration_s"]
                for p in s["logical"]["phases"].values()
                if p["totals"]["duration_s"] is not None
            ]
            if s["timeline"] is not None and s["timeline"]["messages_timed"]:
                glance["duration_s"] = s["timeline"]["duration_s"]
            elif durations:
                glance["duration_s"] = max(durations)
        if self.papi:
            views = list(self.papi.values())
            sources.append(("papi", views[0].num_pes))
            glance["messages_handled"] = sum(int(v.pes["messages"].sum()) for v in views)
        if self.overall is not None:
            sources.append(("overall", self.overall.num_pes))
            groups = s["overall"]["groups"]
            if groups:
                glance["t_total_max_cycles"] = groups[0]["totals"]["t_total_max_cycles"]
        if self.physical is not None:
            sources.append(("physical", self.physical.num_pes))
            totals = s["physical"]["totals"]["all"]
            glance["physical_buffers"] = totals["buffers"]
            glance["physical_bytes"] = totals["bytes"]
            if glance["num_nodes"] is None:
                glance["num_nodes"] = self.physical.num_nodes
        if sources:
            glance["num_pes_from"], glance["num_pes"] = sources[0]
            counts = {kind: n for kind, n in sources}
            if len(set(counts.values())) > 1:
                glance["num_pes_by_kind"] = counts
        return glance


def _coverage_entries(kind: str, scope: str | None, report: ReadReport) -> Iterator[dict[str, Any]]:
    """Each file's coverage entry (:meth:`RunReport.coverage`): the files held
    as columns (they skipped no line) made straight from them, one dict per
    file and no report or tuple between (65,536 PEs, two kinds: 0.3 s less)."""
    normal = report.expected_reasons
    for f in report.file_accounts():
        if isinstance(f, FileColumns):
            yield from (
                {
                    "kind": kind,
                    "scope": scope,
                    "path": str(path),
                    "pe": None if pe is None else int(pe),
                    "bytes": nbytes,
                    "lines_read": lines,
                    "lines_blank": blank,
                    "lines_skipped": 0,
                    "skipped_expected": {},
                    "skipped_unexpected": {},
                    "first_skipped": [],
                }
                for path, pe, _, lines, blank, nbytes in f.rows()
            )
            continue
        expected = {str(r): int(n) for r, n in f.skipped.items() if r in normal}
        unexpected = {str(r): int(n) for r, n in f.skipped.items() if r not in normal}
        yield {
            "kind": kind,
            "scope": scope,
            "path": str(f.path),
            "pe": None if f.pe is None else int(f.pe),
            "bytes": int(f.bytes_read),
            "lines_read": int(f.lines_read),
            "lines_blank": int(f.lines_blank),
            "lines_skipped": int(f.lines_skipped),
            "skipped_expected": dict(sorted(expected.items())),
            "skipped_unexpected": dict(sorted(unexpected.items())),
            "first_skipped": [e.to_dict() for e in f.examples],
        }


def with_coverage(summary: dict[str, Any], run: RunReport) -> dict[str, Any]:
    """A summary made with ``coverage=False`` completed: ``run``'s coverage, and the findings.

    ``run`` needs its traces and reports only (the views may be let go):
    the same summary as ``run.summary()``.
    """
    summary["coverage"] = run.coverage()
    summary["findings"] = [f.to_dict() for f in report_findings(summary)]
    return summary


def _without_files(summary: dict[str, Any]) -> dict[str, Any]:
    """A view summary without its per-file list (the report has its own coverage)."""
    return {k: v for k, v in summary.items() if k != "files"}


def _finite(values: np.ndarray) -> list[float | None]:
    """``values`` as floats, None where not finite (65,536 PEs: one pass,
    not a test per value)."""
    out: list[float | None] = values.tolist()
    for k in np.flatnonzero(~np.isfinite(values)).tolist():
        out[k] = None
    return out


def run_report(
    path: str | PathLike[str],
    *,
    num_pes: int | None = None,
    top: int = 10,
    timeline: bool = True,
    jobs: int | None = 1,
    cache: bool = False,
    cache_dir: str | PathLike[str] | None = None,
    scheduler: Any = None,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
    on_read: Callable[[RunReport, str], object] | None = None,
    summaries_after_read: bool = False,
) -> RunReport:
    """Find, read and analyse every trace kind of a run folder.

    Parameters
    ----------
    path
        The run folder: traces in it, or in ``logical/``, ``papi/``,
        ``overall/``, ``physical/`` (any names) subfolders.
    num_pes
        The run's PE count, checked against every trace; None infers it.
    top
        Top pairs (logical) and links (physical) kept in the summaries.
    timeline
        Also build the timeline of the logical trace: its send times are
        binned in the logical trace's one read, when every file is read
        (none from the cache) and no time is an outlier; else the timeline
        reads the trace again (docs/performance.md, "report: one read of
        the logical trace").
    jobs, cache, cache_dir, scheduler
        How the logical, timeline, PAPI and physical traces are read (see
        :func:`actorprof.logical_view`).
    engine
        All of the above at once (they are then ignored); the timeline's
        second read, if any, never uses the cache.
    progress
        Told the bytes and files of every read, one kind after the other
        (e.g. the CLI's progress line).
    on_read
        Called with the run report and a kind (``logical``, ``timeline``,
        ``physical``, ``aggregation``, ``overall``, ``papi``: the reading
        order) once its views are in it, before the next kind is read: e.g.
        to draw its figures meanwhile (the CLI's
        :class:`~actorprof.report.figures.ReportFigures`). It must leave the
        views as they are.
    summaries_after_read
        Once ``on_read`` is done with the timeline or the physical trace
        (their figures drawn), keep of the view what the summary needs:
        the timeline's PE x bin table and the physical links are let go
        (:meth:`TimelineView.without_table`,
        :meth:`PhysicalView.without_links`). At 65,536 PEs they are
        hundreds of MB, held while the physical trace is read and the
        aggregation compares it. The summary is the same; the figures of
        those views cannot be drawn again from them.

    Returns
    -------
    RunReport
        Kinds that are present but unreadable are in ``errors``.

    Raises
    ------
    UsageError
        ``path`` is not a folder.
    NoTraceError
        No trace of any kind is there.
    ActorProfError
        Traces are there but none of them could be read.

    Examples
    --------
    >>> r = run_report("examples/ig_8pe_2nodes")  # doctest: +SKIP
    >>> r.summary()["at_a_glance"]["messages"]  # doctest: +SKIP
    160000
    """
    traces = find_run_traces(path)
    if not traces.found:
        raise NoTraceError(
            f"{traces.root}: no trace of any kind found in the folder or its subfolders; "
            "looked for " + "; ".join(HOW_TO_GET.values()) + ". Is this the run folder?"
        )
    run = RunReport(traces=traces, top=top)
    # the workers ready with every kind's map step (a PAPI or physical worker
    # then does not import it, and pandas, for its first unit); the timeline's
    # reads the logical trace again when its times could not be binned in one read
    if engine is None:
        engine = Engine.of(jobs=jobs, cache=cache, cache_dir=cache_dir, scheduler=scheduler)
    start_workers_for(
        engine,
        {
            "logical": traces.logical,
            "timeline": traces.logical,
            "physical": traces.physical,
            "papi": traces.papi,
        },
    )

    def read(kind: str) -> None:
        if on_read is not None:
            on_read(run, kind)

    # each logical phase's send times, binned in its matrix's read for the timeline
    binned: dict[str | None, SendTimes] = {}
    if traces.logical is not None:
        _read_logical(run, traces.logical, num_pes, engine, progress, binned if timeline else None)
        read("logical")
    if traces.logical is not None and timeline and run.logical:
        run.timeline = _guard(
            run,
            "timeline",
            lambda: timeline_view(
                traces.logical or "",
                num_pes=num_pes,
                progress=progress,
                engine=replace(engine, cache=False, cache_dir=None),
                binned=binned,
            ),
        )
        read("timeline")
        if summaries_after_read and on_read is not None and run.timeline is not None:
            run.timeline = run.timeline.without_table()
    binned.clear()
    release_memory()
    # the physical trace (and the aggregation) next, while little is held (the
    # timeline's binned send times let go): its read is the report's largest
    # (millions of links at 65,536 PEs)
    if traces.physical is not None:
        first = next(iter(run.logical.values()), None)
        k = None if first is None else pes_per_node_from_nodes(first.matrices.pe_node)
        report = ReadReport(kind="physical")
        # one read of physical.txt gives the physical view and the model's buffers
        found = _guard(
            run,
            "physical",
            lambda: physical_view_and_buffers(
                traces.physical or "",
                num_pes=num_pes,
                pes_per_node=k,
                report=report,
                progress=progress,
                engine=engine,
            ),
        )
        if found is not None:
            run.physical, buffers = found
            del found  # the view is the run's alone (it may let its links go)
            run.reports.append(("physical", None, report))
            read("physical")
            if summaries_after_read and on_read is not None and run.physical is not None:
                run.physical = run.physical.without_links(top=run.top)
                release_memory()
            if first is not None:
                logical = first
                run.aggregation = _guard(
                    run,
                    "aggregation",
                    lambda: _held(
                        build_aggregation_view(
                            logical,
                            buffers,
                            physical_path=str(traces.physical),
                            physical_report=report,
                            keep_links=None,
                        )
                    ),
                )
                read("aggregation")
            del buffers  # held by the aggregation view, if at all
            release_memory()
    # the overall profile (a small read) before the PAPI trace: its figure is
    # drawn while PAPI is read, and only PAPI's are left after the last read
    if traces.overall is not None:
        report = ReadReport(kind="overall")
        run.overall = _guard(
            run,
            "overall",
            lambda: overall_view(
                traces.overall or "", num_pes=num_pes, report=report, progress=progress
            ),
        )
        if run.overall is not None:
            run.reports.append(("overall", None, report))
            read("overall")
    if traces.papi is not None:
        _read_phases(
            run,
            "papi",
            traces.papi_phases,
            run.papi,
            lambda key, report: papi_view(
                traces.papi or "",
                phase=key,
                num_pes=num_pes,
                report=report,
                engine=engine,
                progress=progress,
            ),
        )
        read("papi")
    _in_report_order(run)
    if not run.kinds_read:
        raise ActorProfError(
            f"{traces.root}: traces found ({', '.join(traces.found)}) but none could be read: "
            + "; ".join(f"{k}: {m}" for k, m in run.errors.items())
        )
    return run


#: The order the parts of a report are read in, before the physical trace
#: was read second: the order of ``errors`` and of the coverage.
_PARTS = ("logical", "timeline", "papi", "overall", "physical", "aggregation")


def _in_report_order(run: RunReport) -> None:
    """Reports and errors in the report's order (logical, papi, overall, physical)."""
    run.reports.sort(key=lambda entry: KINDS.index(entry[0]))
    run.errors = {k: run.errors[k] for k in sorted(run.errors, key=_PARTS.index)}


def _held(view: AggregationView) -> AggregationView:
    """The aggregation view as the report holds it: its links only up to DENSE_MAX_PES.

    The page draws the links (the per-link heatmap) up to 1,024 PEs and never
    lists them; beyond, they and the physical buffers per link and size are
    millions of rows held to the end of the report for nothing, so only
    their totals and summary are kept.
    """
    return view if view.num_pes <= DENSE_MAX_PES else view.without_buffers()


def _read_logical(
    run: RunReport,
    folder: Path,
    num_pes: int | None,
    engine: Engine,
    progress: ProgressSink | None,
    binned: dict[str | None, SendTimes] | None,
) -> None:
    """Each logical phase's view; with ``binned``, each phase's send times
    are binned in the same read for the timeline (by phase key)."""

    def times(key: str | None) -> SendTimes | None:
        if binned is None:
            return None
        return binned.setdefault(key, SendTimes())

    _read_phases(
        run,
        "logical",
        run.traces.logical_phases,
        run.logical,
        lambda key, report: logical_view(
            folder,
            phase=key,
            num_pes=num_pes,
            report=report,
            engine=engine,
            progress=progress,
            # the aggregation routes the pairs per message size: counted in this read
            sizes=run.traces.physical is not None,
            times=times(key),
        ),
    )


def _read_phases(
    run: RunReport,
    kind: str,
    phases: list[str],
    views: dict[str, Any],
    read: Callable[[str | None, ReadReport], Any],
) -> None:
    """``read(phase, report)`` each phase of a per-PE trace kind into ``views``
    (by display name), with its report; a failing phase is recorded for ``kind``."""
    for key in phases:
        report = ReadReport(kind=kind)
        view = _guard(run, kind, lambda key=key, report=report: read(key or None, report))
        if view is not None:
            _drop_phase_note(report)
            views[phase_name(key)] = view
            run.reports.append((kind, phase_name(key), report))


def _drop_phase_note(report: ReadReport) -> None:
    # every phase is read: the reader's "other phases here" hint does not apply
    report.notes = [n for n in report.notes if "other phases here" not in n]


def _guard(run: RunReport, kind: str, build: Any) -> Any:
    """``build()``, or None with the error recorded for ``kind``.

    Any error (ours, or memory, or a bug) costs only this part: the report
    is documented to drop the failing part and write the rest. What the
    part freed is given back before the next one (``release_memory``): the
    parts' peaks then do not stack up.
    """
    try:
        return build()
    except Exception as exc:  # the rest of the report must still be written
        text = str(exc) if isinstance(exc, ActorProfError) else f"{type(exc).__name__}: {exc}"
        previous = run.errors.get(kind)
        run.errors[kind] = text if previous is None else f"{previous}; {text}"
        return None
    finally:
        release_memory()

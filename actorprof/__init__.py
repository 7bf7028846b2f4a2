"""actorprof: communication-trace analysis for HClib-Actor (ActorProf) runs.

Read -> analyze -> plot, as plain functions::

    import actorprof as ap
    df = ap.read_logical("run/")                 # or ap.iter_logical for big traces
    mats = ap.comm_matrices(ap.iter_logical("run/"))
    ap.plot_heatmap(mats.counts)
    view = ap.logical_view("run/")               # what `actorprof logical` computes

Public names are imported on first use, so ``import actorprof`` (and the
CLI's ``--help``) stays fast. Type checkers see them as plain imports (the
``TYPE_CHECKING`` block) and no module ``__getattr__``, so a misspelt name is
a type error, not ``Any``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._version import __version__

__all__ = [
    "ActorProfError",
    "ActorProfWarning",
    "AggregationView",
    "CommAccumulator",
    "CommMatrices",
    "CommPartial",
    "CompareView",
    "Engine",
    "FileReport",
    "Finding",
    "Imbalance",
    "Layouts",
    "Level",
    "LogicalView",
    "MeshFit",
    "Metric",
    "NoTraceError",
    "OutlierTime",
    "OverallView",
    "PapiTimes",
    "PapiView",
    "PhaseSpan",
    "PhysicalAccumulator",
    "PhysicalMatrices",
    "PhysicalView",
    "PopEfficiencies",
    "ProgressSink",
    "ReadReport",
    "RunComparison",
    "RunReport",
    "RunSide",
    "RunTraces",
    "SelfSends",
    "Severity",
    "SkippedLine",
    "Timeline",
    "TimelineView",
    "Topology",
    "TopologyKind",
    "TraceFile",
    "TraceFormatError",
    "UsageError",
    "Verdict",
    "__version__",
    "actual_layout",
    "aggregation_factor",
    "aggregation_links",
    "aggregation_pe_table",
    "aggregation_view",
    "buffer_room_bytes",
    "build_aggregation_view",
    "comm_matrices",
    "comm_matrix",
    "compare_links",
    "compare_run",
    "compare_runs",
    "conveyors_topology",
    "detect_topologies",
    "filter_self_sends",
    "fitting_pes_per_node",
    "imbalance",
    "iter_logical",
    "iter_papi",
    "iter_physical",
    "locality",
    "logical_files",
    "logical_pairs",
    "logical_view",
    "mesh_fit",
    "node_matrix",
    "overall_view",
    "papi_breakdown",
    "papi_files",
    "papi_regions",
    "papi_segments",
    "papi_times",
    "papi_view",
    "parse_layouts",
    "pe_totals",
    "perfetto_trace",
    "physical_buffers",
    "physical_file",
    "physical_matrices",
    "physical_node_matrices",
    "physical_pairs",
    "physical_pe_totals",
    "physical_view",
    "plot_bytes_bars",
    "plot_heatmap",
    "plot_layouts",
    "plot_papi_bars",
    "plot_pe_loads",
    "plot_rate",
    "plot_time_stacked",
    "plot_timeline_heat",
    "plot_violin",
    "pop_efficiencies",
    "predict_layouts",
    "predict_links",
    "predict_pes",
    "read_logical",
    "read_overall",
    "read_papi",
    "read_physical",
    "report_findings",
    "route_pairs",
    "run_report",
    "send_timeline",
    "time_breakdown",
    "time_checks",
    "timeline_view",
    "top_pairs",
]

#: Where each public name is defined, for the import on first use. The
#: ``TYPE_CHECKING`` imports below list the same names (tests/test_public_api.py).
_EXPORTS: dict[str, str] = {
    # errors
    "ActorProfError": "errors",
    "ActorProfWarning": "errors",
    "NoTraceError": "errors",
    "TraceFormatError": "errors",
    "UsageError": "errors",
    # read
    "ReadReport": "read",
    "FileReport": "read",
    "SkippedLine": "read",
    "TraceFile": "read",
    "iter_logical": "read",
    "read_logical": "read",
    "logical_files": "read",
    "iter_papi": "read",
    "read_papi": "read",
    "papi_files": "read",
    "read_overall": "read",
    "iter_physical": "read",
    "read_physical": "read",
    "physical_file": "read",
    # analyze
    "CommAccumulator": "analyze",
    "CommMatrices": "analyze",
    "CommPartial": "analyze.matrix",
    "Level": "analyze.matrix",
    "Metric": "analyze.matrix",
    "SelfSends": "analyze.matrix",
    "Imbalance": "analyze",
    "comm_matrices": "analyze",
    "comm_matrix": "analyze",
    "filter_self_sends": "analyze",
    "imbalance": "analyze",
    "locality": "analyze",
    "node_matrix": "analyze",
    "pe_totals": "analyze",
    "top_pairs": "analyze",
    "PopEfficiencies": "analyze",
    "papi_breakdown": "analyze",
    "papi_regions": "analyze",
    "papi_segments": "analyze",
    "pop_efficiencies": "analyze",
    "time_breakdown": "analyze",
    "time_checks": "analyze",
    "MeshFit": "analyze",
    "PhysicalAccumulator": "analyze",
    "PhysicalMatrices": "analyze",
    "fitting_pes_per_node": "analyze",
    "mesh_fit": "analyze",
    "physical_matrices": "analyze",
    "physical_node_matrices": "analyze",
    "physical_pairs": "analyze",
    "physical_pe_totals": "analyze",
    "actual_layout": "analyze",
    "aggregation_factor": "analyze",
    "aggregation_links": "analyze",
    "aggregation_pe_table": "analyze",
    "buffer_room_bytes": "analyze",
    # the Conveyors model
    "RunComparison": "analyze.conveyors",
    "Topology": "analyze.conveyors",
    "TopologyKind": "analyze.conveyors.model",
    "Verdict": "analyze.conveyors.check",
    "compare_links": "analyze.conveyors",
    "compare_run": "analyze.conveyors",
    "conveyors_topology": "analyze.conveyors",
    "detect_topologies": "analyze.conveyors",
    "logical_pairs": "analyze.conveyors",
    "physical_buffers": "analyze.conveyors",
    "predict_layouts": "analyze.conveyors",
    "predict_links": "analyze.conveyors",
    "predict_pes": "analyze.conveyors",
    "route_pairs": "analyze.conveyors",
    # plot
    "plot_heatmap": "plot",
    "plot_violin": "plot",
    "plot_pe_loads": "plot",
    "plot_rate": "plot",
    "plot_timeline_heat": "plot",
    # time
    "Timeline": "analyze.timeline",
    "send_timeline": "analyze.timeline",
    "TimelineView": "kinds",
    "PhaseSpan": "kinds.timeline",
    "PapiTimes": "kinds.timeline",
    "OutlierTime": "kinds.timeline",
    "timeline_view": "kinds",
    "papi_times": "kinds.timeline",
    "perfetto_trace": "kinds.timeline",
    "plot_bytes_bars": "plot",
    "plot_layouts": "plot",
    "plot_papi_bars": "plot.bars",
    "plot_time_stacked": "plot.bars",
    # kinds: one trace kind read and analysed
    "LogicalView": "kinds",
    "logical_view": "kinds",
    "PhysicalView": "kinds",
    "physical_view": "kinds",
    "AggregationView": "kinds",
    "Layouts": "kinds.aggregation",
    "aggregation_view": "kinds",
    "build_aggregation_view": "kinds",
    "parse_layouts": "kinds",
    "PapiView": "kinds",
    "papi_view": "kinds",
    "OverallView": "kinds",
    "overall_view": "kinds",
    # report and compare
    "RunReport": "report",
    "RunTraces": "report.traces",
    "run_report": "report",
    "CompareView": "report",
    "RunSide": "report.compare",
    "compare_runs": "report",
    "Finding": "report",
    "Severity": "report.findings",
    "report_findings": "report",
    # what the readers take: a reading engine, a progress display
    "Engine": "engine",
    "ProgressSink": "_progress",
}

if TYPE_CHECKING:  # pragma: no cover
    from ._progress import ProgressSink
    from .analyze import (
        CommAccumulator,
        CommMatrices,
        Imbalance,
        MeshFit,
        PhysicalAccumulator,
        PhysicalMatrices,
        PopEfficiencies,
        actual_layout,
        aggregation_factor,
        aggregation_links,
        aggregation_pe_table,
        buffer_room_bytes,
        comm_matrices,
        comm_matrix,
        filter_self_sends,
        fitting_pes_per_node,
        imbalance,
        locality,
        mesh_fit,
        node_matrix,
        papi_breakdown,
        papi_regions,
        papi_segments,
        pe_totals,
        physical_matrices,
        physical_node_matrices,
        physical_pairs,
        physical_pe_totals,
        pop_efficiencies,
        time_breakdown,
        time_checks,
        top_pairs,
    )
    from .analyze.conveyors import (
        RunComparison,
        Topology,
        compare_links,
        compare_run,
        conveyors_topology,
        detect_topologies,
        logical_pairs,
        physical_buffers,
        predict_layouts,
        predict_links,
        predict_pes,
        route_pairs,
    )
    from .analyze.conveyors.check import Verdict
    from .analyze.conveyors.model import TopologyKind
    from .analyze.matrix import CommPartial, Level, Metric, SelfSends
    from .analyze.timeline import Timeline, send_timeline
    from .engine import Engine
    from .errors import ActorProfError, ActorProfWarning, NoTraceError, TraceFormatError, UsageError
    from .kinds import (
        AggregationView,
        LogicalView,
        OverallView,
        PapiView,
        PhysicalView,
        TimelineView,
        aggregation_view,
        build_aggregation_view,
        logical_view,
        overall_view,
        papi_view,
        parse_layouts,
        physical_view,
        timeline_view,
    )
    from .kinds.aggregation import Layouts
    from .kinds.timeline import OutlierTime, PapiTimes, PhaseSpan, papi_times, perfetto_trace
    from .plot import (
        plot_bytes_bars,
        plot_heatmap,
        plot_layouts,
        plot_pe_loads,
        plot_rate,
        plot_timeline_heat,
        plot_violin,
    )
    from .plot.bars import plot_papi_bars, plot_time_stacked
    from .read import (
        FileReport,
        ReadReport,
        SkippedLine,
        TraceFile,
        iter_logical,
        iter_papi,
        iter_physical,
        logical_files,
        papi_files,
        physical_file,
        read_logical,
        read_overall,
        read_papi,
        read_physical,
    )
    from .report import CompareView, Finding, RunReport, compare_runs, report_findings, run_report
    from .report.compare import RunSide
    from .report.findings import Severity
    from .report.traces import RunTraces
else:

    def __getattr__(name: str) -> object:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'actorprof' has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(__all__)

"""actorprof: communication-trace analysis for HClib-Actor (ActorProf) runs.

Read -> analyze -> plot, as plain functions::

    import actorprof as ap
    df = ap.read_logical("run/")                 # or ap.iter_logical for big traces
    mats = ap.comm_matrices(ap.iter_logical("run/"))
    ap.plot_heatmap(mats.counts)
    view = ap.logical_view("run/")               # what `actorprof logical` computes

Public names are imported lazily, so ``import actorprof`` (and the CLI's
``--help``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

_EXPORTS = {
    # errors
    "ActorProfError": "errors",
    "ActorProfWarning": "errors",
    "NoTraceError": "errors",
    "TraceFormatError": "errors",
    "UsageError": "errors",
    # read
    "ReadReport": "read",
    "FileReport": "read",
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
    "send_timeline": "analyze.timeline",
    "timeline_view": "kinds",
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
    "aggregation_view": "kinds",
    "build_aggregation_view": "kinds",
    "parse_layouts": "kinds",
    "PapiView": "kinds",
    "papi_view": "kinds",
    "OverallView": "kinds",
    "overall_view": "kinds",
    # report and compare
    "RunReport": "report",
    "run_report": "report",
    "CompareView": "report",
    "compare_runs": "report",
    "Finding": "report",
    "report_findings": "report",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'actorprof' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # pragma: no cover
    from .analyze import (
        CommAccumulator,
        CommMatrices,
        Imbalance,
        comm_matrices,
        comm_matrix,
        filter_self_sends,
        imbalance,
        locality,
        node_matrix,
        pe_totals,
        top_pairs,
    )
    from .analyze.aggregation import (
        actual_layout,
        aggregation_factor,
        aggregation_links,
        aggregation_pe_table,
        buffer_room_bytes,
    )
    from .analyze.breakdown import (
        PopEfficiencies,
        papi_breakdown,
        papi_regions,
        papi_segments,
        pop_efficiencies,
        time_breakdown,
        time_checks,
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
    from .analyze.physical import (
        MeshFit,
        PhysicalAccumulator,
        PhysicalMatrices,
        fitting_pes_per_node,
        mesh_fit,
        physical_matrices,
        physical_node_matrices,
        physical_pairs,
        physical_pe_totals,
    )
    from .analyze.timeline import send_timeline
    from .errors import (
        ActorProfError,
        ActorProfWarning,
        NoTraceError,
        TraceFormatError,
        UsageError,
    )
    from .kinds.aggregation import (
        AggregationView,
        aggregation_view,
        build_aggregation_view,
        parse_layouts,
    )
    from .kinds.logical import LogicalView, logical_view
    from .kinds.overall import OverallView, overall_view
    from .kinds.papi import PapiView, papi_view
    from .kinds.physical import PhysicalView, physical_view
    from .kinds.timeline import perfetto_trace, timeline_view
    from .plot import plot_heatmap, plot_pe_loads, plot_rate, plot_timeline_heat, plot_violin
    from .plot.aggregation import plot_bytes_bars
    from .plot.bars import plot_papi_bars, plot_time_stacked
    from .plot.layouts import plot_layouts
    from .read import FileReport, ReadReport, iter_logical, logical_files, read_logical
    from .read.overall import read_overall
    from .read.papi import iter_papi, papi_files, read_papi
    from .read.physical import iter_physical, physical_file, read_physical
    from .report.compare import CompareView, compare_runs
    from .report.findings import Finding, report_findings
    from .report.run import RunReport, run_report

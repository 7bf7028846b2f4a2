"""One module per trace kind: ``<kind>_view(...)`` reads and analyses it (the
Python twin of ``actorprof <kind>``), ``write_<kind>(view, sink)`` draws its
figures and writes its tables and summary."""

from .aggregation import (
    AggregationView,
    aggregation_view,
    build_aggregation_view,
    parse_layouts,
    write_aggregation,
)
from .logical import LogicalView, build_logical_view, logical_view, node_totals, write_logical
from .overall import OverallView, build_overall_view, overall_view, write_overall
from .papi import PapiView, build_papi_view, papi_view, write_papi
from .physical import PhysicalView, build_physical_view, physical_view, write_physical
from .timeline import TimelineView, timeline_view, write_timeline_figure

__all__ = [
    "AggregationView",
    "LogicalView",
    "OverallView",
    "PapiView",
    "PhysicalView",
    "TimelineView",
    "aggregation_view",
    "build_aggregation_view",
    "build_logical_view",
    "build_overall_view",
    "build_papi_view",
    "build_physical_view",
    "logical_view",
    "node_totals",
    "overall_view",
    "papi_view",
    "parse_layouts",
    "physical_view",
    "timeline_view",
    "write_aggregation",
    "write_logical",
    "write_overall",
    "write_papi",
    "write_physical",
    "write_timeline_figure",
]

"""One module per trace kind: ``<kind>_view(...)`` reads and analyses it (the
Python twin of ``actorprof <kind>``), ``write_<kind>(view, sink)`` draws its
figures and writes its tables and summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

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

# Imported on first use, so that a command loads only the modules it runs
# (docs/performance.md, "Fixed cost"); type checkers read the imports below.
_EXPORTS = {
    "AggregationView": "aggregation",
    "LogicalView": "logical",
    "OverallView": "overall",
    "PapiView": "papi",
    "PhysicalView": "physical",
    "TimelineView": "timeline",
    "aggregation_view": "aggregation",
    "build_aggregation_view": "aggregation",
    "build_logical_view": "logical",
    "build_overall_view": "overall",
    "build_papi_view": "papi",
    "build_physical_view": "physical",
    "logical_view": "logical",
    "node_totals": "logical",
    "overall_view": "overall",
    "papi_view": "papi",
    "parse_layouts": "aggregation",
    "physical_view": "physical",
    "timeline_view": "timeline",
    "write_aggregation": "aggregation",
    "write_logical": "logical",
    "write_overall": "overall",
    "write_papi": "papi",
    "write_physical": "physical",
    "write_timeline_figure": "timeline",
}

if TYPE_CHECKING:
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
else:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

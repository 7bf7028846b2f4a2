"""Views: a trace kind read and analysed, ready for plots and summaries."""

from .aggregation import AggregationView, aggregation_view, build_aggregation_view
from .logical import LogicalView, build_logical_view, logical_view, node_totals
from .overall import OverallView, build_overall_view, overall_view
from .papi import PapiView, build_papi_view, papi_view
from .physical import PhysicalView, build_physical_view, physical_view

__all__ = [
    "AggregationView",
    "LogicalView",
    "OverallView",
    "PapiView",
    "PhysicalView",
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
    "physical_view",
]

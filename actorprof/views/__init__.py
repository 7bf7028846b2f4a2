"""Views: a trace kind read and analysed, ready for plots and summaries."""

from .logical import LogicalView, build_logical_view, logical_view, node_totals
from .overall import OverallView, build_overall_view, overall_view
from .papi import PapiView, build_papi_view, papi_view

__all__ = [
    "LogicalView",
    "OverallView",
    "PapiView",
    "build_logical_view",
    "build_overall_view",
    "build_papi_view",
    "logical_view",
    "node_totals",
    "overall_view",
    "papi_view",
]

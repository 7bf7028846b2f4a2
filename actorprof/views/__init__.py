"""Views: a trace kind read and analysed, ready for plots and summaries."""

from .logical import LogicalView, build_logical_view, logical_view, node_totals

__all__ = ["LogicalView", "build_logical_view", "logical_view", "node_totals"]

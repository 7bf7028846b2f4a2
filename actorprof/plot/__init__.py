"""Plots of actorprof's analyses, seaborn-style: ``plot_x(data, *, ax=None, ...) -> Axes``.

Every function draws on the given Axes (or the current one), returns it, and
never shows, saves or changes global settings; see :mod:`actorprof.output`
for figures and files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "TimelineArrays",
    "plot_bytes_bars",
    "plot_heatmap",
    "plot_layouts",
    "plot_papi_bars",
    "plot_pe_loads",
    "plot_rate",
    "plot_time_stacked",
    "plot_timeline_heat",
    "plot_violin",
]

# Imported on first use, so that a command loads only the modules it runs
# (docs/performance.md, "Fixed cost"); type checkers read the imports below.
_EXPORTS = {
    "TimelineArrays": "timeline",
    "plot_bytes_bars": "aggregation",
    "plot_heatmap": "heatmap",
    "plot_layouts": "layouts",
    "plot_papi_bars": "bars",
    "plot_pe_loads": "distribution",
    "plot_rate": "timeline",
    "plot_time_stacked": "bars",
    "plot_timeline_heat": "timeline",
    "plot_violin": "distribution",
}

if TYPE_CHECKING:
    from actorprof.plot.aggregation import plot_bytes_bars
    from actorprof.plot.bars import plot_papi_bars, plot_time_stacked
    from actorprof.plot.distribution import plot_pe_loads, plot_violin
    from actorprof.plot.heatmap import plot_heatmap
    from actorprof.plot.layouts import plot_layouts
    from actorprof.plot.timeline import TimelineArrays, plot_rate, plot_timeline_heat
else:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

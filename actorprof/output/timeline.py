"""The timeline figure: total rate over time above a PE x time heat strip."""

from __future__ import annotations

from typing import Any


def write_timeline_figure(view: Any, out: Any, *, bins: int = 200, log_scale: bool = False) -> None:
    """``timeline_rate``: the rate (phases shaded when several) over the heat strip."""
    from ..plot.timeline import plot_rate, plot_timeline_heat
    from . import new_figure

    shown = view.display(bins)
    fig = new_figure(11.0, 7.5, nrows=2)
    top, bottom = fig.axes
    fig.get_layout_engine().set(h_pad=0.1)  # type: ignore[union-attr,call-arg]
    spans = [(p.name, p.start_s, p.end_s) for p in view.phases] if len(view.phases) > 1 else []
    plot_rate(shown, ax=top, spans=spans, title="Logical messages sent over time")
    plot_timeline_heat(shown, ax=bottom, log=log_scale)
    bottom.sharex(top)
    out.figure(fig, "rate")

"""Messages over time: total rate line and a PE x time heat strip."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.ticker import FuncFormatter

from ._style import format_count

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..analyze.timeline import Timeline

__all__ = ["plot_rate", "plot_timeline_heat"]

_SPAN_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.figure().add_subplot()


def plot_rate(
    timeline: Timeline,
    *,
    ax: Axes | None = None,
    spans: Sequence[tuple[str, float, float]] = (),
    title: str | None = None,
    color: str = "#333333",
) -> Axes:
    """Total messages per second over time, with optional labelled spans.

    Parameters
    ----------
    timeline
        From :func:`actorprof.send_timeline` (possibly :func:`rebin` -ed).
    ax
        Axes to draw on (a new figure's when None).
    spans
        ``(label, start_s, end_s)`` in the timeline's seconds, shaded (phases).
    title, color
        Title and line colour.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    times = timeline.counts.index.to_numpy(dtype=np.float64)
    rate = timeline.rate.to_numpy(dtype=np.float64)
    if len(times):
        # steps: each bin's rate holds over [start, start + width)
        edges = np.append(times, times[-1] + timeline.bin_s)
        ax.stairs(rate, edges, color=color, linewidth=1.2, label="all PEs")
    for i, (label, start, end) in enumerate(spans):
        colour = _SPAN_COLOURS[i % len(_SPAN_COLOURS)]
        ax.axvspan(start, end, color=colour, alpha=0.12, linewidth=0)
        ax.text(
            (start + end) / 2,
            1.0,
            label,
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize=8,
            color=colour,
        )
    ax.set_xlabel("time since first send (s)")
    ax.set_ylabel("messages / s")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_count(v)))
    ax.set_ylim(bottom=0)
    ax.margins(x=0)
    if title:
        ax.set_title(title, pad=14 if spans else 6)
    return ax


def plot_timeline_heat(
    timeline: Timeline,
    *,
    ax: Axes | None = None,
    log: bool = False,
    cmap: str = "magma",
    colorbar: bool = True,
    title: str | None = None,
) -> Axes:
    """Messages sent per PE (rows) per time bin (columns), as one image.

    Scales to thousands of PEs and bins (a single ``imshow``). With ``log``,
    empty bins show as the lowest colour.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from matplotlib import colormaps
    from matplotlib.colors import LogNorm, Normalize

    ax = _axes(ax)
    values = timeline.counts.to_numpy(dtype=np.float64).T  # PEs x bins
    n_pes, n_bins = values.shape if values.size else (len(timeline.counts.columns), 0)
    end = n_bins * timeline.bin_s
    vmax = float(values.max()) if values.size else 1.0
    norm: Normalize
    if log:
        shown = np.where(values > 0, values, np.nan)
        norm = LogNorm(vmin=1, vmax=max(vmax, 1.0))
    else:
        shown = values
        norm = Normalize(vmin=0, vmax=max(vmax, 1.0))
    image = ax.imshow(
        shown if values.size else np.zeros((max(n_pes, 1), 1)),
        aspect="auto",
        interpolation="nearest",
        cmap=colormaps[cmap].with_extremes(bad=colormaps[cmap](0.0)),
        norm=norm,
        extent=(0.0, end if n_bins else 1.0, max(n_pes, 1) - 0.5, -0.5),
    )
    ax.set_xlabel("time since first send (s)")
    ax.set_ylabel("source PE")
    if n_pes <= 32:
        ax.set_yticks(range(n_pes))
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, pad=0.01)
        bar.set_label(f"messages per {timeline.bin_s * 1e3:.3g} ms")
    if title:
        ax.set_title(title)
    return ax

"""Messages over time: total rate line and a PE x time heat strip."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from matplotlib.ticker import FuncFormatter

from ._style import format_count, get_ax, nice_step, points_per_unit, stairs, tick_fontsize

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from numpy.typing import NDArray

    from ..analyze.timeline import Timeline

__all__ = ["TimelineArrays", "plot_rate", "plot_timeline_heat"]


class TimelineArrays(Protocol):
    """A timeline's bins as numpy arrays, without pandas (e.g.
    :class:`actorprof.kinds.timeline_figures.TimelineBins`): drawn as the
    :class:`~actorprof.analyze.timeline.Timeline` they come from."""

    @property
    def times(self) -> NDArray[np.float64]:
        """Each bin's start, in seconds since the first bin's."""

    @property
    def counts(self) -> NDArray[Any]:
        """Messages per bin (rows) and PE (columns)."""

    @property
    def pes(self) -> NDArray[Any]:
        """The PE id of each column."""

    @property
    def bin_s(self) -> float:
        """Bin width in seconds."""


def _arrays(
    timeline: Timeline | TimelineArrays,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Bin starts, counts (bins x PEs), PE ids and bin width of either form."""
    counts = timeline.counts
    if isinstance(counts, np.ndarray):
        arrays: TimelineArrays = timeline  # type: ignore[assignment]
        return arrays.times, counts, arrays.pes, float(arrays.bin_s)
    return (
        counts.index.to_numpy(dtype=np.float64),
        counts.to_numpy(),
        counts.columns.to_numpy(),
        float(timeline.bin_s),
    )


_SPAN_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")
# at most this many PE labels on the heat strip's y axis
_MAX_PE_LABELS = 32


def plot_rate(
    timeline: Timeline | TimelineArrays,
    *,
    ax: Axes | None = None,
    spans: Sequence[tuple[str, float, float]] = (),
    title: str | None = None,
    color: str = "#333333",
    **kwargs: Any,
) -> Axes:
    """Total messages per second over time, with optional labelled spans.

    Parameters
    ----------
    timeline
        From :func:`actorprof.send_timeline` (possibly :func:`rebin` -ed), or
        its bins as arrays (:class:`TimelineArrays`).
    ax
        Axes to draw on; default: the current Axes (created if needed).
    spans
        ``(label, start_s, end_s)`` in the timeline's seconds, shaded (phases).
    title, color
        Title and line colour.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.stairs` for the rate line
        (``ax.patches[0]``), e.g. ``linewidth=2``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = get_ax(ax)
    times, counts, _, bin_s = _arrays(timeline)
    rate = counts.sum(axis=1, dtype=np.int64) / bin_s
    if len(times):
        # steps: each bin's rate holds over [start, start + width)
        edges = np.append(times, times[-1] + bin_s)
        options: dict[str, Any] = {"color": color, "linewidth": 1.2, "label": "all PEs"}
        stairs(ax, rate, edges, **{**options, **kwargs})
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


#: Image rows of the heat strip at most: beyond, blocks of PEs (their max).
MAX_HEAT_ROWS = 512


def _block_max(counts: np.ndarray, block: int) -> np.ndarray:
    """``counts`` (bins x PEs) with each run of ``block`` PE columns reduced to
    its largest value (the last run may be shorter)."""
    if block == 1 or not counts.size:
        return counts
    bins, pes = counts.shape
    padded = np.zeros((bins, -(-pes // block) * block), dtype=counts.dtype)
    padded[:, :pes] = counts
    pooled: np.ndarray = padded.reshape(bins, -1, block).max(axis=2)
    return pooled


def plot_timeline_heat(
    timeline: Timeline | TimelineArrays,
    *,
    ax: Axes | None = None,
    log: bool = False,
    cmap: str = "magma",
    colorbar: bool = True,
    title: str | None = None,
    **kwargs: Any,
) -> Axes:
    """Messages sent per PE (rows) per time bin (columns), as one image.

    Scales to thousands of PEs and bins (a single ``imshow``); PE labels
    thin out to round steps so that they never overlap. With ``log``, empty
    bins show as the lowest colour.

    Parameters
    ----------
    timeline
        From :func:`actorprof.send_timeline` (possibly :func:`rebin` -ed), or
        its bins as arrays (:class:`TimelineArrays`).
    ax
        Axes to draw on; default: the current Axes (created if needed).
    log
        Logarithmic colour scale.
    cmap
        Colormap name.
    colorbar
        Add a colour bar.
    title
        Axes title.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.imshow` (``ax.images[0]``),
        e.g. ``alpha=0.5``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from matplotlib import colormaps
    from matplotlib.colors import LogNorm, Normalize

    ax = get_ax(ax)
    _, counts, pe_ids, bin_s = _arrays(timeline)
    n_pes, n_bins = counts.T.shape if counts.size else (len(pe_ids), 0)
    # beyond MAX_HEAT_ROWS PEs a row is a block of PEs, its largest count:
    # an image row per PE would be sampled (one PE in 100 shown at 65,536
    # PEs, a hot one missed) and its float copies cost gigabytes
    block = max(1, -(-n_pes // MAX_HEAT_ROWS))
    values = _block_max(counts, block).T.astype(np.float64)  # rows x bins
    end = n_bins * bin_s
    vmax = float(values.max()) if values.size else 1.0
    norm: Normalize
    if log:
        shown = np.where(values > 0, values, np.nan)
        norm = LogNorm(vmin=1, vmax=max(vmax, 1.0))
    else:
        shown = values
        norm = Normalize(vmin=0, vmax=max(vmax, 1.0))
    options: dict[str, Any] = {
        "aspect": "auto",
        "interpolation": "nearest",
        "cmap": colormaps[cmap].with_extremes(bad=colormaps[cmap](0.0)),
        "norm": norm,
        "extent": (0.0, end if n_bins else 1.0, max(n_pes, 1) - 0.5, -0.5),
    }
    if block > 1:  # each image row spans its block of PEs: PE ids stay on the axis
        options["extent"] = (0.0, end if n_bins else 1.0, len(values) * block - 0.5, -0.5)
    image = ax.imshow(
        shown if values.size else np.zeros((max(n_pes, 1), 1)), **{**options, **kwargs}
    )
    ax.set_xlabel("time since first send (s)")
    ax.set_ylabel("source PE" if block == 1 else f"source PE (blocks of {block}: max)")
    if n_pes > 0:
        # one label per 1.4 font heights at most (as the heatmap): 32 PEs in a
        # short strip would overlap
        _, per_pe = points_per_unit(ax, 1.0, float(n_pes))
        fitting = int(n_pes * per_pe / (1.4 * tick_fontsize("y")))
        step = nice_step(n_pes, min(_MAX_PE_LABELS, fitting))
        pes = [int(p) for p in pe_ids]
        ax.set_yticks(range(0, n_pes, step), [str(pes[k]) for k in range(0, n_pes, step)])
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, pad=0.01)
        per = "" if block == 1 else ", busiest PE of the block"
        bar.set_label(f"messages per {bin_s * 1e3:.3g} ms{per}")
    if title:
        ax.set_title(title)
    return ax

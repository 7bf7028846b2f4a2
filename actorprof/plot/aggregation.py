"""Logical vs physical bytes per PE: what the program asked for beside what went on the wire.

Two bars per PE, the logical payload (``msg_bytes`` of the messages sent) and
the physical bytes (every buffer the PE put on the wire, headers and second
hops included), with the ratio written above each pair for small runs.
Up to :data:`BARS_MAX` PEs the bars are rectangles (``ax.containers``: one
:class:`~matplotlib.container.BarContainer` per series); beyond, each series
is one step outline (``ax.patches``), so thousands of PEs draw at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter

from actorprof.plot._palettes import deep
from actorprof.plot._style import (
    bars,
    format_count,
    get_ax,
    nice_step,
    root_figure,
    stairs,
    tick_fontsize,
)

__all__ = ["ANNOTATE_MAX", "BARS_MAX", "plot_bytes_bars"]

#: Separate bars up to this many PEs, step outlines beyond.
BARS_MAX = 256
#: The physical/logical ratio is written above the bars up to this many PEs.
ANNOTATE_MAX = 16
_MAX_TICK_LABELS = 32
_GROUP_WIDTH = 0.8


def plot_bytes_bars(
    table: pd.DataFrame,
    *,
    ax: Axes | None = None,
    logical: str = "payload_bytes_sent",
    physical: str = "wire_bytes_sent",
    labels: tuple[str, str] = ("logical payload", "physical (on the wire)"),
    value_label: str = "bytes sent",
    unit_label: str = "PE",
    title: str | None = None,
    annotate: bool | None = None,
    legend: bool = True,
    **kwargs: Any,
) -> Axes:
    """Draw logical and physical bytes side by side, one pair of bars per PE.

    Parameters
    ----------
    table
        One row per PE (index = PE id) with the two columns named by
        `logical` and `physical`, e.g. the per-PE table of
        :func:`actorprof.aggregation_pe_table`. Not modified.
    ax
        Axes to draw on; default: the current Axes (created if needed).
    logical, physical
        Column names of the two series.
    labels
        Legend labels of the two series.
    value_label
        Y axis label.
    unit_label
        What one row is (x axis label).
    title
        Axes title.
    annotate
        Write ``x<physical/logical>`` above each pair; None: up to 16 PEs.
    legend
        Draw the legend.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.bar` for both series (to
        :meth:`~matplotlib.axes.Axes.stairs` beyond 256 PEs), e.g. ``alpha=0.5``.

    Returns
    -------
    Axes
        `ax`. Up to 256 PEs ``ax.containers`` holds the logical then the
        physical bars (PE ``i`` at ``x = i``, bars offset by a quarter);
        beyond, ``ax.patches`` holds one step outline per series.

    Raises
    ------
    ValueError
        `table` is empty or lacks a column.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"payload_bytes_sent": [160, 96], "wire_bytes_sent": [208, 128]},
    ...                  index=pd.Index([0, 1], name="pe"))
    >>> ax = plot_bytes_bars(t)
    >>> [b.get_height() for b in ax.containers[1]]
    [208.0, 128.0]
    """
    for column in (logical, physical):
        if column not in table.columns:
            raise ValueError(f"table has no column {column!r}")
    if table.empty:
        raise ValueError("cannot draw bars of an empty table")
    ax = get_ax(ax)
    n = len(table)
    x = np.arange(n, dtype=np.float64)
    values = [table[c].to_numpy(dtype=np.float64) for c in (logical, physical)]
    colors = deep(2)
    width = _GROUP_WIDTH / 2
    if n <= BARS_MAX:
        for k, (series, label) in enumerate(zip(values, labels, strict=True)):
            bar_options: dict[str, Any] = {"width": width, "color": colors[k], "linewidth": 0}
            if kwargs:  # any keyword of Axes.bar
                ax.bar(x + (k - 0.5) * width, series, label=label, **{**bar_options, **kwargs})
            else:
                bars(ax, x + (k - 0.5) * width, series, label=label, **bar_options)
    else:
        edges = np.arange(n + 1, dtype=np.float64) - 0.5
        for k, (series, label) in enumerate(zip(values, labels, strict=True)):
            step_options: dict[str, Any] = {
                "fill": k == 0,
                "color": colors[k],
                "alpha": 0.6 if k == 0 else 1,
                "linewidth": 1.2,
            }
            stairs(ax, series, edges, label=label, **{**step_options, **kwargs})
    if annotate is None:
        annotate = n <= ANNOTATE_MAX
    top = float(np.nanmax(np.concatenate(values))) if n else 0.0
    if annotate:
        for i in range(n):
            low, high = values[0][i], values[1][i]
            if low > 0:
                ax.text(
                    x[i],
                    max(low, high) + 0.01 * top,
                    f"x{high / low:.2f}",
                    ha="center",
                    va="bottom",
                    fontsize="small",
                )
    step = nice_step(n, _max_tick_labels(ax, n))
    ticks = list(range(0, n, step))
    ax.set_xticks(ticks, [str(table.index[i]) for i in ticks])
    ax.set_xlim(-0.5, n - 0.5)
    # headroom for the ratios and the legend above the bars
    ax.set_ylim(0, top * (1.3 if legend else 1.12) if top > 0 else 1.0)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_count(v)))
    ax.set_xlabel(unit_label)
    ax.set_ylabel(value_label)
    if legend:
        ax.legend(loc="upper center", ncols=2, frameon=False, fontsize="small")
    if title is not None:
        ax.set_title(title)
    return ax


def _max_tick_labels(ax: Axes, n: int) -> int:
    """How many PE ids fit side by side under the Axes (at most 32)."""
    fig_width, _ = root_figure(ax).get_size_inches()
    width_pt = ax.get_position().width * fig_width * 72.0
    label_pt = 0.6 * tick_fontsize("x") * (len(str(max(n - 1, 0))) + 2)
    return max(2, min(_MAX_TICK_LABELS, int(width_pt / label_pt)))

"""Node layouts side by side: what Conveyors would put on the wire for each.

Draws :func:`actorprof.analyze.conveyors.predict_layouts`: per layout two
bars, all wire bytes and the inter-node part, with the fewest buffers
written above. ``ax.containers`` holds the two bar series, labelled.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter

from actorprof.plot._palettes import deep
from actorprof.plot._style import format_count, get_ax

__all__ = ["plot_layouts"]

_SERIES = (("wire_bytes", "wire bytes (all hops)"), ("inter_node_bytes", "inter-node bytes"))


def plot_layouts(
    table: pd.DataFrame,
    *,
    ax: Axes | None = None,
    annotate: bool = True,
    title: str | None = None,
    **kwargs: Any,
) -> Axes:
    """Grouped bars of wire and inter-node bytes per node layout.

    Parameters
    ----------
    table
        :func:`~actorprof.analyze.conveyors.predict_layouts` (columns
        ``layout``, ``topology``, ``wire_bytes``, ``inter_node_bytes``,
        ``buffers_min``); not modified.
    ax
        Axes to draw on; None: the current Axes.
    annotate
        Write ``>= <buffers> buffers`` above each layout's bars.
    title
        Axes title; None: a default.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.bar` (e.g. ``alpha``).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        A needed column is missing.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"layout": ["1 x 16", "4 x 4"], "topology": ["1d", "2d"],
    ...                   "wire_bytes": [1.3e6, 3.4e6], "inter_node_bytes": [0, 1.7e6],
    ...                   "buffers_min": [256, 408]})
    >>> ax = plot_layouts(t)
    >>> [c.get_label() for c in ax.containers]
    ['wire bytes (all hops)', 'inter-node bytes']
    """
    needed = {"layout", "topology", "buffers_min", *(c for c, _ in _SERIES)}
    missing = needed - set(table.columns)
    if missing:
        raise ValueError(f"plot_layouts needs the columns {sorted(missing)}")
    ax = get_ax(ax)
    x = np.arange(len(table))
    width = 0.4
    colors = deep(len(_SERIES))
    for i, (column, label) in enumerate(_SERIES):
        options = {"color": colors[i], **kwargs}
        ax.bar(x + (i - 0.5) * width, table[column].to_numpy(float), width, label=label, **options)
    ax.set_xticks(x)
    ax.set_xticklabels(
        [
            f"{layout}\n{kind}"
            for layout, kind in zip(table["layout"], table["topology"], strict=True)
        ]
    )
    ax.set_xlabel("layout (nodes x PEs per node) and topology")
    ax.set_ylabel("bytes")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_count(v)))
    if annotate and len(table):
        top = table[[c for c, _ in _SERIES]].to_numpy(float).max(axis=1)
        for xi, height, buffers in zip(x, top, table["buffers_min"], strict=True):
            ax.annotate(
                f">= {format_count(float(buffers))} buffers",
                (float(xi), float(height)),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize="small",
            )
        ax.set_ylim(0, float(top.max()) * 1.15 or 1.0)
    ax.set_title("What each node layout would send" if title is None else title)
    ax.legend(loc="upper left", fontsize="small")
    return ax

"""The physical kind's figures, built from what :func:`~actorprof.kinds.write_physical` sends.

As :mod:`actorprof.kinds.logical_figures` (whose panel and loads types the
physical figures share): a figure server unpickles the builders, so this
module imports nothing at load, and the panels and loads are numpy arrays
and lists; the server draws them with numpy and matplotlib alone, never
importing pandas (docs/performance.md, "Fixed cost").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.figure import Figure
    from numpy.typing import NDArray

    from .logical_figures import HeatmapPanel, Loads

__all__ = ["heatmap_figure", "violin_figure"]

# The heatmap figure's width cap: 20 inches at 150 dpi is 3,000 px.
_MAX_WIDTH_INCHES = 20.0


def _shared_vmax(values: list[NDArray[np.float64]]) -> tuple[float, float] | None:
    """(cells, totals) tops of panels drawn on one colour scale; None when all empty."""
    import numpy as np

    cells_top = max(float(np.nanmax(v, initial=0.0)) for v in values)
    totals_top = max(
        max(
            float(np.nansum(v, axis=1).max(initial=0.0)),
            float(np.nansum(v, axis=0).max(initial=0.0)),
        )
        for v in values
    )
    return (cells_top, totals_top) if cells_top > 0 else None


def heatmap_figure(
    rows: list[list[HeatmapPanel]],
    *,
    types: list[str],
    value_label: str,
    num_pes: int,
    log_scale: bool,
    note: str,
    path: str,
) -> Figure:
    """One panel per send type (and, pooled, a row of block maxima), one colour scale."""
    from ..write import label_run, new_figure, titles_at_the_top

    n = num_pes
    pooled = len(rows) > 1
    # the panels of a row are compared: one colour scale for them (cells, totals)
    vmaxes = [_shared_vmax([panel.values for panel in row]) for row in rows]
    width, height = (max(6.0, 0.4 * n + 3.5), max(5.2, 0.36 * n + 2.8)) if n <= 32 else (9.0, 7.8)
    nrows, ncols = len(rows), len(types)
    if width * len(types) > _MAX_WIDTH_INCHES:
        narrower = _MAX_WIDTH_INCHES / len(types)
        if n > 32 or narrower >= 0.3 * n + 2.5:  # the cells still read in narrower panels
            width, height = narrower, min(height, 0.87 * narrower + 0.6)
        else:  # annotated cells need their width: stack the panels
            nrows, ncols = len(types), 1
    fig = new_figure(width * ncols, height * nrows + 0.4, nrows=nrows, ncols=ncols)
    axes = iter(fig.axes)
    for row, vmax in zip(rows, vmaxes, strict=True):
        for send_type, panel in zip(types, row, strict=True):
            title = (
                f"{send_type}: {value_label} PE x PE"
                if len(types) > 1
                else f"Physical {send_type} {value_label} PE x PE"
            )
            panel.draw(next(axes), title=title, log=log_scale, vmax=vmax, value_label=value_label)
    lines = [note] if note else []
    if len(types) > 1:
        lines.insert(0, f"{value_label} per link, one panel per send type, one colour scale")
    if pooled:
        lines.insert(
            0,
            f"{n:,} PEs pooled ({rows[0][0].caption.split(':')[0]}): block sums (top), "
            "largest single link per block (bottom)",
        )
        if len(types) > 1:
            lines[1] += " per row"
    label_run(fig, path, note="\n".join(lines))
    titles_at_the_top(fig)
    return fig


def violin_figure(loads: Loads, *, value_label: str, path: str) -> Figure:
    """Sent and received per PE, per send type."""
    from ..plot import plot_violin
    from ..write import label_run, new_figure, titles_at_the_top

    fig = new_figure(max(7.5, 2.2 * len(loads.columns) + 1.5), 5.5)
    plot_violin(
        loads.columns,
        ids=loads.ids,
        ax=fig.axes[0],
        value_label=value_label,
        unit_label="PE",
        title=f"Physical {value_label} per PE: sent and received, per send type",
    )
    label_run(fig, path)
    titles_at_the_top(fig)
    return fig

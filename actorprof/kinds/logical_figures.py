"""The logical kind's figures, built from what :func:`~actorprof.kinds.write_logical` sends.

``write_logical`` hands each figure to its sink as a builder
(``Sink.draw``): a function of this module and its arguments. A figure
server (``OutputWriter(warm=...)``) unpickles the builder, and so imports
this module and what its arguments need, before it draws. So this module
imports nothing at load, and the heatmap's panels are numpy arrays and
lists, and the loads columns of arrays: the server draws the figures with
numpy and matplotlib alone, never importing pandas (docs/performance.md,
"Fixed cost").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from numpy.typing import NDArray

__all__ = [
    "HeatmapPanel",
    "Loads",
    "heatmap_figure",
    "heatmap_panel",
    "loads_columns",
    "loads_figure",
    "violin_figure",
]


class HeatmapPanel(NamedTuple):
    """One Axes of the heatmap figure, as plain data (no pandas)."""

    values: NDArray[np.float64]  # the matrix: rows are sources, columns destinations
    row_ids: list[Any]
    column_ids: list[Any]
    source_label: str  # the y axis ("source PE": from the index name "src_pe")
    destination_label: str
    caption: str  # a line under the title ("" for none)
    totals: bool  # the sent and received bands

    def draw(self, ax: Axes, *, title: str, **kwargs: Any) -> Axes:
        """:func:`~actorprof.plot.plot_heatmap` of this panel on ``ax``: its
        ids, axis labels and bands, ``title`` with the caption under it."""
        from ..plot import plot_heatmap

        return plot_heatmap(
            self.values,
            row_ids=self.row_ids,
            column_ids=self.column_ids,
            source_label=self.source_label,
            destination_label=self.destination_label,
            ax=ax,
            totals=self.totals,
            title=title + (f"\n{self.caption}" if self.caption else ""),
            **kwargs,
        )


def heatmap_panel(matrix: pd.DataFrame, caption: str, *, totals: bool) -> HeatmapPanel:
    """A panel of ``matrix`` (the heatmap draws what it would draw of the frame)."""
    import numpy as np

    from .._text import axis_name

    return HeatmapPanel(
        values=matrix.to_numpy(dtype=np.float64, na_value=np.nan),
        row_ids=matrix.index.tolist(),
        column_ids=matrix.columns.tolist(),
        source_label=axis_name(matrix.index.name, "source"),
        destination_label=axis_name(matrix.columns.name, "destination"),
        caption=caption,
        totals=totals,
    )


class Loads(NamedTuple):
    """Sent and received per PE (or node), as plain data (no pandas)."""

    columns: dict[str, NDArray[np.float64]]  # column name -> its values, one per row
    ids: NDArray[Any]  # the id of each row


def loads_columns(loads: pd.DataFrame) -> Loads:
    """The columns and the row ids of a loads table (its figures draw the same)."""
    import numpy as np

    columns = {
        str(name): loads[name].to_numpy(dtype=np.float64, na_value=np.nan) for name in loads.columns
    }
    return Loads(columns, loads.index.to_numpy())


def heatmap_figure(
    panels: list[HeatmapPanel],
    *,
    log_scale: bool | None,
    value_label: str,
    title: str,
    run: tuple[str, str | None],
    note: str,
) -> Figure:
    """The heatmap figure: one Axes per panel (pooled: the sums, the largest pairs)."""
    from ..write import label_run, new_figure, titles_at_the_top

    n = max(panels[0].values.shape)
    # grows with the number of annotated cells, capped (a 17-inch 32 x 32 figure
    # cost 330 MB to render); beyond 32 the matrix is an image without numbers
    size = (
        (min(14.0, max(7.0, 0.42 * n + 4.0)), min(12.5, max(6.0, 0.38 * n + 3.0)))
        if n <= 32
        else (11.0, 9.5)
    )
    fig = new_figure(size[0] * len(panels), size[1], ncols=len(panels))
    for ax, panel in zip(fig.axes, panels, strict=True):
        panel.draw(ax, title=title, log=log_scale, value_label=value_label)
    label_run(fig, *run, note=note)
    titles_at_the_top(fig)
    return fig


def violin_figure(
    loads: Loads, *, value_label: str, unit: str, title: str, run: tuple[str, str | None]
) -> Figure:
    """Sent and received per PE (or node): their spread."""
    from ..plot import plot_violin

    return _loads_chart(plot_violin, loads, (7.5, 5.5), value_label, unit, title, run)


def loads_figure(
    loads: Loads,
    *,
    width: float,
    value_label: str,
    unit: str,
    title: str,
    run: tuple[str, str | None],
) -> Figure:
    """Sent and received by PE (or node) id."""
    from ..plot import plot_pe_loads

    return _loads_chart(plot_pe_loads, loads, (width, 4.5), value_label, unit, title, run)


def _loads_chart(
    plot: Callable[..., Any],
    loads: Loads,
    size: tuple[float, float],
    value_label: str,
    unit: str,
    title: str,
    run: tuple[str, str | None],
) -> Figure:
    """One Axes of ``plot`` over the loads' columns, labelled with the run."""
    from ..write import label_run, new_figure, titles_at_the_top

    fig = new_figure(*size)
    plot(
        loads.columns,
        ids=loads.ids,
        ax=fig.axes[0],
        value_label=value_label,
        unit_label=unit,
        title=title,
    )
    label_run(fig, *run)
    titles_at_the_top(fig)
    return fig

"""The PAPI kind's figure, built from what :func:`~actorprof.kinds.write_papi` sends.

As :mod:`actorprof.kinds.logical_figures`: a figure server unpickles the
builder, so this module imports nothing at load, and each panel's stacks
are columns of numpy arrays with the PE ids; the server draws them with
numpy and matplotlib alone, never importing pandas (docs/performance.md,
"Fixed cost").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from matplotlib.figure import Figure
    from numpy.typing import NDArray

__all__ = ["BarsPanel", "bars_figure", "bars_panel"]


class BarsPanel(NamedTuple):
    """One Axes of the bars figure, as plain data (no pandas)."""

    segments: dict[str, NDArray[np.float64]]  # segment name -> its value per PE (NaN: unknown)
    pes: NDArray[Any]  # the PE id of each row
    value_label: str
    title: str


def bars_panel(segments: pd.DataFrame, value_label: str, title: str) -> BarsPanel:
    """A panel of ``segments`` (:func:`~actorprof.plot.plot_papi_bars` draws what
    it would draw of the frame)."""
    import numpy as np

    columns = {
        str(name): segments[name].to_numpy(dtype=np.float64, na_value=np.nan)
        for name in segments.columns
    }
    return BarsPanel(columns, segments.index.to_numpy(), value_label, title)


def bars_figure(
    panels: list[BarsPanel],
    *,
    sort: bool,
    extra_height: float,
    run: tuple[str, str | None],
    caption: list[str],
) -> Figure:
    """MAIN and PROC stacked per PE, a panel per counter (or the counts)."""
    from ..plot.bars import plot_papi_bars
    from ..write import label_run, new_figure, suptitle_of, titles_at_the_top

    ncols = 1 if len(panels) == 1 else 2
    nrows = (len(panels) + 1) // 2 if ncols == 2 else 1
    fig = new_figure(7.0 * ncols, 4.4 * nrows + extra_height, nrows=nrows, ncols=ncols)
    for ax, panel in zip(fig.axes, panels, strict=False):
        plot_papi_bars(
            panel.segments,
            ids=panel.pes,
            ax=ax,
            value_label=panel.value_label,
            sort=sort,
            title=panel.title,
        )
    for ax in fig.axes[len(panels) :]:
        ax.set_visible(False)
    label_run(fig, *run)
    titles_at_the_top(fig)
    if caption:
        fig.suptitle("\n".join([suptitle_of(fig), *caption]), fontsize="medium", color="#a33")
    return fig

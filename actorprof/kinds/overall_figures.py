"""The overall kind's figure, built from what :func:`~actorprof.kinds.write_overall` sends.

As :mod:`actorprof.kinds.logical_figures`: a figure server unpickles the
builder, so this module imports nothing at load, and each group's times
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

__all__ = ["StackedRow", "stacked_figure", "stacked_row"]


class StackedRow(NamedTuple):
    """One group's row of the stacked figure, as plain data (no pandas)."""

    times: dict[str, NDArray[np.float64]]  # t_main/t_comm/t_proc_cycles per PE (NaN: unknown)
    pes: NDArray[Any]  # the PE id of each row
    title: str  # the absolute panel's
    fractions: str  # the fractions panel's title


def stacked_row(times: pd.DataFrame, title: str, fractions: str) -> StackedRow:
    """A row of one group's ``times`` (:func:`~actorprof.plot.plot_time_stacked`
    draws what it would draw of the frame)."""
    import numpy as np
    import pandas as pd

    from ..schema import TIME_COLUMNS

    columns = {
        column: pd.to_numeric(times[column], errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        for column in TIME_COLUMNS[:3]  # t_main_cycles, t_comm_cycles, t_proc_cycles
    }
    pes = times["pe"] if "pe" in times.columns else times.index
    return StackedRow(columns, pes.to_numpy(), title, fractions)


def stacked_figure(
    rows: list[StackedRow], *, sort: bool, cpu_ghz: float | None, path: str
) -> Figure:
    """Per group, T_MAIN/T_COMM/T_PROC per PE (left) and as fractions (right)."""
    from ..plot.bars import plot_time_stacked
    from ..write import label_run, new_figure, titles_at_the_top

    fig = new_figure(14.0, 4.2 * len(rows), nrows=len(rows), ncols=2)
    axes = fig.axes
    for k, row in enumerate(rows):
        plot_time_stacked(
            row.times,
            ids=row.pes,
            ax=axes[2 * k],
            sort=sort,
            cpu_ghz=cpu_ghz,
            legend=False,
            title=row.title,
        )
        plot_time_stacked(
            row.times,
            ids=row.pes,
            ax=axes[2 * k + 1],
            relative=True,
            sort=sort,
            title=row.fractions,
        )
    label_run(fig, path)
    titles_at_the_top(fig)
    return fig

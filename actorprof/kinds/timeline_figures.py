"""The timeline kind's figure, built from what :func:`~actorprof.kinds.write_timeline_figure` sends.

As :mod:`actorprof.kinds.logical_figures`: a figure server unpickles the
builder, so this module imports nothing at load, and the bins it draws are
numpy arrays (:class:`TimelineBins`); the server draws them with numpy and
matplotlib alone, never importing pandas (docs/performance.md, "Fixed cost").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.figure import Figure
    from numpy.typing import NDArray

    from ..analyze.timeline import Timeline

__all__ = ["TimelineBins", "rate_figure", "timeline_bins"]


class TimelineBins(NamedTuple):
    """A :class:`~actorprof.analyze.timeline.Timeline`'s bins, as plain data (no pandas).

    :func:`~actorprof.plot.plot_rate` and
    :func:`~actorprof.plot.plot_timeline_heat` draw it as they draw the
    timeline it was made from.
    """

    times: NDArray[np.float64]  # each bin's start, seconds since the first bin's
    counts: NDArray[Any]  # messages per bin (rows) and PE (columns)
    pes: NDArray[Any]  # the PE id of each column
    bin_s: float


def timeline_bins(timeline: Timeline) -> TimelineBins:
    """The bins of ``timeline`` as arrays."""
    import numpy as np

    counts = timeline.counts
    return TimelineBins(
        counts.index.to_numpy(dtype=np.float64),
        counts.to_numpy(),
        counts.columns.to_numpy(),
        float(timeline.bin_s),
    )


def rate_figure(
    shown: TimelineBins,
    *,
    spans: list[tuple[str, float, float]],
    log_scale: bool,
    run: tuple[str, str | None],
) -> Figure:
    """The rate (phases shaded when several) over the heat strip."""
    from ..plot.timeline import plot_rate, plot_timeline_heat
    from ..write import label_run, new_figure, titles_at_the_top

    fig = new_figure(11.0, 7.5, nrows=2)
    top, bottom = fig.axes
    fig.get_layout_engine().set(h_pad=0.1)  # type: ignore[union-attr,call-arg]
    plot_rate(shown, ax=top, spans=spans, title="Logical messages sent over time")
    plot_timeline_heat(shown, ax=bottom, log=log_scale)
    bottom.sharex(top)
    label_run(fig, *run)
    titles_at_the_top(fig)
    return fig

"""Load-imbalance view: one violin per series, with the median and the maximum named.

A balanced run gives a flat, narrow violin; a straggler shows up as a long
thin neck ending at the "max" label, which names the PE (or node) to look at.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, MaxNLocator
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    import pandas as pd

from actorprof.plot._palettes import color_cycle, desaturate
from actorprof.plot._style import format_count, format_thousands, get_ax, nice_step, stairs

__all__ = ["POINTS_MAX", "plot_pe_loads", "plot_violin"]

#: ``points=None`` overlays one dot per row up to this many rows.
POINTS_MAX = 256

_VIOLIN_WIDTH = 0.8
_SATURATION = 0.75  # seaborn's violins: fills a little greyer than the palette
#: Up to this many values a violin's density sums a kernel per value;
#: beyond, per point of a fine grid the values are binned on (:func:`_kde`).
_KDE_EXACT_MAX = 4096

_GRIDSIZE = 100
_KDE_SLICE = 4096
_BINS_PER_SIGMA = 10
_JITTER = 0.08
_LABEL_BOX = {"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.8}


class _Series(NamedTuple):
    """One column's numbers (NaN dropped) and the ids of their rows."""

    values: NDArray[np.float64]
    ids: NDArray[Any]


def _table(
    loads: pd.DataFrame | Mapping[str, ArrayLike], ids: ArrayLike | None
) -> tuple[list[str], list[NDArray[np.float64]], NDArray[Any]]:
    """Column names, each column as floats (NaN where not a number) and the row ids
    of a DataFrame, or of a mapping of columns with ``ids`` (default 0, 1, ...)."""
    if not isinstance(loads, Mapping):
        if ids is not None:
            raise ValueError("ids name a mapping's rows: a DataFrame's are its index")
        import pandas as pd

        columns = [
            pd.to_numeric(loads.iloc[:, k], errors="coerce").to_numpy(
                dtype=np.float64, na_value=np.nan
            )
            for k in range(loads.shape[1])
        ]
        return [str(c) for c in loads.columns], columns, loads.index.to_numpy()
    names = [str(name) for name in loads]
    columns = [np.asarray(values, dtype=np.float64) for values in loads.values()]
    n = len(columns[0]) if columns else 0
    if any(c.ndim != 1 or len(c) != n for c in columns):
        raise ValueError("the columns must be 1-D and of one length")
    rows = np.arange(n) if ids is None else np.asarray(ids)
    if len(rows) != n:
        raise ValueError(f"{len(rows)} ids for columns of {n} values")
    return names, columns, rows


def plot_violin(
    loads: pd.DataFrame | Mapping[str, ArrayLike],
    *,
    ids: ArrayLike | None = None,
    ax: Axes | None = None,
    value_label: str = "messages",
    unit_label: str = "PE",
    title: str | None = None,
    points: bool | None = None,
    **kwargs: Any,
) -> Axes:
    """Draw one violin per column of `loads`, labelling each median and maximum.

    The load axis starts at 0 (loads are never negative), so the height of a
    violin shows the spread against the load itself: a 1 % spread looks
    flat. Whole-number loads (counts) get whole-number ticks.

    Parameters
    ----------
    loads
        One row per PE (or node), index = its id; one column per series to
        compare, e.g. ``["sent", "received"]``. NaN values are ignored. Not
        modified. Or a mapping of column name to values, the rows named by
        `ids` (this form needs no pandas).
    ids
        With a mapping `loads`: the id of each row (default 0, 1, ...).
    ax
        Axes to draw on; default: the current Axes (created if needed).
    value_label
        What the numbers count; the y axis reads "<value_label> per <unit_label>".
    unit_label
        What one row is, "PE" or "node"; names the row holding the maximum.
    title
        Axes title.
    points
        Overlay one dot per row; ``None`` does so up to 256 rows.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.fill_betweenx` for the
        violins (``ax.collections``), e.g. ``alpha=0.5``; a constant series,
        drawn as a flat line, takes ``alpha`` only.

    Returns
    -------
    Axes
        `ax`. Violin ``k`` (column ``k`` of `loads`) is centred on ``x=k``; its
        labels are ``ax.texts`` reading ``"median 1,234"`` and
        ``"max 5,678 (PE 3)"``.

    Raises
    ------
    ValueError
        If `loads` has no columns or no rows (or, a mapping, columns of
        unequal lengths or `ids` of another length).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> loads = pd.DataFrame({"sent": [10, 12, 30], "received": [15, 15, 22]},
    ...                      index=pd.Index([0, 1, 2], name="pe"))
    >>> fig, ax = plt.subplots()
    >>> ax = plot_violin(loads, ax=ax, title="messages per PE")
    >>> sorted(t.get_text() for t in ax.texts)[:2]
    ['max 22 (PE 2)', 'max 30 (PE 2)']
    """
    names, columns, rows = _table(loads, ids)
    shape = (len(rows), len(names))
    if shape[0] == 0 or shape[1] == 0:
        raise ValueError(f"cannot draw violins of an empty table (shape {shape})")
    if points is None:
        points = shape[0] <= POINTS_MAX
    ax = get_ax(ax)
    colors = dict(zip(names, color_cycle(len(names)), strict=True))
    kept = [~np.isnan(column) for column in columns]
    series = [_Series(c[keep], rows[keep]) for c, keep in zip(columns, kept, strict=True)]

    _draw_violins(ax, names, series, colors, kwargs)
    if points:
        _draw_points(ax, series)
    low, high = _data_range(series)
    for position, values in enumerate(series):
        if len(values.values):
            _label_median_and_max(
                ax, position, values, unit_label=unit_label, span=high - min(0.0, low)
            )

    ax.set_xticks(range(len(names)), names)
    ax.set_xlim(-0.5, len(names) - 0.5)
    # from 0: an axis cut to the data makes a 1 % spread fill the panel
    bottom = min(0.0, low)
    span = high - bottom if high > bottom else max(abs(high), 1.0)
    # headroom above for the "max" labels
    ax.set_ylim(bottom, high + 0.14 * span)
    ax.set_xlabel("")
    ax.set_ylabel(f"{value_label} per {unit_label}")
    if all(_whole(values) for values in series):
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_formatter(_count_formatter(bottom, high))
    if title is not None:
        ax.set_title(title)
    return ax


def _draw_violins(
    ax: Axes,
    names: list[str],
    series: list[_Series],
    colors: dict[str, tuple[float, float, float]],
    kwargs: dict[str, Any],
) -> None:
    """Violins for series with a spread; a flat bar for constant ones (KDE is undefined).

    Drawn as ``seaborn.violinplot(..., cut=0, inner=None, saturation=0.75)``
    draws them (same density, widths and colours), with numpy: seaborn's
    violins need scipy.stats, whose import alone costs more than a small
    command's whole run.
    """
    spread = [k for k, values in enumerate(series) if len(np.unique(values.values)) > 1]
    fills = [desaturate(colors[name], _SATURATION) for name in names]
    # seaborn's "auto" line colour: a grey at 0.6 x the darkest fill's lightness
    edge = (min(colorsys.rgb_to_hls(*fill)[1] for fill in fills) * 0.6,) * 3
    for k in spread:
        support, density = _kde(series[k].values)
        # each violin's widest point spans the whole width (seaborn: density_norm="area",
        # common_norm=False, one hue level per violin)
        half = density / density.max() * (_VIOLIN_WIDTH / 2)
        ax.fill_betweenx(
            support,
            k - half,
            k + half,
            **{"facecolor": fills[k], "edgecolor": edge, "linewidth": 1, **kwargs},
        )
    for k, values in enumerate(series):
        if k not in spread and len(values.values):
            level = float(values.values[0])
            ax.plot(
                [k - _VIOLIN_WIDTH / 2, k + _VIOLIN_WIDTH / 2],
                [level, level],
                color=colors[names[k]],
                linewidth=3,
                solid_capstyle="butt",
                alpha=kwargs.get("alpha"),
            )


def _kde(values: NDArray[np.floating[Any]]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Gaussian KDE on 100 points from the smallest to the largest value.

    Scott's bandwidth, as ``scipy.stats.gaussian_kde`` (seaborn's default):
    sigma = std (ddof 1) x n^(-1/5). Up to :data:`_KDE_EXACT_MAX` values the
    sum runs over every value; beyond, over the values linearly binned on a
    grid of spacing at most sigma / 10 (:func:`_linear_binned`), when at
    most half as many of its points as there are values hold a share
    (65,536 PEs: 0.15 s of a figure's 0.35 s before). Evaluated in slices,
    so that no temporary is larger than a few MB.
    """
    n = len(values)
    low, high = float(values.min()), float(values.max())
    support = np.linspace(low, high, _GRIDSIZE)
    sigma = float(np.std(values, ddof=1)) * n ** (-1 / 5)
    points, weights = values, None
    # the grid's cells: at most 10 x 1.42 n^0.7 (a range is at most std x
    # sqrt(2n), Samuelson's inequality), so fewer than 4n; inf, nan: not binned
    span = (high - low) * _BINS_PER_SIGMA / sigma if sigma > 0 else math.inf
    if n > _KDE_EXACT_MAX and span <= 4 * n:
        grid, shares = _linear_binned(values, low, high, max(1, math.ceil(span)))
        held = shares > 0  # a long tail leaves most of its cells empty
        if 2 * int(np.count_nonzero(held)) <= n:
            points, weights = grid[held], shares[held]
    density = np.zeros(_GRIDSIZE)
    for lo in range(0, len(points), _KDE_SLICE):
        z = (support[:, None] - points[None, lo : lo + _KDE_SLICE]) / sigma
        kernel = np.exp(-0.5 * z * z)
        if weights is None:
            density += kernel.sum(axis=1)
        else:
            density += kernel @ weights[lo : lo + _KDE_SLICE]
    return support, density / (n * sigma * math.sqrt(2 * math.pi))


def _linear_binned(
    values: NDArray[np.floating[Any]], low: float, high: float, bins: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The ``bins + 1`` points of a grid from ``low`` to ``high`` and each
    one's weight: a value between two points gives each a share of its unit
    weight by nearness (linear binning: Wand & Jones, Kernel Smoothing, 1995,
    appendix D). A value's kernel is then replaced by the linear
    interpolation of its two neighbours' kernels, off by at most spacing^2 / 8
    x the kernel's largest second derivative: (spacing / sigma)^2 / 8 of its
    peak. With :data:`_BINS_PER_SIGMA` 10, 0.125 %, which no violin shows."""
    grid = np.linspace(low, high, bins + 1)
    at = (np.asarray(values, dtype=np.float64) - low) * (bins / (high - low))
    left = np.minimum(at.astype(np.int64), bins - 1)  # the largest value: the last cell
    right_share = at - left
    weights = np.bincount(left, weights=1.0 - right_share, minlength=bins + 1)
    weights += np.bincount(left + 1, weights=right_share, minlength=bins + 1)
    return grid, weights.astype(np.float64, copy=False)  # float64 already (the stubs say int)


def _draw_points(ax: Axes, series: list[_Series]) -> None:
    """One small dot per row, jittered sideways (fixed seed: same picture every run)."""
    rng = np.random.default_rng(0)
    for position, values in enumerate(series):
        if not len(values.values):
            continue
        x = position + rng.uniform(-_JITTER, _JITTER, size=len(values.values))
        ax.scatter(
            x,
            values.values,
            s=6,
            color="0.15",
            alpha=0.5,
            linewidths=0,
            zorder=3,
        )


def _label_median_and_max(
    ax: Axes, position: int, values: _Series, *, unit_label: str, span: float
) -> None:
    """Mark the median (white dot) and the maximum (triangle), each with a text label.

    Both labels sit right of the centre line, where a violin is narrow at its
    tip; when the two values are too close for that, the max label goes above.
    """
    median = float(np.median(values.values))
    top_at = int(np.argmax(values.values))  # the first row of the largest value
    top_id = values.ids[top_at]
    top = float(values.values[top_at])
    ax.scatter(
        [position], [median], s=36, color="white", edgecolors="black", linewidths=1, zorder=4
    )
    ax.scatter([position], [top], s=36, marker="v", color="#c0392b", zorder=4)
    label_x = position + _JITTER + 0.04
    ax.text(
        label_x,
        median,
        f"median {format_thousands(median)}",
        ha="left",
        va="center",
        fontsize="small",
        bbox=_LABEL_BOX,
        zorder=5,
    )
    max_text = f"max {format_thousands(top)} ({unit_label} {top_id})"
    if span > 0 and top - median > 0.08 * span:
        ax.text(
            label_x,
            top,
            max_text,
            ha="left",
            va="center",
            fontsize="small",
            bbox=_LABEL_BOX,
            zorder=5,
        )
    else:
        ax.text(
            position,
            top + 0.04 * (span if span > 0 else max(abs(top), 1.0)),
            max_text,
            ha="center",
            va="bottom",
            fontsize="small",
            bbox=_LABEL_BOX,
            zorder=5,
        )


def _whole(values: _Series) -> bool:
    """Whether every value is a whole number (counts: integer ticks)."""
    data = values.values
    return bool(np.all(data == np.round(data)))


def _data_range(series: list[_Series]) -> tuple[float, float]:
    """Smallest and largest value over all series (0, 0 when there are none)."""
    filled = [values.values for values in series if len(values.values)]
    if not filled:
        return 0.0, 0.0
    return (
        min(float(values.min()) for values in filled),
        max(float(values.max()) for values in filled),
    )


def plot_pe_loads(
    loads: pd.DataFrame | Mapping[str, ArrayLike],
    *,
    ids: ArrayLike | None = None,
    ax: Axes | None = None,
    value_label: str = "messages",
    unit_label: str = "PE",
    title: str | None = None,
    **kwargs: Any,
) -> Axes:
    """Each column of ``loads`` against the row id, as steps (one per PE).

    Shows trends over PE ids that a distribution hides (receives falling
    with PE id, PE 0 overloaded); one ``stairs`` artist per column, so
    thousands of PEs draw at once. A dotted line marks each column's mean.
    Each series is thinner than the one before it, so equal series (a
    symmetric run sends what it receives) show as a line inside a band
    instead of one line hiding the other.

    Parameters
    ----------
    loads
        One row per PE (index = PE id), one column per series, e.g.
        ``sent`` and ``received``. Not modified. Or a mapping of column
        name to values, the rows named by `ids` (this form needs no pandas).
    ids
        With a mapping `loads`: the id of each row (default 0, 1, ...).
    ax
        Axes to draw on (the current one when None).
    value_label, unit_label, title
        Axis label parts and title.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.stairs` for every series
        (``ax.patches``), e.g. ``alpha=0.5``.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        ``loads`` is empty.
    """
    names, columns, ids = _pe_table(loads, ids)
    if not len(ids) or not names:
        raise ValueError("cannot draw an empty table")
    ax = get_ax(ax)
    positions = np.arange(len(ids), dtype=np.float64)
    edges = np.append(positions, len(ids)) - 0.5
    colours = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")
    widths = np.linspace(3.2, 1.2, num=max(len(names), 2))
    for i, (name, values) in enumerate(zip(names, columns, strict=True)):
        colour = colours[i % len(colours)]
        options: dict[str, Any] = {"color": colour, "linewidth": float(widths[i])}
        options.update(kwargs)
        stairs(ax, values, edges, label=name, baseline=None, **options)
        ax.axhline(float(np.nanmean(values)), color=colour, linewidth=0.9, linestyle=":")
    ax.set_xlim(edges[0], edges[-1])
    # from 0, with 6 % of headroom: the steps of a balanced run sat on the frame
    top = float(np.nanmax(np.stack(columns)))
    ax.set_ylim(0, top * 1.06 if math.isfinite(top) and top > 0 else 1.0)
    # round steps, fewer for long ids: 32 labels of 5 digits ran together at 65,536 PEs
    digits = len(str(int(np.max(ids)))) if len(ids) and np.issubdtype(ids.dtype, np.integer) else 3
    step = (
        1
        if len(ids) <= 32
        else nice_step(len(ids), 32 if digits <= 3 else 24 if digits == 4 else 16)
    )
    ticks = positions[::step]
    ax.set_xticks(ticks, [str(ids[int(t)]) for t in ticks])
    ax.set_xlabel(unit_label)
    ax.set_ylabel(f"{value_label} per {unit_label}")
    ax.yaxis.set_major_formatter(_count_formatter(0.0, top))
    ax.legend(
        title="dotted: mean",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),  # outside: the steps can fill any corner
        fontsize="small",
        title_fontsize="small",
        frameon=False,
    )
    if title is not None:
        ax.set_title(title)
    return ax


def _pe_table(
    loads: pd.DataFrame | Mapping[str, ArrayLike], ids: ArrayLike | None
) -> tuple[list[str], list[NDArray[np.float64]], NDArray[Any]]:
    """Column names, each column as floats and the row ids (see :func:`plot_pe_loads`)."""
    if isinstance(loads, Mapping):
        return _table(loads, ids)
    if ids is not None:
        raise ValueError("ids name a mapping's rows: a DataFrame's are its index")
    columns = [loads[name].to_numpy(dtype=np.float64) for name in loads.columns]
    return [str(name) for name in loads.columns], columns, loads.index.to_numpy()


def _count_formatter(low: float, high: float) -> FuncFormatter:
    """Compact tick labels (41.1k, as the heatmap), exact when the range is narrow.

    Three significant digits cannot tell 20,150 from 20,100: when the data
    spread is under 5 % of its largest value, ticks are written in full.
    """
    top = max(abs(low), abs(high))
    if top > 0 and (high - low) / top < 0.05:
        return FuncFormatter(lambda v, _pos: format_thousands(v))
    return FuncFormatter(lambda v, _pos: format_count(v))

"""Stacked bars per PE: PAPI counters (MAIN and PROC) and the overall time profile.

One bar per PE, its segments stacked in column order. Up to
:data:`BARS_MAX` PEs every bar is a separate rectangle (``ax.containers``,
one :class:`~matplotlib.container.BarContainer` per segment, labelled with
the segment name); beyond, each segment is one filled step outline
(:meth:`~matplotlib.axes.Axes.stairs`, in ``ax.patches``) so that 4,096 PEs
draw in a fraction of a second; beyond :data:`STEPS_MAX` PEs a step is the
mean of a block of consecutive PEs, and a line marks each block's largest
total (the pooling is said under the axis). Tick labels thin out to round steps, value
labels on the bars appear only for a few PEs, and a sorted plot of many PEs
shows ranks instead of PE ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, MaxNLocator
from numpy.typing import ArrayLike, NDArray

from actorprof.plot._palettes import crest, deep
from actorprof.plot._style import (
    bars,
    format_count,
    get_ax,
    longest,
    nice_step,
    root_figure,
    stairs,
    tick_fontsize,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ANNOTATE_MAX",
    "BARS_MAX",
    "MAX_TICK_LABELS",
    "STEPS_MAX",
    "plot_papi_bars",
    "plot_time_stacked",
]

#: Bars are separate rectangles up to this many PEs, step outlines beyond.
BARS_MAX = 256
#: Beyond this many PEs, consecutive PEs (in plotted order) are pooled into
#: blocks, at most this many: a step is a block's mean, a line its largest PE.
#: A step outline of 65,536 PEs is 131,072 vertices per segment, which Agg
#: fills in about 0.3 s each (2 s for the overall figure), and 4,096 steps are
#: already more than the pixels of any Axes.
STEPS_MAX = 4096
#: Totals are written above the bars up to this many PEs.
ANNOTATE_MAX = 16
#: At most this many PE tick labels.
MAX_TICK_LABELS = 32

_DEEP = deep(3)
_REGION_COLORS: dict[str, tuple[float, float, float]] = {
    "MAIN": _DEEP[0],
    "COMM": _DEEP[1],
    "PROC": _DEEP[2],
}
_TIME_PARTS = {"MAIN": "t_main_cycles", "COMM": "t_comm_cycles", "PROC": "t_proc_cycles"}


def plot_papi_bars(
    segments: pd.DataFrame | Mapping[str, ArrayLike],
    *,
    ids: ArrayLike | None = None,
    ax: Axes | None = None,
    value_label: str = "instructions",
    sort: bool = False,
    title: str | None = None,
    legend: bool = True,
    **kwargs: Any,
) -> Axes:
    """Stacked bars of one PAPI value per PE: MAIN and PROC (or per mailbox).

    Parameters
    ----------
    segments
        One row per PE (index = PE id), one column per stacked segment, in
        stacking order, e.g. :func:`actorprof.papi_segments` output:
        ``MAIN, PROC`` or ``MAIN, mailbox 0, mailbox 1``. Non-negative
        numbers; NaN is an unknown value (a PE without MAIN line): not drawn,
        and said in the Axes ("MAIN unknown on N PE(s)"). Not modified. Or
        a mapping of segment name to its values, one per PE, with the PE
        ids in `ids` (this form needs no pandas: a figure drawn where
        pandas is not imported).
    ids
        With a mapping `segments`: the id of each PE (a DataFrame's index);
        default 0, 1, ...
    ax
        Axes to draw on; default: the current Axes (created if needed).
    value_label
        What the numbers are (y axis label), e.g. the counter name.
    sort
        Order the bars by total, largest first (PE ids stay on the ticks up
        to :data:`MAX_TICK_LABELS` PEs; ranks beyond).
    title
        Axes title.
    legend
        Draw the legend of the segments (outside the Axes, on the right).
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.bar` for every segment (to
        :meth:`~matplotlib.axes.Axes.stairs` beyond :data:`BARS_MAX` PEs),
        e.g. ``alpha=0.5``.

    Returns
    -------
    Axes
        `ax`. Up to :data:`BARS_MAX` PEs, ``ax.containers[k]`` holds the
        bars of segment ``k`` (``get_label()`` is its name) in plotted order.
        An all-zero table gets the text "all values are 0" in the middle;
        unknown (NaN) values the text "<segment> unknown on N PE(s): not
        drawn" in the top left corner.

    Raises
    ------
    ValueError
        No row or no column, or negative or infinite values.

    Examples
    --------
    >>> import pandas as pd
    >>> seg = pd.DataFrame({"MAIN": [100, 300], "PROC": [20, 10]},
    ...                    index=pd.Index([0, 1], name="pe"))
    >>> ax = plot_papi_bars(seg, value_label="PAPI_TOT_INS")
    >>> [b.get_height() for b in ax.containers[0]]
    [100.0, 300.0]
    """
    names = [str(c) for c in segments]
    colors = [_segment_color(name, k, names) for k, name in enumerate(names)]
    ax = get_ax(ax)
    values, pes = _segments_table(segments, ids)
    missing = np.isnan(values)
    _stacked_bars(
        ax,
        values,
        names,
        pes,
        colors=colors,
        sort=sort,
        relative=False,
        legend=legend,
        kwargs=kwargs,
    )
    unknown = missing.any(axis=1)
    if unknown.any():
        parts = [name for k, name in enumerate(names) if missing[:, k].any()]
        ax.text(
            0.01,
            0.99,
            f"{', '.join(parts)} unknown on {int(unknown.sum())} PE(s): not drawn",
            transform=ax.transAxes,
            ha="left",
            va="top",
            color="#a33",
            fontsize="small",
        )
    ax.set_ylabel(f"{value_label} per PE")
    if title is not None:
        ax.set_title(title)
    return ax


def plot_time_stacked(
    times: pd.DataFrame | Mapping[str, ArrayLike],
    *,
    ids: ArrayLike | None = None,
    ax: Axes | None = None,
    relative: bool = False,
    sort: bool = False,
    cpu_ghz: float | None = None,
    title: str | None = None,
    legend: bool = True,
    **kwargs: Any,
) -> Axes:
    """Stacked bars of T_MAIN, T_COMM, T_PROC per PE (absolute or fractions of T_TOTAL).

    Parameters
    ----------
    times
        :func:`actorprof.time_breakdown` rows of ONE label/run: a ``pe``
        column (or the index as PE ids) and ``t_main_cycles``,
        ``t_comm_cycles``, ``t_proc_cycles``. Unknown values draw as 0.
        Not modified. Or a mapping of those three column names to their
        values, one per PE, with the PE ids in `ids` (this form needs no
        pandas: a figure drawn where pandas is not imported).
    ids
        With a mapping `times`: the id of each PE; default 0, 1, ...
    ax
        Axes to draw on; default: the current Axes (created if needed).
    relative
        Fractions of each PE's T_TOTAL (bars of height 1) instead of cycles.
    sort
        Order the bars by T_TOTAL, largest first (the same order in the
        absolute and relative panels).
    cpu_ghz
        Show seconds (cycles / (cpu_ghz x 1e9)) instead of cycles.
    title
        Axes title.
    legend
        Draw the legend (outside the Axes, on the right).
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.bar` (or ``stairs``), as in
        :func:`plot_papi_bars`.

    Returns
    -------
    Axes
        `ax`; segments ``MAIN``, ``COMM``, ``PROC`` as in
        :func:`plot_papi_bars`.

    Raises
    ------
    ValueError
        Missing columns, no row, a negative time, or ``cpu_ghz`` not finite and > 0.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"pe": [0, 1], "t_main_cycles": [70, 10],
    ...                   "t_comm_cycles": [20, 80], "t_proc_cycles": [10, 10]})
    >>> ax = plot_time_stacked(t, relative=True)
    >>> [round(b.get_height(), 2) for b in ax.containers[1]]
    [0.2, 0.8]
    """
    missing = [c for c in _TIME_PARTS.values() if c not in times]
    if missing:
        raise ValueError(f"times lacks column(s) {', '.join(missing)} (use time_breakdown())")
    if cpu_ghz is not None and not (np.isfinite(cpu_ghz) and cpu_ghz > 0):
        raise ValueError(f"cpu_ghz must be a finite number > 0, got {cpu_ghz}")
    values, pes = _time_table(times, ids)
    unit = "cycles"
    totals = values.sum(axis=1)
    rank_by = totals  # the absolute and relative panels share the order
    if relative:
        values = values / np.where(totals > 0, totals, 1.0)[:, None]
        unit = "fraction of T_TOTAL"
    elif cpu_ghz is not None:
        values = values / (cpu_ghz * 1e9)
        unit = "seconds"
    ax = get_ax(ax)
    names = list(_TIME_PARTS)
    colors = [_REGION_COLORS[name] for name in names]
    _stacked_bars(
        ax,
        values,
        names,
        pes,
        colors=colors,
        sort=sort,
        relative=relative,
        legend=legend,
        rank_by=rank_by,
        kwargs=kwargs,
    )
    ax.set_ylabel(unit if relative else f"time per PE ({unit})")
    if title is not None:
        ax.set_title(title)
    return ax


def _segment_color(name: str, k: int, names: Sequence[str]) -> tuple[float, float, float]:
    """MAIN/COMM/PROC keep their colours everywhere; mailboxes get shades of one hue."""
    if name in _REGION_COLORS:
        return _REGION_COLORS[name]
    others = [n for n in names if n not in _REGION_COLORS]
    palette = crest(max(len(others), 1))
    position = others.index(name) if name in others else k
    r, g, b = palette[position % len(palette)]
    return (float(r), float(g), float(b))


def _time_table(
    times: pd.DataFrame | Mapping[str, ArrayLike], ids: ArrayLike | None
) -> tuple[NDArray[np.float64], NDArray[Any]]:
    """T_MAIN, T_COMM and T_PROC (a row per PE, 0 where unknown) and the PE
    ids of a DataFrame (its ``pe`` column, else its index), or of a mapping
    of columns with ``ids``."""
    if not isinstance(times, Mapping):
        if ids is not None:
            raise ValueError("ids name a mapping's rows: a DataFrame's are its pe column or index")
        import pandas as pd

        parts = [
            pd.to_numeric(times[column], errors="coerce")
            .astype("Float64")
            .fillna(0.0)
            .to_numpy(dtype=np.float64)
            for column in _TIME_PARTS.values()
        ]
        index = pd.Index(times["pe"]) if "pe" in times.columns else times.index
        return np.column_stack(parts), index.to_numpy()
    columns = [np.asarray(times[column], dtype=np.float64) for column in _TIME_PARTS.values()]
    n = len(columns[0])
    if any(c.ndim != 1 or len(c) != n for c in columns):
        raise ValueError("the time columns must be 1-D and of one length")
    pes = np.arange(n) if ids is None else np.asarray(ids)
    if len(pes) != n:
        raise ValueError(f"{len(pes)} ids for time columns of {n} values")
    values = np.column_stack(columns)
    return np.where(np.isnan(values), 0.0, values), pes


def _segments_table(
    segments: pd.DataFrame | Mapping[str, ArrayLike], ids: ArrayLike | None
) -> tuple[NDArray[np.float64], NDArray[Any]]:
    """The values (a row per PE, a column per segment, NaN where unknown) and
    the PE ids of a DataFrame, or of a mapping of columns with ``ids``."""
    if not isinstance(segments, Mapping):
        if ids is not None:
            raise ValueError("ids name a mapping's rows: a DataFrame's are its index")
        return segments.to_numpy(dtype=np.float64, na_value=np.nan), segments.index.to_numpy()
    columns = [np.asarray(values, dtype=np.float64) for values in segments.values()]
    n = len(columns[0]) if columns else (0 if ids is None else len(np.asarray(ids)))
    if any(c.ndim != 1 or len(c) != n for c in columns):
        raise ValueError("the segments must be 1-D and of one length")
    pes = np.arange(n) if ids is None else np.asarray(ids)
    if len(pes) != n:
        raise ValueError(f"{len(pes)} ids for segments of {n} values")
    values = np.column_stack(columns) if columns else np.zeros((n, 0))
    return values, pes


def _stacked_bars(
    ax: Axes,
    values: np.ndarray,
    names: list[str],
    pes: NDArray[Any],
    *,
    colors: list[tuple[float, float, float]],
    sort: bool,
    relative: bool,
    legend: bool,
    rank_by: np.ndarray | None = None,
    kwargs: dict[str, Any] | None = None,
) -> None:
    """Draw ``values`` (a row per PE, a column per segment ``names``) of PEs ``pes``."""
    if values.shape[0] == 0 or values.shape[1] == 0:
        raise ValueError(f"cannot draw bars of an empty table (shape {values.shape})")
    unknown = np.isnan(values)  # drawn as nothing; the bar's label says so
    values = np.where(unknown, 0.0, values)
    if not np.isfinite(values).all() or (values < 0).any():
        raise ValueError("bar values must be finite and non-negative")
    unknown = unknown.any(axis=1)
    totals = values.sum(axis=1)
    order = np.arange(len(pes))
    if sort:
        order = np.lexsort((order, -(totals if rank_by is None else rank_by)))
    values, totals, pes, unknown = values[order], totals[order], pes[order], unknown[order]
    n = len(pes)
    x = np.arange(n, dtype=np.float64)
    edges = np.arange(n + 1) - 0.5
    block = -(-n // STEPS_MAX)
    if block > 1:  # a step per block of PEs: the mean of each segment
        starts = np.arange(0, n, block)
        sizes = np.diff(np.r_[starts, n])
        pooled = np.add.reduceat(values, starts, axis=0) / sizes[:, None]
        edges = np.r_[starts, n] - 0.5
    bottom = np.zeros(n if block == 1 else len(starts))
    for k, name in enumerate(names):
        height = values[:, k] if block == 1 else pooled[:, k]
        if n <= BARS_MAX:
            bar_options: dict[str, Any] = {
                "width": 0.8,
                "color": colors[k],
                "edgecolor": "white",
                "linewidth": 0.5 if n <= 64 else 0.0,
            }
            if kwargs:  # any keyword of Axes.bar
                ax.bar(x, height, bottom=bottom, label=str(name), **{**bar_options, **kwargs})
            else:
                bars(ax, x, height, bottom=bottom, label=str(name), **bar_options)
        else:
            step_options: dict[str, Any] = {"fill": True, "color": colors[k]}
            stairs(
                ax,
                bottom + height,
                edges,
                baseline=bottom.copy(),
                label=str(name),
                **{**step_options, **(kwargs or {})},
            )
        bottom = bottom + height
    if block > 1 and not relative:  # a PE far above its block's mean stays in sight
        largest = np.maximum.reduceat(totals, starts)
        stairs(ax, largest, edges, baseline=None, fill=False, color="0.3", linewidth=0.5)
    ax.set_xlim(-0.6, n - 0.4)
    _pe_ticks(ax, pes, sort=sort)
    if block > 1:
        what = "mean" if relative else "mean; line: the largest PE's total"
        ax.set_xlabel(f"{ax.get_xlabel()}\nblocks of {block} PEs ({what})")
    if not totals.any():
        ax.set_ylim(0, 1)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.text(
            0.5,
            0.5,
            "all values are 0",
            transform=ax.transAxes,
            ha="center",
            va="center",
            color="0.3",
        )
    elif relative:
        ax.set_ylim(0, 1)
    else:
        ax.set_ylim(0, float(totals.max()) * (1.12 if n <= ANNOTATE_MAX else 1.04))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_count(v)))
        if n <= ANNOTATE_MAX:
            labels, rotation = _bar_top_labels(ax, totals)
            # a part unknown: the total is at least what is drawn
            labels = [
                ("?" if not t else f">={label}") if u else label
                for t, u, label in zip(totals, unknown, labels, strict=True)
            ]
            for xi, total, label in zip(x, totals, labels, strict=True):
                ax.text(
                    xi, total, label, ha="center", va="bottom", fontsize="small", rotation=rotation
                )
    if legend and names:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)


def _bar_top_labels(ax: Axes, totals: np.ndarray) -> tuple[list[str], int]:
    """Bar-top labels that fit the bars' width: exact, then compact, then upright."""
    from matplotlib.font_manager import FontProperties

    per_bar = _bar_points(ax, len(totals))
    char = 0.62 * FontProperties(size="small").get_size_in_points()
    labels = [_value_label(t) for t in totals]
    if longest(labels) * char > 0.9 * per_bar:
        labels = [format_count(t) for t in totals]
    rotation = 90 if longest(labels) * char > 0.9 * per_bar else 0
    return labels, rotation


def _value_label(value: float) -> str:
    """Exact counts (``10,112``) for whole numbers, 3 significant digits otherwise."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return format_count(value)


def _pe_ticks(ax: Axes, pes: np.ndarray, *, sort: bool) -> None:
    n = len(pes)
    labels = [str(p) for p in pes]
    if n <= _fitting_labels(ax, n, longest(labels)):
        ax.set_xticks(np.arange(n), labels)
        ax.set_xlabel("PE, sorted by total (largest first)" if sort else "PE")
        return
    if sort and _bar_points(ax, n) >= 1.4 * tick_fontsize("x"):
        # every PE id still fits when written upwards: which PE is on top matters most
        ax.set_xticks(np.arange(n), labels, rotation=90)
        ax.set_xlabel("PE, sorted by total (largest first)")
        return
    if sort:
        # PE ids at thinned positions of a sorted axis would be meaningless: show ranks
        step = nice_step(n, _fitting_labels(ax, n, len(str(n))))
        ranks = np.concatenate([[1], np.arange(step, n + 1, step)])
        ax.set_xticks(ranks - 1, [str(r) for r in ranks])
        ax.set_xlabel(f"rank of the PE by total, largest first ({n:,} PEs)")
    else:
        step = nice_step(n, _fitting_labels(ax, n, longest(labels)))
        positions = np.arange(0, n, step)
        ax.set_xticks(positions, [labels[k] for k in positions])
        ax.set_xlabel(f"PE ({n:,} PEs)")


def _fitting_labels(ax: Axes, n: int, chars: int) -> int:
    """How many tick labels of ``chars`` characters fit side by side (at most MAX_TICK_LABELS)."""
    per_bar = _bar_points(ax, n)
    label_pt = (max(chars, 1) * 0.62 + 1.5) * tick_fontsize("x")
    fitting = int(per_bar * n // label_pt)
    return max(2, min(MAX_TICK_LABELS, fitting))


def _bar_points(ax: Axes, n: int) -> float:
    """Width of one bar slot in points, for the Axes' current size (before layout)."""
    figure = root_figure(ax)
    width_in = ax.get_position(original=True).width * float(figure.get_size_inches()[0])
    return width_in * 72.0 / max(n, 1)

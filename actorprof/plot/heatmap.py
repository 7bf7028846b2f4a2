"""Communication-matrix heatmap: who sends how much to whom, with per-PE totals.

The matrix, its per-source totals ("sent") and per-destination totals
("received") are three images on one Axes, so a 4,096 x 4,096 matrix draws as
fast as an 8 x 8 one. The totals have their own colour scale and colormap:
they are about N times larger than the cells and would wash them out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import Colormap, ListedColormap, LogNorm, Normalize
from matplotlib.image import AxesImage
from matplotlib.ticker import FuncFormatter, LogFormatter, MaxNLocator
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    import pandas as pd

from actorprof.analyze.imbalance import LOG_SKEW, skew
from actorprof.plot._style import (
    axis_name,
    contrast_text_colors,
    format_count,
    get_ax,
    longest,
    nice_step,
    points_per_unit,
    reserve_margins,
    tick_fontsize,
)

__all__ = [
    "ANNOT_CELL_LIMIT",
    "ANNOT_MAX",
    "LOG_SKEW",
    "MAX_TICK_LABELS",
    "ZERO_COLOR",
    "plot_heatmap",
    "skew",
]

#: ``annot=None`` writes the numbers when the matrix has at most this many rows and columns.
ANNOT_MAX = 32
#: ``annot=True`` is refused above this many cells (one text artist each).
ANNOT_CELL_LIMIT = 10_000
#: Upper bound on tick labels per axis, the totals label included.
MAX_TICK_LABELS = 40
#: Colour of the cells holding 0 on a log scale (log 0 has no colour of its own).
ZERO_COLOR = "#d9d9d9"

# Width of the totals bands as a fraction of the matrix side (at least one cell):
# a one-cell band would vanish on a 4,096-PE matrix.
_BAND_FRACTION = 0.04
# Up to this size every cell gets its own screen pixels; larger matrices are
# antialiased so that a single hot cell still shows when downsampled.
_NEAREST_MAX = 256
# Up to this size the colours are resampled, beyond it the numbers (colouring
# 16M cells before resampling takes seconds). Resampled numbers blur a cell
# into its zero neighbours: on a log scale it falls under the colours and
# shows as zero (a pooled block diagonal of 512 blocks, local_send at 65,536
# PEs, vanished but for a few dots).
_RGBA_MAX = 2048
# Width the colour bars, their ticks and labels take at the right of the Axes.
_COLORBAR_INCHES = 1.1
_GREY_CMAPS = {"Greys", "Greys_r", "gray", "gray_r", "grey", "grey_r", "binary", "binary_r"}


class _CellImage(AxesImage):
    """The cells of a large matrix: each cell its own pixels (``nearest``)
    when the image has at least as many pixels as cells, its colours
    antialiased when it has fewer (a hot cell then still shows).

    matplotlib's ``antialiased`` blurs an image enlarged less than 3 times
    (a Hanning filter): a pooled overview of 512 blocks on about 1,000
    pixels came out pale, each cell's colour mixed with its neighbours'.
    """

    def get_interpolation(self) -> str:
        data = self.get_array()
        if data is None:
            return "antialiased"
        rows, cols = data.shape[:2]
        box = self.get_window_extent()
        return "nearest" if box.width >= cols and box.height >= rows else "antialiased"


class _FixedLogNorm(LogNorm):
    """LogNorm that skips autoscaling once its limits are set.

    matplotlib's LogNorm takes the log of every value on each autoscale call,
    limits or not: seconds for a 4,096 x 4,096 matrix.
    """

    def autoscale_None(self, A: ArrayLike) -> None:
        if not self.scaled():
            super().autoscale_None(A)

    def __call__(self, value: Any, clip: bool | None = None) -> Any:
        # log 0 is undefined and LogNorm masks it like a missing cell; a zero is a
        # count, so it gets the colormap's "under" colour (ZERO_COLOR) instead
        result = super().__call__(value, clip)
        if not isinstance(result, np.ma.MaskedArray):
            return result
        zero = np.ma.getdata(value) == 0
        if np.any(zero):
            result = np.ma.array(result, copy=True)
            result[zero] = -1.0  # below 0: the "under" colour
        return result


@dataclass(frozen=True)
class _Layout:
    """Where the matrix and the totals bands sit, in data coordinates (cell = 1)."""

    n_rows: int
    n_cols: int
    totals: bool
    band_x: float  # width of the totals column
    band_y: float  # height of the totals row

    @classmethod
    def for_shape(cls, n_rows: int, n_cols: int, totals: bool) -> _Layout:
        return cls(
            n_rows=n_rows,
            n_cols=n_cols,
            totals=totals,
            band_x=max(1.0, _BAND_FRACTION * n_cols),
            band_y=max(1.0, _BAND_FRACTION * n_rows),
        )

    @property
    def matrix_extent(self) -> tuple[float, float, float, float]:
        return (-0.5, self.n_cols - 0.5, self.n_rows - 0.5, -0.5)

    @property
    def column_extent(self) -> tuple[float, float, float, float]:
        left = self.n_cols - 0.5 + self.band_x / 2
        return (left, left + self.band_x, self.n_rows - 0.5, -0.5)

    @property
    def row_extent(self) -> tuple[float, float, float, float]:
        top = self.n_rows - 0.5 + self.band_y / 2
        return (-0.5, self.n_cols - 0.5, top + self.band_y, top)

    @property
    def sent_x(self) -> float:
        left, right, _, _ = self.column_extent
        return (left + right) / 2

    @property
    def received_y(self) -> float:
        _, _, bottom, top = self.row_extent
        return (bottom + top) / 2

    @property
    def xlim(self) -> tuple[float, float]:
        right = self.column_extent[1] if self.totals else self.n_cols - 0.5
        return (-0.5, right)

    @property
    def ylim(self) -> tuple[float, float]:
        bottom = self.row_extent[2] if self.totals else self.n_rows - 0.5
        return (bottom, -0.5)  # inverted: row 0 at the top


def plot_heatmap(
    matrix: pd.DataFrame | NDArray[Any],
    *,
    row_ids: Sequence[Any] | None = None,
    column_ids: Sequence[Any] | None = None,
    ax: Axes | None = None,
    totals: bool = True,
    annot: bool | None = None,
    log: bool | None = None,
    cmap: str | Colormap = "viridis",
    value_label: str = "messages",
    source_label: str | None = None,
    destination_label: str | None = None,
    title: str | None = None,
    colorbar: bool = True,
    vmax: float | tuple[float, float] | None = None,
    **kwargs: Any,
) -> Axes:
    """Draw a communication matrix as a heatmap, with sent/received totals.

    Rows are sources (row 0 at the top), columns are destinations. A column
    at the right holds each row's total ("sent") and a row at the bottom each
    column's total ("received"); they have their own colour scale and a
    different colormap so the cells keep their contrast.

    Parameters
    ----------
    matrix
        Message counts (or bytes, or any non-negative numbers); index = source
        ids, columns = destination ids. Need not be square. NaN cells are left
        blank and count as 0 in the totals. Not modified. Or a 2-D numpy
        array, its rows and columns named by `row_ids` and `column_ids`
        (this form needs no pandas: a figure drawn where pandas is not
        imported).
    row_ids, column_ids
        With an array `matrix`: the ids of its rows (sources) and columns
        (destinations), as a DataFrame's index and columns; default 0, 1, ...
    ax
        Axes to draw on; default: the current Axes (created if needed).
    totals
        Draw the totals column and row.
    annot
        Write each cell's value in it; ``None`` does so when the matrix has at
        most 32 rows and columns (from 17 on, give the figure room: about
        0.25 inch per cell). ``True`` is refused above 10,000 cells.
    log
        Logarithmic colour scales. ``None`` (default) chooses: log when the
        data are skewed, that is when the largest non-zero cell is more than
        :data:`LOG_SKEW` (50) times the median non-zero cell, linear
        otherwise; a chosen log scale is said on the colour bar ("messages
        (log scale, chosen: max/median = 67x)"). ``True``/``False`` force it.
        On a log scale, cells holding 0 are light grey (:data:`ZERO_COLOR`,
        the triangle under the colour bar), unlike the smallest count.
    cmap
        Colormap of the cells, by name or as a :class:`~matplotlib.colors.Colormap`.
        The totals use greys (oranges when `cmap` is itself grey).
    value_label
        What the numbers count, for the colour bars: "messages", "bytes"...
    source_label, destination_label
        Axis labels; default from ``matrix.index.name`` and
        ``matrix.columns.name`` (``"src_pe"`` -> "source PE"), or "source"
        and "destination" for an array.
    title
        Axes title.
    colorbar
        Add colour bars for the cells and, with `totals`, for the totals, to
        the right of the Axes (as inset Axes, so they follow its size). If the
        figure has no layout engine, the Axes is narrowed within its grid cell
        to make room, as ``Figure.colorbar(ax=...)`` does, so that
        ``tight_layout`` keeps the bars clear of the next panel; with
        ``layout="constrained"`` the engine makes room.
    vmax
        Upper end of the colour scales, to put several heatmaps on one scale:
        a number sets the cells' scale, a pair ``(cells, totals)`` both. Default:
        each matrix's own maximum. Values above it get the top colour.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.imshow` for the matrix image
        (``ax.images[0]``), e.g. ``alpha=0.8`` or ``interpolation="none"``.

    Colour bars of whole numbers (counts) have whole-number ticks.

    Returns
    -------
    Axes
        `ax`. On a fresh Axes, ``ax.images`` holds, in this order, the matrix,
        the totals column (shape ``(n_rows, 1)``) and the totals row (shape
        ``(1, n_cols)``). Cell ``(i, j)`` is centred on ``x=j, y=i``; the
        annotations are ``ax.texts``.

    Raises
    ------
    ValueError
        If `matrix` is empty or not 2-D, `annot` is True for more than 10,000
        cells, `row_ids` or `column_ids` do not match the array's shape, or
        are given with a DataFrame.
    TypeError
        If `matrix` holds values that are not numbers.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> m = pd.DataFrame([[0, 5], [3, 1]],
    ...                  index=pd.Index([0, 1], name="src_pe"),
    ...                  columns=pd.Index([0, 1], name="dst_pe"))
    >>> fig, ax = plt.subplots(layout="constrained")
    >>> ax = plot_heatmap(m, ax=ax, title="messages between PEs")
    >>> ax.images[1].get_array().ravel().tolist()  # sent by each PE
    [5.0, 4.0]
    """
    values = _as_float_array(matrix)
    n_rows, n_cols = values.shape
    rows, columns = _ids(matrix, values.shape, row_ids, column_ids)
    if annot is None:
        annot = max(n_rows, n_cols) <= ANNOT_MAX
    elif annot and n_rows * n_cols > ANNOT_CELL_LIMIT:
        raise ValueError(
            f"annot=True would write {n_rows * n_cols:,} numbers; it is allowed up to "
            f"{ANNOT_CELL_LIMIT:,} cells: pass annot=None or False"
        )
    ax = get_ax(ax)
    reserve_margins(
        ax,
        left=_left_margin(rows, totals),
        right=_COLORBAR_INCHES if colorbar else 0.0,
    )
    layout = _Layout.for_shape(n_rows, n_cols, totals)
    small = max(n_rows, n_cols) <= _NEAREST_MAX
    # large matrices: their colours resampled up to _RGBA_MAX a side, their
    # numbers beyond it; nearest or antialiased chosen at each draw (_CellImage)
    interpolation = "nearest" if small else "antialiased"
    colours = max(n_rows, n_cols) <= _RGBA_MAX
    interpolation_stage: Literal["data", "rgba"] = "rgba" if colours else "data"

    ratio = skew(values)
    chosen = log is None
    if log is None:
        log = ratio is not None and ratio > LOG_SKEW
    cell_cmap = cmap if isinstance(cmap, Colormap) else mpl.colormaps[cmap]
    if log:
        cell_cmap = cell_cmap.with_extremes(under=ZERO_COLOR)
    options: dict[str, Any] = {
        "cmap": cell_cmap,
        "norm": _norm(values, log=log, vmax=_vmax(vmax, 0)),
        "extent": layout.matrix_extent,
        "origin": "upper",
        # The figure's shape sets the cells' shape (as in seaborn): with a fixed
        # aspect, constrained layout misplaces the colour bars on the first draw.
        "aspect": "auto",
        "interpolation": interpolation,
        "interpolation_stage": interpolation_stage,
    }
    options.update(kwargs)
    cell_image = ax.imshow(values, **options)  # imshow masks the NaN cells itself
    if not small and "interpolation" not in kwargs:
        cell_image.__class__ = _CellImage  # its resampling chosen at each draw
    # each image with the numbers it shows (get_array() is typed optional)
    shown = [(cell_image, values)]
    if totals:
        filled = np.where(np.isnan(values), 0.0, values) if np.isnan(values).any() else values
        sent = filled.sum(axis=1)
        received = filled.sum(axis=0)
        totals_cmap = _totals_cmap(cmap.name if isinstance(cmap, Colormap) else cmap)
        if log:
            # the totals' greys start near ZERO_COLOR: a zero total is white
            totals_cmap = totals_cmap.with_extremes(under="white")
        totals_norm = _norm(np.concatenate([sent, received]), log=log, vmax=_vmax(vmax, 1))
        for data, extent in (
            (sent[:, np.newaxis], layout.column_extent),
            (received[np.newaxis, :], layout.row_extent),
        ):
            image = ax.imshow(
                data,
                cmap=totals_cmap,
                norm=totals_norm,
                extent=extent,
                origin="upper",
                aspect="auto",
                interpolation=interpolation,
            )
            shown.append((image, data))
    ax.set_xlim(*layout.xlim)
    ax.set_ylim(*layout.ylim)
    for spine in ax.spines.values():
        spine.set_visible(False)

    xspan = layout.xlim[1] - layout.xlim[0]
    yspan = layout.ylim[0] - layout.ylim[1]
    per_x, per_y = points_per_unit(ax, xspan, yspan)
    _set_ticks(ax, rows, columns, layout, per_x=per_x, per_y=per_y)
    ax.set_xlabel(
        destination_label
        if destination_label is not None
        else axis_name(getattr(columns, "name", None), "destination")
    )
    ax.set_ylabel(
        source_label
        if source_label is not None
        else axis_name(getattr(rows, "name", None), "source")
    )
    if title is not None:
        ax.set_title(title)
    if annot:
        _annotate(ax, shown, layout, per_x=per_x, per_y=per_y)
    if colorbar:
        scale = ""
        if log:
            scale = f"log scale, chosen: max/median = {ratio:.0f}x" if chosen else "log scale"
        _add_colorbars(
            ax,
            [image for image, _ in shown],
            value_label=value_label,
            scale=scale,
            integer=[_whole(data) for _, data in shown],
        )
    return ax


def _whole(data: NDArray[np.float64]) -> bool:
    """Whether every finite value of `data` is a whole number (counts: integer ticks)."""
    finite = data[np.isfinite(data)]
    return bool(np.all(finite == np.round(finite)))


def _as_float_array(matrix: pd.DataFrame | NDArray[Any]) -> NDArray[np.float64]:
    """The matrix values as floats, NaN where missing (may share memory: never written to)."""
    if len(matrix.shape) != 2:
        raise ValueError(f"the matrix must be 2-D (shape {matrix.shape})")
    if matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(f"cannot draw an empty matrix (shape {matrix.shape})")
    try:
        if isinstance(matrix, np.ndarray):
            return np.asarray(matrix, dtype=np.float64)  # read only: no copy
        return matrix.to_numpy(dtype=np.float64, na_value=np.nan)  # read only: no copy
    except (TypeError, ValueError) as exc:
        raise TypeError(f"the matrix must hold numbers: {exc}") from exc


def _ids(
    matrix: pd.DataFrame | NDArray[Any],
    shape: tuple[int, ...],
    row_ids: Sequence[Any] | None,
    column_ids: Sequence[Any] | None,
) -> tuple[Sequence[Any] | pd.Index[Any], Sequence[Any] | pd.Index[Any]]:
    """The ids of the rows and of the columns: a DataFrame's index and columns
    (their names label the axes), or an array's ``row_ids`` and ``column_ids``."""
    if not isinstance(matrix, np.ndarray):
        if row_ids is not None or column_ids is not None:
            raise ValueError(
                "row_ids and column_ids name an array's rows and columns: a "
                "DataFrame's are its index and columns"
            )
        return matrix.index, matrix.columns
    rows = range(shape[0]) if row_ids is None else row_ids
    columns = range(shape[1]) if column_ids is None else column_ids
    if len(rows) != shape[0] or len(columns) != shape[1]:
        raise ValueError(
            f"{len(rows)} row ids and {len(columns)} column ids for a matrix of shape {shape}"
        )
    return rows, columns


def _left_margin(rows: Sequence[Any] | pd.Index[Any], totals: bool) -> float:
    """Inches the y tick labels ("received" or the widest id) and the y label need."""
    widest = max(len("received") if totals else 0, max(len(str(i)) for i in rows))
    points = 0.62 * tick_fontsize("y") * widest + 1.4 * tick_fontsize("y") + 14.0
    return points / 72.0


def _vmax(vmax: float | tuple[float, float] | None, which: int) -> float | None:
    """The cells' (0) or totals' (1) upper limit from ``plot_heatmap(vmax=...)``."""
    if vmax is None:
        return None
    if isinstance(vmax, tuple):
        return float(vmax[which])
    return float(vmax) if which == 0 else None


def _norm(data: NDArray[np.float64], *, log: bool, vmax: float | None = None) -> Normalize:
    """Colour normalisation for `data` that never divides by zero (``vmax``: fixed top)."""
    # min/max over whole arrays, not boolean selections: 16M cells must stay fast
    valid = np.isfinite(data)
    top = float(vmax) if vmax is not None and math.isfinite(vmax) and vmax > 0 else None
    if log:
        positive = valid & (data > 0)
        if not positive.any():
            empty_top = 10.0 if top is None else top
            return _FixedLogNorm(vmin=empty_top / 10.0, vmax=empty_top)
        low = float(np.min(data, where=positive, initial=np.inf))
        high = float(np.max(data, where=positive, initial=-np.inf))
        if top is not None:
            high = top
        if low >= high:
            low = high / 10.0
        # no clip: zeros take the "under" colour (see _FixedLogNorm), not the lowest one
        return _FixedLogNorm(vmin=low, vmax=high)
    if not valid.any():
        return Normalize(vmin=0.0, vmax=1.0 if top is None else top)
    low = min(0.0, float(np.min(data, where=valid, initial=np.inf)))
    high = float(np.max(data, where=valid, initial=-np.inf))
    if top is not None:
        high = top
    if high <= low:
        high = low + 1.0
    return Normalize(vmin=low, vmax=high)


def _totals_cmap(cmap: str) -> Colormap:
    """A colormap for the totals, clearly unlike `cmap` and never pure white or black."""
    base = mpl.colormaps["Oranges" if cmap in _GREY_CMAPS else "Greys"]
    colors = base(np.linspace(0.12, 0.85, 256))
    return ListedColormap(colors, name=f"actorprof_totals_{base.name}")


def _set_ticks(
    ax: Axes,
    rows: Sequence[Any] | pd.Index[Any],
    columns: Sequence[Any] | pd.Index[Any],
    layout: _Layout,
    *,
    per_x: float,
    per_y: float,
) -> None:
    """Label thinned rows and columns with their ids, and the totals bands."""
    extra = 1 if layout.totals else 0
    x_size = tick_fontsize("x")
    y_size = tick_fontsize("y")
    # Short ids (PE numbers) stay horizontal and are thinned to fit side by side;
    # long ones are turned vertical and thinned like the y axis.
    widest = max(len(str(label)) for label in columns)
    rotation = 0.0 if widest <= 5 else 90.0
    x_room = (0.65 * widest + 1.2) * x_size if rotation == 0.0 else 1.4 * x_size
    # one label per 1.4 font heights at most: more would overlap
    max_x = min(MAX_TICK_LABELS, int(layout.n_cols * per_x / x_room) + extra)
    max_y = min(MAX_TICK_LABELS, int(layout.n_rows * per_y / (1.4 * y_size)) + extra)
    x_step = nice_step(layout.n_cols, max_x - extra)
    y_step = nice_step(layout.n_rows, max_y - extra)

    x_pos = _tick_positions(layout.n_cols, x_step, layout.sent_x if layout.totals else None)
    y_pos = _tick_positions(layout.n_rows, y_step, layout.received_y if layout.totals else None)
    x_labels = [str(columns[i]) for i in x_pos]
    y_labels = [str(rows[i]) for i in y_pos]
    x_ticks = [float(i) for i in x_pos]
    y_ticks = [float(i) for i in y_pos]
    if layout.totals:
        x_ticks.append(layout.sent_x)
        x_labels.append("sent")
        y_ticks.append(layout.received_y)
        y_labels.append("received")

    ax.set_xticks(x_ticks, x_labels, rotation=rotation)
    ax.set_yticks(y_ticks, y_labels)
    ax.tick_params(which="major", length=2)


def _tick_positions(n: int, step: int, totals_at: float | None) -> list[int]:
    """Every `step`-th position, minus the last one if it would crowd the totals label."""
    positions = list(range(0, n, step))
    if totals_at is not None and len(positions) > 1 and totals_at - positions[-1] < 0.75 * step:
        positions.pop()
    return positions


def _annotate(
    ax: Axes,
    shown: list[tuple[AxesImage, NDArray[np.float64]]],
    layout: _Layout,
    *,
    per_x: float,
    per_y: float,
) -> None:
    """Write each cell's value in its centre, black or white for contrast."""
    rows = np.arange(layout.n_rows, dtype=np.float64)
    cols = np.arange(layout.n_cols, dtype=np.float64)
    # image, centres of its columns and rows, size of one of its cells (data units)
    placed = [(cols, rows, 1.0, 1.0)]
    if len(shown) == 3:
        placed.append((np.array([layout.sent_x]), rows, layout.band_x, 1.0))
        placed.append((cols, np.array([layout.received_y]), 1.0, layout.band_y))

    for (image, data), (xs, ys, width, height) in zip(shown, placed, strict=True):
        labels = [format_count(v) for v in data.ravel()]
        colors = contrast_text_colors(image.to_rgba(data))
        fontsize = _annot_fontsize(width * per_x, height * per_y, longest(labels))
        grid_x, grid_y = np.meshgrid(xs, ys)
        for x, y, label, color in zip(grid_x.ravel(), grid_y.ravel(), labels, colors, strict=True):
            if label:  # NaN cells stay blank
                ax.text(
                    float(x),
                    float(y),
                    label,
                    ha="center",
                    va="center",
                    color=str(color),
                    fontsize=fontsize,
                )


def _annot_fontsize(width_pt: float, height_pt: float, chars: int) -> float:
    """Largest font size (3-10 pt) at which `chars` characters fit in a cell."""
    by_width = 0.85 * width_pt / (0.62 * max(chars, 1) + 0.3)
    by_height = 0.6 * height_pt
    return float(np.clip(min(by_width, by_height), 3.0, 10.0))


def _add_colorbars(
    ax: Axes, images: list[AxesImage], *, value_label: str, scale: str, integer: list[bool]
) -> None:
    """Colour bars in a column at the right: cells on top, totals below.

    They are inset Axes, so they follow the Axes wherever a layout puts it,
    and layout engines make room for them.
    """
    figure = ax.figure
    has_totals = len(images) == 3
    bars = [(images[0], (1.04, 0.45, 0.035, 0.55) if has_totals else (1.04, 0.0, 0.035, 1.0))]
    labels = [f"{value_label} ({scale})" if scale else value_label]
    if has_totals:
        bars.append((images[1], (1.04, 0.0, 0.035, 0.36)))
        labels.append(f"total {value_label}" + (" (log)" if scale else ""))
    for (image, bounds), label, whole in zip(bars, labels, integer[: len(bars)], strict=True):
        cax = ax.inset_axes(bounds)
        is_log = isinstance(image.norm, LogNorm)
        # the triangle below a log bar shows the colour of 0
        bar = figure.colorbar(image, cax=cax, extend="min" if is_log else "neither")
        if is_log:
            bar.formatter = _CompactLogFormatter()
            bar.minorformatter = _CompactLogFormatter(labelOnlyBase=False)
            # name the colour of the zero cells beside its triangle
            cax.text(
                1.0,
                -0.03,
                " 0",
                transform=cax.transAxes,
                ha="left",
                va="center",
                fontsize=tick_fontsize("y"),
            )
        else:
            if whole:
                bar.locator = MaxNLocator(integer=True)  # no "0.5 messages"
            bar.formatter = FuncFormatter(_colorbar_label)
        bar.set_label(label)
        bar.outline.set_visible(False)


class _CompactLogFormatter(LogFormatter):
    """Log colour-bar labels written like the cells: ``10``, ``20.2k``, ``1M``."""

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return format_count(x)


def _colorbar_label(value: float, _position: int | None = None) -> str:
    """Colour-bar tick label: compact like the cells, and no negative zero."""
    return format_count(0.0 if math.isclose(value, 0.0, abs_tol=1e-12) else value)

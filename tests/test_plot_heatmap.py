"""plot_heatmap: what was drawn (images, texts, ticks, colour bars), not pixels."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LogNorm, to_rgba
from matplotlib.figure import Figure
from matplotlib.text import Text

from actorprof.plot import plot_heatmap
from actorprof.plot._style import axis_name, format_count, format_thousands, nice_step
from actorprof.plot.heatmap import ANNOT_MAX, ZERO_COLOR

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def make_matrix(values: object, src: str = "src_pe", dst: str = "dst_pe") -> pd.DataFrame:
    frame = pd.DataFrame(values)
    frame.index = pd.RangeIndex(len(frame), name=src)
    frame.columns = pd.RangeIndex(frame.shape[1], name=dst)
    return frame


# rows sum to 3, 12415, 1200015; columns to 37, 49, 1212347
HAND = [[0, 1, 2], [30, 40, 12345], [7, 8, 1_200_000]]


def texts_at(ax: Axes) -> dict[tuple[float, float], str]:
    return {
        (float(t.get_position()[0]), float(t.get_position()[1])): t.get_text() for t in ax.texts
    }


def tick_texts(labels: list[Text]) -> list[str]:
    return [label.get_text() for label in labels]


def draw(ax: Axes) -> None:
    ax.figure.canvas.draw()


# --- images -------------------------------------------------------------------


def test_images_hold_matrix_and_totals() -> None:
    matrix = make_matrix(HAND)
    _fig, ax = plt.subplots()
    plot_heatmap(matrix, ax=ax)

    assert len(ax.images) == 3
    cells, sent, received = (image.get_array() for image in ax.images)
    np.testing.assert_array_equal(cells, matrix.to_numpy())
    assert sent.shape == (3, 1)
    assert received.shape == (1, 3)
    np.testing.assert_array_equal(sent.ravel(), [3, 12415, 1200015])
    np.testing.assert_array_equal(received.ravel(), [37, 49, 1212347])
    draw(ax)


def test_totals_have_their_own_scale_and_colormap() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax)
    cells, sent, received = ax.images
    assert sent.norm is received.norm
    assert sent.norm is not cells.norm
    assert sent.norm.vmax == 1212347
    assert cells.norm.vmax == 1_200_000
    assert sent.get_cmap().name != cells.get_cmap().name


def test_totals_sit_right_of_and_below_the_matrix() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(np.ones((4, 4))), ax=ax)
    left, right, bottom, top = ax.images[0].get_extent()
    assert (left, right, bottom, top) == (-0.5, 3.5, 3.5, -0.5)
    column = ax.images[1].get_extent()
    row = ax.images[2].get_extent()
    assert column[0] > right  # gap between matrix and totals column
    assert tuple(column[2:]) == (3.5, -0.5)
    assert row[3] > bottom  # gap between matrix and totals row
    assert tuple(row[:2]) == (-0.5, 3.5)
    assert ax.yaxis_inverted()  # row 0 at the top


def test_without_totals_only_the_matrix() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax, totals=False)
    assert len(ax.images) == 1
    assert "sent" not in tick_texts(ax.get_xticklabels())
    assert "received" not in tick_texts(ax.get_yticklabels())
    assert len(ax.texts) == 9


# --- annotations --------------------------------------------------------------


def test_annotations_of_hand_made_matrix() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax)

    assert len(ax.texts) == 9 + 3 + 3
    at = texts_at(ax)
    assert at[(2.0, 1.0)] == "12.3k"  # cell (row 1, column 2)
    assert at[(0.0, 1.0)] == "30"
    assert at[(2.0, 2.0)] == "1.2M"
    assert at[(0.0, 0.0)] == "0"
    sent_x = ax.get_xticks()[-1]
    received_y = ax.get_yticks()[-1]
    assert [at[(sent_x, float(row))] for row in range(3)] == ["3", "12.4k", "1.2M"]
    assert [at[(float(col), received_y)] for col in range(3)] == ["37", "49", "1.21M"]


def test_annotation_colours_contrast_with_cells() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix([[0, 100], [50, 1]]), ax=ax, totals=False)
    colors = {t.get_text(): t.get_color() for t in ax.texts}
    assert colors["0"] == "white"  # darkest viridis
    assert colors["100"] == "black"  # brightest viridis


def test_no_cell_texts_for_64_by_64() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(np.arange(64 * 64).reshape(64, 64)), ax=ax)
    assert len(ax.texts) == 0


def test_annot_switches() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax, annot=False)
    assert len(ax.texts) == 0
    n = ANNOT_MAX + 1  # the smallest matrix whose numbers are written only when asked
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(np.ones((n, n))), ax=ax, annot=True, totals=False)
    assert len(ax.texts) == n * n


def test_annot_true_refused_for_huge_matrix() -> None:
    with pytest.raises(ValueError, match="annot=True"):
        plot_heatmap(make_matrix(np.zeros((200, 200))), annot=True)


# --- ticks and labels ---------------------------------------------------------


def test_small_matrix_labels_every_row_and_column() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(np.ones((8, 8))), ax=ax)
    expected = [str(i) for i in range(8)]
    assert tick_texts(ax.get_xticklabels()) == [*expected, "sent"]
    assert tick_texts(ax.get_yticklabels()) == [*expected, "received"]
    np.testing.assert_array_equal(ax.get_xticks()[:8], np.arange(8))


def test_ticks_thinned_for_1000_by_1000() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(np.ones((1000, 1000), dtype=np.int64)), ax=ax)
    for labels, ticks, total in (
        (tick_texts(ax.get_xticklabels()), ax.get_xticks(), "sent"),
        (tick_texts(ax.get_yticklabels()), ax.get_yticks(), "received"),
    ):
        assert len(labels) <= 40
        assert labels[0] == "0"
        assert labels[-1] == total
        step = int(ticks[1] - ticks[0])
        assert step in {10, 20, 50, 100, 200, 500}
        assert labels[:-1] == [str(int(t)) for t in ticks[:-1]]
    assert len(ax.texts) == 0
    draw(ax)


def test_tick_labels_are_index_values() -> None:
    matrix = pd.DataFrame(
        np.ones((3, 2)),
        index=pd.Index([10, 20, 30], name="src_node"),
        columns=pd.Index(["a", "b"], name="dst_node"),
    )
    _fig, ax = plt.subplots()
    plot_heatmap(matrix, ax=ax)
    assert tick_texts(ax.get_yticklabels()) == ["10", "20", "30", "received"]
    assert tick_texts(ax.get_xticklabels()) == ["a", "b", "sent"]
    assert ax.get_ylabel() == "source node"
    assert ax.get_xlabel() == "destination node"


def png_of(fig: Figure) -> bytes:
    import io

    from actorprof.write import save_png

    buffer = io.BytesIO()
    save_png(fig, buffer, dpi=60)
    return buffer.getvalue()


@pytest.mark.parametrize("log", [False, True])
def test_an_array_with_ids_draws_what_its_frame_draws(log: bool) -> None:
    frame = pd.DataFrame(
        [[0.0, 5.0, np.nan], [3.0, 1.0, 700.0]],
        index=pd.Index([10, 20], name="src_node"),
        columns=pd.Index([4096, 4097, 4098], name="dst_node"),
    )
    figures = [Figure(figsize=(5, 4), layout="constrained") for _ in range(2)]
    plot_heatmap(frame, ax=figures[0].subplots(), log=log, title="t")
    plot_heatmap(
        frame.to_numpy(),
        row_ids=[10, 20],
        column_ids=[4096, 4097, 4098],
        source_label="source node",
        destination_label="destination node",
        ax=figures[1].subplots(),
        log=log,
        title="t",
    )
    by_frame, by_array = (fig.axes[0] for fig in figures)
    assert tick_texts(by_array.get_xticklabels()) == ["4096", "4097", "4098", "sent"]
    assert tick_texts(by_array.get_yticklabels()) == ["10", "20", "received"]
    assert texts_at(by_array) == texts_at(by_frame)
    assert png_of(figures[1]) == png_of(figures[0])  # the same pixels


def test_an_array_without_ids_counts_from_0() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(np.array([[1, 2], [3, 4]]), ax=ax)
    assert tick_texts(ax.get_yticklabels()) == ["0", "1", "received"]
    assert tick_texts(ax.get_xticklabels()) == ["0", "1", "sent"]
    assert (ax.get_ylabel(), ax.get_xlabel()) == ("source", "destination")
    assert ax.images[1].get_array().ravel().tolist() == [3.0, 7.0]  # sent by each row


def test_ids_must_fit_an_array() -> None:
    with pytest.raises(ValueError, match="3 row ids and 2 column ids"):
        plot_heatmap(np.ones((2, 2)), row_ids=[0, 1, 2])
    with pytest.raises(ValueError, match="index and columns"):
        plot_heatmap(make_matrix(HAND), row_ids=[0, 1, 2])
    with pytest.raises(ValueError, match="2-D"):
        plot_heatmap(np.ones(3))
    with pytest.raises(TypeError, match="numbers"):
        plot_heatmap(np.array([["a", "b"]]))


def test_axis_labels_default_and_override() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax, title="t")
    assert (ax.get_ylabel(), ax.get_xlabel()) == ("source PE", "destination PE")
    assert ax.get_title() == "t"
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax, source_label="from", destination_label="to")
    assert (ax.get_ylabel(), ax.get_xlabel()) == ("from", "to")
    _fig, ax = plt.subplots()
    plot_heatmap(pd.DataFrame(HAND), ax=ax)
    assert (ax.get_ylabel(), ax.get_xlabel()) == ("source", "destination")


# --- colour bars --------------------------------------------------------------


def colorbar_labels(ax: Axes) -> list[str]:
    return [child.get_ylabel() for child in ax.child_axes]


def test_two_colour_bars_labelled() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax, value_label="bytes")
    # HAND is skewed (max/median 63158x): the log scale is chosen and said
    assert colorbar_labels(ax) == [
        "bytes (log scale, chosen: max/median = 63158x)",
        "total bytes (log)",
    ]
    draw(ax)
    top_bar, totals_bar = ax.child_axes
    # stacked in one column right of the matrix, not overlapping
    assert top_bar.get_position().y0 > totals_bar.get_position().y1
    assert top_bar.get_position().x0 > ax.get_position().x1


def test_colour_bar_switches() -> None:
    fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax, totals=False, log=False)
    assert colorbar_labels(ax) == ["messages"]
    fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax, colorbar=False)
    assert len(ax.child_axes) == 0
    assert fig.axes == [ax]


def assert_fits(fig: Figure, ax: Axes, *, drawn: bool = False) -> None:
    """Colour bars, tick labels and axis labels all inside the figure
    (``drawn``: as the figure's last draw placed them)."""
    if not drawn:
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [child.get_tightbbox(renderer) for child in ax.child_axes]
    boxes.append(ax.get_tightbbox(renderer))
    for box in boxes:
        assert box is not None
        assert box.x0 >= 0
        assert box.x1 <= fig.bbox.x1


@pytest.mark.parametrize("shape", [(8, 8), (3, 5), (4, 64), (1000, 1000)])
def test_fits_default_figure(shape: tuple[int, int]) -> None:
    fig, ax = plt.subplots()
    plot_heatmap(make_matrix(np.ones(shape)), ax=ax)
    assert_fits(fig, ax)


@pytest.mark.parametrize("shape", [(4, 4), (16, 16), (3, 70)])
def test_fits_constrained_figure_without_pyplot(shape: tuple[int, int]) -> None:
    fig = Figure(figsize=(7, 6), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    plot_heatmap(make_matrix(np.arange(shape[0] * shape[1]).reshape(shape)), ax=ax)
    assert plt.get_fignums() == []
    assert_fits(fig, ax)


@pytest.mark.parametrize("layout", ["tight_layout", "subplots_adjust", "none"])
def test_colour_bars_clear_the_next_panel(layout: str) -> None:
    """Side by side, a panel's colour bars end before the next panel's labels begin."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax in axes:
        plot_heatmap(make_matrix(np.arange(64).reshape(8, 8)), ax=ax, title="messages")
    if layout == "tight_layout":
        fig.tight_layout()  # once: the first pass must be right
    elif layout == "subplots_adjust":
        fig.subplots_adjust(wspace=0.6)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    for left, right in itertools.pairwise(axes):
        bars_end = max(bar.get_tightbbox(renderer).x1 for bar in left.child_axes)
        assert bars_end < right.get_tightbbox(renderer).x0
    for ax in axes:  # as drawn above (0.5 s a draw): no layout engine moves it on a draw
        assert_fits(fig, ax, drawn=True)


# --- awkward data -------------------------------------------------------------


def test_log_scale_with_zeros() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax, log=True)
    assert isinstance(ax.images[0].norm, LogNorm)
    assert isinstance(ax.images[1].norm, LogNorm)
    # zero gets its own colour: neither the lowest one (a count of 1 would look
    # the same) nor the "bad" (blank) one
    zero_rgba = ax.images[0].to_rgba(np.array([[0.0]]))[0, 0]
    lowest = ax.images[0].get_cmap()(0.0)
    np.testing.assert_allclose(zero_rgba, to_rgba(ZERO_COLOR))
    assert not np.allclose(zero_rgba, lowest) and zero_rgba[3] == 1.0
    draw(ax)


@pytest.mark.parametrize("log", [False, True])
def test_all_zero_matrix(log: bool) -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(np.zeros((5, 5), dtype=np.int64)), ax=ax, log=log)
    assert set(texts_at(ax).values()) == {"0"}
    draw(ax)


@pytest.mark.parametrize("log", [False, True])
def test_one_by_one(log: bool) -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix([[7]]), ax=ax, log=log)
    assert [image.get_array().shape for image in ax.images] == [(1, 1), (1, 1), (1, 1)]
    assert sorted(t.get_text() for t in ax.texts) == ["7", "7", "7"]
    draw(ax)


def test_non_square_matrix() -> None:
    values = np.arange(3 * 70).reshape(3, 70)
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(values, src="src_node"), ax=ax)
    assert ax.images[1].get_array().shape == (3, 1)
    assert ax.images[2].get_array().shape == (1, 70)
    np.testing.assert_array_equal(ax.images[2].get_array().ravel(), values.sum(axis=0))
    assert len(ax.get_xticklabels()) <= 40
    draw(ax)


def test_float_matrix_with_nan() -> None:
    values = np.array([[0.5, np.nan, 0.25], [1.0, 0.125, 0.0], [0.3333, 2.0, 0.75]])
    matrix = make_matrix(values)
    _fig, ax = plt.subplots()
    plot_heatmap(matrix, ax=ax)

    cells = ax.images[0].get_array()
    assert np.ma.is_masked(cells)
    assert cells.mask[0, 1]
    np.testing.assert_array_equal(cells.filled(np.nan), values)
    np.testing.assert_allclose(ax.images[1].get_array().ravel(), [0.75, 1.125, 3.0833])
    np.testing.assert_allclose(ax.images[2].get_array().ravel(), [1.8333, 2.125, 1.0])
    at = texts_at(ax)
    assert (1.0, 0.0) not in at  # the NaN cell stays blank
    assert len(ax.texts) == 8 + 3 + 3
    assert at[(0.0, 2.0)] == "0.333"
    assert at[(1.0, 1.0)] == "0.125"
    draw(ax)


def test_nullable_integers_with_missing_values() -> None:
    matrix = make_matrix([[1, 2], [3, 4]]).astype("Int64")
    matrix.iloc[0, 0] = pd.NA
    _fig, ax = plt.subplots()
    plot_heatmap(matrix, ax=ax, log=True)
    assert ax.images[0].get_array().mask[0, 0]
    np.testing.assert_array_equal(ax.images[1].get_array().ravel(), [2, 7])
    draw(ax)


def test_all_nan_matrix() -> None:
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(np.full((3, 3), np.nan)), ax=ax)
    assert len(ax.texts) == 6  # only the (zero) totals
    draw(ax)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="empty"):
        plot_heatmap(pd.DataFrame())
    with pytest.raises(TypeError, match="numbers"):
        plot_heatmap(pd.DataFrame([["a", "b"]]))


# --- seaborn-style contract ---------------------------------------------------


def test_draws_on_given_ax_without_new_figure() -> None:
    _fig, ax = plt.subplots()
    before = plt.get_fignums()
    returned = plot_heatmap(make_matrix(HAND), ax=ax)
    assert returned is ax
    assert plt.get_fignums() == before


def test_without_ax_uses_current_axes() -> None:
    returned = plot_heatmap(make_matrix(HAND))
    assert returned is plt.gca()


@pytest.mark.parametrize("log", [False, True])
def test_input_unchanged(log: bool) -> None:
    matrix = make_matrix(np.array([[0.0, 2.0], [np.nan, 4.0]]))
    ints = make_matrix(HAND)
    copies = matrix.copy(deep=True), ints.copy(deep=True)
    plot_heatmap(matrix, log=log)
    plot_heatmap(ints, log=log)
    pd.testing.assert_frame_equal(matrix, copies[0])
    pd.testing.assert_frame_equal(ints, copies[1])


def test_rcparams_untouched() -> None:
    before = dict(plt.rcParams)
    _fig, ax = plt.subplots()
    plot_heatmap(make_matrix(HAND), ax=ax, log=True)
    assert dict(plt.rcParams) == before


# --- helpers ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (7, "7"),
        (1234, "1234"),
        (9999, "9999"),
        (12345, "12.3k"),
        (123456, "123k"),
        (999_999, "1M"),
        (1_200_000, "1.2M"),
        (3_000_000_000, "3G"),
        (0.12345, "0.123"),
        (1.5, "1.5"),
        (1234.5, "1.23k"),
        (2.0, "2"),
        (float("nan"), ""),
    ],
)
def test_format_count(value: float, text: str) -> None:
    assert format_count(value) == text


def test_format_thousands() -> None:
    assert format_thousands(1234) == "1,234"
    assert format_thousands(5678.0) == "5,678"
    assert format_thousands(1234.5) == "1,234.5"
    assert format_thousands(11.5) == "11.5"
    assert format_thousands(0) == "0"


@pytest.mark.parametrize(
    ("n", "most", "step"),
    [(8, 40, 1), (40, 40, 1), (41, 40, 2), (1000, 40, 50), (1000, 39, 50), (4096, 40, 200)],
)
def test_nice_step(n: int, most: int, step: int) -> None:
    assert nice_step(n, most) == step


def test_axis_name() -> None:
    assert axis_name("src_pe", "x") == "source PE"
    assert axis_name("dst_node", "x") == "destination node"
    assert axis_name("my_thing", "x") == "my thing"
    assert axis_name(None, "fallback") == "fallback"


@pytest.mark.parametrize(("n", "dpi"), [(512, 150), (1024, 150), (1024, 50)])
def test_a_thin_diagonal_shows_on_a_log_scale(n: int, dpi: int) -> None:
    """A pooled block diagonal (local_send between the PEs of each node, 512
    blocks at 65,536 PEs): every stretch of it shows in colour, not as the
    zero grey, whether the image is enlarged (512 cells on about 1,000
    pixels) or shrunk (1,024 cells on about 300). Resampling the numbers
    blurred each cell into its zero neighbours, under the colour scale."""
    values = np.zeros((n, n))
    np.fill_diagonal(values, 3800 + np.arange(n) % 25)  # the colours span 3800-3824
    fig = Figure(figsize=(9.0, 7.8), dpi=dpi, layout="constrained")
    ax = fig.subplots()
    plot_heatmap(values, ax=ax, totals=False, colorbar=False, log=True)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[..., :3].astype(int)
    grey = np.array([int(255 * c) for c in to_rgba(ZERO_COLOR)[:3]])
    height = pixels.shape[0]
    misses = 0
    for k in range(16, n - 16, n // 20):  # points along the diagonal, inside the matrix
        x, y = ax.transData.transform((k + 0.5, k + 0.5))
        row, col = round(float(height - y)), round(float(x))
        near = pixels[row - 1 : row + 2, col - 1 : col + 2].reshape(-1, 3)
        misses += bool((np.abs(near - grey).sum(axis=1) < 12).all())
    assert misses == 0

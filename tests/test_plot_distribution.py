"""plot_violin: violins, median/max markers and labels, on awkward inputs too."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection, PolyCollection

from actorprof.plot import plot_violin

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def make_loads(data: dict[str, list[float]], index: list[int] | None = None) -> pd.DataFrame:
    frame = pd.DataFrame(data)
    frame.index = pd.Index(range(len(frame)) if index is None else index, name="pe")
    return frame


HAND = make_loads({"sent": [10, 12, 30, 11], "received": [5, 50, 5, 5]})


def labels(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.texts]


def violins(ax: Axes) -> list[PolyCollection]:
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def point_clouds(ax: Axes) -> list[PathCollection]:
    """Scatter collections holding more than one point (the per-row dots)."""
    return [c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets()) > 1]


def draw(ax: Axes) -> None:
    ax.figure.canvas.draw()


def test_one_violin_per_column() -> None:
    _fig, ax = plt.subplots()
    plot_violin(HAND, ax=ax)
    assert len(violins(ax)) == 2
    assert [t.get_text() for t in ax.get_xticklabels()] == ["sent", "received"]
    np.testing.assert_array_equal(ax.get_xticks(), [0, 1])
    # each violin is centred on its tick and stays within the data (cut=0)
    for position, violin, column in zip((0, 1), violins(ax), HAND.columns, strict=True):
        xs, ys = violin.get_paths()[0].vertices.T
        assert abs((xs.min() + xs.max()) / 2 - position) < 0.05
        assert ys.min() >= HAND[column].min() - 1e-9
        assert ys.max() <= HAND[column].max() + 1e-9
    draw(ax)


def test_median_and_max_labels() -> None:
    _fig, ax = plt.subplots()
    plot_violin(HAND, ax=ax)
    assert sorted(labels(ax)) == sorted(
        ["median 11.5", "max 30 (PE 2)", "median 5", "max 50 (PE 1)"]
    )
    at = {t.get_text(): t.get_position() for t in ax.texts}
    assert at["median 11.5"][1] == 11.5
    assert at["max 50 (PE 1)"][0] > 0.5  # next to the second violin
    assert ax.get_ylabel() == "messages per PE"
    assert ax.get_ylim()[1] > 50  # room above the top label


def test_labels_use_thousands_separators_and_row_ids() -> None:
    loads = make_loads({"bytes_sent": [1234, 5678, 1000]}, index=[100, 200, 300])
    _fig, ax = plt.subplots()
    plot_violin(loads, ax=ax, value_label="bytes", unit_label="node", title="t")
    assert sorted(labels(ax)) == ["max 5,678 (node 200)", "median 1,234"]
    assert ax.get_ylabel() == "bytes per node"
    assert ax.get_title() == "t"


def test_one_row() -> None:
    loads = make_loads({"sent": [5], "received": [7]})
    _fig, ax = plt.subplots()
    plot_violin(loads, ax=ax)
    assert sorted(labels(ax)) == ["max 5 (PE 0)", "max 7 (PE 0)", "median 5", "median 7"]
    assert len(ax.lines) == 2  # a flat bar stands in for each violin
    draw(ax)


@pytest.mark.parametrize("value", [0, 42])
def test_constant_column(value: int) -> None:
    loads = make_loads({"sent": [value] * 6, "received": [1, 2, 3, 4, 5, 60]})
    _fig, ax = plt.subplots()
    plot_violin(loads, ax=ax)
    assert len(violins(ax)) == 1
    (bar,) = ax.lines
    assert list(bar.get_ydata()) == [value, value]
    assert f"median {value}" in labels(ax)
    assert f"max {value} (PE 0)" in labels(ax)
    bottom, top = ax.get_ylim()
    assert bottom == 0 <= value < top  # the load axis starts at 0
    draw(ax)


def test_all_zero() -> None:
    loads = make_loads({"sent": [0, 0, 0], "received": [0, 0, 0]})
    _fig, ax = plt.subplots()
    plot_violin(loads, ax=ax)
    assert sorted(labels(ax)) == ["max 0 (PE 0)", "max 0 (PE 0)", "median 0", "median 0"]
    bottom, top = ax.get_ylim()
    assert bottom == 0 < top
    draw(ax)


def test_points_auto() -> None:
    _fig, ax = plt.subplots()
    plot_violin(HAND, ax=ax)
    assert [len(c.get_offsets()) for c in point_clouds(ax)] == [4, 4]

    big = make_loads({"sent": list(np.arange(300) % 17), "received": list(np.arange(300) % 5)})
    _fig, ax = plt.subplots()
    plot_violin(big, ax=ax)
    assert point_clouds(ax) == []
    _fig, ax = plt.subplots()
    plot_violin(big, ax=ax, points=True)
    assert len(point_clouds(ax)) == 2
    _fig, ax = plt.subplots()
    plot_violin(HAND, ax=ax, points=False)
    assert point_clouds(ax) == []


def test_4096_rows_no_text_per_point() -> None:
    rng = np.random.default_rng(0)
    loads = pd.DataFrame(
        {"sent": rng.poisson(1000, 4096), "received": rng.poisson(1000, 4096)},
        index=pd.RangeIndex(4096, name="pe"),
    )
    _fig, ax = plt.subplots()
    plot_violin(loads, ax=ax)
    assert len(ax.texts) == 4
    assert point_clouds(ax) == []
    top_pe = int(loads["sent"].idxmax())
    assert f"max {loads['sent'].max():,} (PE {top_pe})" in labels(ax)
    draw(ax)


def test_nan_ignored() -> None:
    loads = make_loads({"sent": [1.0, np.nan, 3.0, 2.0]})
    _fig, ax = plt.subplots()
    plot_violin(loads, ax=ax)
    assert sorted(labels(ax)) == ["max 3 (PE 2)", "median 2"]


def test_input_unchanged() -> None:
    loads = HAND.copy(deep=True)
    plot_violin(loads)
    pd.testing.assert_frame_equal(loads, HAND)


def test_draws_on_given_ax_without_new_figure() -> None:
    _fig, ax = plt.subplots()
    before = plt.get_fignums()
    assert plot_violin(HAND, ax=ax) is ax
    assert plt.get_fignums() == before


def test_empty_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        plot_violin(pd.DataFrame({"sent": []}))
    with pytest.raises(ValueError, match="empty"):
        plot_violin(pd.DataFrame(index=[0, 1]))


def violin_png(loads: object, **kwargs: object) -> bytes:
    import io

    from matplotlib.figure import Figure

    from actorprof.write import save_png

    fig = Figure(figsize=(5, 4), layout="constrained")
    plot_violin(loads, ax=fig.subplots(), title="t", **kwargs)  # type: ignore[arg-type]
    buffer = io.BytesIO()
    save_png(fig, buffer, dpi=60)
    return buffer.getvalue()


@pytest.mark.parametrize("n", [1, 2, 7, 300, 1001])
def test_columns_and_ids_draw_what_their_frame_draws(n: int) -> None:
    rng = np.random.default_rng(n)
    sent = rng.integers(0, 1000, size=n)
    received = rng.normal(500.0, 80.0, size=n)
    received[rng.random(n) < 0.1] = np.nan  # ignored, as the frame's
    ids = np.arange(n) * 3 + 4096
    frame = pd.DataFrame({"sent": sent, "received": received}, index=pd.Index(ids, name="pe"))
    columns = {"sent": sent.astype(np.float64), "received": received}
    assert violin_png(columns, ids=ids) == violin_png(frame)
    _fig, ax = plt.subplots()
    plot_violin(columns, ids=ids, ax=ax)
    top = int(np.argmax(sent))
    assert f"max {sent[top]:,} (PE {ids[top]})" in labels(ax)
    kept = received[~np.isnan(received)]
    if len(kept):  # the median pandas takes
        median = float(pd.Series(kept).median())
        assert any(t.startswith("median ") for t in labels(ax))
        assert float(np.median(kept)) == median


def test_columns_without_ids_count_from_0_and_must_fit() -> None:
    _fig, ax = plt.subplots()
    plot_violin({"sent": [1, 9, 2]}, ax=ax)
    assert "max 9 (PE 1)" in labels(ax)
    with pytest.raises(ValueError, match="2 ids for columns of 3 values"):
        plot_violin({"sent": [1, 9, 2]}, ids=[0, 1])
    with pytest.raises(ValueError, match="one length"):
        plot_violin({"sent": [1, 9, 2], "received": [1, 2]})
    with pytest.raises(ValueError, match="index"):
        plot_violin(make_loads({"sent": [1, 2]}), ids=[0, 1])
    with pytest.raises(ValueError, match="empty"):
        plot_violin({})


# --- the density: every value's kernel, or the values binned on a fine grid --


def exact_density(values: np.ndarray, support: np.ndarray) -> np.ndarray:
    """Scott's-bandwidth Gaussian KDE, one kernel per value (the definition)."""
    n = len(values)
    sigma = np.std(values, ddof=1) * n ** (-1 / 5)
    z = (support[:, None] - values[None, :]) / sigma
    return np.exp(-0.5 * z * z).sum(axis=1) / (n * sigma * np.sqrt(2 * np.pi))


def test_up_to_the_exact_limit_every_value_has_its_kernel() -> None:
    from actorprof.plot import distribution

    rng = np.random.default_rng(3)
    values = rng.lognormal(5, 1.2, distribution._KDE_EXACT_MAX)
    support, density = distribution._kde(values)
    np.testing.assert_array_equal(support, np.linspace(values.min(), values.max(), 100))
    np.testing.assert_allclose(density, exact_density(values, support), rtol=1e-12)


def test_linear_binning_keeps_the_count_and_the_mean() -> None:
    """Hand-checked: 0.25 of the way between two grid points gives 0.75 to the
    nearer; a value on a point keeps its whole weight there."""
    from actorprof.plot.distribution import _linear_binned

    grid, weights = _linear_binned(np.array([0.0, 0.25, 1.0, 4.0]), 0.0, 4.0, 4)
    np.testing.assert_array_equal(grid, [0.0, 1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(weights, [1.75, 1.25, 0.0, 0.0, 1.0])
    assert weights.sum() == 4
    assert (weights * grid).sum() == pytest.approx(0.0 + 0.25 + 1.0 + 4.0)


@pytest.mark.parametrize(
    "name", ["normal", "two modes", "lognormal", "zipf", "one far outlier", "few values"]
)
def test_beyond_it_the_binned_density_is_within_its_bound(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """65,536 PEs: the binned sum is within (spacing / sigma)^2 / 8 = 0.125 % of
    a kernel's peak per value, so within 0.125 % of the density's peak, and
    it is the binned route that gave it."""
    from actorprof.plot import distribution

    rng = np.random.default_rng(11)
    n = 65_536
    values = {
        "normal": rng.normal(1000, 50, n),
        "two modes": np.r_[rng.normal(0, 1, n // 2), rng.normal(20, 3, n - n // 2)],
        "lognormal": rng.lognormal(8, 1.5, n),
        "zipf": rng.zipf(1.5, n).astype(np.float64),
        "one far outlier": np.r_[rng.normal(100, 5, n - 1), 1e9],
        "few values": rng.integers(0, 40, n).astype(np.float64),
    }[name]
    binned = []
    real = distribution._linear_binned
    monkeypatch.setattr(distribution, "_linear_binned", lambda *a: binned.append(1) or real(*a))
    support, density = distribution._kde(values)
    assert binned
    exact = exact_density(values, support)
    assert np.abs(density - exact).max() <= 0.00125 * exact.max()

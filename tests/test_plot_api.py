"""Every plot function, seaborn-style: ``**kwargs`` reach the main artist; one ``ax=None`` rule;
and the scale rules that keep figures honest (load axes from 0, log chosen when skewed,
zero a colour of its own, whole-number ticks for counts)."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import ListedColormap, to_rgba

from actorprof.analyze.timeline import send_timeline
from actorprof.plot import (
    plot_bytes_bars,
    plot_heatmap,
    plot_papi_bars,
    plot_pe_loads,
    plot_rate,
    plot_time_stacked,
    plot_timeline_heat,
    plot_violin,
)
from actorprof.plot.heatmap import LOG_SKEW, ZERO_COLOR, skew


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    plt.close("all")


def _matrix(values: list[list[float]] | np.ndarray) -> pd.DataFrame:
    data = np.asarray(values, dtype=np.float64)
    return pd.DataFrame(
        data,
        index=pd.Index(range(data.shape[0]), name="src_pe"),
        columns=pd.Index(range(data.shape[1]), name="dst_pe"),
    )


def _loads() -> pd.DataFrame:
    return pd.DataFrame(
        {"sent": [20_000, 20_100, 20_200, 19_900], "received": [20_000, 20_050, 20_100, 20_050]},
        index=pd.Index(range(4), name="pe"),
    )


def _timeline() -> object:
    frame = pd.DataFrame(
        {
            "src_pe": np.array([0, 0, 1, 2, 3, 3], dtype=np.int64),
            "time_s": np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5]),
        }
    )
    return send_timeline(frame, num_pes=4, base_s=0.1)


# ------------------------------------------------------------------ **kwargs reach the artist


def test_heatmap_kwargs_reach_the_matrix_image() -> None:
    ax = plot_heatmap(_matrix([[1, 2], [3, 4]]), alpha=0.5)
    assert ax.images[0].get_alpha() == 0.5
    assert ax.images[1].get_alpha() is None  # totals keep their own look


def test_heatmap_takes_a_colormap_object() -> None:
    cmap = ListedColormap(["#000000", "#ff0000"], name="two")
    ax = plot_heatmap(_matrix([[1, 2], [3, 4]]), cmap=cmap, log=False)
    assert ax.images[0].get_cmap().name == "two"


def test_violin_kwargs_reach_the_violins() -> None:
    ax = plot_violin(_loads(), alpha=0.5)
    assert ax.collections and ax.collections[0].get_alpha() == 0.5


def test_pe_loads_kwargs_reach_the_steps() -> None:
    ax = plot_pe_loads(_loads(), alpha=0.5)
    assert [p.get_alpha() for p in ax.patches] == [0.5, 0.5]


def test_papi_bars_kwargs_reach_the_bars() -> None:
    seg = pd.DataFrame({"MAIN": [100, 300], "PROC": [20, 10]}, index=pd.Index([0, 1], name="pe"))
    ax = plot_papi_bars(seg, alpha=0.5)
    assert {b.get_alpha() for c in ax.containers for b in c} == {0.5}


def test_time_stacked_kwargs_reach_the_bars() -> None:
    t = pd.DataFrame(
        {
            "pe": [0, 1],
            "t_main_cycles": [70, 10],
            "t_comm_cycles": [20, 80],
            "t_proc_cycles": [1, 1],
        }
    )
    ax = plot_time_stacked(t, hatch="//")
    assert {b.get_hatch() for c in ax.containers for b in c} == {"//"}


def test_bytes_bars_kwargs_reach_the_bars() -> None:
    t = pd.DataFrame(
        {"payload_bytes_sent": [160, 96], "wire_bytes_sent": [208, 128]},
        index=pd.Index([0, 1], name="pe"),
    )
    ax = plot_bytes_bars(t, alpha=0.5)
    assert {b.get_alpha() for c in ax.containers for b in c} == {0.5}


def test_rate_kwargs_reach_the_line() -> None:
    ax = plot_rate(_timeline(), linewidth=3.5)  # type: ignore[arg-type]
    assert ax.patches[0].get_linewidth() == 3.5


def test_timeline_heat_kwargs_reach_the_image() -> None:
    ax = plot_timeline_heat(_timeline(), alpha=0.5)  # type: ignore[arg-type]
    assert ax.images[0].get_alpha() == 0.5


# ------------------------------------------------------------------ one ax=None rule


@pytest.mark.parametrize("draw", [plot_rate, plot_timeline_heat])
def test_timeline_plots_draw_on_the_current_axes(draw: object) -> None:
    _fig, ax = plt.subplots()
    assert draw(_timeline()) is ax  # type: ignore[operator]
    assert len(plt.get_fignums()) == 1


def test_timeline_heat_thins_pe_labels() -> None:
    frame = pd.DataFrame({"src_pe": np.arange(32, dtype=np.int64), "time_s": np.linspace(0, 1, 32)})
    _fig, ax = plt.subplots(figsize=(8, 3))
    plot_timeline_heat(send_timeline(frame, num_pes=32, base_s=0.1), ax=ax)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert 1 < len(labels) < 32 and labels[0] == "0"
    assert int(labels[1]) in (2, 5, 10)


# ------------------------------------------------------------------ violins from 0


def test_violin_axis_starts_at_zero_with_integer_ticks() -> None:
    ax = plot_violin(_loads())
    assert ax.get_ylim()[0] == 0.0
    ticks = ax.get_yticks()
    assert np.all(ticks == np.round(ticks))


def test_violin_of_small_counts_has_no_fractional_ticks() -> None:
    loads = pd.DataFrame({"sent": [1, 2, 3, 2]}, index=pd.Index(range(4), name="pe"))
    ax = plot_violin(loads)
    ax.figure.canvas.draw()
    ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)
    assert ax.get_ylim()[0] == 0.0


# ------------------------------------------------------------------ heatmap colour rules


SKEWED = [[0, 1, 2, 1], [1, 2, 1, 2], [2, 1, 0, 1], [5000, 4000, 3000, 0]]
FLAT = [[0, 10, 12, 11], [9, 10, 11, 12], [10, 12, 0, 9], [11, 10, 12, 10]]


def _colorbar_labels(ax: object) -> list[str]:
    return [child.get_ylabel() for child in ax.child_axes]  # type: ignore[attr-defined]


def test_log_scale_chosen_on_a_skewed_matrix() -> None:
    ratio = skew(np.asarray(SKEWED))
    assert ratio is not None and ratio > LOG_SKEW
    ax = plot_heatmap(_matrix(SKEWED))
    assert ax.images[0].norm.__class__.__name__.endswith("LogNorm")
    assert _colorbar_labels(ax)[0] == f"messages (log scale, chosen: max/median = {ratio:.0f}x)"


def test_linear_scale_kept_on_a_flat_matrix() -> None:
    ratio = skew(np.asarray(FLAT))
    assert ratio is not None and ratio < LOG_SKEW
    ax = plot_heatmap(_matrix(FLAT))
    assert not ax.images[0].norm.__class__.__name__.endswith("LogNorm")
    assert _colorbar_labels(ax)[0] == "messages"


def test_log_forced_both_ways() -> None:
    assert (
        plot_heatmap(_matrix(FLAT), log=True).images[0].norm.__class__.__name__.endswith("LogNorm")
    )
    plt.close("all")
    ax = plot_heatmap(_matrix(SKEWED), log=False)
    assert not ax.images[0].norm.__class__.__name__.endswith("LogNorm")
    plt.close("all")
    ax = plot_heatmap(_matrix(FLAT), log=True)
    assert _colorbar_labels(ax)[0] == "messages (log scale)"


def test_zero_cells_have_their_own_colour_on_a_log_scale() -> None:
    ax = plot_heatmap(_matrix(SKEWED))
    image = ax.images[0]
    rgba = image.to_rgba(np.asarray(SKEWED, dtype=np.float64))
    zero, lowest = rgba[0, 0], rgba[0, 1]  # a 0 cell and a 1 (the smallest count)
    assert tuple(zero) == pytest.approx(to_rgba(ZERO_COLOR))
    assert not np.allclose(zero, lowest)
    assert np.allclose(lowest, image.get_cmap()(0.0))


def test_nan_cells_stay_blank_on_a_log_scale() -> None:
    data = np.asarray(SKEWED, dtype=np.float64)
    data[1, 1] = np.nan
    image = plot_heatmap(_matrix(data), log=True).images[0]
    assert image.to_rgba(data)[1, 1][3] == 0.0


def test_colour_bar_ticks_are_whole_numbers_for_counts() -> None:
    fig, ax = plt.subplots(layout="constrained")
    plot_heatmap(_matrix([[0, 1], [3, 2]]), ax=ax, log=False)
    fig.canvas.draw()
    for bar in ax.child_axes:
        low, high = bar.get_ylim()
        ticks = [t for t in bar.get_yticks() if low <= t <= high]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks

"""Bars drawn without ``Axes.bar``'s cost per bar draw what it draws.

``plot_time_stacked``, ``plot_papi_bars`` and ``plot_bytes_bars`` add their
rectangles themselves (:func:`actorprof.plot._style.bars`) unless a keyword
for ``Axes.bar`` is given; a keyword that changes nothing (``alpha=None``)
takes ``Axes.bar``'s way, so the two ways are compared on the same data:
the same PNG, bytes for bytes, the same containers, data limits and legend.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from actorprof.plot.aggregation import plot_bytes_bars
from actorprof.plot.bars import BARS_MAX, plot_papi_bars, plot_time_stacked
from actorprof.write import save_png

TIMES = ("t_main_cycles", "t_comm_cycles", "t_proc_cycles")


def _bars(container: Any) -> dict[str, list[Any]]:
    """Every property of a container's rectangles that shows, by name."""
    getters = {
        "x": "get_x",
        "y": "get_y",
        "width": "get_width",
        "height": "get_height",
        "facecolor": "get_facecolor",
        "edgecolor": "get_edgecolor",
        "linewidth": "get_linewidth",
        "label": "get_label",
        "zorder": "get_zorder",
    }
    found = {key: [getattr(bar, name)() for bar in container] for key, name in getters.items()}
    found["sticky_y"] = [bar.sticky_edges.y for bar in container]
    assert set(found["label"]) <= {"_nolegend_"}
    return found


def _drawn(plot: Any, data: Any, **options: Any) -> tuple[bytes, Axes]:
    fig = Figure(figsize=(8, 3), layout="constrained")
    ax = fig.add_subplot()
    plot(data, ax=ax, **options)
    png = io.BytesIO()
    save_png(fig, png, dpi=50)
    return png.getvalue(), ax


def _same(plot: Any, data: Any, **options: Any) -> Axes:
    fast, ax = _drawn(plot, data, **options)
    ref, ref_ax = _drawn(plot, data, alpha=None, **options)  # Axes.bar
    assert fast == ref
    np.testing.assert_allclose(ax.dataLim.get_points(), ref_ax.dataLim.get_points(), rtol=1e-12)
    assert ax.get_xlim() == ref_ax.get_xlim() and ax.get_ylim() == ref_ax.get_ylim()
    assert [c.get_label() for c in ax.containers] == [c.get_label() for c in ref_ax.containers]
    for ours, theirs in zip(ax.containers, ref_ax.containers, strict=True):
        a, b = _bars(ours), _bars(theirs)
        assert a.keys() == b.keys()
        for key in a:
            if key in ("x", "y", "width", "height"):
                # Axes.bar adds and takes away its first bar's place to the widths
                # and heights given ((x[0] + w) - x[0]): the same but for the last bits
                np.testing.assert_allclose(a[key], b[key], rtol=1e-12, atol=1e-12)
            else:
                assert a[key] == b[key], key
        assert isinstance(ours, BarContainer) and isinstance(theirs, BarContainer)
        ours_values, their_values = (np.asarray(c.datavalues, np.float64) for c in (ours, theirs))
        np.testing.assert_allclose(ours_values, their_values, rtol=1e-12, atol=0)
    assert len(ax.patches) == len(ref_ax.patches)
    legend, ref_legend = ax.get_legend(), ref_ax.get_legend()
    assert (legend is None) == (ref_legend is None)
    if legend is not None and ref_legend is not None:
        assert [t.get_text() for t in legend.get_texts()] == [
            t.get_text() for t in ref_legend.get_texts()
        ]
    return ax


TIME_CASES = [
    (n, options)
    for n in (1, 17, 64)
    for options in ({}, {"relative": True}, {"sort": True}, {"cpu_ghz": 2.0})
] + [(BARS_MAX, {"sort": True})]


@pytest.mark.parametrize(("n", "options"), TIME_CASES, ids=str)
def test_time_bars_are_those_of_axes_bar(n: int, options: dict[str, Any]) -> None:
    rng = np.random.default_rng(n)
    times = {c: rng.uniform(0, 1e6, n) for c in TIMES}
    times["t_proc_cycles"][0] = np.nan  # unknown: drawn as 0
    ax = _same(plot_time_stacked, times, **options)
    assert [c.get_label() for c in ax.containers] == ["MAIN", "COMM", "PROC"]
    assert all(len(c) == n for c in ax.containers)


@pytest.mark.parametrize(
    ("n", "zeros", "sort"),
    [(5, False, False), (5, False, True), (5, True, False), (BARS_MAX, False, False)],
)
def test_papi_bars_are_those_of_axes_bar(n: int, zeros: bool, sort: bool) -> None:
    rng = np.random.default_rng(n)
    segments = {"MAIN": rng.uniform(0, 1e5, n), "PROC": rng.uniform(0, 1e5, n)}
    segments["MAIN"][-1] = np.nan
    if zeros:
        segments = {name: np.zeros(n) for name in segments}
    _same(plot_papi_bars, segments, sort=sort)


@pytest.mark.parametrize("n", [3, 17, BARS_MAX])
def test_bytes_bars_are_those_of_axes_bar(n: int) -> None:
    import pandas as pd

    rng = np.random.default_rng(n)
    table = pd.DataFrame(
        {"payload_bytes_sent": rng.uniform(0, 1e6, n), "wire_bytes_sent": rng.uniform(0, 2e6, n)}
    )
    table.iloc[0, 0] = 0.0
    ax = _same(plot_bytes_bars, table)
    assert [c.get_label() for c in ax.containers] == ["logical payload", "physical (on the wire)"]


def test_bars_keep_their_data_exact() -> None:
    """The heights are the values given, as the docstrings' examples show."""
    ax = Figure().add_subplot()
    plot_papi_bars({"MAIN": [100.0, 300.0], "PROC": [20.0, 10.0]}, ax=ax)
    assert [b.get_height() for b in ax.containers[0]] == [100.0, 300.0]
    assert [(b.get_y(), b.get_height()) for b in ax.containers[1]] == [(100.0, 20.0), (300.0, 10.0)]
    x0, y0, x1, y1 = ax.dataLim.extents
    assert (x0, y0, x1, y1) == (-0.4, 0.0, 1.4, 310.0)


def test_the_two_ways_are_two_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a keyword Axes.bar is not called; with one it is (what the
    comparisons above rest on)."""
    calls: list[int] = []
    real = Axes.bar

    def counted(self: Axes, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Axes, "bar", counted)
    times = {c: np.arange(1.0, 4.0) for c in TIMES}
    plot_time_stacked(times, ax=Figure().add_subplot())
    assert calls == []
    plot_time_stacked(times, ax=Figure().add_subplot(), alpha=None)
    assert calls == [1, 1, 1]

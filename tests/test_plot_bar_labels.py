"""Totals written above bars never overlap: exact when they fit, compact, or upright."""

from __future__ import annotations

import pandas as pd
import pytest
from matplotlib.figure import Figure

from actorprof.plot.bars import plot_time_stacked


def times(n: int, scale: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pe": range(n),
            "t_main_cycles": [scale * 0.1 + i for i in range(n)],
            "t_comm_cycles": [scale * 0.8] * n,
            "t_proc_cycles": [scale * 0.1] * n,
        }
    )


def label_texts(n: int, scale: float, width: float) -> list[tuple[str, float]]:
    ax = Figure(figsize=(width, 4)).add_subplot()
    plot_time_stacked(times(n, scale), ax=ax)
    return [(t.get_text(), t.get_rotation()) for t in ax.texts]


def test_exact_labels_when_they_fit() -> None:
    got = label_texts(4, 1000, 8)
    assert [t for t, _ in got] == ["1,000", "1,001", "1,002", "1,003"]
    assert {r for _, r in got} == {0}


@pytest.mark.parametrize(("n", "width"), [(16, 7.0), (16, 3.0), (8, 3.0)])
def test_labels_fit_their_bars(n: int, width: float) -> None:
    got = label_texts(n, 395_879_000, width)
    assert len(got) == n
    per_bar_pt = 72 * width * 0.775 / n  # default subplot width fraction
    for text, rotation in got:
        if rotation == 0:
            assert len(text) * 0.62 * 8.33 <= per_bar_pt
    assert got[0][0] == "396M"


def test_no_labels_on_wide_runs() -> None:
    assert label_texts(64, 1e6, 7.0) == []

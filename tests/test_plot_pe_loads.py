"""plot_pe_loads: one step line per column against PE id, means dashed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from actorprof import plot_pe_loads


def test_steps_equal_the_data() -> None:
    loads = pd.DataFrame(
        {"sent": [5, 1, 0, 2], "received": [0, 3, 3, 2]}, index=pd.Index([0, 1, 2, 3], name="pe")
    )
    before = loads.copy()
    ax = Figure().add_subplot()
    assert plot_pe_loads(loads, ax=ax, title="t") is ax
    stairs = ax.patches
    assert [s.get_label() for s in stairs] == ["sent", "received"]
    np.testing.assert_array_equal(stairs[0].get_data().values, [5, 1, 0, 2])
    np.testing.assert_array_equal(stairs[1].get_data().edges, [-0.5, 0.5, 1.5, 2.5, 3.5])
    means = [line.get_ydata()[0] for line in ax.lines]
    assert means == pytest.approx([2.0, 2.0])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2", "3"]
    pd.testing.assert_frame_equal(loads, before)


def test_thousands_of_pes_thin_ticks() -> None:
    n = 4096
    loads = pd.DataFrame({"sent": np.arange(n), "received": np.arange(n)[::-1]})
    ax = Figure().add_subplot()
    plot_pe_loads(loads, ax=ax)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert len(ax.patches) == 2 and len(labels) <= 33 and labels[:2] == ["0", "128"]


def test_empty_is_an_error() -> None:
    with pytest.raises(ValueError):
        plot_pe_loads(pd.DataFrame())

"""The plots' copies of seaborn's colours are seaborn's colours.

The plot modules do not import seaborn (it imports scipy.stats, over a
second at start-up); these checks keep their constants equal to seaborn's.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pytest
import seaborn as sns

from actorprof.plot import _palettes


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 13])
def test_deep_is_seaborns(n: int) -> None:
    assert _palettes.deep(n) == [tuple(c) for c in sns.color_palette("deep", n)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 12, 40, 300])
def test_crest_is_seaborns(n: int) -> None:
    np.testing.assert_array_equal(
        np.array(_palettes.crest(n)), np.array(sns.color_palette("crest", n))
    )


@pytest.mark.parametrize("n", [1, 2, 11])
def test_color_cycle_is_seaborns_default_palette(n: int) -> None:
    assert _palettes.color_cycle(n) == [tuple(c) for c in sns.color_palette(n_colors=n)]
    with mpl.rc_context({"axes.prop_cycle": mpl.cycler(color=["red", "#00ff00", "0.5"])}):
        assert _palettes.color_cycle(n) == [tuple(c) for c in sns.color_palette(n_colors=n)]


@pytest.mark.parametrize("proportion", [0.0, 0.75, 1.0])
def test_desaturate_is_seaborns(proportion: float) -> None:
    for color in _palettes.deep(10):
        expected = sns.desaturate(color, proportion)
        np.testing.assert_allclose(_palettes.desaturate(color, proportion), expected, atol=1e-15)

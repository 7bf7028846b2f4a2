"""write.save_png: the pixels savefig draws, one draw, smaller encoding; the figure untouched."""

from __future__ import annotations

import io

import numpy as np
from matplotlib.figure import Figure
from PIL import Image

from actorprof.write import save_png


def _figure() -> Figure:
    fig = Figure(figsize=(4, 3), layout="constrained")
    ax = fig.subplots()
    ax.imshow(np.arange(64).reshape(8, 8))
    for k in range(8):
        ax.text(k, k, str(k), ha="center", va="center")
    ax.set_title("title")
    fig.suptitle("run a/b")
    return fig


def _pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGBA"))


def test_same_pixels_as_savefig_and_the_figure_is_left_as_it_was() -> None:
    fig = _figure()
    canvas, dpi = fig.canvas, fig.dpi
    ours, theirs = io.BytesIO(), io.BytesIO()
    save_png(fig, ours, dpi=120)
    assert fig.canvas is canvas and fig.dpi == dpi
    _figure().savefig(theirs, format="png", dpi=120)
    np.testing.assert_array_equal(_pixels(ours.getvalue()), _pixels(theirs.getvalue()))
    image = Image.open(io.BytesIO(ours.getvalue()))
    assert image.mode == "RGB"  # opaque: no alpha channel
    assert image.info["Software"].startswith("Matplotlib version")
    assert round(image.info["dpi"][0]) == 120


def test_a_transparent_figure_keeps_its_alpha() -> None:
    fig = _figure()
    fig.patch.set_alpha(0.0)
    out = io.BytesIO()
    save_png(fig, out, dpi=50)
    image = Image.open(io.BytesIO(out.getvalue()))
    assert image.mode == "RGBA"
    assert np.asarray(image)[..., 3].min() == 0

"""The logical kind's figure builders (kinds/logical_figures.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from actorprof.kinds import logical_view, write_logical
from actorprof.read import ReadReport

from ._figure_builders import Builders, placed_by_matplotlib, png

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def builders(run: str, **options: Any) -> dict[str, Any]:
    sink = Builders()
    view = logical_view(EXAMPLES / run / "logical", report=ReadReport(kind="logical"))
    kwargs: dict[str, Any] = {"metric": "count", "level": "pe", "log_scale": None, "top": 3}
    write_logical(view, sink, **{**kwargs, **options})  # type: ignore[arg-type]
    return sink.builders


@pytest.mark.parametrize(
    ("run", "options"),
    [("histo_4pe", {}), ("ig_8pe_2nodes", {"log_scale": True}), ("histo_4pe", {"level": "node"})],
)
def test_titles_given_their_place_are_where_matplotlib_puts_them(
    run: str, options: dict[str, Any]
) -> None:
    for name, build in builders(run, **options).items():
        assert png(build()) == png(placed_by_matplotlib(build())), name


def test_a_title_matplotlib_would_move_is_told_apart() -> None:
    """The comparison above sees a title that matplotlib would move: ticks
    above the heatmap push its title up."""
    build = builders("histo_4pe")["heatmap"]
    fixed, placed = build(), placed_by_matplotlib(build())
    for fig in (fixed, placed):
        fig.axes[0].xaxis.tick_top()
    assert png(fixed) != png(placed)

"""The PAPI kind's figure builder (kinds/papi_figures.py): its bars drawn from
columns of arrays, the same pixels as from frames, and without pandas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from actorprof.kinds import papi_view, write_papi
from actorprof.kinds.papi_figures import bars_panel
from actorprof.plot import plot_papi_bars
from actorprof.read import ReadReport
from actorprof.write import new_figure

from ._figure_builders import Builders, draw_apart, png

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def segments_of(n: int, *, unknown: int = 0, mailboxes: int = 1, seed: int = 3) -> pd.DataFrame:
    """Stacks of ``n`` PEs (ids from 100), ``unknown`` of them without MAIN."""
    rng = np.random.default_rng(seed)
    columns: dict[str, Any] = {"MAIN": rng.integers(0, 10_000, n).astype(np.float64)}
    columns["MAIN"][:unknown] = np.nan
    for k in range(mailboxes):
        columns[f"mailbox {k}" if mailboxes > 1 else "PROC"] = rng.integers(0, 5_000, n)
    return pd.DataFrame(columns, index=pd.Index(np.arange(100, 100 + n), name="pe"))


@pytest.mark.parametrize(
    ("n", "unknown", "mailboxes"),
    [(4, 0, 1), (4, 1, 2), (40, 3, 1), (300, 0, 3), (5000, 7, 2)],  # bars, steps, blocks
)
@pytest.mark.parametrize("sort", [False, True])
def test_the_columns_draw_what_the_frame_draws(
    n: int, unknown: int, mailboxes: int, sort: bool
) -> None:
    segments = segments_of(n, unknown=unknown, mailboxes=mailboxes)
    panel = bars_panel(segments, "PAPI_TOT_INS", "t")
    by_frame, by_columns = new_figure(7.0, 4.4), new_figure(7.0, 4.4)
    plot_papi_bars(segments, ax=by_frame.axes[0], value_label="PAPI_TOT_INS", sort=sort, title="t")
    plot_papi_bars(
        panel.segments,
        ids=panel.pes,
        ax=by_columns.axes[0],
        value_label=panel.value_label,
        sort=sort,
        title=panel.title,
    )
    assert png(by_frame) == png(by_columns)


def test_the_columns_form_is_checked() -> None:
    with pytest.raises(ValueError, match="of one length"):
        plot_papi_bars({"MAIN": [1, 2], "PROC": [1]})
    with pytest.raises(ValueError, match="3 ids for segments of 2 values"):
        plot_papi_bars({"MAIN": [1, 2]}, ids=[0, 1, 2])
    with pytest.raises(ValueError, match="a DataFrame's are its index"):
        plot_papi_bars(segments_of(2), ids=[0, 1])
    ax = plot_papi_bars({"MAIN": [100, 300], "PROC": [20, 10]}, ids=[7, 9])
    assert [b.get_height() for b in ax.containers[0]] == [100.0, 300.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["7", "9"]


def test_the_papi_figure_is_drawn_without_pandas(tmp_path: Path) -> None:
    """A figure server unpickles the PAPI figure's builder and draws it with
    numpy and matplotlib alone."""
    sink = Builders()
    view = papi_view(EXAMPLES / "histo_4pe" / "papi", report=ReadReport(kind="papi"))
    write_papi(view, sink, by_mailbox=True, sort="total")
    assert sorted(sink.builders) == ["bars"]
    draw_apart(sink.builders, "papi", tmp_path)
    assert (tmp_path / "papi_bars.png").stat().st_size > 10_000

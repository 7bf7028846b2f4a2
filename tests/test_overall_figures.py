"""The overall kind's figure builder (kinds/overall_figures.py): its stacks
drawn from columns of arrays, the same pixels as from frames, and without pandas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from actorprof.kinds import overall_view, write_overall
from actorprof.kinds.overall_figures import stacked_row
from actorprof.plot import plot_time_stacked
from actorprof.read import ReadReport
from actorprof.write import new_figure

from ._figure_builders import Builders, draw_apart, png

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = ROOT / "examples"


def times_of(n: int, *, unknown: int = 0, pe_column: bool = True) -> pd.DataFrame:
    """Times of ``n`` PEs (ids from 50, nullable counts), ``unknown`` T_COMM left empty."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            name: pd.array(rng.integers(0, 10**9, n), dtype="Int64")
            for name in ("t_main_cycles", "t_comm_cycles", "t_proc_cycles")
        }
    )
    frame.loc[: unknown - 1, "t_comm_cycles"] = pd.NA
    frame.loc[n // 2, ["t_main_cycles", "t_comm_cycles", "t_proc_cycles"]] = 0  # T_TOTAL 0
    ids = np.arange(50, 50 + n)
    if pe_column:
        return frame.assign(pe=ids)
    return frame.set_axis(pd.Index(ids, name="pe"))


@pytest.mark.parametrize(
    ("n", "unknown", "pe_column"), [(4, 0, True), (6, 2, False), (300, 5, True), (5000, 9, True)]
)
@pytest.mark.parametrize(
    "options",
    [{}, {"relative": True}, {"sort": True}, {"relative": True, "sort": True}, {"cpu_ghz": 2.5}],
)
def test_the_columns_draw_what_the_frame_draws(
    n: int, unknown: int, pe_column: bool, options: dict[str, Any]
) -> None:
    times = times_of(n, unknown=unknown, pe_column=pe_column)
    row = stacked_row(times, "t", "f")
    by_frame, by_columns = new_figure(7.0, 4.2), new_figure(7.0, 4.2)
    plot_time_stacked(times, ax=by_frame.axes[0], title="t", **options)
    plot_time_stacked(row.times, ids=row.pes, ax=by_columns.axes[0], title="t", **options)
    assert png(by_frame) == png(by_columns)


def test_the_columns_form_is_checked() -> None:
    parts = {"t_main_cycles": [1, 2], "t_comm_cycles": [1, 2], "t_proc_cycles": [1]}
    with pytest.raises(ValueError, match="of one length"):
        plot_time_stacked(parts)
    with pytest.raises(ValueError, match="lacks column"):
        plot_time_stacked({"t_main_cycles": [1]})
    parts["t_proc_cycles"] = [1, np.nan]
    with pytest.raises(ValueError, match="3 ids for time columns of 2 values"):
        plot_time_stacked(parts, ids=[0, 1, 2])
    with pytest.raises(ValueError, match="pe column or index"):
        plot_time_stacked(times_of(2), ids=[0, 1])
    ax = plot_time_stacked(parts, ids=[4, 8])
    assert [b.get_height() for b in ax.containers[2]] == [1.0, 0.0]  # unknown: drawn as 0
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "8"]


@pytest.mark.parametrize("path", [EXAMPLES / "histo_4pe" / "overall", DATA / "overall_mixed"])
def test_the_overall_figure_is_drawn_without_pandas(path: Path, tmp_path: Path) -> None:
    """A figure server unpickles the overall figure's builder and draws it with
    numpy and matplotlib alone."""
    sink = Builders()
    view = overall_view(path, report=ReadReport(kind="overall"))
    write_overall(view, sink, sort="total")
    assert sorted(sink.builders) == ["stacked"]
    draw_apart(sink.builders, "overall", tmp_path)
    assert (tmp_path / "overall_stacked.png").stat().st_size > 10_000

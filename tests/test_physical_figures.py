"""The physical kind's figure builders (kinds/physical_figures.py): drawn from
arrays, the same pixels as from the view's frames, and without pandas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from actorprof.kinds import physical_view, write_physical
from actorprof.kinds.logical_figures import heatmap_panel, loads_columns
from actorprof.plot import plot_heatmap, plot_violin
from actorprof.read import ReadReport
from actorprof.write import new_figure

from ._figure_builders import Builders, draw_apart, png, pooled_physical

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def pooled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A physical trace of 1,100 PEs: beyond DENSE_MAX_PES, its heatmap pools blocks."""
    return pooled_physical(tmp_path_factory.mktemp("pooled"))


def view_of(run: str, pooled: Path) -> Any:
    path = pooled if run == "pooled" else EXAMPLES / run / "physical"
    return physical_view(path, report=ReadReport(kind="physical"))


@pytest.mark.parametrize(
    ("run", "metric"),
    [
        ("ig_8pe_2nodes", "count"),
        ("histo_16pe_4nodes", "bytes"),
        ("pooled", "count"),
        ("pooled", "bytes"),
    ],
)
def test_the_arrays_draw_what_the_frames_draw(run: str, metric: str, pooled: Path) -> None:
    view = view_of(run, pooled)
    types = view.types_shown()
    for send_type in types:
        for k, (matrix, caption) in enumerate(view.heatmap_panels(send_type, metric)):  # type: ignore[arg-type]
            options: dict[str, Any] = {"totals": k == 0, "log": None, "title": caption}
            by_frame, by_arrays = new_figure(6.0, 5.0), new_figure(6.0, 5.0)
            plot_heatmap(matrix, ax=by_frame.axes[0], **options)
            panel = heatmap_panel(matrix, caption, totals=k == 0)
            plot_heatmap(
                panel.values,
                row_ids=panel.row_ids,
                column_ids=panel.column_ids,
                source_label=panel.source_label,
                destination_label=panel.destination_label,
                ax=by_arrays.axes[0],
                **options,
            )
            assert png(by_frame) == png(by_arrays), (send_type, caption)
    loads = view.loads(types, metric)  # type: ignore[arg-type]
    columns = loads_columns(loads)
    by_frame, by_arrays = new_figure(7.5, 5.5), new_figure(7.5, 5.5)
    plot_violin(loads, ax=by_frame.axes[0], unit_label="PE")
    plot_violin(columns.columns, ids=columns.ids, ax=by_arrays.axes[0], unit_label="PE")
    assert png(by_frame) == png(by_arrays)


def test_the_physical_figures_are_drawn_without_pandas(pooled: Path, tmp_path: Path) -> None:
    """A figure server unpickles the physical figures' builders and draws them
    with numpy and matplotlib alone: a small and a pooled run's, in one new
    interpreter (which must import pandas for neither)."""
    builders: dict[str, Any] = {}
    for run in ("ig_8pe_2nodes", "pooled"):
        sink = Builders()
        view = view_of(run, pooled)
        write_physical(view, sink, types=view.types_shown(), metric="count", log_scale=None, top=3)  # type: ignore[arg-type]
        assert sorted(sink.builders) == ["heatmap", "violin"]
        builders.update({f"{run}_{name}": build for name, build in sink.builders.items()})
    draw_apart(builders, "physical", tmp_path)
    for name in builders:
        assert (tmp_path / f"physical_{name}.png").stat().st_size > 10_000

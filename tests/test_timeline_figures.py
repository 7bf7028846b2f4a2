"""The timeline kind's figure builder (kinds/timeline_figures.py): the rate and
the heat strip drawn from arrays, the same pixels as from the Timeline, and
without pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from actorprof.analyze.timeline import Timeline, send_timeline
from actorprof.kinds import timeline_view, write_timeline_figure
from actorprof.kinds.timeline_figures import rate_figure, timeline_bins
from actorprof.plot import plot_rate, plot_timeline_heat
from actorprof.write import new_figure

from ._figure_builders import Builders, draw_apart, png

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def timeline_of(pes: int, messages: int, *, seed: int = 3, base_s: float = 1e-3) -> Timeline:
    """Send times of ``messages`` messages from ``pes`` PEs, skewed over time and PEs."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "src_pe": (rng.pareto(1.5, messages) * 7).astype(np.int64) % pes,
            "time_s": np.round(rng.gamma(2.0, 0.05, messages), 6),
        }
    )
    return send_timeline(frame, num_pes=pes, base_s=base_s)


def empty_timeline(pes: int) -> Timeline:
    frame = pd.DataFrame({"src_pe": np.array([], np.int64), "time_s": np.array([], float)})
    return send_timeline(frame, num_pes=pes)


CASES = {
    "4 PEs": lambda: timeline_of(4, 300),
    "700 PEs, blocks of PEs": lambda: timeline_of(700, 20_000),
    "one bin": lambda: timeline_of(3, 5, base_s=10.0),
    "empty": lambda: empty_timeline(5),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("log", [False, True])
def test_the_arrays_draw_what_the_timeline_draws(case: str, log: bool) -> None:
    timeline = CASES[case]()
    bins = timeline_bins(timeline)
    assert isinstance(bins.counts, np.ndarray) and bins.counts.shape == timeline.counts.shape
    figures = []
    for data in (timeline, bins):
        fig = new_figure(9.0, 6.0, nrows=2)
        top, bottom = fig.axes
        plot_rate(data, ax=top, spans=[("a", 0.0, 0.05)], title="t")
        plot_timeline_heat(data, ax=bottom, log=log, title="h")
        figures.append(png(fig))
    assert figures[0] == figures[1]


def test_the_rate_is_the_sum_of_the_pes_per_second() -> None:
    counts = np.array([[1, 2], [0, 0], [2**31 - 1, 2**31 - 1]], dtype=np.int32)  # sum > int32
    frame = pd.DataFrame(counts, index=pd.Index([0.0, 0.5, 1.0], name="time_s"))
    timeline = Timeline(frame, 0.5, 0.0, pd.Series([0, 0]))
    ax = plot_rate(timeline_bins(timeline))
    heights = ax.patches[0].get_data().values
    assert heights.tolist() == [6.0, 0.0, (2**32 - 2) / 0.5]
    assert heights.tolist() == timeline.rate.tolist()


@pytest.mark.parametrize("log_scale", [False, True])
def test_the_timeline_figure_is_drawn_without_pandas(log_scale: bool, tmp_path: Path) -> None:
    """A figure server unpickles the timeline figure's builder and draws it
    with numpy and matplotlib alone."""
    sink = Builders()
    view = timeline_view(EXAMPLES / "ig_8pe_2nodes" / "logical")
    write_timeline_figure(view, sink, bins=50, log_scale=log_scale)
    assert sorted(sink.builders) == ["rate"]
    assert sink.builders["rate"].func is rate_figure
    draw_apart(sink.builders, "timeline", tmp_path)
    assert (tmp_path / "timeline_rate.png").stat().st_size > 10_000

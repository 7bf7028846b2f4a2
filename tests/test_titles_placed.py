"""Every kind's figures with their titles given their place
(:func:`actorprof.write.titles_at_the_top`) are the figures matplotlib draws
placing them itself, pixel for pixel: small and pooled runs, log and linear
scales, counts in the billions (an offset text above a y axis would move a
title), bars and steps, fractions and seconds."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from actorprof.kinds import (
    aggregation_view,
    overall_view,
    papi_view,
    physical_view,
    timeline_view,
    write_aggregation,
    write_overall,
    write_papi,
    write_physical,
    write_timeline_figure,
)
from actorprof.kinds.overall_figures import stacked_figure, stacked_row
from actorprof.kinds.papi_figures import bars_figure, bars_panel
from actorprof.read import ReadReport

from ._figure_builders import Builders, placed_by_matplotlib, png, pooled_physical

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DATA = Path(__file__).resolve().parent / "data"


def assert_placed_alike(builders: dict[str, Any]) -> None:
    assert builders
    for name, build in builders.items():
        fig = build()
        titled = [ax for ax in fig.axes if ax.get_title()]
        assert titled and all(ax._autotitlepos is False for ax in titled), name
        assert png(fig) == png(placed_by_matplotlib(build())), name


@pytest.fixture(scope="module")
def pooled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A physical trace of 1,100 PEs: its heatmap pools blocks of PEs."""
    return pooled_physical(tmp_path_factory.mktemp("pooled"))


#: Counts on the colour scale the figure chooses, bytes on a linear one; the pooled run both ways.
PHYSICAL_CASES = [
    ("ig_8pe_2nodes", "count", None),
    ("histo_16pe_4nodes", "bytes", False),
    ("pooled", "count", None),
    ("pooled", "bytes", False),
]


@pytest.mark.parametrize(("run", "metric", "log_scale"), PHYSICAL_CASES)
def test_physical(run: str, metric: str, log_scale: bool | None, pooled: Path) -> None:
    path = pooled if run == "pooled" else EXAMPLES / run / "physical"
    view = physical_view(path, report=ReadReport(kind="physical"))
    sink = Builders()
    write_physical(view, sink, types=view.types_shown(), metric=metric, log_scale=log_scale, top=3)  # type: ignore[arg-type]
    assert_placed_alike(sink.builders)


@pytest.mark.parametrize("path", [EXAMPLES / "histo_4pe" / "overall", DATA / "overall_mixed"])
def test_overall(path: Path) -> None:
    sink = Builders()
    write_overall(overall_view(path, report=ReadReport(kind="overall")), sink, sort="total")
    assert_placed_alike(sink.builders)


@pytest.mark.parametrize("n", [4, 300])
@pytest.mark.parametrize("cpu_ghz", [None, 2.5])
def test_overall_billions(n: int, cpu_ghz: float | None) -> None:
    rng = np.random.default_rng(n)
    times = pd.DataFrame(
        {
            name: rng.integers(10**11, 10**11 + 10**6, n)
            for name in ("t_main_cycles", "t_comm_cycles", "t_proc_cycles")
        }
    ).assign(pe=np.arange(n))
    row = stacked_row(times, "times", "fractions")
    assert_placed_alike(
        {"stacked": lambda: stacked_figure([row], path="run/x", sort=False, cpu_ghz=cpu_ghz)}
    )


def test_papi() -> None:
    sink = Builders()
    view = papi_view(EXAMPLES / "histo_4pe" / "papi", report=ReadReport(kind="papi"))
    write_papi(view, sink, by_mailbox=True, sort="total")
    assert_placed_alike(sink.builders)


@pytest.mark.parametrize("n", [4, 300])
def test_papi_billions(n: int) -> None:
    rng = np.random.default_rng(n)
    segments = pd.DataFrame(
        {"MAIN": rng.integers(10**11, 10**11 + 10**6, n), "PROC": rng.integers(0, 10**9, n)},
        index=pd.Index(np.arange(n), name="pe"),
    )
    panels = [bars_panel(segments, "PAPI_TOT_INS", "t"), bars_panel(segments, "PAPI_TOT_CYC", "c")]
    assert_placed_alike(
        {
            "bars": lambda: bars_figure(
                panels, sort=True, run=("run/x", None), extra_height=0.0, caption=[]
            )
        }
    )


@pytest.mark.parametrize("log_scale", [None, True])
def test_timeline(log_scale: bool | None) -> None:
    sink = Builders()
    view = timeline_view(EXAMPLES / "ig_8pe_2nodes" / "logical")
    write_timeline_figure(view, sink, bins=50, log_scale=log_scale)
    assert_placed_alike(sink.builders)


def test_aggregation() -> None:
    builders: dict[str | None, dict[str, Any]] = {}
    for layouts in (None, "1x8,4x2"):
        view = aggregation_view(
            EXAMPLES / "ig_8pe_2nodes",
            layouts=layouts,
            physical_report=ReadReport(),
            logical_report=ReadReport(),
        )
        sink = Builders()
        write_aggregation(view, sink, log_scale=None)
        builders[layouts] = sink.builders
    # without layouts: the same figures but the layouts one, from equal
    # builders (which draw the same pixels): drawn once, with the layouts
    with_layouts = builders["1x8,4x2"]
    assert sorted(builders[None]) == sorted(set(with_layouts) - {"layouts"})
    for name, build in builders[None].items():
        assert pickle.dumps(build) == pickle.dumps(with_layouts[name]), name
    assert_placed_alike(with_layouts)

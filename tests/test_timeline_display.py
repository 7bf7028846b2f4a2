"""The timeline's display bins, made from the read's cells without pandas.

``TimelineAccumulator.display`` gives what ``rebin(result(), bins)`` holds,
and ``timeline_view(bins_ready=...)`` hands them and the phases to a command
before the view's table is made, so that ``actorprof timeline`` draws its
figure while pandas is imported: the same numbers, the same figure.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from actorprof.analyze.timeline import TimelineAccumulator, rebin
from actorprof.cli import main
from actorprof.kinds.timeline import PhaseSpan, timeline_view
from actorprof.kinds.timeline_figures import TimelineBins, timeline_bins

from .test_timeline_engine import fuzz_run

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
BINS = (1, 2, 7, 200, 1000, 10**6)


def _same_bins(shown: TimelineBins, ref: TimelineBins) -> None:
    for got, want in zip(shown, ref, strict=True):
        if isinstance(want, np.ndarray):
            assert isinstance(got, np.ndarray) and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
        else:
            assert got == want


def _accumulator(rng: np.random.Generator, *, pes: int, lines: int, spread_s: float) -> Any:
    acc = TimelineAccumulator(max_bins=5_000)
    times = np.round(rng.uniform(0, spread_s, lines), 6)
    times[rng.integers(0, lines, lines // 20)] = np.nan  # untimed
    acc.add(pd.DataFrame({"src_pe": rng.integers(0, pes, lines), "time_s": times}))
    return acc


@pytest.mark.parametrize("seed", range(6))
def test_display_is_the_rebinned_table(seed: int) -> None:
    rng = np.random.default_rng(seed)
    acc = _accumulator(
        rng, pes=int(rng.integers(1, 40)), lines=3_000, spread_s=[0.01, 3, 40][seed % 3]
    )
    for bins in BINS:
        for num_pes in (None, 64):
            mine = copy.deepcopy(acc)
            times, counts, width, start_s = mine.display(bins, num_pes)
            timeline = copy.deepcopy(acc).result(num_pes)
            ref = timeline_bins(rebin(timeline, bins))
            _same_bins(TimelineBins(times, counts, np.arange(counts.shape[1]), width), ref)
            assert start_s == timeline.start_s
            # the state after display() is result()'s: the same table after it
            pd.testing.assert_frame_equal(mine.result(num_pes).counts, timeline.counts)


def test_sums_of_bins_widen_as_rebin_widens_them() -> None:
    acc = TimelineAccumulator(max_bins=100)
    acc.add(pd.DataFrame({"src_pe": [0, 0, 0, 0], "time_s": [0.0, 0.001, 0.002, 0.003]}))
    acc._consolidate()
    # counts beyond what a test can send: a bin's fits int32, a sum of 4 does not
    big = np.iinfo(np.int32).max // 3 + 1
    acc._counts = np.full_like(acc._counts, big)
    for bins in (4, 2, 1):
        times, counts, width, _ = copy.deepcopy(acc).display(bins)
        ref = timeline_bins(rebin(copy.deepcopy(acc).result(), bins))
        _same_bins(TimelineBins(times, counts, np.arange(counts.shape[1]), width), ref)
    assert counts.dtype == np.int64 and int(counts.sum()) == 4 * big


def test_display_without_timed_messages() -> None:
    acc = TimelineAccumulator()
    acc.add(pd.DataFrame({"src_pe": [0, 2], "time_s": [np.nan, np.nan]}))
    times, counts, width, start_s = copy.deepcopy(acc).display(200)
    ref = timeline_bins(rebin(acc.result(), 200))
    _same_bins(TimelineBins(times, counts, np.arange(counts.shape[1]), width), ref)
    assert start_s is None and counts.shape == (0, 3)
    with pytest.raises(ValueError, match="bins must be >= 1"):
        acc.display(0)


def _folders(tmp_path: Path) -> list[Path]:
    return [
        fuzz_run(tmp_path / "fuzz", 3),
        DATA / "logical_phases",
        DATA / "logical_bad",
        ROOT / "examples" / "ig_8pe_2nodes" / "logical",
    ]


@pytest.mark.filterwarnings("ignore::actorprof.errors.ActorProfWarning")
def test_the_view_hands_its_bins_before_its_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real = TimelineAccumulator.result

    def result(self: TimelineAccumulator, num_pes: int | None = None) -> Any:
        events.append("table")
        return real(self, num_pes)

    monkeypatch.setattr(TimelineAccumulator, "result", result)
    for folder in _folders(tmp_path):
        for bins in (3, 200):
            handed: list[tuple[TimelineBins, list[PhaseSpan]]] = []
            events.clear()

            def ready(shown: TimelineBins, phases: list[PhaseSpan]) -> None:
                events.append("bins")
                handed.append((shown, phases))  # noqa: B023 - called before the loop goes on

            view = timeline_view(folder, bins_ready=(bins, ready))
            assert events == ["bins", "table"]
            shown, phases = handed[0]
            _same_bins(shown, timeline_bins(view.display(bins)))
            assert phases == view.phases
            assert view.phases == timeline_view(folder).phases  # the same view either way


@pytest.mark.filterwarnings("ignore::actorprof.errors.ActorProfWarning")
def test_the_command_draws_the_figure_of_the_view(tmp_path: Path) -> None:
    """``actorprof timeline`` draws from the early bins; the library's
    ``write_timeline_figure`` from the view: the same PNG."""
    from actorprof.kinds.timeline import write_timeline_figure
    from actorprof.write import OutputWriter

    folder = DATA / "logical_phases"
    result = CliRunner().invoke(
        main, ["timeline", str(folder), "--bins", "50", "-q", "-o", str(tmp_path / "cli")]
    )
    assert result.exit_code == 0, result.output
    out = OutputWriter(tmp_path / "lib", kind="timeline")
    write_timeline_figure(timeline_view(folder), out, bins=50)
    out.finish()
    png = "timeline_rate.png"
    assert (tmp_path / "cli" / png).read_bytes() == (tmp_path / "lib" / png).read_bytes()

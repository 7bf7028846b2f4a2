"""``actorprof report`` reads the logical trace once: the timeline's send times
are binned in the matrix's read (``SendTimes``), and the timeline built from
them is the one its own read builds, bin for bin, with the same report.

Where that read cannot give the timeline (a file from the cache, an outlier
time to name by file and line, a phase that failed), the timeline reads the
phase itself, as before: the report is the same either way.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import actorprof.kinds.timeline as timeline_kind
from actorprof.engine import Engine, SendTimes
from actorprof.kinds.logical import logical_view
from actorprof.kinds.timeline import TimelineView, timeline_view
from actorprof.read import find_pe_files
from actorprof.report.run import RunReport, run_report

from ._synthetic import write_logical
from .conftest import fresh_python
from .test_timeline_batch import damaged_run
from .test_timeline_engine import _same, fuzz_run

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"

#: Matrix reads cut every way: one unit, files cut into byte ranges (blocks
#: of another grid than the file's), tiny blocks, worker processes, many
#: files planned by their count.
WAYS = {
    "one unit": Engine(jobs=1, block_bytes=4_096),
    "byte ranges": Engine(jobs=1, split_bytes=3_000, block_bytes=4_096),
    "tiny blocks": Engine(jobs=1, split_bytes=3_000, block_bytes=300),
    "processes": Engine(jobs=2, parallel_min_bytes=0, split_bytes=2_000, block_bytes=4_096),
    "by count": Engine(jobs=2, count_plan_files=2, block_bytes=4_096),
}


def _one_read(folder: Path, engine: Engine) -> TimelineView | str:
    """The timeline from each phase's matrix read (as the report makes it),
    or the error."""
    binned: dict[str | None, SendTimes] = {}
    for key in find_pe_files(folder, "send"):
        times = binned.setdefault(key or None, SendTimes())
        try:
            logical_view(folder, phase=key or None, engine=engine, times=times)
        except Exception:
            assert times.binned is None and times.report is None
        else:
            assert times.binned is not None and times.report is not None
    try:
        return timeline_view(folder, binned=binned)
    except Exception as exc:
        return str(exc)


def _own_read(folder: Path) -> TimelineView | str:
    try:
        return timeline_view(folder)
    except Exception as exc:
        return str(exc)


#: Odd lines of a fuzzed run whose times are no outliers.
CALM = ("untimed", "noise", "blank", "spaces", "stray", "other_src")


def _late_run(folder: Path) -> Path:
    """Times from 2**51 us on (binned through their floats), no outlier."""
    folder.mkdir()
    stamps = ["8616150193.001000", "8616150193.003999", "8616150193.005000", "8616150193.812131"]
    for pe in range(3):
        lines = [f"0, {pe}, 0, {(pe + k) % 3}, 8, {s}\n" for k, s in enumerate(stamps)]
        (folder / f"PE{pe}_send.csv").write_text("".join(lines) * 300)
    return folder


#: Fuzzed runs of calm odd lines (no outlier time): each reads once.
CALM_SEEDS = 5


def _synthetic_folders(tmp_path: Path) -> dict[str, Path]:
    folders = {
        "damaged (outliers)": damaged_run(tmp_path / "damaged"),
        "from 2**51 us": _late_run(tmp_path / "late"),
    }
    for seed in range(CALM_SEEDS):
        folders[f"calm {seed}"] = fuzz_run(tmp_path / f"calm{seed}", seed, CALM)
    for seed in range(3):
        folders[f"fuzz {seed} (outliers)"] = fuzz_run(tmp_path / f"fuzz{seed}", seed)
    for name in ("logical_small", "logical_bad", "logical_phases", "logical_dat"):
        folders[name] = DATA / name
    return folders


def _real_folders(tmp_path: Path, *, real_head: int) -> dict[str, Path]:
    folders = {}
    for found in sorted((DATA / "real").rglob("PE0_send.csv"))[:3]:
        real = tmp_path / f"head_{found.parent.parent.name}_{found.parent.name}"
        real.mkdir()
        for trace in found.parent.glob("*_send.csv"):  # the first lines: real times still
            with trace.open("rb") as f:
                head = b"".join(next(f, b"") for _ in range(real_head))
            (real / trace.name).write_bytes(head)
        folders[f"real {found.parent.name}"] = real
    return folders


#: Each way reads the first lines of each file of the real traces (20,000 lines
#: a file; their times are real still): ways that cut the files into thousands
#: of units the first HEAD[True] lines, the others HEAD[False].
HEAVY = ("byte ranges", "tiny blocks", "processes")
HEAD = {True: 1_000, False: 5_000}

Cases = list[tuple[str, Path, "TimelineView | str"]]


@pytest.fixture(scope="module")
def timeline_cases(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Cases]:
    """The runs and their timelines from the timeline's own read, made once
    for every way: the synthetic runs, and the real traces' heads for the
    light ways (False) and the heavy ones (True)."""
    import warnings

    def read(folders: dict[str, Path]) -> Cases:
        return [(name, folder, _own_read(folder)) for name, folder in folders.items()]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synthetic = read(_synthetic_folders(tmp_path_factory.mktemp("synthetic")))
        return {
            head: synthetic
            + read(
                _real_folders(
                    tmp_path_factory.mktemp("heavy" if head else "light"),
                    real_head=HEAD[head],
                )
            )
            for head in (False, True)
        }


@pytest.mark.filterwarnings("ignore::actorprof.errors.ActorProfWarning")
@pytest.mark.parametrize("way", list(WAYS))
def test_the_matrix_reads_timeline_is_the_timelines_own(
    way: str, monkeypatch: pytest.MonkeyPatch, timeline_cases: dict[bool, Cases]
) -> None:
    once = 0
    reads = _count_timeline_reads(monkeypatch)
    for name, folder, ref in timeline_cases[way in HEAVY]:
        reads.clear()
        view = _one_read(folder, WAYS[way])
        try:
            if isinstance(ref, str):
                assert view == ref  # the same first error
                continue
            assert isinstance(view, TimelineView)
            _same(view, ref)
            # read again exactly where a phase has outliers to name
            named = [r for r in ref.reports.values() if any("outlier" in w for w in r.warnings)]
            assert len(reads) == len(named)
            once += not named
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from exc
    assert once >= CALM_SEEDS + 4  # most runs have no outlier: read once


def _count_timeline_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each read of a phase by the timeline itself, counted."""
    from actorprof.engine.timeline import reduce_times

    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return reduce_times(*args, **kwargs)

    monkeypatch.setattr("actorprof.kinds.timeline.reduce_times", counted)
    return calls


def _without_one_read(monkeypatch: pytest.MonkeyPatch, **options: Any) -> RunReport:
    """The report as it was made before: the timeline reads every phase."""
    with monkeypatch.context() as m:
        m.setattr(timeline_kind, "_binned", lambda *args, **kwargs: None)
        return run_report(**options)


def _same_report(run: RunReport, ref: RunReport) -> None:
    assert run.summary() == ref.summary()
    assert run.errors == ref.errors
    assert (run.timeline is None) == (ref.timeline is None)
    if run.timeline is not None and ref.timeline is not None:
        _same(run.timeline, ref.timeline)


def _phased_run(folder: Path) -> Path:
    n = 8
    write_logical(folder, np.tril(np.full((n, n), 20, dtype=int)), pes_per_node=4)
    write_logical(folder, np.full((n, n), 3, dtype=int), pes_per_node=4, phase="setup")
    return folder


def test_the_report_reads_each_phase_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _phased_run(tmp_path / "run")
    calls = _count_timeline_reads(monkeypatch)
    run = run_report(folder)
    assert not calls and run.timeline is not None and len(run.timeline.phases) == 2
    _same_report(run, _without_one_read(monkeypatch, path=folder))
    assert len(calls) == 2  # the report as before reads each phase twice


def test_outliers_are_named_by_the_timelines_own_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = damaged_run(tmp_path / "run")
    calls = _count_timeline_reads(monkeypatch)
    run = run_report(folder, jobs=2)
    assert len(calls) == 1  # the one phase, read again to name its outliers
    assert run.timeline is not None and len(run.timeline.outliers) == 2
    _same_report(run, _without_one_read(monkeypatch, path=folder, jobs=2))


def test_with_the_cache_only_a_cold_read_bins_the_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cached file keeps no send times: a warm report's timeline reads the
    trace (the matrix reads nothing then); a cold one reads it once."""
    folder = _phased_run(tmp_path / "run")
    calls = _count_timeline_reads(monkeypatch)
    ref = run_report(folder)
    assert not calls
    options = {"path": folder, "cache": True, "cache_dir": tmp_path / "cache"}
    cold = run_report(**options)  # type: ignore[arg-type]
    assert not calls
    warm = run_report(**options)  # type: ignore[arg-type]
    assert len(calls) == 2
    # one file changed: that phase's matrix reads it alone, its timeline all of them
    changed = folder / "PE3_setup_send.csv"
    changed.write_text(changed.read_text() + changed.read_text().splitlines()[0] + "\n")
    partly = run_report(**options)  # type: ignore[arg-type]
    assert len(calls) == 4
    _same_report(cold, ref)
    _same_report(warm, ref)
    _same_report(partly, run_report(folder))


def test_a_phase_that_fails_is_the_timelines_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _phased_run(tmp_path / "run")
    (folder / "PE5_setup_send.csv").write_bytes(b"\x00" * 64 + b"\n")
    calls = _count_timeline_reads(monkeypatch)
    run = run_report(folder)
    assert len(calls) == 1  # the unnamed phase came from the matrix's read
    assert "PE5_setup_send.csv" in run.errors["timeline"]
    assert set(run.errors) == {"logical", "timeline"}
    _same_report(run, _without_one_read(monkeypatch, path=folder))


def test_without_the_timeline_no_time_is_binned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[SendTimes | None] = []
    own = logical_view

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("times"))
        return own(*args, **kwargs)

    monkeypatch.setattr("actorprof.report.run.logical_view", spy)
    run = run_report(_phased_run(tmp_path / "run"), timeline=False)
    assert run.timeline is None and seen == [None, None]


def test_on_a_dask_cluster_the_report_reads_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.environ.get("CI") and not os.environ.get("ACTORPROF_NO_EXTRAS"):
        import distributed
    else:
        distributed = pytest.importorskip("distributed")
    folder = fuzz_run(tmp_path / "run", 3, CALM)
    calls = _count_timeline_reads(monkeypatch)
    ref = _without_one_read(monkeypatch, path=folder)
    calls.clear()
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        run = run_report(folder, scheduler=cluster.scheduler_address)
    assert not calls
    _same_report(run, ref)


def test_cli_report_is_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """report.json and report.html, byte for byte, with the timeline's own
    read and with the one read (two worker processes; the cache cold, then
    warm)."""
    from click.testing import CliRunner

    from actorprof.cli import main

    folder = fuzz_run(tmp_path / "run", 3, CALM)

    def report(out: str, *options: str) -> dict[str, bytes]:
        args = ["report", str(folder), "-o", str(tmp_path / out), "-q", "-j", "2", *options]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        return {p.name: p.read_bytes() for p in sorted((tmp_path / out).iterdir())}

    with monkeypatch.context() as m:
        m.setattr(timeline_kind, "_binned", lambda *args, **kwargs: None)
        ref = report("ref", "--no-cache")
    calls = _count_timeline_reads(monkeypatch)
    assert report("once", "--no-cache") == ref
    assert not calls
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert report("cold", *cache) == ref and not calls
    assert report("warm", *cache) == ref and len(calls) == 1
    assert re.search(rb'"messages_timed": [1-9]', ref["report.json"])


def test_the_map_bins_times_without_pandas(tmp_path: Path) -> None:
    """A worker of the matrix's map that bins the send times too imports no
    pandas for canonical files (0.27 s of each worker's start)."""
    for pe in range(3):
        lines = f"0, {pe}, 0, 1, 8, 1721412345.000505\n0, {pe}, 0, 2, 8, 1721412345.000520\n"
        (tmp_path / f"PE{pe}_send.csv").write_text(lines * 40)
    code = (
        "import sys\n"
        "from actorprof.engine.run import Item, Unit, run_unit\n"
        f"path = {str(tmp_path)!r} + '/PE{{}}_send.csv'\n"
        "items = tuple(Item(p, path.format(p), 0, None, p, True) for p in range(3))\n"
        "big = (Item(0, path.format(0), 0, None, 0, False),)\n"
        "for chosen in (items, big):\n"
        "    done = run_unit(Unit(chosen, None, '', 256, times=(1e-3, 100_000)))\n"
        "    print(done.times.span()[2], done.times.num_pes, 'pandas' in sys.modules)\n"
    )
    printed = fresh_python(code)
    assert printed.split() == ["240", "3", "False", "80", "3", "False"]

"""The workers' fork server starts before the listing only for traces read by workers:
folders of many files or many bytes, big files."""

from __future__ import annotations

from pathlib import Path

import pytest

from actorprof.engine import Engine
from actorprof.engine import run as engine_run


def _folder(path: Path, files: int) -> Path:
    path.mkdir()
    for pe in range(files):
        (path / f"PE{pe}_send.csv").write_text(f"0, {pe}, 0, 0, 8, 1.000001\n")
    return path


class _Context:
    """A start method without a fork server: only asking for it is recorded."""

    def __init__(self, asked: list[str]) -> None:
        self.asked = asked

    def get_start_method(self) -> str:
        self.asked.append("start method")
        return "spawn"


@pytest.mark.parametrize(
    ("files", "min_bytes", "early"),
    [(3, 10**6, False), (4, 10**6, True), (3, 60, True), (3, 200, False)],
)
def test_started_early_for_many_files_or_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: int, min_bytes: int, early: bool
) -> None:
    """4 files are many here; each file is 24 bytes (72 for 3)."""
    asked: list[str] = []
    monkeypatch.setattr(engine_run, "EARLY_START_FILES", 4)
    monkeypatch.setattr(engine_run, "_pool_context", lambda: _Context(asked))
    folder = _folder(tmp_path / "run", files)
    engine_run.start_workers_early(
        Engine(jobs=2, cache=False, parallel_min_bytes=min_bytes), folder
    )
    assert asked == (["start method"] if early else [])
    # with the cache, bytes alone do not start them: a warm run reads nothing
    asked.clear()
    cached = Engine(jobs=2, cache=True, parallel_min_bytes=min_bytes)
    engine_run.start_workers_early(cached, folder)
    assert asked == (["start method"] if files >= 4 else [])


@pytest.mark.parametrize(("min_bytes", "early"), [(24, True), (25, False)])
def test_started_early_for_a_big_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, min_bytes: int, early: bool
) -> None:
    asked: list[str] = []
    monkeypatch.setattr(engine_run, "_pool_context", lambda: _Context(asked))
    path = _folder(tmp_path / "run", 1) / "PE0_send.csv"
    engine_run.start_workers_early(Engine(jobs=2, cache=False, parallel_min_bytes=min_bytes), path)
    assert asked == (["start method"] if early else [])
    asked.clear()
    engine_run.start_workers_early(Engine(jobs=2, cache=True, parallel_min_bytes=min_bytes), path)
    assert asked == []


def test_never_for_one_process_a_scheduler_or_a_missing_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_run, "EARLY_START_FILES", 1)
    monkeypatch.setattr(engine_run, "_pool_context", lambda: pytest.fail("started"))
    folder = _folder(tmp_path / "run", 2)
    engine_run.start_workers_early(Engine(jobs=1), folder)
    engine_run.start_workers_early(Engine(jobs=2, scheduler="tcp://nowhere:1"), folder)
    engine_run.start_workers_early(Engine(jobs=2), tmp_path / "missing")


def test_a_runs_workers_start_with_every_kinds_map_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fork server is asked to import the map steps of the kinds present
    (physical, PAPI), started once for the first trace read by workers."""
    asked: list[str] = []
    monkeypatch.setattr(engine_run, "EARLY_START_FILES", 2)
    monkeypatch.setattr(engine_run, "_pool_context", lambda: _Context(asked))
    monkeypatch.setattr(engine_run, "_PRELOAD", [engine_run.__name__])
    logical = _folder(tmp_path / "logical", 3)
    engine_run.start_workers_for(
        Engine(jobs=2, cache=False), {"logical": logical, "physical": None, "papi": logical}
    )
    preload = engine_run._PRELOAD
    assert preload == [engine_run.__name__, "actorprof.engine.papi"]
    assert asked  # started
    asked.clear()
    engine_run.start_workers_for(Engine(jobs=1), {"physical": logical})
    assert asked == [] and "actorprof.engine.physical" not in engine_run._PRELOAD

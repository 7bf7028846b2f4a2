"""The workers' fork server starts before the listing only for folders of many files."""

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


@pytest.mark.parametrize(("files", "early"), [(3, False), (4, True)])
def test_started_early_only_for_many_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: int, early: bool
) -> None:
    asked: list[str] = []
    monkeypatch.setattr(engine_run, "EARLY_START_FILES", 4)
    monkeypatch.setattr(engine_run, "_pool_context", lambda: _Context(asked))
    engine_run._start_workers_early(Engine(jobs=2), _folder(tmp_path / "run", files))
    assert asked == (["start method"] if early else [])


def test_never_for_one_process_a_file_or_a_missing_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_run, "EARLY_START_FILES", 1)
    monkeypatch.setattr(engine_run, "_pool_context", lambda: pytest.fail("started"))
    folder = _folder(tmp_path / "run", 2)
    engine_run._start_workers_early(Engine(jobs=1), folder)
    engine_run._start_workers_early(Engine(jobs=2), folder / "PE0_send.csv")
    engine_run._start_workers_early(Engine(jobs=2), tmp_path / "missing")

"""The workers' fork server starts before the listing only for traces read by workers:
folders of many files or many bytes, big files."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from actorprof.engine import Engine
from actorprof.engine import run as engine_run

from .conftest import fresh_python


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
    monkeypatch.setattr(engine_run, "_pool_context", lambda engine: _Context(asked))
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
    monkeypatch.setattr(engine_run, "_pool_context", lambda engine: _Context(asked))
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
    monkeypatch.setattr(engine_run, "_pool_context", lambda engine: pytest.fail("started"))
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
    monkeypatch.setattr(engine_run, "_pool_context", lambda engine: _Context(asked))
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


linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")


@linux
def test_workers_forked_only_where_safe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Engine(fork=True)`` forks the workers from this process when it runs
    no other thread and no fork server, and holds little memory; with the
    map steps imported here."""
    (tmp_path / "actorprof_preload_probe.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "actorprof_preload_probe", raising=False)
    monkeypatch.setattr(engine_run, "_PRELOAD", [engine_run.__name__, "actorprof_preload_probe"])
    monkeypatch.setattr(engine_run, "_fork_server_running", lambda: False)  # (an earlier test's)
    monkeypatch.setattr(engine_run, "_resident_bytes", lambda: 0)  # (this test process's size)
    threads = [1]  # (earlier tests may leave threads running in this process)
    monkeypatch.setattr(threading, "active_count", lambda: threads[0])
    forking = Engine(jobs=2, fork=True)
    assert engine_run._pool_context(Engine(jobs=2)).get_start_method() == "forkserver"
    assert "actorprof_preload_probe" not in sys.modules
    assert engine_run._pool_context(forking).get_start_method() == "fork"
    assert "actorprof_preload_probe" in sys.modules

    threads[0] = 2  # another thread running
    assert engine_run._pool_context(forking).get_start_method() == "forkserver"
    threads[0] = 1
    monkeypatch.setattr(engine_run, "_resident_bytes", lambda: engine_run.FORK_MAX_RESIDENT + 1)
    assert engine_run._pool_context(forking).get_start_method() == "forkserver"
    monkeypatch.setattr(engine_run, "_resident_bytes", lambda: engine_run.FORK_MAX_RESIDENT)
    assert engine_run._pool_context(forking).get_start_method() == "fork"
    monkeypatch.setattr(engine_run, "_fork_server_running", lambda: True)
    assert engine_run._pool_context(forking).get_start_method() == "forkserver"


@linux
def test_resident_bytes_of_this_process() -> None:
    ballast = np.ones(64 * 1024 * 1024 // 8)  # 64 MB, written
    assert engine_run._resident_bytes() >= ballast.nbytes


@linux
def test_no_fork_server_started_for_forked_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from multiprocessing import forkserver

    monkeypatch.setattr(engine_run, "EARLY_START_FILES", 2)
    monkeypatch.setattr(engine_run, "_PRELOAD", [engine_run.__name__])
    monkeypatch.setattr(forkserver, "ensure_running", lambda: pytest.fail("server started"))
    monkeypatch.setattr(engine_run, "_fork_server_running", lambda: False)
    monkeypatch.setattr(engine_run, "_resident_bytes", lambda: 0)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    folder = _folder(tmp_path / "run", 3)
    engine_run.start_workers_early(Engine(jobs=2, cache=False, fork=True), folder)


_FORKED_READ = """
import json
from actorprof.engine import Engine
from actorprof.engine import run as engine_run
from actorprof.kinds.logical import logical_view

used = []
choose = engine_run._pool_context


def recorded(engine):
    context = choose(engine)
    used.append(context.get_start_method())
    return context


engine_run._pool_context = recorded
one = logical_view(FOLDER, jobs=1)
forked = logical_view(FOLDER, engine=Engine(jobs=2, cache=False, fork=True, parallel_min_bytes=1))
same = one.pairs.equals(forked.pairs) and one.pes.equals(forked.pes)
lines = [one.report.lines_read, forked.report.lines_read]
print(json.dumps({"same": bool(same), "lines": lines, "used": used}))
"""


@linux
def test_forked_workers_give_the_same_view(tmp_path: Path) -> None:
    """Workers forked from a command's process read what one process reads.
    In a new interpreter: one thread and little memory, as a command starts
    (this test process may hold threads and memory of earlier tests)."""
    folder = tmp_path / "run"
    folder.mkdir()
    rng = np.random.default_rng(5)
    for pe in range(8):
        dst = rng.integers(0, 8, size=200)
        size = rng.choice([8, 16, 24], size=200)
        lines = [
            f"{pe // 4}, {pe}, {d // 4}, {d}, {s}, 1.{k + 1:06d}\n"
            for k, (d, s) in enumerate(zip(dst, size, strict=True))
        ]
        (folder / f"PE{pe}_send.csv").write_text("".join(lines))
    printed = fresh_python(f"FOLDER = {str(folder)!r}\n" + _FORKED_READ)
    result = json.loads(printed.strip().splitlines()[-1])
    assert result == {"same": True, "lines": [1600, 1600], "used": ["fork"]}

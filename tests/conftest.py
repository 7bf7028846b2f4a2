"""Shared fixtures: paths to the committed data and the shipped examples."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
# The CLI caches reduced traces in the user's cache folder by default: keep
# the test suite's entries out of the real one (subprocesses inherit this).
_CACHE = tempfile.mkdtemp(prefix="actorprof-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)  # not left in /tmp after a run

# The suite's worker pools are forked from one fork server per test process.
# A map step imports pandas in its worker when a block is not canonical (the
# fuzzed and damaged traces of many tests): 0.3 s a worker, at every pool.
# The server imports it once instead. The tests of what a worker imports run
# in a new interpreter, or set the server's imports themselves.
from actorprof.engine.run import prepare_workers  # noqa: E402

prepare_workers(["pandas"])

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = ROOT / "examples"


@pytest.fixture
def data() -> Path:
    return DATA


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


@pytest.fixture(autouse=True)
def _figures_drawn_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """No figure server or figure child unless a test asks for them
    (tests/test_write_background.py): whether a CPU is idle depends on the
    machine at that instant, and a test's outcome must not."""
    import actorprof.write

    monkeypatch.setattr(actorprof.write, "_spare_cpus", lambda: 0)


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """sha256 and mtime (ns) of every file below ``folder``."""
    return {
        str(p): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


class Recorder:
    """A progress sink that keeps what it was told."""

    def __init__(self) -> None:
        self.begun: list[tuple[int, int]] = []
        self.updates: list[tuple[int, int]] = []

    def begin(self, total_bytes: int, total_files: int) -> None:
        self.begun.append((total_bytes, total_files))

    def update(self, done_bytes: int, done_files: int) -> None:
        self.updates.append((done_bytes, done_files))

    def close(self) -> None:
        pass


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_CACHE, ignore_errors=True)


def number_of_lines(data: bytes) -> int:
    """The lines a trace file of ``data`` holds, as every reader counts them:
    the last one may lack its line end, and a byte-order mark alone is no
    line (``wc -l`` agrees)."""
    body = data.removeprefix(b"\xef\xbb\xbf")
    return body.count(b"\n") + (0 if body.endswith(b"\n") or not body else 1)


def distinct_contents(paths: list[Path]) -> list[Path]:
    """``paths`` without those whose content an earlier one has (a file's
    bytes; a folder's file names and bytes): the real traces are shipped in
    ``examples/`` and ``tests/data/real`` and may be found in the shared
    folder too, and the same trace is one case, not three."""
    seen: set[str] = set()
    kept = []
    for path in paths:
        digest = hashlib.sha256()
        for file in sorted(path.iterdir()) if path.is_dir() else [path]:
            if file.is_file():
                digest.update(file.name.encode() if path.is_dir() else b"")
                digest.update(file.read_bytes())
        if digest.hexdigest() not in seen:
            seen.add(digest.hexdigest())
            kept.append(path)
    return kept


def trace_heads(run: Path, to: Path, lines: int = 2_000) -> Path:
    """A copy of the run folder ``run`` at ``to`` whose logical and PAPI files
    keep their first ``lines`` lines (the rest copied whole): a real run of
    every kind it holds, read in a fraction of the time, for tests of what a
    command does with its outputs rather than of its numbers."""
    to.mkdir(parents=True, exist_ok=True)
    for file in sorted(run.rglob("*")):
        target = to / file.relative_to(run)
        if file.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif file.name.endswith(("_send.csv", "_PAPI.csv")):
            with file.open("rb") as f:
                target.write_bytes(b"".join(line for _, line in zip(range(lines), f)))
        else:
            shutil.copyfile(file, target)
    return to


def fresh_python(code: str) -> str:
    """What ``code`` prints, run by a new interpreter that imports this
    checkout (``MPLBACKEND=Agg``); it must exit 0 (else its stderr is shown)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def pytest_collection_finish(session: pytest.Session) -> None:
    """What the collection made (the modules, their tests and data) is kept
    out of the collector's passes: a full pass, as the views make after a
    read, then walks only what the tests make."""
    import gc

    gc.freeze()

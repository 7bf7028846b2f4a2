"""Read workers keep freed heap memory for their next block; the main process is left alone."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import pytest

from actorprof import _memory


def test_main_process_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(_memory, "_mallopt", lambda: lambda o, v: calls.append((o, v)) or 1)
    assert _memory.pad_worker_heap.__wrapped__() is False
    assert calls == []


def test_a_worker_sets_the_heap_pad_and_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(_memory, "_mallopt", lambda: lambda o, v: calls.append((o, v)) or 1)
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: object())
    assert _memory.pad_worker_heap.__wrapped__() is True
    assert calls == [(-2, 64 << 20), (-3, 32 << 20)]  # M_TOP_PAD, M_MMAP_THRESHOLD


def test_refused_settings_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_memory, "_mallopt", lambda: lambda o, v: 0)
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: object())
    assert _memory.pad_worker_heap.__wrapped__() is False


@pytest.mark.skipif(_memory._mallopt() is None, reason="not glibc")
def test_glibc_takes_the_settings_in_a_real_worker() -> None:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert pool.submit(_memory.pad_worker_heap).result() is True


def test_the_timeline_map_step_pads_its_worker_s_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from actorprof.engine import timeline as engine_timeline
    from actorprof.read import ReadReport
    from actorprof.read.logical import logical_files

    calls: list[bool] = []
    monkeypatch.setattr(engine_timeline, "pad_worker_heap", lambda: calls.append(True) or True)
    root = Path(__file__).resolve().parent.parent / "examples" / "ig_8pe_2nodes" / "logical"
    files = logical_files(root, report=ReadReport(kind="logical"))
    unit = engine_timeline.TimelineUnit(0, tuple(files[:2]), None, "", 1e-3, 1000)
    result = engine_timeline.run_times_unit(unit)
    assert calls == [True] and result.error is None and len(result.files) == 2


def test_the_logical_map_step_pads_its_worker_s_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from actorprof.engine import run as engine_run

    calls: list[bool] = []
    monkeypatch.setattr(engine_run, "pad_worker_heap", lambda: calls.append(True) or True)
    root = Path(__file__).resolve().parent.parent / "examples" / "ig_8pe_2nodes" / "logical"
    paths = sorted(str(p) for p in root.glob("PE*_send.csv"))[:3]
    items = tuple(engine_run.Item(i, p, 0, None, i, True) for i, p in enumerate(paths))
    engine_run.run_unit(engine_run.Unit(items, None, ""))
    assert calls == [True]

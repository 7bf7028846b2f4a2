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

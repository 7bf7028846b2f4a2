"""Shared fixtures: paths to the committed data and the shipped examples."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

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

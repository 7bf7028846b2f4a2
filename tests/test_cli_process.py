"""Process settings of the CLI: one OpenBLAS thread unless the user chose, and
fewer garbage-collector passes while a command runs (restored after it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from actorprof.cli import BLAS_THREAD_VARIABLES, GC_YOUNG_THRESHOLD, one_blas_thread


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_one_thread_by_default(clean_env: None) -> None:
    one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"


@pytest.mark.parametrize("name", BLAS_THREAD_VARIABLES)
def test_the_users_choice_wins(clean_env: None, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "4")
    one_blas_thread()
    assert os.environ[name] == "4"
    assert os.environ.get("OPENBLAS_NUM_THREADS", "4") == "4"


def test_a_command_imports_numpy_after_the_setting() -> None:
    """The group callback runs before any command imports numpy."""
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}
    code = (
        "import sys\n"
        "from actorprof.cli import main\n"
        "@main.command('probe')\n"
        "def probe():\n"
        "    assert 'numpy' not in sys.modules\n"
        "    import os\n"
        "    print(os.environ['OPENBLAS_NUM_THREADS'])\n"
        "main(['probe'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "1\n"


def test_fewer_gc_passes_while_a_command_runs_then_as_before() -> None:
    code = (
        "import gc\n"
        "from actorprof.cli import main\n"
        "@main.command('probe')\n"
        "def probe():\n"
        "    print(gc.get_threshold())\n"
        "gc.set_threshold(900, 11, 12)\n"
        "main(['probe'], standalone_mode=False)\n"
        "print(gc.get_threshold())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"({GC_YOUNG_THRESHOLD}, 11, 12)\n(900, 11, 12)\n"

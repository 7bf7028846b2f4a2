"""Every command takes the run folder; help offers only what works; `report` shows progress."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from actorprof.cli import main

ROOT = Path(__file__).resolve().parents[1]
HISTO = ROOT / "examples" / "histo_4pe"
IG = ROOT / "examples" / "ig_8pe_2nodes"


@pytest.mark.parametrize(
    ("command", "run", "found", "written"),
    [
        ("logical", HISTO, "logical", "logical_heatmap.png"),
        ("papi", HISTO, "papi", "papi_bars.png"),
        ("timeline", HISTO, "logical", "timeline_rate.png"),
        ("export", HISTO, "logical", "export_perfetto.json"),
        ("overall", HISTO, "overall", "overall_stacked.png"),
        ("physical", IG, "physical", "physical_heatmap.png"),
    ],
)
def test_run_folder_is_accepted(
    command: str, run: Path, found: str, written: str, tmp_path: Path
) -> None:
    result = CliRunner().invoke(main, [command, str(run), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"{found} trace: {run / found}" in result.stderr
    assert (tmp_path / written).is_file()


def test_trace_folder_itself_is_not_announced(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["logical", str(HISTO / "logical"), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "logical trace:" not in result.stderr


def test_export_papi_from_the_run_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["export", str(HISTO), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"PAPI regions from {HISTO / 'papi'}" in result.stderr


def _help(command: str) -> str:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    return result.output


def test_help_lists_only_working_formats() -> None:
    assert "[png|svg]" in _help("report") and "pdf" not in _help("report")
    assert "--format" not in _help("export")
    assert "[png|svg|pdf]" in _help("logical")
    result = CliRunner().invoke(main, ["report", str(HISTO), "--format", "pdf"])
    assert result.exit_code == 2


def test_log_and_linear_force_the_scale(tmp_path: Path) -> None:
    for flag in ("--log", "--linear"):
        result = CliRunner().invoke(main, ["logical", str(HISTO), "-o", str(tmp_path), flag])
        assert result.exit_code == 0, result.output
    import json

    summary = json.loads((tmp_path / "logical_summary.json").read_text())
    assert summary["options"]["log"] is False


def _big_run(folder: Path, *, pes: int = 16, lines: int = 150_000) -> None:
    """A logical trace of ``pes x lines`` timed messages (about 100 MB), written fast."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for src in range(pes):
        dst = rng.integers(0, pes, size=lines)
        times = 1_700_000_000.0 + np.sort(rng.uniform(0.0, 2.0, size=lines))
        tails = [f"{d // 4}, {d}, 8, {t:.6f}" for d, t in zip(dst.tolist(), times.tolist())]
        prefix = f"{src // 4}, {src}, "
        text = prefix + ("\n" + prefix).join(tails) + "\n"
        (folder / f"PE{src}_send.csv").write_text(text)


def _first_progress(argv: list[str], *, delay_s: float | None = None) -> tuple[bytes, float, bool]:
    """What ``actorprof argv`` writes on a terminal's stderr until its first
    progress line: the bytes, the seconds it took, whether it still runs.
    ``delay_s``: the progress line's delay instead of its default (a read
    faster than the default second would show none)."""
    primary, secondary = pty.openpty()
    # the command is killed: what it would have removed at exit (the report's
    # figure folder) is left in a temporary folder of the test's own
    scratch = tempfile.mkdtemp(prefix="actorprof-test-")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT), "TMPDIR": scratch}
    start = time.monotonic()
    command = [sys.executable, "-m", "actorprof"]
    if delay_s is not None:
        command = [
            sys.executable,
            "-c",
            "import sys; from actorprof._progress import Progress; "
            f"Progress.__init__.__kwdefaults__['delay_s'] = {delay_s!r}; "
            "from actorprof.cli import main; sys.argv[0] = 'actorprof'; main()",
        ]
    proc = subprocess.Popen(
        [*command, *argv],
        stdout=subprocess.DEVNULL,
        stderr=secondary,
        env=env,
    )
    os.close(secondary)
    seen = b""
    try:
        while time.monotonic() - start < 8.0 and b"reading" not in seen:
            ready, _, _ = select.select([primary], [], [], 0.1)
            if ready:
                try:
                    seen += os.read(primary, 4096)
                except OSError:  # the process closed the terminal
                    break
            if proc.poll() is not None and not ready:
                break
        elapsed = time.monotonic() - start
        still_running = proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
        os.close(primary)
        shutil.rmtree(scratch, ignore_errors=True)
    return seen, elapsed, still_running


def test_report_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _big_run(run / "logical")
    argv = ["report", str(run), "-o", str(tmp_path / "out"), "-j", "1", "--no-cache"]
    seen, elapsed, still_running = _first_progress(argv, delay_s=0.1)
    assert b"reading" in seen, seen
    assert b"files" in seen and b"MB" in seen
    # the report took longer than the wait for its first progress line
    assert still_running, "the trace was read too fast to test the progress line"
    print(f"first progress line after {elapsed:.2f} s")
    # drawn during the read, not after it: some files were still to read (a bound
    # on the seconds instead failed on a loaded machine)
    found = re.search(rb"reading (\d+)/(\d+) files", seen)
    assert found is not None, seen
    assert int(found[1]) < int(found[2]) == 16, seen


def test_compare_tells_progress_of_both_runs(tmp_path: Path) -> None:
    """compare reports each run's reads to the progress sink (the CLI's line)."""
    from actorprof.report.compare import compare_runs

    class Recorder:
        def __init__(self) -> None:
            self.begun: list[tuple[int, int]] = []
            self.updates = 0

        def begin(self, total_bytes: int, total_files: int) -> None:
            self.begun.append((total_bytes, total_files))

        def update(self, done_bytes: int, done_files: int) -> None:
            self.updates += 1

        def close(self) -> None:
            pass

    recorder = Recorder()
    compare_runs(HISTO, HISTO, names="a,b", progress=recorder)
    logical_bytes = sum(p.stat().st_size for p in (HISTO / "logical").glob("PE*_send.csv"))
    # each run: its logical trace (4 files) and its overall profile (1 file)
    assert recorder.begun.count((logical_bytes, 4)) == 2
    assert len(recorder.begun) == 4 and recorder.updates >= 4

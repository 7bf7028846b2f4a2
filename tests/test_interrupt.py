"""Ctrl-C (SIGINT) wherever it comes: exit 130, the one interrupt message, and
no traceback from any process (docs/errors.md, "Exit codes").

Each test runs the real program (:func:`actorprof.cli.run`) in a new
process with a probe command, which prints a line when it reaches the
moment under test and then waits there for the test: the signal is sent
once that line is read, never after a guessed delay.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from actorprof.cli import INTERRUPTED

#: A command's life, each stage holding until stdin is closed: an eager
#: option's callback (before the command's body), the command's context
#: closing (click's teardown, after the file list) and the exit handlers.
PROBE = """\
import atexit
import sys

import click

from actorprof.cli import handle_errors, main, run


def wait() -> None:
    click.echo("waiting")
    sys.stdin.read()  # until the test closes stdin


@main.command("probe")
@click.option("--before", is_flag=True, is_eager=True, callback=lambda c, p, v: v and wait())
@click.option("--teardown", is_flag=True)
@click.option("--exit-handlers", is_flag=True)
@click.option("--interrupted", is_flag=True)
@handle_errors
def probe(before: bool, teardown: bool, exit_handlers: bool, interrupted: bool) -> None:
    click.echo("out/probe_table.csv")
    if teardown:
        click.get_current_context().call_on_close(wait)
    if exit_handlers:
        atexit.register(wait)
    if interrupted:  # as a Ctrl-C in the command's body
        raise KeyboardInterrupt


sys.argv = ["actorprof", "probe", *sys.argv[1:]]
run()
"""


Start = Callable[..., "subprocess.Popen[str]"]


@pytest.fixture
def start() -> Iterator[Start]:
    """Start a program in a process group of its own (the terminal's, for
    Ctrl-C), killed with whatever it left when the test fails."""
    started: list[subprocess.Popen[str]] = []

    def begin(*argv: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        started.append(process)
        return process

    yield begin
    for process in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()


def _probe(start: Start, code: str, *args: str) -> subprocess.Popen[str]:
    return start(sys.executable, "-c", textwrap.dedent(code), *args)


def _wait_for(process: subprocess.Popen[str], line: str) -> list[str]:
    """stdout's lines up to ``line`` (the process then waits for the test)."""
    assert process.stdout is not None and process.stderr is not None
    seen: list[str] = []
    while line not in seen:
        got = process.stdout.readline()
        assert got, f"{line!r} never printed; stderr: {process.stderr.read()}"
        seen.append(got.rstrip("\n"))
    return seen


def _interrupted(process: subprocess.Popen[str], group: bool, *, within: float) -> tuple[int, str]:
    """SIGINT to the process group (a terminal's Ctrl-C) or to the command
    alone (``kill -INT``); its exit code and stderr, once every process that
    holds its stdout is gone, within ``within`` seconds."""
    sent = time.monotonic()
    if group:
        os.killpg(process.pid, signal.SIGINT)
    else:
        process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:  # say which process lives on, and what it does with SIGINT
        alive = _group_dump(process.pid)  # the command leads its group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"processes alive 20 s after the SIGINT:\n{alive}") from None
    assert time.monotonic() - sent < within
    return process.returncode, err


def _group_dump(pgid: int) -> str:
    """Each process of group ``pgid``: pid, parent, state, signal masks, command."""
    lines = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            status = (entry / "status").read_text().splitlines()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # state, ppid, pgrp, ...
        if int(fields[2]) != pgid:
            continue
        masks = " ".join(line for line in status if line.startswith(("SigBlk", "SigIgn", "SigCgt")))
        state, parent = fields[0], fields[1]
        lines.append(f"pid {entry.name} ppid {parent} state {state} {masks} {command[:120]}")
    return "\n".join(lines) or f"(no process left in group {pgid})"


@pytest.mark.parametrize("stage", ["--teardown", "--exit-handlers", "--before"])
def test_ctrl_c_outside_the_commands_body_exits_130(start: Start, stage: str) -> None:
    """Not click's ``Aborted!`` and exit 1, nor a traceback from an exit handler."""
    process = _probe(start, PROBE, stage)
    seen = _wait_for(process, "waiting")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(input="", timeout=30)
    assert (process.returncode, err) == (130, INTERRUPTED + "\n")
    if stage == "--before":  # the command starts interrupted: its body never runs
        assert "out/probe_table.csv" not in seen + out.splitlines()
    else:
        assert seen == ["out/probe_table.csv", "waiting"]


def test_ctrl_c_said_once(start: Start) -> None:
    """A second Ctrl-C in the teardown of an interrupted command."""
    process = _probe(start, PROBE, "--teardown", "--interrupted")
    _wait_for(process, "waiting")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(input="", timeout=30)
    assert (process.returncode, err) == (130, INTERRUPTED + "\n")


#: A map over two workers: unit 0 ends at once (its worker then waits for
#: work), unit 30 sleeps 30 s; "ready" once unit 0's result is in.
MAP = """\
import sys
import time

import click

from actorprof.cli import handle_errors, main, run
from actorprof.engine import Engine, run_map


@main.command("probe")
@click.option("--fork/--fork-server", default=True)
@handle_errors
def probe(fork: bool) -> None:
    for _ in run_map(time.sleep, [0, 30], Engine(jobs=2, fork=fork)):
        click.echo("ready")


sys.argv = ["actorprof", "probe", *sys.argv[1:]]
run()
"""


@pytest.mark.parametrize("method", ["--fork", "--fork-server"])
@pytest.mark.parametrize("group", [True, False], ids=["terminal", "parent-only"])
def test_ctrl_c_during_a_map_stops_its_workers_quietly(
    start: Start, method: str, group: bool
) -> None:
    """Ctrl-C in a terminal reaches the workers too (one idle, one in a unit):
    none prints a traceback. Sent to the command alone (``kill -INT``), it
    stops the running unit all the same, not 30 s later. Either way no
    worker is left (one would hold stdout open: ``communicate`` would wait)."""
    process = _probe(start, MAP, method)
    _wait_for(process, "ready")
    assert _interrupted(process, group, within=15) == (130, INTERRUPTED + "\n")


def test_a_real_command_interrupted_at_its_end(start: Start, data: Path, tmp_path: Path) -> None:
    """``actorprof logical``, SIGINT sent once its file list is read (its
    teardown and exit handlers, or just after): exit 130 with the message,
    or 0 when it had ended before the signal; never ``Aborted!`` nor a
    traceback (``Exception ignored in ...``). The files listed are complete."""
    trace = data / "logical_small"
    for attempt in range(2):
        out_dir = tmp_path / str(attempt)
        argv = ["logical", str(trace), "-o", str(out_dir), "-q"]
        process = start(sys.executable, "-m", "actorprof", *argv)
        listed = _wait_for(process, str(out_dir / "logical_summary.json"))
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
        assert (process.returncode, err) in [(130, INTERRUPTED + "\n"), (0, "")]
        assert sorted(p.name for p in out_dir.iterdir()) == sorted(Path(p).name for p in listed)


#: A command whose figure server draws a figure for 30 s: "drawing" once its
#: child is at it; the command then waits in ``finish`` or (--in-body) on stdin.
FIGURE = """\
import sys
import time

import click
from matplotlib.figure import Figure

import actorprof.write
from actorprof.cli import handle_errors, main, run
from actorprof.write import OutputWriter

actorprof.write._spare_cpus = lambda: 2  # a server and its child, whatever the load


def slow_figure() -> Figure:
    click.echo("drawing")
    time.sleep(30)
    return Figure()


@main.command("probe")
@click.argument("out")
@click.option("--in-finish/--in-body", default=True)
@handle_errors
def probe(out: str, in_finish: bool) -> None:
    writer = OutputWriter(out, kind="probe", background=True, warm=("matplotlib.figure",))
    writer.draw(slow_figure, "figure")
    if not in_finish:
        sys.stdin.read()
    writer.finish()


sys.argv = ["actorprof", "probe", *sys.argv[1:]]
run()
"""


@pytest.mark.parametrize("where", ["--in-finish", "--in-body"])
@pytest.mark.parametrize("group", [True, False], ids=["terminal", "parent-only"])
def test_ctrl_c_stops_the_figures_being_drawn(
    start: Start, tmp_path: Path, where: str, group: bool
) -> None:
    """Ctrl-C while the figure server's child draws: in a terminal it reaches
    every process; sent to the command alone (``kill -INT``), the command
    stops its server and the server its child. Either way the child stops
    (not 30 s later), its temporary file is removed, and no figure is
    written after the command has ended."""
    out = tmp_path / "out"
    process = _probe(start, FIGURE, str(out), where)
    _wait_for(process, "drawing")
    assert _interrupted(process, group, within=10) == (130, INTERRUPTED + "\n")
    assert list(out.iterdir()) == []


OWN_FIGURE = """\
import sys
import time

import click
from matplotlib.figure import Figure

import actorprof.write
from actorprof.cli import handle_errors, main, run
from actorprof.write import OutputWriter

actorprof.write._spare_cpus = lambda: 2  # a child, whatever the load


def slow_write(handle):
    handle.write(b"half")
    click.echo("drawing")
    time.sleep(30)


@main.command("probe")
@click.argument("out")
@click.option("--in-finish/--in-body", default=True)
@handle_errors
def probe(out: str, in_finish: bool) -> None:
    writer = OutputWriter(out, kind="probe", background=True)  # no server: its own child
    writer._figure_writer = lambda fig, dpi: slow_write
    writer.figure(Figure(), "figure")
    if not in_finish:
        sys.stdin.read()
    writer.finish()


sys.argv = ["actorprof", "probe", *sys.argv[1:]]
run()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux parent-death signal")
@pytest.mark.parametrize("where", ["--in-finish", "--in-body"])
def test_kill_int_to_the_command_stops_its_own_figure_children(
    start: Start, tmp_path: Path, where: str
) -> None:
    """A command that draws its figures in children of its own (no figure
    server), sent SIGINT alone: the children stop when it ends, their
    temporary files removed, and no figure is written after it."""
    out = tmp_path / "out"
    process = _probe(start, OWN_FIGURE, str(out), where)
    _wait_for(process, "drawing")
    assert [p.suffix for p in out.iterdir()] == [".tmp"]  # the child's, half-written
    assert _interrupted(process, False, within=10) == (130, INTERRUPTED + "\n")
    assert list(out.iterdir()) == []


#: The figure server's child ignores SIGINT (as a library it calls might).
STUBBORN = FIGURE.replace(
    '    click.echo("drawing")\n',
    "    import signal\n\n"
    "    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    '    click.echo("drawing")\n',
)


@pytest.mark.parametrize("group", [True, False], ids=["terminal", "parent-only"])
def test_a_figure_child_that_ignores_sigint_is_stopped_too(
    start: Start, tmp_path: Path, group: bool
) -> None:
    """The server gives its children 2 s to leave, then kills them (and
    removes their temporary files): every process is gone within seconds."""
    assert "SIG_IGN" in STUBBORN
    out = tmp_path / "out"
    process = _probe(start, STUBBORN, str(out), "--in-body")
    _wait_for(process, "drawing")
    assert _interrupted(process, group, within=10) == (130, INTERRUPTED + "\n")
    assert list(out.iterdir()) == []

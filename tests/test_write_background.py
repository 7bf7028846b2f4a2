"""OutputWriter(background=True): figures drawn by forked children.

The same files and bytes as the serial route, in the same order; a figure
that fails in a child is the error the serial route raises (exit code,
message, no traceback without -v); files stay atomic; no fork where it
cannot pay or is unsafe (one CPU, other threads running).
"""

from __future__ import annotations

import errno
import functools
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import actorprof.write
from actorprof import ActorProfError
from actorprof.cli import main
from actorprof.write import OutputWriter, new_figure

from .conftest import EXAMPLES, fresh_python, snapshot, trace_heads

DATA = Path(__file__).resolve().parent / "data"
SPARE_CPUS = actorprof.write._spare_cpus
BUSY_CPUS = actorprof.write._busy_cpus
HEATMAP = "PE x PE"  # the title of the logical heatmap

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="figures are drawn in a child on Linux only"
)


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A spare CPU whatever the machine, and the children forked (their pids)."""
    monkeypatch.setattr(actorprof.write, "_spare_cpus", lambda: 1)
    # earlier tests may leave a thread behind (Dask's offload thread lives for ever)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    pids: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return pids


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of the logical and physical traces (the heads of a real one)."""
    return trace_heads(EXAMPLES / "ig_8pe_2nodes", tmp_path_factory.mktemp("ig_8pe_2nodes"))


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def fail_on(monkeypatch: pytest.MonkeyPatch, title: str, exc: BaseException | None) -> None:
    """save_png raises ``exc`` (or the process is killed) for figures whose
    first Axes' title holds ``title``."""
    real = actorprof.write.save_png

    def save_png(fig: Any, handle: Any, *, dpi: float) -> None:
        if title in fig.axes[0].get_title():
            handle.write(b"\x89PNG half a figure")
            if exc is None:
                os.kill(os.getpid(), signal.SIGKILL)
            raise exc
        real(fig, handle, dpi=dpi)

    monkeypatch.setattr(actorprof.write, "save_png", save_png)


def test_same_files_bytes_and_order_as_the_serial_route(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, stdout, err = run("logical", DATA / "logical_small", "-o", tmp_path / "bg")
    assert code == 0, err
    assert forks, threading.enumerate()  # the heatmap at least was drawn by a child
    monkeypatch.setattr(actorprof.write, "_spare_cpus", lambda: 0)
    forks.clear()
    code, serial_stdout, err = run("logical", DATA / "logical_small", "-o", tmp_path / "serial")
    assert code == 0, err
    assert forks == []
    assert stdout.replace("/bg/", "/serial/") == serial_stdout
    assert contents(tmp_path / "bg") == contents(tmp_path / "serial")
    assert [p.name for p in (tmp_path / "bg").iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    "args",
    [
        ("papi", DATA / "papi_small"),
        ("overall", DATA / "overall_mixed"),
        ("physical", DATA / "physical_small"),
        ("timeline", DATA / "logical_phases"),
        ("aggregation", DATA / "aggregation_1d", "--layouts", "1,2"),
    ],
    ids=lambda args: args[0],
)
def test_every_command_draws_in_its_figure_server_what_it_draws_here(
    args: tuple[Any, ...], tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    started = []
    real_start = actorprof.write._FigureServer.start

    def start(*a: Any) -> Any:
        server = real_start(*a)
        started.append(server)
        return server

    monkeypatch.setattr(actorprof.write._FigureServer, "start", start)
    code, stdout, err = run(*args, "-o", tmp_path / "bg")
    assert code == 0, err
    assert started and started[0] is not None  # the figures were built in a server
    monkeypatch.setattr(actorprof.write, "_spare_cpus", lambda: 0)
    started.clear()
    code, serial_stdout, err = run(*args, "-o", tmp_path / "serial")
    assert code == 0, err
    assert started == []
    assert stdout.replace("/bg/", "/serial/") == serial_stdout
    assert contents(tmp_path / "bg") == contents(tmp_path / "serial")


def test_writer_waits_for_its_children(tmp_path: Path, forks: list[int]) -> None:
    out = OutputWriter(tmp_path, kind="k", background=True)
    for name in ("a", "b", "c"):
        fig = new_figure(3, 2)
        fig.axes[0].plot([0, 1], [1, 0])
        out.figure(fig, name)
    out.json({"x": 1}, "summary")
    names = ("a.png", "b.png", "c.png", "summary.json")
    assert out.finish() == [tmp_path / f"k_{n}" for n in names]
    assert forks and out._children == []
    for pid in forks:  # every child reaped
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    assert all((tmp_path / f"k_{n}.png").read_bytes().startswith(b"\x89PNG") for n in "abc")


def test_a_crash_in_the_child_is_the_serial_error_and_keeps_the_older_file(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    code, _, err = run("logical", DATA / "logical_small", "-o", out)
    assert code == 0, err
    before = snapshot(out)
    fail_on(monkeypatch, HEATMAP, RuntimeError("renderer exploded"))
    forks.clear()
    code, stdout, err = run("logical", DATA / "logical_small", "-o", out)
    assert forks
    assert code == 1 and stdout == ""
    assert "internal error (RuntimeError: renderer exploded)" in err
    assert "Traceback" not in err
    heatmap = str(out / "logical_heatmap.png")
    assert snapshot(out)[heatmap] == before[heatmap]
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []
    code, _, err = run("logical", DATA / "logical_small", "-o", out, "-v")
    assert code == 1 and "Traceback" in err and "RuntimeError: renderer exploded" in err
    assert "in the process drawing the figure" in err  # the child's own traceback


def test_disk_full_in_the_child_says_what_the_serial_route_says(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_on(monkeypatch, HEATMAP, OSError(errno.ENOSPC, "No space left on device"))
    out = tmp_path / "out"
    code, stdout, err = run("logical", DATA / "logical_small", "-o", out)
    assert forks
    assert code == 1 and stdout == ""
    assert (
        f"Error: {out / 'logical_heatmap.png'}: cannot write this output (No space left on "
        "device); nothing half-written was left." in err
    )
    assert "Traceback" not in err and "internal error" not in err
    assert not (out / "logical_heatmap.png").exists()
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []
    # the files written beside it are complete, and said (stdout lists none)
    complete = sorted(p.name for p in out.iterdir())
    assert complete and f"The {len(complete)} other file(s) written are complete: " in err


def test_a_killed_child_is_an_error_not_a_silent_loss(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_on(monkeypatch, "killed", None)
    out = OutputWriter(tmp_path, kind="k", background=True)
    fig = new_figure(3, 2)
    fig.axes[0].set_title("killed")
    out.figure(fig, "a")
    out.json({"x": 1}, "summary")
    with pytest.raises(ActorProfError, match=r"k_a\.png: the process drawing this figure stopped"):
        try:
            out.finish()
        except ActorProfError as exc:
            assert (
                f"The 1 other file(s) written are complete: k_summary.json (in {tmp_path})"
                in str(exc)
            )
            raise
    assert out.written == [tmp_path / "k_summary.json"]
    assert not (tmp_path / "k_a.png").exists()


def test_no_child_without_a_spare_cpu_or_with_threads_running(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = OutputWriter(tmp_path, kind="k", background=False)
    out.figure(new_figure(3, 2), "a")
    assert forks == []
    monkeypatch.undo()  # threads counted again
    monkeypatch.setattr(actorprof.write, "_spare_cpus", lambda: 1)
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked beside a thread"))
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        out = OutputWriter(tmp_path, kind="k", background=True)
        out.figure(new_figure(3, 2), "b")
    finally:
        stop.set()
        thread.join()
    assert out.finish() == [tmp_path / "k_b.png"]
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(actorprof.write, "_busy_cpus", lambda: 0.5)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert SPARE_CPUS() == 0
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert SPARE_CPUS() == 2
    monkeypatch.setattr(actorprof.write, "_busy_cpus", lambda: 6.5)  # a busy machine
    assert SPARE_CPUS() == 1
    monkeypatch.setattr(actorprof.write, "_busy_cpus", lambda: 9.0)
    assert SPARE_CPUS() == 0
    monkeypatch.setattr(actorprof.write, "_busy_cpus", lambda: 0.0)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert SPARE_CPUS() == 0


def test_busy_cpus_are_the_threads_running_now_else_the_load_average(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy = BUSY_CPUS
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("1.21 1.10 0.95 1/345 12345\n")  # only this process runs
    assert busy(str(loadavg)) == 0.0
    loadavg.write_text("3.80 3.10 2.95 4/345 12345\n")  # three others run
    assert busy(str(loadavg)) == 3.0
    monkeypatch.setattr(os, "getloadavg", lambda: (2.5, 1.0, 1.0))
    assert busy(str(tmp_path / "absent")) == 2.5
    loadavg.write_text("garbled\n")
    assert busy(str(loadavg)) == 2.5


def test_a_refused_fork_draws_the_figure_here(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse() -> int:
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    out = OutputWriter(tmp_path, kind="k", background=True)
    out.figure(new_figure(3, 2), "a")
    assert out.finish() == [tmp_path / "k_a.png"]
    assert (tmp_path / "k_a.png").read_bytes().startswith(b"\x89PNG")


# --------------------------------------------------------------- figure server


def build_recorded(record: Path, title: str) -> Any:
    """A figure titled ``title``; the building process's id is appended to ``record``."""
    with record.open("a") as f:
        f.write(f"{os.getpid()}\n")
    fig = new_figure(3, 2)
    fig.axes[0].plot([0, 1], [1, 0])
    fig.axes[0].set_title(title)
    return fig


def build_failing(message: str) -> Any:
    raise ValueError(message)


def build_waiting(flag: Path, title: str) -> Any:
    """:func:`build_recorded`, once ``flag`` exists (20 s at most)."""
    deadline = time.monotonic() + 20
    while not flag.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return build_recorded(flag.with_name("pids"), title)


def build_killing_its_process() -> Any:
    os.kill(os.getpid(), signal.SIGKILL)


WARM = ("actorprof.plot.heatmap",)


def test_a_figure_server_builds_what_the_serial_route_builds(
    tmp_path: Path, forks: list[int]
) -> None:
    record = tmp_path / "pids"
    out = OutputWriter(tmp_path / "server", kind="k", background=True, warm=WARM)
    assert out._server is not None and out._spare == 0  # the server has the spare CPU
    for name in ("a", "b", "c"):
        out.draw(functools.partial(build_recorded, record, name), name)
    out.json({"x": 1}, "summary")
    names = ("a.png", "b.png", "c.png", "summary.json")
    assert out.finish() == [tmp_path / "server" / f"k_{n}" for n in names]
    pids = {int(line) for line in record.read_text().split()}
    assert len(pids) >= 1 and os.getpid() not in pids  # built in the server
    for pid in forks:  # the server reaped
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    serial = OutputWriter(tmp_path / "serial", kind="k")
    assert serial._server is None
    for name in ("a", "b", "c"):
        serial.draw(functools.partial(build_recorded, record, name), name)
    serial.json({"x": 1}, "summary")
    serial.finish()
    assert contents(tmp_path / "server") == contents(tmp_path / "serial")


def test_a_long_figure_in_the_server_does_not_hold_the_next_back(
    tmp_path: Path, forks: list[int]
) -> None:
    # two CPUs: the server hands each figure to a child of its own and draws
    # none itself, so "c" is drawn while "slow" still waits
    out = OutputWriter(tmp_path / "out", kind="k", background=True, warm=WARM)
    flag = tmp_path / "flag"
    out.draw(functools.partial(build_recorded, tmp_path / "pids", "a"), "a")
    out.draw(functools.partial(build_waiting, flag, "slow"), "slow")
    out.draw(functools.partial(build_recorded, tmp_path / "pids", "c"), "c")
    drawn = tmp_path / "out" / "k_c.png"
    deadline = time.monotonic() + 15
    while not drawn.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    drawn_first = drawn.exists()
    flag.touch()
    assert [p.name for p in out.finish()] == ["k_a.png", "k_slow.png", "k_c.png"]
    assert drawn_first
    pids = {int(line) for line in (tmp_path / "pids").read_text().split()}
    assert len(pids) == 3 and os.getpid() not in pids  # a child each


def build_with_data(record: Path, title: str, data: Any) -> Any:
    """:func:`build_recorded`, given some data to carry (a job of its size)."""
    return build_recorded(record, f"{title} {len(data)}")


def test_a_big_figure_job_is_taken_while_every_child_draws(
    tmp_path: Path, forks: list[int]
) -> None:
    # both children wait and a figure waits for a child: the server still
    # reads the next job (5 MB, more than the pipe holds) at once, so the
    # caller goes on
    import numpy as np

    out = OutputWriter(tmp_path / "out", kind="k", background=True, warm=WARM)
    flag = tmp_path / "flag"
    for name in ("slow1", "slow2", "c"):
        out.draw(functools.partial(build_waiting, flag, name), name)
    start = time.monotonic()
    big = np.zeros(5_000_000 // 8)
    out.draw(functools.partial(build_with_data, tmp_path / "pids", "big", big), "big")
    taken = time.monotonic() - start
    flag.touch()
    names = [p.name for p in out.finish()]
    assert names == ["k_slow1.png", "k_slow2.png", "k_c.png", "k_big.png"]
    assert taken < 10  # not held until a waiting figure ends (20 s)


def build_niceness(record: Path, title: str) -> Any:
    """:func:`build_recorded`, recording the process's niceness as it builds."""
    with record.open("a") as handle:
        handle.write(f"{title} {os.getpriority(os.PRIO_PROCESS, 0)}\n")
    return new_figure(3, 2)


def test_the_first_figure_keeps_its_priority_the_later_ones_yield(
    tmp_path: Path, forks: list[int]
) -> None:
    record = tmp_path / "nice"
    out = OutputWriter(tmp_path / "out", kind="k", background=True, warm=WARM)
    assert out._server is not None
    for name in ("heatmap", "violin", "loads"):
        out.draw(functools.partial(build_niceness, record, name), name)
    out.finish()
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    found = dict(line.split() for line in record.read_text().splitlines())
    later = min(ours + actorprof.write.LATER_FIGURES_NICENESS, 19)
    assert found == {"heatmap": str(ours), "violin": str(later), "loads": str(later)}
    assert os.getpriority(os.PRIO_PROCESS, 0) == ours  # not this process's


def test_a_figure_failing_in_the_server_is_its_error_in_call_order(
    tmp_path: Path, forks: list[int]
) -> None:
    out = OutputWriter(tmp_path, kind="k", background=True, warm=WARM)
    out.draw(functools.partial(build_recorded, tmp_path / "pids", "a"), "a")
    out.draw(functools.partial(build_failing, "first"), "b")
    out.draw(functools.partial(build_failing, "second"), "c")
    with pytest.raises(ValueError) as caught:
        out.finish()
    assert caught.value.args == ("first",)
    assert "in the process drawing the figure" in str(getattr(caught.value, "__notes__", ""))
    assert out.written == [tmp_path / "k_a.png"]
    assert (tmp_path / "k_a.png").exists() and not (tmp_path / "k_b.png").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_killed_server_is_an_error_and_a_builder_that_does_not_pickle_is_built_here(
    tmp_path: Path, forks: list[int]
) -> None:
    out = OutputWriter(tmp_path, kind="k", background=True, warm=WARM)
    out.draw(lambda: new_figure(3, 2), "local")  # a lambda does not pickle: built here
    assert (tmp_path / "k_local.png").read_bytes().startswith(b"\x89PNG")
    out.draw(build_killing_its_process, "a")
    with pytest.raises(ActorProfError, match=r"k_a\.png: the process drawing this figure stopped"):
        out.finish()
    assert out.written == [tmp_path / "k_local.png"]


def test_no_figure_server_without_a_spare_cpu(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(actorprof.write, "_spare_cpus", lambda: 0)
    out = OutputWriter(tmp_path, kind="k", background=True, warm=WARM)
    out.draw(functools.partial(build_recorded, tmp_path / "pids", "a"), "a")
    assert out.finish() == [tmp_path / "k_a.png"]
    assert forks == [] and (tmp_path / "pids").read_text().split() == [str(os.getpid())]


def test_a_server_builds_each_figure_in_a_child_while_a_cpu_is_spare(
    tmp_path: Path, forks: list[int]
) -> None:
    record = tmp_path / "pids"
    out = OutputWriter(tmp_path, kind="k", background=True, warm=WARM)
    server = out._server
    assert server is not None
    out.draw(functools.partial(build_recorded, record, "a"), "a")
    assert out.finish() == [tmp_path / "k_a.png"]
    # a CPU spare beside the server: the figure built (not only saved) by a child,
    # while the server could go on to the next
    pids = {int(line) for line in record.read_text().split()}
    assert len(pids) == 1 and not pids & {server.pid, os.getpid()}


def test_a_server_imports_matplotlib_without_its_3d_axes() -> None:
    import subprocess

    code = (
        "import sys, warnings\n"
        "warnings.filterwarnings('error', message='Unable to import Axes3D')\n"
        "from actorprof.write import _without_3d_axes\n"
        "with _without_3d_axes():\n"
        "    import matplotlib.figure\n"
        "import matplotlib.projections as projections\n"
        "print('mpl_toolkits.mplot3d' in sys.modules, '3d' in projections.get_projection_names())\n"
        "from mpl_toolkits.mplot3d import Axes3D\n"  # the real toolkit, still importable
        "print(Axes3D.__name__)\n"
    )
    env = {**os.environ, "MPLBACKEND": "Agg"}
    root = Path(__file__).resolve().parents[1]
    env["PYTHONPATH"] = str(root)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    import matplotlib

    if matplotlib.__version_info__[:2] >= (3, 9):
        assert result.stdout.split() == ["False", "False", "Axes3D"]
    else:  # registered unconditionally before 3.9: imported as ever
        assert result.stdout.split() == ["True", "True", "Axes3D"]


def test_a_server_imports_matplotlib_without_property_docs() -> None:
    # the Artists' set() docstrings list no properties (80 ms of the server's
    # start); kwdoc is put back after, and the figures drawn are the same
    # (the server's tests and the outputs' byte comparisons draw through it)
    code = (
        "import matplotlib.artist as artist\n"
        "kwdoc = artist.kwdoc\n"
        "from actorprof.write import _without_property_docs\n"
        "with _without_property_docs():\n"
        "    import matplotlib.axes, matplotlib.lines\n"
        "print('drawstyle' in (matplotlib.lines.Line2D.set.__doc__ or ''))\n"
        "print(artist.kwdoc is kwdoc, 'drawstyle' in artist.kwdoc(matplotlib.lines.Line2D))\n"
    )
    assert fresh_python(code).split() == ["False", "True", "True"]


# ------------------------------------------------------- the report's figures


def test_the_report_draws_in_its_figure_server_what_it_draws_here(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch, example: Path
) -> None:
    code, _, err = run("report", example, "-o", tmp_path / "bg", "--no-cache")
    assert code == 0, err
    assert len(forks) == 2  # the figure server (it forks a child per figure), report.json
    monkeypatch.setattr(actorprof.write, "_spare_cpus", lambda: 0)
    forks.clear()
    code, _, err = run("report", example, "-o", tmp_path / "serial", "--no-cache")
    assert code == 0, err
    assert forks == []
    assert contents(tmp_path / "bg") == contents(tmp_path / "serial")


def test_the_report_leaves_no_figure_folder_behind(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch, example: Path
) -> None:
    import gc
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    code, _, err = run("report", example, "-o", tmp_path / "out", "--no-cache")
    assert code == 0, err
    assert len(forks) == 2 and list(scratch.iterdir()) == []  # the server, report.json
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run("report", empty, "-o", tmp_path / "out2")  # fails after the server started
    assert code == 1 and "no trace of any kind" in err
    gc.collect()
    assert list(scratch.iterdir()) == []


def test_without_a_temporary_folder_the_report_draws_its_figures_here(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch, example: Path
) -> None:
    import tempfile

    def no_folder(*args: Any, **kwargs: Any) -> str:
        raise FileNotFoundError(2, "No usable temporary directory found")

    code, _, err = run("report", example, "-o", tmp_path / "served", "--no-cache")
    assert code == 0, err
    monkeypatch.setattr(tempfile, "mkdtemp", no_folder)
    forks.clear()
    code, _, err = run("report", example, "-o", tmp_path / "here", "--no-cache")
    assert code == 0, err
    assert len(forks) == 1  # report.json's writer; no figure server: figures drawn here
    assert contents(tmp_path / "here") == contents(tmp_path / "served")


def test_a_report_figure_failing_in_a_child_is_a_warning_and_the_page_goes_on(
    tmp_path: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch, example: Path
) -> None:
    import json

    import actorprof.plot
    import actorprof.plot.distribution

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("violin exploded")

    monkeypatch.setattr(actorprof.plot.distribution, "plot_violin", broken)
    monkeypatch.setattr(actorprof.plot, "plot_violin", broken)
    code, _, err = run("report", example, "-o", tmp_path, "--no-cache")
    assert code == 0, err
    assert forks
    summary = json.loads((tmp_path / "report.json").read_text())
    assert summary["figure_errors"] == {
        "logical ((unnamed))": "RuntimeError: violin exploded",
        "physical": "RuntimeError: violin exploded",
    }
    for key in summary["figure_errors"]:
        assert f"{key}: figure not drawn (RuntimeError: violin exploded)" in err
    names = [(f["section"], f["name"]) for f in summary["figures"]]
    assert ("logical", "heatmap") in names and ("logical", "loads") in names
    assert ("logical", "violin") not in names and ("physical", "violin") not in names


def test_a_writer_let_go_before_finish_lets_its_server_go(tmp_path: Path, forks: list[int]) -> None:
    import gc
    import time

    out = OutputWriter(tmp_path, kind="k", background=True, warm=WARM)
    server = out._server
    assert server is not None
    del out, server
    gc.collect()
    deadline = time.monotonic() + 20
    while True:  # the server saw the end of its jobs and left
        try:
            pid, _ = os.waitpid(forks[0], os.WNOHANG)
        except ChildProcessError:
            break  # reaped already
        if pid or time.monotonic() > deadline:
            assert pid
            break
        time.sleep(0.05)


# --- a JSON file made and written by a child ---------------------------------


def _made_in_the_child() -> dict[str, Any]:
    import numpy as np

    return {"pid": os.getpid(), "values": np.arange(3), "nan": float("nan")}


def test_json_beside_writes_what_json_writes(tmp_path: Path, forks: list[int]) -> None:
    out = OutputWriter(tmp_path, kind="k", background=True)
    send = out.json_beside(_made_in_the_child, "beside")
    assert send is not None and len(forks) == 1
    assert send({"last": [1, 2]}) == tmp_path / "k_beside.json"
    assert out.finish() == [tmp_path / "k_beside.json"]
    data = _made_in_the_child()
    data["pid"] = forks[0]  # made in the child
    data["last"] = [1, 2]  # sent last, written last
    OutputWriter(tmp_path, kind="k").json(data, "here")
    assert (tmp_path / "k_beside.json").read_bytes() == (tmp_path / "k_here.json").read_bytes()


def test_json_beside_without_a_spare_cpu_does_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(actorprof.write, "_spare_cpus", lambda: 0)
    out = OutputWriter(tmp_path, kind="k", background=True)
    assert out.json_beside(_made_in_the_child, "beside") is None
    assert out.finish() == [] and list(tmp_path.iterdir()) == []


def test_json_beside_failing_in_the_child_is_raised_at_finish(
    tmp_path: Path, forks: list[int]
) -> None:
    def broken() -> dict[str, Any]:
        raise ValueError("no summary")

    out = OutputWriter(tmp_path, kind="k", background=True)
    send = out.json_beside(broken, "beside")
    assert send is not None
    send({"last": 1})
    with pytest.raises(ValueError, match="no summary"):
        out.finish()
    assert list(tmp_path.iterdir()) == []


def test_json_beside_unsent_lets_the_child_go_without_writing(
    tmp_path: Path, forks: list[int]
) -> None:
    import gc

    out = OutputWriter(tmp_path, kind="k", background=True)
    send = out.json_beside(_made_in_the_child, "beside")
    assert send is not None
    del send  # the command stopped before the last items
    gc.collect()
    started = time.monotonic()
    with pytest.raises(ActorProfError, match=r"k_beside\.json: not written"):
        out.finish()
    assert time.monotonic() - started < 10 and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("made", "last"), [({}, {"a": 1}), ({}, {}), ({"a": [1.5]}, {})])
def test_json_beside_with_no_items_on_one_side(
    tmp_path: Path, forks: list[int], made: dict[str, Any], last: dict[str, Any]
) -> None:
    out = OutputWriter(tmp_path, kind="k", background=True)
    send = out.json_beside(functools.partial(dict, made), "beside")
    assert send is not None
    send(last)
    out.finish()
    OutputWriter(tmp_path, kind="k").json({**made, **last}, "here")
    assert (tmp_path / "k_beside.json").read_bytes() == (tmp_path / "k_here.json").read_bytes()

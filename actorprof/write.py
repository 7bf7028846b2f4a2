"""The last step of the pipeline: figures and tables into files, atomically.

Only this module writes files. A kind's ``write_<kind>(view, sink)`` draws
into a :class:`Sink`: an :class:`OutputWriter` (a folder of
``<kind>_<name>.<ext>`` files, what the CLI uses) or anything with the same
three methods (the report collects figures in memory). Figures are made
with :class:`matplotlib.figure.Figure`, never pyplot, so nothing ever opens
a window or depends on the global backend.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import gc
import importlib
import io
import itertools
import json
import math
import os
import pickle
import select
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

import numpy as np

from ._text import JsonText, PlainList, printable_name
from .errors import ActorProfError

if TYPE_CHECKING:
    from types import FrameType

    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "FIGURE_DPI",
    "FORMATS",
    "PNG_COMPRESS_LEVEL",
    "OutputWriter",
    "Sink",
    "keeps_tables",
    "label_run",
    "new_figure",
    "save_png",
    "titles_at_the_top",
    "to_jsonable",
]

FORMATS = ("png", "svg", "pdf")
#: Resolution of figure files unless told (dots per inch).
FIGURE_DPI = 150
#: zlib level of PNG figures (0-9): 3 encodes as fast as 1, twice as fast as Pillow's 6.
PNG_COMPRESS_LEVEL = 3


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


class Sink(Protocol):
    """Where a kind's writer puts its figures, tables and summary.

    A sink that keeps figures only (the report's collector: its tables and
    summary are its own) says so with ``tables = False``: the writers then
    make no table or summary for it (:func:`keeps_tables`).
    """

    def figure(self, fig: Figure, name: str) -> object: ...

    def draw(self, build: Callable[[], Figure], name: str) -> object: ...

    def csv(self, frame: pd.DataFrame, name: str, *, index: bool = True) -> object: ...

    def csv_parts(
        self, frames: Iterable[pd.DataFrame], name: str, *, index: bool = True
    ) -> object: ...

    def json(self, data: Any, name: str) -> object: ...


def keeps_tables(out: Sink) -> bool:
    """Whether ``out`` keeps the tables and summary a writer gives it (a sink
    is taken to, unless its ``tables`` is False): a 65,536-PE summary's
    per-file entries alone are 0.15 s to make."""
    return bool(getattr(out, "tables", True))


#: Cells of a table turned into CSV text at a time (then written).
_CSV_SLICE_CELLS = 2_000_000


def _csv_chunk_rows(columns: int) -> int:
    """Rows pandas formats at once when writing a CSV of ``columns`` columns.

    pandas' default, ``100_000 // columns`` rows, is one row for a frame of
    65,536 PE columns, and each chunk walks every column (a 65,536-PE
    timeline table: 11 s instead of 2). Wide frames get up to 16 rows (about
    a million cells per chunk); the bytes written are the same.
    """
    columns = max(columns, 1)
    return max(1, 100_000 // columns, min(16, 1_000_000 // columns))


def new_figure(width: float, height: float, *, nrows: int = 1, ncols: int = 1) -> Figure:
    """A pyplot-free figure of ``width`` x ``height`` inches with a grid of Axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    fig.subplots(nrows, ncols, squeeze=False)
    return fig


def label_run(
    fig: Figure, path: str | os.PathLike[str], phase: str | None = None, *, note: str = ""
) -> None:
    """Name the run (its folder's last two components) and phase above the figure.

    Two runs' figures must be told apart once they are files: every kind's
    figure carries this line. ``note`` is a further line under it.
    """
    from ._text import run_name

    line = f"run {run_name(path)}" + (f", phase {phase}" if phase else "")
    fig.suptitle(line + (f"\n{note}" if note else ""), fontsize="medium")


def titles_at_the_top(fig: Figure) -> None:
    """Each Axes' title at the top of its Axes, where matplotlib puts it.

    matplotlib places a title at every draw, and twice more in the layout,
    measuring the tick labels of the Axes and of its colour bars in case
    one reaches above the Axes: a tenth of a 64-PE heatmap's drawing, a
    third of a 65,536-PE physical heatmap's. For a figure where none does
    (ticks below, colour bars within the Axes' height, formatters without
    an offset text) the title stays at the top: a title given its place is
    not measured, and drawn at the same pixels. Only for such figures
    (their builders' tests compare the PNG bytes both ways).
    """
    for ax in fig.axes:
        title = ax.get_title()
        if title:
            ax.set_title(title, y=1.0)


def suptitle_of(fig: Figure) -> str:
    """The figure's suptitle text, or "" (``Figure.get_suptitle`` is matplotlib 3.8+)."""
    getter = getattr(fig, "get_suptitle", None)
    if getter is not None:
        return str(getter())
    title = getattr(fig, "_suptitle", None)  # matplotlib < 3.8
    return "" if title is None else str(title.get_text())


class OutputWriter:
    """Writes ``<kind>_<name>.<ext>`` files atomically into one folder.

    The folder is created if missing and checked for writing at once, before
    any work, so a job never computes for minutes to fail at the end.
    Existing files of the same name are replaced (atomically: a reader never
    sees half a file). ``written`` lists the paths in writing order.
    Figures are saved at ``dpi`` dots per inch (default :data:`FIGURE_DPI`).

    ``background=True`` lets a figure be drawn and saved by a forked child
    process while this one goes on (the next figure, the tables): only on
    Linux (``fork``), with no other thread running, and at most one child
    per CPU that is both usable by this process and idle (the CPUs less the
    1-minute load average): none on a one-CPU or a busy machine.
    :meth:`finish` must then be called: it waits for the children and
    raises the error a child met, the one the same figure would have raised
    here (a process that ends first stops its children, which leave no
    file: a Ctrl-C to it alone draws nothing more). Files stay atomic either way
    and hold the same bytes; ``written`` keeps the order of the calls. The
    files asked for after a figure that fails in the background are still
    written (whole): the serial route would have stopped at the figure.

    ``warm`` (with ``background``) goes further for figures given to
    :meth:`draw`: a figure server is forked at once, imports those modules
    (the plotting stack, the builders' module) while this process reads the
    trace, then builds and saves each figure sent to it. Imports and
    drawing then overlap the read instead of following it (the fixed cost
    of a small run: docs/performance.md). It takes one of the spare CPUs.

    Raises
    ------
    ActorProfError
        The folder cannot be created or written.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        kind: str,
        fmt: str = "png",
        dpi: int | None = None,
        background: bool = False,
        warm: Sequence[str] = (),
    ) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
        if dpi is not None and dpi < 1:
            raise ValueError(f"dpi must be positive, got {dpi}")
        self.dpi = FIGURE_DPI if dpi is None else dpi
        self.directory = Path(directory)
        self.kind = kind
        self.fmt = fmt
        self.written: list[Path] = []
        self._spare = _spare_cpus() if background else 0
        self._children: list[_Child] = []
        self._server: _FigureServer | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.directory, prefix=".actorprof-check-"):
                pass
        except OSError as exc:
            raise ActorProfError(
                f"{self.directory}: cannot write output here ({exc.strerror}). "
                "Choose another folder with -o/--output-dir."
            ) from exc
        if warm and self._spare and threading.active_count() == 1:
            self._server = _FigureServer.start(self, tuple(warm))
            if self._server is not None:
                self._spare -= 1  # the server's CPU

    def path(self, name: str, ext: str) -> Path:
        """``<dir>/<kind>_<name>.<ext>``."""
        return self.directory / f"{self.kind}_{name}.{ext}"

    def figure(self, fig: Figure, name: str, *, dpi: int | None = None) -> Path:
        """Save a figure in the chosen format, at ``dpi`` (default: the writer's)."""
        target = self.path(name, self.fmt)
        write = self._figure_writer(fig, dpi)
        self._reap(block=False)
        if len(self._children) < self._spare and threading.active_count() == 1:
            return self._fork(target, write)
        return self._atomic(target, write)

    def draw(self, build: Callable[[], Figure], name: str, *, dpi: int | None = None) -> Path:
        """Save the figure ``build()`` makes, as :meth:`figure` saves it.

        With a figure server (``warm``), ``build`` is sent to it and runs
        there: it must pickle (a module-level function, or a
        :func:`functools.partial` of one with picklable arguments); one that
        does not, or a server that is gone, builds the figure here.
        """
        if self._server is not None:
            target = self.path(name, self.fmt)
            # protocol 5: arrays travel as they are, never copied into the pickle
            # (a 65,536-PE timeline's table is 65 MB)
            arrays: list[pickle.PickleBuffer] = []
            try:
                job = pickle.dumps(build, protocol=5, buffer_callback=arrays.append)
                raws = [array.raw() for array in arrays]
            except Exception:  # not picklable: built here
                job = None
            if job is not None and self._server.submit(target, job, raws, dpi):
                self.written.append(target)
                return target
        return self.figure(build(), name, dpi=dpi)

    def _figure_writer(self, fig: Figure, dpi: int | None) -> Callable[[Any], None]:
        resolution = self.dpi if dpi is None else dpi

        def write(handle: Any) -> None:
            if self.fmt == "png":
                save_png(fig, handle, dpi=resolution)
            else:
                fig.savefig(handle, format=self.fmt, dpi=resolution)

        return write

    def finish(self) -> list[Path]:
        """Wait for the figures drawn in the background; return ``written``.

        Raises
        ------
        ActorProfError, or what drawing the figure raised
            The first failed figure's error (in the order of the calls); the
            figure's file is then absent, or its previous complete version.
        """
        self._reap(block=True)
        return self.written

    def _fork(self, target: Path, write: Callable[[Any], Any]) -> Path:
        """Write ``target`` in a forked child; the parent returns at once."""

        def work() -> bytes:
            self._write_file(target, write)  # not _atomic: no sibling to wait for
            return b""

        with _sigint_held():  # a Ctrl-C stops every child known (the server's: _stop_children)
            forked = fork_child(work)
            if forked is not None:
                self._children.append(_Child(*forked, target))
        if forked is None:  # no memory or process left for a child: draw it here
            return self._atomic(target, write)
        self.written.append(target)
        return target

    def _reap(self, *, block: bool) -> None:
        """Collect the children that are done (all of them when ``block``).

        Raises the error of the first failed figure in call order: once one
        has failed, every child is waited for.
        """
        failed = self._failures(block=block)
        if failed:
            error = next(iter(failed.values()))
            if self.written and type(error) is ActorProfError:
                # as a table's write error says: the files written are complete
                raise ActorProfError(f"{error} {self._complete()}") from error
            raise error

    def _complete(self) -> str:
        """What the files written so far are, for an error that ends the command."""
        names = ", ".join(p.name for p in self.written[:3])
        more = f" and {len(self.written) - 3} more" if len(self.written) > 3 else ""
        return (
            f"The {len(self.written)} other file(s) written are complete: {names}{more} "
            f"(in {self.written[0].parent})."
        )

    def _failures(self, *, block: bool) -> dict[Path, BaseException]:
        """:meth:`_reap` without raising: the figures that failed, by file
        (no longer in ``written``), in the order of the calls."""
        results = {child: child.collect() for child in self._children if block or child.done()}
        failed: dict[Path, BaseException] = {}
        if block and self._server is not None:
            server, self._server = self._server, None
            failed.update(server.finish())
        if failed or any(error is not None for error in results.values()):
            late = [child for child in self._children if child not in results]
            results.update((child, child.collect()) for child in late)
        for child in list(self._children):
            if child in results:
                self._children.remove(child)
                error = results[child]
                if error is not None:
                    failed[child.target] = error
        ordered = sorted(failed.items(), key=lambda item: self.written.index(item[0]))
        for target in failed:
            self.written.remove(target)
        return dict(ordered)

    def data(self, data: bytes, name: str, ext: str) -> Path:
        """Write bytes already encoded (e.g. a figure rendered once for two uses)."""
        return self._atomic(self.path(name, ext), lambda handle: handle.write(data))

    def csv(self, frame: pd.DataFrame, name: str, *, index: bool = True) -> Path:
        """Write a frame as CSV (index written as the first column by default)."""
        return self.csv_parts([frame], name, index=index)

    def csv_parts(self, frames: Iterable[pd.DataFrame], name: str, *, index: bool = True) -> Path:
        """Write frames of the same columns, one after another, as one CSV.

        The bytes of ``csv(pd.concat(frames))``, the frames taken as they come
        (a table built a block at a time is written as produced, never
        held whole); the header is the first frame's. No frame: an empty file.
        """

        def write(handle: Any) -> None:
            header = True
            for frame in frames:
                rows = _csv_chunk_rows(len(frame.columns))
                # a slice of rows at a time: the text of a whole big table (a
                # 65,536-PE link table is 388 MB) is never held
                step = max(rows, _CSV_SLICE_CELLS // max(len(frame.columns), 1))
                wide = _wide_integer_frame(frame, index=index)
                fast = None if wide else _plain_columns(frame, index=index)
                for start in range(0, max(len(frame), 1), step):
                    part = frame.iloc[start : start + step]
                    if not header and not len(part):
                        continue
                    if wide and len(part):  # many integer columns: one block of digits
                        if header:
                            head = part.iloc[:0].to_csv(index=index, lineterminator="\n")
                            handle.write(utf8(head))
                        handle.write(_block_rows(part, index=index))
                        header = False
                        continue
                    if fast is not None and len(part):  # integer columns: digits at once
                        if header:
                            head = part.iloc[:0].to_csv(index=index, lineterminator="\n")
                            handle.write(utf8(head))
                        handle.write(integer_rows([c[start : start + step] for c in fast]))
                        header = False
                        continue
                    text = part.to_csv(
                        index=index, header=header, lineterminator="\n", chunksize=rows
                    )
                    header = False
                    handle.write(utf8(text))

        return self._atomic(self.path(name, "csv"), write)

    def json(self, data: Any, name: str) -> Path:
        """Write JSON (numpy scalars and NaN handled: NaN becomes null).

        An iterator in ``data`` is written as the list it yields, an item at
        a time (:func:`iter_json`): its items are never all held.
        """

        def write(handle: Any) -> None:
            pieces: list[str] = []
            size = 0
            for piece in iter_json(to_jsonable(data)):
                pieces.append(piece)
                size += len(piece)
                if size >= 1 << 20:
                    handle.write("".join(pieces).encode())
                    pieces, size = [], 0
            pieces.append("\n")
            handle.write("".join(pieces).encode())

        return self._atomic(self.path(name, "json"), write)

    def json_beside(
        self, build: Callable[[], dict[str, Any]], name: str
    ) -> Callable[[dict[str, Any]], Path] | None:
        """Write the JSON of ``build()`` in a forked child while this process goes on.

        The child makes the dict and the text of its items, then waits for
        the last items: the returned function sends them (a picklable dict,
        added at the end) and returns the file's path; the child then
        writes the bytes :meth:`json` writes for the whole dict (the text
        is held in the child, not in this process). :meth:`finish` waits
        for it and raises its error. None, with nothing done, when no child
        may be forked (no spare CPU, another thread, no ``fork``): write it
        with :meth:`json`. A sender dropped unsent lets the child go
        without writing.
        """
        if not (len(self._children) < self._spare and threading.active_count() == 1):
            return None
        target = self.path(name, "json")
        last_read, last_write = os.pipe()

        def work() -> bytes:  # pragma: no cover - runs in the child
            os.close(last_write)
            data = to_jsonable(build())
            # the text of the items made here, while the last ones are awaited
            texts = ["{\n", *_json_items(data, level=0, first=True)]
            with os.fdopen(last_read, "rb") as pipe:
                sent = pipe.read()
            if not sent:  # the caller gave up: nothing is written
                raise ActorProfError(f"{target}: not written (the command stopped)")
            last = to_jsonable(pickle.loads(sent))
            texts += [*_json_items(last, level=0, first=not data), "\n}\n"]
            if not data and not last:
                texts = ["{}\n"]
            self._write_file(target, lambda handle: handle.write("".join(texts).encode()))
            return b""

        forked = fork_child(work)
        os.close(last_read)
        if forked is None:
            os.close(last_write)
            return None
        self._children.append(_Child(*forked, target, doing="writing this file"))
        self.written.append(target)

        def send(last: dict[str, Any]) -> Path:
            closing.detach()
            try:
                _write_all(last_write, pickle.dumps(last, protocol=pickle.HIGHEST_PROTOCOL))
            except OSError:  # the child is gone: finish() says why
                pass
            finally:
                os.close(last_write)
            return target

        closing = weakref.finalize(send, os.close, last_write)  # dropped unsent: the child leaves
        return send

    def text(self, text: str, name: str, ext: str) -> Path:
        """Write a text file (UTF-8), atomically."""
        return self._atomic(self.path(name, ext), lambda handle: handle.write(utf8(text)))

    def _atomic(self, target: Path, write: Callable[[Any], Any]) -> Path:
        """:meth:`_write_file`; when it fails, a figure that failed earlier in the
        background is the error raised (the one the serial route meets first).
        Not on Ctrl-C: the figures' children stopped by the same Ctrl-C
        would be reported as failed figures, and waited for."""
        try:
            return self._write_file(target, write)
        except KeyboardInterrupt:
            raise
        except BaseException:
            self._reap(block=True)
            raise

    def _write_file(self, target: Path, write: Callable[[Any], Any]) -> Path:
        """Write to a temporary file beside ``target``, then rename it over ``target``.

        On any failure the temporary file is removed and ``target`` is left as
        it was (absent, or the previous complete file).

        Raises
        ------
        ActorProfError
            The file cannot be written (disk full, quota, permissions...).
        """
        try:
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{target.name}.", suffix=".tmp")
        except OSError as exc:
            raise self._write_error(target, exc) from exc
        _WRITING.append(tmp)
        try:
            with os.fdopen(fd, "wb") as handle:
                write(handle)
            os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; outputs are shared
            os.replace(tmp, target)
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise self._write_error(target, exc) from exc
            raise
        finally:
            _WRITING.remove(tmp)
        self.written.append(target)
        return target

    def _write_error(self, target: Path, exc: OSError) -> ActorProfError:
        done = (
            f" ({len(self.written)} file(s) written before it are complete)" if self.written else ""
        )
        return ActorProfError(
            f"{target}: cannot write this output ({exc.strerror or exc}); nothing half-written "
            f"was left{done}. Is the disk or quota full? Free space, or choose another folder "
            "with -o/--output-dir."
        )


def _spare_cpus() -> int:
    """CPUs this process may use beyond its own and that are idle, when it may
    fork (else 0).

    Idle: the machine's CPUs less those busy with other work
    (:func:`_busy_cpus`). On a busy machine a child only takes CPU from
    other work and pays for the fork (a loaded 2-CPU machine ran the 8-PE
    example slower with it).
    """
    if not sys.platform.startswith("linux"):
        # no fork (Windows), or fork unsafe once system frameworks have run
        # threads (macOS, where Python's own default is spawn)
        return 0
    getter = getattr(os, "sched_getaffinity", None)
    usable = len(getter(0)) if getter is not None else (os.cpu_count() or 1)
    idle = (os.cpu_count() or usable) - _busy_cpus()
    return max(min(usable - 1, math.floor(idle)), 0)


def _busy_cpus(loadavg: str = "/proc/loadavg") -> float:
    """CPUs running other work now: the threads running on the machine less
    this one (``/proc/loadavg``'s fourth field), else the 1-minute load average.

    The load average lags: commands run one after another (a job epilogue's
    script) left a 2-CPU machine at load 1.2 with nothing else running, and
    no figure was drawn beside the read.
    """
    try:
        with open(loadavg, "rb") as f:
            running = int(f.read().split()[3].split(b"/")[0])
        return float(max(running - 1, 0))
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this system
        return 0.0


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """SIGINT held back (blocked) inside: one that comes meanwhile is received
    on leaving."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _fork() -> int:
    """``os.fork()`` with SIGINT held back until both processes have run their
    at-fork handlers: a Ctrl-C inside one of them is printed as ``Exception
    ignored in ...`` with a traceback. Held back, it comes once they are done."""
    with _sigint_held():
        return os.fork()


@functools.cache
def _prctl() -> Any:
    """libc's ``prctl`` (Linux), loaded once, in the parent; None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PR_SET_PDEATHSIG = 1


def _stop_with_parent(parent: int) -> None:  # pragma: no cover - runs in the child
    """SIGINT to this child when the process that forked it ends first: a
    command stopped by a SIGINT to itself alone (``kill -INT``) leaves no
    figure to be written after it has ended (Linux; elsewhere the child
    finishes its file)."""
    prctl = _prctl()
    if prctl is None or prctl(_PR_SET_PDEATHSIG, signal.SIGINT, 0, 0, 0) != 0:
        return
    if os.getppid() != parent:  # it ended before: no signal will come
        os.kill(os.getpid(), signal.SIGINT)


def fork_child(work: Callable[[], bytes]) -> tuple[int, int] | None:
    """Run ``work`` in a forked child; its pid and the pipe it answers on.

    The child sends what ``work`` returns, or its error pickled with its
    traceback (:func:`_failure`) and exits 1; it runs without garbage
    collection (a collection would walk, and copy, every page shared with
    the parent) and leaves by ``os._exit``. None: no process could be made.
    """
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        stream.flush()
    parent = os.getpid()
    _prctl()  # loaded here once, not in each child
    read_end, write_end = os.pipe()
    try:
        pid = _fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
        status = 0
        try:
            if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # (nohup: ignored still)
                signal.signal(signal.SIGINT, _child_interrupted)
                _stop_with_parent(parent)
            if hasattr(signal, "pthread_sigmask"):  # held by the caller until it knows this child
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            os.close(read_end)
            gc.disable()
            try:
                payload = work()
            except BaseException as exc:  # every failure goes to the parent
                status = 1
                payload = _failure(exc)
            if payload:
                _send(write_end, payload)
        finally:
            os._exit(status)  # no atexit handlers, no flush of the parent's buffers
    os.close(write_end)
    return pid, read_end


class ForkedChild:
    """A child of :func:`fork_child`: whether it is done, and what it sent."""

    def __init__(self, pid: int, pipe: int) -> None:
        self.pid, self.pipe = pid, pipe
        self._status: int | None = None

    def done(self) -> bool:
        """Whether the child has exited (it is then reaped: call :meth:`received`)."""
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid:
            self._status = status
        return bool(pid)

    def received(self) -> tuple[bytes, int]:
        """What the child sent, and its wait status (waits for it)."""
        with os.fdopen(self.pipe, "rb") as pipe:
            payload = pipe.read()  # before waiting: a long answer must not block the child
        if self._status is None:
            self._status = os.waitpid(self.pid, 0)[1]
        return payload, self._status


class _Child(ForkedChild):
    """A forked child writing one file; its failure comes back through a pipe."""

    def __init__(
        self, pid: int, pipe: int, target: Path, *, doing: str = "drawing this figure"
    ) -> None:
        super().__init__(pid, pipe)
        self.target, self.doing = target, doing

    def collect(self) -> BaseException | None:
        """The child's error, None when it wrote its file (waits for it)."""
        payload = self.outcome()
        return None if payload is None else _restore(payload)

    def outcome(self) -> bytes | None:
        """The child's error pickled, None when it wrote its file (waits for it)."""
        payload, status = self.received()
        if payload:
            return payload
        if os.waitstatus_to_exitcode(status) != 0:
            return pickle.dumps(_stopped(self.target, status, self.doing))
        return None


def _stopped(target: Path, status: int, doing: str = "drawing this figure") -> ActorProfError:
    return ActorProfError(
        f"{target}: the process {doing} stopped "
        f"({_exit_text(status)}); nothing half-written was left. Rerun; if it "
        "happens again, report it."
    )


#: Niceness added to the children of a figure server's figures after the
#: first. A command's first figure is its heatmap, the longest to draw (0.8 s
#: of the 0.9 s after a 65,536-file read): when the CPUs are shared with the
#: command's own writing and the other figures, those yield to it.
#: ``logical`` on 2 M lines in 65,536 / 64 files: 2.40 / 1.05 -> 2.30 / 0.99 s
#: (docs/performance.md, "seventh round").
LATER_FIGURES_NICENESS = 5

#: Bytes a figure server's job pipe may hold before a sender waits (Linux's
#: default 64 KiB would hold this process while the server still imports).
_JOB_PIPE_BYTES = 1 << 20


class _FigureServer:
    """A forked process that builds and saves the figures sent to it.

    Forked before the heavy imports, it imports the plotting stack (the
    ``warm`` modules) while the caller reads; each job is a pickled figure
    builder and its file, read as soon as it comes (the caller never waits
    for a figure), then built and saved by a child of its own, one child
    per spare CPU and the caller's (the jobs wait for one to end when all
    are drawing; the server draws nothing itself); at :meth:`finish` it
    waits for its children and sends back the failures, by file.
    """

    def __init__(self, pid: int, jobs: int, results: int) -> None:
        self.pid, self.jobs, self.results = pid, jobs, results
        self.targets: list[Path] = []
        # a command that fails before finish(): the server sees the end of its
        # jobs and leaves, and is reaped if it already has
        self._abandon = weakref.finalize(self, _abandon, pid, jobs, results)

    @classmethod
    def start(cls, writer: OutputWriter, warm: tuple[str, ...]) -> _FigureServer | None:
        """Fork the server for ``writer`` (None when no process can be made)."""
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            stream.flush()
        jobs_read, jobs_write = os.pipe()
        results_read, results_write = os.pipe()
        caller = os.getpid()
        _prctl()  # loaded here, not in the server
        try:
            pid = _fork()
        except OSError:
            for fd in (jobs_read, jobs_write, results_read, results_write):
                os.close(fd)
            return None
        if pid == 0:  # pragma: no cover - the server (coverage does not follow it)
            status = 0
            try:
                os.close(jobs_write)
                os.close(results_read)
                _serve(writer, warm, jobs_read, results_write, caller)
            except BaseException:  # a job cut short, an error
                status = 1
                with contextlib.suppress(BaseException):
                    _stop_children(writer._children)
            finally:
                os._exit(status)  # no atexit handlers, no flush of the parent's buffers
        os.close(jobs_read)
        os.close(results_write)
        with contextlib.suppress(ImportError, AttributeError, OSError):  # else the default
            import fcntl

            fcntl.fcntl(jobs_write, fcntl.F_SETPIPE_SZ, _JOB_PIPE_BYTES)
        return cls(pid, jobs_write, results_read)

    def submit(self, target: Path, build: bytes, arrays: list[memoryview], dpi: int | None) -> bool:
        """Send a job (its pickle and its out-of-band buffers); False when the
        server is gone (the caller draws it)."""
        sizes = [len(build)] + [array.nbytes for array in arrays]
        head = pickle.dumps((str(target), dpi, sizes), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self.jobs, len(head).to_bytes(8, "little") + head)
            parts: list[bytes | memoryview] = [build, *arrays]
            for part in parts:
                _write_all(self.jobs, part)
        except OSError:
            return False
        self.targets.append(target)
        return True

    def finish(self) -> dict[Path, BaseException]:
        """Wait for the server; the figures that failed, with their errors."""
        try:
            self._abandon.detach()
            with contextlib.suppress(OSError):  # gone: its status says why
                _write_all(self.jobs, bytes(8))  # the end of the jobs
            os.close(self.jobs)
            with os.fdopen(self.results, "rb") as pipe:
                payload = pipe.read()
            status = os.waitpid(self.pid, 0)[1]
        except KeyboardInterrupt:  # to this process alone (kill -INT): the figures stop too
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGINT)
            raise
        if payload:
            return {Path(target): _restore(error) for target, error in pickle.loads(payload)}
        if os.waitstatus_to_exitcode(status) != 0 and self.targets:
            return {target: _stopped(target, status) for target in self.targets}
        return {}


def _abandon(pid: int, jobs: int, results: int) -> None:
    for fd in (jobs, results):
        with contextlib.suppress(OSError):
            os.close(fd)
    with contextlib.suppress(OSError):
        os.waitpid(pid, os.WNOHANG)


def _serve(  # pragma: no cover - runs in the server
    writer: OutputWriter, warm: tuple[str, ...], jobs_fd: int, results_fd: int, caller: int
) -> None:
    """The figure server's loop (see :class:`_FigureServer`); ``caller`` is
    the process that forked it."""
    with _without_3d_axes(), _without_property_docs():
        for module in warm:
            with contextlib.suppress(Exception):  # a job that needs it fails, and says why
                importlib.import_module(module)
    gc.freeze()  # what the imports made is never collected: no walk over it
    spare = writer._spare + 1  # the caller's CPU too: it waits for the figures
    writer._spare, writer._children, writer.written = spare, [], []
    failures: list[tuple[str, bytes]] = []

    def interrupted(signum: int, frame: FrameType | None) -> None:
        # here, not by a KeyboardInterrupt, which a destructor running at that
        # moment would swallow (printed as "Exception ignored")
        _stop_children(writer._children)
        os._exit(1)

    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, interrupted)  # Ctrl-C, or the caller's (finish)
        _stop_with_parent(caller)  # and the caller's end, should its pipe not say so

    def reap(block: bool) -> None:
        for child in list(writer._children):
            if block or child.done():
                collect(child)

    def collect(child: _Child) -> None:
        error = child.outcome()  # a Ctrl-C while waiting: the child is still to stop
        writer._children.remove(child)
        if error is not None:
            failures.append((str(child.target), error))

    # figures received but not handed out yet: every job is read as soon as it
    # comes (its sender never waits for a figure to end), each drawn once a
    # child may be forked
    pending: collections.deque[tuple[str, int | None, Callable[[], Figure]]]
    pending = collections.deque()
    nice = 0  # the first figure's child (the heatmap, the longest) keeps its priority
    with os.fdopen(jobs_fd, "rb", buffering=0) as jobs:
        more = True
        while True:
            reap(block=False)
            while pending and len(writer._children) < spare:
                target, dpi, builder = pending.popleft()
                # built in the child: this process only hands out the figures, so
                # a long one never holds the next back while a CPU is free
                try:
                    writer._fork(Path(target), _build_and_write(writer, builder, dpi, nice))
                except Exception as exc:
                    failures.append((target, _failure(exc)))
                del builder
                nice = LATER_FIGURES_NICENESS
            if not more and not pending:
                break  # every figure handed out: reap(block=True) waits for them
            # the next job, or (figures waiting) the first child to end
            waiting = [child.pipe for child in writer._children] if pending else []
            ready, _, _ = select.select(([jobs_fd] if more else []) + waiting, [], [])
            if jobs_fd not in ready:
                collect(next(child for child in writer._children if child.pipe in ready))
                continue
            try:
                size = int.from_bytes(_read_exactly(jobs, 8), "little")
            except EOFError:  # the caller is gone without finishing: nothing to report
                _stop_children(writer._children)
                return
            if not size:
                more = False
                continue
            target, dpi, sizes = pickle.loads(_read_exactly(jobs, size))
            build, *arrays = (_read_exactly(jobs, n) for n in sizes)
            try:
                pending.append((target, dpi, pickle.loads(build, buffers=arrays)))
            except Exception as exc:
                failures.append((target, _failure(exc)))
            del build, arrays
    reap(block=True)
    _write_all(results_fd, pickle.dumps(failures) if failures else b"")
    os.close(results_fd)


def _stop_children(children: list[_Child]) -> None:  # pragma: no cover - runs in the server
    """Stop the figures being drawn for a caller that is gone (a Ctrl-C or a
    ``kill -INT`` to the command alone, an error): no figure is written
    after the command has ended, and none is left half-written.

    Each child is sent SIGINT: it removes its temporary file and leaves
    (:func:`_child_interrupted`; a second SIGINT, after a terminal's Ctrl-C
    reached it too, does the same).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # this process stops them whatever comes
    live = [child for child in children if child._status is None]  # a reaped pid may be reused
    for child in live:
        with contextlib.suppress(OSError):
            os.kill(child.pid, signal.SIGINT)
    deadline = time.monotonic() + _STOP_WAIT_S
    for child in live:
        # a child that has not left by then (its SIGINT lost or ignored) is
        # killed, and its temporary file removed here
        while not _reaped(child.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        if not _reaped(child.pid):
            with contextlib.suppress(OSError):
                os.kill(child.pid, signal.SIGKILL)
                os.waitpid(child.pid, 0)
            for tmp in child.target.parent.glob(f".{child.target.name}.*.tmp"):
                tmp.unlink(missing_ok=True)


#: How long the children stopped by :func:`_stop_children` have to leave.
_STOP_WAIT_S = 2.0


def _reaped(pid: int) -> bool:  # pragma: no cover - runs in the server
    """Whether child ``pid`` has ended (reaped now), or is no child of this process."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True


#: The temporary files being written by this process (:meth:`OutputWriter._write_file`).
_WRITING: list[str] = []


def _child_interrupted(signum: int, frame: FrameType | None) -> None:  # pragma: no cover
    """A forked child's SIGINT handler: its temporary file removed, then out.

    Here and not by a KeyboardInterrupt, which a destructor running at that
    moment would swallow (the child then drew on, and wrote its figure).
    """
    for tmp in _WRITING:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    os._exit(1)


def _build_and_write(  # pragma: no cover - runs in the server
    writer: OutputWriter, build: Callable[[], Figure], dpi: int | None, nice: int = 0
) -> Callable[[Any], None]:
    """What writes the file of the figure ``build()`` makes (built when called),
    at ``nice`` more niceness (:data:`LATER_FIGURES_NICENESS`)."""

    def write(handle: Any) -> None:
        if nice:
            with contextlib.suppress(OSError):
                os.nice(nice)
        writer._figure_writer(build(), dpi)(handle)

    return write


@contextlib.contextmanager
def _without_property_docs() -> Iterator[None]:  # pragma: no cover - runs in the server
    """Imports in which matplotlib writes no property list into docstrings.

    Each Artist class matplotlib defines gets a ``set()`` whose docstring
    lists every property the class has, with the values it takes, read from
    the setters' docstrings (``matplotlib.artist.kwdoc``): 80 ms of a figure
    server's imports, for text nobody reads there (the server and its
    children draw and exit). ``kwdoc`` gives an empty list meanwhile and is
    put back after; nothing but docstrings uses it.
    """
    if "matplotlib.axes" in sys.modules:
        yield
        return
    try:
        import matplotlib.artist as artist
    except ImportError:  # a job that needs it fails, and says why
        yield
        return
    kwdoc = getattr(artist, "kwdoc", None)
    if not callable(kwdoc):
        yield
        return
    artist.kwdoc = lambda _artist: ""  # type: ignore[assignment]
    try:
        yield
    finally:
        artist.kwdoc = kwdoc


@contextlib.contextmanager
def _without_3d_axes() -> Iterator[None]:  # pragma: no cover - runs in the server
    """Imports in which matplotlib does not load its 3-D Axes.

    ``matplotlib.projections`` imports ``mpl_toolkits.mplot3d`` to register
    the "3d" projection (20 ms of a figure server's start, which draws no
    3-D Axes). A stand-in without ``Axes3D`` makes matplotlib skip it (its
    own path when the toolkit is missing, since matplotlib 3.9; older ones
    register it unconditionally, so there it is imported as before); the
    real toolkit stays importable after.
    """
    name = "mpl_toolkits.mplot3d"
    if "matplotlib.projections" in sys.modules or name in sys.modules:
        yield
        return
    import matplotlib

    if tuple(getattr(matplotlib, "__version_info__", (0, 0))[:2]) < (3, 9):
        yield
        return
    import types

    stand_in = types.ModuleType(name)
    stand_in.Axes3D = None  # type: ignore[attr-defined]
    sys.modules[name] = stand_in
    try:
        with warnings.catch_warnings():
            # a matplotlib that needs more of the toolkit warns that it lacks it
            warnings.filterwarnings("ignore", message="Unable to import Axes3D")
            yield
    finally:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]


def _read_exactly(stream: io.RawIOBase, size: int) -> bytearray:  # pragma: no cover
    data = bytearray(size)
    view, done = memoryview(data), 0
    while done < size:
        got = stream.readinto(view[done:])
        if not got:
            raise EOFError("the job ended early")
        done += got
    return data


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _exit_text(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    return f"signal {-code}" if code < 0 else f"exit status {code}"


def _failure(exc: BaseException) -> bytes:
    """``exc`` pickled, with the child's traceback as a note (``-v`` shows it)."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    note = "in the process drawing the figure:\n" + text.rstrip()
    try:
        _add_note(exc, note)
        return pickle.dumps(exc)
    except Exception:  # an exception that does not pickle
        copy = RuntimeError(f"{type(exc).__name__}: {exc}")
        _add_note(copy, note)
        return pickle.dumps(copy)


def _add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)`` (Python 3.11); on 3.10, the same ``__notes__``
    list, which tracebacks there do not print."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:
        notes = getattr(exc, "__notes__", None)
        if not isinstance(notes, list):
            notes = []
            exc.__notes__ = notes
        notes.append(note)


def _restore(payload: bytes) -> BaseException:
    error = pickle.loads(payload)  # our own child wrote it
    if not isinstance(error, BaseException):
        return RuntimeError(f"unexpected failure report {error!r}")
    return error


def _send(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.close(fd)


class _TextRows:
    """A column's text, one row of bytes per value (0 bytes after it), made
    for the rows asked (``column[a:b]``): a table of millions of rows (a
    65,536-PE physical trace's links) is written a slice at a time, and the
    text of a whole column (its labels, its floats) is never held."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[slice], np.ndarray]) -> None:
        self.make = make

    def __getitem__(self, rows: slice) -> np.ndarray:
        return self.make(rows)


def _plain_columns(frame: pd.DataFrame, *, index: bool) -> list[np.ndarray | _TextRows] | None:
    """The columns to write (the index first when written) when every one is
    a numpy integer array (no missing values possible), else None."""
    import pandas as pd

    columns: list[Any] | None = None
    if frame.columns.is_unique:
        columns = [frame[name] for name in frame.columns]
    if columns is None or not columns:
        return None
    if index:
        if isinstance(frame.index, pd.MultiIndex):
            return None
        columns.insert(0, frame.index)
    # numpy dtypes only: a nullable Int64 column may hold missing values
    out: list[np.ndarray | _TextRows] = []
    for c in columns:
        if isinstance(c.dtype, np.dtype) and c.dtype.kind in "iu":
            out.append(c.to_numpy())
        elif isinstance(c.dtype, np.dtype) and c.dtype.kind == "f":
            out.append(_float_rows(c.to_numpy()))
        elif isinstance(c.dtype, np.dtype) and c.dtype.kind == "b":
            out.append(_words_rows([b"False", b"True"], c.to_numpy().astype(np.intp)))
        elif isinstance(c.dtype, pd.CategoricalDtype) and (labels := _label_rows(c)) is not None:
            out.append(labels)  # a send type: its text, as rows of bytes
        elif _is_text(c) and (text := _text_rows(c)) is not None:
            out.append(text)
        elif isinstance(c.dtype, pd.api.extensions.ExtensionDtype) and c.dtype.kind in "iu":
            # a nullable integer column: a missing value is an empty field
            out.append(_nullable_rows(c.to_numpy(dtype=np.int64, na_value=0), np.asarray(c.isna())))
        else:
            return None
    if len(out) == 1 and isinstance(out[0], _TextRows):
        whole = out[0][:]
        if not whole.any(axis=1).all():
            return None  # a row of one empty field: CSV writes it quoted ("")
    return out


def _float_rows(values: np.ndarray) -> _TextRows:
    return _TextRows(lambda rows: _float_matrix(values[rows]))


def _nullable_rows(values: np.ndarray, missing: np.ndarray) -> _TextRows:
    def make(rows: slice) -> np.ndarray:
        digits = _digit_matrix(values[rows])
        digits[missing[rows]] = 0
        return digits

    return _TextRows(make)


def _float_matrix(values: np.ndarray) -> np.ndarray:
    """Floats as ``to_csv`` writes them (``astype(str)``: the shortest text
    that reads back the same value; NaN an empty field), one row of bytes
    per value (0 bytes after it). Python's ``repr`` of a float64 is that
    text, made in two thirds of the time (65,536 PEs' 14 columns: 0.28 s)."""
    if not len(values):
        return np.zeros((0, 1), np.uint8)
    if values.dtype == np.float64:
        text = np.array(list(map(float.__repr__, values.tolist())), dtype="S")
    else:  # float32's own shortest text, not its float64 value's
        text = values.astype(str).astype("S")
    text[np.isnan(values)] = b""
    rows: np.ndarray = text.view(np.uint8).reshape(len(values), -1)
    return rows


def _words_rows(words: list[bytes], codes: np.ndarray) -> _TextRows:
    """``words[code]`` for each code, one row of bytes per value (0 bytes after it)."""
    width = max(len(b) for b in words)
    table = np.zeros((len(words), width), np.uint8)
    for k, b in enumerate(words):
        table[k, : len(b)] = np.frombuffer(b, np.uint8)
    return _TextRows(lambda rows: table[codes[rows]])


def _is_text(column: Any) -> bool:
    """A column of Python strings (object or a string dtype)."""
    import pandas as pd

    return column.dtype == object or isinstance(column.dtype, pd.StringDtype)


def _text_rows(column: Any) -> _TextRows | None:
    """A column of plain strings as rows of bytes (via their distinct values);
    None when a value is missing or not a plain string (:func:`_plain_label`)."""
    codes, uniques = column.factorize(use_na_sentinel=True)
    codes = np.asarray(codes)
    if not len(uniques) or (codes < 0).any():
        return None
    words = [u.encode("utf-8") if type(u) is str else None for u in uniques]
    if not all(w is not None and _plain_label(w) for w in words):
        return None
    return _words_rows([w for w in words if w is not None], codes)


def _plain_label(text: bytes) -> bool:
    """Written as it is by CSV: not empty, nothing CSV quotes (a comma, a
    quote, a line end), no 0 byte (the matrices' padding)."""
    return bool(text) and not any(ch in text for ch in (b",", b'"', b"\n", b"\r", b"\0"))


def _label_rows(column: Any) -> _TextRows | None:
    """The text of a categorical column of plain labels, one row of bytes per
    value (0 bytes after it); None when a value is missing or a label is not
    plain (empty, or holding what CSV quotes: a comma, a quote, a line end)."""
    codes = np.asarray(column.cat.codes)
    labels = [str(c).encode("utf-8") for c in column.cat.categories]
    if not labels or (codes < 0).any() or type(column.cat.categories[0]) is not str:
        return None
    if not all(_plain_label(b) for b in labels):
        return None
    return _words_rows(labels, codes)


#: Columns from which a table of integers is written as one block of digits.
_WIDE_COLUMNS = 64


def _wide_integer_frame(frame: pd.DataFrame, *, index: bool) -> bool:
    """Whether ``frame`` is wide (a column per PE) and all numpy integers, with
    an index (when written) of integers or of floats without NaN."""
    import pandas as pd

    if len(frame.columns) < _WIDE_COLUMNS or not len(frame):
        return False
    if not all(isinstance(t, np.dtype) and t.kind in "iu" for t in frame.dtypes):
        return False
    if not index:
        return True
    ix = frame.index
    if isinstance(ix, pd.MultiIndex) or not isinstance(ix.dtype, np.dtype):
        return False
    return ix.dtype.kind in "iu" or (ix.dtype.kind == "f" and not bool(np.isnan(ix).any()))


def _block_rows(part: pd.DataFrame, *, index: bool) -> bytes:
    """CSV rows of a wide integer frame (:func:`_wide_integer_frame`): the
    bytes ``to_csv`` writes for them (a float index as ``repr``, as pandas
    writes it), without a Series per column (65,536 of them took seconds)."""
    values = part.to_numpy()
    n_rows, n_cols = values.shape
    digits = _digit_matrix(values.ravel()).reshape(n_rows, n_cols, -1)
    ends = np.full((n_rows, n_cols, 1), ord(","), np.uint8)
    ends[:, -1, 0] = ord("\n")
    text = np.concatenate([digits, ends], axis=2).reshape(n_rows, -1)
    heads: list[bytes] = [b""] * n_rows
    if index:
        ix = part.index.to_numpy()
        if ix.dtype.kind == "f":
            heads = [repr(float(v)).encode() + b"," for v in ix.tolist()]
        else:
            heads = [b"%d," % v for v in ix.tolist()]
    return b"".join(head + row[row != 0].tobytes() for head, row in zip(heads, text, strict=True))


def integer_rows(columns: list[np.ndarray]) -> bytes:
    """CSV rows (``,`` between fields, ``\n`` after each row) of integer
    columns (or rows of text bytes: :class:`_TextRows`' slices) of equal length:
    the bytes ``DataFrame.to_csv`` writes for them, three times as fast
    (digits are computed for all rows at once; a 2 M-row pairs table of
    65,536 PEs took a second in ``to_csv``)."""
    words = _word_rows(columns)
    if words is not None:
        return words
    n = len(columns[0])
    parts: list[np.ndarray] = []
    for k, column in enumerate(columns):
        parts.append(column if column.ndim == 2 else _digit_matrix(column))  # 2-D: text
        last = k == len(columns) - 1
        parts.append(np.full((n, 1), ord("\n") if last else ord(","), np.uint8))
    text = np.concatenate(parts, axis=1).ravel()
    rows: bytes = text[text != 0].tobytes()  # 0: padding before a short number
    return rows


def _word_rows(columns: list[np.ndarray]) -> bytes | None:
    """:func:`integer_rows` of columns of integers none negative, their text
    made 4 bytes (one ``uint32``) at a time from tables, straight into the
    rows; None for other columns (text rows, a negative value).

    A field is its value's last 3 digits and the separator after them in one
    word, and the digits before in words of 4 (base 10,000), left to right;
    0 bytes stand for the zeros before a value's first digit and are taken
    out at the end. A 65,536-PE pairs table (875,568 rows of six columns)
    in half the time of a matrix of digits per column joined after.
    """
    if any(c.ndim != 1 or c.dtype.kind not in "iu" for c in columns):
        return None
    n = len(columns[0])
    if not n:
        return b""
    tops = []
    for column in columns:
        if column.dtype.kind == "i" and int(column.min()) < 0:
            return None
        tops.append(int(column.max()))
    last, high = _word_tables()
    counts = [1 + -(-max(len(str(top)) - 3, 0) // 4) for top in tops]  # words a field
    text = np.empty((n, sum(counts)), np.uint32)
    at = 0
    for k, (column, top, count) in enumerate(zip(columns, tops, counts, strict=True)):
        work: np.ndarray = column.astype(np.uint32 if top < 2**32 else np.uint64)
        thousand: Any = work.dtype.type(1000)  # (a numpy scalar: no conversion to int64)
        base: Any = work.dtype.type(10_000)
        rest = work // thousand
        ends = (work - rest * thousand).astype(np.intp)
        ends += (rest != 0) * 1000  # digits before: the last 3 keep their zeros
        if k == len(columns) - 1:
            ends += 2000  # a line end after, not a comma
        text[:, at + count - 1] = last[ends]
        for j in range(count - 2, -1, -1):  # the words before, right to left
            above = rest // base
            part = (rest - above * base).astype(np.intp)
            part += (above != 0) * 10_000
            text[:, at + j] = high[part]
            rest = above
        at += count
    flat = text.view(np.uint8).ravel()
    rows: bytes = flat[flat != 0].tobytes()
    return rows


@functools.lru_cache(maxsize=1)
def _word_tables() -> tuple[np.ndarray, np.ndarray]:
    """The words of :func:`_word_rows`, 4 text bytes each as one ``uint32``
    (0 bytes where nothing is written). ``last[v + 1000 * p + 2000 * e]``:
    the 3 digits of ``v`` (< 1,000), with its zeros before (``p``) or not
    ("7", "0" for 0), then "," (``e`` = 0) or a line end. ``high[v + 10_000
    * p]``: the 4 digits of ``v`` (< 10,000), with its zeros or not (0: none)."""

    def digits(count: int, padded: bool) -> np.ndarray:
        values = np.arange(10**count)
        text = np.stack([(values // 10**k) % 10 + ord("0") for k in range(count - 1, -1, -1)], 1)
        if not padded:  # no zeros before the first digit (0 itself: none at all)
            shown = 1 + sum((values >= 10**k).astype(int) for k in range(1, count))
            text = np.where(np.arange(count) >= count - shown[:, None], text, 0)
            text[0] = 0
        return text.astype(np.uint8)

    blocks = []
    for end in (",", "\n"):
        for padded in (False, True):
            words = np.column_stack([digits(3, padded), np.full(1000, ord(end))]).astype(np.uint8)
            words[0, 2] = ord("0")  # a value's last digit is always written
            blocks.append(words)
    last = np.ascontiguousarray(np.concatenate(blocks)).view(np.uint32).ravel()
    high = np.concatenate([digits(4, False), digits(4, True)]).view(np.uint32).ravel()
    return last, high


def _digit_matrix(values: np.ndarray) -> np.ndarray:
    """One row per value: its decimal text right-aligned, 0 bytes before it."""
    n = len(values)
    negative = values < 0 if values.dtype.kind == "i" else np.zeros(n, bool)
    signed = bool(negative.any())
    if signed:  # the magnitude, exact for the most negative int64 too
        magnitude = values.astype(np.int64).view(np.uint64).copy()
        magnitude[negative] = (~magnitude[negative]) + np.uint64(1)
    else:
        magnitude = values.astype(np.uint64)
    top = int(magnitude.max()) if n else 0
    width = len(str(top))
    work: np.ndarray = magnitude.astype(np.uint32) if top < 2**32 else magnitude
    ten = work.dtype.type(10)
    digits = np.ones(n, np.int8)
    for k in range(1, width):
        digits += work >= work.dtype.type(10**k)
    out = np.zeros((n, width + signed), np.uint8)
    for k in range(width):
        quotient = work // ten
        digit = (work - quotient * ten).astype(np.uint8) + np.uint8(48)
        out[:, width + signed - 1 - k] = digit * (digits > k)
        work = quotient
    if signed:
        rows = np.flatnonzero(negative)
        out[rows, width + signed - 1 - digits[rows]] = ord("-")
    return out


#: Lists longer than this are written one compact item per line.
LONG_LIST = 1024


def dumps_json(data: Any, *, _level: int = 0) -> str:
    """``json.dumps(data, indent=2)``, but long lists one compact item per line.

    Python's JSON encoder is C code only without ``indent``: a 65,536-PE
    summary (one entry per trace file) took seconds indented. Lists of up to
    :data:`LONG_LIST` items are written exactly as ``indent=2`` writes them.
    NaN is refused (``allow_nan=False``): :func:`to_jsonable` makes it null.
    """
    return "".join(iter_json(data, _level=_level))


def iter_json(data: Any, *, _level: int = 0) -> Iterator[str]:
    """The text of :func:`dumps_json` in pieces, and an iterator (a generator
    of events, say) written as the list it yields, item by item as it comes:
    a 65,536-PE Perfetto export is millions of events, never held at once."""
    if isinstance(data, dict) and data:
        yield "{\n"
        yield from _json_items(data, level=_level, first=True)
        yield "\n" + "  " * _level + "}"
        return
    if isinstance(data, Iterator):
        head = list(itertools.islice(data, LONG_LIST + 1))
        if len(head) <= LONG_LIST:  # indented as a list (its JSON texts as values)
            yield from iter_json(PlainList(head), _level=_level)
            return
        data = itertools.chain(head, data)
    elif not (isinstance(data, list) and len(data) > LONG_LIST):
        if type(data) is PlainList:  # its JSON texts as values: a short list is indented
            data = [json.loads(v) if type(v) is JsonText else v for v in data]
        text = json.dumps(data, indent=2, allow_nan=False)
        yield text.replace("\n", "\n" + "  " * _level) if _level else text
        return
    inner = "  " * (_level + 1)
    numbers = _number_texts(data) if isinstance(data, list) else None
    if numbers is not None:  # one piece: a 65,536-PE summary has lists of 65,536 numbers
        yield "[\n" + inner + (",\n" + inner).join(numbers) + "\n" + "  " * _level + "]"
        return
    compact = _compact_json()
    yield "["
    # the items' texts joined a slice at a time, a held list's and a stream's
    # as they come (a 65,536-PE export's millions of events are a few thousand
    # pieces to write); an item already JSON is written as it is
    items, between, opening = iter(data), ",\n" + inner, "\n"
    while texts := [
        item if type(item) is JsonText else compact(item)
        for item in itertools.islice(items, _JOINED_ITEMS)
    ]:
        yield opening + inner + between.join(texts)
        opening = ",\n"
    yield "\n" + "  " * _level + "]"


def _json_items(data: dict[str, Any], *, level: int, first: bool) -> Iterator[str]:
    """The text of ``data``'s items inside a dict of :func:`iter_json` at
    ``level`` (``first``: they open it, no comma before them)."""
    inner = "  " * (level + 1)
    for k, (key, value) in enumerate(data.items()):
        yield ("" if first and not k else ",\n") + inner + json.dumps(key) + ": "
        yield from iter_json(value, _level=level + 1)


#: Items of a long list whose texts are joined into one piece: a 65,536-PE
#: summary's file entries are 17 pieces, not 65,536 (each one a generator
#: step and a string copy), and never more than a slice's texts are held.
_JOINED_ITEMS = 4096


_PLAIN = frozenset({int, str, bool})
#: What :func:`to_jsonable` passes as it is: JSON texts, and lists of plain values.
_WRITTEN = frozenset({JsonText, PlainList})
#: The items of a list that :func:`to_jsonable` leaves as they are (floats
#: too, when finite).
_PLAIN_ITEMS = frozenset({int, str, bool, type(None)})


def _compact_json() -> Callable[[Any], str]:
    """``json.JSONEncoder(allow_nan=False, separators=(", ", ": ")).encode``,
    with its C encoder made once, not for every item (a 65,536-PE report's
    coverage is as many items: 0.24 -> 0.14 s)."""
    encoder = json.JSONEncoder(allow_nan=False, separators=(", ", ": "))
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C encoder (another Python)
        return encoder.encode
    iterencode = make(
        {},  # circular references are checked, as encode() checks them
        encoder.default,
        json.encoder.encode_basestring_ascii,
        None,
        encoder.key_separator,
        encoder.item_separator,
        False,
        False,
        False,
    )

    def encode(item: Any) -> str:
        return "".join(iterencode(item, 0))

    return encode


def _number_texts(items: list[Any]) -> list[str] | None:
    """The JSON texts of ``items`` when every one is an int, a finite float or
    None (``json.dumps`` writes an int and a float as their ``repr``), else None."""
    kinds = set(map(type, items))
    if not kinds <= {int, float, type(None)}:
        return None
    if float in kinds and not all(math.isfinite(v) for v in items if type(v) is float):
        return None  # refused below, as json.dumps(allow_nan=False) refuses it
    if type(None) in kinds:
        return ["null" if v is None else repr(v) for v in items]
    return list(map(repr, items))


def utf8(text: str) -> bytes:
    """``text`` in UTF-8, with bytes of file names that were not UTF-8 as ``\\xNN``.

    A path holding such bytes reaches the outputs as lone surrogates
    (:func:`actorprof._text.printable_name`); plain ``encode()`` fails on them.
    """
    return printable_name(text).encode("utf-8")


def save_png(fig: Figure, handle: BinaryIO, *, dpi: float) -> None:
    """Draw `fig` once at `dpi` and write it to `handle` as a PNG file.

    The same pixels as ``fig.savefig(handle, format="png", dpi=dpi)`` in
    about half the time (docs/performance.md, "Fixed cost"):

    * one draw: ``savefig`` draws a figure twice when it has a layout
      engine (ours are constrained), once to place the Axes and once to
      render; drawing the canvas places and renders in one pass;
    * zlib level :data:`PNG_COMPRESS_LEVEL` instead of Pillow's 6, and RGB
      instead of RGBA when every pixel is opaque (the alpha channel of an
      opaque figure is a constant): encodes twice as fast; files within a
      few percent of savefig's (-2 % to +9 % on the examples).

    The file carries matplotlib's "Software" text and the resolution, as
    ``savefig`` writes them. `fig` keeps its own dpi and canvas.
    """
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image, PngImagePlugin

    own_canvas, own_dpi = fig.canvas, fig.dpi
    canvas: Any = FigureCanvasAgg(fig)  # backend_agg has no type hints
    try:
        fig.dpi = dpi
        canvas.draw()
        rgba = np.array(canvas.buffer_rgba())  # a copy: the canvas goes away
    finally:
        fig.dpi = own_dpi
        fig.set_canvas(own_canvas)  # a pyplot figure stays attached to its window
    image = Image.frombuffer("RGBA", (rgba.shape[1], rgba.shape[0]), rgba, "raw", "RGBA", 0, 1)
    if int(rgba[..., 3].min()) == 255:
        image = image.convert("RGB")
    info = PngImagePlugin.PngInfo()
    info.add_text("Software", f"Matplotlib version{mpl.__version__}, https://matplotlib.org/")
    image.save(
        handle, format="png", dpi=(dpi, dpi), pnginfo=info, compress_level=PNG_COMPRESS_LEVEL
    )


def to_jsonable(data: Any) -> Any:
    """Convert numpy/pandas scalars and containers for :func:`json.dumps`.

    A plain dict or list in which nothing needs converting is returned as
    it is, not copied: a report's coverage (a dict per file, 196,608 of
    them at 65,536 PEs) is not held twice while it is written.
    """
    if data is None or type(data) in _PLAIN or type(data) in _WRITTEN:  # no conversion
        return data
    if type(data) is dict:
        return _jsonable_dict(data)
    if type(data) is list:
        return _jsonable_list(data)
    if isinstance(data, dict):
        return {str(k): to_jsonable(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [to_jsonable(v) for v in data]
    if isinstance(data, Iterator):  # converted as it is written, never held
        return (v if type(v) in _WRITTEN else to_jsonable(v) for v in data)
    if isinstance(data, np.ndarray):
        return [to_jsonable(v) for v in data.tolist()]
    if isinstance(data, np.generic):
        data = data.item()
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, Path):
        return str(data)
    return data


def _jsonable_dict(data: dict[Any, Any]) -> dict[str, Any]:
    """:func:`to_jsonable` of a dict: ``data`` itself when its keys are str and
    no value changes, else a new dict (made at the first change)."""
    out: dict[str, Any] | None = None
    for i, (key, value) in enumerate(data.items()):
        new = to_jsonable(value)
        if out is None and (new is not value or type(key) is not str):
            out = dict(itertools.islice(data.items(), i))  # the items before: unchanged
        if out is not None:
            out[str(key)] = new
    return data if out is None else out


def _jsonable_list(data: list[Any]) -> list[Any]:
    """:func:`to_jsonable` of a list: ``data`` itself when no item changes."""
    kinds = set(map(type, data))
    if kinds <= _PLAIN_ITEMS or (
        kinds <= _PLAIN_ITEMS | {float}
        and not any(type(v) is float and not math.isfinite(v) for v in data)
    ):  # plain numbers and text (a 65,536-PE summary's lists): nothing to look at
        return data
    out: list[Any] | None = None
    for i, item in enumerate(data):
        new = to_jsonable(item)
        if out is None and new is not item:
            out = data[:i]
        if out is not None:
            out.append(new)
    return data if out is None else out

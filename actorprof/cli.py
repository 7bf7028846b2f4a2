"""The ``actorprof`` command: a thin click adapter over the library.

One command per trace kind. Every command reads, analyses, plots and writes
through the library; this module only parses options, creates figures,
writes files (with :mod:`actorprof.write`) and turns errors into exit codes:
0 success, 1 data error, 2 usage error. Heavy libraries are imported inside
the commands so that ``actorprof --help`` answers at once.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import signal
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar, overload

import click

from ._version import __version__

if TYPE_CHECKING:
    from ._progress import Progress
    from .analyze.matrix import Level, Metric, SelfSends
    from .engine import Engine
    from .kinds.timeline import PhaseSpan
    from .kinds.timeline_figures import TimelineBins
    from .write import OutputWriter

F = TypeVar("F", bound=Callable[..., Any])

#: Largest PE count an option may name: per-PE tables, figures and files cost
#: O(N) (1,048,576 PEs: about 30 s and 0.5 GB for a run of 4 PE files), and
#: 2^20 PEs is 16 times the largest machines HClib-Actor runs on (65,536).
MAX_PES = 1 << 20

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Console:
    """stderr for people (notes, warnings, summaries); stdout for file names."""

    def __init__(self, *, quiet: bool, verbose: bool) -> None:
        self.quiet = quiet
        self.verbose = verbose

    def info(self, message: str) -> None:
        if not self.quiet:
            click.echo(message, err=True)

    def warn(self, message: str) -> None:
        if not self.quiet:
            click.echo(f"warning: {message}", err=True)

    def summary(self, view: Any) -> None:
        """A view's short summary (``view.summary_lines()``); not even computed when quiet."""
        if not self.quiet:
            for line in view.summary_lines():
                click.echo(line, err=True)

    def wrote(self, paths: list[Path]) -> None:
        for path in paths:
            click.echo(str(path))

    def progress(self) -> Progress:
        """A progress line on stderr, drawn only on a terminal and never when quiet."""
        from ._progress import Progress

        return Progress(enabled=not self.quiet and sys.stderr.isatty())


FIGURE_FORMATS = ("png", "svg", "pdf")


def figure_modules(kind: str) -> tuple[str, ...]:
    """What a figure server imports before its first figure (OutputWriter's
    ``warm``): the kind's figure builders and the plotting stack under them.

    The logical, physical, PAPI, overall and timeline kinds' figures need
    neither pandas nor the kind's module (``kinds.<kind>_figures``): a server
    that imports them (0.15 s) starts the heatmap that much later
    (docs/performance.md, "Fixed cost").
    """
    if kind == "report":  # every kind's
        kinds = ("logical", "physical", "papi", "overall", "timeline", "aggregation")
        return tuple(dict.fromkeys(m for k in kinds for m in figure_modules(k)))
    stack = ("matplotlib.figure", "matplotlib.backends.backend_agg", "PIL.PngImagePlugin")
    plots = tuple(f"actorprof.plot.{m}" for m in ("heatmap", "distribution", "bars", "timeline"))
    if kind == "logical":
        return ("actorprof.kinds.logical_figures", *plots[:2], *stack)
    if kind in ("papi", "overall"):
        return (f"actorprof.kinds.{kind}_figures", plots[2], *stack)
    if kind == "timeline":
        return ("actorprof.kinds.timeline_figures", plots[3], *stack)
    if kind == "physical":  # its panels and loads are the logical figures' types
        return (
            "actorprof.kinds.physical_figures",
            "actorprof.kinds.logical_figures",
            *plots[:2],
            *stack,
        )
    return (
        f"actorprof.kinds.{kind}",
        *plots,
        *(f"actorprof.plot.{m}" for m in ("aggregation", "layouts") if kind == "aggregation"),
        *stack,
    )


def figure_writer(kind: str, output_dir: Path, fmt: str, dpi: int | None) -> OutputWriter:
    """The command's writer, made first: its figure server (write.py) imports
    the kind's figure builders and the plotting stack while the command reads."""
    from .write import OutputWriter

    return OutputWriter(
        output_dir, kind=kind, fmt=fmt, dpi=dpi, background=True, warm=figure_modules(kind)
    )


#: Default resolution of figure files, and of figures embedded in the report page.
FIGURE_DPI = 150
EMBED_DPI = 100


@overload
def common_options(func: F) -> F: ...


@overload
def common_options(*, formats: tuple[str, ...], dpi_note: str = "") -> Callable[[F], F]: ...


def common_options(
    func: F | None = None, *, formats: tuple[str, ...] = FIGURE_FORMATS, dpi_note: str = ""
) -> F | Callable[[F], F]:
    """Options every command shares, spelled the same everywhere.

    ``formats``: the figure formats the command can write (``--format``
    offers only those; none: neither ``--format`` nor ``--dpi``, for commands
    without figures). ``dpi_note`` completes the help of ``--dpi``.
    """

    def decorate(f: F) -> F:
        return _common_options(f, formats, dpi_note)

    return decorate if func is None else decorate(func)


def _common_options(func: F, formats: tuple[str, ...], dpi_note: str) -> F:
    options = [
        click.option(
            "-n",
            "--num-pes",
            type=click.IntRange(min=1, max=MAX_PES),
            default=None,
            metavar="N",
            help="PEs in the run: checks the trace against it (missing PE files, "
            "PE ids beyond N). Default: inferred from the trace.",
        ),
        click.option(
            "-o",
            "--output-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=Path("."),
            show_default=True,
            help="Folder for figures, tables and the summary (created if missing).",
        ),
        click.option("-q", "--quiet", is_flag=True, help="Nothing on stderr but errors."),
        click.option("-v", "--verbose", is_flag=True, help="Show the traceback with an error."),
    ]
    if formats:
        options[2:2] = [
            click.option(
                "--format",
                "fmt",
                type=click.Choice(list(formats)),
                default=formats[0],
                show_default=True,
                help="Figure file format.",
            ),
            click.option(
                "--dpi",
                type=click.IntRange(min=10, max=2400),
                default=None,
                metavar="N",
                help="Figure resolution in dots per inch (the pixels of a PNG; the images "
                f"inside an SVG or PDF). Default: {FIGURE_DPI}{dpi_note}.",
            ),
        ]
    for option in reversed(options):
        func = option(func)
    return func


def _jobs_option(what: str) -> Callable[[F], F]:
    return click.option(
        "-j",
        "--jobs",
        type=click.IntRange(min=0),
        default=0,
        metavar="N",
        help=f"Worker processes reading {what} in parallel. Default (0): the CPUs this "
        "process may use (its affinity, e.g. taskset or a SLURM allocation, and at most "
        "SLURM_CPUS_PER_TASK).",
    )


_scheduler_option = click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    envvar="ACTORPROF_SCHEDULER",
    help="Read on this dask.distributed scheduler (e.g. tcp://node:8786) instead "
    "of local processes; env ACTORPROF_SCHEDULER. Needs actorprof[dask].",
)


def _apply(func: F, options: list[Callable[[F], F]]) -> F:
    for option in reversed(options):
        func = option(func)
    return func


def engine_options(func: F) -> F:
    """How big traces are read: worker processes, the cache, a Dask cluster."""
    return _apply(
        func,
        [
            _jobs_option("files (and parts of big files)"),
            click.option(
                "--cache-dir",
                type=click.Path(file_okay=False, path_type=Path),
                default=None,
                metavar="DIR",
                help="Cache of reduced traces (one entry per trace folder), reused while a "
                "file is unchanged. Default: $ACTORPROF_CACHE_DIR, else "
                "$XDG_CACHE_HOME/actorprof or ~/.cache/actorprof. See: actorprof cache.",
            ),
            click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
            _scheduler_option,
        ],
    )


def parallel_options(func: F) -> F:
    """Worker processes and a Dask cluster, for commands that keep no cache."""
    return _apply(func, [_jobs_option("files"), _scheduler_option])


log_option = click.option(
    "--log/--linear",
    "log_scale",
    default=None,
    help="Force a logarithmic or a linear colour scale. Default: log when the matrix is "
    "skewed (largest non-zero cell > 50 x the median one), said on the colour bar.",
)
timeline_log_option = click.option(
    "--log", "log_scale", is_flag=True, help="Logarithmic colour scale."
)


def trace_location(path: Path, kind: str, console: Console) -> Path:
    """Where the ``kind`` trace of ``path`` is: ``path``, or its run folder's subfolder.

    A run folder holding no such file itself is searched as ``actorprof
    report`` does (its subfolders, e.g. ``logical/``); the folder used is
    said on stderr.
    """
    from .errors import ActorProfError
    from .report.traces import find_run_traces, holds_trace

    if not path.is_dir() or holds_trace(path, kind):
        return path
    try:
        where = getattr(find_run_traces(path, kinds=(kind,)), kind)
    except (OSError, ActorProfError):
        return path  # unreadable: the reader says why, with its own message
    if where is None:
        return path  # the reader says what is missing
    folder = where if where.is_dir() else where.parent
    if folder.resolve() == path.resolve():
        return path
    console.info(f"{kind} trace: {folder}")
    return Path(where)


def phase_option(help_text: str) -> Callable[[F], F]:
    """``--phase NAME``, spelled the same everywhere; the help says what it selects."""
    return click.option("--phase", default=None, metavar="NAME", help=help_text)


def top_option(help_text: str) -> Callable[[F], F]:
    """``--top K`` (default 10): how many top pairs or links a summary lists."""
    return click.option(
        "--top", type=click.IntRange(min=0), default=10, show_default=True, help=help_text
    )


def sort_option(help_text: str) -> Callable[[F], F]:
    """``--sort pe|total``: bar order."""
    return click.option(
        "--sort",
        type=click.Choice(["pe", "total"]),
        default="pe",
        show_default=True,
        help=help_text,
    )


def bins_option(default: int, help_text: str) -> Callable[[F], F]:
    """``--bins N``: time bins."""
    return click.option(
        "--bins", type=click.IntRange(min=1), default=default, show_default=True, help=help_text
    )


class _NeverRaised(Exception):
    """Stands for an exception class whose module was never imported."""


def _broken_pool() -> type[Exception]:
    """``BrokenProcessPool`` when its module is imported, else a class never
    raised: importing ``concurrent.futures.process`` (15 ms) to name an error
    that only a process pool raises would delay every command's start, the
    figure server's with it (docs/performance.md, "Fixed cost")."""
    module = sys.modules.get("concurrent.futures.process")
    broken: type[Exception] = getattr(module, "BrokenProcessPool", _NeverRaised)
    return broken


#: What Ctrl-C (SIGINT) prints, with exit status 130.
INTERRUPTED = "interrupted (Ctrl-C): files listed above are complete"


class _Interrupts:
    """The ``actorprof`` program's SIGINT handler (set by :func:`run`).

    Inside a command's body (:func:`handle_errors`) Ctrl-C raises
    KeyboardInterrupt: the command stops, says :data:`INTERRUPTED` and
    exits 130. Outside it (click's parsing and teardown, the exit handlers)
    a KeyboardInterrupt would reach click, which prints ``Aborted!`` and
    exits 1: there Ctrl-C is only noted. A command then starts interrupted,
    or the program exits 130 once its teardown (milliseconds) is done.
    """

    def __init__(self) -> None:
        self.received = False
        self.inside = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.received = True
        if self.inside:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def raised(self) -> Iterator[None]:
        """Ctrl-C raises KeyboardInterrupt while inside, and at once if it came before.

        An error that replaced it (a figure's child stopped by the same
        Ctrl-C, reported as failed by a ``except BaseException`` that
        waited for it) is the interrupt too.
        """
        self.inside = True
        try:
            if self.received:
                raise KeyboardInterrupt
            yield
        except Exception as exc:
            if self.received:
                raise KeyboardInterrupt from exc
            raise
        finally:
            self.inside = False

    def exit_code(self, code: Any) -> Any:
        """``code``, or 130 when Ctrl-C came and the command did not say so (said here)."""
        if self.received and code != 130:
            click.echo(INTERRUPTED, err=True)
            return 130
        return code


_INTERRUPTS = _Interrupts()


def run() -> None:
    """The ``actorprof`` program: :func:`main`, then a quick exit.

    Once a command is done its outputs are closed and complete; what is
    left is the interpreter's teardown, which frees every object one by one
    (a 65,536-PE report holds millions: 0.1-0.25 s). The exit handlers still
    run (temporary folders removed, worker processes stopped), the standard
    streams are flushed, then the process ends with the command's exit code.
    With another thread still running, or a profiler or tracer set (they
    write their results once the program returns: ``python -m cProfile -m
    actorprof``), Python's own exit is kept. In a Python session, call
    :func:`main` instead.

    Ctrl-C ends the program with exit 130 and :data:`INTERRUPTED` whenever
    it comes, teardown included (:class:`_Interrupts`); a SIGINT ignored by
    whoever started the program (``nohup``, ``cmd &`` in a script) stays
    ignored.
    """
    import atexit
    import threading

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _INTERRUPTS)
    try:
        main(prog_name="actorprof")
        code: Any = 0
    except SystemExit as exc:
        if threading.active_count() > 1 or sys.getprofile() or sys.gettrace():
            raise SystemExit(_INTERRUPTS.exit_code(exc.code)) from None
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(_INTERRUPTS.exit_code(code))


def handle_errors(func: F) -> F:
    """Turn library errors into click errors (exit 1 data, 2 usage, 130 Ctrl-C)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .errors import ActorProfError

        verbose = bool(kwargs.get("verbose"))
        try:
            with _INTERRUPTS.raised(), warnings.catch_warnings():
                if kwargs.get("quiet"):
                    # -q: nothing on stderr but errors, numpy's and matplotlib's warnings too
                    warnings.simplefilter("ignore")
                return func(*args, **kwargs)
        except ActorProfError as exc:
            if verbose:
                traceback.print_exc(file=sys.stderr)
            if exc.exit_code == 2:
                raise click.UsageError(str(exc)) from exc
            raise click.ClickException(str(exc)) from exc
        except KeyboardInterrupt as exc:
            # the shell convention (128 + SIGINT), not the data-error code; outputs
            # are atomic, so nothing half-written is left behind
            if verbose:
                traceback.print_exc(file=sys.stderr)
            click.echo(INTERRUPTED, err=True)
            raise click.exceptions.Exit(130) from exc
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except _broken_pool() as exc:
            raise click.ClickException(
                "a worker process died (killed by the system, most often for memory): "
                "rerun with fewer --jobs, or on a node with more memory"
            ) from exc
        except MemoryError as exc:
            raise click.ClickException(
                "out of memory; try a machine with more memory or fewer PEs at a time"
            ) from exc
        except BrokenPipeError as exc:
            raise click.ClickException(
                "stdout was closed before every written file could be listed (broken pipe); "
                "the files themselves are complete"
            ) from exc
        except OSError as exc:
            # the system refused something (disk, permissions, limits): not a bug of ours
            if verbose:
                traceback.print_exc(file=sys.stderr)
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(
                f"{where}{exc.strerror or exc} (the operating system refused; "
                "rerun with -v for the traceback)"
            ) from exc
        except Exception as exc:
            if verbose:
                traceback.print_exc(file=sys.stderr)
            raise click.ClickException(
                f"internal error ({type(exc).__name__}: {exc}). This is a bug in actorprof "
                "version " + __version__ + ": rerun with -v and report the traceback."
            ) from exc

    return wrapper  # type: ignore[return-value]


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="actorprof")
def main() -> None:
    """Analyse the traces of an HClib-Actor (ActorProf) run.

    \b
    After a run built with ActorProf tracing, point a command at the folder:
      actorprof logical run/ --num-pes 16 -o plots/
    stdout lists the files written, one per line; notes go to stderr.
    Exit codes: 0 success, 1 data error, 2 usage error.
    """
    one_blas_thread()
    fewer_gc_passes()
    one_listing_per_folder()


def one_listing_per_folder() -> None:
    """Keep the folder listings while a command runs (dropped after it).

    A command lists its trace folder to find the trace, then to read it:
    a folder written in the last seconds was listed each time (65,536 names
    and their files: 0.2 s each); see :func:`actorprof.read.listings_kept`.
    """
    from .read import listings_kept

    click.get_current_context().with_resource(listings_kept())


#: Container allocations between two young-generation collections (Python: 700).
GC_YOUNG_THRESHOLD = 50_000


def fewer_gc_passes() -> None:
    """Collect cyclic garbage less often while a command runs (restored after it).

    Importing numpy, pandas and matplotlib and drawing a figure allocate
    millions of objects, and the collector, run every 700 allocations, walks
    the ever larger heap again and again: about 60 ms of CPU of a small
    command's 1.4 s (docs/performance.md, "Fixed cost"). Cycles are still
    collected; a few thousand objects more wait for it. And the collections
    between a report's steps walk only what was made since the last one
    (:func:`actorprof._memory.survivors_frozen`).
    """
    from ._memory import survivors_frozen

    before = gc.get_threshold()
    gc.set_threshold(max(before[0], GC_YOUNG_THRESHOLD), *before[1:])
    context = click.get_current_context()
    context.call_on_close(lambda: gc.set_threshold(*before))
    context.with_resource(survivors_frozen())


#: Variables that set the threads of numpy's OpenBLAS (the first one set wins).
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread() -> None:
    """One OpenBLAS thread for this process and its workers, unless the user chose.

    actorprof does no linear algebra, but numpy's OpenBLAS starts a thread
    per core when numpy is imported (before any command's work: imports are
    lazy): 40-60 ms of CPU per process, taken from the figure drawn beside
    (docs/performance.md, "Fixed cost"). No effect once numpy is imported.
    """
    if not any(os.environ.get(name) for name in BLAS_THREAD_VARIABLES):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


LOGICAL_EXAMPLE = """\b
Examples:
  actorprof logical run/ --num-pes 16 -o plots/
  actorprof logical run/ --metric bytes --log --self-sends exclude
  actorprof logical run/ --level node --phase phase3 --format svg -q
  actorprof logical big_run/ --jobs 8 --cache-dir /scratch/$USER/apcache
  actorprof logical big_run/ --pes 4096-4351    # zoom into one block of the overview
"""


@main.command(epilog=LOGICAL_EXAMPLE, context_settings=CONTEXT)
@click.argument("trace_dir", type=click.Path(exists=True, path_type=Path))
@common_options
@engine_options
@click.option(
    "--metric",
    type=click.Choice(["count", "bytes"]),
    default="count",
    show_default=True,
    help="Colour of the heatmap and values of the violin: messages or their bytes.",
)
@click.option(
    "--self-sends",
    type=click.Choice(["include", "exclude", "only"]),
    default="include",
    show_default=True,
    help="Count messages a PE sends to itself (the paper includes them).",
)
@click.option(
    "--level",
    type=click.Choice(["pe", "node"]),
    default="pe",
    show_default=True,
    help="Matrix between PEs, or between nodes (from the node columns).",
)
@phase_option("Read PE<i>_NAME_send.csv (after new_file_for_selector_trace(NAME)).")
@log_option
@top_option("How many top (source, destination) pairs the summary lists.")
@click.option(
    "--pes",
    "pe_window",
    default=None,
    metavar="A-B",
    callback=lambda ctx, param, value: parse_pe_window(value),
    help="Heatmap of PEs A to B only, at full resolution (zoom into a block of the "
    "pooled overview of a big run); written as logical_heatmap_A_B.",
)
@handle_errors
def logical(
    trace_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    dpi: int | None,
    quiet: bool,
    verbose: bool,
    jobs: int,
    cache_dir: Path | None,
    no_cache: bool,
    scheduler: str | None,
    metric: Metric,
    self_sends: SelfSends,
    level: Level,
    phase: str | None,
    log_scale: bool | None,
    top: int,
    pe_window: tuple[int, int] | None,
) -> None:
    """Who sent how many messages to whom: heatmap, violin, tables, summary.

    TRACE_DIR holds the run's PE<i>_send.csv files (or is one such file).
    """
    out = figure_writer("logical", output_dir, fmt, dpi)  # first (see figure_writer)
    console = Console(quiet=quiet, verbose=verbose)
    trace_dir = trace_location(trace_dir, "logical", console)
    engine = make_engine(jobs, cache_dir, no_cache, scheduler, trace=trace_dir)
    from ._memory import trim_heap
    from .kinds.logical import logical_view, require_messages, write_logical
    from .read import ReadReport

    with console.progress() as progress:
        view = logical_view(
            trace_dir,
            phase=phase,
            num_pes=num_pes,
            self_sends=self_sends,
            report=ReadReport(kind="logical"),
            engine=engine,
            progress=progress,
        )
    require_messages(view, level)
    if pe_window is not None and level != "pe":
        raise click.UsageError("--pes draws PEs: use it with --level pe")
    trim_heap()  # what the reduce and the view's tables freed (at 65,536 PEs, 100s of MB)
    write_logical(
        view, out, metric=metric, level=level, log_scale=log_scale, top=top, pes=pe_window
    )
    console.wrote(out.finish())
    report_to_console(view.report, console)
    console.summary(view)


TIMELINE_EXAMPLE = """\b
Examples:
  actorprof timeline run/ -o plots/
  actorprof timeline run/ --phase bfs --bins 500 --log
"""


@main.command(epilog=TIMELINE_EXAMPLE, context_settings=CONTEXT)
@click.argument("trace_dir", type=click.Path(exists=True, path_type=Path))
@common_options
@phase_option("Only this phase (default: every phase found, on one time axis).")
@bins_option(200, "Time bins in the figure and the CSV.")
@timeline_log_option
@parallel_options
@handle_errors
def timeline(
    trace_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    dpi: int | None,
    quiet: bool,
    verbose: bool,
    phase: str | None,
    bins: int,
    log_scale: bool,
    jobs: int,
    scheduler: str | None,
) -> None:
    """Messages sent per PE over time: rate, PE x time heat strip, phases.

    TRACE_DIR holds the run's PE<i>_send.csv files (with timestamps).
    """
    out = figure_writer("timeline", output_dir, fmt, dpi)  # first (see figure_writer)
    console = Console(quiet=quiet, verbose=verbose)
    trace_dir = trace_location(trace_dir, "logical", console)
    engine = make_engine(jobs, None, True, scheduler, trace=trace_dir, kind="timeline")
    from .kinds.timeline import timeline_view, write_rate_figure
    from .read import ReadReport

    def ready(shown: TimelineBins, phases: list[PhaseSpan]) -> None:
        # drawn from the read's bins while this process imports pandas for the view
        write_rate_figure(shown, phases, str(trace_dir), out, log_scale=log_scale)

    reports: dict[str, ReadReport] = {}
    with console.progress() as progress:
        view = timeline_view(
            trace_dir,
            phase=phase,
            num_pes=num_pes,
            reports=reports,
            progress=progress,
            engine=engine,
            bins_ready=(bins, ready),
        )
    out.csv(view.display(bins).counts, "counts")
    s = view.summary(bins=bins, files=False)
    # the files' entries as JSON text where they can be (65,536 of them: a dict each cost 1 s)
    out.json({**s, "files": {key: r.file_entries() for key, r in view.reports.items()}}, "summary")
    console.wrote(out.finish())
    for report in reports.values():
        report_to_console(report, console)
    console.info(
        f"timeline: {s['messages_timed']:,} timed messages over {s['duration_s']:.6f} s "
        f"on {s['num_pes']} PEs; peak {s['peak_rate_per_s']:,.0f} messages/s "
        f"at {s['peak_at_s'] or 0:.3f} s"
    )
    if s["messages_untimed"]:
        console.warn(f"{s['messages_untimed']:,} messages have no timestamp (5-column lines)")
    for p in view.phases:
        console.info(f"  phase {p.name}: {p.start_s:.6f}-{p.end_s:.6f} s, {p.messages:,} messages")


EXPORT_EXAMPLE = """\b
Examples:
  actorprof export run/ --to perfetto -o out/   # then open out/export_perfetto.json
                                               # in https://ui.perfetto.dev
"""


@main.command(epilog=EXPORT_EXAMPLE, context_settings=CONTEXT)
@click.argument("trace_dir", type=click.Path(exists=True, path_type=Path))
@common_options(formats=())
@click.option(
    "--to",
    "target",
    type=click.Choice(["perfetto"]),
    default="perfetto",
    show_default=True,
    help="Format: Chrome Trace Event JSON, for ui.perfetto.dev and chrome://tracing.",
)
@phase_option("Only this phase (default: every phase).")
@bins_option(1000, "Time bins per PE (fewer when PEs x bins would make the file too big).")
@click.option(
    "--papi",
    "papi_path",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    metavar="DIR",
    help="PAPI trace of the same run (default: TRACE_DIR, if it holds one).",
)
@parallel_options
@handle_errors
def export(
    trace_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    quiet: bool,
    verbose: bool,
    target: str,
    phase: str | None,
    bins: int,
    papi_path: Path | None,
    jobs: int,
    scheduler: str | None,
) -> None:
    """Export send rates per PE as a trace for Perfetto / chrome://tracing.

    With a PAPI trace of the same run (in the same folder, or --papi DIR), each
    PE also gets a handled/s track (PROC) and a MAIN slice.
    """
    from ._text import format_ranges
    from .kinds.timeline import (
        clock_overlap,
        find_papi_folder,
        papi_times,
        perfetto_stream,
        timeline_view,
    )
    from .read import ReadReport
    from .write import OutputWriter

    console = Console(quiet=quiet, verbose=verbose)
    out = OutputWriter(output_dir, kind="export")
    run_dir = trace_dir
    trace_dir = trace_location(trace_dir, "logical", console)
    reports: dict[str, ReadReport] = {}
    engine = make_engine(jobs, None, True, scheduler)
    with console.progress() as progress:
        view = timeline_view(
            trace_dir,
            phase=phase,
            num_pes=num_pes,
            reports=reports,
            progress=progress,
            engine=engine,
        )
    papi = None
    if papi_path is None and trace_dir != run_dir:
        from .report.traces import find_run_traces

        papi_path = find_run_traces(run_dir).papi  # the run folder's own: same run
    papi_dir = papi_path if papi_path is not None else find_papi_folder(trace_dir)
    if papi_dir is not None:
        reports["PAPI"] = ReadReport(kind="papi")
        with console.progress() as progress:
            papi = papi_times(
                papi_dir,
                phase=phase,
                num_pes=num_pes,
                report=reports["PAPI"],
                engine=engine,
                progress=progress,
            )
        console.info(f"PAPI regions from {papi_dir}")
        if not clock_overlap(view, papi):
            console.warn(
                f"the PAPI trace in {papi_dir} does not overlap the logical trace in time: "
                "it is probably from another run, so its tracks are misplaced"
            )
        if unended := papi.pes_without_main(view.num_pes):
            console.warn(
                f"no MAIN region for {len(unended):,} of {view.num_pes:,} PEs "
                f"(PE {format_ranges(unended)}): the PAPI trace has no MAIN line to place "
                "for them (an empty or cut PAPI file?)"
            )
    trace = perfetto_stream(view, papi=papi, bins=bins, texts=True)
    events = 0

    def counted(items: Iterator[Any]) -> Iterator[Any]:
        nonlocal events
        for events, item in enumerate(items, start=1):  # noqa: B007
            yield item

    trace["traceEvents"] = counted(trace["traceEvents"])
    out.json(trace, target)  # an event at a time: millions at 65,536 PEs
    console.wrote(out.written)
    for report in reports.values():
        report_to_console(report, console)
    console.info(
        f"export: {events:,} events, {view.num_pes} PEs, "
        f"bins of {trace['otherData']['bin_s'] * 1e3:.3g} ms"
        + (
            f" (handled/s: {trace['otherData']['handled_bin_s'] * 1e3:.3g} ms)"
            if trace["otherData"].get("handled_bin_s", trace["otherData"]["bin_s"])
            != trace["otherData"]["bin_s"]
            else ""
        )
        + "; open it in https://ui.perfetto.dev"
    )
    untimed = int(view.timeline.untimed.sum())
    if untimed:
        console.warn(f"{untimed:,} messages have no timestamp (5-column lines): not exported")


PAPI_EXAMPLE = """\b
Examples:
  actorprof papi run/ --num-pes 16 -o plots/
  actorprof papi run/ --by-mailbox --sort total
  actorprof papi run/ --counters PAPI_TOT_CYC,PAPI_L1_DCM,PAPI_BR_MSP,PAPI_TOT_INS
"""


@main.command(epilog=PAPI_EXAMPLE, context_settings=CONTEXT)
@click.argument("trace_dir", type=click.Path(exists=True, path_type=Path))
@common_options
@engine_options
@click.option(
    "--counters",
    default=None,
    metavar="NAME,...",
    help="Names of the counter columns, in file order (at most 4). "
    "[default: PAPI_TOT_INS,PAPI_LST_INS; extra columns become counter3, counter4]",
)
@click.option("--by-mailbox", is_flag=True, help="Split the PROC part of each bar per mailbox.")
@sort_option("Bar order: PE id, or total (largest first).")
@phase_option("Read PE<i>_NAME_PAPI.csv (after new_file_for_selector_trace(NAME)).")
@handle_errors
def papi(
    trace_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    dpi: int | None,
    quiet: bool,
    verbose: bool,
    jobs: int,
    cache_dir: Path | None,
    no_cache: bool,
    scheduler: str | None,
    counters: str | None,
    by_mailbox: bool,
    sort: str,
    phase: str | None,
) -> None:
    """Instructions per PE in MAIN and PROC (PAPI counters): bars, tables, summary.

    TRACE_DIR holds the run's PE<i>_PAPI.csv files (or is one such file). The
    line with mailbox -1 is the MAIN region (local computation and message
    construction); every other line is one message handled in PROC.
    """
    out = figure_writer("papi", output_dir, fmt, dpi)  # first (see figure_writer)
    console = Console(quiet=quiet, verbose=verbose)
    trace_dir = trace_location(trace_dir, "papi", console)
    engine = make_engine(jobs, cache_dir, no_cache, scheduler, trace=trace_dir, kind="papi")
    from .kinds.papi import papi_view, write_papi
    from .read import ReadReport

    names = None if counters is None else [c.strip() for c in counters.split(",")]
    with console.progress() as progress:
        view = papi_view(
            trace_dir,
            phase=phase,
            num_pes=num_pes,
            counters=names,
            report=ReadReport(kind="papi"),
            engine=engine,
            progress=progress,
        )
    write_papi(view, out, by_mailbox=by_mailbox, sort=sort)
    console.wrote(out.finish())
    report_to_console(view.report, console)
    console.summary(view)


OVERALL_EXAMPLE = """\b
Examples:
  actorprof overall run/overall.txt --num-pes 16 -o plots/
  actorprof overall run/ --label "Run 0" --sort total
  actorprof overall run/overall.txt --cpu-ghz 2.45
"""


@main.command(epilog=OVERALL_EXAMPLE, context_settings=CONTEXT)
@click.argument("trace", type=click.Path(exists=True, path_type=Path))
@common_options
@click.option(
    "--label",
    default=None,
    metavar="NAME",
    help="Only the profile lines of this label (--label '' for the empty one). "
    "[default: every label, one row of panels each]",
)
@sort_option("Bar order: PE id, or T_TOTAL (largest first).")
@click.option(
    "--cpu-ghz",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="F",
    help="Nominal CPU frequency in GHz (rdtsc rate): adds seconds to tables and figure.",
)
@handle_errors
def overall(
    trace: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    dpi: int | None,
    quiet: bool,
    verbose: bool,
    label: str | None,
    sort: str,
    cpu_ghz: float | None,
) -> None:
    """Where time goes per PE: T_MAIN, T_COMM, T_PROC from the TCOMM profile.

    TRACE is the program's stdout (overall.txt) of a run built with
    -DENABLE_TCOMM_PROFILING, or the folder holding overall.txt. Other output
    in the file is ignored (and counted).
    """
    out = figure_writer("overall", output_dir, fmt, dpi)  # first (see figure_writer)
    from .kinds.overall import overall_view, write_overall
    from .read import ReadReport
    from .read.overall import program_output_lines

    console = Console(quiet=quiet, verbose=verbose)
    trace = trace_location(trace, "overall", console)
    report = ReadReport(kind="overall")
    view = overall_view(trace, label=label, num_pes=num_pes, cpu_ghz=cpu_ghz, report=report)
    write_overall(view, out, sort=sort)
    console.wrote(out.finish())
    for note in report.notes:
        console.info(note)
    for warning in report.warnings:
        console.warn(warning)
    ignored = program_output_lines(report)
    if ignored:
        console.info(f"{ignored:,} line(s) of program output (not profile lines) ignored")
    console.summary(view)


def parse_pe_window(value: str | None) -> tuple[int, int] | None:
    """``"A-B"`` -> ``(A, B)`` (inclusive), for ``--pes``."""
    if value is None:
        return None
    first, sep, last = value.partition("-")
    if not (sep and first.strip().isdigit() and last.strip().isdigit()):
        raise click.BadParameter(f"{value!r}: expected A-B, e.g. 0-255", param_hint="--pes")
    window = int(first), int(last)
    if window[1] < window[0]:
        raise click.BadParameter(f"{value!r}: B must be >= A", param_hint="--pes")
    return window


def make_engine(
    jobs: int,
    cache_dir: Path | None,
    no_cache: bool,
    scheduler: str | None,
    *,
    trace: Path | None = None,
    kind: str = "logical",
    fork: bool = True,
) -> Engine:
    """The engine the shared engine options describe. With the ``trace`` it
    will read (of ``kind``), its workers start now when they will read it
    (:func:`~actorprof.engine.run.start_workers_early`): a command makes its
    engine before it imports pandas. ``fork``: its workers are forked from
    this process where that is safe (it starts no thread), not from a fork
    server (``Engine.fork``)."""
    from .engine import Engine
    from .engine.run import start_workers_for

    engine = Engine(
        jobs=jobs, cache=not no_cache, cache_dir=cache_dir, scheduler=scheduler, fork=fork
    )
    if trace is not None:
        start_workers_for(engine, {kind: trace})
    return engine


def report_to_console(report: Any, console: Console) -> None:
    """Notes, warnings and skipped lines of a read, on stderr."""
    for note in report.notes:
        console.info(note)
    for line in report.expected_summary():
        console.info(line)
    for warning in report.warnings:
        console.warn(warning)
    for line in report.skipped_summary():
        console.warn(line)


# --- physical trace and aggregation (issue 4) --------------------------------

PHYSICAL_EXAMPLE = """\b
Examples:
  actorprof physical run/physical.txt --pes-per-node 4 -o plots/
  actorprof physical run/ --send-type nonblock_send --metric bytes --log
"""

SEND_TYPE_CHOICES = ["all", "local_send", "nonblock_send", "nonblock_progress"]


def pes_per_node_option(func: F) -> F:
    """``--pes-per-node K``, spelled the same in every command that takes it."""
    return click.option(
        "--pes-per-node",
        "pes_per_node",
        type=click.IntRange(min=1, max=MAX_PES),
        default=None,
        metavar="K",
        help="PEs per node (node = pe // K): node matrices and the Conveyors 2D-mesh check.",
    )(func)


@main.command(epilog=PHYSICAL_EXAMPLE, context_settings=CONTEXT)
@click.argument("trace", type=click.Path(exists=True, path_type=Path))
@common_options
@engine_options
@click.option(
    "--send-type",
    type=click.Choice(SEND_TYPE_CHOICES),
    default="all",
    show_default=True,
    help="Heatmap and violins of one send type; all: one panel per type present.",
)
@click.option(
    "--metric",
    type=click.Choice(["count", "bytes"]),
    default="count",
    show_default=True,
    help="Colour of the heatmap and values of the violin: buffers (calls) or their bytes.",
)
@pes_per_node_option
@log_option
@top_option("How many top links per send type the summary lists.")
@handle_errors
def physical(
    trace: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    dpi: int | None,
    quiet: bool,
    verbose: bool,
    jobs: int,
    cache_dir: Path | None,
    no_cache: bool,
    scheduler: str | None,
    send_type: str,
    metric: Metric,
    pes_per_node: int | None,
    log_scale: bool | None,
    top: int,
) -> None:
    """What the network carried: buffers and bytes per send type, heatmaps, tables, summary.

    TRACE is physical.txt (the stdout of a run built with -DENABLE_TRACE_PHYSICAL,
    program output and all) or the folder holding it.
    """
    out = figure_writer("physical", output_dir, fmt, dpi)  # first (see figure_writer)
    console = Console(quiet=quiet, verbose=verbose)
    trace = trace_location(trace, "physical", console)
    engine = make_engine(jobs, cache_dir, no_cache, scheduler, trace=trace, kind="physical")
    from .kinds.physical import physical_view, write_physical
    from .read import ReadReport

    with console.progress() as progress:
        view = physical_view(
            trace,
            num_pes=num_pes,
            pes_per_node=pes_per_node,
            report=ReadReport(kind="physical"),
            progress=progress,
            engine=engine,
        )
    types = view.types_shown(None if send_type == "all" else [send_type])
    write_physical(view, out, types=types, metric=metric, log_scale=log_scale, top=top)
    console.wrote(out.finish())
    report_to_console(view.report, console)
    console.summary(view)


AGGREGATION_EXAMPLE = """\b
Examples:
  actorprof aggregation run/                    # run/physical.txt + run/PE*_send.csv
  actorprof aggregation run/physical.txt --logical run/ --pes-per-node 4
  actorprof aggregation examples/ig_8pe_2nodes  # physical/ and logical/ subfolders
  actorprof aggregation run/logical --layouts 32x4,8x16   # 32 nodes of 4 vs 8 of 16
"""


@main.command(epilog=AGGREGATION_EXAMPLE, context_settings=CONTEXT)
@click.argument("trace_dir", type=click.Path(exists=True, path_type=Path))
@common_options
@engine_options
@click.option(
    "--logical",
    "logical_dir",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    metavar="DIR",
    help="Folder of the logical trace (PE<i>_send.csv). Default: next to physical.txt, "
    "TRACE_DIR, or TRACE_DIR/logical.",
)
@pes_per_node_option
@click.option(
    "--layouts",
    default=None,
    metavar="NODESxK,...",
    help="Predict other node layouts from the logical trace: NODESxPES_PER_NODE (8x16 = 8 "
    "nodes of 16 PEs) or PES_PER_NODE alone, comma-separated. Works without a physical trace.",
)
@click.option(
    "--buffer-bytes",
    type=click.IntRange(min=1, max=2**40),
    default=10_000,
    show_default=True,
    metavar="BYTES",
    help="Conveyors' buffer capacity (CONVEY_BUFFER_SIZE) for the model.",
)
@phase_option("Read the logical PE<i>_NAME_send.csv (after new_file_for_selector_trace(NAME)).")
@log_option
@handle_errors
def aggregation(
    trace_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    dpi: int | None,
    quiet: bool,
    verbose: bool,
    jobs: int,
    cache_dir: Path | None,
    no_cache: bool,
    scheduler: str | None,
    logical_dir: Path | None,
    pes_per_node: int | None,
    layouts: str | None,
    buffer_bytes: int,
    phase: str | None,
    log_scale: bool | None,
) -> None:
    """Logical vs physical through the Conveyors model: verdict, links, bytes per PE, layouts.

    TRACE_DIR holds physical.txt (or is that file, or has physical/ and logical/
    subfolders); the logical trace of the same run is found next to it or given
    with --logical. Without --pes-per-node, K comes from the logical trace's node ids.
    With --layouts the physical trace is optional (prediction alone).
    """
    out = figure_writer("aggregation", output_dir, fmt, dpi)  # first (see figure_writer)
    from .kinds.aggregation import aggregation_inputs, aggregation_view, write_aggregation
    from .read import ReadReport

    console = Console(quiet=quiet, verbose=verbose)
    physical_path, logical_path = aggregation_inputs(
        trace_dir, logical=logical_dir, physical_optional=layouts is not None
    )
    console.info(f"physical trace: {physical_path or 'none'}; logical trace: {logical_path}")
    lreport = ReadReport(kind="logical")
    preport = ReadReport(kind="physical")
    with console.progress() as progress:
        view = aggregation_view(
            physical_path or trace_dir,
            logical=logical_path,
            phase=phase,
            num_pes=num_pes,
            pes_per_node=pes_per_node,
            buffer_bytes=buffer_bytes,
            layouts=layouts,
            physical_report=preport,
            logical_report=lreport,
            engine=make_engine(jobs, cache_dir, no_cache, scheduler),
            progress=progress,
            keep_links=None,  # beyond 1,024 PEs: counted, then written a block at a time
        )
    write_aggregation(view, out, log_scale=log_scale)
    console.wrote(out.finish())
    report_to_console(lreport, console)
    if physical_path is not None:
        report_to_console(preport, console)
    console.summary(view)


# --- run report and comparison of two runs (issue 6) -------------------------

REPORT_EXAMPLE = """\b
Examples:
  actorprof report run/ -o run/report/      # job epilogue: report.html, report.json
  actorprof report run/ -o out/ --figures   # and every figure as a PNG beside them
  actorprof report examples/ig_8pe_2nodes -o out/ -q
"""


@main.command(epilog=REPORT_EXAMPLE, context_settings=CONTEXT)
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@common_options(
    formats=("png", "svg"), dpi_note=f" for --figures files, {EMBED_DPI} in the report page"
)
@engine_options
@top_option("How many top pairs (logical) and links (physical) the report lists.")
@click.option(
    "--figures",
    "figure_files",
    is_flag=True,
    help="Also write every figure of the page as a file beside report.html, named as the "
    "kind commands name theirs (logical_heatmap.png, papi_bars.png, ...): every PNG of "
    "the original actorprof.py -l -lp -p -s, in one call.",
)
@handle_errors
def report(
    run_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    dpi: int | None,
    quiet: bool,
    verbose: bool,
    jobs: int,
    cache_dir: Path | None,
    no_cache: bool,
    scheduler: str | None,
    top: int,
    figure_files: bool,
) -> None:
    """Everything about one run in one HTML page: figures, tables, findings.

    RUN_DIR holds the traces of a run (PE<i>_send.csv, PE<i>_PAPI.csv,
    overall.txt, physical.txt, every phase and label), in the folder itself or
    in its subfolders (logical/, papi/, ...). Writes report.html (self-contained:
    open it anywhere, offline) and report.json; with --figures, each figure as
    a file too. Kinds that are absent are said and the report is still written
    (exit 0); exit 1 only when no trace is found.
    """
    console = Console(quiet=quiet, verbose=verbose)
    # the progress clock starts before the heavy imports: they are part of the wait
    with console.progress() as progress:
        from .report.html import FigureCollector, FigureFiles, NamedOutputWriter

        out = NamedOutputWriter(output_dir, kind="report", fmt=fmt, background=True)
        files = FigureFiles(output_dir, fmt=fmt, dpi=dpi) if figure_files else None
        # first: its figure server imports the plotting stack while the traces are read
        collector = FigureCollector(
            fmt=fmt,
            dpi=EMBED_DPI if dpi is None else dpi,
            files=files,
            background=True,
            warm=figure_modules("report"),
        )
        from .report.figures import ReportFigures
        from .report.run import run_report

        # each kind's figures are drawn once it is read, while the next is read
        figures = ReportFigures(collector, top=top, warn=console.warn, verbose=console.verbose)
        run = run_report(
            run_dir,
            num_pes=num_pes,
            top=top,
            # a fork server: the report's later reads would be forked from a
            # process holding the earlier views (65,536 PEs: 1-2 s slower)
            engine=make_engine(jobs, cache_dir, no_cache, scheduler, fork=False),
            progress=progress,
            on_read=figures.draw,
            # the timeline's and the physical view's figures are drawn on read:
            # their tables let go after, their summaries kept
            summaries_after_read=True,
        )
    from ._memory import release_memory
    from .report.html import render_report
    from .report.run import with_coverage

    # the coverage (a dict per file) is made once the views are let go: at
    # 65,536 PEs both are hundreds of MB
    summary = run.summary(coverage=False)
    release_memory()
    figures.draw_rest(run, release=True, matrices=False)
    release_memory()
    # while the figure server draws: report.json is made by a child (when a
    # CPU is spare; the figures' list and errors are sent to it once known),
    # the page's matrices and the coverage here (at 65,536 PEs, each a second)
    send_json = out.json_beside(functools.partial(with_coverage, summary, run), "")
    matrix_failures = figures.draw_matrices(run, release=True)
    release_memory()
    summary = with_coverage(summary, run)
    failed = figures.wait()
    failed.update(matrix_failures)
    last = {"figures": [f.to_dict() for f in collector.figures], "figure_errors": failed}
    if send_json is not None:
        sent = send_json(last)
    summary.update(last)
    page = out.text(render_report(summary, collector.figures, collector.matrices), "", "html")
    if send_json is None:
        sent = out.json(summary, "")
    out.finish()
    console.wrote((files.written if files is not None else []) + [page, sent])
    _report_to_console(summary, console)


def _report_to_console(summary: dict[str, Any], console: Console) -> None:
    glance = summary["at_a_glance"]
    absent = ", ".join(summary["kinds_absent"]) or "none"
    console.info(
        f"report of {summary['run']}: read {', '.join(summary['kinds_read'])}; absent: {absent}"
    )
    for kind, message in summary["errors"].items():
        console.warn(f"{kind} trace not read: {message}")
    facts = [f"{glance['num_pes']} PEs"]
    if glance["num_nodes"] is not None:
        facts.append(f"{glance['num_nodes']} node(s)")
    if glance["messages"] is not None:
        facts.append(f"{glance['messages']:,} messages, {glance['bytes']:,} bytes")
    if glance["duration_s"] is not None:
        facts.append(f"over {glance['duration_s']:.6f} s")
    console.info("  " + ", ".join(facts))
    for finding in summary["findings"]:
        console.info(f"  [{finding['severity']}] {finding['text']}")


COMPARE_EXAMPLE = """\b
Examples:
  actorprof compare tc_cyclic/ tc_range/ --names cyclic,range -o cmp/
  actorprof compare before/ after/ --phase bfs --label "Run 0"
"""


@main.command(epilog=COMPARE_EXAMPLE, context_settings=CONTEXT)
@click.argument("run_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(exists=True, file_okay=False, path_type=Path))
@common_options
@engine_options
@click.option(
    "--names",
    default=None,
    metavar="A,B",
    help="Names of the two runs in tables and figures. [default: the folder names]",
)
@phase_option("Logical phase to compare (PE<i>_NAME_send.csv). [default: the unnamed files]")
@click.option(
    "--label",
    default=None,
    metavar="NAME",
    help="Overall profile label to compare. [default: the first label of each run]",
)
@click.option(
    "--allow-different-pes",
    is_flag=True,
    help="Compare runs with different PE counts (refused by default).",
)
@handle_errors
def compare(
    run_a: Path,
    run_b: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    dpi: int | None,
    quiet: bool,
    verbose: bool,
    jobs: int,
    cache_dir: Path | None,
    no_cache: bool,
    scheduler: str | None,
    names: str | None,
    phase: str | None,
    label: str | None,
    allow_different_pes: bool,
) -> None:
    """Two runs side by side (B relative to A): heatmaps, violins, bars, ratios B/A.

    RUN_A and RUN_B are run folders (as for actorprof report). The logical
    heatmaps share one colour scale, the violins one axis, the overall bars
    one time axis; compare.json holds every metric of both runs and B/A.
    """
    from .report.compare import compare_runs, write_compare
    from .report.html import NamedOutputWriter

    console = Console(quiet=quiet, verbose=verbose)
    out = NamedOutputWriter(output_dir, kind="compare", fmt=fmt, dpi=dpi)
    with console.progress() as progress:
        view = compare_runs(
            run_a,
            run_b,
            names=names,
            phase=phase,
            label=label,
            allow_different_pes=allow_different_pes,
            num_pes=num_pes,
            jobs=jobs,
            cache=not no_cache,
            cache_dir=cache_dir,
            scheduler=scheduler,
            progress=progress,
        )
    write_compare(view, out)
    console.wrote(out.written)
    for side in (view.a, view.b):
        for read in side.reports:
            for warning in read.warnings:
                console.warn(f"{side.name}: {warning}")
    for note in view.notes:
        console.info(note)
    console.summary(view)


CACHE_EXAMPLE = """\b
Examples:
  actorprof cache                      # where, how many entries, how big, the cap
  actorprof cache --clear              # remove every entry
  ACTORPROF_CACHE_MAX=200MB actorprof logical run/   # a smaller cap
  ACTORPROF_CACHE_DIR=/scratch/$USER/apcache actorprof report run/
"""


@main.command(epilog=CACHE_EXAMPLE, context_settings=CONTEXT)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="The cache folder. Default: as the reading commands ($ACTORPROF_CACHE_DIR, "
    "else $XDG_CACHE_HOME/actorprof or ~/.cache/actorprof).",
)
@click.option("--clear", is_flag=True, help="Remove every entry.")
@handle_errors
def cache(cache_dir: Path | None, clear: bool) -> None:
    """Where the cache of reduced traces is and how big; --clear empties it.

    One entry per trace folder; the folder is kept under ACTORPROF_CACHE_MAX
    (default 1 GB) by removing the least recently used entries.
    """
    from .engine.cache import TraceCache, cache_max_problem

    store = TraceCache(cache_dir)
    if clear:
        removed = store.clear()
        click.echo(f"removed {removed} entr{'y' if removed == 1 else 'ies'} from {store.folder}")
        return
    info = store.info()
    click.echo(f"folder: {info.folder}")
    click.echo(f"entries: {info.entries}")
    click.echo(f"size: {info.size_bytes / 1e6:,.1f} MB ({info.size_bytes:,} bytes)")
    problem = cache_max_problem()
    source = f"default; {problem.split(': the')[0]}" if problem else "ACTORPROF_CACHE_MAX"
    click.echo(f"cap: {info.max_bytes / 1e6:,.1f} MB ({source})")


if __name__ == "__main__":  # pragma: no cover
    main()

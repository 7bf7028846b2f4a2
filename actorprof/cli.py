"""The ``actorprof`` command: a thin click adapter over the library.

One command per trace kind. Every command reads, analyses, plots and writes
through the library; this module only parses options, creates figures,
writes files (with :mod:`actorprof.output`) and turns errors into exit codes:
0 success, 1 data error, 2 usage error. Heavy libraries are imported inside
the commands so that ``actorprof --help`` answers at once.
"""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ._version import __version__

F = TypeVar("F", bound=Callable[..., Any])

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

    def wrote(self, paths: list[Path]) -> None:
        for path in paths:
            click.echo(str(path))

    def progress_enabled(self) -> bool:
        return not self.quiet and sys.stderr.isatty()


def common_options(func: F) -> F:
    """Options every command shares, spelled the same everywhere."""
    options = [
        click.option(
            "--num-pes",
            type=click.IntRange(min=1),
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
        click.option(
            "--format",
            "fmt",
            type=click.Choice(["png", "svg", "pdf"]),
            default="png",
            show_default=True,
            help="Figure file format.",
        ),
        click.option("-q", "--quiet", is_flag=True, help="Nothing on stderr but errors."),
        click.option("-v", "--verbose", is_flag=True, help="Show the traceback with an error."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def engine_options(func: F) -> F:
    """How big traces are read: worker processes, the cache, a Dask cluster."""
    options = [
        click.option(
            "-j",
            "--jobs",
            type=click.IntRange(min=0),
            default=0,
            metavar="N",
            help="Worker processes reading files (and parts of big files) in parallel. "
            "Default: all cores (0).",
        ),
        click.option(
            "--cache-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            metavar="DIR",
            help="Cache of reduced trace files, reused while a file is unchanged. "
            "Default: $XDG_CACHE_HOME/actorprof or ~/.cache/actorprof.",
        ),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
        click.option(
            "--scheduler",
            default=None,
            metavar="ADDRESS",
            envvar="ACTORPROF_SCHEDULER",
            help="Read on this dask.distributed scheduler (e.g. tcp://node:8786) instead "
            "of local processes; env ACTORPROF_SCHEDULER. Needs actorprof[dask].",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


log_option = click.option("--log", "log_scale", is_flag=True, help="Logarithmic colour scale.")


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


def handle_errors(func: F) -> F:
    """Turn library errors into click errors (exit 1 data, 2 usage)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .errors import ActorProfError

        verbose = bool(kwargs.get("verbose"))
        try:
            return func(*args, **kwargs)
        except ActorProfError as exc:
            if verbose:
                traceback.print_exc(file=sys.stderr)
            if exc.exit_code == 2:
                raise click.UsageError(str(exc)) from exc
            raise click.ClickException(str(exc)) from exc
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
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


LOGICAL_EXAMPLE = """\b
Examples:
  actorprof logical run/ --num-pes 16 -o plots/
  actorprof logical run/ --metric bytes --log --self-sends exclude
  actorprof logical run/ --level node --phase phase3 --format svg -q
  actorprof logical big_run/ --jobs 8 --cache-dir /scratch/$USER/apcache
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
@handle_errors
def logical(
    trace_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    quiet: bool,
    verbose: bool,
    jobs: int,
    cache_dir: Path | None,
    no_cache: bool,
    scheduler: str | None,
    metric: str,
    self_sends: str,
    level: str,
    phase: str | None,
    log_scale: bool,
    top: int,
) -> None:
    """Who sent how many messages to whom: heatmap, violin, tables, summary.

    TRACE_DIR holds the run's PE<i>_send.csv files (or is one such file).
    """
    from ._progress import Progress
    from .engine import Engine, reduce_logical
    from .output import OutputWriter
    from .read import ReadReport, logical_files
    from .views.logical import require_messages, view_from_accumulator

    console = Console(quiet=quiet, verbose=verbose)
    out = OutputWriter(output_dir, kind="logical", fmt=fmt)
    report = ReadReport(kind="logical")
    files = logical_files(trace_dir, phase=phase, num_pes=num_pes, report=report)
    done = [0, 0]  # bytes, files
    progress = Progress(
        sum(f.path.stat().st_size for f in files),
        lambda: done[0],
        lambda: done[1],
        len(files),
        enabled=console.progress_enabled(),
    )

    def advance(nbytes: int, nfiles: int) -> None:
        done[:] = [nbytes, nfiles]
        progress.update()

    engine = Engine(jobs=jobs, cache=not no_cache, cache_dir=cache_dir, scheduler=scheduler)
    try:
        acc = reduce_logical(
            trace_dir, phase=phase, num_pes=num_pes, report=report, engine=engine, progress=advance
        )
    finally:
        progress.close()
    view = view_from_accumulator(
        acc,
        report,
        path=str(trace_dir),
        num_pes=num_pes,
        self_sends=self_sends,  # type: ignore[arg-type]
    )
    require_messages(view, level)  # type: ignore[arg-type]
    _write_logical(view, out, metric=metric, level=level, log_scale=log_scale, top=top)
    console.wrote(out.written)
    report_to_console(view.report, console)
    for line in view.summary_lines():
        console.info(line)


def _write_logical(
    view: Any, out: Any, *, metric: str, level: str, log_scale: bool, top: int
) -> None:
    from .output import new_figure
    from .plot import plot_heatmap, plot_pe_loads, plot_violin

    unit = "PE" if level == "pe" else "node"
    value_label = "messages" if metric == "count" else "bytes"
    prefix = "" if level == "pe" else "node_"
    phase = f", phase {view.report.phase}" if view.report.phase else ""
    selfs = "" if view.self_sends == "include" else f", self-sends {view.self_sends}"

    matrix = view.matrix(metric, level)
    n = max(matrix.shape)
    size = (max(7.0, 0.42 * n + 4.0), max(6.0, 0.38 * n + 3.0)) if n <= 32 else (11.0, 9.5)
    fig = new_figure(*size)
    plot_heatmap(
        matrix,
        ax=fig.axes[0],
        log=log_scale,
        value_label=value_label,
        title=f"Logical {value_label} {unit} x {unit}{phase}{selfs}",
    )
    out.figure(fig, f"{prefix}heatmap")

    fig = new_figure(7.5, 5.5)
    plot_violin(
        view.loads(metric, level),
        ax=fig.axes[0],
        value_label=value_label,
        unit_label=unit,
        title=f"Logical {value_label} per {unit}: sent and received{phase}{selfs}",
    )
    out.figure(fig, f"{prefix}violin")

    fig = new_figure(max(7.5, min(14.0, 0.12 * n + 5.0)), 4.5)
    plot_pe_loads(
        view.loads(metric, level),
        ax=fig.axes[0],
        value_label=value_label,
        unit_label=unit,
        title=f"Logical {value_label} sent and received by {unit} id{phase}{selfs}",
    )
    out.figure(fig, f"{prefix}loads")

    if level == "pe":
        out.csv(view.counts, "counts")
        out.csv(view.bytes, "bytes")
    else:
        out.csv(view.node_counts, "node_counts")
        out.csv(view.node_bytes, "node_bytes")
        out.csv(view.nodes, "nodes")
    out.csv(view.pes, "pes")
    summary = view.summary(top=top)
    summary["options"] = {"metric": metric, "level": level, "log": log_scale}
    out.json(summary, "summary")


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
@log_option
@handle_errors
def timeline(
    trace_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    quiet: bool,
    verbose: bool,
    phase: str | None,
    bins: int,
    log_scale: bool,
) -> None:
    """Messages sent per PE over time: rate, PE x time heat strip, phases.

    TRACE_DIR holds the run's PE<i>_send.csv files (with timestamps).
    """
    from .output import OutputWriter, new_figure
    from .plot.timeline import plot_rate, plot_timeline_heat
    from .read import ReadReport
    from .views.timeline import timeline_view

    console = Console(quiet=quiet, verbose=verbose)
    out = OutputWriter(output_dir, kind="timeline", fmt=fmt)
    reports: dict[str, ReadReport] = {}
    view = timeline_view(trace_dir, phase=phase, num_pes=num_pes, reports=reports)
    shown = view.display(bins)
    fig = new_figure(11.0, 7.5, nrows=2)
    top, bottom = fig.axes
    fig.get_layout_engine().set(h_pad=0.1)  # type: ignore[union-attr,call-arg]
    spans = [(p.name, p.start_s, p.end_s) for p in view.phases] if len(view.phases) > 1 else []
    plot_rate(shown, ax=top, spans=spans, title="Logical messages sent over time")
    plot_timeline_heat(shown, ax=bottom, log=log_scale)
    bottom.sharex(top)
    out.figure(fig, "rate")
    out.csv(shown.counts, "counts")
    out.json(view.summary(bins=bins), "summary")
    console.wrote(out.written)
    for report in reports.values():
        report_to_console(report, console)
    s = view.summary(bins=bins)
    console.info(
        f"timeline: {s['messages_timed']:,} timed messages over {s['duration_s']:.3f} s "
        f"on {s['num_pes']} PEs; peak {s['peak_rate_per_s']:,.0f} messages/s "
        f"at {s['peak_at_s'] or 0:.3f} s"
    )
    if s["messages_untimed"]:
        console.warn(f"{s['messages_untimed']:,} messages have no timestamp (5-column lines)")
    for p in view.phases:
        console.info(f"  phase {p.name}: {p.start_s:.3f}-{p.end_s:.3f} s, {p.messages:,} messages")


EXPORT_EXAMPLE = """\b
Examples:
  actorprof export run/ --to perfetto -o out/   # then open out/export_perfetto.json
                                               # in https://ui.perfetto.dev
"""


@main.command(epilog=EXPORT_EXAMPLE, context_settings=CONTEXT)
@click.argument("trace_dir", type=click.Path(exists=True, path_type=Path))
@common_options
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
@handle_errors
def export(
    trace_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    quiet: bool,
    verbose: bool,
    target: str,
    phase: str | None,
    bins: int,
    papi_path: Path | None,
) -> None:
    """Export send rates per PE as a trace for Perfetto / chrome://tracing.

    With a PAPI trace of the same run (in the same folder, or --papi DIR), each
    PE also gets a handled/s track (PROC) and a MAIN slice.
    """
    from .output import OutputWriter
    from .read import ReadReport
    from .views.timeline import (
        clock_overlap,
        find_papi_folder,
        papi_times,
        perfetto_trace,
        timeline_view,
    )

    console = Console(quiet=quiet, verbose=verbose)
    out = OutputWriter(output_dir, kind="export", fmt=fmt)
    reports: dict[str, ReadReport] = {}
    view = timeline_view(trace_dir, phase=phase, num_pes=num_pes, reports=reports)
    papi = None
    papi_dir = papi_path if papi_path is not None else find_papi_folder(trace_dir)
    if papi_dir is not None:
        reports["PAPI"] = ReadReport(kind="papi")
        papi = papi_times(papi_dir, phase=phase, num_pes=num_pes, report=reports["PAPI"])
        console.info(f"PAPI regions from {papi_dir}")
        if not clock_overlap(view, papi):
            console.warn(
                f"the PAPI trace in {papi_dir} does not overlap the logical trace in time: "
                "it is probably from another run, so its tracks are misplaced"
            )
    trace = perfetto_trace(view, papi=papi, bins=bins)
    out.json(trace, target)
    console.wrote(out.written)
    for report in reports.values():
        report_to_console(report, console)
    console.info(
        f"export: {len(trace['traceEvents']):,} events, {view.num_pes} PEs, "
        f"bins of {trace['otherData']['bin_s'] * 1e3:.3g} ms; open it in https://ui.perfetto.dev"
    )


PAPI_EXAMPLE = """\b
Examples:
  actorprof papi run/ --num-pes 16 -o plots/
  actorprof papi run/ --by-mailbox --sort total
  actorprof papi run/ --counters PAPI_TOT_CYC,PAPI_L1_DCM,PAPI_BR_MSP,PAPI_TOT_INS
"""


@main.command(epilog=PAPI_EXAMPLE, context_settings=CONTEXT)
@click.argument("trace_dir", type=click.Path(exists=True, path_type=Path))
@common_options
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
    quiet: bool,
    verbose: bool,
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
    from ._progress import Progress
    from .output import OutputWriter
    from .read import ReadReport
    from .read.papi import iter_papi, papi_files
    from .views.papi import build_papi_view

    names = None if counters is None else [c.strip() for c in counters.split(",")]
    console = Console(quiet=quiet, verbose=verbose)
    out = OutputWriter(output_dir, kind="papi", fmt=fmt)
    report = ReadReport(kind="papi")
    files = papi_files(trace_dir, phase=phase, num_pes=num_pes, report=report)
    progress = Progress(
        sum(f.path.stat().st_size for f in files),
        lambda: report.bytes_read,
        lambda: len(report.files),
        len(files),
        enabled=console.progress_enabled(),
    )
    view = build_papi_view(
        progress.wrap(
            iter_papi(trace_dir, phase=phase, num_pes=num_pes, counters=names, report=report)
        ),
        report,
        path=str(trace_dir),
        num_pes=num_pes,
        counters=names,
    )
    _write_papi(view, out, by_mailbox=by_mailbox, sort=sort)
    console.wrote(out.written)
    report_to_console(view.report, console)
    for line in view.summary_lines():
        console.info(line)


def _write_papi(view: Any, out: Any, *, by_mailbox: bool, sort: str) -> None:
    from .output import new_figure
    from .plot.bars import plot_papi_bars

    phase = f", phase {view.report.phase}" if view.report.phase else ""
    split = "PROC per mailbox" if by_mailbox else "PROC"
    if view.all_zero:
        # no instruction counts: show what the trace still says, and why
        panels = [
            ("messages", "messages handled", f"Messages handled per PE ({split}){phase}"),
            ("num_sends", "sends issued", f"Sends issued per PE (MAIN and {split}){phase}"),
        ]
    else:
        panels = [(c, c, f"{c}: MAIN + {split} per PE{phase}") for c in view.counters]
    ncols = 1 if len(panels) == 1 else 2
    nrows = (len(panels) + 1) // 2 if ncols == 2 else 1
    height = 4.4 * nrows + (0.7 if view.all_zero else 0.0)  # room for the explanation
    fig = new_figure(7.0 * ncols, height, nrows=nrows, ncols=ncols)
    for ax, (value, value_label, title) in zip(fig.axes, panels, strict=False):
        plot_papi_bars(
            view.segments(value, by_mailbox=by_mailbox),
            ax=ax,
            value_label=value_label,
            sort=sort == "total",
            title=title,
        )
    for ax in fig.axes[len(panels) :]:
        ax.set_visible(False)
    if view.all_zero:
        fig.suptitle(
            f"All PAPI counters are 0 in this trace ({', '.join(view.counters)}): the machine "
            "gave no hardware counter readings.\nShown instead: messages handled and sends "
            "issued per PE, which the trace records exactly.",
            fontsize="medium",
            color="#a33",
        )
    out.figure(fig, "bars")
    out.csv(view.pes, "pes")
    out.csv(view.regions, "mailboxes", index=False)
    summary = view.summary()
    summary["options"] = {"by_mailbox": by_mailbox, "sort": sort}
    out.json(summary, "summary")


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
    from .output import OutputWriter
    from .read import ReadReport
    from .read.overall import program_output_lines, read_overall
    from .views.overall import build_overall_view

    console = Console(quiet=quiet, verbose=verbose)
    out = OutputWriter(output_dir, kind="overall", fmt=fmt)
    report = ReadReport(kind="overall")
    raw = read_overall(trace, num_pes=num_pes, report=report)
    view = build_overall_view(
        raw, report, path=str(trace), num_pes=num_pes, label=label, cpu_ghz=cpu_ghz
    )
    _write_overall(view, out, sort=sort)
    console.wrote(out.written)
    for note in report.notes:
        console.info(note)
    for warning in report.warnings:
        console.warn(warning)
    ignored = program_output_lines(report)
    if ignored:
        console.info(f"{ignored:,} line(s) of program output (not profile lines) ignored")
    for line in view.summary_lines():
        console.info(line)


def _write_overall(view: Any, out: Any, *, sort: str) -> None:
    from .output import new_figure
    from .plot.bars import plot_time_stacked
    from .read.overall import describe_group

    groups = view.groups
    summary = view.summary()
    summaries = summary["groups"]
    unit = "seconds" if view.cpu_ghz else "cycles"
    fig = new_figure(14.0, 4.2 * len(groups), nrows=len(groups), ncols=2)
    axes = fig.axes
    for k, (label, run) in enumerate(groups):
        times = view.group_times(label, run)
        name = describe_group(label, run)
        plot_time_stacked(
            times,
            ax=axes[2 * k],
            sort=sort == "total",
            cpu_ghz=view.cpu_ghz,
            legend=False,
            title=f"{name}: T_MAIN, T_COMM, T_PROC per PE ({unit})",
        )
        pop = summaries[k]["pop_efficiencies"]
        effs = (
            ""
            if pop is None
            else "\nPOP: load balance {}, communication eff. {}, parallel eff. {}".format(
                *(
                    "n/a" if pop[key] is None else f"{pop[key]:.2f}"
                    for key in ("load_balance", "communication_efficiency", "parallel_efficiency")
                )
            )
        )
        plot_time_stacked(
            times,
            ax=axes[2 * k + 1],
            relative=True,
            sort=sort == "total",
            title=f"{name}: fractions of T_TOTAL{effs}",
        )
    out.figure(fig, "stacked")
    out.csv(view.pes(), "pes", index=False)
    summary["options"] = {"label": view.label, "sort": sort, "cpu_ghz": view.cpu_ghz}
    out.json(summary, "summary")


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
        type=click.IntRange(min=1),
        default=None,
        metavar="K",
        help="PEs per node (node = pe // K): node matrices and the Conveyors 2D-mesh check.",
    )(func)


@main.command(epilog=PHYSICAL_EXAMPLE, context_settings=CONTEXT)
@click.argument("trace", type=click.Path(exists=True, path_type=Path))
@common_options
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
    quiet: bool,
    verbose: bool,
    send_type: str,
    metric: str,
    pes_per_node: int | None,
    log_scale: bool,
    top: int,
) -> None:
    """What the network carried: buffers and bytes per send type, heatmaps, tables, summary.

    TRACE is physical.txt (the stdout of a run built with -DENABLE_TRACE_PHYSICAL,
    program output and all) or the folder holding it.
    """
    from ._progress import Progress
    from .output import OutputWriter
    from .read import ReadReport
    from .read.physical import iter_physical, physical_file
    from .views.physical import build_physical_view

    console = Console(quiet=quiet, verbose=verbose)
    out = OutputWriter(output_dir, kind="physical", fmt=fmt)
    report = ReadReport(kind="physical")
    path = physical_file(trace)
    progress = Progress(
        path.stat().st_size,
        lambda: report.bytes_read,
        lambda: len(report.files),
        1,
        enabled=console.progress_enabled(),
    )
    view = build_physical_view(
        progress.wrap(iter_physical(path, num_pes=num_pes, report=report)),
        report,
        path=str(path),
        num_pes=num_pes,
        pes_per_node=pes_per_node,
    )
    types = view.types_shown(None if send_type == "all" else [send_type])
    _write_physical(view, out, types=types, metric=metric, log_scale=log_scale, top=top)
    console.wrote(out.written)
    report_to_console(view.report, console)
    for line in view.summary_lines():
        console.info(line)


def _write_physical(
    view: Any, out: Any, *, types: list[str], metric: str, log_scale: bool, top: int
) -> None:
    from .output import new_figure
    from .plot import plot_heatmap, plot_violin
    from .schema import SEND_TYPES
    from .views.physical import stacked

    value_label = "buffers" if metric == "count" else "bytes"
    n = view.num_pes
    width, height = (max(6.0, 0.4 * n + 3.5), max(5.2, 0.36 * n + 2.8)) if n <= 32 else (9.0, 7.8)
    fig = new_figure(width * len(types), height, ncols=len(types))
    for ax, send_type in zip(fig.axes, types, strict=True):
        plot_heatmap(
            view.matrix(send_type, metric),
            ax=ax,
            log=log_scale,
            value_label=value_label,
            title=f"{send_type}: {value_label} PE x PE"
            if len(types) > 1
            else f"Physical {send_type} {value_label} PE x PE",
        )
    if len(types) > 1:
        fig.suptitle(f"Physical trace: {value_label} per link, one panel per send type")
    out.figure(fig, "heatmap")

    loads = view.loads(types, metric)
    fig = new_figure(max(7.5, 2.2 * loads.shape[1] + 1.5), 5.5)
    plot_violin(
        loads,
        ax=fig.axes[0],
        value_label=value_label,
        unit_label="PE",
        title=f"Physical {value_label} per PE: sent and received, per send type",
    )
    out.figure(fig, "violin")

    out.csv(stacked({t: view.matrix(t, "count") for t in SEND_TYPES}), "counts")
    out.csv(stacked({t: view.matrix(t, "bytes") for t in SEND_TYPES}), "bytes")
    if view.nodes is not None:
        out.csv(stacked({t: view.matrix(t, "count", "node") for t in SEND_TYPES}), "node_counts")
        out.csv(stacked({t: view.matrix(t, "bytes", "node") for t in SEND_TYPES}), "node_bytes")
    out.csv(view.pes, "pes")
    summary = view.summary(top=top)
    summary["options"] = {"send_types": types, "metric": metric, "log": log_scale}
    out.json(summary, "summary")


AGGREGATION_EXAMPLE = """\b
Examples:
  actorprof aggregation run/                    # run/physical.txt + run/PE*_send.csv
  actorprof aggregation run/physical.txt --logical run/ --pes-per-node 4
  actorprof aggregation examples/ig_8pe_2nodes  # physical/ and logical/ subfolders
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
@phase_option("Read the logical PE<i>_NAME_send.csv (after new_file_for_selector_trace(NAME)).")
@log_option
@handle_errors
def aggregation(
    trace_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    quiet: bool,
    verbose: bool,
    jobs: int,
    cache_dir: Path | None,
    no_cache: bool,
    scheduler: str | None,
    logical_dir: Path | None,
    pes_per_node: int | None,
    phase: str | None,
    log_scale: bool,
) -> None:
    """Logical vs physical: messages vs buffers, routed messages per link, bytes per PE.

    TRACE_DIR holds physical.txt (or is that file, or has physical/ and logical/
    subfolders); the logical trace of the same run is found next to it or given
    with --logical. Without --pes-per-node, K comes from the logical trace's node ids.
    """
    from ._progress import Progress
    from .engine import Engine, reduce_logical
    from .output import OutputWriter
    from .read import ReadReport, logical_files
    from .read.physical import iter_physical
    from .views.aggregation import (
        aggregation_inputs,
        build_aggregation_view,
        pes_per_node_from_nodes,
    )
    from .views.logical import view_from_accumulator
    from .views.physical import build_physical_view

    console = Console(quiet=quiet, verbose=verbose)
    out = OutputWriter(output_dir, kind="aggregation", fmt=fmt)
    physical_path, logical_path = aggregation_inputs(trace_dir, logical=logical_dir)
    console.info(f"physical trace: {physical_path}; logical trace: {logical_path}")
    lreport = ReadReport(kind="logical")
    preport = ReadReport(kind="physical")
    files = logical_files(logical_path, phase=phase, num_pes=num_pes, report=lreport)
    done = [0, 0]  # logical bytes and files, from the engine
    progress = Progress(
        sum(f.path.stat().st_size for f in files) + physical_path.stat().st_size,
        lambda: done[0] + preport.bytes_read,
        lambda: done[1] + len(preport.files),
        len(files) + 1,
        enabled=console.progress_enabled(),
    )

    def advance(nbytes: int, nfiles: int) -> None:
        done[:] = [nbytes, nfiles]
        progress.update()

    engine = Engine(jobs=jobs, cache=not no_cache, cache_dir=cache_dir, scheduler=scheduler)
    acc = reduce_logical(
        logical_path, phase=phase, num_pes=num_pes, report=lreport, engine=engine, progress=advance
    )
    lview = view_from_accumulator(acc, lreport, path=str(logical_path), num_pes=num_pes)
    k = (
        pes_per_node
        if pes_per_node is not None
        else pes_per_node_from_nodes(lview.matrices.pe_node)
    )
    pview = build_physical_view(
        progress.wrap(iter_physical(physical_path, num_pes=num_pes, report=preport)),
        preport,
        path=str(physical_path),
        num_pes=num_pes,
        pes_per_node=k,
    )
    view = build_aggregation_view(pview, lview, pes_per_node=pes_per_node)
    _write_aggregation(view, out, log_scale=log_scale)
    console.wrote(out.written)
    report_to_console(lreport, console)
    report_to_console(preport, console)
    for line in view.summary_lines():
        console.info(line)


def _write_aggregation(view: Any, out: Any, *, log_scale: bool) -> None:
    from .output import new_figure
    from .plot import plot_heatmap
    from .plot.aggregation import plot_bytes_bars

    approx = "\nAPPROXIMATE: the traces do not look like one run" if view.approximate else ""
    n = view.num_pes
    size = (max(6.5, 0.42 * n + 3.5), max(6.0, 0.38 * n + 3.0)) if n <= 32 else (10.0, 9.0)
    fig = new_figure(*size)
    hops = "one hop, 1D" if view.routes.topology == "1d" else f"2D mesh, K={view.pes_per_node}"
    plot_heatmap(
        view.factor,
        ax=fig.axes[0],
        totals=False,
        log=log_scale,
        value_label="routed messages per buffer",
        title=f"Aggregation factor per link ({hops}){approx}",
    )
    out.figure(fig, "heatmap")

    totals = view.totals()
    ratio = totals["wire_over_payload"]
    fig = new_figure(max(7.0, 0.55 * n + 3.0) if n <= 64 else 12.0, 5.0)
    plot_bytes_bars(
        view.pes,
        ax=fig.axes[0],
        title="Bytes sent per PE: logical payload vs physical"
        + ("" if ratio is None else f" (x{ratio:.2f} overall)")
        + approx,
    )
    out.figure(fig, "bytes")

    out.csv(view.pes, "pes")
    out.csv(view.links, "links", index=False)
    summary = view.summary()
    summary["options"] = {"log": log_scale}
    out.json(summary, "summary")


# --- run report and comparison of two runs (issue 6) -------------------------

REPORT_EXAMPLE = """\b
Examples:
  actorprof report run/ -o run/report/      # job epilogue: report.html, report.json
  actorprof report examples/ig_8pe_2nodes -o out/ -q
"""


@main.command(epilog=REPORT_EXAMPLE, context_settings=CONTEXT)
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@common_options
@engine_options
@top_option("How many top pairs (logical) and links (physical) the report lists.")
@handle_errors
def report(
    run_dir: Path,
    num_pes: int | None,
    output_dir: Path,
    fmt: str,
    quiet: bool,
    verbose: bool,
    jobs: int,
    cache_dir: Path | None,
    no_cache: bool,
    scheduler: str | None,
    top: int,
) -> None:
    """Everything about one run in one HTML page: figures, tables, findings.

    RUN_DIR holds the traces of a run (PE<i>_send.csv, PE<i>_PAPI.csv,
    overall.txt, physical.txt, every phase and label), in the folder itself or
    in its subfolders (logical/, papi/, ...). Writes report.html (self-contained:
    open it anywhere, offline) and report.json. Kinds that are absent are said
    and the report is still written (exit 0); exit 1 only when no trace is found.
    """
    from .errors import UsageError
    from .report_html import FigureCollector, NamedOutputWriter, render_report
    from .views.report import run_report

    if fmt not in ("png", "svg"):
        raise UsageError(f"the report embeds png or svg figures, not {fmt}: use --format png|svg")
    console = Console(quiet=quiet, verbose=verbose)
    out = NamedOutputWriter(output_dir, kind="report", fmt=fmt)
    run = run_report(
        run_dir,
        num_pes=num_pes,
        top=top,
        jobs=jobs,
        cache=not no_cache,
        cache_dir=cache_dir,
        scheduler=scheduler,
    )
    summary = run.summary()
    collector = FigureCollector(fmt=fmt)
    failed = _report_figures(run, collector, top=top, console=console)
    summary["figures"] = [f.to_dict() for f in collector.figures]
    summary["figure_errors"] = failed
    out.text(render_report(summary, collector.figures), "", "html")
    out.json(summary, "")
    console.wrote(out.written)
    _report_to_console(summary, console)


def _report_figures(run: Any, out: Any, *, top: int, console: Console) -> dict[str, str]:
    """Draw every view's figures with the commands' own helpers into ``out``."""
    jobs: list[tuple[str, str | None, Callable[[], None]]] = []
    for name, view in run.logical.items():
        jobs.append(
            (
                "logical",
                name,
                functools.partial(
                    _write_logical, view, out, metric="count", level="pe", log_scale=False, top=top
                ),
            )
        )
    if run.timeline is not None and run.timeline.timeline.start_s is not None:
        jobs.append(("timeline", None, functools.partial(_report_timeline, run.timeline, out)))
    for name, view in run.papi.items():
        jobs.append(
            ("papi", name, functools.partial(_write_papi, view, out, by_mailbox=False, sort="pe"))
        )
    if run.overall is not None:
        jobs.append(
            ("overall", None, functools.partial(_write_overall, run.overall, out, sort="pe"))
        )
    if run.physical is not None:
        view = run.physical
        jobs.append(
            (
                "physical",
                None,
                functools.partial(
                    _write_physical,
                    view,
                    out,
                    types=view.types_shown(),
                    metric="count",
                    log_scale=False,
                    top=top,
                ),
            )
        )
    if run.aggregation is not None:
        jobs.append(
            (
                "aggregation",
                None,
                functools.partial(_write_aggregation, run.aggregation, out, log_scale=False),
            )
        )
    failed: dict[str, str] = {}
    for section, scope, draw in jobs:
        out.section, out.scope = section, scope
        try:
            draw()
        except Exception as exc:  # a figure must not cost the epilogue its report
            if console.verbose:
                traceback.print_exc(file=sys.stderr)
            key = section if scope is None else f"{section} ({scope})"
            failed[key] = f"{type(exc).__name__}: {exc}"
            console.warn(f"{key}: figure not drawn ({failed[key]}); rerun with -v and report it")
    return failed


def _report_timeline(view: Any, out: Any, *, bins: int = 200) -> None:
    from .output import new_figure
    from .plot.timeline import plot_rate, plot_timeline_heat

    shown = view.display(bins)
    fig = new_figure(11.0, 7.5, nrows=2)
    top, bottom = fig.axes
    spans = [(p.name, p.start_s, p.end_s) for p in view.phases] if len(view.phases) > 1 else []
    plot_rate(shown, ax=top, spans=spans, title="Logical messages sent over time")
    plot_timeline_heat(shown, ax=bottom)
    bottom.sharex(top)
    out.figure(fig, "rate")


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
        facts.append(f"over {glance['duration_s']:.3f} s")
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
    from .report_html import NamedOutputWriter
    from .views.compare import compare_runs

    console = Console(quiet=quiet, verbose=verbose)
    out = NamedOutputWriter(output_dir, kind="compare", fmt=fmt)
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
    )
    _write_compare(view, out)
    console.wrote(out.written)
    for side in (view.a, view.b):
        for read in side.reports:
            for warning in read.warnings:
                console.warn(f"{side.name}: {warning}")
    for note in view.notes:
        console.info(note)
    for line in view.summary_lines():
        console.info(line)


def _write_compare(view: Any, out: Any) -> None:
    import pandas as pd

    from .output import new_figure
    from .plot import plot_heatmap, plot_violin
    from .plot.bars import plot_time_stacked

    a, b = view.a, view.b
    if a.logical is not None and b.logical is not None:
        mats = [a.logical.counts, b.logical.counts]
        cells = max(float(m.to_numpy().max()) for m in mats)
        totals = max(
            float(max(m.to_numpy().sum(axis=0).max(), m.to_numpy().sum(axis=1).max())) for m in mats
        )
        n = max(max(m.shape) for m in mats)
        w, h = (max(7.0, 0.42 * n + 4.0), max(6.0, 0.38 * n + 3.0)) if n <= 32 else (10.0, 9.0)
        fig = new_figure(2 * w, h + 0.4, ncols=2)
        for ax, side, matrix in zip(fig.axes, (a, b), mats, strict=True):
            plot_heatmap(
                matrix,
                ax=ax,
                value_label="messages",
                title=f"{side.name}: logical messages PE x PE",
                vmax=(cells, totals),
            )
        fig.suptitle(
            f"{a.name} vs {b.name}, one colour scale: cells 0-{cells:,.0f}, "
            f"totals 0-{totals:,.0f} messages"
        )
        out.figure(fig, "heatmap")

        loads = pd.DataFrame(
            {
                f"{a.name}\nsent": a.logical.pes["sent"],
                f"{b.name}\nsent": b.logical.pes["sent"],
                f"{a.name}\nreceived": a.logical.pes["received"],
                f"{b.name}\nreceived": b.logical.pes["received"],
            }
        )
        fig = new_figure(9.5, 5.5)
        plot_violin(
            loads,
            ax=fig.axes[0],
            value_label="messages",
            unit_label="PE",
            title=f"Messages per PE, {a.name} vs {b.name} (one axis)",
        )
        out.figure(fig, "violin")
    if a.group is not None and b.group is not None:
        times = [a.overall.group_times(*a.group), b.overall.group_times(*b.group)]
        fig = new_figure(14.0, 8.4, nrows=2, ncols=2)
        axes = fig.axes
        for k, (side, table) in enumerate(zip((a, b), times, strict=True)):
            plot_time_stacked(
                table,
                ax=axes[k],
                legend=k == 1,
                title=f"{side.name}: T_MAIN, T_COMM, T_PROC per PE (cycles)",
            )
            plot_time_stacked(
                table,
                ax=axes[2 + k],
                relative=True,
                legend=False,
                title=f"{side.name}: fractions of T_TOTAL",
            )
        top = max(axes[0].get_ylim()[1], axes[1].get_ylim()[1])
        for ax in axes[:2]:
            ax.set_ylim(0, top)
        out.figure(fig, "overall")
    rows = [
        {"kind": kind, "metric": metric, **values}
        for kind, metrics in view.ratios().items()
        for metric, values in metrics.items()
    ]
    out.csv(
        pd.DataFrame(rows, columns=["kind", "metric", "a", "b", "b_over_a"]), "ratios", index=False
    )
    out.json(view.summary(), "")


if __name__ == "__main__":  # pragma: no cover
    main()

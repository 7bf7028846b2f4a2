"""The report's figures: every view drawn by its own writer, failures contained."""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._memory import release_memory
from ..analyze.pyramid import matrix_pyramid
from ..kinds.aggregation import write_aggregation
from ..kinds.logical import write_logical
from ..kinds.overall import write_overall
from ..kinds.papi import write_papi
from ..kinds.physical import write_physical
from ..kinds.timeline import write_timeline_figure
from ._matrix import MatrixExplorer

if TYPE_CHECKING:
    from pathlib import Path

    from ..kinds.logical import LogicalView
    from .html import EmbeddedFigure, FigureCollector
    from .run import RunReport

#: Bytes of matrix data a page may embed, over all its logical phases (the
#: page's text is 4/3 of it, base64): a 65,536-PE report stays under 25 MB.
MATRIX_PAGE_BYTES = 12_000_000


def _pes_per_node(view: LogicalView) -> int | None:
    """The node size when every node has as many PEs (as the heatmap pools)."""
    node = view.matrices.pe_node
    sizes = node[node >= 0].value_counts()
    return int(sizes.iloc[0]) if len(sizes) and sizes.nunique() == 1 else None


def matrix_explorer(view: LogicalView, *, budget_bytes: int) -> MatrixExplorer:
    """The interactive matrix of one logical view, its finer levels within ``budget_bytes``."""
    pyramid = matrix_pyramid(
        view.pairs, view.num_pes, pes_per_node=_pes_per_node(view), max_bytes=budget_bytes
    )
    return MatrixExplorer(pyramid, view.path, budget_bytes)


def report_figures(
    run: RunReport,
    out: FigureCollector,
    *,
    top: int,
    warn: Callable[[str], None],
    verbose: bool = False,
    release: bool = False,
) -> dict[str, str]:
    """Draw every view's figures with the commands' own writers into ``out``.

    A figure that fails is reported through ``warn`` (with the traceback on
    stderr when ``verbose``) and listed in the result: a figure must not cost
    a job epilogue its report. ``release``: let each view of ``run`` go once
    its last figure is drawn (the CLI's report, once the summary is made:
    at 65,536 PEs the views are hundreds of MB).
    """
    Job = tuple[str, str | None, Callable[[], None], Callable[[], object] | None]
    jobs: list[Job] = []
    for name in run.logical:
        jobs.append(
            (
                "logical",
                name,
                functools.partial(
                    write_logical,
                    run.logical[name],
                    out,
                    metric="count",
                    level="pe",
                    log_scale=None,
                    top=top,
                ),
                None,  # the page's matrix is drawn from it last
            )
        )
    if run.timeline is not None and run.timeline.timeline.start_s is not None:
        jobs.append(
            (
                "timeline",
                None,
                functools.partial(write_timeline_figure, run.timeline, out),
                functools.partial(setattr, run, "timeline", None),
            )
        )
    for name in run.papi:
        jobs.append(
            (
                "papi",
                name,
                functools.partial(write_papi, run.papi[name], out, by_mailbox=False, sort="pe"),
                functools.partial(run.papi.pop, name),
            )
        )
    if run.overall is not None:
        jobs.append(
            (
                "overall",
                None,
                functools.partial(write_overall, run.overall, out, sort="pe"),
                functools.partial(setattr, run, "overall", None),
            )
        )
    if run.physical is not None:
        jobs.append(
            (
                "physical",
                None,
                functools.partial(
                    write_physical,
                    run.physical,
                    out,
                    types=run.physical.types_shown(),
                    metric="count",
                    log_scale=None,
                    top=top,
                ),
                functools.partial(setattr, run, "physical", None),
            )
        )
    if run.aggregation is not None:
        jobs.append(
            (
                "aggregation",
                None,
                functools.partial(write_aggregation, run.aggregation, out, log_scale=None),
                functools.partial(setattr, run, "aggregation", None),
            )
        )
    budget = MATRIX_PAGE_BYTES // max(1, len(run.logical))
    for name in run.logical:
        jobs.append(
            (
                "logical",
                name,
                functools.partial(_explore, run.logical[name], out, name, budget),
                functools.partial(run.logical.pop, name),
            )
        )
    figures, files = len(out.figures), len(_files_written(out))
    drawn: dict[int, tuple[list[EmbeddedFigure], list[Path]]] = {}
    failures: dict[int, tuple[str, str]] = {}
    order = list(range(len(jobs)))
    sections = [(job[0], job[1]) for job in jobs]
    if release:  # the views that hold the most are drawn (and let go) first
        order.sort(key=lambda i: _DRAW_FIRST.get(sections[i][0], len(_DRAW_FIRST)))
    slots: list[Job | None] = list(jobs)
    del jobs
    for i in order:
        job, slots[i] = slots[i], None
        assert job is not None
        section, scope, draw, drop = job
        del job
        out.section, out.scope = section, scope
        start, start_files = len(out.figures), len(_files_written(out))
        try:
            draw()
        except Exception as exc:  # a figure must not cost the epilogue its report
            if verbose:
                traceback.print_exc(file=sys.stderr)
            key = section if scope is None else f"{section} ({scope})"
            failures[i] = (key, f"{type(exc).__name__}: {exc}")
            warn(f"{key}: figure not drawn ({failures[i][1]}); rerun with -v and report it")
        finally:
            del draw
            drawn[i] = (out.figures[start:], _files_written(out)[start_files:])
            if release and drop is not None:
                drop()
            release_memory()  # a figure's drawing buffers (and a view let go)
    jobs_of = {(section, scope): i for i, (section, scope) in reversed(list(enumerate(sections)))}
    for section, scope, error in out.finish():  # the figures drawn in the background
        i = jobs_of[(section, scope)]
        if i not in failures:
            if verbose:
                traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
            key = section if scope is None else f"{section} ({scope})"
            failures[i] = (key, f"{type(error).__name__}: {error}")
            warn(f"{key}: figure not drawn ({failures[i][1]}); rerun with -v and report it")
    # the page's order, whatever the drawing order
    out.figures[figures:] = [f for i in sorted(drawn) for f in out.drawn(drawn[i][0])]
    if out.files is not None:
        out.files.written[files:] = [p for i in sorted(drawn) for p in drawn[i][1]]
    return {key: text for _, (key, text) in sorted(failures.items())}


#: The order the CLI's report draws in (``release``): the views holding the
#: most let go first, the overall figure (a costly drawing of every PE) once
#: they are gone; the logical view last, the aggregation view holds it.
_DRAW_FIRST = {"timeline": 0, "physical": 1, "aggregation": 2, "papi": 3, "overall": 4}


def _files_written(out: FigureCollector) -> list[Path]:
    return [] if out.files is None else out.files.written


def _explore(view: LogicalView, out: FigureCollector, name: str, budget: int) -> None:
    out.matrices[name] = matrix_explorer(view, budget_bytes=budget)

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
    return ReportFigures(out, top=top, warn=warn, verbose=verbose).finish(run, release=release)


#: A figure job: section, scope (the phase), what draws, what lets its view
#: go, and whether it draws the page's matrix (last) rather than figures.
_Job = tuple[str, "str | None", Callable[[], None], "Callable[[], object] | None", bool]
#: A job's key: its section, scope, and whether it draws the page's matrix.
_Key = tuple[str, "str | None", bool]


class ReportFigures:
    """The report's figures, drawn kind by kind as each view is read.

    :meth:`draw` draws one kind's figures now (``run_report``'s ``on_read``:
    with a figure server, they are drawn while the next kind is read);
    :meth:`finish` draws the rest, and puts every figure in the page's
    order whatever the drawing order. The result is :func:`report_figures`'.
    """

    def __init__(
        self,
        out: FigureCollector,
        *,
        top: int,
        warn: Callable[[str], None],
        verbose: bool = False,
    ) -> None:
        self.out, self.top, self.warn, self.verbose = out, top, warn, verbose
        self._figures, self._files = len(out.figures), len(_files_written(out))
        # by job: what it drew, or why it failed
        self._drawn: dict[_Key, tuple[list[EmbeddedFigure], list[Path]]] = {}
        self._failures: dict[_Key, tuple[str, str]] = {}
        self._keys: list[_Key] = []  # the jobs of draw_rest, in the page's order

    def draw(self, run: RunReport, kind: str) -> None:
        """Draw the figures of ``kind``'s views in ``run`` not drawn yet
        (the page's matrix is left for :meth:`finish`)."""
        for section, scope, job, _, matrix in _jobs(run, self.out, self.top):
            if section == kind and not matrix and (section, scope, matrix) not in self._drawn:
                self._run((section, scope, matrix), job)
                release_memory()  # a figure's drawing buffers

    def finish(self, run: RunReport, *, release: bool = False) -> dict[str, str]:
        """Draw what is left, wait for the figures drawn in the background;
        the failures, by section (see :func:`report_figures`)."""
        self.draw_rest(run, release=release)
        return self.wait()

    def draw_rest(self, run: RunReport, *, release: bool = False, matrices: bool = True) -> None:
        """:meth:`finish` without the wait: draw what is left (in the
        background where the collector has a figure server); then
        :meth:`wait`. ``matrices`` False leaves the page's matrices (and the
        logical views they are drawn from) to :meth:`draw_matrices`."""
        out = self.out
        jobs = [job for job in _jobs(run, out, self.top) if matrices or not job[4]]
        keys = [(section, scope, matrix) for section, scope, _, _, matrix in jobs]
        order = list(range(len(jobs)))
        if release:  # the views that hold the most are drawn (and let go) first
            order.sort(key=lambda i: _DRAW_FIRST.get(keys[i][0], len(_DRAW_FIRST)))
        slots: list[_Job | None] = list(jobs)
        del jobs
        for i in order:
            job, slots[i] = slots[i], None
            assert job is not None
            drop = job[3]
            if keys[i] not in self._drawn:
                self._run(keys[i], job[2])
            del job
            if release and drop is not None:
                drop()
            release_memory()  # a figure's drawing buffers (and a view let go)
        self._keys = keys

    def wait(self) -> dict[str, str]:
        """Wait for the figures drawn in the background and put every figure
        in the page's order; the failures, by section (see :meth:`finish`)."""
        out, keys = self.out, self._keys
        index = {key: i for i, key in reversed(list(enumerate(keys)))}
        for section, scope, error in out.finish():  # the figures drawn in the background
            key = (section, scope, False)
            if key not in self._failures:
                if self.verbose:
                    traceback.print_exception(
                        type(error), error, error.__traceback__, file=sys.stderr
                    )
                self._fail(key, f"{type(error).__name__}: {error}")
        # the page's order, whatever the drawing order (the matrices drawn
        # apart draw no figure: they come last)
        drawn = sorted(self._drawn.items(), key=lambda item: index.get(item[0], len(index)))
        out.figures[self._figures :] = [f for _, (figs, _) in drawn for f in out.drawn(figs)]
        if out.files is not None:
            out.files.written[self._files :] = [p for _, (_, paths) in drawn for p in paths]
        failures = sorted(
            (item for item in self._failures.items() if item[0] in index),
            key=lambda item: index[item[0]],
        )
        return {key: text for _, (key, text) in failures}

    def draw_matrices(self, run: RunReport, *, release: bool = False) -> dict[str, str]:
        """Draw the page's matrices left by ``draw_rest(matrices=False)``
        (before or after :meth:`wait`); their failures, by section, which
        follow :meth:`wait`'s in the page's order. ``release``: let each
        logical view go once its matrix is drawn."""
        failed: dict[str, str] = {}
        for section, scope, job, drop, matrix in _jobs(run, self.out, self.top):
            key = (section, scope, matrix)
            if not matrix or key in self._drawn:
                continue
            self._run(key, job)
            if key in self._failures:
                name, text = self._failures[key]
                failed[name] = text
            if release and drop is not None:
                drop()
            release_memory()  # the pyramid's buffers (and a view let go)
        return failed

    def _run(self, key: _Key, job: Callable[[], None]) -> None:
        out = self.out
        out.section, out.scope = key[0], key[1]
        start, start_files = len(out.figures), len(_files_written(out))
        try:
            job()
        except Exception as exc:  # a figure must not cost the epilogue its report
            if self.verbose:
                traceback.print_exc(file=sys.stderr)
            self._fail(key, f"{type(exc).__name__}: {exc}")
        finally:
            self._drawn[key] = (out.figures[start:], _files_written(out)[start_files:])

    def _fail(self, key: _Key, text: str) -> None:
        name = key[0] if key[1] is None else f"{key[0]} ({key[1]})"
        self._failures[key] = (name, text)
        self.warn(f"{name}: figure not drawn ({text}); rerun with -v and report it")


def _jobs(run: RunReport, out: FigureCollector, top: int) -> list[_Job]:
    """Every figure job of ``run``'s views, in the page's order."""
    jobs: list[_Job] = []
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
                False,
            )
        )
    if run.timeline is not None and run.timeline.timeline.start_s is not None:
        jobs.append(
            (
                "timeline",
                None,
                functools.partial(write_timeline_figure, run.timeline, out),
                functools.partial(setattr, run, "timeline", None),
                False,
            )
        )
    for name in run.papi:
        jobs.append(
            (
                "papi",
                name,
                functools.partial(write_papi, run.papi[name], out, by_mailbox=False, sort="pe"),
                functools.partial(run.papi.pop, name),
                False,
            )
        )
    if run.overall is not None:
        jobs.append(
            (
                "overall",
                None,
                functools.partial(write_overall, run.overall, out, sort="pe"),
                functools.partial(setattr, run, "overall", None),
                False,
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
                False,
            )
        )
    if run.aggregation is not None:
        jobs.append(
            (
                "aggregation",
                None,
                functools.partial(write_aggregation, run.aggregation, out, log_scale=None),
                functools.partial(setattr, run, "aggregation", None),
                False,
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
                True,
            )
        )
    return jobs


#: The order the CLI's report draws in (``release``): the views holding the
#: most let go first, the overall figure (a costly drawing of every PE) once
#: they are gone; the logical view last, the aggregation view holds it.
_DRAW_FIRST = {"timeline": 0, "physical": 1, "aggregation": 2, "papi": 3, "overall": 4}


def _files_written(out: FigureCollector) -> list[Path]:
    return [] if out.files is None else out.files.written


def _explore(view: LogicalView, out: FigureCollector, name: str, budget: int) -> None:
    out.matrices[name] = matrix_explorer(view, budget_bytes=budget)

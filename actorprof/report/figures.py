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
    from ..kinds.logical import LogicalView
    from .html import FigureCollector
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
) -> dict[str, str]:
    """Draw every view's figures with the commands' own writers into ``out``.

    A figure that fails is reported through ``warn`` (with the traceback on
    stderr when ``verbose``) and listed in the result: a figure must not cost
    a job epilogue its report.
    """
    jobs: list[tuple[str, str | None, Callable[[], None]]] = []
    for name, view in run.logical.items():
        jobs.append(
            (
                "logical",
                name,
                functools.partial(
                    write_logical, view, out, metric="count", level="pe", log_scale=None, top=top
                ),
            )
        )
    if run.timeline is not None and run.timeline.timeline.start_s is not None:
        jobs.append(("timeline", None, functools.partial(write_timeline_figure, run.timeline, out)))
    for name, papi in run.papi.items():
        jobs.append(
            ("papi", name, functools.partial(write_papi, papi, out, by_mailbox=False, sort="pe"))
        )
    if run.overall is not None:
        jobs.append(
            ("overall", None, functools.partial(write_overall, run.overall, out, sort="pe"))
        )
    if run.physical is not None:
        physical = run.physical
        jobs.append(
            (
                "physical",
                None,
                functools.partial(
                    write_physical,
                    physical,
                    out,
                    types=physical.types_shown(),
                    metric="count",
                    log_scale=None,
                    top=top,
                ),
            )
        )
    if run.aggregation is not None:
        jobs.append(
            (
                "aggregation",
                None,
                functools.partial(write_aggregation, run.aggregation, out, log_scale=None),
            )
        )
    budget = MATRIX_PAGE_BYTES // max(1, len(run.logical))
    for name, view in run.logical.items():
        jobs.append(("logical", name, functools.partial(_explore, view, out, name, budget)))
    failed: dict[str, str] = {}
    for section, scope, draw in jobs:
        out.section, out.scope = section, scope
        try:
            draw()
        except Exception as exc:  # a figure must not cost the epilogue its report
            if verbose:
                traceback.print_exc(file=sys.stderr)
            key = section if scope is None else f"{section} ({scope})"
            failed[key] = f"{type(exc).__name__}: {exc}"
            warn(f"{key}: figure not drawn ({failed[key]}); rerun with -v and report it")
        finally:
            release_memory()  # a figure's drawing buffers, before the next figure
    return failed


def _explore(view: LogicalView, out: FigureCollector, name: str, budget: int) -> None:
    out.matrices[name] = matrix_explorer(view, budget_bytes=budget)

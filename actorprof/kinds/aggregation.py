"""The aggregation view: the logical and physical traces of a run side by side.

``aggregation_view(path)`` is the Python twin of ``actorprof aggregation``:
it reads the physical trace and the logical trace, routes every logical
message over the Conveyors topology (:mod:`actorprof.analyze.aggregation`),
puts the routed messages beside the buffers seen on each link, and compares
per PE what the program asked for with what went on the wire.

Whether the two traces can come from the same run is decided from the data:
every link with buffers must be on a route, every route must carry buffers,
no link may carry more payload than bytes, and both traces must have the same
PEs and be complete. Otherwise the summary says the comparison is approximate
and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._progress import ProgressSink
from .._version import __version__
from ..analyze.aggregation import (
    LinkExplanation,
    Routes,
    aggregation_factor,
    aggregation_pe_table,
    explain_links,
    link_table,
    pad_matrix,
    route_messages,
)
from ..analyze.imbalance import imbalance
from ..analyze.matrix import pe_totals
from ..engine import Engine
from ..errors import NoTraceError, UsageError
from ..read import ReadReport, check_input_path, find_pe_files
from ..read.physical import PHYSICAL_FILE_NAME, program_output_lines
from ..schema import BUFFER_SEND_TYPES, SEND_TYPES
from .logical import LogicalView, logical_view
from .physical import PhysicalView, physical_view

if TYPE_CHECKING:
    from ..write import Sink

__all__ = [
    "AggregationView",
    "aggregation_inputs",
    "aggregation_view",
    "build_aggregation_view",
    "pes_per_node_from_nodes",
]


def aggregation_inputs(
    path: str | PathLike[str], *, logical: str | PathLike[str] | None = None
) -> tuple[Path, Path]:
    """Where the physical and the logical traces of a run are.

    The physical trace: ``path`` itself if it is a file, else
    ``path/physical.txt``, else ``path/physical/physical.txt``. The logical
    trace: ``logical`` if given, else the folder holding the physical trace
    if it has ``PE<i>_send.csv`` files, else ``path``, else ``path/logical``
    (the layout of the shipped examples).

    Raises
    ------
    UsageError
        ``path`` does not exist.
    NoTraceError
        No physical or no logical trace is found (the message says where
        it looked and which option fixes it).
    """
    root = Path(path)
    check_input_path(root)
    physical_candidates = (
        [root]
        if root.is_file()
        else [root / PHYSICAL_FILE_NAME, root / "physical" / PHYSICAL_FILE_NAME]
    )
    physical = next((p for p in physical_candidates if p.is_file()), None)
    if physical is None:
        raise NoTraceError(
            f"{root}: no physical trace; looked for "
            + " and ".join(str(p) for p in physical_candidates)
            + ". Pass the physical.txt file or its folder."
        )
    if logical is not None:
        return physical, Path(logical)
    base = root if root.is_dir() else root.parent
    for candidate in dict.fromkeys([physical.parent, base, base / "logical"]):
        if candidate.is_dir() and _has_logical(candidate):
            return physical, candidate
    raise NoTraceError(
        f"{root}: no logical trace (PE<i>_send.csv) next to the physical trace, in "
        f"{base} or in {base / 'logical'}. Point at it with --logical DIR."
    )


def _has_logical(folder: Path) -> bool:
    try:
        find_pe_files(folder, "send")
    except NoTraceError:
        return False
    return True


def pes_per_node_from_nodes(pe_node: pd.Series) -> int | None:
    """K such that ``node == pe // K`` for every PE of known node.

    None when all known PEs are on one node (1D), or when the node ids do not
    follow ``pe // K`` for any K.
    """
    known = pe_node[pe_node >= 0]
    if known.nunique() <= 1:
        return None
    pes = known.index.to_numpy(dtype=np.int64)
    nodes = known.to_numpy(dtype=np.int64)
    first_node = nodes[0]
    if pes[0] != 0 or first_node != 0:
        return None
    k = int(pes[np.argmax(nodes != first_node)])
    return k if k > 0 and bool(np.all(nodes == pes // k)) else None


@dataclass(frozen=True)
class AggregationView:
    """Logical vs physical for one run.

    Attributes
    ----------
    physical, logical
        The two views the comparison is built from.
    routes
        The logical messages routed over the topology.
    links
        :func:`link_table`: buffers seen beside routed messages, per link.
    explanation
        :func:`explain_links` of ``links``.
    pes
        :func:`aggregation_pe_table`.
    factor
        :func:`aggregation_factor`: routed messages per buffer on each link.
    pes_per_node_source
        Where K came from: ``--pes-per-node``, ``logical node ids``, or
        ``one node`` (1D).
    approximate_reasons
        Why the traces cannot come from one run; empty when consistent.
    """

    physical: PhysicalView
    logical: LogicalView
    routes: Routes
    links: pd.DataFrame
    explanation: LinkExplanation
    pes: pd.DataFrame
    factor: pd.DataFrame
    pes_per_node_source: str
    approximate_reasons: list[str] = field(default_factory=list)

    @property
    def approximate(self) -> bool:
        return bool(self.approximate_reasons)

    @property
    def num_pes(self) -> int:
        return len(self.pes)

    @property
    def pes_per_node(self) -> int | None:
        return self.routes.pes_per_node

    def totals(self) -> dict[str, Any]:
        """Whole-run figures: messages, buffers, bytes, ratios, overhead per type."""
        n = self.num_pes
        mats = self.physical.matrices
        messages = int(self.pes["messages_sent"].sum())
        payload = int(self.pes["payload_bytes_sent"].sum())
        buffers = int(self.pes["buffers_sent"].sum())
        wire = int(self.pes["wire_bytes_sent"].sum())
        items = int(self.pes["routed_items_sent"].sum())
        capacity = max(mats.max_buffer_bytes[t] for t in BUFFER_SEND_TYPES)
        by_type: dict[str, Any] = {}
        for t in SEND_TYPES:
            calls = int(mats.buffers(t).to_numpy().sum())
            nbytes = int(mats.bytes(t).to_numpy().sum())
            entry: dict[str, Any] = {"buffers": calls, "bytes": nbytes}
            if t in BUFFER_SEND_TYPES:
                routed = int(pad_matrix(self.routes.messages[t], n).to_numpy().sum())
                routed_payload = int(pad_matrix(self.routes.payload_bytes[t], n).to_numpy().sum())
                overhead = nbytes - routed_payload
                entry.update(
                    routed_messages=routed,
                    routed_payload_bytes=routed_payload,
                    messages_per_buffer=_div(routed, calls),
                    overhead_bytes=overhead,
                    overhead_bytes_per_buffer=_div(overhead, calls),
                    overhead_bytes_per_message=_div(overhead, routed),
                )
            by_type[t] = entry
        avg = _div(wire, buffers)
        return {
            "messages": messages,
            "payload_bytes": payload,
            "routed_items": items,
            "buffers": buffers,
            "wire_bytes": wire,
            "messages_per_buffer": _div(messages, buffers),
            "items_per_buffer": _div(items, buffers),
            "avg_buffer_bytes": avg,
            "max_buffer_bytes": capacity,
            "avg_buffer_fill": None if avg is None or not capacity else avg / capacity,
            "wire_over_payload": _div(wire, payload),
            "by_type": by_type,
        }

    def summary(self) -> dict[str, Any]:
        """JSON-able summary: totals, link explanation, comparison verdict, imbalance."""
        reports = (self.physical.report, self.logical.report)
        files = [f for r in reports for f in r.to_dict()["files"]]
        loads = {
            column: imbalance(self.pes[column]).to_dict()
            for column in ("messages_sent", "buffers_sent", "wire_bytes_sent")
        }
        return {
            "kind": "aggregation",
            "actorprof_version": __version__,
            "trace": self.physical.path,
            "logical_trace": self.logical.path,
            "phase": self.logical.report.phase,
            "num_pes": self.num_pes,
            "pes_per_node": self.pes_per_node,
            "pes_per_node_source": self.pes_per_node_source,
            "topology": self.routes.topology,
            "num_nodes": (
                1 if self.pes_per_node is None else -(-self.num_pes // self.pes_per_node)
            ),
            "totals": self.totals(),
            "links": self.explanation.to_dict(),
            "comparison": {
                "approximate": self.approximate,
                "reasons": list(self.approximate_reasons),
                "checks": [
                    "every link with buffers is on a route of a logical message",
                    "every route carries buffers",
                    "no link carries more routed payload than bytes",
                    "both traces have the same PEs and no unreadable trace line",
                ],
            },
            "imbalance": loads,
            "lines_read": sum(r.lines_read for r in reports),
            "lines_skipped": sum(r.lines_skipped for r in reports),
            "physical_lines_read": self.physical.report.lines_read,
            "logical_lines_read": self.logical.report.lines_read,
            "warnings": [w for r in reports for w in r.warnings],
            "notes": [n for r in reports for n in r.notes],
            "files": files,
        }

    def summary_lines(self) -> list[str]:
        """A short human summary (what the CLI prints on stderr)."""
        t = self.totals()
        ex = self.explanation
        topo = (
            "1D (one node): messages go straight"
            if self.routes.topology == "1d"
            else f"2D mesh, {self.pes_per_node} PEs per node ({self.pes_per_node_source})"
        )
        lines = [
            f"aggregation: {t['messages']:,} logical messages ({t['payload_bytes']:,} B payload) "
            f"-> {t['buffers']:,} buffers ({t['wire_bytes']:,} B on the wire), {self.num_pes} PEs",
            f"  routing: {topo}",
            f"  messages per buffer {_fmt(t['messages_per_buffer'])}, routed items per buffer "
            f"{_fmt(t['items_per_buffer'])}, wire/payload bytes {_fmt(t['wire_over_payload'])}, "
            f"average buffer fill {_fmt(t['avg_buffer_fill'], pct=True)}",
            f"  links: {ex.links_seen} seen with buffers, {ex.links_explained} explained by the "
            "routed messages",
        ]
        if self.approximate:
            lines.append("  APPROXIMATE comparison (the traces do not look like one run):")
            lines.extend(f"    - {reason}" for reason in self.approximate_reasons)
        else:
            lines.append("  the routed logical messages explain every link: same run")
        return lines


def _div(a: float, b: float) -> float | None:
    return a / b if b else None


def _fmt(value: float | None, *, pct: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.1f} %" if pct else f"{value:,.2f}"


def build_aggregation_view(
    physical: PhysicalView,
    logical: LogicalView,
    *,
    pes_per_node: int | None = None,
) -> AggregationView:
    """Compare a physical and a logical view of (supposedly) the same run.

    ``pes_per_node`` overrides the K found in the logical trace's node ids.

    Raises
    ------
    UsageError
        A 2D mesh whose PE count is not a multiple of K.
    """
    report = physical.report  # notes on the routing go with the physical read
    from_nodes = pes_per_node_from_nodes(logical.matrices.pe_node)
    if pes_per_node is not None:
        k: int | None = pes_per_node
        source = "--pes-per-node"
        if from_nodes is not None and from_nodes != pes_per_node:
            report.warn(
                f"the logical trace's node ids say {from_nodes} PEs per node, "
                f"--pes-per-node says {pes_per_node}: routing with {pes_per_node}"
            )
    elif from_nodes is not None:
        k, source = from_nodes, "logical node ids"
        report.note(f"{k} PEs per node, from the logical trace's node ids (node = pe // {k})")
    else:
        k, source = None, "one node"
        if logical.num_nodes > 1:
            report.warn(
                "the logical trace's node ids do not follow node = pe // K; routing as one "
                "node (pass --pes-per-node K for a 2D mesh)"
            )
        meshes = [c for c in physical.candidates if 1 < c < physical.num_pes]
        if meshes:
            report.note(
                "routing as one node (1D), but the physical trace fits a 2D mesh with "
                f"--pes-per-node {', '.join(map(str, meshes))}"
            )
    n = max(physical.num_pes, logical.num_pes)
    counts = pad_matrix(logical.matrices.counts, n)
    payload = pad_matrix(logical.matrices.bytes, n)
    if k is not None and k >= n:
        source = f"{source}: one node"
    try:
        routes = route_messages(counts, payload_bytes=payload, pes_per_node=k)
    except ValueError as exc:
        raise UsageError(f"{exc}; check --pes-per-node") from exc
    if physical.pes_per_node != k:
        physical = physical.with_pes_per_node(k)
    mats = physical.matrices
    links = link_table(mats, routes)
    explanation = explain_links(links)
    reasons = explanation.reasons()
    if physical.num_pes != logical.num_pes:
        reasons.append(
            f"the physical trace has {physical.num_pes} PEs, the logical trace {logical.num_pes}"
        )
    unreadable = {
        "physical": physical.report.lines_skipped - program_output_lines(physical.report),
        "logical": logical.report.lines_skipped,
    }
    reasons.extend(
        f"the {name} trace has {count:,} unreadable line(s) (lost data)"
        for name, count in unreadable.items()
        if count
    )
    return AggregationView(
        physical=physical,
        logical=logical,
        routes=routes,
        links=links,
        explanation=explanation,
        pes=aggregation_pe_table(pe_totals(logical.matrices), mats, routes),
        factor=aggregation_factor(mats, routes),
        pes_per_node_source=source,
        approximate_reasons=reasons,
    )


def aggregation_view(
    path: str | PathLike[str],
    *,
    logical: str | PathLike[str] | None = None,
    phase: str | None = None,
    num_pes: int | None = None,
    pes_per_node: int | None = None,
    physical_report: ReadReport | None = None,
    logical_report: ReadReport | None = None,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
) -> AggregationView:
    """Read a run's physical and logical traces and compare them.

    Parameters
    ----------
    path
        ``physical.txt``, its folder, or a run folder with ``physical/``
        and ``logical/`` (see :func:`aggregation_inputs`).
    logical
        Folder of the logical trace; default: found next to the physical one.
    phase
        Phase of the logical trace (``PE<i>_<phase>_send.csv``).
    num_pes
        The run's PE count, checked against both traces.
    pes_per_node
        K of the 2D mesh; default: from the logical trace's node ids (one
        node: 1D).
    physical_report, logical_report
        Receive the line accounting of each read.
    engine
        How the logical trace is read (processes, cache, cluster).
    progress
        Told the bytes and files to read and done (e.g. a progress line).

    Returns
    -------
    AggregationView

    Raises
    ------
    ActorProfError
        Any read error, or traces that cannot be found.

    Examples
    --------
    >>> view = aggregation_view("examples/ig_8pe_2nodes", pes_per_node=4)  # doctest: +SKIP
    >>> view.explanation.links_seen == view.explanation.links_explained  # doctest: +SKIP
    True
    """
    physical_path, logical_path = aggregation_inputs(path, logical=logical)
    logical_report = ReadReport(kind="logical") if logical_report is None else logical_report
    physical_report = ReadReport(kind="physical") if physical_report is None else physical_report
    lview = logical_view(
        logical_path,
        phase=phase,
        num_pes=num_pes,
        report=logical_report,
        engine=engine,
        progress=progress,
    )
    k = (
        pes_per_node
        if pes_per_node is not None
        else pes_per_node_from_nodes(lview.matrices.pe_node)
    )
    pview = physical_view(
        physical_path,
        num_pes=num_pes,
        pes_per_node=k,
        report=physical_report,
        progress=progress,
    )
    return build_aggregation_view(pview, lview, pes_per_node=pes_per_node)


# --- files: figures, tables and the summary -------------------------------


def write_aggregation(view: AggregationView, out: Sink, *, log_scale: bool | None) -> None:
    """Aggregation-factor heatmap and bytes bars, tables and summary."""
    from ..plot import plot_heatmap
    from ..plot.aggregation import plot_bytes_bars
    from ..write import label_run, new_figure

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
    label_run(fig, view.logical.path, view.logical.report.phase)
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
    label_run(fig, view.logical.path, view.logical.report.phase)
    out.figure(fig, "bytes")

    out.csv(view.pes, "pes")
    out.csv(view.links, "links", index=False)
    summary = view.summary()
    summary["options"] = {"log": log_scale}
    out.json(summary, "summary")

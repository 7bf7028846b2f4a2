"""The aggregation view: a run's logical trace through the Conveyors model.

``aggregation_view(path)`` is the Python twin of ``actorprof aggregation``.
It reads the logical trace (the messages the program asked for), routes its
non-zero pairs over the topology Conveyors builds for the run's layout
(:mod:`actorprof.analyze.conveyors`: 1D vector, 2D matrix or 3D tensor) and,
when the physical trace of the run is there, compares the prediction with
the buffers seen on every link (:func:`~actorprof.analyze.conveyors.compare_run`):
the topology the physical trace shows, the verdict (``one run``, ``not one
run``, ``model does not fit``) and a status and reason per link. For other
node layouts (``layouts``) it predicts, from the logical trace alone, what
each would put on the wire.

Memory follows the non-zero pairs and links, never N x N (65,536 PEs are
fine); only the per-link heatmap is dense, up to 1,024 PEs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._memory import trim_heap
from .._progress import ProgressSink
from .._repr import Summarized, count
from .._text import PlainList, run_name
from .._version import __version__
from ..analyze.aggregation import (
    PE_LINK_COLUMNS,
    actual_layout,
    aggregation_factor,
    aggregation_links,
    aggregation_pe_table,
    aggregation_pe_table_of,
    buffer_room_bytes,
    pe_link_sums,
)
from ..analyze.conveyors import (
    CONVEY_BUFFER_SIZE,
    RunComparison,
    Topology,
    compare_run,
    compared_link_blocks,
    conveyors_topology,
    logical_pairs,
    pair_table,
    pairs_by_size,
    predict_layouts,
    send_type_codes,
)
from ..analyze.imbalance import imbalance
from ..analyze.matrix import DENSE_MAX_PES
from ..analyze.physical_partial import PhysicalPartial
from ..engine import Engine
from ..engine.physical import reduce_physical
from ..errors import NoTraceError, UsageError
from ..read import ReadReport, check_input_path, find_pe_files, iter_logical
from ..read.physical import (
    PHYSICAL_FILE_NAME,
    program_output_lines,
)
from ..schema import BUFFER_SEND_TYPES, SEND_TYPES
from ..write import keeps_tables
from .logical import LogicalView, logical_view
from .physical import PhysicalView, accumulate, physical_view_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..write import Sink

__all__ = [
    "AggregationView",
    "aggregation_inputs",
    "aggregation_view",
    "build_aggregation_view",
    "parse_layouts",
    "pes_per_node_from_nodes",
    "physical_view_and_buffers",
    "read_physical_buffers",
]

#: A layout as ``actorprof aggregation --layouts`` spells it: NODESxPES_PER_NODE, or K.
LAYOUT_SPELLING = "NODESxPES_PER_NODE (8x16: 8 nodes of 16 PEs) or PES_PER_NODE alone"
_LAYOUT = re.compile(r"^\s*(?:(\d+)\s*[xX*]\s*)?(\d+)\s*$")
Layouts = str | Sequence[tuple[int, int]]


def aggregation_inputs(
    path: str | PathLike[str],
    *,
    logical: str | PathLike[str] | None = None,
    physical_optional: bool = False,
) -> tuple[Path | None, Path]:
    """Where the physical and the logical traces of a run are.

    The physical trace: ``path`` itself if it is a file, else
    ``path/physical.txt``, else ``path/physical/physical.txt``. The logical
    trace: ``logical`` if given, else the folder holding the physical trace
    if it has ``PE<i>_send.csv`` files, else ``path``, else ``path/logical``
    (the layout of the shipped examples).

    Parameters
    ----------
    physical_optional
        A missing physical trace is fine (prediction alone): the first
        element is then None.

    Raises
    ------
    UsageError
        ``path`` does not exist.
    NoTraceError
        No logical trace, or no physical trace unless ``physical_optional``
        (the message says where it looked and which option fixes it).
    """
    root = Path(path)
    check_input_path(root)
    physical_candidates = (
        [root]
        if root.is_file()
        else [root / PHYSICAL_FILE_NAME, root / "physical" / PHYSICAL_FILE_NAME]
    )
    physical = next((p for p in physical_candidates if p.is_file()), None)
    if physical is None and not physical_optional:
        raise NoTraceError(
            f"{root}: no physical trace; looked for "
            + " and ".join(str(p) for p in physical_candidates)
            + ". Pass the physical.txt file or its folder, or predict from the logical "
            "trace alone with --layouts."
        )
    if logical is not None:
        return physical, Path(logical)
    base = root if root.is_dir() else root.parent
    near = [] if physical is None else [physical.parent]
    for candidate in dict.fromkeys([*near, base, base / "logical"]):
        if candidate.is_dir() and _has_logical(candidate):
            return physical, candidate
    raise NoTraceError(
        f"{root}: no logical trace (PE<i>_send.csv) "
        + ("" if physical is None else "next to the physical trace, ")
        + f"in {base} or in {base / 'logical'}. Point at it with --logical DIR."
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


def parse_layouts(layouts: Layouts, num_pes: int) -> list[tuple[int, int]]:
    """``(pes_per_node, nodes)`` of each layout, checked against the PE count.

    Parameters
    ----------
    layouts
        ``"8x16,32x4"`` (NODESxPES_PER_NODE: 8 nodes of 16 PEs; ``x``, ``X``
        or ``*``), ``"16,4"`` (PEs per node; the node count follows from
        ``num_pes``), or ``(pes_per_node, nodes)`` pairs as
        :func:`~actorprof.analyze.conveyors.predict_layouts` takes them.
    num_pes
        The run's PE count: every layout must have exactly that many PEs
        (the logical trace is of that many PEs).

    Raises
    ------
    UsageError
        A malformed item, or a layout of another PE count.

    Examples
    --------
    >>> parse_layouts("1x16, 4x4, 2", 16)
    [(16, 1), (4, 4), (2, 8)]
    """
    if isinstance(layouts, str):
        pairs: list[tuple[int, int]] = []
        for item in (i for i in layouts.split(",") if i.strip()):
            match = _LAYOUT.match(item)
            if match is None:
                raise UsageError(
                    f"--layouts: cannot read {item.strip()!r}; spell each layout "
                    f"{LAYOUT_SPELLING}, separated by commas, e.g. --layouts 1x16,4x4,8x2"
                )
            nodes, k = match.group(1), int(match.group(2))
            if nodes is None:
                if k < 1 or num_pes % k:
                    raise UsageError(
                        f"--layouts: {k} PEs per node does not divide the run's {num_pes} PEs"
                    )
                pairs.append((k, num_pes // k))
            else:
                pairs.append((k, int(nodes)))
    else:
        pairs = [(int(k), int(nodes)) for k, nodes in layouts]
    if not pairs:
        raise UsageError("--layouts: no layout given (e.g. --layouts 1x16,4x4,8x2)")
    for k, nodes in pairs:
        if k < 1 or nodes < 1 or k * nodes != num_pes:
            raise UsageError(
                f"--layouts: {nodes}x{k} is {nodes} node(s) of {k} PEs = {nodes * k} PEs, but the "
                f"logical trace is of {num_pes} PEs (spell each layout {LAYOUT_SPELLING})"
            )
    return list(dict.fromkeys(pairs))


def read_physical_buffers(
    path: str | PathLike[str],
    *,
    num_pes: int | None = None,
    report: ReadReport,
    progress: ProgressSink | None = None,
    engine: Engine | None = None,
) -> pd.DataFrame:
    """One pass over a physical trace: calls per (send type, link, buffer size).

    Memory follows the links (a link has a handful of buffer sizes), not
    N x N; see :func:`~actorprof.analyze.conveyors.physical_buffers`.
    ``engine``: how the file is read (byte ranges in this process by
    default, worker processes, Dask), the same frame whatever the way.
    """
    partial = reduce_physical(
        path, num_pes=num_pes, report=report, engine=engine, progress=progress, sized=True
    )
    return partial.buffers()


def physical_view_and_buffers(
    path: str | PathLike[str],
    *,
    num_pes: int | None = None,
    pes_per_node: int | None = None,
    report: ReadReport,
    progress: ProgressSink | None = None,
    engine: Engine | None = None,
) -> tuple[PhysicalView, pd.DataFrame]:
    """The physical view and its buffers per link and size, from one read."""
    partial = reduce_physical(
        path, num_pes=num_pes, report=report, engine=engine, progress=progress, sized=True
    )
    trim_heap()
    buffers = partial.buffers()
    # the per-link sums only: the sums per (link, size) are in the buffers frame now
    links = PhysicalPartial(
        links=partial.links,
        calls=partial.calls,
        nbytes=partial.nbytes,
        max_bytes=partial.max_bytes,
        lines=partial.lines,
    )
    del partial
    acc = accumulate(links, num_pes)
    del links  # the sums let go once in the accumulator
    trim_heap()
    view = physical_view_of(
        acc,
        report,
        path=report.files[-1].path,
        num_pes=num_pes,
        pes_per_node=pes_per_node,
    )
    return view, buffers


@dataclass(frozen=True, repr=False)
class AggregationView(Summarized):
    """A run's logical trace through the Conveyors model, beside its physical trace.

    Attributes
    ----------
    logical
        The logical view the pairs come from.
    pairs
        Sparse logical pairs per message size
        (:data:`~actorprof.analyze.conveyors.PAIR_COLUMNS`).
    num_pes, pes_per_node, pes_per_node_source
        The run's layout: K from ``--pes-per-node``, the logical trace's
        node ids, or ``one node``.
    buffer_bytes
        Buffer capacity of the model (Conveyors' 10,000 B unless given).
    comparison
        :func:`~actorprof.analyze.conveyors.compare_run` of the logical pairs
        and the physical trace; None without a physical trace.
    buffers
        The physical trace per (send type, link, buffer size); None without one.
    links
        ``aggregation_links.csv``: the compared links with status, reason
        and the prediction's error; None without a physical trace.
    pes
        ``aggregation_pes.csv``; None without a physical trace.
    layouts
        ``aggregation_layouts.csv``: the prediction for each layout asked
        for, with the actual figures on the row of the run's own topology;
        None when no layout was asked for.
    physical_path, physical_report
        Where the physical trace was read, and its line accounting.
    notes
        What the view wants said (layout sources, second reads, lost lines).
    """

    logical: LogicalView
    pairs: pd.DataFrame
    num_pes: int
    pes_per_node: int | None
    pes_per_node_source: str
    buffer_bytes: int = CONVEY_BUFFER_SIZE
    comparison: RunComparison | None = None
    buffers: pd.DataFrame | None = None
    links: pd.DataFrame | None = None
    pes: pd.DataFrame | None = None
    layouts: pd.DataFrame | None = None
    physical_path: str | None = None
    physical_report: ReadReport | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: the links' sums per send type (:func:`link_type_sums`) when ``links``
    #: is not kept (:meth:`without_links`, ``keep_links``); None: from ``links``
    kept_sums: dict[int, dict[str, int]] | None = field(default=None, repr=False)
    #: the largest buffer of a buffer send type when ``buffers`` is not kept
    #: (:meth:`without_buffers`); None: from ``buffers``
    kept_max_buffer_bytes: int | None = field(default=None, repr=False)
    #: the pairs' messages and payload bytes when ``pairs`` is not kept
    #: (:meth:`without_buffers`); None: from ``pairs``
    kept_pair_sums: tuple[int, int] | None = field(default=None, repr=False)

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        k = "unknown" if self.pes_per_node is None else count(self.pes_per_node)
        return run_name(self.logical.path), [
            ("PEs", count(self.num_pes)),
            ("PEs per node", k),
            ("logical messages", count(self._pair_sums()[0])),
            ("layouts predicted", count(0 if self.layouts is None else len(self.layouts))),
            ("verdict", self.verdict or "no physical trace"),
        ]

    @property
    def topology(self) -> Topology:
        """The topology compared under (with a physical trace), else the layout's."""
        if self.comparison is not None:
            return self.comparison.topology
        return conveyors_topology(self.num_pes, self.pes_per_node)

    @property
    def verdict(self) -> str | None:
        """``one run``, ``not one run``, ``model does not fit``; None without a physical trace."""
        return None if self.comparison is None else self.comparison.verdict

    def factor(self) -> pd.DataFrame | None:
        """Routed items per buffer on each link, N x N; None beyond 1,024 PEs or without links."""
        if self.links is None or self.num_pes > DENSE_MAX_PES:
            return None
        return aggregation_factor(self.links, self.num_pes)

    def without_links(self) -> AggregationView:
        """This view without its link tables, its :meth:`totals` and summary kept.

        What the run report holds beyond :data:`DENSE_MAX_PES` PEs, where the
        links are millions of rows and no figure draws them: totals,
        summary, per-PE table and figures are the same; ``links`` is None
        (no links table is written) and ``comparison.links`` is empty.
        """
        if self.links is None or self.comparison is None:
            return self
        return replace(
            self,
            links=None,
            comparison=self.comparison.without_links(),
            kept_sums=link_type_sums(self.links),
        )

    def without_buffers(self) -> AggregationView:
        """This view without its link tables nor the physical buffers, totals and summary kept.

        :meth:`without_links`, and ``buffers`` (a row per link and buffer
        size: millions at 65,536 PEs) let go too, its largest buffer kept
        for :meth:`totals`; :meth:`link_blocks` then yields nothing, so the
        pairs per size (millions of rows too, that nothing routes again) are
        let go as well: ``pairs`` is empty, their sums kept for
        :meth:`totals` (``logical.pairs`` has every pair). What the run
        report holds beyond :data:`DENSE_MAX_PES` PEs.
        """
        if self.buffers is None:
            return self
        return replace(
            self.without_links(),
            buffers=None,
            kept_max_buffer_bytes=self._max_buffer_bytes(),
            # a new empty frame: a slice of the pairs would hold their arrays
            pairs=pd.DataFrame({c: np.zeros(0, dtype=np.int64) for c in self.pairs.columns}),
            kept_pair_sums=self._pair_sums(),
        )

    def _pair_sums(self) -> tuple[int, int]:
        """The pairs' messages and payload bytes."""
        if self.kept_pair_sums is not None:
            return self.kept_pair_sums
        return int(self.pairs["messages"].sum()), int(self.pairs["payload_bytes"].sum())

    def _max_buffer_bytes(self) -> int:
        if self.kept_max_buffer_bytes is not None or self.buffers is None:
            return self.kept_max_buffer_bytes or 0
        # a send type's rows at a time, without copies of the column (millions
        # of rows at 65,536 PEs: the report's peak was an isin of every row)
        types = self.buffers["send_type"]
        sizes = self.buffers["buffer_bytes"].to_numpy()
        return max(
            int(sizes.max(where=(types == t).to_numpy(dtype=bool), initial=0))
            for t in BUFFER_SEND_TYPES
        )

    def link_blocks(self) -> Iterator[pd.DataFrame]:
        """``links`` (``aggregation_links.csv``) a block at a time, in order.

        The table itself when kept; else built again from the pairs and
        buffers a block of about a million links at a time
        (:func:`~actorprof.analyze.conveyors.compared_link_blocks`). Nothing
        without a physical trace.
        """
        if self.links is not None:
            yield self.links
            return
        if self.comparison is None or self.buffers is None:
            return
        topology = self.comparison.topology
        for block in compared_link_blocks(
            self.pairs, self.buffers, topology, buffer_bytes=self.buffer_bytes
        ):
            yield aggregation_links(block)

    def totals(self) -> dict[str, Any]:
        """Whole-run figures: messages, buffers, bytes, ratios, overhead per send type."""
        messages, payload = self._pair_sums()
        out: dict[str, Any] = {"messages": messages, "payload_bytes": payload}
        if self.buffers is None and self.kept_max_buffer_bytes is None:
            return out
        if self.kept_sums is not None:
            sums = self.kept_sums
        elif self.links is not None:
            sums = link_type_sums(self.links)
        else:
            return out
        buffer_codes = [SEND_TYPES.index(t) for t in BUFFER_SEND_TYPES]
        data = [c for c in buffer_codes if c in sums]

        def total(column: str, codes: Iterable[int]) -> int:
            return sum(sums[c][column] for c in codes if c in sums)

        buffers = total("buffers", data)
        wire = total("wire_bytes", data)
        items = total("items", data)
        room = buffer_room_bytes(self.buffer_bytes)
        by_type: dict[str, Any] = {}
        for code, t in enumerate(SEND_TYPES):
            mine = [code]
            calls, nbytes = total("calls", mine), total("wire_bytes", mine)
            entry: dict[str, Any] = {"calls": calls, "bytes": nbytes}
            if t in BUFFER_SEND_TYPES:
                full = total("buffers", mine)
                routed = total("items", mine)
                payload_t = total("payload_bytes", mine)
                overhead = nbytes - payload_t
                entry.update(
                    buffers=full,
                    empty_buffers=total("empty_buffers", mine),
                    routed_items=routed,
                    routed_payload_bytes=payload_t,
                    items_per_buffer=_div(routed, full),
                    overhead_bytes=overhead,
                    overhead_bytes_per_buffer=_div(overhead, full),
                    overhead_bytes_per_item=_div(overhead, routed),
                )
            by_type[t] = entry
        out.update(
            routed_items=items,
            buffers=buffers,
            empty_buffers=total("empty_buffers", data),
            wire_bytes=wire,
            predicted_wire_bytes_min=total("predicted_wire_bytes", data),
            buffers_min=total("buffers_min", data),
            messages_per_buffer=_div(messages, buffers),
            items_per_buffer=_div(items, buffers),
            avg_buffer_bytes=_div(wire, buffers),
            max_buffer_bytes=self._max_buffer_bytes(),
            buffer_capacity_bytes=self.buffer_bytes,
            buffer_room_bytes=room,
            avg_buffer_fill=_div(wire - 16 * buffers, buffers * room),
            wire_over_payload=_div(wire, payload),
            by_type=by_type,
        )
        return out

    @property
    def reports(self) -> list[ReadReport]:
        """The read reports: the logical trace's, then the physical trace's if read."""
        if self.physical_report is None:
            return [self.logical.report]
        return [self.logical.report, self.physical_report]

    def summary(self, *, files: bool = True) -> dict[str, Any]:
        """JSON-able summary: layout, verdict (``compare_run(...).summary()``), totals, layouts.

        ``files=False`` leaves out the per-file accounting (``files``).
        """
        reports = self.reports
        topology = self.topology
        out: dict[str, Any] = {
            "kind": "aggregation",
            "actorprof_version": __version__,
            "trace": self.physical_path,
            "logical_trace": self.logical.path,
            "phase": self.logical.report.phase,
            "num_pes": self.num_pes,
            "pes_per_node": self.pes_per_node,
            "pes_per_node_source": self.pes_per_node_source,
            "buffer_bytes": self.buffer_bytes,
            "topology": topology.kind,
            "topology_detail": topology.describe(),
            "num_nodes": topology.num_nodes,
            "verdict": self.verdict,
            "comparison": None if self.comparison is None else self.comparison.summary(),
            "totals": self.totals(),
            "layouts": None if self.layouts is None else _records(self.layouts),
        }
        if self.pes is not None:
            out["imbalance"] = {
                column: imbalance(self.pes[column]).to_dict()
                for column in ("messages_sent", "buffers_sent", "wire_bytes_sent")
            }
        out.update(
            lines_read=sum(r.lines_read for r in reports),
            lines_skipped=sum(r.lines_skipped for r in reports),
            physical_lines_read=None
            if self.physical_report is None
            else self.physical_report.lines_read,
            logical_lines_read=self.logical.report.lines_read,
            warnings=[w for r in reports for w in r.warnings],
            notes=[*self.notes, *(n for r in reports for n in r.notes)],
        )
        if files:
            out["files"] = [f for r in reports for f in r.to_dict()["files"]]
        return out

    def summary_lines(self) -> list[str]:
        """A short human summary (what the CLI prints on stderr)."""
        t = self.totals()
        lines = [f"  {note}" for note in self.notes]
        head = (
            f"aggregation: {t['messages']:,} logical messages ({t['payload_bytes']:,} B payload), "
            f"{self.num_pes} PEs"
        )
        if self.comparison is None:
            lines.insert(0, head + ": no physical trace, prediction only")
        else:
            c = self.comparison
            lines.insert(
                0,
                head + f" -> {t['buffers']:,} buffers + {t['empty_buffers']:,} empty flushes "
                f"({t['wire_bytes']:,} B on the wire)",
            )
            lines.append(f"  layout: {c.layout.describe()} ({self.pes_per_node_source})")
            detected = " or ".join(d.describe() for d in c.detected) or "none"
            lines.append(f"  physical trace's links fit: {detected}")
            lines.append(
                f"  items per buffer {_fmt(t['items_per_buffer'])}, wire/payload bytes "
                f"{_fmt(t['wire_over_payload'])}, average buffer fill "
                f"{_fmt(t['avg_buffer_fill'], pct=True)} of {t['buffer_room_bytes']:,} B"
            )
            counts = c.summary()
            lines.append(
                f"  links: {counts['links_explained']} of {counts['links']} explained under "
                f"{c.topology.describe()}"
            )
            lines.extend(f"  note: {n}" for n in c.notes)
            lines.append(f"  verdict: {c.verdict}" + _VERDICT_TEXT[c.verdict])
            lines.extend(f"    - {r}" for r in c.reasons)
        if self.layouts is not None:
            lines.append("  layouts (lower bounds at the fewest buffers):")
            lines.extend(f"    {row}" for row in _layout_rows(self.layouts))
        return lines


_SUMMED = (
    "calls",
    "wire_bytes",
    "buffers",
    "empty_buffers",
    "items",
    "payload_bytes",
    "predicted_wire_bytes",
    "buffers_min",
)


def link_type_sums(links: pd.DataFrame) -> dict[int, dict[str, int]]:
    """Per send type code: the sums of the link columns :meth:`AggregationView.totals` uses.

    Masks and column sums, no copy of the table; the sums of blocks of links
    add up to the table's (:func:`add_link_type_sums`).
    """
    types = send_type_codes(links["send_type"])
    out: dict[int, dict[str, int]] = {}
    for code in range(len(SEND_TYPES)):
        mine = types == code
        out[code] = {c: int(np.sum(links[c].to_numpy(), where=mine)) for c in _SUMMED}
    return out


def add_link_type_sums(total: dict[int, dict[str, int]], more: dict[int, dict[str, int]]) -> None:
    """Add ``more`` (:func:`link_type_sums` of a block) into ``total``."""
    for code, sums in more.items():
        mine = total.setdefault(code, dict.fromkeys(_SUMMED, 0))
        for column, value in sums.items():
            mine[column] += value


_VERDICT_TEXT = {
    "one run": ": the model explains every link of the physical trace",
    "not one run": ": the model fits the physical trace's links but the data differ",
    "model does not fit": (
        ": no topology Conveyors builds explains this physical trace (the run is not blamed)"
    ),
}


def verdict_title(view: AggregationView) -> str:
    """What a figure title adds about the comparison ('' for one run or prediction)."""
    if view.verdict is None or view.verdict == "one run":
        return ""
    return f"\n{view.verdict.upper()}: see the summary's comparison"


def _layout_rows(table: pd.DataFrame) -> list[str]:
    rows = []
    for r in table.itertuples(index=False):
        busiest = (
            f"{r.busiest_send_type} {r.busiest_src_pe}->{r.busiest_dst_pe} "
            f"{r.busiest_wire_bytes:,} B"
        )
        rows.append(
            f"{r.layout} ({r.topology} {r.grid}): wire {r.wire_bytes:,} B, inter-node "
            f"{r.inter_node_bytes:,} B, >= {r.buffers_min:,} buffers, busiest {busiest}"
        )
    return rows


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for row in table.to_dict(orient="records"):
        records.append({str(k): _plain(v) for k, v in row.items()})
    return records


def _plain(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return None if np.isnan(value) else float(value)
    if value is pd.NA:
        return None
    return value


def _div(a: float, b: float) -> float | None:
    return a / b if b else None


def _fmt(value: float | None, *, pct: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.1f} %" if pct else f"{value:,.2f}"


#: What the summary says when a pair mixes message sizes.
_MIXED = "some PE pairs mix message sizes (one conveyor per size)"


def _pairs_of(logical: LogicalView, notes: list[str]) -> pd.DataFrame:
    """The view's pairs per message size.

    From the read itself when it counted the pairs that mix sizes per size
    (``logical_view(sizes=True)``); else from the pairs, and a second read
    only when a pair mixes sizes.
    """
    mixed = logical.matrices.mixed_sizes
    if mixed is not None and len(mixed):
        notes.append(_MIXED)
        # every pair, self-sends included, as the trace read per size gives them
        return pairs_by_size(logical.matrices.pairs, mixed)
    pairs = logical.pairs.rename(columns={"bytes": "payload_bytes"})
    try:
        return pair_table(pairs)
    except ValueError:
        notes.append(f"{_MIXED}: the logical trace was read a second time per size")
    chunks = iter_logical(logical.path, phase=logical.report.phase, report=ReadReport())
    return pair_table(logical_pairs(chunks))


def _layout_of(
    logical: LogicalView, pes_per_node: int | None, report: ReadReport
) -> tuple[int | None, str]:
    from_nodes = pes_per_node_from_nodes(logical.matrices.pe_node)
    if pes_per_node is not None:
        if from_nodes is not None and from_nodes != pes_per_node:
            report.warn(
                f"the logical trace's node ids say {from_nodes} PEs per node, "
                f"--pes-per-node says {pes_per_node}: the layout is {pes_per_node}"
            )
        return pes_per_node, "--pes-per-node"
    if from_nodes is not None:
        return from_nodes, "logical node ids"
    if logical.num_nodes > 1:
        report.warn(
            "the logical trace's node ids do not follow node = pe // K; taking one node "
            "(pass --pes-per-node K)"
        )
    return None, "one node"


def build_aggregation_view(
    logical: LogicalView,
    buffers: pd.DataFrame | None = None,
    *,
    pes_per_node: int | None = None,
    buffer_bytes: int = CONVEY_BUFFER_SIZE,
    layouts: Layouts | None = None,
    physical_path: str | None = None,
    physical_report: ReadReport | None = None,
    keep_links: bool | None = True,
) -> AggregationView:
    """Route a logical view over the Conveyors model; compare with a physical trace if given.

    Parameters
    ----------
    logical
        The logical view of the run.
    buffers
        The physical trace per (send type, link, buffer size)
        (:func:`read_physical_buffers`); None: prediction only.
    pes_per_node
        The run's K; default: from the logical trace's node ids, else one node.
    buffer_bytes
        Buffer capacity (``CONVEY_BUFFER_SIZE``, 10,000 by default).
    layouts
        Node layouts to predict side by side (:func:`parse_layouts`).
    physical_path, physical_report
        Where ``buffers`` come from (for the summary).
    keep_links
        True: hold the compared links (``links``, ``comparison.links``).
        False: count them a block at a time and keep their sums (``links``
        None, ``comparison.links`` empty; totals, summary and per-PE table
        the same; :meth:`AggregationView.link_blocks` builds them again for
        writing). None: keep them up to :data:`DENSE_MAX_PES` PEs (the
        per-link heatmap draws them), not beyond.

    Raises
    ------
    UsageError
        A bad layout or capacity (a packet larger than a buffer), a K that
        does not fit the PE count.
    """
    if buffer_bytes < 1:
        raise UsageError(f"--buffer-bytes must be at least 1, got {buffer_bytes}")
    notes: list[str] = []
    pairs = _pairs_of(logical, notes)
    n = max(logical.num_pes, _pe_count(buffers))
    k, source = _layout_of(logical, pes_per_node, physical_report or logical.report)
    comparison = links = pes = sums = None
    keep = n <= DENSE_MAX_PES if keep_links is None else keep_links
    try:
        if buffers is not None and keep:
            comparison = compare_run(
                pairs, buffers, num_pes=n, pes_per_node=k, buffer_bytes=buffer_bytes
            )
            links = aggregation_links(comparison.links)
            pes = aggregation_pe_table(
                logical.pes,
                comparison.links,
                num_pes=n,
                pes_per_node=comparison.topology.pes_per_node,
                buffer_bytes=buffer_bytes,
            )
        elif buffers is not None:
            comparison, pes, sums = _compared_by_blocks(logical, pairs, buffers, n, k, buffer_bytes)
        table = None
        if layouts is not None:
            table = _layout_table(
                pairs, parse_layouts(layouts, n), buffer_bytes, comparison, buffers
            )
    except ValueError as exc:
        raise UsageError(f"{exc}; check --pes-per-node, --layouts and --buffer-bytes") from exc
    if physical_report is not None:
        lost = physical_report.lines_skipped - program_output_lines(physical_report)
        if lost:
            notes.append(f"the physical trace has {lost:,} unreadable line(s) (lost data)")
    if logical.report.lines_skipped:
        notes.append(
            f"the logical trace has {logical.report.lines_skipped:,} unreadable line(s) (lost data)"
        )
    return AggregationView(
        logical=logical,
        pairs=pairs,
        num_pes=n,
        pes_per_node=k,
        pes_per_node_source=source,
        buffer_bytes=buffer_bytes,
        comparison=comparison,
        buffers=buffers,
        links=links,
        pes=pes,
        layouts=table,
        physical_path=physical_path,
        physical_report=physical_report,
        notes=tuple(notes),
        kept_sums=sums,
    )


def _compared_by_blocks(
    logical: LogicalView,
    pairs: pd.DataFrame,
    buffers: pd.DataFrame,
    num_pes: int,
    pes_per_node: int | None,
    buffer_bytes: int,
) -> tuple[RunComparison, pd.DataFrame, dict[int, dict[str, int]]]:
    """The comparison, per-PE table and link sums, the links counted a block at a time."""
    per_pe = {c: np.zeros(num_pes, dtype=np.int64) for c in PE_LINK_COLUMNS}
    sums: dict[int, dict[str, int]] = {}

    def add(block: pd.DataFrame) -> None:
        for column, values in pe_link_sums(block, num_pes).items():
            per_pe[column] += values
        add_link_type_sums(sums, link_type_sums(block))

    comparison = compare_run(
        pairs,
        buffers,
        num_pes=num_pes,
        pes_per_node=pes_per_node,
        buffer_bytes=buffer_bytes,
        keep_links=False,
        each_block=add,
    )
    pes = aggregation_pe_table_of(
        logical.pes,
        per_pe,
        num_pes=num_pes,
        pes_per_node=comparison.topology.pes_per_node,
        buffer_bytes=buffer_bytes,
    )
    return comparison, pes, sums


def _layout_table(
    pairs: pd.DataFrame,
    layouts: list[tuple[int, int]],
    buffer_bytes: int,
    comparison: RunComparison | None,
    buffers: pd.DataFrame | None,
) -> pd.DataFrame:
    """:func:`predict_layouts`, with the physical trace's figures on the row of its topology.

    ``actual_wire_bytes``, ``actual_inter_node_bytes`` and ``actual_buffers``
    (non-empty) are empty on every other row.
    """
    table = predict_layouts(pairs, layouts, buffer_bytes=buffer_bytes)
    actual = ("actual_wire_bytes", "actual_inter_node_bytes", "actual_buffers")
    values = np.full((len(table), len(actual)), -1, dtype=np.int64)
    if comparison is not None and buffers is not None:
        run = comparison.topology
        seen = actual_layout(buffers, run.pes_per_node)
        for i, (k, nodes) in enumerate(layouts):
            if conveyors_topology(k * nodes, k) == run:
                values[i] = [seen["wire_bytes"], seen["inter_node_bytes"], seen["buffers"]]
    for j, column in enumerate(actual):
        table[column] = pd.array(np.where(values[:, j] >= 0, values[:, j], 0), dtype="Int64")
        table.loc[values[:, j] < 0, column] = pd.NA
    return table


def _pe_count(frame: pd.DataFrame | None) -> int:
    if frame is None or not len(frame):
        return 0
    return int(max(frame["src_pe"].max(), frame["dst_pe"].max())) + 1


def aggregation_view(
    path: str | PathLike[str],
    *,
    logical: str | PathLike[str] | None = None,
    phase: str | None = None,
    num_pes: int | None = None,
    pes_per_node: int | None = None,
    buffer_bytes: int = CONVEY_BUFFER_SIZE,
    layouts: Layouts | None = None,
    physical_report: ReadReport | None = None,
    logical_report: ReadReport | None = None,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
    keep_links: bool | None = True,
) -> AggregationView:
    """Read a run's logical (and physical) trace and put them through the model.

    Parameters
    ----------
    path
        ``physical.txt``, its folder, or a run folder with ``physical/``
        and ``logical/`` (see :func:`aggregation_inputs`); with ``layouts``
        a folder with the logical trace alone is enough.
    logical
        Folder of the logical trace; default: found next to the physical one.
    phase
        Phase of the logical trace (``PE<i>_<phase>_send.csv``).
    num_pes
        The run's PE count, checked against both traces.
    pes_per_node
        The run's K; default: from the logical trace's node ids (one node
        when they say nothing).
    buffer_bytes
        Buffer capacity (Conveyors' ``CONVEY_BUFFER_SIZE``, 10,000).
    layouts
        Node layouts to predict (:func:`parse_layouts`: ``"8x16,32x4"``).
    physical_report, logical_report
        Receive the line accounting of each read.
    engine
        How the logical trace is read (processes, cache, cluster).
    progress
        Told the bytes and files to read and done (e.g. a progress line).
    keep_links
        Hold the compared links, or count them a block at a time
        (:func:`build_aggregation_view`).

    Returns
    -------
    AggregationView

    Raises
    ------
    ActorProfError
        Any read error, traces that cannot be found, a bad layout.

    Examples
    --------
    >>> view = aggregation_view("examples/ig_8pe_2nodes")  # doctest: +SKIP
    >>> view.verdict  # doctest: +SKIP
    'one run'
    >>> aggregation_view("run/logical", layouts="1x16,4x4").layouts  # doctest: +SKIP
    """
    physical_path, logical_path = aggregation_inputs(
        path, logical=logical, physical_optional=layouts is not None
    )
    logical_report = ReadReport(kind="logical") if logical_report is None else logical_report
    lview = logical_view(
        logical_path,
        phase=phase,
        num_pes=num_pes,
        report=logical_report,
        engine=engine,
        progress=progress,
        sizes=True,  # the pairs per message size from this one read
    )
    buffers = None
    if physical_path is not None:
        physical_report = (
            ReadReport(kind="physical") if physical_report is None else physical_report
        )
        buffers = read_physical_buffers(
            physical_path, num_pes=num_pes, report=physical_report, progress=progress, engine=engine
        )
    return build_aggregation_view(
        lview,
        buffers,
        pes_per_node=pes_per_node,
        buffer_bytes=buffer_bytes,
        layouts=layouts,
        physical_path=None if physical_path is None else str(physical_path),
        physical_report=physical_report if physical_path is not None else None,
        keep_links=keep_links,
    )


# --- files: figures, tables and the summary -------------------------------


def write_aggregation(view: AggregationView, out: Sink, *, log_scale: bool | None) -> None:
    """Figures, tables and the summary of an aggregation view.

    With a physical trace: ``heatmap`` (routed items per buffer per link, up
    to 1,024 PEs), ``bytes`` (per PE), ``pes`` and ``links`` tables. With
    layouts: ``layouts`` table and figure. Always ``summary``.
    """
    tail = verdict_title(view)
    n = view.num_pes
    run = (view.logical.path, view.logical.report.phase)
    # built from plain data by module-level functions: a figure server can build them
    factor = view.factor()
    if factor is not None:
        size = (max(6.5, 0.42 * n + 3.5), max(6.0, 0.38 * n + 3.0)) if n <= 32 else (10.0, 9.0)
        title = f"Aggregation factor per link ({view.topology.describe()}){tail}"
        out.draw(
            partial(_factor_figure, factor, size=size, log_scale=log_scale, title=title, run=run),
            "heatmap",
        )
    if view.pes is not None:
        ratio = view.totals()["wire_over_payload"]
        title = (
            "Bytes sent per PE: logical payload vs physical"
            + ("" if ratio is None else f" (x{ratio:.2f} overall)")
            + tail
        )
        width = max(7.0, 0.55 * n + 3.0) if n <= 64 else 12.0
        out.draw(partial(_bytes_figure, view.pes, width=width, title=title, run=run), "bytes")
    if view.layouts is not None:
        title = f"What each node layout would send ({n:,} PEs, {view.buffer_bytes:,} B buffers)"
        width = max(6.5, 1.6 * len(view.layouts) + 3.0)
        out.draw(
            partial(_layouts_figure, view.layouts, width=width, title=title, run=run), "layouts"
        )
    if not keeps_tables(out):  # the report's figures: no table or summary
        return
    if view.pes is not None:
        out.csv(view.pes, "pes")
    if view.comparison is not None:  # written a block at a time when not held
        out.csv_parts(view.link_blocks(), "links", index=False)
    if view.layouts is not None:
        out.csv(view.layouts, "layouts", index=False)
    summary = view.summary(files=False)
    # 65,536 files: their entries as JSON text (a dict each cost more than the rest)
    summary["files"] = PlainList(f for r in view.reports for f in r.file_entries())
    summary["options"] = {"log": log_scale}
    out.json(summary, "summary")


def _factor_figure(
    factor: pd.DataFrame,
    *,
    size: tuple[float, float],
    log_scale: bool | None,
    title: str,
    run: tuple[str, str | None],
) -> Figure:
    """Routed items per physical buffer on each link."""
    from ..plot import plot_heatmap
    from ..write import label_run, new_figure, titles_at_the_top

    fig = new_figure(*size)
    plot_heatmap(
        factor,
        ax=fig.axes[0],
        totals=False,
        log=log_scale,
        value_label="routed items per buffer",
        title=title,
    )
    label_run(fig, *run)
    titles_at_the_top(fig)
    return fig


def _bytes_figure(
    pes: pd.DataFrame, *, width: float, title: str, run: tuple[str, str | None]
) -> Figure:
    """Logical payload beside physical bytes, per PE."""
    from ..plot.aggregation import plot_bytes_bars
    from ..write import label_run, new_figure, titles_at_the_top

    fig = new_figure(width, 5.0)
    plot_bytes_bars(pes, ax=fig.axes[0], title=title)
    label_run(fig, *run)
    titles_at_the_top(fig)
    return fig


def _layouts_figure(
    layouts: pd.DataFrame, *, width: float, title: str, run: tuple[str, str | None]
) -> Figure:
    """What each node layout would send."""
    from ..plot.layouts import plot_layouts
    from ..write import label_run, new_figure, titles_at_the_top

    fig = new_figure(width, 5.0)
    plot_layouts(layouts, ax=fig.axes[0], title=title)
    label_run(fig, *run)
    titles_at_the_top(fig)
    return fig

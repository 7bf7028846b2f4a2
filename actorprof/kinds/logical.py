"""The logical view: read a logical trace and derive everything the CLI shows.

``logical_view(path)`` is the Python twin of ``actorprof logical``: one pass
over the trace, then matrices, per-PE and per-node tables, imbalance, top
pairs and locality, and a JSON-able summary. No plotting, no files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._progress import ProgressSink
from .._repr import Summarized, count
from .._text import run_name
from .._version import __version__
from ..analyze.imbalance import imbalance
from ..analyze.matrix import (
    DENSE_MAX_PES,
    CommAccumulator,
    CommMatrices,
    Level,
    Metric,
    SelfSends,
    check_self_sends,
    dense_matrix,
    filter_pairs,
    int_bincount,
    locality_of,
    node_pairs_matrix,
    pe_totals,
    pool_block,
    pool_pairs,
    top_pair_rows,
    top_pairs_at,
    window_pairs,
)
from ..engine import Engine, SendTimes, reduce_logical
from ..errors import ActorProfError, UsageError
from ..read import ReadReport, note_missing_pe_files
from ..write import keeps_tables
from .logical_figures import (
    heatmap_figure,
    heatmap_panel,
    loads_columns,
    loads_figure,
    violin_figure,
)

if TYPE_CHECKING:
    from ..write import Sink

__all__ = [
    "LogicalView",
    "build_logical_view",
    "logical_view",
    "node_totals",
    "view_from_accumulator",
]

#: Caption end of the pooled panel of each block's largest pair.
LARGEST_PAIR = "largest pair"


@dataclass(frozen=True, repr=False)
class LogicalView(Summarized):
    """Everything derived from one logical trace (one phase).

    ``pairs`` (every non-zero source, destination pair), ``counts``/``bytes``
    and ``pes`` follow the ``self_sends`` choice; ``matrices`` keeps the
    unfiltered result of the pass. The dense PE x PE ``counts``/``bytes``
    (and node x node matrices) exist only up to
    :data:`~actorprof.analyze.matrix.DENSE_MAX_PES` PEs (nodes); beyond, they
    are None and figures pool blocks of PEs (:meth:`heatmap_matrix`).
    """

    path: str
    report: ReadReport
    matrices: CommMatrices
    self_sends: SelfSends
    pairs: pd.DataFrame
    counts: pd.DataFrame | None
    bytes: pd.DataFrame | None
    pes: pd.DataFrame
    node_counts: pd.DataFrame | None
    node_bytes: pd.DataFrame | None
    nodes: pd.DataFrame

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        phase = f", phase {self.report.phase}" if self.report.phase else ""
        return f"{run_name(self.path)}{phase}", [
            ("PEs", count(self.num_pes)),
            ("nodes", count(self.num_nodes)),
            ("messages", count(int(self.pairs["messages"].sum()))),
            ("bytes", count(int(self.pairs["bytes"].sum()))),
            ("warnings", count(len(self.report.warnings))),
            ("self-sends", self.self_sends),
        ]

    @property
    def num_pes(self) -> int:
        return self.matrices.num_pes

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    def matrix(self, metric: Metric = "count", level: Level = "pe") -> pd.DataFrame:
        """The dense matrix of ``metric`` at ``level``.

        Raises
        ------
        ActorProfError
            Beyond DENSE_MAX_PES PEs (or nodes): use :attr:`pairs`, or
            :meth:`heatmap_panels` for a picture.
        """
        _check(metric, level)
        if level == "pe":
            found = self.counts if metric == "count" else self.bytes
        else:
            found = self.node_counts if metric == "count" else self.node_bytes
        if found is None:
            raise ActorProfError(
                f"{self.path}: {self.num_pes:,} PEs ({self.num_nodes:,} nodes) is too many "
                f"for a dense {level} x {level} matrix (at most {DENSE_MAX_PES:,}); use the "
                "pairs table, a PE window (--pes A-B), or the pooled heatmap"
            )
        return found

    def heatmap_panels(
        self,
        metric: Metric = "count",
        level: Level = "pe",
        *,
        pes: tuple[int, int] | None = None,
        max_cells: int = 512,
    ) -> list[tuple[pd.DataFrame, str]]:
        """What a heatmap of the trace shows: (matrix, caption) panels.

        Up to DENSE_MAX_PES PEs, and for a window ``pes=(first, last)`` of
        PEs, one panel at full resolution. Beyond, blocks of PEs (whole nodes
        when the node size allows) pooled to at most ``max_cells`` per side,
        two panels: the block sums (volume) and the largest single pair in
        each block (so a hot pair is not averaged away).
        """
        _check(metric, level)
        column = "messages" if metric == "count" else "bytes"
        if pes is not None:
            if level != "pe":
                raise ValueError("a PE window is a PE-level view (level='pe')")
            first, last = pes
            if last >= self.num_pes:
                raise UsageError(
                    f"PE window {first}-{last} is beyond the trace's {self.num_pes} PEs "
                    f"(0-{self.num_pes - 1}): choose --pes A-B within them"
                )
            window = window_pairs(self.pairs, first, last, column)
            return [(window, f"PEs {first}-{last} (totals: within the window)")]
        dense = self.counts if metric == "count" else self.bytes
        if level == "node" or dense is not None:
            return [(self.matrix(metric, level), "")]
        node = self.matrices.pe_node
        sizes = node[node >= 0].value_counts()
        k = int(sizes.iloc[0]) if len(sizes) and sizes.nunique() == 1 else None
        block = pool_block(self.num_pes, max_cells=max_cells, pes_per_node=k)
        pooled = pool_pairs(self.pairs, self.num_pes, block, column)
        return [
            (pooled.sum, f"blocks of {block} PEs: sum"),
            (pooled.max, f"blocks of {block} PEs: {LARGEST_PAIR}"),
        ]

    def loads(self, metric: Metric = "count", level: Level = "pe") -> pd.DataFrame:
        """Per-PE (or per-node) ``sent`` and ``received`` for ``metric``."""
        _check(metric, level)
        table = self.pes if level == "pe" else self.nodes
        if metric == "count":
            return table[["sent", "received"]].copy()
        return table[["bytes_sent", "bytes_received"]].rename(
            columns={"bytes_sent": "sent", "bytes_received": "received"}
        )

    def summary(self, *, top: int = 10, files: bool = True) -> dict[str, Any]:
        """JSON-able summary: totals, locality, imbalance, top pairs, files.

        ``files=False`` leaves the per-file line accounting out (an empty list).
        """
        raw = self.matrices
        total_messages = int(self.pairs["messages"].sum())
        total_bytes = int(self.pairs["bytes"].sum())
        self_total = int(filter_pairs(raw.pairs, "only")["messages"].sum())
        duration = (
            raw.time_max_s - raw.time_min_s
            if raw.time_min_s is not None and raw.time_max_s is not None
            else None
        )
        metrics: dict[str, Any] = {}
        for metric in ("count", "bytes"):
            loads = self.loads(metric)
            metrics[metric] = {
                side: imbalance(loads[side]).to_dict() for side in ("sent", "received")
            }
        rows = top_pair_rows(self.pairs, top)
        pairs = top_pairs_at(self.pairs, rows)
        pairs_bytes = self.pairs["bytes"].to_numpy()[rows]  # (a search of 2 M pairs: 0.15 s)
        return {
            "kind": "logical",
            "actorprof_version": __version__,
            "trace": self.path,
            "phase": self.report.phase,
            "num_pes": self.num_pes,
            "num_pes_inferred": self.report.num_pes_inferred,
            "num_nodes": self.num_nodes,
            "self_sends": self.self_sends,
            "totals": {
                "messages": total_messages,
                "bytes": total_bytes,
                "messages_in_trace": raw.messages,
                "self_sends": self_total,
                "self_send_share": self_total / raw.messages if raw.messages else 0.0,
                "first_send_s": raw.time_min_s,
                "last_send_s": raw.time_max_s,
                "duration_s": duration,
            },
            "locality": locality_of(self.pairs, raw.pe_node),
            "imbalance": metrics,
            "top_pairs": [
                {
                    "src_pe": int(src),
                    "dst_pe": int(dst),
                    "messages": int(value),
                    "bytes": int(nbytes),
                    "share": float(share),
                }
                for src, dst, value, nbytes, share in zip(
                    pairs["src_pe"].to_numpy(),
                    pairs["dst_pe"].to_numpy(),
                    pairs["value"].to_numpy(),
                    pairs_bytes,
                    pairs["share"].to_numpy(),
                    strict=True,
                )
            ],
            "node_conflicts": {str(k): v for k, v in raw.node_conflicts.items()},
            **{
                k: v
                for k, v in self.report.to_dict(files=files).items()
                if k in ("missing_pes", "lines_read", "lines_skipped", "warnings", "files")
            },
            "notes": list(self.report.notes),
        }

    def summary_lines(self, *, top: int = 3) -> list[str]:
        """A short human summary (what the CLI prints on stderr)."""
        s = self.summary(top=top, files=False)
        t = s["totals"]
        phase = s["phase"] or "unnamed"
        lines = [
            f"logical trace ({phase} phase): {t['messages']:,} messages, {t['bytes']:,} bytes, "
            f"{s['num_pes']} PEs on {s['num_nodes']} node(s)"
            + ("" if self.self_sends == "include" else f" (self-sends: {self.self_sends})"),
        ]
        loc = s["locality"]
        lines.append(
            f"  intra-node {100 * loc['intra_node_share']:.1f} %, inter-node "
            f"{100 * loc['inter_node_share']:.1f} %; self-sends {t['self_sends']:,} "
            f"({100 * t['self_send_share']:.1f} % of the trace)"
        )
        for side in ("sent", "received"):
            m = s["imbalance"]["count"][side]
            ratio = "n/a" if m["max_over_mean"] is None else f"{m['max_over_mean']:.2f}"
            pop = "n/a" if m["pop_load_balance"] is None else f"{m['pop_load_balance']:.2f}"
            stragglers = (
                ", ".join(
                    f"PE {p}" + ("" if r is None else f" ({r:.1f}x median)")
                    for p, r in zip(m["stragglers"], m["straggler_over_median"], strict=True)
                )
                or "none"
            )
            lines.append(
                f"  {side + ':':<9} mean {_num(m['mean'])}, "
                f"max {m['max']:,.0f} (PE {m['max_pe']}), "
                f"max/mean {ratio}, POP balance {pop}, stragglers: {stragglers}"
            )
        if s["top_pairs"]:
            pairs = ", ".join(
                f"{p['src_pe']}->{p['dst_pe']} {p['messages']:,} ({100 * p['share']:.1f} %)"
                for p in s["top_pairs"]
            )
            lines.append(f"  top pairs: {pairs}")
        skipped = self.report.lines_skipped
        if skipped:
            lines.append(f"  {skipped:,} line(s) skipped (details in the summary JSON)")
        return lines


def _num(value: float) -> str:
    """``20,000`` for big numbers, ``0.5`` (3 significant digits) for small ones."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _check(metric: str, level: str) -> None:
    if metric not in ("count", "bytes"):
        raise ValueError(f"metric must be 'count' or 'bytes', got {metric!r}")
    if level not in ("pe", "node"):
        raise ValueError(f"level must be 'pe' or 'node', got {level!r}")


def node_totals(
    node_counts: pd.DataFrame, node_bytes: pd.DataFrame, pe_node: pd.Series
) -> pd.DataFrame:
    """Per-node table: pes, sent, received, bytes_sent, bytes_received, intra_node."""
    counts = node_counts.to_numpy()
    nbytes = node_bytes.to_numpy()
    known = pe_node[pe_node >= 0]
    pes = known.value_counts().reindex(node_counts.index, fill_value=0)
    return pd.DataFrame(
        {
            "pes": pes.to_numpy(),
            "sent": counts.sum(axis=1),
            "received": counts.sum(axis=0),
            "bytes_sent": nbytes.sum(axis=1),
            "bytes_received": nbytes.sum(axis=0),
            "intra_node": np.diagonal(counts).copy(),
        },
        index=pd.Index(node_counts.index.to_numpy(), name="node"),
    )


def pairs_with_nodes(pairs: pd.DataFrame, pe_node: pd.Series) -> pd.DataFrame:
    """The tidy table of every non-zero pair: ``src_pe``, ``dst_pe``,
    ``src_node``, ``dst_node``, ``messages``, ``bytes`` (one row per pair)."""
    node = pe_node.to_numpy()
    src, dst = pairs["src_pe"].to_numpy(), pairs["dst_pe"].to_numpy()
    return pd.DataFrame(
        {
            "src_pe": src,
            "dst_pe": dst,
            "src_node": node[src],
            "dst_node": node[dst],
            "messages": pairs["messages"].to_numpy(),
            "bytes": pairs["bytes"].to_numpy(),
        },
        copy=False,  # the columns as they are, not copied into one block
    )


#: Rows of the pairs table written at a time (six int64 columns: 48 MB).
PAIRS_PART_ROWS = 1 << 20


def pairs_with_nodes_parts(
    pairs: pd.DataFrame, pe_node: pd.Series, rows: int = PAIRS_PART_ROWS
) -> Iterator[pd.DataFrame]:
    """:func:`pairs_with_nodes`, ``rows`` rows at a time (at least one part):
    the table of millions of pairs is written as it is made, never held whole
    beside the pairs."""
    for start in range(0, max(len(pairs), 1), rows):
        yield pairs_with_nodes(pairs.iloc[start : start + rows], pe_node)


def node_totals_of(pairs: pd.DataFrame, pe_node: pd.Series) -> pd.DataFrame:
    """Per-node table from the pairs (as :func:`node_totals`), at any node count."""
    node = pe_node.to_numpy(dtype=np.int64)
    nodes = np.unique(node[node >= 0])
    k = len(nodes)
    at = np.searchsorted(nodes, node)  # each PE's node's position: once per PE, not per pair
    src = at[pairs["src_pe"].to_numpy()]
    dst = at[pairs["dst_pe"].to_numpy()]
    messages = pairs["messages"].to_numpy()
    nbytes = pairs["bytes"].to_numpy()
    same = src == dst

    def total(at: np.ndarray, values: np.ndarray) -> np.ndarray:
        return int_bincount(at, values, k)

    pes = np.bincount(np.searchsorted(nodes, node[node >= 0]), minlength=k)
    return pd.DataFrame(
        {
            "pes": pes.astype(np.int64),
            "sent": total(src, messages),
            "received": total(dst, messages),
            "bytes_sent": total(src, nbytes),
            "bytes_received": total(dst, nbytes),
            "intra_node": total(src[same], messages[same]),
        },
        index=pd.Index(nodes, name="node"),
    )


def build_logical_view(
    chunks: Iterable[pd.DataFrame],
    report: ReadReport,
    *,
    path: str,
    num_pes: int | None = None,
    self_sends: SelfSends = "include",
    sizes: bool = False,
) -> LogicalView:
    """Reduce logical chunks (one pass) into a :class:`LogicalView`.

    ``report`` must be the one the chunks' reader fills. ``sizes``: as
    :func:`logical_view`.
    """
    check_self_sends(self_sends)  # before the chunks are read
    acc = CommAccumulator(num_pes, sizes=sizes)
    for chunk in chunks:
        acc.add(chunk)
    return view_from_accumulator(acc, report, path=path, num_pes=num_pes, self_sends=self_sends)


def view_from_accumulator(
    acc: CommAccumulator,
    report: ReadReport,
    *,
    path: str,
    num_pes: int | None = None,
    self_sends: SelfSends = "include",
) -> LogicalView:
    """The :class:`LogicalView` of a reduced trace (the reduce step's end)."""
    check_self_sends(self_sends)
    if num_pes is None:
        limit = report.pe_limit
        from_files = (
            max(
                (
                    pe
                    for pe in report.file_pes()
                    if pe is not None and (limit is None or pe < limit)
                ),
                default=-1,
            )
            + 1
        )
        mats = acc.result(max(from_files, 1))
        report.num_pes = mats.num_pes
        report.num_pes_inferred = True
        report.note(
            f"inferred --num-pes {mats.num_pes} from the file names and PE ids "
            "(pass --num-pes to check the trace against the run)"
        )
        note_missing_pe_files(report, mats.num_pes)
    else:
        mats = acc.result(num_pes)
        report.num_pes = num_pes
    for pe, nodes in mats.node_conflicts.items():
        report.warn(
            f"PE {pe} appears with several node ids {nodes}; node views use "
            f"node {int(mats.pe_node[pe])}"
        )
    pairs = filter_pairs(mats.pairs, self_sends)
    small = mats.num_pes <= DENSE_MAX_PES
    node_of = mats.pe_node[mats.pe_node >= 0]
    few_nodes = node_of.nunique() <= DENSE_MAX_PES
    node_counts = node_pairs_matrix(pairs, mats.pe_node, "messages") if few_nodes else None
    node_bytes = node_pairs_matrix(pairs, mats.pe_node, "bytes") if few_nodes else None
    return LogicalView(
        path=path,
        report=report,
        matrices=mats,
        self_sends=self_sends,
        pairs=pairs,
        counts=dense_matrix(pairs, mats.num_pes, "messages") if small else None,
        bytes=dense_matrix(pairs, mats.num_pes, "bytes") if small else None,
        pes=pe_totals(mats, self_sends=self_sends),
        node_counts=node_counts,
        node_bytes=node_bytes,
        nodes=node_totals_of(pairs, mats.pe_node),
    )


def logical_view(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    self_sends: SelfSends = "include",
    report: ReadReport | None = None,
    jobs: int | None = 1,
    cache: bool = False,
    cache_dir: str | PathLike[str] | None = None,
    scheduler: Any = None,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
    sizes: bool = False,
    times: SendTimes | None = None,
) -> LogicalView:
    """Read a run's logical trace and derive the logical view (one pass).

    Parameters
    ----------
    path
        Run folder or one ``PE<i>_send.csv`` file.
    phase, num_pes
        As :func:`actorprof.iter_logical`.
    self_sends
        ``include`` (default, as the paper), ``exclude`` or ``only``.
    report
        Receives the line accounting; when None, skipped data is announced
        with :class:`ActorProfWarning`.
    jobs
        Worker processes for the read (None or 0: all cores). Files, and
        byte ranges of big files, are read in parallel.
    cache, cache_dir
        Keep each file's reduced data in a cache folder (default
        ``$XDG_CACHE_HOME/actorprof`` or ``~/.cache/actorprof``) and reuse it
        while the file is unchanged.
    scheduler
        A ``dask.distributed`` scheduler address (or ``Client``): read on that
        cluster instead of local processes.
    engine
        All of the above at once (``jobs``, ``cache``, ``cache_dir`` and
        ``scheduler`` are then ignored).
    progress
        Told the bytes and files to read and done (e.g. a progress line).
    sizes
        Also count the messages of the pairs that mix message sizes per
        size, in the same read (``matrices.mixed_sizes``: what the
        aggregation view routes, one conveyor per size).
    times
        Also bin the send times, in the same read, for the timeline
        (:class:`~actorprof.engine.run.SendTimes`: filled when every file
        was read; :func:`actorprof.kinds.timeline.timeline_view` takes it).

    The result is the same, bit for bit, whatever ``jobs``, cache or
    scheduler (see docs/performance.md).

    Returns
    -------
    LogicalView

    Raises
    ------
    ActorProfError
        Any read error (file, line and fix in the message).

    Examples
    --------
    >>> view = logical_view("examples/histo_4pe")  # doctest: +SKIP
    >>> view.summary()["imbalance"]["count"]["sent"]["max_over_mean"]  # doctest: +SKIP
    """
    own = report is None
    report = ReadReport(kind="logical") if report is None else report
    check_self_sends(self_sends)
    if engine is None:
        engine = Engine.of(jobs=jobs, cache=cache, cache_dir=cache_dir, scheduler=scheduler)
    acc = reduce_logical(
        path,
        phase=phase,
        num_pes=num_pes,
        report=report,
        engine=engine,
        progress=progress,
        sizes=sizes,
        times=times,
    )
    view = view_from_accumulator(
        acc, report, path=str(path), num_pes=num_pes, self_sends=self_sends
    )
    if own:
        report.emit_python_warnings()
    return view


def require_messages(view: LogicalView, level: Level) -> None:
    """Raise when a node-level view is asked of a trace with no message."""
    if level == "node" and view.num_nodes == 0:
        raise ActorProfError(
            f"{view.path}: the trace holds no message, so there are no node ids to "
            "aggregate by; use --level pe"
        )


# --- files: figures, tables and the summary -------------------------------


def write_logical(
    view: LogicalView,
    out: Sink,
    *,
    metric: Metric,
    level: Level,
    log_scale: bool | None,
    top: int,
    pes: tuple[int, int] | None = None,
) -> None:
    """Heatmap, violin and loads figures, the tables and the summary.

    ``log_scale`` None lets the heatmap choose (log when the matrix is skewed).
    """
    unit = "PE" if level == "pe" else "node"
    value_label = "messages" if metric == "count" else "bytes"
    prefix = "" if level == "pe" else "node_"
    selfs = "" if view.self_sends == "include" else f", self-sends {view.self_sends}"

    panels = view.heatmap_panels(metric, level, pes=pes)
    pooled = (
        f"{view.num_pes:,} PEs pooled ({panels[0][1].split(':')[0]}); zoom in with --pes A-B"
        if len(panels) > 1
        else ""
    )
    run = (view.path, view.report.phase)
    # figures are built from plain data by the functions of logical_figures: a
    # figure server (OutputWriter's ``warm``) builds them while this process goes on
    out.draw(
        partial(
            heatmap_figure,
            # sums of block maxima mean nothing: totals beside the block sums only
            [heatmap_panel(m, c, totals=not c.endswith(LARGEST_PAIR)) for m, c in panels],
            log_scale=log_scale,
            value_label=value_label,
            title=f"Logical {value_label} {unit} x {unit}{selfs}",
            run=run,
            note=pooled,
        ),
        f"{prefix}heatmap" if pes is None else f"{prefix}heatmap_{pes[0]}_{pes[1]}",
    )
    n = max(panels[0][0].shape)
    loads = loads_columns(view.loads(metric, level))
    out.draw(
        partial(
            violin_figure,
            loads,
            value_label=value_label,
            unit=unit,
            title=f"Logical {value_label} per {unit}: sent and received{selfs}",
            run=run,
        ),
        f"{prefix}violin",
    )
    out.draw(
        partial(
            loads_figure,
            loads,
            width=max(7.5, min(14.0, 0.12 * n + 5.0)),
            value_label=value_label,
            unit=unit,
            title=f"Logical {value_label} sent and received by {unit} id{selfs}",
            run=run,
        ),
        f"{prefix}loads",
    )
    if not keeps_tables(out):  # the report's figures: no table or summary
        return
    if level == "pe":
        if view.counts is not None and view.bytes is not None:
            out.csv(view.counts, "counts")
            out.csv(view.bytes, "bytes")
        out.csv_parts(
            pairs_with_nodes_parts(view.pairs, view.matrices.pe_node), "pairs", index=False
        )
    else:
        if view.node_counts is not None and view.node_bytes is not None:
            out.csv(view.node_counts, "node_counts")
            out.csv(view.node_bytes, "node_bytes")
        out.csv(view.nodes, "nodes")
    out.csv(view.pes, "pes")
    summary = view.summary(top=top, files=False)
    summary["files"] = view.report.file_entries()  # 65,536 files: text from columns
    summary["options"] = {"metric": metric, "level": level, "log": log_scale}
    out.json(summary, "summary")

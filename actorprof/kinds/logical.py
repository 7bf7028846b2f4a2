"""The logical view: read a logical trace and derive everything the CLI shows.

``logical_view(path)`` is the Python twin of ``actorprof logical``: one pass
over the trace, then matrices, per-PE and per-node tables, imbalance, top
pairs and locality, and a JSON-able summary. No plotting, no files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from .._progress import ProgressSink
from .._version import __version__
from ..analyze.imbalance import imbalance
from ..analyze.matrix import (
    CommAccumulator,
    CommMatrices,
    SelfSends,
    filter_self_sends,
    locality,
    node_matrix,
    pe_totals,
    top_pairs,
)
from ..engine import Engine, reduce_logical
from ..errors import ActorProfError
from ..read import ReadReport

if TYPE_CHECKING:
    from ..write import Sink

__all__ = [
    "LogicalView",
    "build_logical_view",
    "logical_view",
    "node_totals",
    "view_from_accumulator",
]

Level = Literal["pe", "node"]
Metric = Literal["count", "bytes"]


@dataclass(frozen=True)
class LogicalView:
    """Everything derived from one logical trace (one phase).

    ``counts``/``bytes`` and ``pes`` follow the ``self_sends`` choice;
    ``matrices`` keeps the unfiltered result of the pass.
    """

    path: str
    report: ReadReport
    matrices: CommMatrices
    self_sends: SelfSends
    counts: pd.DataFrame
    bytes: pd.DataFrame
    pes: pd.DataFrame
    node_counts: pd.DataFrame
    node_bytes: pd.DataFrame
    nodes: pd.DataFrame

    @property
    def num_pes(self) -> int:
        return self.matrices.num_pes

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    def matrix(self, metric: Metric = "count", level: Level = "pe") -> pd.DataFrame:
        """The matrix shown for ``metric`` at ``level``."""
        _check(metric, level)
        if level == "pe":
            return self.counts if metric == "count" else self.bytes
        return self.node_counts if metric == "count" else self.node_bytes

    def loads(self, metric: Metric = "count", level: Level = "pe") -> pd.DataFrame:
        """Per-PE (or per-node) ``sent`` and ``received`` for ``metric``."""
        _check(metric, level)
        table = self.pes if level == "pe" else self.nodes
        if metric == "count":
            return table[["sent", "received"]].copy()
        return table[["bytes_sent", "bytes_received"]].rename(
            columns={"bytes_sent": "sent", "bytes_received": "received"}
        )

    def summary(self, *, top: int = 10) -> dict[str, Any]:
        """JSON-able summary: totals, locality, imbalance, top pairs, files."""
        raw = self.matrices
        total_messages = int(self.counts.to_numpy().sum())
        total_bytes = int(self.bytes.to_numpy().sum())
        self_total = int(np.trace(raw.counts.to_numpy()))
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
        pairs = top_pairs(self.counts, top)
        pairs_bytes = self.bytes.to_numpy()[
            pairs["src_pe"].to_numpy(dtype=np.int64), pairs["dst_pe"].to_numpy(dtype=np.int64)
        ]
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
            "locality": locality(self.counts, raw.pe_node),
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
                for k, v in self.report.to_dict().items()
                if k in ("missing_pes", "lines_read", "lines_skipped", "warnings", "files")
            },
            "notes": list(self.report.notes),
        }

    def summary_lines(self, *, top: int = 3) -> list[str]:
        """A short human summary (what the CLI prints on stderr)."""
        s = self.summary(top=top)
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


def build_logical_view(
    chunks: Iterable[pd.DataFrame],
    report: ReadReport,
    *,
    path: str,
    num_pes: int | None = None,
    self_sends: SelfSends = "include",
) -> LogicalView:
    """Reduce logical chunks (one pass) into a :class:`LogicalView`.

    ``report`` must be the one the chunks' reader fills.
    """
    filter_self_sends(pd.DataFrame([[0]]), self_sends)  # validate the option early
    acc = CommAccumulator(num_pes)
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
    filter_self_sends(pd.DataFrame([[0]]), self_sends)
    if num_pes is None:
        from_files = max((f.pe for f in report.files if f.pe is not None), default=-1) + 1
        mats = acc.result(max(from_files, 1))
        report.num_pes = mats.num_pes
        report.num_pes_inferred = True
        report.note(
            f"inferred --num-pes {mats.num_pes} from the file names and PE ids "
            "(pass --num-pes to check the trace against the run)"
        )
    else:
        mats = acc.result(num_pes)
        report.num_pes = num_pes
    for pe, nodes in mats.node_conflicts.items():
        report.warn(
            f"PE {pe} appears with several node ids {nodes}; node views use "
            f"node {int(mats.pe_node[pe])}"
        )
    counts = filter_self_sends(mats.counts, self_sends)
    nbytes = filter_self_sends(mats.bytes, self_sends)
    node_counts = node_matrix(counts, mats.pe_node)
    node_bytes = node_matrix(nbytes, mats.pe_node)
    return LogicalView(
        path=path,
        report=report,
        matrices=mats,
        self_sends=self_sends,
        counts=counts,
        bytes=nbytes,
        pes=pe_totals(mats, self_sends=self_sends),
        node_counts=node_counts,
        node_bytes=node_bytes,
        nodes=node_totals(node_counts, node_bytes, mats.pe_node),
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
    filter_self_sends(pd.DataFrame([[0]]), self_sends)
    if engine is None:
        engine = Engine(
            jobs=jobs,
            cache=cache or cache_dir is not None,
            cache_dir=cache_dir,
            scheduler=scheduler,
        )
    acc = reduce_logical(
        path, phase=phase, num_pes=num_pes, report=report, engine=engine, progress=progress
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
) -> None:
    """Heatmap, violin and loads figures, the tables and the summary.

    ``log_scale`` None lets the heatmap choose (log when the matrix is skewed).
    """
    from ..plot import plot_heatmap, plot_pe_loads, plot_violin
    from ..write import label_run, new_figure

    unit = "PE" if level == "pe" else "node"
    value_label = "messages" if metric == "count" else "bytes"
    prefix = "" if level == "pe" else "node_"
    selfs = "" if view.self_sends == "include" else f", self-sends {view.self_sends}"

    matrix = view.matrix(metric, level)
    n = max(matrix.shape)
    # grows with the number of annotated cells, capped (a 17-inch 32 x 32 figure
    # cost 330 MB to render); beyond 32 the matrix is an image without numbers
    size = (
        (min(14.0, max(7.0, 0.42 * n + 4.0)), min(12.5, max(6.0, 0.38 * n + 3.0)))
        if n <= 32
        else (11.0, 9.5)
    )
    fig = new_figure(*size)
    plot_heatmap(
        matrix,
        ax=fig.axes[0],
        log=log_scale,
        value_label=value_label,
        title=f"Logical {value_label} {unit} x {unit}{selfs}",
    )
    label_run(fig, view.path, view.report.phase)
    out.figure(fig, f"{prefix}heatmap")

    fig = new_figure(7.5, 5.5)
    plot_violin(
        view.loads(metric, level),
        ax=fig.axes[0],
        value_label=value_label,
        unit_label=unit,
        title=f"Logical {value_label} per {unit}: sent and received{selfs}",
    )
    label_run(fig, view.path, view.report.phase)
    out.figure(fig, f"{prefix}violin")

    fig = new_figure(max(7.5, min(14.0, 0.12 * n + 5.0)), 4.5)
    plot_pe_loads(
        view.loads(metric, level),
        ax=fig.axes[0],
        value_label=value_label,
        unit_label=unit,
        title=f"Logical {value_label} sent and received by {unit} id{selfs}",
    )
    label_run(fig, view.path, view.report.phase)
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

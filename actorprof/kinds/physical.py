"""The physical view: read a physical trace and derive what ``actorprof physical`` shows.

``physical_view(path)`` is the Python twin of the command: one pass over
``physical.txt``, then per send type matrices of buffers and bytes, per-PE
totals, node matrices and the 2D-mesh check when the PEs per node are known,
imbalance, and a JSON-able summary. No plotting, no files.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
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
    Level,
    Metric,
    locality_of,
    pool_block,
    pool_pairs,
    top_pairs_of,
    window_pairs,
)
from ..analyze.physical import (
    MeshFit,
    PhysicalAccumulator,
    PhysicalMatrices,
    check_send_type,
    fitting_pes_per_node,
    mesh_fit,
    pe_node_map,
    physical_node_matrices,
    physical_pairs,
    physical_pairs_parts,
    physical_pe_totals,
)
from ..analyze.physical_partial import PhysicalPartial
from ..errors import ActorProfError, UsageError
from ..read import ReadReport
from ..read.physical import program_output_lines
from ..schema import BUFFER_SEND_TYPES, SEND_TYPES
from ..write import keeps_tables
from .logical_figures import heatmap_panel, loads_columns
from .physical_figures import heatmap_figure, violin_figure

if TYPE_CHECKING:
    from ..engine import Engine
    from ..write import Sink

__all__ = [
    "PhysicalView",
    "accumulate",
    "build_physical_view",
    "physical_view",
    "physical_view_of",
    "stacked",
]


@dataclass(frozen=True)
class _LinkFacts:
    """What a physical view's summary says of its links (:meth:`PhysicalView.without_links`)."""

    top: int
    totals: dict[str, dict[str, Any]]
    locality: dict[str, Any] | None
    top_links: dict[str, list[dict[str, Any]]]


@dataclass(frozen=True, repr=False)
class PhysicalView(Summarized):
    """Everything derived from one physical trace.

    ``pes`` is :func:`physical_pe_totals`; ``fit`` and ``nodes`` are None
    unless ``pes_per_node`` is known; ``candidates`` lists the PEs-per-node
    values (divisors of the PE count) the trace fits as a 2D mesh.
    """

    path: str
    report: ReadReport
    matrices: PhysicalMatrices
    pes: pd.DataFrame
    fit: MeshFit | None
    candidates: list[int]
    nodes: dict[str, tuple[pd.DataFrame, pd.DataFrame]] | None
    #: The summary's facts from the links, kept when the links were let go
    #: (:meth:`without_links`); None: made from ``matrices``.
    kept: _LinkFacts | None = field(default=None, repr=False)

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        types = [t for t, m in self.matrices.by_type.items() if m.messages]
        return run_name(self.path), [
            ("PEs", count(self.num_pes)),
            ("buffers", count(sum(m.messages for m in self.matrices.by_type.values()))),
            ("warnings", count(len(self.report.warnings))),
            ("send types", ", ".join(types) or "none"),
            ("PEs per node", "unknown" if self.pes_per_node is None else count(self.pes_per_node)),
        ]

    @property
    def num_pes(self) -> int:
        return self.matrices.num_pes

    @property
    def pes_per_node(self) -> int | None:
        return self.matrices.pes_per_node

    @property
    def num_nodes(self) -> int | None:
        return None if self.fit is None else self.fit.num_nodes

    def with_pes_per_node(self, pes_per_node: int | None) -> PhysicalView:
        """The same trace seen with another K (no re-read; notes go to the same report)."""
        if pes_per_node is not None and pes_per_node < 1:
            raise UsageError(f"--pes-per-node must be at least 1, got {pes_per_node}")
        nodes = pe_node_map(self.num_pes, pes_per_node)
        mats = dataclasses.replace(
            self._links(),
            pes_per_node=pes_per_node,
            by_type={
                t: dataclasses.replace(m, pe_node=nodes.copy())
                for t, m in self.matrices.by_type.items()
            },
        )
        return _derive(mats, self.report, path=self.path)

    def without_links(self, *, top: int = 10) -> PhysicalView:
        """This view with its links let go, what its summary says of them kept.

        The summary's totals, locality and top ``top`` links per send type
        are made now; the per-PE totals, node matrices and mesh check stay.
        What the run report holds once the figures are drawn: at 65,536 PEs
        the links are millions of rows (hundreds of MB). :meth:`summary`
        then takes at most ``top``; :meth:`matrix` (PE level),
        :meth:`pairs`, :meth:`heatmap_panels` and :meth:`with_pes_per_node`
        raise ValueError.
        """
        if self.kept is not None:
            return self
        by_type = {
            # new empty frames: a slice of the links would hold their arrays
            t: dataclasses.replace(m, pairs=m.pairs.iloc[:0].copy())
            for t, m in self.matrices.by_type.items()
        }
        return dataclasses.replace(
            self,
            matrices=dataclasses.replace(self.matrices, by_type=by_type),
            kept=self._link_facts(top),
        )

    def _links(self) -> PhysicalMatrices:
        """The matrices, when their links are held (see :meth:`without_links`)."""
        if self.kept is not None:
            raise ValueError(
                "this physical view's links were let go (without_links): read the trace again"
            )
        return self.matrices

    def matrix(self, send_type: str, metric: Metric = "count", level: Level = "pe") -> pd.DataFrame:
        """Buffers (``count``) or bytes of one send type, PE x PE or node x node.

        Raises
        ------
        ValueError
            Unknown send type, metric or level, or ``node`` without
            ``pes_per_node``; ``pe`` once the links were let go.
        """
        check_send_type(send_type)
        _check_metric(metric)
        if level == "pe":
            if self.num_pes > DENSE_MAX_PES:
                raise ActorProfError(
                    f"{self.path}: {self.num_pes:,} PEs is too many for a dense PE x PE "
                    f"matrix (at most {DENSE_MAX_PES:,}); use the links table "
                    "(physical_pairs), a PE window, or the pooled heatmap"
                )
            mats = self._links().by_type[send_type]
            return mats.counts if metric == "count" else mats.bytes
        if level != "node":
            raise ValueError(f"level must be 'pe' or 'node', got {level!r}")
        if self.nodes is None:
            raise ValueError(
                "node matrices need pes_per_node"
                if self.pes_per_node is None
                else f"node matrices are built for at most {DENSE_MAX_PES:,} nodes"
            )
        counts, nbytes = self.nodes[send_type]
        return counts if metric == "count" else nbytes

    def pairs(self) -> pd.DataFrame:
        """Every non-zero link of every send type (:func:`physical_pairs`)."""
        return physical_pairs(self._links())

    def heatmap_panels(
        self,
        send_type: str,
        metric: Metric = "count",
        *,
        pes: tuple[int, int] | None = None,
        max_cells: int = 512,
    ) -> list[tuple[pd.DataFrame, str]]:
        """What a heatmap of one send type shows: (matrix, caption) panels.

        Up to DENSE_MAX_PES PEs, and for a window ``pes=(first, last)``, the
        PE x PE matrix. Beyond, blocks of PEs (whole nodes when the node size
        allows) pooled to at most ``max_cells`` per side, two panels: block
        sums, and the largest single link of each block.
        """
        check_send_type(send_type)
        _check_metric(metric)
        column = "messages" if metric == "count" else "bytes"
        pairs = self._links().by_type[send_type].pairs
        if pes is not None:
            first, last = pes
            if last >= self.num_pes:
                raise UsageError(
                    f"PE window {first}-{last} is beyond the trace's {self.num_pes} PEs "
                    f"(0-{self.num_pes - 1}): choose a window within them"
                )
            return [(window_pairs(pairs, first, last, column), f"PEs {first}-{last}")]
        if self.num_pes <= DENSE_MAX_PES:
            return [(self.matrix(send_type, metric), "")]
        block = pool_block(self.num_pes, max_cells=max_cells, pes_per_node=self.pes_per_node)
        pooled = pool_pairs(pairs, self.num_pes, block, column)
        return [
            (pooled.sum, f"blocks of {block} PEs: sum"),
            (pooled.max, f"blocks of {block} PEs: largest link"),
        ]

    def loads(
        self, send_types: Iterable[str] | None = None, metric: Metric = "count"
    ) -> pd.DataFrame:
        """Per-PE ``<type> sent`` and ``<type> received`` columns (violin input)."""
        _check_metric(metric)
        what = "buffers" if metric == "count" else "bytes"
        types = self.types_shown(send_types)
        data = {}
        for t in types:
            for side in ("sent", "received"):
                data[f"{t}\n{side}"] = self.pes[f"{t}_{what}_{side}"].to_numpy()
        return pd.DataFrame(data, index=self.pes.index)

    def types_shown(self, send_types: Iterable[str] | None = None) -> list[str]:
        """The given types (checked), or the types present (all three if none is)."""
        if send_types is not None:
            return [check_send_type(t) for t in send_types]
        return self.matrices.types_present or list(SEND_TYPES)

    def summary(self, *, top: int = 10) -> dict[str, Any]:
        """JSON-able summary: totals per send type, mesh check, imbalance, files.

        Raises
        ------
        ValueError
            ``top`` beyond the links kept by :meth:`without_links`.
        """
        mats = self.matrices
        facts = self._link_facts(top)
        totals = copy.deepcopy(facts.totals)
        all_buffers = sum(totals[t]["buffers"] for t in BUFFER_SEND_TYPES)
        all_bytes = sum(totals[t]["bytes"] for t in SEND_TYPES)
        totals["all"] = {
            "buffers": all_buffers,
            "bytes": all_bytes,
            "calls": int(mats.lines),
            "avg_buffer_bytes": all_bytes / all_buffers if all_buffers else None,
        }
        metrics: dict[str, Any] = {}
        for t in (*self.types_shown(), "all"):
            prefix = "" if t == "all" else f"{t}_"
            metrics[t] = {
                what: {
                    side: imbalance(self.pes[f"{prefix}{what}_{side}"]).to_dict()
                    for side in ("sent", "received")
                }
                for what in ("buffers", "bytes")
            }
        report = self.report.to_dict()
        return {
            "kind": "physical",
            "actorprof_version": __version__,
            "trace": self.path,
            "num_pes": self.num_pes,
            "num_pes_inferred": self.report.num_pes_inferred,
            "pes_per_node": self.pes_per_node,
            "num_nodes": self.num_nodes,
            "send_types_present": mats.types_present,
            "totals": totals,
            "mesh_fit": None if self.fit is None else self.fit.to_dict(),
            "pes_per_node_candidates": self.candidates,
            "locality": copy.deepcopy(facts.locality),
            "imbalance": metrics,
            "top_links": {
                t: [dict(link) for link in links] for t, links in facts.top_links.items()
            },
            "program_output_lines": program_output_lines(self.report),
            **{k: report[k] for k in ("lines_read", "lines_skipped", "warnings", "files")},
            "notes": list(self.report.notes),
        }

    def _link_facts(self, top: int) -> _LinkFacts:
        """What :meth:`summary` says of the links: kept, or made from them."""
        if self.kept is not None:
            if top > self.kept.top:
                raise ValueError(
                    f"this physical view kept its top {self.kept.top} links "
                    f"(without_links), not {top}"
                )
            return dataclasses.replace(
                self.kept, top=top, top_links={t: v[:top] for t, v in self.kept.top_links.items()}
            )
        mats = self.matrices
        totals = mats.totals()
        for values in totals.values():
            n = values["buffers"]
            values["avg_buffer_bytes"] = values["bytes"] / n if n else None
        top_links = {}
        for t in self.types_shown():
            links = mats.by_type[t].pairs
            pairs = top_pairs_of(links, top)
            nbytes = _bytes_of(links, pairs)
            top_links[t] = [
                {
                    "src_pe": int(src),
                    "dst_pe": int(dst),
                    "buffers": int(value),
                    "bytes": int(size),
                    "share": float(share),
                }
                for (src, dst, value, share), size in zip(
                    pairs.itertuples(index=False), nbytes, strict=True
                )
            ]
        locality = (
            None
            if self.pes_per_node is None
            else {t: locality_of(mats.by_type[t].pairs, mats.pe_node) for t in SEND_TYPES}
        )
        return _LinkFacts(top, totals, locality, top_links)

    def summary_lines(self) -> list[str]:
        """A short human summary (what the CLI prints on stderr)."""
        s = self.summary(top=1)
        shape = f"{s['num_pes']} PEs"
        if self.pes_per_node is not None:
            shape += f" ({s['num_nodes']} node(s) of {self.pes_per_node})"
        lines = [f"physical trace: {self.matrices.lines:,} calls on {shape}"]
        for t in SEND_TYPES:
            v = s["totals"][t]
            if not v["buffers"]:
                continue
            avg = "" if v["avg_buffer_bytes"] is None else f", {v['avg_buffer_bytes']:,.0f} B avg"
            lines.append(
                f"  {t + ':':<19}{v['buffers']:>8,} calls, {v['bytes']:>12,} bytes on "
                f"{v['links']:,} links{avg}"
            )
        if self.fit is not None:
            lines.append("  " + _fit_line(self.fit))
        elif self.candidates:
            ks = ", ".join(str(k) for k in self.candidates)
            lines.append(f"  fits a 2D mesh with --pes-per-node {ks} (pass one for node views)")
        m = s["imbalance"]["all"]["buffers"]["sent"]
        ratio = "n/a" if m["max_over_mean"] is None else f"{m['max_over_mean']:.2f}"
        stragglers = ", ".join(f"PE {p}" for p in m["stragglers"]) or "none"
        lines.append(
            f"  buffers sent: mean {m['mean']:,.1f}, max {m['max']:,.0f} (PE {m['max_pe']}), "
            f"max/mean {ratio}, stragglers: {stragglers}"
        )
        return lines


def _fit_line(fit: MeshFit) -> str:
    k = fit.pes_per_node
    if fit.fits:
        return (
            f"2D mesh with {k} PEs per node: fits (local_send within nodes, "
            "nonblock_send within columns)"
        )
    broken = ", ".join(
        f"{v['buffers']:,} {t} call(s) on {v['links']:,} link(s)"
        for t, v in fit.violations.items()
        if v["buffers"]
    )
    return f"2D mesh with {k} PEs per node: does NOT fit: {broken} break the mesh rule"


def _check_metric(metric: str) -> None:
    if metric not in ("count", "bytes"):
        raise ValueError(f"metric must be 'count' or 'bytes', got {metric!r}")


def build_physical_view(
    chunks: Iterable[pd.DataFrame],
    report: ReadReport,
    *,
    path: str,
    num_pes: int | None = None,
    pes_per_node: int | None = None,
    min_pes: int = 0,
) -> PhysicalView:
    """Reduce physical chunks (one pass) into a :class:`PhysicalView`.

    ``report`` must be the one the chunks' reader fills; ``min_pes`` pads
    the matrices (e.g. to the logical trace's PE count).

    Raises
    ------
    UsageError
        ``pes_per_node < 1``.
    """
    if pes_per_node is not None and pes_per_node < 1:
        raise UsageError(f"--pes-per-node must be at least 1, got {pes_per_node}")
    acc = PhysicalAccumulator(num_pes)
    for chunk in chunks:
        acc.add(chunk)
    return physical_view_of(
        acc, report, path=path, num_pes=num_pes, pes_per_node=pes_per_node, min_pes=min_pes
    )


def physical_view_of(
    acc: PhysicalAccumulator,
    report: ReadReport,
    *,
    path: str,
    num_pes: int | None = None,
    pes_per_node: int | None = None,
    min_pes: int = 0,
) -> PhysicalView:
    """The view of a trace summed into ``acc`` (see :func:`build_physical_view`).

    Raises
    ------
    UsageError
        ``pes_per_node < 1``.
    """
    if pes_per_node is not None and pes_per_node < 1:
        raise UsageError(f"--pes-per-node must be at least 1, got {pes_per_node}")
    mats = acc.result(num_pes, pes_per_node=pes_per_node)
    if mats.num_pes < min_pes:
        mats = acc.result(min_pes, pes_per_node=pes_per_node)
    if num_pes is None:
        report.num_pes = mats.num_pes
        report.num_pes_inferred = True
        report.note(
            f"inferred --num-pes {mats.num_pes} from the largest PE id in the trace "
            "(pass --num-pes to check the trace against the run)"
        )
    else:
        report.num_pes = num_pes
    return _derive(mats, report, path=path)


def _derive(mats: PhysicalMatrices, report: ReadReport, *, path: str) -> PhysicalView:
    """Everything the view derives from the matrices (no reading)."""
    pes_per_node = mats.pes_per_node
    fit = None
    nodes = None
    if pes_per_node is not None:
        if mats.num_pes % pes_per_node:
            report.warn(
                f"{mats.num_pes} PEs are not a multiple of --pes-per-node {pes_per_node}: "
                "the last node is partial"
            )
        fit = mesh_fit(mats, pes_per_node=pes_per_node)
        if fit.num_nodes <= DENSE_MAX_PES:
            nodes = physical_node_matrices(mats)
        else:
            report.note(
                f"{fit.num_nodes:,} nodes: no node x node matrices beyond {DENSE_MAX_PES:,} "
                "nodes (the links table has every pair)"
            )
        if not fit.fits:
            report.warn(_fit_line(fit) + f" ({fit.rule})")
    return PhysicalView(
        path=path,
        report=report,
        matrices=mats,
        pes=physical_pe_totals(mats),
        fit=fit,
        candidates=fitting_pes_per_node(mats),
        nodes=nodes,
    )


def physical_view(
    path: str | PathLike[str],
    *,
    num_pes: int | None = None,
    pes_per_node: int | None = None,
    report: ReadReport | None = None,
    progress: ProgressSink | None = None,
    engine: Engine | None = None,
) -> PhysicalView:
    """Read a physical trace and derive the physical view (one pass).

    Parameters
    ----------
    path
        ``physical.txt`` or a folder holding it.
    num_pes
        The run's PE count (checked against the trace); None infers it.
    pes_per_node
        K: ``node = pe // K``; enables node matrices and the 2D-mesh check.
    report
        Receives the line accounting; when None, problems are announced with
        :class:`ActorProfWarning`.
    progress
        Told the bytes to read and done (e.g. a progress line).
    engine
        How the file is read: byte ranges of it in this process (the
        default), in worker processes (``Engine(jobs=N)``) or on a Dask
        cluster, the cache. Every way gives the same view.

    Returns
    -------
    PhysicalView

    Raises
    ------
    ActorProfError
        Any read error (file, line and fix in the message).

    Examples
    --------
    >>> view = physical_view("examples/ig_8pe_2nodes/physical", pes_per_node=4)  # doctest: +SKIP
    >>> view.summary()["mesh_fit"]["fits"]  # doctest: +SKIP
    True
    """
    from ..engine.physical import reduce_physical

    own = report is None
    report = ReadReport(kind="physical") if report is None else report
    # the sums let go once in the accumulator: the view is derived beside it only
    acc = accumulate(
        reduce_physical(path, num_pes=num_pes, report=report, engine=engine, progress=progress),
        num_pes,
    )
    view = physical_view_of(
        acc,
        report,
        path=report.files[-1].path,
        num_pes=num_pes,
        pes_per_node=pes_per_node,
    )
    if own:
        report.emit_python_warnings()
    return view


def _bytes_of(links: pd.DataFrame, pairs: pd.DataFrame) -> list[int]:
    """The ``bytes`` of each of ``pairs``' (src_pe, dst_pe) links (a few of
    them) in ``links`` (distinct links), found without indexing the
    millions of links of a 65,536-PE trace."""
    src, dst = links["src_pe"].to_numpy(), links["dst_pe"].to_numpy()
    rows = np.flatnonzero(np.isin(src, pairs["src_pe"].to_numpy()))
    rows = rows[np.isin(dst[rows], pairs["dst_pe"].to_numpy())]
    nbytes = links["bytes"].to_numpy()
    found = {
        (s, d): b
        for s, d, b in zip(
            src[rows].tolist(), dst[rows].tolist(), nbytes[rows].tolist(), strict=True
        )
    }
    return [
        found[s, d] for s, d in zip(pairs["src_pe"].tolist(), pairs["dst_pe"].tolist(), strict=True)
    ]


def accumulate(partial: PhysicalPartial, num_pes: int | None = None) -> PhysicalAccumulator:
    """An accumulator holding ``partial`` (the engine's sums of a trace)."""
    acc = PhysicalAccumulator(num_pes)
    acc.add_partial(partial)
    return acc


def stacked(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per-type matrices stacked into one frame with a ``send_type`` index level."""
    parts = []
    for t, frame in frames.items():
        part = frame.copy()
        part.index = pd.MultiIndex.from_arrays(
            [np.full(len(frame), t), frame.index.to_numpy()],
            names=["send_type", frame.index.name or "src"],
        )
        parts.append(part)
    return pd.concat(parts)


# --- files: figures, tables and the summary -------------------------------


def write_physical(
    view: PhysicalView,
    out: Sink,
    *,
    types: list[str],
    metric: Metric,
    log_scale: bool | None,
    top: int,
) -> None:
    """Heatmap (one panel per send type, one colour scale) and violin, tables, summary.

    ``log_scale`` None: log when the panels together are skewed (the
    heatmap's rule, :data:`actorprof.plot.heatmap.LOG_SKEW`).
    """
    from ..analyze.imbalance import LOG_SKEW, skew
    from ..schema import SEND_TYPES

    value_label = "buffers" if metric == "count" else "bytes"
    n = view.num_pes
    # rows of panels: the matrices (or, pooled, block sums then block maxima)
    per_type = [view.heatmap_panels(t, metric) for t in types]
    rows = [[panels[i] for panels in per_type] for i in range(len(per_type[0]))]
    note = ""
    if log_scale is None:
        ratio = skew(np.concatenate([m.to_numpy(dtype=np.float64).ravel() for m, _ in rows[0]]))
        log_scale = ratio is not None and ratio > LOG_SKEW
        if log_scale:
            note = f"log colour scale, chosen: max/median = {ratio:.0f}x"
    # built from arrays by physical_figures' functions: a figure server builds them
    # without pandas
    out.draw(
        partial(
            heatmap_figure,
            [
                [heatmap_panel(m, caption, totals=r == 0) for m, caption in row]
                for r, row in enumerate(rows)
            ],
            types=types,
            value_label=value_label,
            num_pes=n,
            log_scale=log_scale,
            note=note,
            path=view.path,
        ),
        "heatmap",
    )
    out.draw(
        partial(
            violin_figure,
            loads_columns(view.loads(types, metric)),
            value_label=value_label,
            path=view.path,
        ),
        "violin",
    )
    if not keeps_tables(out):  # the report's figures: no table or summary
        return
    if n <= DENSE_MAX_PES:
        out.csv(stacked({t: view.matrix(t, "count") for t in SEND_TYPES}), "counts")
        out.csv(stacked({t: view.matrix(t, "bytes") for t in SEND_TYPES}), "bytes")
    out.csv_parts(physical_pairs_parts(view.matrices), "pairs", index=False)
    if view.nodes is not None:
        out.csv(stacked({t: view.matrix(t, "count", "node") for t in SEND_TYPES}), "node_counts")
        out.csv(stacked({t: view.matrix(t, "bytes", "node") for t in SEND_TYPES}), "node_bytes")
    out.csv(view.pes, "pes")
    summary = view.summary(top=top)
    summary["options"] = {"send_types": types, "metric": metric, "log": log_scale}
    out.json(summary, "summary")

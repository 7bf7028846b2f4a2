"""Reductions of the physical trace: buffers and bytes per send type and link.

One pass over the reader's chunks feeds one :class:`CommAccumulator` per send
type (a traced call counts as one "message" of ``buffer_bytes`` bytes), so
everything the logical analyses offer (per-PE totals, node matrices, top
pairs) applies per send type. On top: the node of a PE for a given number of
PEs per node K (``node = pe // K``), and whether the trace fits a Conveyors 2D
mesh of that K.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..schema import BUFFER_SEND_TYPES, PHYSICAL_PE_TABLE_COLUMNS, SEND_TYPE_DTYPE, SEND_TYPES
from .matrix import (
    DENSE_MAX_PES,
    CommAccumulator,
    CommMatrices,
    dense_matrix,
    int_bincount,
    node_pairs_matrix,
    pe_totals,
)
from .physical_partial import PhysicalPartial

__all__ = [
    "MESH_RULE",
    "MeshFit",
    "PhysicalAccumulator",
    "PhysicalMatrices",
    "check_send_type",
    "fitting_pes_per_node",
    "mesh_fit",
    "pe_node_map",
    "physical_matrices",
    "physical_node_matrices",
    "physical_pairs",
    "physical_pairs_parts",
    "physical_pe_totals",
]

#: The 2D-mesh rule :func:`mesh_fit` checks, in words.
MESH_RULE = (
    "node = pe // K; local_send stays within a node; nonblock_send and "
    "nonblock_progress stay in one column: src_pe % K == dst_pe % K"
)
_UNKNOWN_NODE = -1


def check_send_type(send_type: str) -> str:
    """``send_type`` if it is one of :data:`actorprof.schema.SEND_TYPES`.

    Raises
    ------
    ValueError
        Any other value.
    """
    if send_type not in SEND_TYPES:
        raise ValueError(f"send_type must be one of {SEND_TYPES}, got {send_type!r}")
    return send_type


def pe_node_map(num_pes: int, pes_per_node: int | None) -> pd.Series:
    """Node of each PE: ``pe // pes_per_node``, or -1 (unknown) for None.

    Raises
    ------
    ValueError
        ``pes_per_node < 1``.
    """
    if pes_per_node is not None and pes_per_node < 1:
        raise ValueError(f"pes_per_node must be at least 1, got {pes_per_node}")
    pes = np.arange(num_pes, dtype=np.int64)
    nodes = pes // pes_per_node if pes_per_node else np.full(num_pes, _UNKNOWN_NODE)
    return pd.Series(nodes, index=pd.RangeIndex(num_pes, name="pe"), name="node")


@dataclass(frozen=True)
class PhysicalMatrices:
    """Result of one pass over a physical trace.

    Attributes
    ----------
    by_type
        One :class:`CommMatrices` per send type (all three, empty ones
        included): ``counts`` are calls (buffers), ``bytes`` their
        ``buffer_bytes``; ``pe_node`` follows ``pes_per_node``.
    pes_per_node
        K of ``node = pe // K``, or None when unknown.
    lines
        Trace lines reduced.
    max_buffer_bytes
        Largest buffer of each send type (0 when none).
    """

    by_type: dict[str, CommMatrices]
    pes_per_node: int | None
    lines: int
    max_buffer_bytes: dict[str, int]

    @property
    def num_pes(self) -> int:
        return self.by_type[SEND_TYPES[0]].num_pes

    @property
    def pe_node(self) -> pd.Series:
        return self.by_type[SEND_TYPES[0]].pe_node

    @property
    def types_present(self) -> list[str]:
        """Send types with at least one line, in :data:`SEND_TYPES` order."""
        return [t for t in SEND_TYPES if self.by_type[t].messages]

    def pairs(self, send_type: str | None = None) -> pd.DataFrame:
        """Non-zero links of one type: ``src_pe``, ``dst_pe``, ``buffers``, ``bytes``.

        None: all types together, ``buffers`` of local_send + nonblock_send
        and ``bytes`` of all three (as :meth:`buffers` and :meth:`bytes`).
        """
        if send_type is not None:
            pairs = self.by_type[check_send_type(send_type)].pairs
            return pairs.rename(columns={"messages": "buffers"})
        parts = [self.by_type[t].pairs for t in SEND_TYPES]
        src = np.concatenate([p["src_pe"].to_numpy() for p in parts])
        dst = np.concatenate([p["dst_pe"].to_numpy() for p in parts])
        buffers = np.concatenate(
            [
                p["messages"].to_numpy() * (t in BUFFER_SEND_TYPES)
                for t, p in zip(SEND_TYPES, parts, strict=True)
            ]
        )
        nbytes = np.concatenate([p["bytes"].to_numpy() for p in parts])
        keys, inverse = np.unique((src << 32) | dst, return_inverse=True)
        inverse = inverse.ravel()
        return pd.DataFrame(
            {
                "src_pe": keys >> 32,
                "dst_pe": keys & 0xFFFFFFFF,
                "buffers": int_bincount(inverse, buffers, len(keys)),
                "bytes": int_bincount(inverse, nbytes, len(keys)),
            }
        )

    def buffers(self, send_type: str | None = None) -> pd.DataFrame:
        """PE x PE calls of one type; None: buffers (local_send + nonblock_send).

        Dense: at most :data:`~actorprof.analyze.matrix.DENSE_MAX_PES` PEs.
        """
        return dense_matrix(self.pairs(send_type), self.num_pes, "buffers")

    def bytes(self, send_type: str | None = None) -> pd.DataFrame:
        """PE x PE bytes of one type; None: bytes of all three types (dense, as :meth:`buffers`)."""
        return dense_matrix(self.pairs(send_type), self.num_pes, "bytes")

    def totals(self) -> dict[str, dict[str, Any]]:
        """Per send type: lines (calls), bytes, links (PE pairs), largest buffer."""
        out: dict[str, dict[str, Any]] = {}
        for t in SEND_TYPES:
            pairs = self.by_type[t].pairs
            diagonal = pairs["src_pe"].to_numpy() == pairs["dst_pe"].to_numpy()
            counts = pairs["messages"].to_numpy()
            out[t] = {
                "buffers": int(counts.sum()),
                "bytes": int(pairs["bytes"].to_numpy().sum()),
                "links": int(np.count_nonzero(counts)),
                "self_buffers": int(counts[diagonal].sum()),
                "max_buffer_bytes": self.max_buffer_bytes[t],
            }
        return out


class PhysicalAccumulator:
    """Sums per-type matrices chunk by chunk; the result does not depend on chunking."""

    def __init__(self, num_pes: int | None = None) -> None:
        self._acc = {t: CommAccumulator(num_pes) for t in SEND_TYPES}
        self._max = dict.fromkeys(SEND_TYPES, 0)
        self.lines = 0

    def add(self, frame: pd.DataFrame) -> None:
        """Add one chunk with the physical columns (not modified)."""
        if not len(frame):
            return
        codes = frame["send_type"].cat.codes.to_numpy()
        src = frame["src_pe"].to_numpy()
        dst = frame["dst_pe"].to_numpy()
        size = frame["buffer_bytes"].to_numpy()
        for code, send_type in enumerate(SEND_TYPES):
            mask = codes == code
            if not mask.any():
                continue
            unknown = np.full(int(mask.sum()), _UNKNOWN_NODE, dtype=np.int64)
            self._acc[send_type].add(
                pd.DataFrame(
                    {
                        "src_node": unknown,
                        "src_pe": src[mask],
                        "dst_node": unknown,
                        "dst_pe": dst[mask],
                        "msg_bytes": size[mask],
                    }
                )
            )
            self._max[send_type] = max(self._max[send_type], int(size[mask].max()))
        self.lines += len(frame)

    def add_partial(self, part: PhysicalPartial) -> None:
        """Add the sums of a part of the trace (the physical map step's output)."""
        for code, (send_type, cells) in enumerate(part.comm_partials().items()):
            if cells.messages:
                self._acc[send_type].add_partial(cells)
                self._max[send_type] = max(self._max[send_type], int(part.max_bytes[code]))
        self.lines += part.lines

    def result(
        self, num_pes: int | None = None, *, pes_per_node: int | None = None
    ) -> PhysicalMatrices:
        """The matrices, all of one size: ``num_pes``, or the largest PE id + 1."""
        # the size CommAccumulator.result gives each type, without building its pairs twice
        size = max(
            max(num_pes if num_pes is not None else (acc.num_pes or 0), acc.max_pe + 1)
            for acc in self._acc.values()
        )
        nodes = pe_node_map(size, pes_per_node)
        by_type = {
            t: dataclasses.replace(acc.result(size), pe_node=nodes.copy())
            for t, acc in self._acc.items()
        }
        return PhysicalMatrices(
            by_type=by_type,
            pes_per_node=pes_per_node,
            lines=self.lines,
            max_buffer_bytes=dict(self._max),
        )


def physical_matrices(
    data: pd.DataFrame | Iterable[pd.DataFrame],
    *,
    num_pes: int | None = None,
    pes_per_node: int | None = None,
) -> PhysicalMatrices:
    """Per send type buffer and byte matrices of a physical trace, in one pass.

    Parameters
    ----------
    data
        A physical frame or an iterable of chunks (:func:`iter_physical`).
    num_pes
        Size of the matrices; None: the largest PE id + 1.
    pes_per_node
        K of ``node = pe // K`` (fills ``pe_node``); None: nodes unknown.

    Returns
    -------
    PhysicalMatrices

    Examples
    --------
    >>> import pandas as pd
    >>> from actorprof.schema import SEND_TYPE_DTYPE
    >>> df = pd.DataFrame({"send_type": pd.Categorical(["local_send", "nonblock_send"],
    ...                                                dtype=SEND_TYPE_DTYPE),
    ...                    "buffer_bytes": [64, 128], "src_pe": [0, 1], "dst_pe": [1, 1]})
    >>> physical_matrices(df).buffers("nonblock_send").loc[1, 1]
    np.int64(1)
    """
    acc = PhysicalAccumulator(num_pes)
    for frame in [data] if isinstance(data, pd.DataFrame) else data:
        acc.add(frame)
    return acc.result(num_pes, pes_per_node=pes_per_node)


def physical_pe_totals(mats: PhysicalMatrices) -> pd.DataFrame:
    """Per-PE table (:data:`actorprof.schema.PHYSICAL_PE_TABLE_COLUMNS`), index ``pe``.

    ``buffers_*`` count local_send + nonblock_send calls; ``bytes_*`` sum all
    three types; ``self_buffers`` are buffers a PE sent to itself (self hops).
    """
    per_type = {t: pe_totals(mats.by_type[t]) for t in SEND_TYPES}
    zero = np.zeros(mats.num_pes, dtype=np.int64)

    def total(column: str, types: tuple[str, ...]) -> np.ndarray:
        return sum((per_type[t][column].to_numpy() for t in types), zero)

    table = pd.DataFrame(
        {
            "node": mats.pe_node.to_numpy(),
            "buffers_sent": total("sent", BUFFER_SEND_TYPES),
            "buffers_received": total("received", BUFFER_SEND_TYPES),
            "bytes_sent": total("bytes_sent", SEND_TYPES),
            "bytes_received": total("bytes_received", SEND_TYPES),
            "self_buffers": total("self_sends", BUFFER_SEND_TYPES),
        },
        index=pd.RangeIndex(mats.num_pes, name="pe"),
    )
    for send_type in SEND_TYPES:
        per = per_type[send_type]
        table[f"{send_type}_buffers_sent"] = per["sent"].to_numpy()
        table[f"{send_type}_buffers_received"] = per["received"].to_numpy()
        table[f"{send_type}_bytes_sent"] = per["bytes_sent"].to_numpy()
        table[f"{send_type}_bytes_received"] = per["bytes_received"].to_numpy()
    return table[list(PHYSICAL_PE_TABLE_COLUMNS[1:])]


def physical_pairs(mats: PhysicalMatrices) -> pd.DataFrame:
    """Every non-zero link of every send type, long: ``send_type`` (categorical,
    :data:`~actorprof.schema.SEND_TYPE_DTYPE`), ``src_pe``, ``dst_pe``,
    ``buffers``, ``bytes`` (types in :data:`SEND_TYPES` order, then source and
    destination). The exact data at any PE count."""
    return pd.concat(list(physical_pairs_parts(mats)), ignore_index=True)


def physical_pairs_parts(mats: PhysicalMatrices) -> Iterator[pd.DataFrame]:
    """:func:`physical_pairs` a send type at a time (its rows, in its order):
    a table written as it is made, never held whole beside the matrices."""
    for t in SEND_TYPES:
        pairs = mats.pairs(t)
        codes = np.full(len(pairs), SEND_TYPE_DTYPE.categories.get_loc(t), dtype=np.int8)
        kind = pd.Categorical.from_codes(codes, dtype=SEND_TYPE_DTYPE)
        yield pairs.assign(send_type=kind)[["send_type", *pairs.columns]]


def physical_node_matrices(
    mats: PhysicalMatrices,
) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """Node x node (buffers, bytes) per send type, summed from the links.

    Raises
    ------
    ValueError
        ``mats`` has no ``pes_per_node``, or more than
        :data:`~actorprof.analyze.matrix.DENSE_MAX_PES` nodes.
    """
    if mats.pes_per_node is None:
        raise ValueError("node matrices need pes_per_node")
    nodes = -(-mats.num_pes // mats.pes_per_node)
    if nodes > DENSE_MAX_PES:
        raise ValueError(
            f"{nodes:,} nodes is too many for dense node x node matrices "
            f"(at most {DENSE_MAX_PES:,}); use the links table"
        )
    return {
        t: (
            node_pairs_matrix(m.pairs, m.pe_node, "messages"),
            node_pairs_matrix(m.pairs, m.pe_node, "bytes"),
        )
        for t, m in mats.by_type.items()
    }


@dataclass(frozen=True)
class MeshFit:
    """Whether a physical trace fits a 2D mesh of ``pes_per_node`` PEs per node.

    ``violations[send_type]`` counts the calls (``buffers``) and PE pairs
    (``links``) that break :data:`MESH_RULE`.
    """

    pes_per_node: int
    num_nodes: int
    violations: dict[str, dict[str, int]]
    rule: str = MESH_RULE

    @property
    def fits(self) -> bool:
        return not any(v["buffers"] for v in self.violations.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "pes_per_node": self.pes_per_node,
            "num_nodes": self.num_nodes,
            "fits": self.fits,
            "violations": {t: dict(v) for t, v in self.violations.items()},
            "rule": self.rule,
        }


def mesh_fit(mats: PhysicalMatrices, *, pes_per_node: int) -> MeshFit:
    """Check the trace against a Conveyors 2D mesh with ``pes_per_node`` = K.

    In a 2D mesh a PE sends along its row (its own node) with local_send and
    along its column (same position ``pe % K`` on another node) with
    nonblock_send; a hop from a PE to itself is allowed for both.

    Raises
    ------
    ValueError
        ``pes_per_node < 1``.

    Examples
    --------
    >>> mesh_fit(mats, pes_per_node=4).fits  # doctest: +SKIP
    True
    """
    if pes_per_node < 1:
        raise ValueError(f"pes_per_node must be at least 1, got {pes_per_node}")
    n = mats.num_pes
    k = pes_per_node
    violations = {}
    for send_type in SEND_TYPES:
        pairs = mats.by_type[send_type].pairs
        src = pairs["src_pe"].to_numpy()
        dst = pairs["dst_pe"].to_numpy()
        # local_send: along the row (same node); the others: along the column
        bad = src // k != dst // k if send_type == "local_send" else src % k != dst % k
        violations[send_type] = {
            "buffers": int(pairs["messages"].to_numpy()[bad].sum()),
            "links": int(np.count_nonzero(bad)),
        }
    return MeshFit(pes_per_node=k, num_nodes=-(-n // k) if n else 0, violations=violations)


def fitting_pes_per_node(mats: PhysicalMatrices) -> list[int]:
    """The divisors K of the PE count for which the trace fits a 2D mesh
    (:func:`mesh_fit`).

    Along the column (nonblock_send, nonblock_progress) a link fits K when K
    divides ``dst - src``: every such link fits the divisors of the gcd of
    their differences, found in one pass. Only those K are checked along
    the row (local_send), link by link (65,536 PEs, 17 divisors: a pass over
    every link per divisor and send type took half a second).
    """
    n = mats.num_pes
    divisors = np.flatnonzero(n % np.arange(1, n + 1) == 0) + 1 if n else np.zeros(0, int)
    gap = 0  # the gcd of the column links' differences (0: none, every K fits)
    rows = []
    for send_type in SEND_TYPES:
        pairs = mats.by_type[send_type].pairs
        used = pairs["messages"].to_numpy() > 0  # a link of no call breaks nothing
        src = pairs["src_pe"].to_numpy(dtype=np.int64)[used]
        dst = pairs["dst_pe"].to_numpy(dtype=np.int64)[used]
        if send_type == "local_send":
            rows.append((src, dst))
        elif len(src):
            gap = int(np.gcd.reduce(np.abs(dst - src), initial=gap))
    fitting = []
    for k in divisors.tolist():
        if gap % k == 0 and all(_in_rows(src, dst, k) for src, dst in rows):
            fitting.append(int(k))
    return fitting


def _in_rows(src: np.ndarray, dst: np.ndarray, k: int) -> bool:
    """Whether every link ``src -> dst`` stays on its node (of ``k`` PEs);
    the first links first (a K that does not fit mostly fails there)."""
    head = slice(0, 4096)
    if (src[head] // k != dst[head] // k).any():
        return False
    return not bool((src // k != dst // k).any())

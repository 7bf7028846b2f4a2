"""Logical vs physical: what the program asked for and what the network carried.

Routing model (Conveyors; docs/aggregation.md has a worked example). With
``K`` PEs per node, ``node(p) = p // K`` and a PE's position in its node is
``p % K``:

- one node, or no K (1D): a message from ``s`` to ``d`` goes straight,
  one local_send hop ``s -> d``;
- 2D mesh (several nodes): two hops. Hop 1, local_send, along the row:
  ``s -> m`` with ``m = node(s) * K + d % K``, the PE of the sender's node in
  the destination's column; hop 2, nonblock_send, down the column:
  ``m -> d``. Either hop may be a PE to itself (``m == s`` when ``s`` and
  ``d`` share a position, ``m == d`` when they share a node).

Routing every logical message this way gives, per link and send type, the
messages the buffers seen on that link must have carried. Everything is
computed on PE x PE matrices (numpy, no per-message loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..schema import (
    AGGREGATION_LINK_COLUMNS,
    AGGREGATION_PE_TABLE_COLUMNS,
    BUFFER_SEND_TYPES,
    SEND_TYPE_DTYPE,
    SEND_TYPES,
)
from .physical import PhysicalMatrices

__all__ = [
    "LINK_STATUSES",
    "LinkExplanation",
    "Routes",
    "aggregation_factor",
    "aggregation_pe_table",
    "explain_links",
    "link_table",
    "pad_matrix",
    "route_messages",
]

Topology = Literal["1d", "2d"]
#: ``status`` of a row of :func:`link_table`.
LINK_STATUSES = ("explained", "unexplained", "no buffers")
#: The routed hop whose links each send type uses (progress completes hop 2).
HOP_OF = {
    "local_send": "local_send",
    "nonblock_send": "nonblock_send",
    "nonblock_progress": "nonblock_send",
}
_STATUS_DTYPE = pd.CategoricalDtype(list(LINK_STATUSES))
_LISTED = 20


def pad_matrix(matrix: pd.DataFrame, num_pes: int) -> pd.DataFrame:
    """``matrix`` grown with zero rows/columns to ``num_pes`` x ``num_pes`` (never cut)."""
    n = max(num_pes, *matrix.shape)
    if matrix.shape == (n, n):
        return matrix
    index = pd.RangeIndex(n, name=matrix.index.name)
    columns = pd.RangeIndex(n, name=matrix.columns.name)
    return matrix.reindex(index=index, columns=columns, fill_value=0)


@dataclass(frozen=True)
class Routes:
    """Logical messages routed over the Conveyors topology.

    ``messages[t]`` and ``payload_bytes[t]`` (``t`` in local_send,
    nonblock_send) are N x N frames (index ``src_pe``, columns ``dst_pe``):
    the messages (and the sum of their ``msg_bytes``) crossing each link in
    that hop. In 1D ``nonblock_send`` is all zeros.
    """

    topology: Topology
    pes_per_node: int | None
    messages: dict[str, pd.DataFrame]
    payload_bytes: dict[str, pd.DataFrame]

    @property
    def num_pes(self) -> int:
        return len(self.messages["local_send"])

    def items_sent(self) -> np.ndarray:
        """Routed items each PE put into buffers, all hops (length N)."""
        return sum(
            (self.messages[t].to_numpy().sum(axis=1) for t in BUFFER_SEND_TYPES),
            start=np.zeros(self.num_pes, dtype=np.int64),
        )


def route_messages(
    counts: pd.DataFrame,
    *,
    payload_bytes: pd.DataFrame | None = None,
    pes_per_node: int | None = None,
) -> Routes:
    """Route a logical message matrix over a 1D (one node) or 2D mesh.

    Parameters
    ----------
    counts
        N x N logical message counts (index source PE, columns destination).
    payload_bytes
        The matching N x N sums of ``msg_bytes``; None: zeros.
    pes_per_node
        K. None, or K >= N (one node): 1D, every message goes straight.

    Returns
    -------
    Routes

    Raises
    ------
    ValueError
        ``counts`` is not square, ``pes_per_node < 1``, or N is not a
        multiple of K in 2D (a partial node has no full column to route to).

    Examples
    --------
    >>> import pandas as pd
    >>> m = pd.DataFrame(0, index=range(4), columns=range(4))
    >>> m.loc[0, 3] = 5                       # 2 nodes of 2: 0 -> 1 -> 3
    >>> r = route_messages(m, pes_per_node=2)
    >>> int(r.messages["local_send"].loc[0, 1]), int(r.messages["nonblock_send"].loc[1, 3])
    (5, 5)
    """
    values = counts.to_numpy(dtype=np.int64)
    n = values.shape[0]
    if values.ndim != 2 or values.shape != (n, n):
        raise ValueError(f"counts must be square, got shape {values.shape}")
    sizes = (
        np.zeros_like(values)
        if payload_bytes is None
        else pad_matrix(payload_bytes, n).to_numpy(dtype=np.int64)
    )
    if pes_per_node is not None and pes_per_node < 1:
        raise ValueError(f"pes_per_node must be at least 1, got {pes_per_node}")
    index = pd.RangeIndex(n, name="src_pe")
    columns = pd.RangeIndex(n, name="dst_pe")

    def frame(a: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(a, index=index, columns=columns)

    if pes_per_node is None or pes_per_node >= n:
        zeros = np.zeros((n, n), dtype=np.int64)
        return Routes(
            topology="1d",
            pes_per_node=pes_per_node,
            messages={"local_send": frame(values.copy()), "nonblock_send": frame(zeros)},
            payload_bytes={"local_send": frame(sizes.copy()), "nonblock_send": frame(zeros.copy())},
        )
    k = pes_per_node
    if n % k:
        raise ValueError(
            f"a 2D mesh of {k} PEs per node needs a PE count that is a multiple of {k}, got {n}"
        )
    src, dst = np.nonzero(values)
    mid = (src // k) * k + dst % k  # the sender's node, the destination's column
    hop1 = np.zeros((n, n), dtype=np.int64)
    hop2 = np.zeros((n, n), dtype=np.int64)
    bytes1 = np.zeros((n, n), dtype=np.int64)
    bytes2 = np.zeros((n, n), dtype=np.int64)
    np.add.at(hop1, (src, mid), values[src, dst])
    np.add.at(hop2, (mid, dst), values[src, dst])
    np.add.at(bytes1, (src, mid), sizes[src, dst])
    np.add.at(bytes2, (mid, dst), sizes[src, dst])
    return Routes(
        topology="2d",
        pes_per_node=k,
        messages={"local_send": frame(hop1), "nonblock_send": frame(hop2)},
        payload_bytes={"local_send": frame(bytes1), "nonblock_send": frame(bytes2)},
    )


def link_table(physical: PhysicalMatrices, routes: Routes) -> pd.DataFrame:
    """Buffers seen beside messages routed, per (send type, link).

    One row per link with buffers of that type, and per local_send /
    nonblock_send link that routed messages use although it carries no
    buffer. ``status``: ``explained`` (buffers and routed messages),
    ``unexplained`` (buffers that no route explains), ``no buffers`` (routed
    messages but no buffer seen). nonblock_progress rows are compared with
    the nonblock_send routes (a progress call completes that hop) and only
    listed where calls were seen. Columns
    :data:`actorprof.schema.AGGREGATION_LINK_COLUMNS`; ``messages_per_buffer``
    is NaN without buffers.
    """
    n = max(physical.num_pes, routes.num_pes)
    parts = []
    for code, send_type in enumerate(SEND_TYPES):
        buffers = pad_matrix(physical.buffers(send_type), n).to_numpy()
        nbytes = pad_matrix(physical.bytes(send_type), n).to_numpy()
        hop = HOP_OF[send_type]
        routed = pad_matrix(routes.messages[hop], n).to_numpy()
        payload = pad_matrix(routes.payload_bytes[hop], n).to_numpy()
        shown = buffers > 0
        if send_type in BUFFER_SEND_TYPES:
            shown |= routed > 0
        src, dst = np.nonzero(shown)
        b = buffers[src, dst]
        r = routed[src, dst]
        status = np.where(b > 0, np.where(r > 0, 0, 1), 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_buffer = np.where(b > 0, r / np.maximum(b, 1), np.nan)
        parts.append(
            pd.DataFrame(
                {
                    "send_type": pd.Categorical.from_codes(
                        np.full(src.size, code, dtype=np.int8), dtype=SEND_TYPE_DTYPE
                    ),
                    "src_pe": src.astype(np.int32),
                    "dst_pe": dst.astype(np.int32),
                    "buffers": b.astype(np.int64),
                    "buffer_bytes": nbytes[src, dst].astype(np.int64),
                    "routed_messages": r.astype(np.int64),
                    "routed_payload_bytes": payload[src, dst].astype(np.int64),
                    "messages_per_buffer": per_buffer,
                    "status": pd.Categorical.from_codes(
                        status.astype(np.int8), dtype=_STATUS_DTYPE
                    ),
                }
            )
        )
    table = pd.concat(parts, ignore_index=True)
    return table[list(AGGREGATION_LINK_COLUMNS)]


@dataclass(frozen=True)
class LinkExplanation:
    """Whether the routed logical messages explain the links of the physical trace.

    Attributes
    ----------
    by_type
        Per send type: ``links_seen`` (links with buffers), ``links_explained``
        (of those, links a route uses), ``links_unexplained``,
        ``buffers_unexplained``, ``routed_links`` and
        ``routed_links_without_buffers``, ``payload_exceeds_bytes`` (links
        whose routed payload is larger than the bytes their buffers carried).
    unexplained, without_buffers, payload_exceeds_bytes
        The first 20 such links, as dicts (``*_total`` give the counts).
    """

    by_type: dict[str, dict[str, int]]
    unexplained: list[dict[str, Any]] = field(default_factory=list)
    without_buffers: list[dict[str, Any]] = field(default_factory=list)
    payload_exceeds_bytes: list[dict[str, Any]] = field(default_factory=list)

    def _sum(self, key: str, types: tuple[str, ...] = BUFFER_SEND_TYPES) -> int:
        return sum(self.by_type[t][key] for t in types)

    @property
    def links_seen(self) -> int:
        """Links (local_send and nonblock_send) that carry buffers."""
        return self._sum("links_seen")

    @property
    def links_explained(self) -> int:
        return self._sum("links_explained")

    @property
    def all_explained(self) -> bool:
        """Every link with calls of any type is on a route."""
        return self._sum("links_unexplained", SEND_TYPES) == 0

    def reasons(self) -> list[str]:
        """Why these traces cannot come from one run (empty: consistent)."""
        out = []
        unexplained = self._sum("links_unexplained", SEND_TYPES)
        if unexplained:
            out.append(
                f"{unexplained} link(s) carry calls ({self._sum('buffers_unexplained', SEND_TYPES)}"
                " in all) that no routed logical message explains"
            )
        missing = self._sum("routed_links_without_buffers")
        if missing:
            out.append(
                f"{missing} link(s) have routed messages but no buffer in the physical trace"
            )
        exceeding = self._sum("payload_exceeds_bytes")
        if exceeding:
            out.append(
                f"on {exceeding} link(s) the routed payload exceeds the bytes the buffers carried"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "links_seen": self.links_seen,
            "links_explained": self.links_explained,
            "all_explained": self.all_explained,
            "by_type": {t: dict(v) for t, v in self.by_type.items()},
            "unexplained_total": self._sum("links_unexplained", SEND_TYPES),
            "unexplained": list(self.unexplained),
            "without_buffers_total": self._sum("routed_links_without_buffers"),
            "without_buffers": list(self.without_buffers),
            "payload_exceeds_bytes_total": self._sum("payload_exceeds_bytes"),
            "payload_exceeds_bytes": list(self.payload_exceeds_bytes),
        }


def explain_links(links: pd.DataFrame) -> LinkExplanation:
    """Summarise a :func:`link_table`: which links the routes explain."""
    by_type: dict[str, dict[str, int]] = {}
    types = links["send_type"].astype(str).to_numpy()
    status = links["status"].astype(str).to_numpy()
    seen = links["buffers"].to_numpy() > 0
    routed = links["routed_messages"].to_numpy() > 0
    # progress calls carry no payload: only buffers must hold what was routed
    exceeds = (
        seen
        & np.isin(types, BUFFER_SEND_TYPES)
        & (links["routed_payload_bytes"].to_numpy() > links["buffer_bytes"].to_numpy())
    )
    for send_type in SEND_TYPES:
        mine = types == send_type
        by_type[send_type] = {
            "links_seen": int((mine & seen).sum()),
            "links_explained": int((mine & (status == "explained")).sum()),
            "links_unexplained": int((mine & (status == "unexplained")).sum()),
            "buffers_unexplained": int(
                links["buffers"].to_numpy()[mine & (status == "unexplained")].sum()
            ),
            "routed_links": int((mine & routed).sum()) if send_type in BUFFER_SEND_TYPES else 0,
            "routed_links_without_buffers": int((mine & (status == "no buffers")).sum()),
            "payload_exceeds_bytes": int((mine & exceeds).sum()),
        }

    def first(mask: np.ndarray) -> list[dict[str, Any]]:
        rows = links[mask].head(_LISTED)
        numbers = [
            "src_pe",
            "dst_pe",
            "buffers",
            "buffer_bytes",
            "routed_messages",
            "routed_payload_bytes",
        ]
        values = rows[numbers].to_numpy(dtype=np.int64).tolist()
        return [
            {"send_type": str(t), **dict(zip(numbers, row, strict=True))}
            for t, row in zip(rows["send_type"].astype(str), values, strict=True)
        ]

    return LinkExplanation(
        by_type=by_type,
        unexplained=first(status == "unexplained"),
        without_buffers=first(status == "no buffers"),
        payload_exceeds_bytes=first(exceeds),
    )


def aggregation_pe_table(
    logical_pes: pd.DataFrame, physical: PhysicalMatrices, routes: Routes
) -> pd.DataFrame:
    """Per PE: messages sent vs buffers and bytes put on the wire.

    Parameters
    ----------
    logical_pes
        The logical per-PE table (:func:`pe_totals`: ``node``, ``sent``,
        ``bytes_sent``), index ``pe``.
    physical, routes
        The physical matrices and the routed logical messages.

    Returns
    -------
    pandas.DataFrame
        Index ``pe``; columns :data:`actorprof.schema.AGGREGATION_PE_TABLE_COLUMNS`:
        ``messages_per_buffer`` = messages sent / buffers sent (the
        aggregation factor; in 2D a message takes two buffers, one per hop),
        ``items_per_buffer`` = routed items (all hops) / buffers,
        ``avg_buffer_bytes`` = wire bytes / buffers, ``avg_buffer_fill`` =
        that over the largest buffer of the trace (the buffer capacity as
        seen), ``wire_over_payload`` = wire bytes / logical payload bytes.
        Ratios are NaN where the denominator is 0.
    """
    n = max(physical.num_pes, routes.num_pes, len(logical_pes))
    index = pd.RangeIndex(n, name="pe")
    logical = logical_pes.reindex(index)
    buffers = pad_matrix(physical.buffers(), n).to_numpy().sum(axis=1)
    wire = pad_matrix(physical.bytes(), n).to_numpy().sum(axis=1)
    items = np.zeros(n, dtype=np.int64)
    items[: routes.num_pes] = routes.items_sent()
    messages = logical["sent"].fillna(0).to_numpy(dtype=np.int64)
    payload = logical["bytes_sent"].fillna(0).to_numpy(dtype=np.int64)
    if physical.pes_per_node:
        node = np.arange(n) // physical.pes_per_node
    else:
        node = logical["node"].fillna(-1).to_numpy(dtype=np.int64)
    capacity = max(physical.max_buffer_bytes[t] for t in BUFFER_SEND_TYPES)
    avg = _ratio(wire, buffers)
    table = pd.DataFrame(
        {
            "node": node,
            "messages_sent": messages,
            "payload_bytes_sent": payload,
            "routed_items_sent": items,
            "buffers_sent": buffers,
            "wire_bytes_sent": wire,
            "messages_per_buffer": _ratio(messages, buffers),
            "items_per_buffer": _ratio(items, buffers),
            "avg_buffer_bytes": avg,
            "avg_buffer_fill": avg / capacity if capacity else np.full(n, np.nan),
            "wire_over_payload": _ratio(wire, payload),
        },
        index=index,
    )
    return table[list(AGGREGATION_PE_TABLE_COLUMNS[1:])]


def aggregation_factor(physical: PhysicalMatrices, routes: Routes) -> pd.DataFrame:
    """Routed messages per buffer on each link (local_send + nonblock_send).

    N x N (index ``src_pe``, columns ``dst_pe``), NaN where no buffer was
    seen. In 1D this is logical messages per buffer between each pair.
    """
    n = max(physical.num_pes, routes.num_pes)
    buffers = pad_matrix(physical.buffers(), n).to_numpy()
    routed = sum(
        (pad_matrix(routes.messages[t], n).to_numpy() for t in BUFFER_SEND_TYPES),
        start=np.zeros((n, n), dtype=np.int64),
    )
    return pd.DataFrame(
        _ratio(routed, buffers),
        index=pd.RangeIndex(n, name="src_pe"),
        columns=pd.RangeIndex(n, name="dst_pe"),
    )


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(top), np.nan)
    np.divide(top, bottom, out=out, where=np.asarray(bottom) > 0)
    return out

"""Logical vs physical, per PE and per link, from the Conveyors model's comparison.

The routing, packets and buffers are :mod:`actorprof.analyze.conveyors`
(every topology Conveyors builds: 1D, 2D matrix, 3D tensor). This module
turns its link comparison (:func:`~actorprof.analyze.conveyors.compare_run`)
into what ``actorprof aggregation`` shows: the per-PE table, the links with
the prediction error, routed items per buffer on each link, and the actual
figures of a run beside the predicted node layouts. Everything works on the
links and pairs that carry data (no N x N array except the small heatmap).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..schema import AGGREGATION_LINK_COLUMNS, AGGREGATION_PE_TABLE_COLUMNS, BUFFER_SEND_TYPES
from .conveyors.model import BUFFER_ALIGN_BYTES, BUFFER_HEADER_BYTES, CONVEY_BUFFER_SIZE
from .matrix import DENSE_MAX_PES, int_bincount

__all__ = [
    "PE_LINK_COLUMNS",
    "actual_layout",
    "aggregation_factor",
    "aggregation_links",
    "aggregation_pe_table",
    "aggregation_pe_table_of",
    "buffer_room_bytes",
    "pe_link_sums",
]


def buffer_room_bytes(buffer_bytes: int = CONVEY_BUFFER_SIZE) -> int:
    """Bytes of packets one buffer holds: ``16 + buffer_bytes`` rounded up to 64, less 16.

    The room behind the 16-byte header (``porter_setup``): 10,032 B for the
    default capacity of 10,000 B, so a full buffer is at most 10,048 B.

    Examples
    --------
    >>> buffer_room_bytes(10_000)
    10032
    """
    if buffer_bytes < 1:
        raise ValueError(f"buffer_bytes must be at least 1, got {buffer_bytes}")
    stride = -(-(BUFFER_HEADER_BYTES + buffer_bytes) // BUFFER_ALIGN_BYTES) * BUFFER_ALIGN_BYTES
    return stride - BUFFER_HEADER_BYTES


def aggregation_links(links: pd.DataFrame) -> pd.DataFrame:
    """The compared links (:data:`~actorprof.analyze.conveyors.CHECK_COLUMNS`) with the error.

    Adds ``items_error`` (items decoded from the buffer sizes minus items
    routed; empty where the sizes cannot be decoded) and
    ``wire_bytes_error`` (wire bytes seen minus the predicted bytes of the
    fewest buffers: the extra headers of early partial buffers and the
    rounding). Columns :data:`actorprof.schema.AGGREGATION_LINK_COLUMNS`;
    ``links`` is not modified.
    """
    # a shallow copy: the columns are shared with ``links`` (copy on write), so
    # the two tables cost one table and two columns, not two tables
    out = links.copy(deep=False)
    seen = out["items_seen"].to_numpy()
    error = seen - out["items"].to_numpy()
    out["items_error"] = pd.arrays.IntegerArray(error, seen < 0)
    out["wire_bytes_error"] = out["wire_bytes"].to_numpy() - out["predicted_wire_bytes"].to_numpy()
    return out[list(AGGREGATION_LINK_COLUMNS)]


def aggregation_pe_table(
    logical_pes: pd.DataFrame,
    links: pd.DataFrame,
    *,
    num_pes: int,
    pes_per_node: int | None = None,
    buffer_bytes: int = CONVEY_BUFFER_SIZE,
) -> pd.DataFrame:
    """Per PE: messages asked for beside buffers and bytes put on the wire.

    Parameters
    ----------
    logical_pes
        The logical per-PE table (``node``, ``sent``, ``bytes_sent``), index ``pe``.
    links
        The compared links (:func:`~actorprof.analyze.conveyors.compare_links`).
    num_pes
        N (rows ``0..N-1``).
    pes_per_node
        K: ``node = pe // K``; None: the logical node ids.
    buffer_bytes
        Buffer capacity (Conveyors' ``CONVEY_BUFFER_SIZE``).

    Returns
    -------
    pandas.DataFrame
        Index ``pe``; columns :data:`actorprof.schema.AGGREGATION_PE_TABLE_COLUMNS`.
        ``buffers_sent`` counts non-empty local_send + nonblock_send buffers,
        ``empty_buffers_sent`` the 0-byte flushes; ``wire_bytes_sent`` all
        their bytes; ``predicted_wire_bytes_sent`` the model's bytes at the
        fewest buffers; ``messages_per_buffer`` = messages / buffers (a
        message takes one buffer per hop); ``items_per_buffer`` = routed
        items (all hops) / buffers; ``avg_buffer_fill`` = packet bytes per
        buffer (wire less the 16-byte header) over the room of a buffer
        (:func:`buffer_room_bytes`). Ratios are NaN where the denominator is 0.
    """
    return aggregation_pe_table_of(
        logical_pes,
        pe_link_sums(links, num_pes),
        num_pes=num_pes,
        pes_per_node=pes_per_node,
        buffer_bytes=buffer_bytes,
    )


#: The link columns summed per sending PE (local_send + nonblock_send).
PE_LINK_COLUMNS = ("buffers", "wire_bytes", "items", "empty_buffers", "predicted_wire_bytes")


def pe_link_sums(links: pd.DataFrame, num_pes: int) -> dict[str, np.ndarray]:
    """:data:`PE_LINK_COLUMNS` of the buffer send types' links summed per source PE.

    Sums of several blocks of links add up to the sums of the table (see
    :func:`aggregation_pe_table_of`).
    """
    # the rows of buffer send types, by mask (no copy of the link table)
    rows = _buffer_rows(links)
    src = links["src_pe"].to_numpy()[rows].astype(np.int64)
    return {
        c: int_bincount(src, links[c].to_numpy(dtype=np.int64)[rows], num_pes)
        for c in PE_LINK_COLUMNS
    }


def aggregation_pe_table_of(
    logical_pes: pd.DataFrame,
    sums: dict[str, np.ndarray],
    *,
    num_pes: int,
    pes_per_node: int | None = None,
    buffer_bytes: int = CONVEY_BUFFER_SIZE,
) -> pd.DataFrame:
    """:func:`aggregation_pe_table` from the links' :func:`pe_link_sums`."""
    index = pd.RangeIndex(num_pes, name="pe")
    logical = logical_pes.reindex(index)

    def per_pe(column: str) -> np.ndarray:
        return sums[column]

    buffers = per_pe("buffers")
    wire = per_pe("wire_bytes")
    items = per_pe("items")
    messages = logical["sent"].fillna(0).to_numpy(dtype=np.int64)
    payload = logical["bytes_sent"].fillna(0).to_numpy(dtype=np.int64)
    if pes_per_node:
        node = np.arange(num_pes) // pes_per_node
    else:
        node = logical["node"].fillna(-1).to_numpy(dtype=np.int64)
    packed = wire - BUFFER_HEADER_BYTES * buffers
    table = pd.DataFrame(
        {
            "node": node,
            "messages_sent": messages,
            "payload_bytes_sent": payload,
            "routed_items_sent": items,
            "buffers_sent": buffers,
            "empty_buffers_sent": per_pe("empty_buffers"),
            "wire_bytes_sent": wire,
            "predicted_wire_bytes_sent": per_pe("predicted_wire_bytes"),
            "messages_per_buffer": _ratio(messages, buffers),
            "items_per_buffer": _ratio(items, buffers),
            "avg_buffer_bytes": _ratio(wire, buffers),
            "avg_buffer_fill": _ratio(packed, buffers * buffer_room_bytes(buffer_bytes)),
            "wire_over_payload": _ratio(wire, payload),
        },
        index=index,
    )
    return table[list(AGGREGATION_PE_TABLE_COLUMNS[1:])]


def aggregation_factor(links: pd.DataFrame, num_pes: int) -> pd.DataFrame:
    """Routed items per non-empty buffer on each link (local_send + nonblock_send).

    N x N (index ``src_pe``, columns ``dst_pe``), NaN where no buffer went.

    Raises
    ------
    ValueError
        Beyond :data:`~actorprof.analyze.matrix.DENSE_MAX_PES` PEs (the
        per-link table is the data then).
    """
    if num_pes > DENSE_MAX_PES:
        raise ValueError(f"no dense link matrix beyond {DENSE_MAX_PES:,} PEs, got {num_pes:,}")
    data = links[_buffer_rows(links)]
    cell = data["src_pe"].to_numpy(dtype=np.int64) * num_pes + data["dst_pe"].to_numpy(np.int64)
    size = num_pes * num_pes
    items = int_bincount(cell, data["items"].to_numpy(dtype=np.int64), size)
    buffers = int_bincount(cell, data["buffers"].to_numpy(dtype=np.int64), size)
    return pd.DataFrame(
        _ratio(items, buffers).reshape(num_pes, num_pes),
        index=pd.RangeIndex(num_pes, name="src_pe"),
        columns=pd.RangeIndex(num_pes, name="dst_pe"),
    )


def actual_layout(buffers: pd.DataFrame, pes_per_node: int) -> dict[str, Any]:
    """What a physical trace shows in the terms of a layout prediction.

    ``buffers`` is :func:`~actorprof.analyze.conveyors.physical_buffers`;
    returns ``wire_bytes`` and ``inter_node_bytes`` (local_send +
    nonblock_send, ``node = pe // pes_per_node``) and ``buffers`` (non-empty).
    """
    rows = _buffer_rows(buffers)
    size = buffers["buffer_bytes"].to_numpy(dtype=np.int64)[rows]
    calls = buffers["calls"].to_numpy(dtype=np.int64)[rows]
    wire = size * calls
    src, dst = (buffers[c].to_numpy()[rows] for c in ("src_pe", "dst_pe"))
    apart = src // pes_per_node != dst // pes_per_node
    return {
        "wire_bytes": int(wire.sum()),
        "inter_node_bytes": int(wire[apart].sum()),
        "buffers": int(calls[size > 0].sum()),
    }


def _buffer_rows(frame: pd.DataFrame) -> np.ndarray:
    """Which rows of a frame with ``send_type`` are of :data:`BUFFER_SEND_TYPES`."""
    types = frame["send_type"]
    if isinstance(types.dtype, pd.CategoricalDtype):
        wanted = [i for i, c in enumerate(types.cat.categories) if c in BUFFER_SEND_TYPES]
        return np.isin(types.cat.codes.to_numpy(), wanted)
    return np.asarray(types.astype(str).isin(BUFFER_SEND_TYPES).to_numpy())


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(top), np.nan)
    np.divide(top, bottom, out=out, where=np.asarray(bottom) > 0)
    return out

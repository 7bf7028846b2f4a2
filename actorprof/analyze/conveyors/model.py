"""The Conveyors model: topology, routes and buffers, from sparse PE pairs.

What Conveyors (bale's conveyor library, ``src/bale_classic/convey`` in
github.com/jdevinney/bale; HClib-Actor's mailboxes call
``convey_new(SIZE_MAX, 0, NULL, 0)``) builds and sends, as implemented here
(docs/aggregation.md has the worked examples):

- **Local group** ``n`` (``convey_procs_per_node``, common.c):
  ``CONVEY_NLOCAL`` if it divides the PE count N, else the PEs sharing a
  host name when that divides N, else 1.
- **Order** (``convey_parameters``, convey.c): ``1 < n < N`` gives order 2,
  raised to 3 when ``(N // n**2)**2 >= n``; otherwise order 1.
  ``convey_new_tensor`` (tensor.c) builds ``vector_new`` (1D),
  ``matrix_new`` (2D) or ``tensor_new`` (3D, refused for ``n > 256``).
- **Routes** (router.h, pivot.h, ``MATRIX_REMOTE_HOP`` = 1 in common.h).
  Write ``d = z'n^2 + y'n + x'`` and ``s = zn^2 + yn + x``.
  1D: one hop ``s -> d``, local_send when ``N <= n`` (``porter_opt_LOCAL``),
  else nonblock_send. 2D: local_send ``s -> (s//n)n + d%n``, then
  nonblock_send down the column to ``d``. 3D: local_send
  ``s -> zn^2 + yn + y'``, nonblock_send to ``z'n^2 + y'n + y``, local_send
  to ``d``.
- **Packets** (``porter_packet_size``, porter.c): ``tag + item`` with the
  item rounded up to a multiple of the tag. Tags: 1D 0 bytes; 2D 4 (local)
  and 1 (remote, 4 beyond 256 nodes); 3D 4, ``1 + (n > 16)``, 4.
- **Buffers** (``porter_send_buffer``, ``porter_setup``, porter.c;
  ``porter_new``, putport.c): a buffer is ``sizeof(buffer_t)`` = 16 bytes
  of header plus its packets, rounded up to 8 bytes on the wire (SHMEM);
  it holds ``(stride - 16) // packet`` packets, ``stride = (16 + capacity)``
  rounded up to 64; the capacity is ``CONVEY_BUFFER_SIZE`` (10,000 by
  default, configure.ac). An empty final buffer (a flush) is 0 bytes.

Everything works on the non-zero pairs (vectorised numpy/pandas, no N x N
array), so 65,536 PEs cost memory in proportion to the pairs, not to N^2.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import pandas as pd

from ...schema import SEND_TYPE_DTYPE

__all__ = [
    "BUFFER_HEADER_BYTES",
    "CONVEY_BUFFER_SIZE",
    "LAYOUT_COLUMNS",
    "LINK_COLUMNS",
    "PAIR_COLUMNS",
    "ROUTE_COLUMNS",
    "WIRE_ROUND_BYTES",
    "Hop",
    "Topology",
    "conveyors_topology",
    "logical_pairs",
    "pair_table",
    "pairs_by_size",
    "porter_links",
    "predict_layouts",
    "predict_links",
    "predict_pes",
    "route_pairs",
]

TopologyKind = Literal["1d", "2d", "3d"]
#: Default buffer capacity in bytes (bale's configure.ac: ``MSGBYTES=10000``).
CONVEY_BUFFER_SIZE: Final = 10_000
#: ``sizeof(buffer_t)``: start, limit, n_items, source (porter.h).
BUFFER_HEADER_BYTES: Final = 16
#: A buffer's wire size is rounded up to this (porter.c, SHMEM builds).
WIRE_ROUND_BYTES: Final = 8
#: ``CONVEY_MAX_ALIGN``: the buffer stride is a multiple of it.
BUFFER_ALIGN_BYTES: Final = 64
#: ``tensor_new`` refuses larger local groups.
MAX_TENSOR_LOCAL: Final = 256
#: Columns of :func:`pair_table` (``msg_bytes`` keys the conveyor: one per
#: message type, i.e. per mailbox).
PAIR_COLUMNS: Final = ("src_pe", "dst_pe", "msg_bytes", "messages", "payload_bytes")
#: Columns of :func:`route_pairs`.
ROUTE_COLUMNS: Final = (
    "hop",
    "send_type",
    "src_pe",
    "dst_pe",
    "msg_bytes",
    "items",
    "payload_bytes",
    "packet_bytes",
    "packed_bytes",
    "buffers_min",
    "wire_bytes",
)
#: Columns of :func:`predict_links`.
LINK_COLUMNS: Final = (
    "send_type",
    "src_pe",
    "dst_pe",
    "items",
    "payload_bytes",
    "packet_bytes",
    "packed_bytes",
    "buffers_min",
    "wire_bytes",
)
#: Columns of :func:`predict_layouts`.
LAYOUT_COLUMNS: Final = (
    "layout",
    "pes_per_node",
    "nodes",
    "topology",
    "grid",
    "items",
    "payload_bytes",
    "wire_bytes",
    "inter_node_bytes",
    "buffers_min",
    "busiest_send_type",
    "busiest_src_pe",
    "busiest_dst_pe",
    "busiest_wire_bytes",
)
_SEND = ("local_send", "nonblock_send")


@dataclass(frozen=True)
class Hop:
    """One hop of a route: the porter's send type and routing tag size."""

    send_type: Literal["local_send", "nonblock_send"]
    tag_bytes: int


@dataclass(frozen=True)
class Topology:
    """A conveyor as Conveyors builds it for ``num_pes`` PEs.

    Attributes
    ----------
    kind
        ``1d`` (vector: one hop), ``2d`` (matrix: local then remote hop) or
        ``3d`` (tensor: local, remote, local).
    num_pes
        N.
    pes_per_node
        ``n``, the local group Conveyors used (``n_local``): 1D has
        ``n >= N`` (one node, local_send) or ``n == 1`` (every PE alone,
        nonblock_send).

    Use :func:`conveyors_topology` to get the one Conveyors would choose.
    """

    kind: TopologyKind
    num_pes: int
    pes_per_node: int

    def __post_init__(self) -> None:
        n, k = self.num_pes, self.pes_per_node
        if n < 1 or k < 1:
            raise ValueError(f"num_pes and pes_per_node must be >= 1, got {n}, {k}")
        if self.kind != "1d" and (n % k or not 1 < k < n):
            raise ValueError(f"a {self.kind} conveyor needs 1 < n < N with n dividing N: {k}, {n}")
        if self.kind == "1d" and 1 < k < n:
            raise ValueError(f"a 1d conveyor has one node (n >= N) or n = 1, got n={k}, N={n}")
        if self.kind == "3d" and k > MAX_TENSOR_LOCAL:
            raise ValueError(f"Conveyors refuses a 3d conveyor with n={k} > {MAX_TENSOR_LOCAL}")

    @property
    def local(self) -> bool:
        """1D within one node (local_send) rather than across PEs (nonblock_send)."""
        return self.pes_per_node >= self.num_pes

    @property
    def num_nodes(self) -> int:
        return 1 if self.local else self.num_pes // self.pes_per_node

    @property
    def grid(self) -> tuple[int, ...]:
        """1D ``(N,)``; 2D ``(n, N/n)`` (columns, rows); 3D ``(n, n, layers)``."""
        n, k = self.num_pes, self.pes_per_node
        if self.kind == "1d":
            return (n,)
        if self.kind == "2d":
            return (k, n // k)
        return (k, k, 1 + (n - 1) // (k * k))

    @property
    def hops(self) -> tuple[Hop, ...]:
        if self.kind == "1d":
            return (Hop("local_send" if self.local else "nonblock_send", 0),)
        if self.kind == "2d":
            return (Hop("local_send", 4), Hop("nonblock_send", 1 if self.grid[1] <= 256 else 4))
        remote = 1 + (self.pes_per_node > 16)
        return (Hop("local_send", 4), Hop("nonblock_send", remote), Hop("local_send", 4))

    def describe(self) -> str:
        """E.g. ``3d tensor 2 x 2 x 4 (n = 2)``."""
        name = {"1d": "vector", "2d": "matrix", "3d": "tensor"}[self.kind]
        grid = " x ".join(str(g) for g in self.grid)
        return f"{self.kind} {name} {grid} (n = {self.pes_per_node})"

    def packet_bytes(self, hop: int, msg_bytes: np.ndarray) -> np.ndarray:
        """Bytes one item takes in a buffer of ``hop`` (``porter_packet_size``)."""
        tag = self.hops[hop].tag_bytes
        mask = tag - (tag > 0)
        return np.asarray(tag + ((np.asarray(msg_bytes, dtype=np.int64) + mask) & ~mask))

    def route(self, src: np.ndarray, dst: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The ``(from, to)`` PEs of every hop, for each message ``src -> dst``."""
        s = np.asarray(src, dtype=np.int64)
        d = np.asarray(dst, dtype=np.int64)
        k = self.pes_per_node
        if self.kind == "1d":
            return [(s, d)]
        if self.kind == "2d":  # matrix_route: to the sender's row, destination's column
            mid = (s // k) * k + d % k
            return [(s, mid), (mid, d)]
        square = k * k  # tensor_route, pivot_early, pivot_late
        y_dst = (d // k) % k
        first = s - s % k + y_dst
        second = (d // square) * square + k * y_dst + (s // k) % k
        return [(s, first), (first, second), (second, d)]


def conveyors_topology(num_pes: int, pes_per_node: int | None = None) -> Topology:
    """The conveyor ``convey_new`` builds for this layout.

    Parameters
    ----------
    num_pes
        N.
    pes_per_node
        PEs per node (blocked placement, ``node = pe // K``), i.e. the
        local group Conveyors finds (``CONVEY_NLOCAL`` or the host names).
        None: one node. A K that does not divide N gives ``n = 1``, as in
        ``convey_procs_per_node``.

    Raises
    ------
    ValueError
        ``num_pes`` or ``pes_per_node`` below 1; a 3D conveyor with more
        than 256 local PEs (Conveyors refuses to build it).

    Examples
    --------
    >>> [conveyors_topology(16, k).describe() for k in (16, 4, 2)]
    ['1d vector 16 (n = 16)', '2d matrix 4 x 4 (n = 4)', '3d tensor 2 x 2 x 4 (n = 2)']
    """
    if num_pes < 1:
        raise ValueError(f"num_pes must be at least 1, got {num_pes}")
    k = num_pes if pes_per_node is None else pes_per_node
    if k < 1:
        raise ValueError(f"pes_per_node must be at least 1, got {k}")
    k = min(k, num_pes)
    if num_pes % k:
        k = 1
    if 1 < k < num_pes:
        middle = num_pes // (k * k)
        return Topology("3d" if middle * middle >= k else "2d", num_pes, k)
    return Topology("1d", num_pes, k)


def porter_links(
    topology: Topology, send_type: str, src: np.ndarray, dst: np.ndarray
) -> np.ndarray:
    """Whether each ``src -> dst`` is a link of a porter with this send type.

    Every porter sends a final buffer to each of its links (``porter_try_flush``),
    so these are the links a physical trace can show. ``nonblock_progress``
    belongs to the nonblock_send porter.
    """
    s = np.asarray(src, dtype=np.int64)
    d = np.asarray(dst, dtype=np.int64)
    k, n = topology.pes_per_node, topology.num_pes
    inside = (s >= 0) & (s < n) & (d >= 0) & (d < n)
    remote = send_type in ("nonblock_send", "nonblock_progress")
    if topology.kind == "1d":
        return np.asarray(inside & (remote != topology.local))
    if not remote:
        return np.asarray(inside & (s // k == d // k))
    if topology.kind == "2d":
        return np.asarray(inside & (s % k == d % k))
    return np.asarray(inside & (d % (k * k) == k * (s % k) + (s // k) % k))


def pair_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` checked and put in :data:`PAIR_COLUMNS` form (not modified).

    ``pairs`` has ``src_pe``, ``dst_pe``, ``messages`` and ``payload_bytes``,
    and ``msg_bytes`` when a pair mixes message sizes. Without it, each
    pair's size is ``payload_bytes / messages`` (must be whole).

    Raises
    ------
    ValueError
        A column is missing, a value is negative, or a size is not whole.
    """
    needed = {"src_pe", "dst_pe", "messages", "payload_bytes"}
    missing = needed - set(pairs.columns)
    if missing:
        raise ValueError(f"pairs need the columns {sorted(needed)}; missing {sorted(missing)}")
    # the columns are shared with ``pairs`` unless a pair is empty (millions
    # of rows at 65,536 PEs: none is copied into one block, none inserted)
    names = ("src_pe", "dst_pe", "messages", "payload_bytes")
    columns = {c: pairs[c].to_numpy(dtype=np.int64) for c in names}
    carried = columns["messages"] > 0
    if not carried.all():
        columns = {c: values[carried] for c, values in columns.items()}
    if "msg_bytes" in pairs.columns:
        size = pairs["msg_bytes"].to_numpy(dtype=np.int64)
        size = size if carried.all() else size[carried]
    else:
        size, rest = np.divmod(columns["payload_bytes"], columns["messages"])
        if rest.any():
            raise ValueError("a pair mixes message sizes: give a msg_bytes column")
    columns["msg_bytes"] = size
    if any((columns[c] < 0).any() for c in ("src_pe", "dst_pe", "msg_bytes", "payload_bytes")):
        raise ValueError("pairs hold negative PEs or bytes")
    return pd.DataFrame({c: columns[c] for c in PAIR_COLUMNS}, copy=False)


def logical_pairs(data: pd.DataFrame | Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Reduce logical trace chunks (:func:`actorprof.read.iter_logical`) to pairs.

    One row per ``(src_pe, dst_pe, msg_bytes)`` that carried messages
    (:data:`PAIR_COLUMNS`); memory grows with the pairs, not with N^2.
    """
    keys = ["src_pe", "dst_pe", "msg_bytes"]
    parts: list[pd.DataFrame] = []
    for frame in [data] if isinstance(data, pd.DataFrame) else data:
        counted = _counted(frame, keys)
        parts.append(counted)
        if len(parts) > 64:
            parts = [pd.concat(parts).groupby(keys, sort=False)["messages"].sum().reset_index()]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=np.int64) for c in PAIR_COLUMNS})
    total = pd.concat(parts).groupby(keys)["messages"].sum().reset_index()
    total = total.astype(np.int64)
    total["payload_bytes"] = total["messages"] * total["msg_bytes"]
    return total[list(PAIR_COLUMNS)]


def pairs_by_size(pairs: pd.DataFrame, mixed: pd.DataFrame) -> pd.DataFrame:
    """The pairs per message size (:data:`PAIR_COLUMNS`), from one read's sums.

    ``pairs`` are a logical trace's pairs (``src_pe``, ``dst_pe``,
    ``messages``, ``bytes``, sorted by pair) and ``mixed`` the rows per size
    of those that mix sizes (``src_pe``, ``dst_pe``, ``msg_bytes``,
    ``messages``, sorted: :attr:`~actorprof.analyze.matrix.CommMatrices.mixed_sizes`).
    A pair not in ``mixed`` has one size, ``bytes / messages``. The result is
    :func:`logical_pairs` of the trace (rows sorted by ``src_pe``, ``dst_pe``,
    ``msg_bytes``), checked by :func:`pair_table`; memory follows the rows.

    Raises
    ------
    ValueError
        A pair not in ``mixed`` whose bytes are not a whole number of messages.
    """
    src = pairs["src_pe"].to_numpy(dtype=np.int64)
    dst = pairs["dst_pe"].to_numpy(dtype=np.int64)
    messages = pairs["messages"].to_numpy(dtype=np.int64)
    nbytes = pairs["bytes"].to_numpy(dtype=np.int64)
    m_src = mixed["src_pe"].to_numpy(dtype=np.int64)
    m_dst = mixed["dst_pe"].to_numpy(dtype=np.int64)
    m_size = mixed["msg_bytes"].to_numpy(dtype=np.int64)
    m_messages = mixed["messages"].to_numpy(dtype=np.int64)
    single = messages > 0
    if not len(m_src) and bool(single.all()):
        # no pair mixes sizes (the usual run): the pairs' own columns, not copied
        # (at 65,536 PEs they are millions of rows), beside their sizes
        size = _whole_sizes(nbytes, messages)
        columns = {"src_pe": src, "dst_pe": dst, "msg_bytes": size, "messages": messages}
        return pair_table(pd.DataFrame({**columns, "payload_bytes": nbytes}, copy=False))
    key = (src << 32) | dst
    m_key = (m_src << 32) | m_dst
    at = np.minimum(np.searchsorted(m_key, key), max(len(m_key) - 1, 0))
    if len(m_key):
        single &= m_key[at] != key
    del at
    key = key[single]
    size = _whole_sizes(nbytes[single], messages[single])
    # both sorted, no key in both: each row's place is its rank plus the other's keys before it
    rows = len(key) + len(m_key)
    place = np.arange(len(key)) + np.searchsorted(m_key, key)
    m_place = np.arange(len(m_key)) + np.searchsorted(key, m_key)
    del key, m_key

    def column(one: np.ndarray, per_size: np.ndarray) -> np.ndarray:
        out = np.empty(rows, dtype=np.int64)
        out[place] = one
        out[m_place] = per_size
        return out

    table = pd.DataFrame(
        {
            "src_pe": column(src[single], m_src),
            "dst_pe": column(dst[single], m_dst),
            "msg_bytes": column(size, m_size),
            "messages": column(messages[single], m_messages),
            "payload_bytes": column(nbytes[single], m_messages * m_size),
        },
        copy=False,
    )
    return pair_table(table)


def _whole_sizes(nbytes: np.ndarray, messages: np.ndarray) -> np.ndarray:
    """Each pair's message size, ``nbytes / messages``; a pair whose bytes
    are not a whole number of messages mixes sizes without its rows per size."""
    size, rest = np.divmod(nbytes, messages)
    if rest.any():
        raise ValueError("a pair mixes message sizes but has no rows per size")
    return size


def _counted(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Rows of ``frame`` counted per distinct ``keys`` (column ``messages``).

    The three integer keys are folded into one int64 per row (each offset
    by its column's minimum, scaled by the ranges of the others) and counted
    with ``np.unique``: three times as fast as a pandas groupby on a chunk
    of the trace. Where the ranges would not fit 63 bits, pandas counts.
    """
    columns = [frame[k].to_numpy() for k in keys]
    if not len(frame) or any(c.dtype.kind not in "iu" for c in columns):
        return frame.groupby(keys, sort=False).size().rename("messages").reset_index()
    lows = [int(c.min()) for c in columns]
    highs = [int(c.max()) for c in columns]
    spans = [high - low + 1 for high, low in zip(highs, lows, strict=True)]
    if spans[0] * spans[1] * spans[2] >= 2**63 or max(highs) >= 2**63:
        return frame.groupby(keys, sort=False).size().rename("messages").reset_index()
    key = columns[0].astype(np.int64) - lows[0]
    for c, low, span in zip(columns[1:], lows[1:], spans[1:], strict=True):
        key *= span
        key += c.astype(np.int64) - low
    distinct, counts = np.unique(key, return_counts=True)
    out: dict[str, np.ndarray] = {}
    for name, low, span in reversed(list(zip(keys, lows, spans, strict=True))):
        distinct, digit = np.divmod(distinct, span)
        out[name] = digit + low
    return pd.DataFrame({**{k: out[k] for k in keys}, "messages": counts.astype(np.int64)})


def _buffers(items: np.ndarray, packet: np.ndarray, buffer_bytes: int) -> tuple[np.ndarray, ...]:
    """Fewest buffers for ``items`` packets, and their wire bytes."""
    stride = -(-(BUFFER_HEADER_BYTES + buffer_bytes) // BUFFER_ALIGN_BYTES) * BUFFER_ALIGN_BYTES
    per_buffer = (stride - BUFFER_HEADER_BYTES) // packet
    if (per_buffer < 1).any() or (packet > buffer_bytes).any():
        raise ValueError(
            f"a packet of {int(packet.max())} B does not fit a {buffer_bytes} B buffer"
        )
    full, rest = np.divmod(items, per_buffer)

    def wire(count: np.ndarray) -> np.ndarray:
        raw = BUFFER_HEADER_BYTES + count * packet
        return np.asarray(np.where(count > 0, -(-raw // WIRE_ROUND_BYTES) * WIRE_ROUND_BYTES, 0))

    return full + (rest > 0), full * wire(per_buffer) + wire(rest)


def route_pairs(
    pairs: pd.DataFrame, topology: Topology, *, buffer_bytes: int = CONVEY_BUFFER_SIZE
) -> pd.DataFrame:
    """Route every pair's messages over ``topology``: one row per hop, link and size.

    Parameters
    ----------
    pairs
        Sparse logical pairs (:func:`pair_table` form, or what it accepts).
    topology
        The conveyor (:func:`conveyors_topology`).
    buffer_bytes
        Buffer capacity (``CONVEY_BUFFER_SIZE``).

    Returns
    -------
    pandas.DataFrame
        :data:`ROUTE_COLUMNS`: per ``hop`` (0-based), link and ``msg_bytes``
        (one conveyor per message type): ``items`` routed, their
        ``payload_bytes``, ``packet_bytes`` (tag + padded item),
        ``packed_bytes`` = items x packet, ``buffers_min`` (every buffer but
        the last full: a lower bound of the buffers a run shows) and
        ``wire_bytes`` of those buffers, headers and rounding included (a
        run that sends partial buffers early pays 16 B more per extra buffer,
        give or take the rounding of under 8 B per buffer; ``packed_bytes +
        16 x buffers_min`` is a strict lower bound).

    Raises
    ------
    ValueError
        A PE at or beyond ``topology.num_pes``; a packet larger than a buffer.
    """
    table = pair_table(pairs)
    src = table["src_pe"].to_numpy()
    dst = table["dst_pe"].to_numpy()
    if len(table) and max(src.max(), dst.max()) >= topology.num_pes:
        raise ValueError(f"pairs name PEs beyond the topology's {topology.num_pes}")
    sizes, size_code = np.unique(table["msg_bytes"].to_numpy(), return_inverse=True)
    messages = table["messages"].to_numpy()
    payload = table["payload_bytes"].to_numpy()
    parts = [
        _sum_by_link(hop, a, b, size_code.reshape(-1), len(sizes), messages, payload, topology)
        for hop, (a, b) in enumerate(topology.route(src, dst))
    ]
    routed = pd.concat(parts, ignore_index=True)
    routed["msg_bytes"] = sizes[routed["msg_bytes"].to_numpy()]
    hop = routed["hop"].to_numpy()
    packet = np.zeros(len(routed), dtype=np.int64)
    for h in range(len(topology.hops)):
        mine = hop == h
        packet[mine] = topology.packet_bytes(h, routed["msg_bytes"].to_numpy()[mine])
    items = routed["items"].to_numpy()
    buffers, wire = _buffers(items, packet, buffer_bytes)
    codes = np.array([_SEND.index(h.send_type) for h in topology.hops], dtype=np.int8)
    send_type = pd.Series(pd.Categorical.from_codes(codes[hop], dtype=SEND_TYPE_DTYPE))
    routed.insert(1, "send_type", send_type)
    routed["packet_bytes"] = packet
    routed["packed_bytes"] = items * packet
    routed["buffers_min"] = buffers
    routed["wire_bytes"] = wire
    return routed[list(ROUTE_COLUMNS)]


def _sum_by_link(
    hop: int,
    src: np.ndarray,
    dst: np.ndarray,
    size_code: np.ndarray,
    num_sizes: int,
    messages: np.ndarray,
    payload: np.ndarray,
    topology: Topology,
) -> pd.DataFrame:
    """One hop's items and payload summed per (link, size): sort and reduce, int64."""
    key = (src * topology.num_pes + dst) * num_sizes + size_code
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else key
    key = key[starts]
    link, code = np.divmod(key, num_sizes)
    return pd.DataFrame(
        {
            "hop": np.full(len(key), hop, dtype=np.int64),
            "src_pe": link // topology.num_pes,
            "dst_pe": link % topology.num_pes,
            "msg_bytes": code,
            "items": np.add.reduceat(messages[order], starts) if len(key) else key,
            "payload_bytes": np.add.reduceat(payload[order], starts) if len(key) else key,
        }
    )


def predict_links(routes: pd.DataFrame) -> pd.DataFrame:
    """:func:`route_pairs` summed per (send type, link), as a physical trace shows them.

    ``packet_bytes`` is the link's packet size, 0 when it carries several
    (several message sizes). Columns :data:`LINK_COLUMNS`.
    """
    keys = ["send_type", "src_pe", "dst_pe"]
    sums = ["items", "payload_bytes", "packed_bytes", "buffers_min", "wire_bytes"]
    grouped = routes.groupby(keys, observed=True, sort=True)
    links = grouped[sums].sum()
    low = grouped["packet_bytes"].min()
    links["packet_bytes"] = np.where(low == grouped["packet_bytes"].max(), low, 0)
    return links.reset_index()[list(LINK_COLUMNS)]


def predict_pes(links: pd.DataFrame, num_pes: int) -> pd.DataFrame:
    """Per sending PE: items, payload, wire bytes and fewest buffers, all hops.

    ``links`` is :func:`predict_links` (or :func:`route_pairs`); index ``pe``
    ``0..num_pes-1``.
    """
    cols = ["items", "payload_bytes", "wire_bytes", "buffers_min"]
    sent = links.groupby("src_pe")[cols].sum()
    index = pd.RangeIndex(num_pes, name="pe")
    return sent.reindex(index, fill_value=0).astype(np.int64)


def predict_layouts(
    pairs: pd.DataFrame,
    layouts: Sequence[tuple[int, int]],
    *,
    buffer_bytes: int = CONVEY_BUFFER_SIZE,
) -> pd.DataFrame:
    """What each node layout would put on the wire, side by side.

    Parameters
    ----------
    pairs
        Sparse logical pairs (:func:`logical_pairs`).
    layouts
        ``(pes_per_node, nodes)`` each; their product is the PE count, which
        must cover every PE of ``pairs``.
    buffer_bytes
        Buffer capacity.

    Returns
    -------
    pandas.DataFrame
        One row per layout, :data:`LAYOUT_COLUMNS`: the topology Conveyors
        builds, routed ``items`` (all hops), ``payload_bytes`` of the
        messages, ``wire_bytes`` and ``buffers_min`` (lower bounds, all
        hops), ``inter_node_bytes`` (wire bytes between different nodes,
        ``node = pe // pes_per_node``) and the busiest link by wire bytes.

    Raises
    ------
    ValueError
        An empty or invalid layout, or one with fewer PEs than ``pairs`` name.

    Examples
    --------
    >>> import pandas as pd
    >>> pairs = pd.DataFrame({"src_pe": [0], "dst_pe": [3], "messages": [10],
    ...                       "payload_bytes": [80]})
    >>> predict_layouts(pairs, [(4, 1), (2, 2)])["inter_node_bytes"].tolist()
    [0, 112]
    """
    table = pair_table(pairs)
    rows = []
    for k, nodes in layouts:
        if k < 1 or nodes < 1:
            raise ValueError(f"a layout needs pes_per_node and nodes >= 1, got ({k}, {nodes})")
        topology = conveyors_topology(k * nodes, k)
        links = predict_links(route_pairs(table, topology, buffer_bytes=buffer_bytes))
        src = links["src_pe"].to_numpy()
        dst = links["dst_pe"].to_numpy()
        wire = links["wire_bytes"].to_numpy()
        busiest = links.iloc[int(np.argmax(wire))] if len(links) else None
        rows.append(
            {
                "layout": f"{nodes} x {k}",
                "pes_per_node": k,
                "nodes": nodes,
                "topology": topology.kind,
                "grid": " x ".join(str(g) for g in topology.grid),
                "items": int(links["items"].sum()),
                "payload_bytes": int(table["payload_bytes"].sum()),
                "wire_bytes": int(wire.sum()),
                "inter_node_bytes": int(wire[src // k != dst // k].sum()),
                "buffers_min": int(links["buffers_min"].sum()),
                "busiest_send_type": "" if busiest is None else str(busiest["send_type"]),
                "busiest_src_pe": -1 if busiest is None else int(busiest["src_pe"]),
                "busiest_dst_pe": -1 if busiest is None else int(busiest["dst_pe"]),
                "busiest_wire_bytes": 0 if busiest is None else int(busiest["wire_bytes"]),
            }
        )
    return pd.DataFrame(rows, columns=list(LAYOUT_COLUMNS))

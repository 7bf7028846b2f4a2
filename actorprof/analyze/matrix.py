"""Communication matrices: who sent how many messages (and bytes) to whom.

The reduction is one pass over the reader's chunks (map: chunk -> partial
counts; reduce: sum), so a trace far larger than memory needs only the N x N
result. Everything else (self-send filtering, per-PE totals, node level, top
pairs, locality) is derived from the matrices, never from a second read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

__all__ = [
    "CommAccumulator",
    "CommMatrices",
    "CommPartial",
    "SelfSends",
    "comm_matrices",
    "comm_matrix",
    "filter_self_sends",
    "locality",
    "node_matrix",
    "pe_totals",
    "top_pairs",
]

SelfSends = Literal["include", "exclude", "only"]
Metric = Literal["count", "bytes"]
_SELF_SENDS = ("include", "exclude", "only")
_UNKNOWN_NODE = -1


@dataclass(frozen=True)
class CommMatrices:
    """Result of one pass over a logical trace.

    Attributes
    ----------
    counts, bytes
        N x N frames (index ``src_pe``, columns ``dst_pe``): messages and
        the sum of their ``msg_bytes``.
    pe_node
        Node of each PE (index ``pe``) as written in the node columns; -1
        for a PE that neither sent nor received. A PE seen with several
        node ids (see ``node_conflicts``) gets the smallest, so the result
        does not depend on reading order.
    messages
        Number of messages (rows) reduced.
    time_min_s, time_max_s
        First and last send time seen (None without timestamps).
    node_conflicts
        PEs that appeared with more than one node id, with those ids.
    """

    counts: pd.DataFrame
    bytes: pd.DataFrame
    pe_node: pd.Series
    messages: int
    time_min_s: float | None = None
    time_max_s: float | None = None
    node_conflicts: dict[int, list[int]] = field(default_factory=dict)

    @property
    def num_pes(self) -> int:
        return len(self.counts)


class CommAccumulator:
    """Sums partial matrices chunk by chunk (the map/reduce of a trace).

    Accumulators of disjoint parts of a trace can be merged with
    :meth:`merge`; the result does not depend on chunking or order.
    """

    def __init__(self, num_pes: int | None = None) -> None:
        self._cap = 0 if num_pes is None else int(num_pes)
        self._counts = np.zeros(self._cap * self._cap, dtype=np.int64)
        self._bytes = np.zeros(self._cap * self._cap, dtype=np.int64)
        self._node = np.full(self._cap, _UNKNOWN_NODE, dtype=np.int64)
        self._conflicts: dict[int, set[int]] = {}
        self.messages = 0
        self.time_min: float | None = None
        self.time_max: float | None = None

    def add(self, frame: pd.DataFrame) -> None:
        """Add one chunk with the logical columns (not modified)."""
        if not len(frame):
            return
        src = frame["src_pe"].to_numpy(dtype=np.int64)
        dst = frame["dst_pe"].to_numpy(dtype=np.int64)
        size = frame["msg_bytes"].to_numpy(dtype=np.int64)
        self._grow(int(max(src.max(), dst.max())) + 1)
        cap = self._cap
        keys = src * cap + dst
        if cap * cap <= 8 * len(keys):
            counts = np.bincount(keys, minlength=cap * cap)
            self._counts += counts
            if size.min() == size.max():
                self._bytes += counts * int(size[0])
            else:
                self._bytes += _weighted_bincount(keys, size, cap * cap)
        else:  # sparse: a chunk touches few of many cells
            uniq, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
            self._counts[uniq] += counts
            self._bytes[uniq] += _weighted_bincount(inverse, size, len(uniq))
        self._learn_nodes(src, frame["src_node"].to_numpy(dtype=np.int64))
        self._learn_nodes(dst, frame["dst_node"].to_numpy(dtype=np.int64))
        self.messages += len(frame)
        if "time_s" in frame:
            times = frame["time_s"].to_numpy()
            finite = times[np.isfinite(times)]
            if finite.size:
                lo, hi = float(finite.min()), float(finite.max())
                self.time_min = lo if self.time_min is None else min(self.time_min, lo)
                self.time_max = hi if self.time_max is None else max(self.time_max, hi)

    def merge(self, other: CommAccumulator) -> None:
        """Add another accumulator's totals into this one."""
        self._grow(other._cap)
        cap, ocap = self._cap, other._cap
        mine = self._counts.reshape(cap, cap)
        mine[:ocap, :ocap] += other._counts.reshape(ocap, ocap)
        self._bytes.reshape(cap, cap)[:ocap, :ocap] += other._bytes.reshape(ocap, ocap)
        known = np.flatnonzero(other._node != _UNKNOWN_NODE)
        self._learn_nodes(known, other._node[known])
        for pe, nodes in other._conflicts.items():
            self._conflicts.setdefault(pe, set()).update(nodes)
        self.messages += other.messages
        for t in (other.time_min, other.time_max):
            if t is not None:
                self.time_min = t if self.time_min is None else min(self.time_min, t)
                self.time_max = t if self.time_max is None else max(self.time_max, t)

    def result(self, num_pes: int | None = None) -> CommMatrices:
        """The matrices, padded to ``num_pes`` if given (never truncated)."""
        if num_pes is not None:
            self._grow(num_pes)
        cap = self._cap
        index = pd.RangeIndex(cap, name="src_pe")
        columns = pd.RangeIndex(cap, name="dst_pe")
        return CommMatrices(
            counts=pd.DataFrame(self._counts.reshape(cap, cap).copy(), index, columns),
            bytes=pd.DataFrame(self._bytes.reshape(cap, cap).copy(), index, columns),
            pe_node=pd.Series(self._node.copy(), index=pd.RangeIndex(cap, name="pe"), name="node"),
            messages=self.messages,
            time_min_s=self.time_min,
            time_max_s=self.time_max,
            node_conflicts={pe: sorted(n) for pe, n in sorted(self._conflicts.items())},
        )

    def _grow(self, needed: int) -> None:
        if needed <= self._cap:
            return
        old = self._cap
        counts = np.zeros((needed, needed), dtype=np.int64)
        nbytes = np.zeros((needed, needed), dtype=np.int64)
        counts[:old, :old] = self._counts.reshape(old, old)
        nbytes[:old, :old] = self._bytes.reshape(old, old)
        node = np.full(needed, _UNKNOWN_NODE, dtype=np.int64)
        node[:old] = self._node
        self._counts, self._bytes, self._node = counts.ravel(), nbytes.ravel(), node
        self._cap = needed

    def add_partial(self, part: CommPartial) -> None:
        """Add a sparse partial result (e.g. of one file or byte range)."""
        high = max(
            int(part.src.max(initial=-1)),
            int(part.dst.max(initial=-1)),
            int(part.pe.max(initial=-1)),
        )
        self._grow(high + 1)
        if part.src.size:
            keys = part.src * self._cap + part.dst
            np.add.at(self._counts, keys, part.counts)
            np.add.at(self._bytes, keys, part.nbytes)
        self._learn_pairs(part.pe, part.node)
        self.messages += part.messages
        for t in (part.time_min, part.time_max):
            if t is not None:
                self.time_min = t if self.time_min is None else min(self.time_min, t)
                self.time_max = t if self.time_max is None else max(self.time_max, t)

    def _learn_nodes(self, pes: np.ndarray, nodes: np.ndarray) -> None:
        # One scatter finds each PE's node when the chunk agrees with itself
        # (the usual case); otherwise every distinct (pe, node) pair is used.
        seen = np.full(self._cap, _UNKNOWN_NODE, dtype=np.int64)
        seen[pes] = nodes
        if (seen[pes] != nodes).any():
            pairs = np.unique(np.stack([pes, nodes], axis=1), axis=0)
            self._learn_pairs(pairs[:, 0], pairs[:, 1])
            return
        known = np.flatnonzero(seen != _UNKNOWN_NODE)
        self._learn_pairs(known, seen[known])

    def _learn_pairs(self, pes: np.ndarray, nodes: np.ndarray) -> None:
        """Learn (pe, node) pairs: smallest node wins, every extra one is a conflict."""
        if not len(pes):
            return
        pes = np.asarray(pes, dtype=np.int64)
        nodes = np.asarray(nodes, dtype=np.int64)
        mine = self._node[pes]
        had = mine != _UNKNOWN_NODE
        pairs = np.unique(np.stack([np.r_[pes, pes[had]], np.r_[nodes, mine[had]]], axis=1), axis=0)
        pe, node = pairs[:, 0], pairs[:, 1]
        first = np.r_[True, pe[1:] != pe[:-1]]
        self._node[pe[first]] = node[first]  # sorted: the first is the smallest
        for p in np.unique(pe[~first]).tolist():
            self._conflicts.setdefault(p, set()).update(node[pe == p].tolist())


@dataclass
class CommPartial:
    """Sparse partial result of a part of a trace: the map's output.

    Cells (``src``, ``dst``) may repeat until :meth:`compact`; ``pe`` and
    ``node`` are the (PE, node) pairs seen. Small and picklable, so worker
    processes and cluster nodes send it back instead of N x N matrices.
    """

    src: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    dst: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    nbytes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    pe: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    node: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    messages: int = 0
    time_min: float | None = None
    time_max: float | None = None

    def add_cells(
        self,
        src: np.ndarray,
        dst: np.ndarray,
        counts: np.ndarray,
        nbytes: np.ndarray,
        pe: np.ndarray,
        node: np.ndarray,
    ) -> None:
        """Append cells and (pe, node) pairs (int64 arrays)."""
        self.src = np.r_[self.src, src].astype(np.int64)
        self.dst = np.r_[self.dst, dst].astype(np.int64)
        self.counts = np.r_[self.counts, counts].astype(np.int64)
        self.nbytes = np.r_[self.nbytes, nbytes].astype(np.int64)
        self.pe = np.r_[self.pe, pe].astype(np.int64)
        self.node = np.r_[self.node, node].astype(np.int64)

    def add_times(self, low: float | None, high: float | None) -> None:
        """Widen the time range."""
        for t in (low, high):
            if t is not None:
                self.time_min = t if self.time_min is None else min(self.time_min, t)
                self.time_max = t if self.time_max is None else max(self.time_max, t)

    def add_frame(self, frame: pd.DataFrame) -> None:
        """Add a chunk with the logical columns (the reference reader's frames)."""
        if not len(frame):
            return
        src = frame["src_pe"].to_numpy(dtype=np.int64)
        dst = frame["dst_pe"].to_numpy(dtype=np.int64)
        size = frame["msg_bytes"].to_numpy(dtype=np.int64)
        cells, inverse = np.unique(np.stack([src, dst], axis=1), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        counts = np.bincount(inverse, minlength=len(cells)).astype(np.int64)
        nbytes = np.zeros(len(cells), dtype=np.int64)
        np.add.at(nbytes, inverse, size)
        pairs = np.unique(
            np.stack(
                [
                    np.r_[src, dst],
                    np.r_[
                        frame["src_node"].to_numpy(np.int64), frame["dst_node"].to_numpy(np.int64)
                    ],
                ],
                axis=1,
            ),
            axis=0,
        )
        self.add_cells(cells[:, 0], cells[:, 1], counts, nbytes, pairs[:, 0], pairs[:, 1])
        self.messages += len(frame)
        if "time_s" in frame:
            times = frame["time_s"].to_numpy()
            finite = times[np.isfinite(times)]
            if finite.size:
                self.add_times(float(finite.min()), float(finite.max()))

    def merge(self, other: CommPartial) -> None:
        """Add another partial into this one."""
        self.add_cells(other.src, other.dst, other.counts, other.nbytes, other.pe, other.node)
        self.messages += other.messages
        self.add_times(other.time_min, other.time_max)

    def compact(self) -> CommPartial:
        """The same partial with each cell and pair once (sorted)."""
        out = CommPartial(messages=self.messages, time_min=self.time_min, time_max=self.time_max)
        if self.src.size:
            cells, inverse = np.unique(
                np.stack([self.src, self.dst], axis=1), axis=0, return_inverse=True
            )
            inverse = inverse.ravel()
            counts = np.zeros(len(cells), dtype=np.int64)
            nbytes = np.zeros(len(cells), dtype=np.int64)
            np.add.at(counts, inverse, self.counts)
            np.add.at(nbytes, inverse, self.nbytes)
            out.src, out.dst, out.counts, out.nbytes = cells[:, 0], cells[:, 1], counts, nbytes
        if self.pe.size:
            pairs = np.unique(np.stack([self.pe, self.node], axis=1), axis=0)
            out.pe, out.node = pairs[:, 0], pairs[:, 1]
        return out

    @property
    def max_pe(self) -> int:
        """Largest PE id seen (-1 when empty)."""
        return max(int(self.src.max(initial=-1)), int(self.dst.max(initial=-1)))


def _weighted_bincount(keys: np.ndarray, weights: np.ndarray, length: int) -> np.ndarray:
    """Integer-exact ``bincount(keys, weights)``.

    float64 sums are exact below 2**53; past that (absurd sizes), sort and
    reduce in int64 instead.
    """
    if int(weights.max()) * len(weights) < 2**53:
        return np.bincount(keys, weights=weights, minlength=length).astype(np.int64)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    out = np.zeros(length, dtype=np.int64)
    out[sorted_keys[starts]] = np.add.reduceat(weights[order], starts)
    return out


def comm_matrices(
    data: pd.DataFrame | Iterable[pd.DataFrame], *, num_pes: int | None = None
) -> CommMatrices:
    """Count and byte matrices of a logical trace in one pass.

    Parameters
    ----------
    data
        A logical frame or an iterable of chunks (e.g. :func:`iter_logical`).
    num_pes
        Size of the matrices; None infers it as the largest PE id + 1.

    Returns
    -------
    CommMatrices

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"src_node": [0, 0], "src_pe": [0, 0], "dst_node": [0, 0],
    ...                    "dst_pe": [1, 1], "msg_bytes": [8, 8]})
    >>> comm_matrices(df).counts.loc[0, 1]
    np.int64(2)
    """
    acc = CommAccumulator(num_pes)
    for frame in [data] if isinstance(data, pd.DataFrame) else data:
        acc.add(frame)
    return acc.result(num_pes)


def comm_matrix(
    data: pd.DataFrame | Iterable[pd.DataFrame],
    *,
    num_pes: int | None = None,
    metric: Metric = "count",
    self_sends: SelfSends = "include",
) -> pd.DataFrame:
    """One N x N matrix (index ``src_pe``, columns ``dst_pe``) of a logical trace.

    Raises
    ------
    ValueError
        Unknown ``metric`` or ``self_sends``.
    """
    if metric not in ("count", "bytes"):
        raise ValueError(f"metric must be 'count' or 'bytes', got {metric!r}")
    mats = comm_matrices(data, num_pes=num_pes)
    return filter_self_sends(mats.counts if metric == "count" else mats.bytes, self_sends)


def filter_self_sends(matrix: pd.DataFrame, mode: SelfSends) -> pd.DataFrame:
    """A copy of ``matrix`` with its diagonal kept as is, zeroed, or alone.

    Raises
    ------
    ValueError
        ``mode`` is not include, exclude or only.
    """
    if mode not in _SELF_SENDS:
        raise ValueError(f"self_sends must be one of {_SELF_SENDS}, got {mode!r}")
    values = matrix.to_numpy().copy()
    n = min(values.shape)
    if mode == "exclude":
        values[np.arange(n), np.arange(n)] = 0
    elif mode == "only":
        diag = values[np.arange(n), np.arange(n)].copy()
        values[:] = 0
        values[np.arange(n), np.arange(n)] = diag
    return pd.DataFrame(values, index=matrix.index, columns=matrix.columns)


def pe_totals(mats: CommMatrices, *, self_sends: SelfSends = "include") -> pd.DataFrame:
    """Per-PE table: node, sent, received, bytes_sent, bytes_received, self_sends.

    ``sent``/``received`` follow ``self_sends``; the ``self_sends`` column is
    always the PE's messages to itself. Index ``pe``.
    """
    counts = filter_self_sends(mats.counts, self_sends).to_numpy()
    nbytes = filter_self_sends(mats.bytes, self_sends).to_numpy()
    table = pd.DataFrame(
        {
            "node": mats.pe_node.to_numpy(),
            "sent": counts.sum(axis=1),
            "received": counts.sum(axis=0),
            "bytes_sent": nbytes.sum(axis=1),
            "bytes_received": nbytes.sum(axis=0),
            "self_sends": np.diagonal(mats.counts.to_numpy()).copy(),
        },
        index=pd.RangeIndex(mats.num_pes, name="pe"),
    )
    return table


def node_matrix(matrix: pd.DataFrame, pe_node: pd.Series) -> pd.DataFrame:
    """Sum a PE x PE matrix into node x node (index ``src_node``, columns ``dst_node``).

    PEs of unknown node (-1) must have empty rows and columns.

    Raises
    ------
    ValueError
        A PE of unknown node has traffic, or sizes disagree.
    """
    values = matrix.to_numpy()
    node = pe_node.reindex(matrix.index).fillna(_UNKNOWN_NODE).to_numpy(dtype=np.int64)
    if len(node) != values.shape[0] or values.shape[0] != values.shape[1]:
        raise ValueError("node_matrix needs a square matrix and one node per PE")
    unknown = node == _UNKNOWN_NODE
    if values[unknown].any() or values[:, unknown].any():
        raise ValueError("a PE with traffic has no known node")
    nodes = np.unique(node[~unknown])
    position = np.searchsorted(nodes, node)
    out = np.zeros((len(nodes), len(nodes)), dtype=values.dtype)
    rows, cols = np.nonzero(values)
    np.add.at(out, (position[rows], position[cols]), values[rows, cols])
    return pd.DataFrame(
        out,
        index=pd.Index(nodes, name="src_node"),
        columns=pd.Index(nodes, name="dst_node"),
    )


def top_pairs(matrix: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    """The ``n`` largest cells: source, destination, value, share of the total.

    Ties are broken by source then destination id, so the result is stable.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    values = matrix.to_numpy()
    flat = values.ravel()
    total = flat.sum()
    order = np.lexsort((np.arange(flat.size), -flat))[:n]
    order = order[flat[order] > 0]
    rows, cols = np.unravel_index(order, values.shape)
    src_name = matrix.index.name or "src"
    dst_name = matrix.columns.name or "dst"
    return pd.DataFrame(
        {
            src_name: matrix.index.to_numpy()[rows],
            dst_name: matrix.columns.to_numpy()[cols],
            "value": flat[order],
            "share": flat[order] / total if total else np.zeros(len(order)),
        }
    )


def locality(matrix: pd.DataFrame, pe_node: pd.Series) -> dict[str, float | int]:
    """Intra-node vs inter-node traffic of a PE x PE matrix.

    Returns
    -------
    dict
        ``intra_node``, ``inter_node`` (sums) and ``intra_node_share``,
        ``inter_node_share`` (fractions of the total; 0 when empty).
    """
    values = matrix.to_numpy()
    node = pe_node.reindex(matrix.index).to_numpy(dtype=np.int64)
    same = node[:, None] == node[None, :]
    intra = int(values[same].sum())
    inter = int(values[~same].sum())
    total = intra + inter
    return {
        "intra_node": intra,
        "inter_node": inter,
        "intra_node_share": intra / total if total else 0.0,
        "inter_node_share": inter / total if total else 0.0,
    }

"""Communication matrices: who sent how many messages (and bytes) to whom.

The reduction is one pass over the reader's chunks (map: chunk -> partial
counts; reduce: sum), so a trace far larger than memory needs only the N x N
result. Everything else (self-send filtering, per-PE totals, node level, top
pairs, locality) is derived from the matrices, never from a second read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DENSE_MAX_PES",
    "CommAccumulator",
    "CommMatrices",
    "CommPartial",
    "Level",
    "Metric",
    "Pooled",
    "SelfSends",
    "check_self_sends",
    "comm_matrices",
    "comm_matrix",
    "dense_matrix",
    "filter_pairs",
    "filter_self_sends",
    "int_bincount",
    "locality",
    "locality_of",
    "node_matrix",
    "node_pairs_matrix",
    "pair_totals",
    "pairs_frame",
    "pe_totals",
    "pool_block",
    "pool_pairs",
    "top_pair_rows",
    "top_pairs",
    "top_pairs_at",
    "top_pairs_of",
    "window_pairs",
]

#: Whether messages a PE sends to itself are counted (``include``), left out, or alone.
SelfSends = Literal["include", "exclude", "only"]
#: What a matrix cell or a PE total counts: messages (buffers) or their bytes.
Metric = Literal["count", "bytes"]
#: Granularity of a matrix: between PEs, or between nodes.
Level = Literal["pe", "node"]
_SELF_SENDS = ("include", "exclude", "only")
_UNKNOWN_NODE = -1


#: Largest PE count whose PE x PE matrices are built dense (outputs, figures).
#: Beyond it PEs outnumber the pixels of a figure, and a dense matrix costs
#: 8 N^2 bytes (a 4,096-PE int64 matrix is 134 MB, a 65,536-PE one 34 GB):
#: the exact data are then the non-zero pairs, and figures pool blocks of PEs.
DENSE_MAX_PES = 1024


@dataclass(frozen=True)
class CommMatrices:
    """Result of one pass over a logical trace, kept as its non-zero pairs.

    Attributes
    ----------
    pairs
        One row per (``src_pe``, ``dst_pe``) that exchanged messages, sorted:
        columns ``src_pe``, ``dst_pe``, ``messages``, ``bytes`` (int64).
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
    mixed_sizes
        The pairs that mix message sizes, a row per (``src_pe``, ``dst_pe``,
        ``msg_bytes``) with its ``messages``, sorted (int64); None when the
        sizes were not counted (``CommAccumulator(sizes=False)``). A pair
        not in it has one size: ``bytes / messages``.

    ``counts`` and ``bytes`` are the dense N x N frames (index ``src_pe``,
    columns ``dst_pe``), built on demand for N up to :data:`DENSE_MAX_PES`.
    """

    pairs: pd.DataFrame
    pe_node: pd.Series
    messages: int
    time_min_s: float | None = None
    time_max_s: float | None = None
    node_conflicts: dict[int, list[int]] = field(default_factory=dict)
    mixed_sizes: pd.DataFrame | None = None

    @property
    def num_pes(self) -> int:
        return len(self.pe_node)

    @property
    def counts(self) -> pd.DataFrame:
        """Messages per (source, destination), N x N (N <= DENSE_MAX_PES)."""
        return dense_matrix(self.pairs, self.num_pes, "messages")

    @property
    def bytes(self) -> pd.DataFrame:
        """Sum of ``msg_bytes`` per (source, destination), N x N (N <= DENSE_MAX_PES)."""
        return dense_matrix(self.pairs, self.num_pes, "bytes")


def dense_matrix(
    pairs: pd.DataFrame, num_pes: int, column: str, *, limit: int = DENSE_MAX_PES
) -> pd.DataFrame:
    """The N x N frame (index ``src_pe``, columns ``dst_pe``) of a pairs column.

    Raises
    ------
    ValueError
        ``num_pes`` is beyond ``limit`` (use the pairs, or :func:`pool_pairs`).
    """
    import pandas as pd

    if num_pes > limit:
        raise ValueError(
            f"a dense {num_pes} x {num_pes} matrix is not built beyond {limit} PEs; "
            "use the pairs table, or pool_pairs() for a picture"
        )
    values = np.zeros((num_pes, num_pes), dtype=np.int64)
    values[pairs["src_pe"].to_numpy(), pairs["dst_pe"].to_numpy()] = pairs[column].to_numpy()
    index = pd.RangeIndex(num_pes, name="src_pe")
    return pd.DataFrame(values, index, pd.RangeIndex(num_pes, name="dst_pe"))


def pairs_frame(
    src: np.ndarray, dst: np.ndarray, messages: np.ndarray, nbytes: np.ndarray
) -> pd.DataFrame:
    """The pairs table (``src_pe``, ``dst_pe``, ``messages``, ``bytes``) of arrays.

    int64 arrays are used as they are, not copied into one block: at 65,536
    PEs they are millions of rows, and a copy doubled the peak of every view.
    """
    import pandas as pd

    return pd.DataFrame(
        {
            "src_pe": np.asarray(src, dtype=np.int64),
            "dst_pe": np.asarray(dst, dtype=np.int64),
            "messages": np.asarray(messages, dtype=np.int64),
            "bytes": np.asarray(nbytes, dtype=np.int64),
        },
        copy=False,
    )


class CommAccumulator:
    """Sums the non-zero (source, destination) cells of a trace, part by part.

    Memory is bounded by the number of distinct pairs (plus a buffer of
    cells not yet summed), never by the PE count squared or by the magnitude
    of an id. Accumulators of disjoint parts of a trace can be merged with
    :meth:`merge`; the result does not depend on chunking or order.

    ``sizes=True`` also counts the messages per (source, destination,
    message size) (:attr:`CommMatrices.mixed_sizes`): cells are then kept
    per size, so the partials added must be of one size per cell (made with
    ``sizes=True``: :meth:`CommPartial.add_frame`, :meth:`CommPartial.compact`).
    Memory is bounded by the non-zero (pair, size) cells.
    """

    def __init__(self, num_pes: int | None = None, *, sizes: bool = False) -> None:
        self.num_pes = num_pes
        self.sizes = sizes
        # compacted runs of cells, in order, of key ranges that do not overlap
        # (the engine's units of disjoint source PEs are never joined by a sort)
        self._runs: list[CommPartial] = []
        self._cells = 0  # in the runs
        self._pes = CommPartial()  # the (PE, node) pairs seen, each once
        self._pending: list[CommPartial] = []
        self._pending_cells = 0
        self.messages = 0
        self.time_min: float | None = None
        self.time_max: float | None = None

    def add(self, frame: pd.DataFrame) -> None:
        """Add one chunk with the logical columns (not modified)."""
        part = CommPartial()
        part.add_frame(frame, sizes=self.sizes)
        self.add_partial(part)

    def add_partial(self, part: CommPartial) -> None:
        """Add a sparse partial result (e.g. of one file or byte range)."""
        self._pending.append(part)
        self._pending_cells += part.src.size
        self.messages += part.messages
        for t in (part.time_min, part.time_max):
            if t is not None:
                self.time_min = t if self.time_min is None else min(self.time_min, t)
                self.time_max = t if self.time_max is None else max(self.time_max, t)
        if self._pending_cells > max(self._cells, 1 << 20):
            self._compact()

    def _compact(self) -> None:
        if not self._pending:
            return  # compacted already (max_pe and result ask again)
        pending, self._pending, self._pending_cells = self._pending, [], 0
        pes = CommPartial(
            pe=np.concatenate([self._pes.pe, *(p.pe for p in pending)]).astype(
                np.int64, copy=False
            ),
            node=np.concatenate([self._pes.node, *(p.node for p in pending)]).astype(
                np.int64, copy=False
            ),
        )
        self._pes = CommPartial()._pairs_of(pes)
        runs = self._runs
        for part in pending:
            src, dst, counts, nbytes = (np.asarray(getattr(part, n), np.int64) for n in _CELLS)
            runs.append(CommPartial(src, dst, counts, nbytes).compact(sizes=self.sizes))
        del pending, part, src, dst, counts, nbytes
        self._runs = _joined_runs([r for r in runs if r.src.size], sizes=self.sizes)
        self._cells = sum(r.src.size for r in self._runs)

    def _joined(self) -> CommPartial:
        """Every cell in one compacted partial (the runs' columns joined, a
        column at a time: each run's column is let go once copied)."""
        self._compact()
        if len(self._runs) > 1:
            runs = self._runs
            joined = CommPartial()
            for name in _CELLS:
                setattr(joined, name, np.concatenate([getattr(r, name) for r in runs]))
                for r in runs:
                    setattr(r, name, _i64())
            self._runs = [joined]
        return self._runs[0] if self._runs else CommPartial()

    def merge(self, other: CommAccumulator) -> None:
        """Add another accumulator's totals into this one."""
        part = other._joined()
        merged = CommPartial(
            part.src,
            part.dst,
            part.counts,
            part.nbytes,
            other._pes.pe,
            other._pes.node,
            messages=other.messages,
            time_min=other.time_min,
            time_max=other.time_max,
        )
        self.add_partial(merged)

    @property
    def max_pe(self) -> int:
        """Largest PE id seen (-1 when empty)."""
        self._compact()
        return max([-1, *(r.max_pe for r in self._runs), int(self._pes.pe.max(initial=-1))])

    def result(self, num_pes: int | None = None) -> CommMatrices:
        """The pairs, with PEs numbered up to ``num_pes`` if given (never truncated)."""
        import pandas as pd

        part = self._joined()
        pes = self._pes
        wanted = num_pes if num_pes is not None else (self.num_pes or 0)
        n = max(wanted, self.max_pe + 1)
        node = np.full(n, _UNKNOWN_NODE, dtype=np.int64)
        conflicts: dict[int, list[int]] = {}
        if pes.pe.size:
            pe, nodes = pes.pe, pes.node  # sorted by PE, then node
            first = np.r_[True, pe[1:] != pe[:-1]]
            node[pe[first]] = nodes[first]  # the smallest node wins
            for p in np.unique(pe[~first]).tolist():
                conflicts[p] = sorted(nodes[pe == p].tolist())
        src, dst, counts, nbytes = part.src, part.dst, part.counts, part.nbytes
        mixed = None
        if self.sizes:  # cells per (src, dst, size): summed per pair, the mixed ones kept
            src, dst, counts, nbytes, mixed = _split_sizes(src, dst, counts, nbytes)
        return CommMatrices(
            pairs=pairs_frame(src, dst, counts, nbytes),
            pe_node=pd.Series(node, index=pd.RangeIndex(n, name="pe"), name="node"),
            messages=self.messages,
            time_min_s=self.time_min,
            time_max_s=self.time_max,
            node_conflicts=conflicts,
            mixed_sizes=mixed,
        )


def _joined_runs(runs: list[CommPartial], *, sizes: bool) -> list[CommPartial]:
    """Compacted runs of cells in the order of their keys, those whose pair
    ranges overlap joined into one (compacted again); the others as they are.

    Partials of disjoint source PEs (the engine's units of whole files) are
    then never sorted together: at 65,536 PEs a sort of every pair took
    three copies of them at once.
    """
    if len(runs) < 2:
        return runs
    firsts = [int(_key(r.src[:1], r.dst[:1])[0]) for r in runs]
    lasts = [int(_key(r.src[-1:], r.dst[-1:])[0]) for r in runs]
    order = sorted(range(len(runs)), key=lambda k: (firsts[k], lasts[k]))
    groups: list[list[int]] = []
    high = -1
    for k in order:
        if groups and firsts[k] <= high:  # shares a pair (a size of it) with the group
            groups[-1].append(k)
            high = max(high, lasts[k])
        else:
            groups.append([k])
            high = lasts[k]
    joined = []
    for group in groups:
        if len(group) == 1:
            joined.append(runs[group[0]])
            continue
        src, dst, counts, nbytes = (
            np.concatenate([getattr(runs[k], n) for k in group]) for n in _CELLS
        )
        for k in group:
            runs[k] = CommPartial()  # let each run go once joined
        joined.append(CommPartial(src, dst, counts, nbytes).compact(sizes=sizes))
        del src, dst, counts, nbytes
    return joined


_CELLS = ("src", "dst", "counts", "nbytes")


def _split_sizes(
    src: np.ndarray, dst: np.ndarray, counts: np.ndarray, nbytes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, pd.DataFrame]:
    """Cells of one size each, sorted by (src, dst, size), summed per pair; and
    the rows of the pairs that have more than one (``mixed_sizes``)."""
    key = _key(src, dst)
    first = np.ones(len(key), dtype=np.bool_)
    first[1:] = key[1:] != key[:-1]
    del key
    if first.all():  # every pair of one size: the cells are the pairs
        many = np.zeros(0, dtype=np.int64)
        return src, dst, counts, nbytes, _size_frame(many, many, many, many)
    start = np.flatnonzero(first)
    length = np.diff(np.r_[start, len(first)])
    many = np.repeat(length > 1, length)
    mixed = _size_frame(src[many], dst[many], nbytes[many] // counts[many], counts[many])
    summed = (np.add.reduceat(counts, start), np.add.reduceat(nbytes, start))
    return src[start], dst[start], *summed, mixed


def _size_frame(
    src: np.ndarray, dst: np.ndarray, size: np.ndarray, messages: np.ndarray
) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(
        {
            "src_pe": np.asarray(src, dtype=np.int64),
            "dst_pe": np.asarray(dst, dtype=np.int64),
            "msg_bytes": np.asarray(size, dtype=np.int64),
            "messages": np.asarray(messages, dtype=np.int64),
        },
        copy=False,
    )


def _size_cells(
    src: np.ndarray, dst: np.ndarray, counts: np.ndarray, nbytes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cells of one message size each (size = ``nbytes / counts``) summed per
    (src, dst, size), sorted by them; the arrays as they are when they are
    sorted and distinct already.

    Non-negative ids and sizes that fit in 63 bits together are sorted as one
    int64 key; others by ``np.lexsort``: the same order.
    """
    if not len(src):
        return src, dst, counts, nbytes
    size = nbytes // np.maximum(counts, 1)
    columns = (src, dst, size)
    widths = [int(c.max()).bit_length() for c in columns]
    if sum(widths) <= 63 and min(int(c.min()) for c in columns) >= 0:
        key = (src << (widths[1] + widths[2])) | (dst << widths[2]) | size
        if bool((key[1:] > key[:-1]).all()):
            return src, dst, counts, nbytes
        order = np.argsort(key, kind="stable")
        key = key[order]
        changed = np.ones(len(order), dtype=np.bool_)
        changed[1:] = key[1:] != key[:-1]
        del key
    else:
        order = np.lexsort((size, dst, src))
        changed = np.zeros(len(order), dtype=np.bool_)
        changed[0] = True
        for c in columns:
            c = c[order]
            changed[1:] |= c[1:] != c[:-1]
    start = np.flatnonzero(changed)
    rows = order[start]
    return (
        src[rows],
        dst[rows],
        np.add.reduceat(counts[order], start),
        np.add.reduceat(nbytes[order], start),
    )


@dataclass
class CommPartial:
    """Sparse partial result of a part of a trace: the map's output.

    Cells (``src``, ``dst``) may repeat until :meth:`compact`; ``pe`` and
    ``node`` are the (PE, node) pairs seen. Small and picklable, so worker
    processes and cluster nodes send it back instead of N x N matrices. A
    partial made for the message sizes (``sizes=True``) has cells of one
    size each (``nbytes / counts``), compacted per (``src``, ``dst``, size).
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
        """Append cells and (pe, node) pairs (int64 arrays; never modified in place)."""
        self.src = _appended(self.src, src)
        self.dst = _appended(self.dst, dst)
        self.counts = _appended(self.counts, counts)
        self.nbytes = _appended(self.nbytes, nbytes)
        self.pe = _appended(self.pe, pe)
        self.node = _appended(self.node, node)

    def add_times(self, low: float | None, high: float | None) -> None:
        """Widen the time range."""
        for t in (low, high):
            if t is not None:
                self.time_min = t if self.time_min is None else min(self.time_min, t)
                self.time_max = t if self.time_max is None else max(self.time_max, t)

    def add_frame(self, frame: pd.DataFrame, *, sizes: bool = False) -> None:
        """Add a chunk with the logical columns (the reference reader's frames).

        ``sizes``: a cell per (source, destination, message size), not per pair.
        """
        if not len(frame):
            return
        src = frame["src_pe"].to_numpy(dtype=np.int64)
        dst = frame["dst_pe"].to_numpy(dtype=np.int64)
        size = frame["msg_bytes"].to_numpy(dtype=np.int64)
        if sizes:
            cell_src, cell_dst, counts, nbytes = _size_cells(
                src, dst, np.ones(len(src), dtype=np.int64), size
            )
        else:
            cells, inverse = np.unique(_key(src, dst), return_inverse=True)
            inverse = inverse.ravel()
            counts = np.bincount(inverse, minlength=len(cells)).astype(np.int64)
            nbytes = _weighted_bincount(inverse, size, len(cells))
            cell_src, cell_dst = cells >> 32, cells & _LOW32
        pes = np.r_[src, dst]
        nodes = np.r_[frame["src_node"].to_numpy(np.int64), frame["dst_node"].to_numpy(np.int64)]
        pairs = np.unique(_key(pes, nodes - _NODE_MIN))
        self.add_cells(
            cell_src, cell_dst, counts, nbytes, pairs >> 32, (pairs & _LOW32) + _NODE_MIN
        )
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

    def compact(self, *, sizes: bool = False) -> CommPartial:
        """The same partial with each cell and pair once (sorted).

        ``sizes``: a cell per (source, destination, message size), sorted by
        them; the cells must be of one size each (made so).
        """
        out = CommPartial(messages=self.messages, time_min=self.time_min, time_max=self.time_max)
        if sizes:
            columns = (self.src, self.dst, self.counts, self.nbytes)
            out.src, out.dst, out.counts, out.nbytes = _size_cells(
                *(np.asarray(c, dtype=np.int64) for c in columns)
            )
            return out._pairs_of(self)
        keys = _key(self.src, self.dst)
        if keys.size and bool((keys[1:] > keys[:-1]).all()):
            # already sorted and distinct (partials of files joined in PE order)
            out.src, out.dst, out.counts, out.nbytes = self.src, self.dst, self.counts, self.nbytes
        elif keys.size:
            cells, inverse = np.unique(keys, return_inverse=True)
            inverse = inverse.ravel()
            out.src, out.dst = cells >> 32, cells & _LOW32
            out.counts = _weighted_bincount(inverse, self.counts, len(cells))
            out.nbytes = _weighted_bincount(inverse, self.nbytes, len(cells))
        return out._pairs_of(self)

    def _pairs_of(self, other: CommPartial) -> CommPartial:
        """This partial with ``other``'s (PE, node) pairs, each once (sorted)."""
        pairs = _key(other.pe, other.node - _NODE_MIN)
        if pairs.size and bool((pairs[1:] > pairs[:-1]).all()):
            self.pe, self.node = other.pe, other.node
        elif pairs.size:
            pairs = np.unique(pairs)
            self.pe, self.node = pairs >> 32, (pairs & _LOW32) + _NODE_MIN
        return self

    @property
    def max_pe(self) -> int:
        """Largest PE id seen (-1 when empty)."""
        return max(int(self.src.max(initial=-1)), int(self.dst.max(initial=-1)))


def _appended(have: np.ndarray, more: np.ndarray) -> np.ndarray:
    """``have`` then ``more``, as int64 (no copy of ``more`` when ``have`` is
    empty: the arrays of a partial are never written to in place)."""
    if not have.size:
        return np.asarray(more, dtype=np.int64)
    return np.concatenate([have, np.asarray(more, dtype=np.int64)])


def _i64() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


_LOW32 = np.int64(0xFFFFFFFF)
#: Node ids are int32, negative ones too: shifted to be >= 0 inside a key.
_NODE_MIN = np.int64(-(2**31))


def _key(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """One sortable int64 per pair of ids, ``high`` below 2**31 and ``low`` below 2**32."""
    return (np.asarray(high, dtype=np.int64) << 32) | np.asarray(low, dtype=np.int64)


@overload
def unique_ints(values: np.ndarray, *, inverse: Literal[False] = False) -> np.ndarray: ...


@overload
def unique_ints(values: np.ndarray, *, inverse: Literal[True]) -> tuple[np.ndarray, np.ndarray]: ...


def unique_ints(
    values: np.ndarray, *, inverse: bool = False
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=inverse)`` of integers (the inverse
    flat, int64): by a table of the values seen when none is negative and
    the largest is within 4x their count (at least 2**16; memory bounded by
    the values' count, never by one value's size), else by the sort. A few
    message sizes among millions of pairs, or the PE ids of millions of
    links, need no sort."""
    if len(values) and int(values.min()) >= 0:
        top = int(values.max())
        if top < max(4 * len(values), 1 << 16):
            seen = np.zeros(top + 1, dtype=np.bool_)
            seen[values] = True
            distinct = np.flatnonzero(seen).astype(values.dtype, copy=False)
            if not inverse:
                return distinct
            return distinct, (np.cumsum(seen, dtype=np.int64) - 1)[values]
    if not inverse:
        return np.unique(values)
    distinct, code = np.unique(values, return_inverse=True)
    return distinct, code.reshape(-1).astype(np.int64, copy=False)


def stable_order(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """``np.lexsort((minor, major))``: by ``major``, then ``minor``, ties in
    their order. Where both are non-negative integers that fit in 64 bits
    together, one stable sort of them packed: ``lexsort`` sorts twice, and
    a stable sort merges runs that are sorted already in about one pass
    (a physical join at 65,536 PEs: 0.16-0.2 -> 0.07-0.1 s)."""
    if len(major):
        bits = int(minor.max()).bit_length()
        if (
            min(int(major.min()), int(minor.min())) >= 0
            and int(major.max()).bit_length() + bits <= 63
        ):
            packed = (major.astype(np.int64) << bits) | minor.astype(np.int64)
            return np.argsort(packed, kind="stable")
    return np.lexsort((minor, major))


def int_bincount(keys: np.ndarray, weights: np.ndarray, length: int) -> np.ndarray:
    """``bincount(keys, weights, minlength=length)`` exact in int64."""
    return _weighted_bincount(keys, np.asarray(weights, dtype=np.int64), length)


def _weighted_bincount(keys: np.ndarray, weights: np.ndarray, length: int) -> np.ndarray:
    """Integer-exact ``bincount(keys, weights)``.

    float64 sums are exact below 2**53; past that (absurd sizes), sort and
    reduce in int64 instead.
    """
    if not len(weights):
        return np.zeros(length, dtype=np.int64)
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
    import pandas as pd

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


def check_self_sends(mode: str) -> None:
    """Raise ValueError unless ``mode`` is include, exclude or only."""
    if mode not in _SELF_SENDS:
        raise ValueError(f"self_sends must be one of {_SELF_SENDS}, got {mode!r}")


def filter_self_sends(matrix: pd.DataFrame, mode: SelfSends) -> pd.DataFrame:
    """A copy of ``matrix`` with its diagonal kept as is, zeroed, or alone.

    Raises
    ------
    ValueError
        ``mode`` is not include, exclude or only.
    """
    import pandas as pd

    check_self_sends(mode)
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
    return pair_totals(mats.pairs, mats.pe_node, self_sends=self_sends)


def node_matrix(matrix: pd.DataFrame, pe_node: pd.Series) -> pd.DataFrame:
    """Sum a PE x PE matrix into node x node (index ``src_node``, columns ``dst_node``).

    PEs of unknown node (-1) must have empty rows and columns.

    Raises
    ------
    ValueError
        A PE of unknown node has traffic, or sizes disagree.
    """
    import pandas as pd

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
    import pandas as pd

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


# --- the same reductions on the non-zero pairs (any PE count) -----------------


def filter_pairs(pairs: pd.DataFrame, mode: SelfSends) -> pd.DataFrame:
    """The pairs with self-sends kept (``include``), dropped (``exclude``) or alone (``only``).

    Raises
    ------
    ValueError
        ``mode`` is not include, exclude or only.
    """
    check_self_sends(mode)
    if mode == "include":
        return pairs
    diagonal = pairs["src_pe"].to_numpy() == pairs["dst_pe"].to_numpy()
    kept: pd.DataFrame = pairs[~diagonal if mode == "exclude" else diagonal]
    return kept.reset_index(drop=True)


def pair_totals(
    pairs: pd.DataFrame, pe_node: pd.Series, *, self_sends: SelfSends = "include"
) -> pd.DataFrame:
    """Per-PE table from the pairs: node, sent, received, bytes_sent,
    bytes_received, self_sends (as :func:`pe_totals`). Index ``pe``."""
    import pandas as pd

    n = len(pe_node)
    shown = filter_pairs(pairs, self_sends)
    src = shown["src_pe"].to_numpy()
    dst = shown["dst_pe"].to_numpy()
    diagonal = pairs["src_pe"].to_numpy() == pairs["dst_pe"].to_numpy()

    def total(at: np.ndarray, column: str, frame: pd.DataFrame) -> np.ndarray:
        return _weighted_bincount(at, frame[column].to_numpy(), n)

    return pd.DataFrame(
        {
            "node": pe_node.to_numpy(),
            "sent": total(src, "messages", shown),
            "received": total(dst, "messages", shown),
            "bytes_sent": total(src, "bytes", shown),
            "bytes_received": total(dst, "bytes", shown),
            "self_sends": total(pairs["src_pe"].to_numpy()[diagonal], "messages", pairs[diagonal]),
        },
        index=pd.RangeIndex(n, name="pe"),
    )


def node_pairs_matrix(pairs: pd.DataFrame, pe_node: pd.Series, column: str) -> pd.DataFrame:
    """Sum ``column`` of the pairs into node x node (index ``src_node``, columns
    ``dst_node``), over the nodes that PEs were seen on.

    Raises
    ------
    ValueError
        A PE with traffic has no known node.
    """
    import pandas as pd

    node = pe_node.to_numpy(dtype=np.int64)
    src, dst = pairs["src_pe"].to_numpy(), pairs["dst_pe"].to_numpy()
    unknown = node == _UNKNOWN_NODE  # per PE, then looked up per pair (no node column made)
    if unknown[src].any() or unknown[dst].any():
        raise ValueError("a PE with traffic has no known node")
    nodes = np.unique(node[~unknown])
    k = len(nodes)
    at = np.searchsorted(nodes, node)  # each PE's node's position: once per PE, not per pair
    flat = at[src]
    flat *= k
    flat += at[dst]
    values = _weighted_bincount(flat, pairs[column].to_numpy(), k * k).reshape(k, k)
    return pd.DataFrame(
        values,
        index=pd.Index(nodes, name="src_node"),
        columns=pd.Index(nodes, name="dst_node"),
    )


def top_pairs_of(pairs: pd.DataFrame, n: int = 10, column: str = "messages") -> pd.DataFrame:
    """The ``n`` largest pairs by ``column`` (as :func:`top_pairs`: ``src_pe``,
    ``dst_pe``, ``value``, ``share``); ties broken by source then destination."""
    return top_pairs_at(pairs, top_pair_rows(pairs, n, column), column)


def top_pair_rows(pairs: pd.DataFrame, n: int = 10, column: str = "messages") -> np.ndarray:
    """Positions in ``pairs`` of the rows :func:`top_pairs_of` gives, in its order
    (other columns of those pairs are then taken without a search)."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    values = pairs[column].to_numpy()
    src = pairs["src_pe"].to_numpy()
    dst = pairs["dst_pe"].to_numpy()
    rows = _top_rows(values, src, dst, n)
    order: np.ndarray = rows[np.lexsort((dst[rows], src[rows], -values[rows]))][:n]
    kept: np.ndarray = order[values[order] > 0]
    return kept


def top_pairs_at(pairs: pd.DataFrame, order: np.ndarray, column: str = "messages") -> pd.DataFrame:
    """The frame of :func:`top_pairs_of` for the rows ``order`` of ``pairs``
    (:func:`top_pair_rows`)."""
    import pandas as pd

    values = pairs[column].to_numpy()
    total = values.sum()
    src = pairs["src_pe"].to_numpy()
    dst = pairs["dst_pe"].to_numpy()
    return pd.DataFrame(
        {
            "src_pe": src[order],
            "dst_pe": dst[order],
            "value": values[order],
            "share": values[order] / total if total else np.zeros(len(order)),
        }
    )


def _top_rows(values: np.ndarray, src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    """Rows holding the ``n`` largest values, ties broken by (src, dst): a
    superset of the top ``n`` found in linear time (sorting 2 M pairs for
    ten of them took 0.1-0.3 s at 65,536 PEs)."""
    rows = np.arange(len(values))
    if n <= 0 or len(values) <= 4 * max(n, 1024):
        return rows
    threshold = _nth_largest(values, n)
    above = np.flatnonzero(values > threshold)
    tied = np.flatnonzero(values == threshold)
    need = n - len(above)
    if len(tied) > need:  # the first ties by (src, dst): one key, partitioned
        key = src[tied].astype(np.int64) * (int(dst.max()) + 1) + dst[tied]
        tied = tied[np.argpartition(key, need - 1)[:need]]
    return np.concatenate([above, tied])


def _nth_largest(values: np.ndarray, n: int) -> Any:
    """The ``n``-th largest of ``values`` (``0 < n < len(values)``), in linear time
    whatever the ties.

    ``np.partition`` near the end of nearly equal values (1 with a few 2s:
    the message counts of most pairs at 65,536 PEs) takes 0.6 s for 2 M of
    them, 20 times its usual time. So only the values at or above a cut are
    sorted: the cut keeps the ``n`` largest of an evenly strided sample of
    4,096 values with a margin, and so, unless the sample is unlike the
    whole, a few thousand values (or many equal ones, which sort fast).
    """
    step = max(1, len(values) // 4096)
    sample = values[::step]
    keep = min(len(sample), 4 + -(-4 * n * len(sample) // len(values)))
    cut = np.partition(sample, len(sample) - keep)[len(sample) - keep]
    candidates = values[values >= cut]
    if len(candidates) < n:  # the sample was unlike the whole
        candidates = values
    return np.sort(candidates)[len(candidates) - n]


def locality_of(
    pairs: pd.DataFrame, pe_node: pd.Series, column: str = "messages"
) -> dict[str, float | int]:
    """Intra-node vs inter-node traffic of the pairs (as :func:`locality`)."""
    node = pe_node.to_numpy(dtype=np.int64)
    same = node[pairs["src_pe"].to_numpy()] == node[pairs["dst_pe"].to_numpy()]
    values = pairs[column].to_numpy()
    intra = int(values[same].sum())
    inter = int(values[~same].sum())
    total = intra + inter
    return {
        "intra_node": intra,
        "inter_node": inter,
        "intra_node_share": intra / total if total else 0.0,
        "inter_node_share": inter / total if total else 0.0,
    }


@dataclass(frozen=True)
class Pooled:
    """A PE x PE picture of many PEs: blocks of ``block`` PEs pooled.

    ``sum`` and ``max`` are frames indexed by the first PE of each block
    (``src_pe`` rows, ``dst_pe`` columns): the block's total, and its
    largest single pair, so a hot pair is not averaged away.
    """

    sum: pd.DataFrame
    max: pd.DataFrame
    block: int


def pool_block(num_pes: int, *, max_cells: int = 512, pes_per_node: int | None = None) -> int:
    """Block size pooling ``num_pes`` PEs into at most ``max_cells`` per side,
    a multiple of ``pes_per_node`` when that is at most the block (blocks are
    whole nodes)."""
    block = max(1, -(-num_pes // max_cells))
    if pes_per_node and pes_per_node > 1:
        if pes_per_node <= block:
            block = -(-block // pes_per_node) * pes_per_node
        else:
            while pes_per_node % block:
                block += 1  # a divisor of the node size: no block straddles nodes
    return block


def pool_pairs(pairs: pd.DataFrame, num_pes: int, block: int, column: str) -> Pooled:
    """Pool ``column`` of the pairs into blocks of ``block`` x ``block`` PEs."""
    import pandas as pd

    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    k = -(-num_pes // block)
    if k > DENSE_MAX_PES:
        raise ValueError(f"{k} blocks per side is too many; use a larger block")
    flat = (pairs["src_pe"].to_numpy() // block) * k + pairs["dst_pe"].to_numpy() // block
    values = pairs[column].to_numpy()
    total = _weighted_bincount(flat, values, k * k).reshape(k, k)
    largest = np.zeros(k * k, dtype=np.int64)
    np.maximum.at(largest, flat, values)
    labels = np.arange(k) * block
    index = pd.Index(labels, name="src_pe")
    columns = pd.Index(labels, name="dst_pe")
    return Pooled(
        pd.DataFrame(total, index, columns),
        pd.DataFrame(largest.reshape(k, k), index, columns),
        block,
    )


def window_pairs(pairs: pd.DataFrame, first: int, last: int, column: str) -> pd.DataFrame:
    """The dense matrix of PEs ``first``..``last`` (inclusive, both axes),
    indexed by the real PE ids.

    Raises
    ------
    ValueError
        An empty or too large window.
    """
    import pandas as pd

    if last < first or first < 0:
        raise ValueError(f"PE window {first}-{last} is empty")
    n = last - first + 1
    if n > DENSE_MAX_PES:
        raise ValueError(f"PE window {first}-{last} has {n} PEs; at most {DENSE_MAX_PES}")
    src = pairs["src_pe"].to_numpy()
    dst = pairs["dst_pe"].to_numpy()
    inside = (src >= first) & (src <= last) & (dst >= first) & (dst <= last)
    values = np.zeros((n, n), dtype=np.int64)
    values[src[inside] - first, dst[inside] - first] = pairs[column].to_numpy()[inside]
    ids = np.arange(first, last + 1)
    return pd.DataFrame(values, pd.Index(ids, name="src_pe"), pd.Index(ids, name="dst_pe"))

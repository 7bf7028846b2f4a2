"""Sparse sums of a part of a physical trace: what the physical map step returns.

A block of trace lines (send type codes, buffer sizes, source and
destination PEs, as arrays) is reduced to its links, one row per (send
type, source, destination) with the calls and the bytes, and, when asked
for, to its buffers per link and size (the aggregation model's input,
:func:`actorprof.analyze.conveyors.physical_buffers`). Partials of disjoint
parts of a trace are summed with :meth:`PhysicalPartial.join`; the result
does not depend on how the trace was cut.

A link is one unsigned 64-bit key: ``code << 62 | src << 31 | dst`` (PE ids
are below 2**31), so sorting keys sorts links by send type, source, then
destination: the order of the DataFrame route's group-bys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..schema import SEND_TYPES
from .matrix import CommPartial, stable_order, unique_ints

if TYPE_CHECKING:  # the physical map step's workers never import pandas
    import pandas as pd

__all__ = ["PhysicalPartial"]

_CODE_SHIFT = np.uint64(62)
_SRC_SHIFT = np.uint64(31)
_ID_MASK = np.uint64(2**31 - 1)
#: Largest dense table (cells) a block is counted in with one bincount.
_DENSE_CELLS = 1 << 20
_EXACT = 2**53  # float64 sums of integers are exact below this
_UNKNOWN_NODE = -1  # the physical trace has no node ids


def _u64() -> np.ndarray:
    return np.zeros(0, dtype=np.uint64)


def _i64() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass
class PhysicalPartial:
    """Sums of some lines of a physical trace (distinct, sorted keys).

    ``links``/``calls``/``nbytes``: per link; ``max_bytes``: the largest
    buffer of each send type (0 when none); ``lines``: trace lines summed.
    With ``sized``, ``sized_links``/``sizes``/``sized_calls`` hold the calls
    per (link, buffer size), sorted by link then size.
    """

    links: np.ndarray = field(default_factory=_u64)
    calls: np.ndarray = field(default_factory=_i64)
    nbytes: np.ndarray = field(default_factory=_i64)
    max_bytes: np.ndarray = field(default_factory=lambda: np.zeros(len(SEND_TYPES), np.int64))
    lines: int = 0
    sized: bool = False
    sized_links: np.ndarray = field(default_factory=_u64)
    sizes: np.ndarray = field(default_factory=_i64)
    sized_calls: np.ndarray = field(default_factory=_i64)

    @classmethod
    def of_block(
        cls,
        codes: np.ndarray,
        buffer_bytes: np.ndarray,
        src: np.ndarray,
        dst: np.ndarray,
        *,
        sized: bool = False,
        counts: np.ndarray | None = None,
    ) -> PhysicalPartial:
        """Reduce one block of trace lines (non-negative ids below 2**31);
        with ``counts``, row ``i`` stands for ``counts[i]`` lines."""
        out = cls(sized=sized, lines=len(codes) if counts is None else int(counts.sum()))
        if not len(codes):
            return out
        size = buffer_bytes.astype(np.int64, copy=False)
        for code in range(len(SEND_TYPES)):
            mine = size[codes == code]
            if mine.size:
                out.max_bytes[code] = int(mine.max())
        span = max(int(src.max()), int(dst.max())) + 1
        dense = len(SEND_TYPES) * span * span <= max(_DENSE_CELLS, 4 * len(codes))
        if dense:  # small runs: a table of every (type, src, dst), no sort
            index = (codes.astype(np.int64) * span + src) * span + dst
            cells, link_of = None, index
        else:
            cells, link_of = np.unique(_keys(codes, src, dst), return_inverse=True)
            link_of = link_of.ravel()
        count = len(SEND_TYPES) * span * span if cells is None else len(cells)
        if sized:
            values, size_of = np.unique(size, return_inverse=True)
            pair = link_of * len(values) + size_of.ravel()
            found, calls = _count(pair, count * len(values), counts)
            link_rows = found // len(values)
            out.sized_links = _decode(link_rows, span) if cells is None else cells[link_rows]
            out.sizes = values[found % len(values)]
            out.sized_calls = calls
            out.links, out.calls, out.nbytes = _links_of(out.sized_links, out.sizes, calls)
            return out
        found, calls = _count(link_of, count, counts)
        out.links = _decode(found, span) if cells is None else cells[found]
        out.calls = calls
        out.nbytes = _sum_at(link_of, size if counts is None else size * counts, count)[found]
        return out

    @classmethod
    def join(cls, parts: list[PhysicalPartial]) -> PhysicalPartial:
        """The sum of ``parts`` (all sized, or not)."""
        sized = bool(parts) and all(p.sized for p in parts)
        out = cls(sized=sized, lines=sum(p.lines for p in parts))
        if parts:
            out.max_bytes = np.max([p.max_bytes for p in parts], axis=0).astype(np.int64)
        if sized:
            links = np.concatenate([_u64(), *(p.sized_links for p in parts)])
            sizes = np.concatenate([_i64(), *(p.sizes for p in parts)])
            order = _by_link_and_size(links, sizes)
            links, sizes = links[order], sizes[order]
            first = np.r_[True, (links[1:] != links[:-1]) | (sizes[1:] != sizes[:-1])]
            starts = np.flatnonzero(first)
            del first
            out.sized_links, out.sizes = links[starts], sizes[starts]
            del links, sizes
            out.sized_calls = _sum_sorted([p.sized_calls for p in parts], order, starts)
            out.links, out.calls, out.nbytes = _links_of(
                out.sized_links, out.sizes, out.sized_calls
            )
            return out
        # one array at a time (memory: at 65,536 PEs nearly every line is a link)
        links = np.concatenate([_u64(), *(p.links for p in parts)])
        order = np.argsort(links, kind="stable")
        links = links[order]
        starts = np.flatnonzero(np.r_[True, links[1:] != links[:-1]]) if links.size else _i64()
        out.links = links[starts]
        del links
        out.calls = _sum_sorted([p.calls for p in parts], order, starts)
        out.nbytes = _sum_sorted([p.nbytes for p in parts], order, starts)
        return out

    def comm_partials(self) -> dict[str, CommPartial]:
        """Per send type: the links as a :class:`CommPartial` (nodes unknown)."""
        codes = (self.links >> _CODE_SHIFT).astype(np.int8)
        out = {}
        for code, send_type in enumerate(SEND_TYPES):
            mine = codes == code
            keys = self.links[mine]
            src, dst = _ends(keys)
            calls = self.calls[mine]
            pes = _distinct_ids(src, dst)
            out[send_type] = CommPartial(
                src,
                dst,
                calls,
                self.nbytes[mine],
                pes,
                np.full(pes.size, _UNKNOWN_NODE, dtype=np.int64),
                messages=int(calls.sum()),
            )
        return out

    def pe_ids(self) -> np.ndarray:
        """The PE ids the links name, as sources or destinations (distinct,
        ascending; memory follows the links, not the largest id)."""
        return unique_ints(np.concatenate(_ends(self.links)))

    def pe_mentions(self, ids: np.ndarray) -> np.ndarray:
        """How many lines name each of ``ids`` (:meth:`pe_ids`), as source,
        destination or both: a line naming one id twice names it once."""
        src, dst = _ends(self.links)
        other = dst != src
        at = np.searchsorted(ids, np.concatenate([src, dst[other]]))
        calls = np.concatenate([self.calls, self.calls[other]])
        sums = np.bincount(at, weights=calls, minlength=len(ids))
        return np.rint(sums).astype(np.int64)  # line counts: exact below 2**53

    def buffers(self) -> pd.DataFrame:
        """Calls per (send type, link, buffer size), sorted: the
        :data:`~actorprof.analyze.conveyors.BUFFER_COLUMNS` frame.

        Raises
        ------
        ValueError
            The partial was not made ``sized``.
        """
        if not self.sized:
            raise ValueError("buffers per size need a partial made with sized=True")
        import pandas as pd

        from ..schema import SEND_TYPE_DTYPE

        keys = self.sized_links
        src, dst = _ends(keys)
        return pd.DataFrame(
            {
                "send_type": pd.Categorical.from_codes(
                    (keys >> _CODE_SHIFT).astype(np.int8), dtype=SEND_TYPE_DTYPE
                ),
                "src_pe": src,
                "dst_pe": dst,
                "buffer_bytes": self.sizes.astype(np.int64),
                "calls": self.sized_calls.astype(np.int64),
            }
        )


def _ends(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The source and destination PE of each link key (int64)."""
    return ((keys >> _SRC_SHIFT) & _ID_MASK).astype(np.int64), (keys & _ID_MASK).astype(np.int64)


def _distinct_ids(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The PE ids among ``src`` (sorted) and ``dst``, sorted and distinct
    (``np.unique`` of both): the sources' runs, then :func:`unique_ints`."""
    first = np.r_[True, src[1:] != src[:-1]] if src.size else np.zeros(0, np.bool_)
    ids = np.concatenate([src[first], dst]).astype(np.int64, copy=False)
    return unique_ints(ids)


def _keys(codes: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    return (
        (codes.astype(np.uint64) << _CODE_SHIFT)
        | (src.astype(np.uint64) << _SRC_SHIFT)
        | dst.astype(np.uint64)
    )


def _decode(index: np.ndarray, span: int) -> np.ndarray:
    """Dense table rows ``(code * span + src) * span + dst`` as link keys."""
    code, rest = np.divmod(index, span * span)
    src, dst = np.divmod(rest, span)
    return _keys(code, src, dst)


def _by_link_and_size(links: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The order of rows by link, then size (stable).

    The links as dense ``(type, src, dst)`` cells, then the sizes, by
    :func:`~actorprof.analyze.matrix.stable_order` (one stable sort where
    they fit in 64 bits together: the parts of a join are each sorted
    already, and such a sort merges them in about one pass).
    """
    if links.size:
        src, dst = _ends(links)
        span = max(int(src.max()), int(dst.max())) + 1
        if (len(SEND_TYPES) * span * span).bit_length() <= 63:  # the cells fit in int64
            code = (links >> _CODE_SHIFT).astype(np.int64)
            return stable_order((code * span + src) * span + dst, sizes)
    return np.lexsort((sizes, links))


def _count(
    index: np.ndarray, length: int, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``index`` (sorted) and how often each occurs
    (each occurrence ``weights[i]`` times: positive integers)."""
    if weights is not None:
        if length <= max(_DENSE_CELLS, 4 * len(index)):
            sums = _sum_at(index, weights, length)
            found = np.flatnonzero(sums)
            return found, sums[found]
        found, at = np.unique(index, return_inverse=True)
        return found, _sum_at(at.ravel(), weights, len(found))
    if length <= max(_DENSE_CELLS, 4 * len(index)):
        counts = np.bincount(index, minlength=length)
        found = np.flatnonzero(counts)
        return found, counts[found].astype(np.int64)
    found, counts = np.unique(index, return_counts=True)
    return found, counts.astype(np.int64)


def _sum_at(index: np.ndarray, weights: np.ndarray, length: int) -> np.ndarray:
    """Integer-exact sums of ``weights`` per ``index`` (a table of ``length``)."""
    if not len(weights) or int(weights.max()) * len(weights) < _EXACT:
        return np.bincount(index, weights=weights, minlength=length).astype(np.int64)
    out = np.zeros(length, dtype=np.int64)
    np.add.at(out, index, weights)
    return out


def _sum_sorted(arrays: list[np.ndarray], order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sums of the joined ``arrays`` taken in ``order``, per run starting at ``starts``."""
    if not starts.size:
        return _i64()
    return np.add.reduceat(np.concatenate([_i64(), *arrays])[order], starts)


def _links_of(
    links: np.ndarray, sizes: np.ndarray, calls: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-link calls and bytes of rows per (link, size) sorted by link."""
    if not links.size:
        return _u64(), _i64(), _i64()
    starts = np.flatnonzero(np.r_[True, links[1:] != links[:-1]])
    return (
        links[starts],
        np.add.reduceat(calls, starts),
        np.add.reduceat(calls * sizes, starts),
    )

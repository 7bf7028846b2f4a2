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

from dataclasses import dataclass, field, replace
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
    def join(
        cls, parts: list[PhysicalPartial], *, per_link: bool = True, consume: bool = False
    ) -> PhysicalPartial:
        """The sum of ``parts`` (all sized, or not).

        ``per_link`` False: a sized sum without its per-link sums (made
        from its rows per size by :meth:`with_link_sums`), as a running sum
        that is joined again needs. ``consume``: ``parts`` is emptied as it
        is read, so that each part's arrays go once used when nothing else
        holds them (the engine's running sums, at 65,536 PEs hundreds of MB).
        """
        sized = bool(parts) and all(p.sized for p in parts)
        out = cls(sized=sized, lines=sum(p.lines for p in parts))
        if parts:
            out.max_bytes = np.max([p.max_bytes for p in parts], axis=0).astype(np.int64)
        if sized:
            calls = [p.sized_calls for p in parts]
            packing = _packing(parts)
            if packing is not None:  # one array of keys (memory: millions of rows at 65,536 PEs)
                order, starts, out.sized_links, out.sizes = _packed_rows(
                    parts, *packing, consume=consume
                )
            else:
                order, starts, out.sized_links, out.sizes = _sorted_rows(parts)
                if consume:
                    parts.clear()
            out.sized_calls = _sum_sorted(calls, order, starts)
            del order, starts
            return out.with_link_sums() if per_link else out
        # one array at a time (memory: at 65,536 PEs nearly every line is a link)
        links = np.concatenate([_u64(), *(p.links for p in parts)])
        order = np.argsort(links, kind="stable")
        links = links[order]
        starts = np.flatnonzero(np.r_[True, links[1:] != links[:-1]]) if links.size else _i64()
        out.links = links[starts]
        del links
        out.calls = _sum_sorted([p.calls for p in parts], order, starts)
        out.nbytes = _sum_sorted([p.nbytes for p in parts], order, starts)
        if consume:
            parts.clear()
        return out

    def with_link_sums(self) -> PhysicalPartial:
        """A sized partial with its per-link sums made from its rows per size
        (a join with ``per_link`` False leaves them out); any other as it is."""
        if not self.sized or self.links.size or not self.sized_links.size:
            return self
        links, calls, nbytes = _links_of(self.sized_links, self.sizes, self.sized_calls)
        return replace(self, links=links, calls=calls, nbytes=nbytes)

    def comm_partials(self) -> dict[str, CommPartial]:
        """Per send type: the links as a :class:`CommPartial` (nodes unknown).

        The keys are sorted, so a send type's links are a slice of them.
        Its calls and bytes are copies (each type's go with it, not with
        the three types' arrays).
        """
        firsts = np.arange(1, len(SEND_TYPES), dtype=np.uint64) << _CODE_SHIFT
        bounds = [0, *np.searchsorted(self.links, firsts).tolist(), len(self.links)]
        out = {}
        for code, send_type in enumerate(SEND_TYPES):
            mine = slice(bounds[code], bounds[code + 1])
            src, dst = _ends(self.links[mine])
            calls = self.calls[mine].copy()
            pes = _distinct_ids(src, dst)
            out[send_type] = CommPartial(
                src,
                dst,
                calls,
                self.nbytes[mine].copy(),
                pes,
                np.full(pes.size, _UNKNOWN_NODE, dtype=np.int64),
                messages=int(calls.sum()),
            )
        return out

    def pe_ids(self) -> np.ndarray:
        """The PE ids the links name, as sources or destinations (distinct,
        ascending; memory follows the links, not the largest id): the
        sources' and the destinations' apart, one array of ids at a time."""
        src = self.links >> _SRC_SHIFT
        src &= _ID_MASK
        ids = unique_ints(src)
        del src
        dst = self.links & _ID_MASK
        ids = np.concatenate([ids, unique_ints(dst)])
        del dst
        return unique_ints(ids).astype(np.int64)

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

        Its ``buffer_bytes`` and ``calls`` are this partial's ``sizes`` and
        ``sized_calls`` (int64), not copied: at 65,536 PEs they are a row per
        buffer nearly, and the partial is let go once its frame is made.

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
        # copy=False: the columns as they are, not copied into one block
        return pd.DataFrame(
            {
                "send_type": pd.Categorical.from_codes(
                    (keys >> _CODE_SHIFT).astype(np.int8), dtype=SEND_TYPE_DTYPE
                ),
                "src_pe": src,
                "dst_pe": dst,
                "buffer_bytes": self.sizes.astype(np.int64, copy=False),
                "calls": self.sized_calls.astype(np.int64, copy=False),
            },
            copy=False,
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


def _packing(parts: list[PhysicalPartial]) -> tuple[int, int] | None:
    """``(span, bits)`` when every (link, size) row of ``parts`` packs into
    one non-negative int64, ``(cell << bits) | size`` with the link's dense
    cell ``(code * span + src) * span + dst``, so that its order is the
    rows' by link then size; None otherwise (sizes or PE ids too large)."""
    span = top = 0
    for p in parts:
        keys = p.sized_links
        if keys.size:
            if int(p.sizes.min()) < 0:
                return None
            top = max(top, int(p.sizes.max()))
            span = max(span, int(((keys >> _SRC_SHIFT) & _ID_MASK).max()) + 1)
            span = max(span, int((keys & _ID_MASK).max()) + 1)
    if not span:
        return None
    bits = top.bit_length()
    return (span, bits) if (len(SEND_TYPES) * span * span).bit_length() + bits <= 63 else None


def _packed_rows(
    parts: list[PhysicalPartial], span: int, bits: int, *, consume: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`PhysicalPartial.join`'s rows by (link, size), from one array of
    packed keys (:func:`_packing`) instead of the links, the sizes and their
    sort key apart: the order of the joined rows, where each distinct row
    starts in it, and those rows' links and sizes."""
    packed = np.empty(sum(p.sized_links.size for p in parts), dtype=np.int64)
    at = 0
    for p in parts:  # a part's keys at a time: the temporaries are a part's size
        keys = p.sized_links
        n = keys.size
        cell = (keys >> _CODE_SHIFT).astype(np.int64)
        cell *= span
        cell += ((keys >> _SRC_SHIFT) & _ID_MASK).astype(np.int64)
        cell *= span
        cell += (keys & _ID_MASK).astype(np.int64)
        cell <<= bits
        cell |= p.sizes.astype(np.int64, copy=False)
        packed[at : at + n] = cell
        at += n
        del cell
    del p, keys
    if consume:  # the parts' links and sizes are in the keys now
        parts.clear()
    # each part is sorted already: a stable sort merges them in about one pass
    order = np.argsort(packed, kind="stable")
    packed = packed[order]
    starts = np.flatnonzero(np.r_[True, packed[1:] != packed[:-1]])
    rows = packed[starts]
    del packed
    sizes = rows & ((1 << bits) - 1)
    # the cells back to link keys in place (two temporaries of the rows' size)
    rows >>= bits
    dst = rows % span
    rows //= span
    src = rows % span
    rows //= span  # the send type's code
    links, src = rows.view(np.uint64), src.view(np.uint64)  # all non-negative
    links <<= _CODE_SHIFT
    src <<= _SRC_SHIFT
    links |= src
    del src
    links |= dst.view(np.uint64)
    del dst
    return order, starts, links, sizes


def _sorted_rows(
    parts: list[PhysicalPartial],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_packed_rows` where the rows do not pack into one int64."""
    links = np.concatenate([_u64(), *(p.sized_links for p in parts)])
    sizes = np.concatenate([_i64(), *(p.sizes for p in parts)])
    order = _by_link_and_size(links, sizes)
    links, sizes = links[order], sizes[order]
    first = np.r_[True, (links[1:] != links[:-1]) | (sizes[1:] != sizes[:-1])]
    starts = np.flatnonzero(first)
    del first
    return order, starts, links[starts], sizes[starts]


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
    """Sums of the joined ``arrays`` taken in ``order``, per run starting at
    ``starts`` (the list is emptied once they are joined)."""
    if not starts.size:
        return _i64()
    joined = np.concatenate([_i64(), *arrays])
    arrays.clear()
    joined = joined[order]  # the joined arrays in their first order let go
    return np.add.reduceat(joined, starts)


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

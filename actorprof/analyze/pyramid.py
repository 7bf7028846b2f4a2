"""A multi-resolution pyramid of the PE x PE matrix, for exploring it.

Level 0 pools every PE into blocks (:func:`~actorprof.analyze.matrix.pool_block`,
node-aligned, as the heatmap figure pools them): per block the sum of
messages and bytes, and the largest single pair. Each finer level is made of
*tiles*: one tile is one non-zero cell of the level above seen at the next
block size, down to single PEs. The exact data are the non-zero pairs, and at
65,536 PEs there can be millions of them, so tiles are kept hottest first
(most messages) while they fit a byte budget; what was left out is counted,
so a page can say where its finest view stops.

Every array is stored in the smallest type that holds it (``uint8``,
``uint16``, ``uint32``; ``float64`` beyond, exact to 2**53), and the budget
counts those bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .matrix import pool_block, stable_order

__all__ = ["MatrixPyramid", "PyramidLevel", "compact_uint", "matrix_pyramid"]

#: Cells per side of a tile (and of level 0): the page's canvas, one pixel a cell.
PYRAMID_CELLS = 256
#: Default byte budget of a pyramid (arrays, before any text encoding).
PYRAMID_BYTES = 12_000_000


def _uint_size(values: np.ndarray, where: np.ndarray) -> int:
    """The item size :func:`compact_uint` gives ``values[where]`` (not copied)."""
    top = int(values.max(where=where, initial=0))
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return np.dtype(dtype).itemsize
    return np.dtype(np.float64).itemsize


def compact_uint(values: np.ndarray) -> np.ndarray:
    """Non-negative integers in the smallest of uint8/16/32, else float64.

    float64, not uint64: a browser's typed arrays and numbers hold integers
    exactly up to 2**53, not 2**64.
    """
    top = int(values.max()) if len(values) else 0
    if top < 0 or (len(values) and int(values.min()) < 0):
        raise ValueError("compact_uint takes non-negative integers")
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(np.float64)


@dataclass(frozen=True)
class PyramidLevel:
    """One level: cells of ``block`` x ``block`` PEs in tiles of ``span`` x ``span`` PEs.

    Tile ``t`` covers source PEs from ``tile_row[t] * span`` and destination
    PEs from ``tile_col[t] * span``; its cells are
    ``tile_start[t] : tile_start[t] + tile_cells[t]`` of the cell arrays
    (``row``, ``col`` within the tile, ``messages``, ``bytes`` summed over the
    block). Pooled levels (``block > 1``) also hold each cell's largest pair:
    ``max_messages`` and its PEs as offsets from the cell's first PE
    (``max_src``, ``max_dst``); at ``block == 1`` those arrays are empty.
    ``tiles_total`` is how many tiles the level has when nothing is left out.
    """

    block: int
    span: int
    tile_row: np.ndarray
    tile_col: np.ndarray
    tile_start: np.ndarray
    tile_cells: np.ndarray
    row: np.ndarray
    col: np.ndarray
    messages: np.ndarray
    bytes: np.ndarray
    max_messages: np.ndarray
    max_src: np.ndarray
    max_dst: np.ndarray
    tiles_total: int

    @property
    def tiles(self) -> int:
        return len(self.tile_row)

    @property
    def complete(self) -> bool:
        return self.tiles == self.tiles_total

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in self.arrays().values())

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array by a short name (what a page embeds)."""
        return {
            "tr": self.tile_row,
            "tc": self.tile_col,
            "to": self.tile_start,
            "tn": self.tile_cells,
            "r": self.row,
            "c": self.col,
            "m": self.messages,
            "y": self.bytes,
            "x": self.max_messages,
            "xs": self.max_src,
            "xd": self.max_dst,
        }


@dataclass(frozen=True)
class MatrixPyramid:
    """Levels from the pooled overview (level 0, one tile) to single PEs."""

    num_pes: int
    levels: tuple[PyramidLevel, ...]

    @property
    def nbytes(self) -> int:
        return sum(level.nbytes for level in self.levels)


def _block_sizes(num_pes: int, max_cells: int, pes_per_node: int | None) -> list[int]:
    """Level 0: the figure's pooling; below, each block a divisor of the one above
    (whole nodes when it can be), so every cell lies in one tile."""
    sizes = [pool_block(max(num_pes, 1), max_cells=max_cells, pes_per_node=pes_per_node)]
    while sizes[-1] > 1:
        span = sizes[-1]
        least = -(-span // max_cells)
        divisors = [d for d in range(least, span) if span % d == 0] or [1]
        k = pes_per_node or 0
        aligned = [d for d in divisors if (k > 1 and (d % k == 0 or k % d == 0))]
        sizes.append((aligned or divisors)[0])
    return sizes


def _cells(
    src: np.ndarray,
    dst: np.ndarray,
    msgs: np.ndarray,
    byts: np.ndarray,
    *,
    tiles_per_side: int,
    block: int,
    span: int,
) -> dict[str, np.ndarray]:
    """Every non-zero cell of a level, in every tile, sorted by tile then cell.

    The pairs come sorted by source then destination (:func:`matrix_pyramid`).
    """
    per_side = -(-span // block)
    tile = (src // span) * tiles_per_side + dst // span
    if block == 1:
        return _single_cells(src, dst, msgs, byts, tile, span=span)
    # a cell's key: its tile, row and column (taken back from the keys of the
    # cells, not kept per pair: millions of pairs at 65,536 PEs)
    cells = per_side * per_side
    key = tile * cells
    del tile
    key += (src % span) // block * per_side
    key += (dst % span) // block
    # the largest pair first within a cell; ties keep the pairs' order (the
    # lowest source, then destination): the sort is stable
    order = stable_order(key, msgs.max(initial=0) - msgs)  # lexsort((-msgs, key))
    key = key[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else key
    top = order[first]
    key = key[first]
    return {
        "tile": key // cells,
        "row": key % cells // per_side,
        "col": key % per_side,
        "messages": np.add.reduceat(msgs[order], first) if len(first) else msgs[:0],
        "bytes": np.add.reduceat(byts[order], first) if len(first) else byts[:0],
        "max_messages": msgs[top],
        "max_src": src[top] % block,
        "max_dst": dst[top] % block,
    }


def _single_cells(
    src: np.ndarray,
    dst: np.ndarray,
    msgs: np.ndarray,
    byts: np.ndarray,
    tile: np.ndarray,
    *,
    span: int,
) -> dict[str, np.ndarray]:
    """:func:`_cells` of a level of single PEs: each pair is a cell.

    The pairs are sorted by source then destination, and so are a tile's
    cells: one stable sort by tile orders them (by radix when the tile ids
    fit in 16 bits). No sum, and no largest pair (the level holds none): at
    65,536 PEs this level is millions of cells, and the general way held
    three times as many arrays of them.
    """
    if len(tile) and int(tile.max()) < 1 << 16:
        order = np.argsort(tile.astype(np.uint16), kind="stable")
    else:
        order = np.argsort(tile, kind="stable")
    tile = tile[order]
    empty = np.zeros(0, dtype=np.int64)
    return {
        "tile": tile,
        "row": src[order] % span,
        "col": dst[order] % span,
        "messages": msgs[order],
        "bytes": byts[order],
        "max_messages": empty,
        "max_src": empty,
        "max_dst": empty,
    }


def _sorted_pairs(src: np.ndarray, dst: np.ndarray) -> bool:
    """Whether the pairs are in (source, destination) order (ties: either order)."""
    later = src[1:] > src[:-1]
    return bool(np.all(later | ((src[1:] == src[:-1]) & (dst[1:] >= dst[:-1]))))


def _starts(sorted_ids: np.ndarray) -> np.ndarray:
    if not len(sorted_ids):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])


def _choose(
    cells: dict[str, np.ndarray], candidate: np.ndarray, *, pooled: bool, budget: int
) -> np.ndarray:
    """Tile ids kept: most messages first, while their arrays fit ``budget`` bytes."""
    tile = cells["tile"][candidate]
    if not len(tile):
        return np.zeros(0, dtype=np.int64)
    names = ["row", "col", "messages", "bytes"] + (
        ["max_messages", "max_src", "max_dst"] if pooled else []
    )
    per_cell = sum(_uint_size(cells[n], candidate) for n in names)
    starts = _starts(tile)
    ids = tile[starts]
    counts = np.diff(np.r_[starts, len(tile)])
    volume = np.add.reduceat(cells["messages"][candidate], starts)
    per_tile = 16  # the tile's row, column, start and size
    costs = counts * per_cell + per_tile
    kept = []
    for i in np.lexsort((ids, -volume)).tolist():
        if costs[i] <= budget:
            budget -= int(costs[i])
            kept.append(ids[i])
    return np.sort(np.array(kept, dtype=np.int64))


def _level(
    cells: dict[str, np.ndarray],
    keep: np.ndarray,
    *,
    block: int,
    span: int,
    tiles_per_side: int,
    tiles_total: int,
) -> PyramidLevel:
    tile = cells["tile"][keep]
    starts = _starts(tile)
    ids = tile[starts]
    pooled = block > 1
    empty = np.zeros(0, dtype=np.uint8)

    def pick(name: str) -> np.ndarray:
        return compact_uint(cells[name][keep]) if pooled else empty

    return PyramidLevel(
        block=block,
        span=span,
        tile_row=compact_uint(ids // tiles_per_side),
        tile_col=compact_uint(ids % tiles_per_side),
        tile_start=compact_uint(starts),
        tile_cells=compact_uint(np.diff(np.r_[starts, len(tile)])),
        row=compact_uint(cells["row"][keep]),
        col=compact_uint(cells["col"][keep]),
        messages=compact_uint(cells["messages"][keep]),
        bytes=compact_uint(cells["bytes"][keep]),
        max_messages=pick("max_messages"),
        max_src=pick("max_src"),
        max_dst=pick("max_dst"),
        tiles_total=tiles_total,
    )


def matrix_pyramid(
    pairs: pd.DataFrame,
    num_pes: int,
    *,
    pes_per_node: int | None = None,
    max_cells: int = PYRAMID_CELLS,
    max_bytes: int = PYRAMID_BYTES,
) -> MatrixPyramid:
    """The pyramid of the non-zero ``pairs`` (``src_pe``, ``dst_pe``, ``messages``, ``bytes``).

    Level 0 (always kept, one tile) pools ``num_pes`` PEs to at most
    ``max_cells`` per side as :func:`~actorprof.analyze.matrix.pool_block`
    does for the heatmap (whole nodes when ``pes_per_node`` allows); each
    finer level pools one cell of the level above to about ``max_cells``
    per side, down to single PEs. Below level 0, tiles are kept in order of
    their messages (most first) while the arrays stay within ``max_bytes``
    (a tile too big for what is left is skipped; smaller ones may follow),
    and only under a tile kept at the level above.

    Raises
    ------
    ValueError
        ``max_cells`` below 2, or a pair naming a PE at or beyond ``num_pes``.

    Examples
    --------
    >>> import pandas as pd
    >>> pairs = pd.DataFrame({"src_pe": [0, 3], "dst_pe": [1, 3],
    ...                       "messages": [5, 2], "bytes": [40, 16]})
    >>> p = matrix_pyramid(pairs, 4, max_cells=2)
    >>> [(level.block, level.tiles, level.tiles_total) for level in p.levels]
    [(2, 1, 1), (1, 2, 2)]
    """
    if max_cells < 2:
        raise ValueError(f"max_cells must be >= 2, got {max_cells}")
    src = pairs["src_pe"].to_numpy(np.int64)
    dst = pairs["dst_pe"].to_numpy(np.int64)
    if len(src) and max(int(src.max()), int(dst.max())) >= num_pes:
        raise ValueError(f"a pair names a PE beyond num_pes={num_pes}")
    msgs = pairs["messages"].to_numpy(np.int64)
    byts = pairs["bytes"].to_numpy(np.int64)
    if len(src) > 1 and not _sorted_pairs(src, dst):
        # sorted once here, so that each level sorts by two keys, not four
        by_pair = np.lexsort((dst, src))
        src, dst, msgs, byts = src[by_pair], dst[by_pair], msgs[by_pair], byts[by_pair]
    sizes = _block_sizes(num_pes, max_cells, pes_per_node)
    n = max(num_pes, 1)
    levels: list[PyramidLevel] = []
    budget = max_bytes
    kept = np.zeros(1, dtype=np.int64)  # tile ids kept at the level above
    for depth, block in enumerate(sizes):
        span = n if depth == 0 else sizes[depth - 1]
        tiles_per_side = -(-n // span)
        cells = _cells(src, dst, msgs, byts, tiles_per_side=tiles_per_side, block=block, span=span)
        tile = cells["tile"]
        # a tile is a non-zero cell of the level above, inside a tile kept there
        above = n if depth <= 1 else sizes[depth - 2]
        above_per_side = -(-n // above)
        parent = ((tile // tiles_per_side) * span // above) * above_per_side + (
            (tile % tiles_per_side) * span // above
        )
        candidate = np.isin(parent, kept)
        if depth == 0:
            chosen = np.unique(tile)
        else:
            chosen = _choose(cells, candidate, pooled=block > 1, budget=budget)
        level = _level(
            cells,
            np.isin(tile, chosen),
            block=block,
            span=span,
            tiles_per_side=tiles_per_side,
            tiles_total=len(_starts(tile)),
        )
        if depth:
            budget -= level.nbytes
        levels.append(level)
        kept = chosen
    return MatrixPyramid(num_pes, tuple(levels))

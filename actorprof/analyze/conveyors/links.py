"""The compared link table from sorted int64 link keys, in bounded memory.

:func:`~actorprof.analyze.conveyors.compare_links` of
:func:`~actorprof.analyze.conveyors.predict_links` of
:func:`~actorprof.analyze.conveyors.route_pairs` is the reference, in pandas:
its groupbys and merges held several wide copies of the link table at once
(1.7 GB for the 3.7 M links of a 65,536-PE run). :func:`link_table` builds
the same table (same rows, order and values; PE ids as int32) from numpy
arrays. A link is the key ``(send type code x N + src) x N + dst``, so
sorting keys sorts links as the reference does (send type in
``SEND_TYPE_DTYPE`` order, then source, then destination), and the table is
built one send type at a time: the pairs are routed :data:`PAIR_CHUNK` at a
time and summed per (hop, link, message size), the physical buffers of that
send type are summed per link, and the two are joined by key. The peak is
about one link table, not three.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

from ...schema import CONVEYORS_CHECK_COLUMNS, SEND_TYPE_DTYPE
from ..matrix import unique_ints
from .model import BUFFER_HEADER_BYTES, WIRE_ROUND_BYTES, Topology, _buffers

__all__ = ["BLOCK_LINKS", "PAIR_CHUNK", "link_blocks", "link_table", "send_type_codes"]

#: Pairs routed at a time (a chunk's keys and sums: tens of MB).
PAIR_CHUNK: Final = 1 << 20
#: Links built at a time (each block's columns: about 50 MB).
BLOCK_LINKS: Final = 1 << 19
_CODE = {str(name): i for i, name in enumerate(SEND_TYPE_DTYPE.categories)}
_PROGRESS = _CODE["nonblock_progress"]
#: The columns of the table, in order, with the value of a link one side lacks.
_FILL: Final = {
    "items": 0,
    "payload_bytes": 0,
    "packet_bytes": 0,
    "packed_bytes": 0,
    "buffers_min": 0,
    "predicted_wire_bytes": 0,
    "calls": 0,
    "buffers": 0,
    "empty_buffers": 0,
    "wire_bytes": 0,
    "items_seen": -1,
}
Arrays = dict[str, np.ndarray]


def send_type_codes(values: pd.Series) -> np.ndarray:
    """Codes of ``values`` in ``SEND_TYPE_DTYPE`` (-1: not a send type), as int64."""
    if not isinstance(values.dtype, pd.CategoricalDtype) or values.dtype != SEND_TYPE_DTYPE:
        values = values.astype(SEND_TYPE_DTYPE)
    return values.cat.codes.to_numpy().astype(np.int64)


def _starts(key: np.ndarray) -> np.ndarray:
    """Where each run of equal values of a sorted ``key`` starts."""
    return np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else key


def _reduce(key: np.ndarray, *sums: np.ndarray) -> tuple[np.ndarray, ...]:
    """Sorted unique keys and the sums of ``sums`` per key."""
    if not len(key):
        return (key, *sums)
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = _starts(key)
    return (key[starts], *(np.add.reduceat(s[order], starts) for s in sums))


def _concat(parts: Sequence[tuple[np.ndarray, ...]], width: int) -> tuple[np.ndarray, ...]:
    if not parts:
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(width))
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(width))


@dataclass(frozen=True)
class _Pairs:
    """The pairs as int64 arrays, their message sizes coded, and each hop's packet per size."""

    src: np.ndarray
    dst: np.ndarray
    size_code: np.ndarray
    num_sizes: int
    messages: np.ndarray
    payload: np.ndarray
    packets: list[np.ndarray]

    @classmethod
    def of(cls, pairs: pd.DataFrame, topology: Topology, buffer_bytes: int) -> _Pairs:
        src, dst = (pairs[c].to_numpy(dtype=np.int64) for c in ("src_pe", "dst_pe"))
        if len(src) and max(int(src.max()), int(dst.max())) >= topology.num_pes:
            raise ValueError(f"pairs name PEs beyond the topology's {topology.num_pes}")
        sizes, code = unique_ints(pairs["msg_bytes"].to_numpy(dtype=np.int64), inverse=True)
        packets = [topology.packet_bytes(h, sizes) for h in range(len(topology.hops))]
        if len(sizes):  # the reference checks every routed row at once: its largest packet
            largest = max(int(p.max()) for p in packets)
            _buffers(np.zeros(1, dtype=np.int64), np.array([largest]), buffer_bytes)
        return cls(
            src,
            dst,
            code.reshape(-1),
            max(len(sizes), 1),
            pairs["messages"].to_numpy(dtype=np.int64),
            pairs["payload_bytes"].to_numpy(dtype=np.int64),
            packets,
        )


def _predicted(
    pairs: _Pairs, topology: Topology, buffer_bytes: int, code: int, keys: tuple[int, int]
) -> Arrays:
    """:func:`predict_links` of :func:`route_pairs` for the links of keys ``keys[0]..keys[1]-1``.

    The links of one send type (``code``), sorted by key. Buffers are
    counted per (hop, link, size) as :func:`route_pairs` does, then summed
    per link; ``packet_bytes`` is 0 on a link of several packet sizes. The
    hops of this send type: one, or two (3D's local_send).
    """
    n, num_sizes = topology.num_pes, pairs.num_sizes
    hops = [h for h, hop in enumerate(topology.hops) if _CODE[hop.send_type] == code]
    routed: dict[int, list[tuple[np.ndarray, ...]]] = {h: [] for h in hops}
    whole = keys == (code * n * n, (code + 1) * n * n)
    for start in range(0, len(pairs.src) if hops else 0, PAIR_CHUNK):
        part = slice(start, start + PAIR_CHUNK)
        route = topology.route(pairs.src[part], pairs.dst[part])
        for h in hops:
            a, b = route[h]
            link = (code * n + a) * n + b
            size_code, messages, payload = (
                pairs.size_code[part],
                pairs.messages[part],
                pairs.payload[part],
            )
            if not whole:
                mine = (link >= keys[0]) & (link < keys[1])
                link, size_code = link[mine], size_code[mine]
                messages, payload = messages[mine], payload[mine]
            routed[h].append(_reduce(link * num_sizes + size_code, messages, payload))
            del link, size_code, messages, payload
        del route
    per_hop = []
    for h in hops:
        parts = routed.pop(h)
        key, items, pay = _reduce(*_concat(parts, 3)) if len(parts) > 1 else _concat(parts, 3)
        del parts
        packet = pairs.packets[h][key % num_sizes]
        buffers, wire = _buffers(items, packet, buffer_bytes)
        link = key // num_sizes
        del key
        if not len(link):
            per_hop.append(tuple(np.zeros(0, dtype=np.int64) for _ in range(8)))
            continue
        starts = _starts(link)
        per_hop.append(
            (
                link[starts],
                *(np.add.reduceat(c, starts) for c in (items, pay, items * packet, buffers, wire)),
                np.minimum.reduceat(packet, starts),
                np.maximum.reduceat(packet, starts),
            )
        )
    if len(per_hop) > 1:  # a link on two hops of one send type (3D local_send)
        joined = _concat(per_hop, 8)
        del per_hop
        order = np.argsort(joined[0], kind="stable")
        key = joined[0][order]
        starts = _starts(key)
        merged = (
            key[starts],
            *(np.add.reduceat(c[order], starts) for c in joined[1:6]),
            np.minimum.reduceat(joined[6][order], starts),
            np.maximum.reduceat(joined[7][order], starts),
        )
    else:
        merged = _concat(per_hop, 8)
    key, items, pay, packed, buffers, wire, low, high = merged
    return {
        "key": key,
        "items": items,
        "payload_bytes": pay,
        "packet_bytes": np.where(low == high, low, 0),
        "packed_bytes": packed,
        "buffers_min": buffers,
        "predicted_wire_bytes": wire,
    }


def _physical_rows(physical: pd.DataFrame, num_pes: int) -> tuple[np.ndarray, ...]:
    """Link key, buffer size and calls of each physical row, sorted by key.

    Rows of no send type are dropped (the reference's groupby drops them).
    """
    code = send_type_codes(physical["send_type"])
    src = physical["src_pe"].to_numpy(dtype=np.int64)
    dst = physical["dst_pe"].to_numpy(dtype=np.int64)
    key = (code * num_pes + src) * num_pes + dst
    del src, dst
    size = physical["buffer_bytes"].to_numpy(dtype=np.int64)
    calls = physical["calls"].to_numpy(dtype=np.int64)
    known = code >= 0
    del code
    if not known.all():
        key, size, calls = key[known], size[known], calls[known]
    if len(key) and (key[1:] < key[:-1]).any():
        order = np.argsort(key, kind="stable")
        key, size, calls = key[order], size[order], calls[order]
    return key, size, calls


def _seen(
    key: np.ndarray, size: np.ndarray, calls: np.ndarray, predicted: Arrays, code: int
) -> Arrays:
    """Per link of one send type: calls, non-empty and empty buffers, bytes, decoded items."""
    pkey, ppacket = predicted["key"], predicted["packet_bytes"]
    if len(pkey):
        at = np.minimum(np.searchsorted(pkey, key), len(pkey) - 1)
        packet = np.where(pkey[at] == key, ppacket[at], 0)
        del at
    else:
        packet = np.zeros_like(key)
    full = size > 0 if code != _PROGRESS else np.zeros(len(key), dtype=bool)
    items = np.where(packet > 0, (size - BUFFER_HEADER_BYTES) // np.maximum(packet, 1), 0)
    rewired = -(-(BUFFER_HEADER_BYTES + items * packet) // WIRE_ROUND_BYTES) * WIRE_ROUND_BYTES
    # a unique item count per size needs packets of at least the rounding
    decodable = ~full | ((packet >= WIRE_ROUND_BYTES) & (items >= 1) & (rewired == size))
    del rewired, packet
    if not len(key):
        names = ("key", "calls", "buffers", "empty_buffers", "wire_bytes", "items_seen")
        return {c: np.zeros(0, dtype=np.int64) for c in names}
    starts = _starts(key)
    undecodable = np.add.reduceat((~decodable).astype(np.int64), starts)
    seen = np.add.reduceat(np.where(full, items * calls, 0), starts)
    return {
        "key": key[starts],
        "calls": np.add.reduceat(calls, starts),
        "buffers": np.add.reduceat(np.where(full, calls, 0), starts),
        "empty_buffers": np.add.reduceat(np.where(full, 0, calls), starts),
        "wire_bytes": np.add.reduceat(size * calls, starts),
        "items_seen": np.where(undecodable > 0, -1, seen),
    }


def _block(predicted: Arrays, seen: Arrays, num_pes: int, code: int) -> Arrays:
    """The table's columns for one send type: predicted and seen joined by link key."""
    pkey, skey = predicted.pop("key"), seen.pop("key")
    if len(pkey) == len(skey) and np.array_equal(pkey, skey):
        key = pkey
    else:
        both = np.concatenate([pkey, skey])
        both.sort()
        key = both[_starts(both)]
        del both
    at_pred = None if len(key) == len(pkey) else np.searchsorted(key, pkey)
    at_seen = None if len(key) == len(skey) else np.searchsorted(key, skey)
    del pkey, skey
    pe_dtype = np.int32 if num_pes <= np.iinfo(np.int32).max else np.int64
    out: Arrays = {
        "send_type": np.full(len(key), code, dtype=np.int8),
        "src_pe": ((key // num_pes) % num_pes).astype(pe_dtype),
        "dst_pe": (key % num_pes).astype(pe_dtype),
    }
    rows = len(key)
    del key
    # each column filled as its source is let go
    for name, fill in _FILL.items():
        side, at = (predicted, at_pred) if name in predicted else (seen, at_seen)
        values = side.pop(name)
        if at is None:
            out[name] = values
        else:
            out[name] = np.full(rows, fill, dtype=np.int64)
            out[name][at] = values
        del values
    return out


def _key_ranges(code: int, n: int, pairs: int, physical: np.ndarray) -> list[tuple[int, int]]:
    """Link key ranges of one send type of about :data:`BLOCK_LINKS` links each.

    The sources are split evenly: a block holds the links leaving a range
    of PEs (as many as the pairs routed, or the physical rows seen, allow).
    """
    first, end = code * n * n, (code + 1) * n * n
    lo, hi = np.searchsorted(physical, [first, end])
    blocks = min(n, max(1, -(-max(pairs, int(hi - lo)) // BLOCK_LINKS)))
    bounds = [first + (n * i // blocks) * n for i in range(blocks)] + [end]
    return list(itertools.pairwise(bounds))


def link_table(
    pairs: pd.DataFrame, physical: pd.DataFrame, topology: Topology, buffer_bytes: int
) -> pd.DataFrame:
    """The link table of :func:`compare_links` but ``status`` and ``reason``, in bounded memory.

    ``pairs`` is :func:`pair_table` checked, ``physical``
    :func:`physical_buffers` (PEs under ``topology.num_pes``, none negative).
    PE ids are int32 (int64 beyond 2**31 PEs); every other column is the
    reference's.

    Raises
    ------
    ValueError
        A PE at or beyond ``topology.num_pes``; a packet larger than a buffer.
    """
    blocks = list(_block_columns(pairs, physical, topology, buffer_bytes))
    columns: dict[str, np.ndarray] = {}
    for name in list(blocks[0]):  # one column at a time, each block's let go once copied
        columns[name] = np.concatenate([b.pop(name) for b in blocks])
    return _frame(columns)


def link_blocks(
    pairs: pd.DataFrame, physical: pd.DataFrame, topology: Topology, buffer_bytes: int
) -> Iterator[pd.DataFrame]:
    """:func:`link_table` a block of about :data:`BLOCK_LINKS` links at a time, in order."""
    for columns in _block_columns(pairs, physical, topology, buffer_bytes):
        yield _frame(columns)


def _block_columns(
    pairs: pd.DataFrame, physical: pd.DataFrame, topology: Topology, buffer_bytes: int
) -> Iterator[Arrays]:
    n = topology.num_pes
    routed = _Pairs.of(pairs, topology, buffer_bytes)
    key, size, calls = _physical_rows(physical, n)
    for code in range(len(_CODE)):
        for keys in _key_ranges(code, n, len(routed.src), key):
            lo, hi = np.searchsorted(key, keys)
            predicted = _predicted(routed, topology, buffer_bytes, code, keys)
            seen = _seen(key[lo:hi], size[lo:hi], calls[lo:hi], predicted, code)
            yield _block(predicted, seen, n, code)
            del predicted, seen


def _frame(columns: Arrays) -> pd.DataFrame:
    wire, packed, buffers = (columns[c] for c in ("wire_bytes", "packed_bytes", "buffers"))
    out: dict[str, Any] = dict(columns)
    out["send_type"] = pd.Categorical.from_codes(columns["send_type"], dtype=SEND_TYPE_DTYPE)
    out["padding_bytes"] = wire - packed - BUFFER_HEADER_BYTES * buffers
    return pd.DataFrame(out, copy=False)[list(CONVEYORS_CHECK_COLUMNS[:-2])]

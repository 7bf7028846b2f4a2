"""The model against a physical trace: which links it explains, and why not.

A physical trace line is one buffer of one porter. Per (send type, link)
the buffers seen are compared with the items :func:`route_pairs` put there:

- a buffer of ``b > 0`` bytes holds ``(b - 16) // packet`` items when the
  packet is at least 8 bytes (the wire rounding adds less than 8), so the
  items seen are decoded and must equal the routed items exactly;
- ``wire - items x packet - 16 x buffers`` is the rounding: 0 to 7 bytes
  per non-empty buffer;
- a link carries at least the fewest buffers its items need;
- 0-byte buffers are flushes (``porter_try_flush`` closes and sends the
  open, empty buffer of every porter link at the end), so a link with only
  those and no routed item is explained when it is a link of a porter;
- ``nonblock_progress`` calls complete the sends of the remote porter.

The verdict blames the run (``not one run``) only when the topology fits
the links the physical trace shows and the data still differ, or when the
traces cannot come from one run whatever the model (a logical PE that the
physical trace never names); a physical trace that fits no topology
Conveyors builds gets ``model does not fit``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from ...schema import CONVEYORS_CHECK_COLUMNS, SEND_TYPE_DTYPE, SEND_TYPES
from .links import link_blocks, link_table, send_type_codes
from .model import (
    BUFFER_HEADER_BYTES,
    CONVEY_BUFFER_SIZE,
    WIRE_ROUND_BYTES,
    Topology,
    conveyors_topology,
    pair_table,
    porter_links,
    predict_links,
    route_pairs,
)

__all__ = [
    "BUFFER_COLUMNS",
    "CHECK_COLUMNS",
    "EXPLAINED_REASONS",
    "REASONS",
    "LinkTally",
    "RunComparison",
    "compare_links",
    "compare_run",
    "compared_link_blocks",
    "compared_links",
    "detect_topologies",
    "physical_buffers",
]

Verdict = Literal["one run", "not one run", "model does not fit"]
#: Columns of :func:`physical_buffers`: calls per link and buffer size.
BUFFER_COLUMNS: Final = ("send_type", "src_pe", "dst_pe", "buffer_bytes", "calls")
#: Why a link is explained (``status`` explained) ...
EXPLAINED_REASONS: Final = ("items carried", "flush", "progress")
#: ... or not; :data:`REASON_TEXT` says each in words.
REASONS: Final = (
    *EXPLAINED_REASONS,
    "not a porter link",
    "buffers without routed items",
    "routed items without buffers",
    "items differ",
    "bytes beyond headers and rounding",
    "fewer buffers than the capacity allows",
)
REASON_TEXT: Final = {
    "items carried": "the buffers hold the routed items (headers and rounding accounted for)",
    "flush": "empty 0-byte final buffers on a porter link with no routed item",
    "progress": "nonblock_progress completing the remote porter's sends on its link",
    "not a porter link": "calls on a link no porter of the topology has",
    "buffers without routed items": "non-empty buffers where no routed message goes",
    "routed items without buffers": "routed items but no non-empty buffer",
    "items differ": "the items decoded from the buffer sizes differ from the routed items",
    "bytes beyond headers and rounding": (
        "wire bytes minus items x packet minus 16 per buffer is outside 0..7 per buffer"
    ),
    "fewer buffers than the capacity allows": "fewer buffers than the routed items need",
}
#: Columns of :func:`compare_links`.
CHECK_COLUMNS: Final = CONVEYORS_CHECK_COLUMNS
_REASON_DTYPE = pd.CategoricalDtype(list(REASONS))
_STATUS_DTYPE = pd.CategoricalDtype(["explained", "not explained"])
_LISTED = 10
_PROGRESS = SEND_TYPES.index("nonblock_progress")
#: Links whose reasons are worked out at a time (a few MB of masks each).
ROW_CHUNK: Final = 1 << 16


def physical_buffers(data: pd.DataFrame | Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Reduce physical trace chunks (:func:`actorprof.read.iter_physical`).

    One row per (send type, link, buffer size) with its number of ``calls``
    (:data:`BUFFER_COLUMNS`): a link has a handful of sizes (full buffers,
    the last partial ones, flushes), so memory follows the links, not the
    lines.
    """
    keys = ["send_type", "src_pe", "dst_pe", "buffer_bytes"]
    parts: list[pd.DataFrame] = []
    for frame in [data] if isinstance(data, pd.DataFrame) else data:
        if len(frame):
            parts.append(frame.groupby(keys, observed=True).size().rename("calls").reset_index())
        if len(parts) > 64:
            parts = [_sum_calls(parts, keys)]
    if not parts:
        empty = {c: pd.Series(dtype=np.int64) for c in BUFFER_COLUMNS}
        empty["send_type"] = pd.Series(pd.Categorical([], dtype=SEND_TYPE_DTYPE))
        return pd.DataFrame(empty)[list(BUFFER_COLUMNS)]
    return _sum_calls(parts, keys)[list(BUFFER_COLUMNS)]


def _sum_calls(parts: list[pd.DataFrame], keys: list[str]) -> pd.DataFrame:
    total = pd.concat(parts, ignore_index=True)
    total["send_type"] = total["send_type"].astype(SEND_TYPE_DTYPE)
    out = total.groupby(keys, observed=True)["calls"].sum().reset_index()
    for c in ("src_pe", "dst_pe", "buffer_bytes", "calls"):
        out[c] = out[c].astype(np.int64)
    return out


def detect_topologies(physical: pd.DataFrame, num_pes: int) -> list[Topology]:
    """Topologies Conveyors builds for ``num_pes`` PEs whose porters have every link seen.

    ``physical`` is :func:`physical_buffers`. Every PE count ``n`` dividing
    ``num_pes`` is tried (1D across PEs, 2D/3D, 1D in one node), in
    increasing ``n``; the result lists each fitting topology once.
    """
    # each send type's rows, found once (not once per candidate topology: a
    # 65,536-PE trace has 17 of them and millions of rows); sorted by send
    # type (as physical_buffers gives them), a type's rows are a slice
    types = physical["send_type"]
    if isinstance(types.dtype, pd.CategoricalDtype):
        codes, names = types.cat.codes.to_numpy(), types.cat.categories
    else:
        codes, names = pd.factorize(types, sort=True)
    src = physical["src_pe"].to_numpy()
    dst = physical["dst_pe"].to_numpy()
    ordered = len(codes) < 2 or bool((codes[1:] >= codes[:-1]).all())
    by_type = []
    for i, name in enumerate(names):
        if ordered:
            lo, hi = np.searchsorted(codes, [i, i + 1])
            rows: slice | np.ndarray = slice(int(lo), int(hi))
        else:
            rows = codes == i
        mine = src[rows]
        if len(mine):  # a type without rows rules nothing out
            by_type.append((str(name), mine, dst[rows]))
    found: list[Topology] = []
    for k in (k for k in range(1, num_pes + 1) if num_pes % k == 0):
        try:
            topology = conveyors_topology(num_pes, k)
        except ValueError:
            continue  # a tensor Conveyors refuses to build
        if topology in found:
            continue
        # a topology fits when every send type's links are its porter's: the
        # first send type that has another link rules it out, and its first
        # links mostly do (the whole check is a pass over millions of links)
        if all(
            porter_links(topology, name, s[:_FIRST], d[:_FIRST]).all()
            and porter_links(topology, name, s, d).all()
            for name, s, d in by_type
        ):
            found.append(topology)
    return found


#: The links checked first against a candidate topology (:func:`detect_topologies`).
_FIRST = 4096


def compare_links(
    predicted: pd.DataFrame, physical: pd.DataFrame, topology: Topology
) -> pd.DataFrame:
    """Predicted links (:func:`predict_links`) against the buffers seen.

    Returns
    -------
    pandas.DataFrame
        One row per (send type, link) predicted or seen, :data:`CHECK_COLUMNS`:
        the prediction (``items`` ... ``predicted_wire_bytes``, the fewest
        buffers' bytes), what was seen (``calls``; ``buffers`` non-empty,
        ``empty_buffers`` of 0 bytes, ``wire_bytes``), ``items_seen``
        decoded from the buffer sizes (-1 when the packet is under 8 bytes
        or the link mixes sizes), ``padding_bytes`` = wire - packed - 16 x
        buffers, ``status`` and ``reason`` (:data:`REASONS`).
    """
    keys = ["send_type", "src_pe", "dst_pe"]
    pred = predicted.rename(columns={"wire_bytes": "predicted_wire_bytes"})
    seen = _seen_links(physical, pred)
    links = pred.merge(seen, on=keys, how="outer", sort=True)
    links["send_type"] = links["send_type"].astype(SEND_TYPE_DTYPE)
    filled = {c: 0 for c in CHECK_COLUMNS[3:-4]}
    links = links.fillna(filled | {"items_seen": -1})
    for c in CHECK_COLUMNS[1:-3]:
        links[c] = links[c].astype(np.int64)
    links["padding_bytes"] = (
        links["wire_bytes"] - links["packed_bytes"] - BUFFER_HEADER_BYTES * links["buffers"]
    )
    reason = _reasons(links, topology)
    links["reason"] = pd.Categorical.from_codes(reason, dtype=_REASON_DTYPE)
    explained = reason < len(EXPLAINED_REASONS)
    links["status"] = pd.Categorical.from_codes(
        np.where(explained, 0, 1).astype(np.int8), dtype=_STATUS_DTYPE
    )
    return links[list(CHECK_COLUMNS)]


def _seen_links(physical: pd.DataFrame, predicted: pd.DataFrame) -> pd.DataFrame:
    """Per (send type, link): calls, buffers, empties, bytes, decoded items."""
    keys = ["send_type", "src_pe", "dst_pe"]
    rows = physical.merge(predicted[[*keys, "packet_bytes"]], on=keys, how="left")
    size = rows["buffer_bytes"].to_numpy(dtype=np.int64)
    calls = rows["calls"].to_numpy(dtype=np.int64)
    packet = rows["packet_bytes"].fillna(0).to_numpy(dtype=np.int64)
    full = (size > 0) & (rows["send_type"].astype(str).to_numpy() != "nonblock_progress")
    items = np.where(packet > 0, (size - BUFFER_HEADER_BYTES) // np.maximum(packet, 1), 0)
    raw = BUFFER_HEADER_BYTES + items * packet
    rewired = -(-raw // WIRE_ROUND_BYTES) * WIRE_ROUND_BYTES
    # a unique item count per size needs packets of at least the rounding
    decodable = ~full | ((packet >= WIRE_ROUND_BYTES) & (items >= 1) & (rewired == size))
    frame = pd.DataFrame(
        {
            "send_type": rows["send_type"].astype(SEND_TYPE_DTYPE),
            "src_pe": rows["src_pe"].to_numpy(dtype=np.int64),
            "dst_pe": rows["dst_pe"].to_numpy(dtype=np.int64),
            "calls": calls,
            "buffers": np.where(full, calls, 0),
            "empty_buffers": np.where(full, 0, calls),
            "wire_bytes": size * calls,
            "items_seen": np.where(full, items * calls, 0),
            "undecodable": ~decodable,
        }
    )
    seen = frame.groupby(keys, observed=True).sum().reset_index()
    seen["items_seen"] = np.where(seen["undecodable"] > 0, -1, seen["items_seen"])
    return seen.drop(columns="undecodable")


def _reasons(links: pd.DataFrame, topology: Topology) -> np.ndarray:
    """Code in :data:`REASONS` of each link (first failing check wins)."""
    types = send_type_codes(links["send_type"])
    src = links["src_pe"].to_numpy()
    dst = links["dst_pe"].to_numpy()
    on_porter = np.zeros(len(links), dtype=bool)
    for send_type in range(-1, len(SEND_TYPES)):  # not np.unique: a hash of every row
        mine = types == send_type
        if mine.any():
            on_porter[mine] = porter_links(topology, _type_name(send_type), src[mine], dst[mine])
    items = links["items"].to_numpy()
    buffers = links["buffers"].to_numpy()
    seen = links["items_seen"].to_numpy()
    pad = links["padding_bytes"].to_numpy()
    progress = types == _PROGRESS
    code = REASONS.index
    checks = [
        (~on_porter & (links["calls"].to_numpy() > 0), code("not a porter link")),
        (progress, code("progress")),
        ((items == 0) & (buffers == 0), code("flush")),
        (items == 0, code("buffers without routed items")),
        (buffers == 0, code("routed items without buffers")),
        ((seen >= 0) & (seen != items), code("items differ")),
        (
            (pad < 0) | (pad > (WIRE_ROUND_BYTES - 1) * buffers),
            code("bytes beyond headers and rounding"),
        ),
        (buffers < links["buffers_min"].to_numpy(), code("fewer buffers than the capacity allows")),
    ]
    conditions = [c for c, _ in checks]
    choices = [np.int8(v) for _, v in checks]
    return np.asarray(
        np.select(conditions, choices, default=np.int8(code("items carried"))), dtype=np.int8
    )


def _with_reasons(links: pd.DataFrame, topology: Topology) -> pd.DataFrame:
    """``links`` with ``status`` and ``reason``, worked out :data:`ROW_CHUNK` links at a time."""
    reason = np.empty(len(links), dtype=np.int8)
    for start in range(0, len(links), ROW_CHUNK):
        rows = slice(start, start + ROW_CHUNK)
        reason[rows] = _reasons(links.iloc[rows], topology)
    links["reason"] = pd.Categorical.from_codes(reason, dtype=_REASON_DTYPE)
    explained = reason < len(EXPLAINED_REASONS)
    links["status"] = pd.Categorical.from_codes(
        np.where(explained, 0, 1).astype(np.int8), dtype=_STATUS_DTYPE
    )
    return links[list(CHECK_COLUMNS)]


def compared_links(
    pairs: pd.DataFrame,
    physical: pd.DataFrame,
    topology: Topology,
    *,
    buffer_bytes: int = CONVEY_BUFFER_SIZE,
) -> pd.DataFrame:
    """``compare_links(predict_links(route_pairs(pairs, topology)), physical, topology)``.

    The same rows, order and values (PE ids int32), built from sorted
    link keys in about the memory of one link table
    (:func:`~actorprof.analyze.conveyors.links.link_table`); what
    :func:`compare_run` uses. ``pairs`` is :func:`pair_table` checked.

    Raises
    ------
    ValueError
        A PE at or beyond ``topology.num_pes``; a packet larger than a buffer.
    """
    if len(physical) and (
        int(physical["src_pe"].min()) < 0 or int(physical["dst_pe"].min()) < 0
    ):  # a negative PE has no link key: the reference path
        predicted = predict_links(route_pairs(pairs, topology, buffer_bytes=buffer_bytes))
        return compare_links(predicted, physical, topology)
    return _with_reasons(link_table(pairs, physical, topology, buffer_bytes), topology)


def compared_link_blocks(
    pairs: pd.DataFrame,
    physical: pd.DataFrame,
    topology: Topology,
    *,
    buffer_bytes: int = CONVEY_BUFFER_SIZE,
) -> Iterator[pd.DataFrame]:
    """:func:`compared_links` a block of about a million links at a time, in table order.

    Joined, the blocks are the table (each block with its own index from 0).
    """
    if len(physical) and (int(physical["src_pe"].min()) < 0 or int(physical["dst_pe"].min()) < 0):
        yield compared_links(pairs, physical, topology, buffer_bytes=buffer_bytes)
        return
    for block in link_blocks(pairs, physical, topology, buffer_bytes):
        yield _with_reasons(block, topology)


@dataclass(frozen=True)
class RunComparison:
    """A logical and a physical trace compared link by link through the model.

    Attributes
    ----------
    layout
        The topology the given layout implies (:func:`conveyors_topology`).
    detected
        Topologies whose porters have every link of the physical trace.
    topology
        The one the links were compared under: ``layout`` when it fits the
        physical trace, else the best fitting detected one.
    links
        :func:`compare_links` under ``topology``.
    verdict
        ``one run`` (every link explained), ``not one run`` (the model fits
        the physical trace, the data differ) or ``model does not fit``.
    reasons
        Why not one run (empty for one run).
    notes
        Everything else worth saying (e.g. the layout disagrees with the trace).
    """

    layout: Topology
    detected: tuple[Topology, ...]
    topology: Topology
    links: pd.DataFrame
    verdict: Verdict
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: :meth:`summary` kept by :meth:`without_links` (None: from ``links``)
    kept_summary: dict[str, Any] | None = field(default=None, repr=False)

    def unexplained(self) -> pd.DataFrame:
        """The links not explained, with their reason."""
        return self.links[self.links["status"] == "not explained"]

    def without_links(self) -> RunComparison:
        """This comparison with an empty link table and its :meth:`summary` kept.

        For a holder that needs the verdict and the counts but not the links
        (the run report: millions of links at 65,536 PEs).
        """
        if self.kept_summary is not None:
            return self
        return replace(self, links=self.links.iloc[:0].copy(), kept_summary=self.summary())

    def summary(self) -> dict[str, Any]:
        """Counts and errors: links per reason, items, payload and wire bytes."""
        if self.kept_summary is not None:
            return copy.deepcopy(self.kept_summary)
        return self._summary(LinkTally.of(self.links))

    def _summary(self, tally: LinkTally) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "layout": self.layout.describe(),
            "topology": self.topology.describe(),
            "detected": [t.describe() for t in self.detected],
            **tally.counts(),
            "reasons": list(self.reasons),
            "notes": list(self.notes),
        }


class LinkTally:
    """What a comparison says of its links, summed block by block (no table held).

    :meth:`add` takes links in table order (:func:`compared_links`, whole or
    in blocks); :meth:`counts` gives :meth:`RunComparison.summary`'s
    counts, :meth:`reasons` the lines on unexplained links, :meth:`shifts`
    the packet shift each send type fits.
    """

    _SUMS = (
        "items_routed",
        "items_seen_decoded",
        "payload_bytes",
        "buffers",
        "empty_buffers",
        "buffers_min",
        "wire_bytes",
        "packed_bytes",
        "padding_bytes",
        "predicted_wire_bytes_min",
    )
    _COLUMN: Final[dict[str, str]] = {
        "items_routed": "items",
        "items_seen_decoded": "items_seen",
        "buffers_min": "buffers_min",
        "predicted_wire_bytes_min": "predicted_wire_bytes",
    }

    def __init__(self) -> None:
        self.links = self.explained = self.decoded = self.max_items_error = 0
        self.sums = dict.fromkeys(self._SUMS, 0)
        self.by_reason = np.zeros(len(REASONS), dtype=np.int64)
        self.first: dict[int, list[str]] = {}
        self._bad_types: set[int] = set()
        # per send type code: least positive packet, shift bounds, whether a link
        # without items breaks every shift
        self.fit: dict[int, list[Any]] = {}

    @classmethod
    def of(cls, links: pd.DataFrame) -> LinkTally:
        """The tally of a whole table, :data:`ROW_CHUNK` links at a time."""
        tally = cls()
        for start in range(0, len(links), ROW_CHUNK):
            tally.add(links.iloc[start : start + ROW_CHUNK])
        return tally

    def add(self, links: pd.DataFrame) -> None:
        types = send_type_codes(links["send_type"])
        data = types != _PROGRESS
        buffers = links["buffers"].to_numpy()
        seen = links["items_seen"].to_numpy()
        items = links["items"].to_numpy()
        decoded = data & (seen >= 0) & (buffers > 0)
        for name in self._SUMS:
            column = links[self._COLUMN.get(name, name)].to_numpy()
            self.sums[name] += int(
                np.sum(column, where=decoded if name == "items_seen_decoded" else data)
            )
        if decoded.any():
            error = np.abs(seen - items, where=decoded, out=np.zeros_like(seen))
            self.max_items_error = max(self.max_items_error, int(error.max()))
        self.links += len(links)
        self.decoded += int(decoded.sum())
        status = links["status"].cat.codes.to_numpy()
        self.explained += int((status == 0).sum())
        reason = links["reason"].cat.codes.to_numpy()
        self.by_reason += np.bincount(reason, minlength=len(REASONS))
        for code in np.flatnonzero(np.bincount(reason[status != 0], minlength=len(REASONS))):
            names = self.first.setdefault(int(code), [])
            if len(names) < _LISTED:
                rows = np.flatnonzero((reason == code) & (status != 0))[: _LISTED - len(names)]
                names.extend(
                    f"{t} {s}->{d}"
                    for t, s, d in zip(
                        links["send_type"].iloc[rows].astype(str),
                        links["src_pe"].iloc[rows],
                        links["dst_pe"].iloc[rows],
                        strict=True,
                    )
                )
        for type_code in range(-1, len(SEND_TYPES)):
            if ((types == type_code) & (status != 0)).any():
                self._bad_types.add(type_code)
        self._add_fits(links, types, buffers, items)

    def _add_fits(
        self, links: pd.DataFrame, types: np.ndarray, buffers: np.ndarray, items: np.ndarray
    ) -> None:
        """Per send type, the packet shifts ``s`` every link with buffers fits.

        ``0 <= room - packed - s x items <= 7 x buffers`` on each link: an
        interval of ``s`` per link with items, a condition without ``s`` on
        the others; the intersection over links is an interval.
        """
        room = links["wire_bytes"].to_numpy() - BUFFER_HEADER_BYTES * buffers
        slack = room - links["packed_bytes"].to_numpy()
        packet = links["packet_bytes"].to_numpy()
        top = (WIRE_ROUND_BYTES - 1) * buffers
        for code in range(-1, len(SEND_TYPES)):
            mine = (types == code) & (buffers > 0)
            if not mine.any():
                continue
            fit = self.fit.setdefault(code, [None, -(2**62), 2**62, True])
            positive = packet[mine][packet[mine] > 0]
            if len(positive):
                fit[0] = int(positive.min()) if fit[0] is None else min(fit[0], int(positive.min()))
            n, low, high = items[mine], slack[mine], slack[mine] - top[mine]
            some = n > 0
            if some.any():
                fit[1] = max(fit[1], int((-(-high[some] // n[some])).max()))
                fit[2] = min(fit[2], int((low[some] // n[some]).min()))
            if not ((low[~some] >= 0) & (high[~some] <= 0)).all():
                fit[3] = False

    def counts(self) -> dict[str, Any]:
        nonempty = self.sums["buffers"]
        return {
            "links": self.links,
            "links_explained": self.explained,
            "by_reason": {r: int(n) for r, n in zip(REASONS, self.by_reason, strict=True) if n},
            "items_routed": self.sums["items_routed"],
            "items_seen_decoded": self.sums["items_seen_decoded"],
            "links_decoded": self.decoded,
            "max_items_error": self.max_items_error,
            "payload_bytes": self.sums["payload_bytes"],
            "buffers": nonempty,
            "empty_buffers": self.sums["empty_buffers"],
            "buffers_min": self.sums["buffers_min"],
            "wire_bytes": self.sums["wire_bytes"],
            "packed_plus_headers": self.sums["packed_bytes"] + BUFFER_HEADER_BYTES * nonempty,
            "padding_bytes": self.sums["padding_bytes"],
            "predicted_wire_bytes_min": self.sums["predicted_wire_bytes_min"],
        }

    @property
    def unexplained(self) -> int:
        return self.links - self.explained

    def reasons(self) -> list[str]:
        """Per reason (in :data:`REASONS` order) of the unexplained links: how many, the first."""
        out = []
        for code in sorted(self.first):
            total = int(self.by_reason[code])
            more = f" (+{total - _LISTED} more)" if total > _LISTED else ""
            named = ", ".join(self.first[code])
            out.append(f"{total} link(s): {REASON_TEXT[REASONS[code]]}: {named}{more}")
        return out

    def shifts(self) -> dict[str, int]:
        """Send types whose links all fit one other packet size (the model's + shift).

        Only when every unexplained link is a byte-level one (the link sets
        agree): then a uniform shift of the packet (another tag size, another
        build) is the simpler cause than another run. Empty: no such shift.
        """
        if not self.first or not set(self.first) <= set(_BYTE_CODES):
            return {}
        out: dict[str, int] = {}
        for code in sorted(self._bad_types):
            fit = self.fit.get(code)
            if fit is None or fit[0] is None or not fit[3]:
                return {}  # no packet to shift, or a link no shift fits
            lowest, low, high = fit[0], fit[1], fit[2]
            first = max(1 - lowest, low)
            if first == 0:
                first = 1
            if first > min(16, high):
                return {}
            out[_type_name(code)] = first
        return out


def compare_run(
    pairs: pd.DataFrame,
    physical: pd.DataFrame,
    *,
    num_pes: int | None = None,
    pes_per_node: int | None = None,
    buffer_bytes: int = CONVEY_BUFFER_SIZE,
    keep_links: bool = True,
    each_block: Callable[[pd.DataFrame], object] | None = None,
) -> RunComparison:
    """Do these logical pairs and this physical trace come from one run?

    Parameters
    ----------
    pairs
        Sparse logical pairs (:func:`logical_pairs`).
    physical
        :func:`physical_buffers` of the physical trace.
    num_pes
        N; None: the largest PE of either trace + 1.
    pes_per_node
        The layout's PEs per node (None: one node).
    buffer_bytes
        Buffer capacity (``CONVEY_BUFFER_SIZE``).
    keep_links
        False: the links are built and counted a block at a time and not
        kept (``links`` is empty, :meth:`RunComparison.summary` the same);
        for a caller that writes them as produced
        (:func:`compared_link_blocks`) or needs only the counts.
    each_block
        Called with each block of links compared under the chosen topology,
        in table order (the whole table when ``keep_links``).

    Returns
    -------
    RunComparison

    Raises
    ------
    ValueError
        ``num_pes`` smaller than a PE the traces name; a bad layout.
    """
    table = pair_table(pairs)
    n_logical = _pe_count(table)
    n_physical = _pe_count(physical)
    n = max(n_logical, n_physical) if num_pes is None else num_pes
    if max(n_logical, n_physical) > n:
        raise ValueError(f"the traces name PEs beyond num_pes={n}")
    layout = conveyors_topology(n, pes_per_node)
    detected = tuple(detect_topologies(physical, n))
    reasons: list[str] = []
    notes: list[str] = []
    if 0 < n_physical < n_logical:
        reasons.append(
            f"the logical trace names PE {n_logical - 1} but the physical trace stops at PE "
            f"{n_physical - 1}, although every PE sends a final buffer on each porter link"
        )

    def tallied(topology: Topology, *, hook: bool) -> tuple[LinkTally, pd.DataFrame | None]:
        if keep_links:
            links = compared_links(table, physical, topology, buffer_bytes=buffer_bytes)
            if hook and each_block is not None:
                each_block(links)
            return LinkTally.of(links), links
        tally = LinkTally()
        for block in compared_link_blocks(table, physical, topology, buffer_bytes=buffer_bytes):
            tally.add(block)
            if hook and each_block is not None:
                each_block(block)
        return tally, None

    topology = layout
    fits = layout in detected or not detected
    tally, links = tallied(layout, hook=fits)
    if not fits:
        # the topology that explains the most links (the first on ties), by
        # counting each one's unexplained links: one link table (millions of
        # rows) at a time, the best built again
        del tally, links
        unexplained = [tallied(t, hook=False)[0].unexplained for t in detected]
        topology = detected[unexplained.index(min(unexplained))]
        tally, links = tallied(topology, hook=True)
        notes.append(
            f"the layout implies {layout.describe()}, but the physical trace's links are "
            f"those of {' or '.join(t.describe() for t in detected)}: compared as "
            f"{topology.describe()} (the run used another local group than the layout says)"
        )
    elif not detected:
        notes.append(
            f"no topology Conveyors builds for {n} PEs has every link of the physical trace"
        )
    shifts = tally.shifts()
    for send_type, shift in shifts.items():
        notes.append(
            f"every {send_type} link fits packets {shift:+d} byte(s) from the model's: "
            "a Conveyors build with other routing tags or options, not another run"
        )
    model_fits = bool(detected) and not shifts
    bad = tally.unexplained
    if bad and model_fits:
        reasons.extend(tally.reasons())
    if not bad and not reasons:
        verdict: Verdict = "one run"
    elif model_fits or reasons:
        verdict = "not one run"
    else:
        verdict = "model does not fit"
        notes.extend(tally.reasons())
    result = RunComparison(
        layout=layout,
        detected=detected,
        topology=topology,
        links=_empty_links() if links is None else links,
        verdict=verdict,
        reasons=tuple(reasons),
        notes=tuple(notes),
    )
    if links is None:
        result = replace(result, kept_summary=result._summary(tally))
    return result


def _empty_links() -> pd.DataFrame:
    """A link table of no rows, with the columns and dtypes of :func:`compared_links`."""
    return compared_links(
        pair_table(
            pd.DataFrame({c: [] for c in ("src_pe", "dst_pe", "messages", "payload_bytes")})
        ),
        physical_buffers([]),
        conveyors_topology(1),
    )


_BYTE_REASONS: Final = (
    "items differ",
    "bytes beyond headers and rounding",
    "fewer buffers than the capacity allows",
)
_BYTE_CODES: Final = [REASONS.index(r) for r in _BYTE_REASONS]


def _type_name(code: int) -> str:
    return str(SEND_TYPES[code]) if code >= 0 else "nan"


def _pe_count(frame: pd.DataFrame) -> int:
    if not len(frame):
        return 0
    return int(max(frame["src_pe"].max(), frame["dst_pe"].max())) + 1

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

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from ...schema import CONVEYORS_CHECK_COLUMNS, SEND_TYPE_DTYPE
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
    "RunComparison",
    "compare_links",
    "compare_run",
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
    # 65,536-PE trace has 17 of them and millions of rows)
    codes, names = pd.factorize(physical["send_type"], sort=True)
    by_type = [(str(name), codes == i) for i, name in enumerate(names)]
    src = physical["src_pe"].to_numpy()
    dst = physical["dst_pe"].to_numpy()
    found: list[Topology] = []
    for k in (k for k in range(1, num_pes + 1) if num_pes % k == 0):
        try:
            topology = conveyors_topology(num_pes, k)
        except ValueError:
            continue  # a tensor Conveyors refuses to build
        if topology in found:
            continue
        fits = np.ones(len(physical), dtype=bool)
        for send_type, mine in by_type:
            fits[mine] = porter_links(topology, send_type, src[mine], dst[mine])
        if fits.all():
            found.append(topology)
    return found


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
    types = links["send_type"].astype(str).to_numpy()
    src = links["src_pe"].to_numpy()
    dst = links["dst_pe"].to_numpy()
    on_porter = np.zeros(len(links), dtype=bool)
    for send_type in np.unique(types):
        mine = types == send_type
        on_porter[mine] = porter_links(topology, str(send_type), src[mine], dst[mine])
    items = links["items"].to_numpy()
    buffers = links["buffers"].to_numpy()
    seen = links["items_seen"].to_numpy()
    pad = links["padding_bytes"].to_numpy()
    progress = types == "nonblock_progress"
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

    def unexplained(self) -> pd.DataFrame:
        """The links not explained, with their reason."""
        return self.links[self.links["status"] == "not explained"]

    def summary(self) -> dict[str, Any]:
        """Counts and errors: links per reason, items, payload and wire bytes."""
        links = self.links
        data = links[links["send_type"].astype(str) != "nonblock_progress"]
        decoded = data[(data["items_seen"] >= 0) & (data["buffers"] > 0)]
        nonempty = int(data["buffers"].sum())
        return {
            "verdict": self.verdict,
            "layout": self.layout.describe(),
            "topology": self.topology.describe(),
            "detected": [t.describe() for t in self.detected],
            "links": len(links),
            "links_explained": int((links["status"] == "explained").sum()),
            "by_reason": {
                r: int(n) for r, n in links["reason"].value_counts(sort=False).items() if n
            },
            "items_routed": int(data["items"].sum()),
            "items_seen_decoded": int(decoded["items_seen"].sum()),
            "links_decoded": len(decoded),
            "max_items_error": int((decoded["items_seen"] - decoded["items"]).abs().max())
            if len(decoded)
            else 0,
            "payload_bytes": int(data["payload_bytes"].sum()),
            "buffers": nonempty,
            "empty_buffers": int(data["empty_buffers"].sum()),
            "buffers_min": int(data["buffers_min"].sum()),
            "wire_bytes": int(data["wire_bytes"].sum()),
            "packed_plus_headers": int(data["packed_bytes"].sum()) + BUFFER_HEADER_BYTES * nonempty,
            "padding_bytes": int(data["padding_bytes"].sum()),
            "predicted_wire_bytes_min": int(data["predicted_wire_bytes"].sum()),
            "reasons": list(self.reasons),
            "notes": list(self.notes),
        }


def compare_run(
    pairs: pd.DataFrame,
    physical: pd.DataFrame,
    *,
    num_pes: int | None = None,
    pes_per_node: int | None = None,
    buffer_bytes: int = CONVEY_BUFFER_SIZE,
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

    def compared(topology: Topology) -> pd.DataFrame:
        predicted = predict_links(route_pairs(table, topology, buffer_bytes=buffer_bytes))
        return compare_links(predicted, physical, topology)

    topology, links = layout, compared(layout)
    if layout not in detected and detected:
        # the topology that explains the most links (the first on ties); a
        # generator, so one link table (millions of rows) is held besides the best
        topology, links = min(
            ((t, compared(t)) for t in detected),
            key=lambda tl: int((tl[1]["status"] != "explained").sum()),
        )
        notes.append(
            f"the layout implies {layout.describe()}, but the physical trace's links are "
            f"those of {' or '.join(t.describe() for t in detected)}: compared as "
            f"{topology.describe()} (the run used another local group than the layout says)"
        )
    elif not detected:
        notes.append(
            f"no topology Conveyors builds for {n} PEs has every link of the physical trace"
        )
    bad = links[links["status"] == "not explained"]
    shifts = _packet_shifts(links, bad)
    for send_type, shift in shifts.items():
        notes.append(
            f"every {send_type} link fits packets {shift:+d} byte(s) from the model's: "
            "a Conveyors build with other routing tags or options, not another run"
        )
    model_fits = bool(detected) and not shifts
    if len(bad) and model_fits:
        reasons.extend(_link_reasons(bad))
    if not len(bad) and not reasons:
        verdict: Verdict = "one run"
    elif model_fits or reasons:
        verdict = "not one run"
    else:
        verdict = "model does not fit"
        notes.extend(_link_reasons(bad))
    return RunComparison(
        layout=layout,
        detected=detected,
        topology=topology,
        links=links,
        verdict=verdict,
        reasons=tuple(reasons),
        notes=tuple(notes),
    )


_BYTE_REASONS: Final = (
    "items differ",
    "bytes beyond headers and rounding",
    "fewer buffers than the capacity allows",
)


def _packet_shifts(links: pd.DataFrame, bad: pd.DataFrame) -> dict[str, int]:
    """Send types whose links all fit one other packet size (the model's + shift).

    Only when every unexplained link is a byte-level one (the link sets
    agree): then a uniform shift of the packet (another tag size, another
    build) is the simpler cause than another run. Empty: no such shift.
    """
    if not len(bad) or not bad["reason"].astype(str).isin(_BYTE_REASONS).all():
        return {}
    out: dict[str, int] = {}
    for send_type in bad["send_type"].astype(str).unique():
        mine = links[(links["send_type"].astype(str) == send_type) & (links["buffers"] > 0)]
        items = mine["items"].to_numpy()
        buffers = mine["buffers"].to_numpy()
        room = mine["wire_bytes"].to_numpy() - BUFFER_HEADER_BYTES * buffers
        packed = mine["packed_bytes"].to_numpy()
        lowest = int(mine["packet_bytes"][mine["packet_bytes"] > 0].min())
        fits = [
            shift
            for shift in range(1 - lowest, 17)
            if shift
            and np.all(
                (room - packed - shift * items >= 0)
                & (room - packed - shift * items <= (WIRE_ROUND_BYTES - 1) * buffers)
            )
        ]
        if not fits:
            return {}
        out[send_type] = fits[0]
    return out


def _pe_count(frame: pd.DataFrame) -> int:
    if not len(frame):
        return 0
    return int(max(frame["src_pe"].max(), frame["dst_pe"].max())) + 1


def _link_reasons(bad: pd.DataFrame) -> list[str]:
    out = []
    for reason, group in bad.groupby("reason", observed=True):
        first = ", ".join(
            f"{t} {s}->{d}"
            for t, s, d in zip(
                group["send_type"].astype(str).head(_LISTED),
                group["src_pe"].head(_LISTED),
                group["dst_pe"].head(_LISTED),
                strict=True,
            )
        )
        more = f" (+{len(group) - _LISTED} more)" if len(group) > _LISTED else ""
        out.append(f"{len(group)} link(s): {REASON_TEXT[str(reason)]}: {first}{more}")
    return out

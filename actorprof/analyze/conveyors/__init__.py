"""Conveyors, modelled: every topology it builds, its routes and buffers.

:mod:`.model` says what Conveyors would send for given logical pairs
(topology choice, routes, packets, buffers; prediction per link, per PE and
per node layout); :mod:`.check` compares that with a physical trace, link by
link, and says whether both traces come from one run. The sources in bale's
conveyor library are cited in :mod:`.model` and docs/aggregation.md.
"""

from .check import (
    BUFFER_COLUMNS,
    CHECK_COLUMNS,
    EXPLAINED_REASONS,
    REASON_TEXT,
    REASONS,
    LinkTally,
    RunComparison,
    compare_links,
    compare_run,
    compared_link_blocks,
    compared_links,
    detect_topologies,
    physical_buffers,
)
from .links import send_type_codes
from .model import (
    BUFFER_HEADER_BYTES,
    CONVEY_BUFFER_SIZE,
    LAYOUT_COLUMNS,
    LINK_COLUMNS,
    PAIR_COLUMNS,
    ROUTE_COLUMNS,
    WIRE_ROUND_BYTES,
    Hop,
    Topology,
    conveyors_topology,
    logical_pairs,
    pair_table,
    pairs_by_size,
    porter_links,
    predict_layouts,
    predict_links,
    predict_pes,
    route_pairs,
)

__all__ = [
    "BUFFER_COLUMNS",
    "BUFFER_HEADER_BYTES",
    "CHECK_COLUMNS",
    "CONVEY_BUFFER_SIZE",
    "EXPLAINED_REASONS",
    "LAYOUT_COLUMNS",
    "LINK_COLUMNS",
    "PAIR_COLUMNS",
    "REASONS",
    "REASON_TEXT",
    "ROUTE_COLUMNS",
    "WIRE_ROUND_BYTES",
    "Hop",
    "LinkTally",
    "RunComparison",
    "Topology",
    "compare_links",
    "compare_run",
    "compared_link_blocks",
    "compared_links",
    "conveyors_topology",
    "detect_topologies",
    "logical_pairs",
    "pair_table",
    "pairs_by_size",
    "physical_buffers",
    "porter_links",
    "predict_layouts",
    "predict_links",
    "predict_pes",
    "route_pairs",
    "send_type_codes",
]

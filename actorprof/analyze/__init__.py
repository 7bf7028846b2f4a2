"""Reductions over trace frames: matrices, totals, node level, imbalance."""

from .breakdown import (
    PopEfficiencies,
    papi_breakdown,
    papi_regions,
    papi_segments,
    pop_efficiencies,
    time_breakdown,
    time_checks,
)
from .imbalance import STRAGGLER_RULE, Imbalance, imbalance
from .matrix import (
    CommAccumulator,
    CommMatrices,
    comm_matrices,
    comm_matrix,
    filter_self_sends,
    locality,
    node_matrix,
    pe_totals,
    top_pairs,
)
from .physical import (
    MeshFit,
    PhysicalAccumulator,
    PhysicalMatrices,
    fitting_pes_per_node,
    mesh_fit,
    physical_matrices,
    physical_node_matrices,
    physical_pe_totals,
)

__all__ = [
    "STRAGGLER_RULE",
    "CommAccumulator",
    "CommMatrices",
    "Imbalance",
    "MeshFit",
    "PhysicalAccumulator",
    "PhysicalMatrices",
    "PopEfficiencies",
    "comm_matrices",
    "comm_matrix",
    "filter_self_sends",
    "fitting_pes_per_node",
    "imbalance",
    "locality",
    "mesh_fit",
    "node_matrix",
    "papi_breakdown",
    "papi_regions",
    "papi_segments",
    "pe_totals",
    "physical_matrices",
    "physical_node_matrices",
    "physical_pe_totals",
    "pop_efficiencies",
    "time_breakdown",
    "time_checks",
    "top_pairs",
]

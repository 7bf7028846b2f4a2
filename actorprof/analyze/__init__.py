"""Reductions over trace frames: matrices, totals, node level, imbalance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

# The function ``imbalance`` shares its name with its module: importing the
# module (any command does) sets the package's attribute to the module, so the
# function is bound here, at once.
from .imbalance import imbalance

__all__ = [
    "STRAGGLER_RULE",
    "CommAccumulator",
    "CommMatrices",
    "Imbalance",
    "MeshFit",
    "PhysicalAccumulator",
    "PhysicalMatrices",
    "PhysicalPartial",
    "PopEfficiencies",
    "actual_layout",
    "aggregation_factor",
    "aggregation_links",
    "aggregation_pe_table",
    "buffer_room_bytes",
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
    "physical_pairs",
    "physical_pe_totals",
    "pop_efficiencies",
    "time_breakdown",
    "time_checks",
    "top_pairs",
]

# Imported on first use, so that a command loads only the modules it runs
# (docs/performance.md, "Fixed cost"); type checkers read the imports below.
_EXPORTS = {
    "CommAccumulator": "matrix",
    "CommMatrices": "matrix",
    "Imbalance": "imbalance",
    "MeshFit": "physical",
    "PhysicalAccumulator": "physical",
    "PhysicalMatrices": "physical",
    "PhysicalPartial": "physical_partial",
    "PopEfficiencies": "breakdown",
    "STRAGGLER_RULE": "imbalance",
    "actual_layout": "aggregation",
    "aggregation_factor": "aggregation",
    "aggregation_links": "aggregation",
    "aggregation_pe_table": "aggregation",
    "buffer_room_bytes": "aggregation",
    "comm_matrices": "matrix",
    "comm_matrix": "matrix",
    "filter_self_sends": "matrix",
    "fitting_pes_per_node": "physical",
    "locality": "matrix",
    "mesh_fit": "physical",
    "node_matrix": "matrix",
    "papi_breakdown": "breakdown",
    "papi_regions": "breakdown",
    "papi_segments": "breakdown",
    "pe_totals": "matrix",
    "physical_matrices": "physical",
    "physical_node_matrices": "physical",
    "physical_pairs": "physical",
    "physical_pe_totals": "physical",
    "pop_efficiencies": "breakdown",
    "time_breakdown": "breakdown",
    "time_checks": "breakdown",
    "top_pairs": "matrix",
}

if TYPE_CHECKING:
    from .aggregation import (
        actual_layout,
        aggregation_factor,
        aggregation_links,
        aggregation_pe_table,
        buffer_room_bytes,
    )
    from .breakdown import (
        PopEfficiencies,
        papi_breakdown,
        papi_regions,
        papi_segments,
        pop_efficiencies,
        time_breakdown,
        time_checks,
    )
    from .imbalance import STRAGGLER_RULE, Imbalance
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
        physical_pairs,
        physical_pe_totals,
    )
    from .physical_partial import PhysicalPartial
else:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

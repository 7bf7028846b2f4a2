"""Reductions over trace frames: matrices, totals, node level, imbalance."""

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

__all__ = [
    "STRAGGLER_RULE",
    "CommAccumulator",
    "CommMatrices",
    "Imbalance",
    "comm_matrices",
    "comm_matrix",
    "filter_self_sends",
    "imbalance",
    "locality",
    "node_matrix",
    "pe_totals",
    "top_pairs",
]

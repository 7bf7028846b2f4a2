"""The shipped real runs that the Conveyors model and the aggregation are checked on.

One layout of ``tests/data/real`` for every test that walks the runs: the
histo run's one logical trace under three node layouts, and ig.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

DATA = Path(__file__).resolve().parent / "data"
REAL = DATA / "real"
HISTO = REAL / "histo_16pe_layouts"
HISTO_LOGICAL = HISTO / "logical_4nodes"
IG = REAL / "ig_8pe_2nodes"


class RealRun(NamedTuple):
    """A run: its traces, PEs per node, and the topology Conveyors chose."""

    logical: Path
    physical: Path
    pes_per_node: int
    kind: str  # "1d", "2d" or "3d"
    topology: str  # as the aggregation view describes it


REAL_RUNS = {
    "histo 1 node of 16": RealRun(
        HISTO_LOGICAL, HISTO / "physical_1node", 16, "1d", "1d vector 16 (n = 16)"
    ),
    "histo 4 nodes of 4": RealRun(
        HISTO_LOGICAL,
        REAL / "histo_16pe_4nodes" / "physical",
        4,
        "2d",
        "2d matrix 4 x 4 (n = 4)",
    ),
    "histo 8 nodes of 2": RealRun(
        HISTO_LOGICAL, HISTO / "physical_8nodes", 2, "3d", "3d tensor 2 x 2 x 4 (n = 2)"
    ),
    "ig 2 nodes of 4": RealRun(IG / "logical", IG / "physical", 4, "2d", "2d matrix 4 x 2 (n = 4)"),
}

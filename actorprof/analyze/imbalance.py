"""Load-imbalance metrics over per-PE loads (see docs/metrics.md for sources).

For loads x_1..x_N with mean m and maximum M:

- ``max_over_mean`` = M / m (Pipit, Hatchet "imbalance");
- ``craypat_imbalance_pct`` = 100 (M - m) / M * N / (N - 1) (CrayPat "Imb%");
- ``pop_load_balance`` = m / M (POP load-balance efficiency);
- ``cv`` = population standard deviation / m (coefficient of variation);
- stragglers: PEs whose load is above the median by more than 3 robust
  standard deviations (1.4826 x the median absolute deviation) and at least
  1.10 x the median (the floor the report's findings use: on a balanced run
  the MAD is tiny, and 1.009 x the median is no straggler), largest first.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LOG_SKEW", "STRAGGLER_MIN_RATIO", "STRAGGLER_RULE", "Imbalance", "imbalance", "skew"]

#: ``plot_heatmap(log=None)`` picks a log colour scale when max / median of the
#: non-zero cells exceeds this (:func:`skew`).
LOG_SKEW = 50.0

#: A straggler carries at least this many times the median load (and the findings'
#: ``stragglers`` rule asks max / mean to reach it too).
STRAGGLER_MIN_RATIO = 1.10
#: How stragglers are chosen, in words (shown in summaries and docs).
STRAGGLER_RULE = (
    "load > median + 3 x 1.4826 x MAD (robust z-score above 3) and load >= "
    f"{STRAGGLER_MIN_RATIO:.2f} x median, largest first"
)
_MAD_TO_SIGMA = 1.4826
_Z = 3.0


@dataclass(frozen=True)
class Imbalance:
    """Imbalance of one load over PEs. Undefined ratios are None."""

    n: int
    total: float
    mean: float
    median: float
    min: float
    max: float
    max_pe: int | None
    std: float
    max_over_mean: float | None
    craypat_imbalance_pct: float | None
    pop_load_balance: float | None
    cv: float | None
    stragglers: list[int] = field(default_factory=list)
    straggler_over_median: list[float | None] = field(default_factory=list)
    straggler_rule: str = STRAGGLER_RULE

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def imbalance(loads: pd.Series | np.ndarray, *, max_stragglers: int = 5) -> Imbalance:
    """Imbalance metrics of per-PE loads.

    Parameters
    ----------
    loads
        One value per PE. A Series' index gives the PE ids (else 0..N-1).
    max_stragglers
        At most this many straggler PEs are listed.

    Returns
    -------
    Imbalance

    Raises
    ------
    ValueError
        Empty, negative or non-finite loads, or ``max_stragglers < 0``.

    Examples
    --------
    >>> import pandas as pd
    >>> r = imbalance(pd.Series([10, 10, 10, 30]))
    >>> r.max_over_mean, r.pop_load_balance, r.stragglers, r.straggler_over_median
    (2.0, 0.5, [3], [3.0])
    """
    if max_stragglers < 0:
        raise ValueError(f"max_stragglers must be >= 0, got {max_stragglers}")
    import pandas as pd  # here: skew() serves a figure server that has no pandas

    if isinstance(loads, pd.Series):
        ids = loads.index.to_numpy()
        x = loads.to_numpy(dtype=np.float64)
    else:
        x = np.asarray(loads, dtype=np.float64)
        ids = np.arange(len(x))
    if x.ndim != 1 or x.size == 0:
        raise ValueError("loads must be a non-empty 1-d sequence")
    if not np.isfinite(x).all() or (x < 0).any():
        raise ValueError("loads must be finite and non-negative")
    n = int(x.size)
    mean = float(x.mean())
    biggest = float(x.max())
    median = float(np.median(x))
    std = float(x.std())  # population
    mad = float(np.median(np.abs(x - median)))
    threshold = median + _Z * _MAD_TO_SIGMA * mad
    above = np.flatnonzero((x > threshold) & (x >= STRAGGLER_MIN_RATIO * median))
    above = above[np.lexsort((ids[above], -x[above]))][:max_stragglers]
    return Imbalance(
        n=n,
        total=float(x.sum()),
        mean=mean,
        median=median,
        min=float(x.min()),
        max=biggest,
        max_pe=int(ids[int(np.argmax(x))]),
        std=std,
        max_over_mean=biggest / mean if mean > 0 else None,
        craypat_imbalance_pct=(
            100.0 * (biggest - mean) / biggest * n / (n - 1) if biggest > 0 and n > 1 else None
        ),
        pop_load_balance=mean / biggest if biggest > 0 else None,
        cv=std / mean if mean > 0 else None,
        stragglers=[int(i) for i in ids[above]],
        straggler_over_median=[float(v) / median if median > 0 else None for v in x[above]],
    )


def skew(data: ArrayLike) -> float | None:
    """Max / median of the finite non-zero values of `data` (None when there are none).

    The rule of ``actorprof.plot.plot_heatmap(log=None)``: above :data:`LOG_SKEW`, most cells
    would share the bottom colour of a linear scale.

    Examples
    --------
    >>> skew([[0, 1, 2], [2, 100, 0]])
    50.0
    """
    values = np.asarray(data, dtype=np.float64)
    nonzero = values[np.isfinite(values) & (values != 0)]
    if nonzero.size == 0:
        return None
    magnitude = np.abs(nonzero)
    median = float(np.median(magnitude))
    return float(magnitude.max()) / median if median > 0 else None

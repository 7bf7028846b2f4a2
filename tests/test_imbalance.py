"""Imbalance metrics: formulas on hand-checked values, edge cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from actorprof import imbalance


def test_formulas() -> None:
    r = imbalance(pd.Series([10.0, 20.0, 30.0, 60.0], index=[4, 5, 6, 7]))
    assert r.n == 4 and r.total == 120 and r.mean == 30 and r.median == 25
    assert r.max == 60 and r.max_pe == 7 and r.min == 10
    assert r.max_over_mean == pytest.approx(2.0)
    # CrayPat: 100 (M - m)/M * N/(N-1) = 100 * 30/60 * 4/3
    assert r.craypat_imbalance_pct == pytest.approx(200 / 3)
    assert r.pop_load_balance == pytest.approx(0.5)
    assert r.std == pytest.approx(np.std([10, 20, 30, 60]))
    assert r.cv == pytest.approx(np.std([10, 20, 30, 60]) / 30)


def test_stragglers_robust_rule() -> None:
    loads = pd.Series([100, 101, 99, 100, 102, 98, 100, 180, 150])
    r = imbalance(loads)
    # median 100, MAD 1 -> threshold 100 + 3 * 1.4826 = 104.45
    assert r.stragglers == [7, 8]
    assert r.straggler_over_median == pytest.approx([1.8, 1.5])
    assert imbalance(loads, max_stragglers=1).stragglers == [7]
    assert imbalance(pd.Series([5, 5, 5, 5])).stragglers == []


def test_balanced_and_degenerate() -> None:
    r = imbalance(np.array([7, 7, 7]))
    assert r.max_over_mean == 1 and r.craypat_imbalance_pct == 0 and r.cv == 0
    zero = imbalance(np.zeros(4))
    assert zero.max_over_mean is None and zero.pop_load_balance is None and zero.cv is None
    assert zero.craypat_imbalance_pct is None and zero.stragglers == []
    one = imbalance([3.0])  # type: ignore[arg-type]
    assert one.craypat_imbalance_pct is None and one.max_over_mean == 1


@pytest.mark.parametrize("bad", [[], [1.0, -1.0], [np.nan], [[1, 2]]])
def test_bad_loads(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        imbalance(np.asarray(bad, dtype=float))


def test_does_not_modify_input() -> None:
    s = pd.Series([3, 1, 2])
    imbalance(s)
    assert s.tolist() == [3, 1, 2]

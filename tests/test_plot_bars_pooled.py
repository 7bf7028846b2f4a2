"""Stacked bars of more PEs than steps: blocks of PEs, their mean and largest PE."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from actorprof.plot.bars import STEPS_MAX, plot_papi_bars, plot_time_stacked


def times(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "pe": np.arange(n),
            "t_main_cycles": rng.integers(0, 1000, n).astype(float),
            "t_comm_cycles": rng.integers(0, 1000, n).astype(float),
            "t_proc_cycles": rng.integers(0, 1000, n).astype(float),
        }
    )
    frame.loc[n // 3, "t_main_cycles"] = 1e6  # one hot PE
    return frame


def test_up_to_steps_max_every_pe_is_a_step() -> None:
    ax = Figure().add_subplot()
    plot_time_stacked(times(STEPS_MAX), ax=ax)
    assert [len(p.get_data().values) for p in ax.patches] == [STEPS_MAX] * 3
    assert "blocks" not in ax.get_xlabel()


def test_beyond_steps_max_a_step_is_a_block_mean_and_a_line_its_largest_pe() -> None:
    n = 65_536 + 5  # the last block is shorter
    data = times(n)
    ax = Figure().add_subplot()
    plot_time_stacked(data, ax=ax)
    main, comm, proc, largest = ax.patches
    block = -(-n // STEPS_MAX)
    assert block == 17 and f"blocks of {block} PEs" in ax.get_xlabel()
    starts = np.arange(0, n, block)
    sizes = np.diff(np.r_[starts, n])
    columns = ["t_main_cycles", "t_comm_cycles", "t_proc_cycles"]
    means = np.add.reduceat(data[columns].to_numpy(), starts) / sizes[:, None]
    steps = main.get_data()
    np.testing.assert_array_equal(steps.edges, np.r_[starts, n] - 0.5)
    np.testing.assert_allclose(steps.values, means[:, 0])
    np.testing.assert_allclose(comm.get_data().values, means[:, :2].sum(axis=1))
    np.testing.assert_allclose(proc.get_data().values, means.sum(axis=1))
    totals = data[columns].sum(axis=1).to_numpy()
    np.testing.assert_array_equal(largest.get_data().values, np.maximum.reduceat(totals, starts))
    assert largest.get_data().values.max() == totals.max()  # the hot PE is in sight
    assert ax.get_ylim()[1] >= totals.max()


def test_pooled_fractions_and_sorted_papi_bars() -> None:
    n = 3 * STEPS_MAX
    ax = Figure().add_subplot()
    plot_time_stacked(times(n), ax=ax, relative=True, sort=True)
    assert len(ax.patches) == 3  # fractions: no line of largest totals
    np.testing.assert_allclose(ax.patches[-1].get_data().values, 1.0)
    assert "blocks of 3 PEs (mean)" in ax.get_xlabel()
    segments = pd.DataFrame(
        {"MAIN": np.arange(n, dtype=float), "PROC": np.ones(n)}, index=pd.Index(range(n))
    )
    ax = Figure().add_subplot()
    plot_papi_bars(segments, ax=ax, sort=True)
    main, proc, largest = ax.patches
    assert len(main.get_data().values) == len(proc.get_data().values) == STEPS_MAX
    # sorted by total, largest first: the first block holds PEs n-1, n-2, n-3
    assert main.get_data().values[0] == n - 2.0 and largest.get_data().values[0] == n

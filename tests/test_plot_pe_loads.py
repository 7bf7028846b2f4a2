"""plot_pe_loads: one step line per column against PE id, means dashed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from actorprof import plot_pe_loads


def test_steps_equal_the_data() -> None:
    loads = pd.DataFrame(
        {"sent": [5, 1, 0, 2], "received": [0, 3, 3, 2]}, index=pd.Index([0, 1, 2, 3], name="pe")
    )
    before = loads.copy()
    ax = Figure().add_subplot()
    assert plot_pe_loads(loads, ax=ax, title="t") is ax
    stairs = ax.patches
    assert [s.get_label() for s in stairs] == ["sent", "received"]
    np.testing.assert_array_equal(stairs[0].get_data().values, [5, 1, 0, 2])
    np.testing.assert_array_equal(stairs[1].get_data().edges, [-0.5, 0.5, 1.5, 2.5, 3.5])
    means = [line.get_ydata()[0] for line in ax.lines]
    assert means == pytest.approx([2.0, 2.0])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2", "3"]
    pd.testing.assert_frame_equal(loads, before)


def test_thousands_of_pes_thin_ticks() -> None:
    n = 4096
    loads = pd.DataFrame({"sent": np.arange(n), "received": np.arange(n)[::-1]})
    ax = Figure().add_subplot()
    plot_pe_loads(loads, ax=ax)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    # round steps, at most 24 labels of 4 digits
    assert len(ax.patches) == 2 and len(labels) <= 24 and labels[:2] == ["0", "200"]


def test_empty_is_an_error() -> None:
    with pytest.raises(ValueError):
        plot_pe_loads(pd.DataFrame())


def test_violin_ticks_distinct_on_narrow_spread(examples: object) -> None:
    from actorprof import plot_violin

    loads = pd.DataFrame(
        {"sent": [20015, 20000, 19904, 20172], "received": [20172, 19904, 20000, 20015]}
    )
    ax = Figure().add_subplot()
    plot_violin(loads, ax=ax)
    ax.figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert len(labels) == len(set(labels)) >= 3
    # from 0: a 1 % spread is not stretched over the panel
    assert ax.get_ylim()[0] == 0


def test_rate_axis_has_no_offset() -> None:
    from actorprof import plot_rate, send_timeline

    tl = send_timeline(pd.DataFrame({"src_pe": [0] * 3000, "time_s": np.linspace(5, 5.002, 3000)}))
    ax = Figure().add_subplot()
    plot_rate(tl, ax=ax)
    ax.figure.canvas.draw()
    assert ax.yaxis.get_offset_text().get_text() == ""
    assert any(t.get_text().endswith("M") for t in ax.get_yticklabels())


def test_loads_start_at_zero_with_room_above_the_busiest_pe() -> None:
    """A balanced run's steps sat on the frame (the axis ended at their max)."""
    loads = pd.DataFrame({"sent": [20015, 20000, 19904, 20172], "received": [20172] * 4})
    ax = Figure().add_subplot()
    plot_pe_loads(loads, ax=ax)
    bottom, top = ax.get_ylim()
    assert bottom == 0 and top == pytest.approx(20172 * 1.06)


def test_pe_labels_do_not_run_together_at_65536_pes() -> None:
    """32 labels of 5 digits overlapped: at most 16 there, on round steps."""
    n = 65536
    loads = pd.DataFrame({"sent": np.ones(n), "received": np.ones(n)})
    ax = Figure(figsize=(14, 4.5)).add_subplot()
    plot_pe_loads(loads, ax=ax)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert 4 <= len(labels) <= 16 and labels[:2] == ["0", "5000"]
    small = Figure().add_subplot()
    plot_pe_loads(pd.DataFrame({"sent": np.ones(8)}), ax=small)
    assert [t.get_text() for t in small.get_xticklabels()] == [str(i) for i in range(8)]


def loads_png(loads: object, **kwargs: object) -> bytes:
    import io

    from actorprof.write import save_png

    fig = Figure(figsize=(6, 3), layout="constrained")
    plot_pe_loads(loads, ax=fig.subplots(), title="t", **kwargs)  # type: ignore[arg-type]
    buffer = io.BytesIO()
    save_png(fig, buffer, dpi=60)
    return buffer.getvalue()


@pytest.mark.parametrize("n", [1, 5, 40, 5000])
def test_columns_and_ids_draw_what_their_frame_draws(n: int) -> None:
    rng = np.random.default_rng(n)
    sent = rng.integers(0, 10_000, size=n)
    received = rng.integers(0, 10_000, size=n)
    ids = np.arange(n) + 1000
    frame = pd.DataFrame({"sent": sent, "received": received}, index=pd.Index(ids, name="pe"))
    columns = {"sent": sent, "received": received}
    assert loads_png(columns, ids=ids) == loads_png(frame)
    ax = Figure().add_subplot()
    plot_pe_loads(columns, ids=ids, ax=ax)
    assert ax.get_xticklabels()[0].get_text() == "1000"
    np.testing.assert_array_equal(ax.patches[1].get_data().values, received)


def test_columns_and_ids_must_fit() -> None:
    with pytest.raises(ValueError, match="3 ids for columns of 2 values"):
        plot_pe_loads({"sent": [1, 2]}, ids=[0, 1, 2])
    with pytest.raises(ValueError, match="index"):
        plot_pe_loads(pd.DataFrame({"sent": [1, 2]}), ids=[0, 1])
    with pytest.raises(ValueError, match="empty"):
        plot_pe_loads({"sent": []})

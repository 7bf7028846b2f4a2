"""The comparison's files: shared-scale heatmaps and violins, overall bars, ratios."""

from __future__ import annotations

from typing import Any


def write_compare(view: Any, out: Any) -> None:
    import pandas as pd

    from ..plot import plot_heatmap, plot_violin
    from ..plot.bars import plot_time_stacked
    from . import new_figure

    a, b = view.a, view.b
    if a.logical is not None and b.logical is not None:
        mats = [a.logical.counts, b.logical.counts]
        cells = max(float(m.to_numpy().max()) for m in mats)
        totals = max(
            float(max(m.to_numpy().sum(axis=0).max(), m.to_numpy().sum(axis=1).max())) for m in mats
        )
        n = max(max(m.shape) for m in mats)
        w, h = (max(7.0, 0.42 * n + 4.0), max(6.0, 0.38 * n + 3.0)) if n <= 32 else (10.0, 9.0)
        fig = new_figure(2 * w, h + 0.4, ncols=2)
        for ax, side, matrix in zip(fig.axes, (a, b), mats, strict=True):
            plot_heatmap(
                matrix,
                ax=ax,
                value_label="messages",
                title=f"{side.name}: logical messages PE x PE",
                vmax=(cells, totals),
            )
        fig.suptitle(
            f"{a.name} vs {b.name}, one colour scale: cells 0-{cells:,.0f}, "
            f"totals 0-{totals:,.0f} messages"
        )
        out.figure(fig, "heatmap")

        loads = pd.DataFrame(
            {
                f"{a.name}\nsent": a.logical.pes["sent"],
                f"{b.name}\nsent": b.logical.pes["sent"],
                f"{a.name}\nreceived": a.logical.pes["received"],
                f"{b.name}\nreceived": b.logical.pes["received"],
            }
        )
        fig = new_figure(9.5, 5.5)
        plot_violin(
            loads,
            ax=fig.axes[0],
            value_label="messages",
            unit_label="PE",
            title=f"Messages per PE, {a.name} vs {b.name} (one axis)",
        )
        out.figure(fig, "violin")
    if a.group is not None and b.group is not None:
        times = [a.overall.group_times(*a.group), b.overall.group_times(*b.group)]
        fig = new_figure(14.0, 8.4, nrows=2, ncols=2)
        axes = fig.axes
        for k, (side, table) in enumerate(zip((a, b), times, strict=True)):
            plot_time_stacked(
                table,
                ax=axes[k],
                legend=k == 1,
                title=f"{side.name}: T_MAIN, T_COMM, T_PROC per PE (cycles)",
            )
            plot_time_stacked(
                table,
                ax=axes[2 + k],
                relative=True,
                legend=False,
                title=f"{side.name}: fractions of T_TOTAL",
            )
        top = max(axes[0].get_ylim()[1], axes[1].get_ylim()[1])
        for ax in axes[:2]:
            ax.set_ylim(0, top)
        out.figure(fig, "overall")
    rows = [
        {"kind": kind, "metric": metric, **values}
        for kind, metrics in view.ratios().items()
        for metric, values in metrics.items()
    ]
    out.csv(
        pd.DataFrame(rows, columns=["kind", "metric", "a", "b", "b_over_a"]), "ratios", index=False
    )
    out.json(view.summary(), "")

"""The overall profile's files: stacked MAIN/COMM/PROC bars, table, summary."""

from __future__ import annotations

from typing import Any


def write_overall(view: Any, out: Any, *, sort: str) -> None:
    from ..plot.bars import plot_time_stacked
    from ..read.overall import describe_group
    from . import new_figure

    groups = view.groups
    summary = view.summary()
    summaries = summary["groups"]
    unit = "seconds" if view.cpu_ghz else "cycles"
    fig = new_figure(14.0, 4.2 * len(groups), nrows=len(groups), ncols=2)
    axes = fig.axes
    for k, (label, run) in enumerate(groups):
        times = view.group_times(label, run)
        name = describe_group(label, run)
        plot_time_stacked(
            times,
            ax=axes[2 * k],
            sort=sort == "total",
            cpu_ghz=view.cpu_ghz,
            legend=False,
            title=f"{name}: T_MAIN, T_COMM, T_PROC per PE ({unit})",
        )
        pop = summaries[k]["pop_efficiencies"]
        effs = (
            ""
            if pop is None
            else "\nPOP: load balance {}, communication eff. {}, parallel eff. {}".format(
                *(
                    "n/a" if pop[key] is None else f"{pop[key]:.2f}"
                    for key in ("load_balance", "communication_efficiency", "parallel_efficiency")
                )
            )
        )
        plot_time_stacked(
            times,
            ax=axes[2 * k + 1],
            relative=True,
            sort=sort == "total",
            title=f"{name}: fractions of T_TOTAL{effs}",
        )
    out.figure(fig, "stacked")
    out.csv(view.pes(), "pes", index=False)
    summary["options"] = {"label": view.label, "sort": sort, "cpu_ghz": view.cpu_ghz}
    out.json(summary, "summary")

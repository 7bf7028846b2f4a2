"""The PAPI view's files: counter bars, per-PE and per-mailbox tables, summary."""

from __future__ import annotations

from typing import Any


def write_papi(view: Any, out: Any, *, by_mailbox: bool, sort: str) -> None:
    from ..plot.bars import plot_papi_bars
    from . import new_figure

    phase = f", phase {view.report.phase}" if view.report.phase else ""
    split = "PROC per mailbox" if by_mailbox else "PROC"
    if view.all_zero:
        # no instruction counts: show what the trace still says, and why
        panels = [
            ("messages", "messages handled", f"Messages handled per PE ({split}){phase}"),
            ("num_sends", "sends issued", f"Sends issued per PE (MAIN and {split}){phase}"),
        ]
    else:
        panels = [(c, c, f"{c}: MAIN + {split} per PE{phase}") for c in view.counters]
    ncols = 1 if len(panels) == 1 else 2
    nrows = (len(panels) + 1) // 2 if ncols == 2 else 1
    height = 4.4 * nrows + (0.7 if view.all_zero else 0.0)  # room for the explanation
    fig = new_figure(7.0 * ncols, height, nrows=nrows, ncols=ncols)
    for ax, (value, value_label, title) in zip(fig.axes, panels, strict=False):
        plot_papi_bars(
            view.segments(value, by_mailbox=by_mailbox),
            ax=ax,
            value_label=value_label,
            sort=sort == "total",
            title=title,
        )
    for ax in fig.axes[len(panels) :]:
        ax.set_visible(False)
    if view.all_zero:
        fig.suptitle(
            f"All PAPI counters are 0 in this trace ({', '.join(view.counters)}): the machine "
            "gave no hardware counter readings.\nShown instead: messages handled and sends "
            "issued per PE, which the trace records exactly.",
            fontsize="medium",
            color="#a33",
        )
    out.figure(fig, "bars")
    out.csv(view.pes, "pes")
    out.csv(view.regions, "mailboxes", index=False)
    summary = view.summary()
    summary["options"] = {"by_mailbox": by_mailbox, "sort": sort}
    out.json(summary, "summary")

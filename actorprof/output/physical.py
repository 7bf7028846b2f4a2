"""The physical view's files: heatmaps and violins per send type, tables, summary."""

from __future__ import annotations

from typing import Any


def write_physical(
    view: Any, out: Any, *, types: list[str], metric: str, log_scale: bool, top: int
) -> None:
    from ..plot import plot_heatmap, plot_violin
    from ..schema import SEND_TYPES
    from ..views.physical import stacked
    from . import new_figure

    value_label = "buffers" if metric == "count" else "bytes"
    n = view.num_pes
    width, height = (max(6.0, 0.4 * n + 3.5), max(5.2, 0.36 * n + 2.8)) if n <= 32 else (9.0, 7.8)
    fig = new_figure(width * len(types), height, ncols=len(types))
    for ax, send_type in zip(fig.axes, types, strict=True):
        plot_heatmap(
            view.matrix(send_type, metric),
            ax=ax,
            log=log_scale,
            value_label=value_label,
            title=f"{send_type}: {value_label} PE x PE"
            if len(types) > 1
            else f"Physical {send_type} {value_label} PE x PE",
        )
    if len(types) > 1:
        fig.suptitle(f"Physical trace: {value_label} per link, one panel per send type")
    out.figure(fig, "heatmap")

    loads = view.loads(types, metric)
    fig = new_figure(max(7.5, 2.2 * loads.shape[1] + 1.5), 5.5)
    plot_violin(
        loads,
        ax=fig.axes[0],
        value_label=value_label,
        unit_label="PE",
        title=f"Physical {value_label} per PE: sent and received, per send type",
    )
    out.figure(fig, "violin")

    out.csv(stacked({t: view.matrix(t, "count") for t in SEND_TYPES}), "counts")
    out.csv(stacked({t: view.matrix(t, "bytes") for t in SEND_TYPES}), "bytes")
    if view.nodes is not None:
        out.csv(stacked({t: view.matrix(t, "count", "node") for t in SEND_TYPES}), "node_counts")
        out.csv(stacked({t: view.matrix(t, "bytes", "node") for t in SEND_TYPES}), "node_bytes")
    out.csv(view.pes, "pes")
    summary = view.summary(top=top)
    summary["options"] = {"send_types": types, "metric": metric, "log": log_scale}
    out.json(summary, "summary")

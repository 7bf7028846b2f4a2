"""The aggregation view's files: aggregation-factor heatmap, bytes bars, tables, summary."""

from __future__ import annotations

from typing import Any


def write_aggregation(view: Any, out: Any, *, log_scale: bool) -> None:
    from ..plot import plot_heatmap
    from ..plot.aggregation import plot_bytes_bars
    from . import new_figure

    approx = "\nAPPROXIMATE: the traces do not look like one run" if view.approximate else ""
    n = view.num_pes
    size = (max(6.5, 0.42 * n + 3.5), max(6.0, 0.38 * n + 3.0)) if n <= 32 else (10.0, 9.0)
    fig = new_figure(*size)
    hops = "one hop, 1D" if view.routes.topology == "1d" else f"2D mesh, K={view.pes_per_node}"
    plot_heatmap(
        view.factor,
        ax=fig.axes[0],
        totals=False,
        log=log_scale,
        value_label="routed messages per buffer",
        title=f"Aggregation factor per link ({hops}){approx}",
    )
    out.figure(fig, "heatmap")

    totals = view.totals()
    ratio = totals["wire_over_payload"]
    fig = new_figure(max(7.0, 0.55 * n + 3.0) if n <= 64 else 12.0, 5.0)
    plot_bytes_bars(
        view.pes,
        ax=fig.axes[0],
        title="Bytes sent per PE: logical payload vs physical"
        + ("" if ratio is None else f" (x{ratio:.2f} overall)")
        + approx,
    )
    out.figure(fig, "bytes")

    out.csv(view.pes, "pes")
    out.csv(view.links, "links", index=False)
    summary = view.summary()
    summary["options"] = {"log": log_scale}
    out.json(summary, "summary")
